"""Preflight, planning, reserving, running, grading and recording starts.

A **start** is one run of one agent on one probe in one arm for one rep. A run
goes through four steps; no budget is spent before the third:

1. **Preflight** (:meth:`Runner.preflight`): the agent's executable is found
   (for a preset: its harness and what it needs, :func:`check_preset_programs`,
   and a scratch location outside any repository), each defect's judge
   program is found (else :class:`RunError`, exit 2, nothing recorded); probes whose id fails
   the schema pattern are refused (an id names answer folders); probes whose
   lint has errors are withheld and listed with their findings (unless
   ``allow_lint_errors``; warnings and info never block); each suite's
   ``evals/`` and ``evals/runs`` must be real folders inside the workspace.
2. **Plan** (:meth:`Runner.plan`): the starts still to make, read from every
   runs file of the workspace (a preview: nothing is reserved).
3. **Reserve** (:meth:`Runner.reserve`): under the workspace's run lock
   (:func:`run_lock`), the plan is made again from the records, checked
   against ``[calibration] max-starts`` and written down as a plan record in
   a new runs file per suite, which this runner creates and holds locked for
   its whole life. Another runner planning meanwhile sees those starts as
   taken and counts them against the cap, so runners started together run
   each start once and never pass the cap together.
4. **Run** (:meth:`Runner.run`): each job goes to an :class:`Executor` with an
   ``on_start`` callback that appends the start record (group commit, fsync)
   before the agent is spawned; each outcome is graded, its answer kept under
   the suite's runs folder, and its outcome record appended.

Resume: a rep is identified by :func:`~skill_eval.linter.run_records.rep_identity`
(probe, version, the three content hashes, arm, rep, agent, model). A rep with
an ``ok`` record is done; one held by a live runner (running, or reserved) is
left to it; one whose latest start was interrupted (its runner died, or the
run was cancelled) is run again by the plain command, as a new counted start
(``resume_of``); one whose latest start is an ``error`` or ``timeout`` is re-run
only with ``retry_errors``, and then only those (``retry_of``).

The budget is the workspace's: every ``evals/runs/*.jsonl`` below its root
(SE503 counts the same), so the lock is the workspace root folder's ``flock``.
A symbolic link in the way (an ``evals`` or ``evals/runs`` folder, a runs
file) is refused: it would hide starts from the count or move records out of
the workspace.

Nothing here imports rich: the language server calls this through
:mod:`skill_eval.evals.api`.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, InvalidStateError, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from skill_eval.linter.reader import write_all
from skill_eval.linter.config import Config, ConfigError
from skill_eval.linter.run_records import (
    ARMS, find_runs_files, is_interrupted, record_passed, rep_identity, runs_folder, runs_links,
)

from .agents import AgentConfig, load_agents
from .executor import (
    DEFAULT_MAX_OUTPUT, PLACEHOLDERS, SKILL_PLACEHOLDERS, AgentJob, AgentOutcome, Executor, HarnessLaunch,
    LocalExecutor, SkillBundle, StartRefused, expand, now_iso, unknown_placeholders,
)
from .evidence import StartEvidence, contamination_error, judge_verdicts
from .grading import BadExpectation, Value, check_expectation, grade_answer
from .judges import JudgeError, ProbeJudge, judge_problems, judge_spec
from .probes import Probe, ProbeError, Workspace
from .prompt import build_prompt, with_skill
from .records import (
    OutcomeRecord, PlanRecord, RunsLog, StartRecord, new_runs_file, probe_identity, read_runs_file, record_fields,
    reserved_starts, valid_probe_id, writer_alive,
)

KNOWN_AGENT_CLIS = ("claude", "codex", "gemini", "opencode", "aider", "goose", "cursor-agent", "qwen", "amp")
"""Names a missing executable is compared with, for a "did you mean"."""
LOCK_TIMEOUT = 120.0
"""Seconds to wait for another runner's planning before giving up."""


class RunError(ProbeError):
    """A run that must not start (config, budget, agent); one line with the fix."""


class BudgetRefused(RunError):
    """The plan does not fit the suite's remaining starts."""


@dataclass(frozen=True)
class Start:
    probe: Probe
    arm: str
    rep: int
    retry_of: str | None = None
    resume_of: str | None = None

    def identity(self, agent: str, model: str) -> tuple:
        probe = self.probe
        return (probe.probe_id, probe.version, probe.probe_sha256, probe.artifact_sha256, probe.skill_sha256,
                self.arm, self.rep, agent, model, probe.skill_tree_sha256)


@dataclass(frozen=True)
class Budget:
    used: int
    cap: int | None
    source: str
    reserved: int = 0
    """Starts other live runners have reserved and not made yet."""

    @property
    def remaining(self) -> int | None:
        return None if self.cap is None else max(0, self.cap - self.used - self.reserved)

    def describe(self) -> str:
        held = f" (+{self.reserved} reserved by a running runner)" if self.reserved else ""
        if self.cap is None:
            return f"{self.used} starts on record{held}; no cap ([calibration] max-starts is not set)"
        return f"{self.used} of {self.cap} starts used{held}, {self.remaining} remain"


@dataclass
class Plan:
    starts: list[Start]
    done: int = 0
    """Starts skipped because an ok record exists."""
    failed_waiting: int = 0
    """Reps whose latest start is an error/timeout, not re-run without retry_errors."""
    elsewhere: int = 0
    """Reps another live runner is running or has reserved."""
    budget: Budget | None = None
    arms: tuple[str, ...] = ()
    reps: int = 0
    retry_errors: bool = False
    probes: list[Probe] = field(default_factory=list)
    logs: dict[Path, RunsLog] | None = None
    """Per suite, the runs file reserved for this plan (after :meth:`Runner.reserve`)."""
    plan_id: str = ""
    planner: Callable[["RecordsState"], "Plan"] | None = None
    """A procedure's own planning (``skill-eval calibrate``), called instead of
    :func:`plan_starts` each time the plan is made (again under the run lock
    by :meth:`Runner.reserve`); it returns a plan with ``starts`` and ``held``."""
    held: list[Start] = field(default_factory=list)
    """Starts reserved for a later stage of a procedure (calibrate's treatment
    samples): written into the plan record and counted against the budget
    with ``starts``, run only when handed to :meth:`Runner.run`."""
    record_fields: dict[str, Any] = field(default_factory=dict)
    """Fields written into the plan record and into every start record of this plan."""

    @property
    def worst_case(self) -> int:
        """The starts this plan may spend: its starts and those it holds for later."""
        return len(self.starts) + len(self.held)

    @property
    def fits(self) -> bool:
        remaining = self.budget.remaining if self.budget else None
        return remaining is None or self.worst_case <= remaining

    @property
    def resumed(self) -> int:
        return sum(1 for start in self.starts if start.resume_of)


@dataclass
class Withheld:
    """A probe preflight keeps out of the run, and why."""

    probe: Probe
    findings: list[str]


@dataclass
class Preflight:
    probes: list[Probe]
    """The probes to run."""
    withheld: list[Withheld] = field(default_factory=list)
    executable: str = ""


@dataclass
class RunSummary:
    records: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    skipped: int = 0
    """Planned starts never started (cancelled first): they cost nothing."""
    files: set[Path] = field(default_factory=set)
    """The runs files written."""

    def tally(self) -> dict[str, dict[str, int]]:
        """Per arm: starts, ok, caught (passed), error, timeout, interrupted."""
        tallies = {arm: {"starts": 0, "ok": 0, "caught": 0, "error": 0, "timeout": 0, "interrupted": 0} for arm in ARMS}
        for record in self.records:
            tally = tallies[record["arm"]]
            tally["starts"] += 1
            tally[record["status"]] += 1
            tally["caught"] += int(bool(record.get("passed")))
        return tallies


def validate_expectations(probe: Probe) -> None:
    """Refuse a probe whose ``caught_when`` holds an expectation grading cannot
    read, or whose ``judge`` is malformed."""
    for defect in probe.defects:
        caught_when = defect.get("caught_when")
        for name, expectation in (caught_when.items() if isinstance(caught_when, dict) else ()):
            try:
                check_expectation(expectation, Value.from_text(""))
            except BadExpectation as error:
                raise RunError(f"{probe.json_path}: defect {defect.get('id')}, field {name}: {error}; "
                               "fix caught_when (run `skill-eval lint`)") from None
        try:
            judge_spec(defect)
        except JudgeError as error:
            raise RunError(f"{probe.json_path}: defect {defect.get('id')}: {error} (run `skill-eval lint`)") from None


def select_agent(config: Config, name: str | None, root: Path | None = None) -> AgentConfig:
    """The agent called ``name``, or the only configured one, of the config
    file ``config`` came from (:func:`~skill_eval.evals.agents.load_agents`). Without any, the
    message names the file to write one in: the config in use, or
    ``skill-eval.toml`` at the workspace ``root`` when there is none."""
    where = str(config.source) if config.source else "skill-eval.toml"
    try:
        agents = load_agents(config, root)
    except ConfigError as error:
        raise RunError(str(error)) from None
    if not agents:
        example = '[agents.mine] with command = ["my-agent", "--print"], or preset = "claude-code" (docs/harnesses/)'
        if config.source is None:
            target = (root / "skill-eval.toml") if root is not None else Path("skill-eval.toml")
            raise RunError(f"no agents configured: there is no config file; create {target} with an agent section, "
                           f"e.g. {example} (`skill-eval init` writes one with every preset commented out)")
        raise RunError(f"{where}: no agents configured; add or uncomment an agent section in it, e.g. {example}")
    if name is None:
        if len(agents) == 1:
            return next(iter(agents.values()))
        raise RunError(f"{where}: several agents are configured ({', '.join(sorted(agents))}); choose one with --agent NAME")
    agent = agents.get(name)
    if agent is None:
        raise RunError(f"{where}: no agent {name!r} ([agents.{name}]); configured: {', '.join(sorted(agents))}")
    return agent


PRESET_PLACEHOLDERS = ("model", "workspace")
"""The placeholders a preset agent's ``args`` may use (its scratch folder is the preset's)."""
MAX_PROMPT_ARGUMENT = 128 * 1024 - 1
"""Bytes of a preset's prompt: it is one argument, and Linux caps one at 128 KiB."""


def check_agent(agent: AgentConfig, arms: Sequence[str], where: str) -> None:
    """Refuse agent commands that would leak the skill into the control arm, or
    that name placeholders that do not exist; a preset agent's ``env`` that
    sets what each start's isolation sets."""
    if agent.preset:
        from .presets import ISOLATION_VARIABLES

        clashes = sorted(set(agent.env) & ISOLATION_VARIABLES)
        if clashes:
            raise RunError(f"{where}: agents.{agent.name}.env sets {', '.join(clashes)}, which each start of a preset "
                           "sets itself (a fresh home, temporary folder and project); remove it")
        unknown = sorted({match.group(0) for arg in agent.args for match in re.finditer(r"\{([a-z][a-z0-9_]{0,40})\}", arg)
                          if match.group(1) not in PRESET_PLACEHOLDERS})
        if unknown:
            raise RunError(f"{where}: agents.{agent.name}.args uses {', '.join(unknown)}; a preset's args take only "
                           "{model} and {workspace} (the preset lays out the scratch project itself)")
        return
    for placeholder in SKILL_PLACEHOLDERS:
        if any("{" + placeholder + "}" in arg for arg in agent.command):
            raise RunError(f"{where}: agents.{agent.name}.command uses {{{placeholder}}}, which would hand the skill to "
                           f"the control arm too; move it to treatment-args and set treatment = \"args\"")
    if "treatment" in arms and agent.treatment == "args" and not agent.treatment_args:
        raise RunError(f"{where}: agents.{agent.name} has treatment = \"args\" but no treatment-args, so both arms would "
                       f"be the same; add treatment-args such as [\"--skill\", \"{{skill_dir}}\"]")
    unknown = unknown_placeholders(list(agent.command) + list(agent.treatment_args))
    if unknown:
        known = ", ".join("{" + name + "}" for name in PLACEHOLDERS)
        raise RunError(f"{where}: agents.{agent.name} uses {', '.join(unknown)}, which is no placeholder "
                       f"(placeholders: {known}); fix the spelling")


def preset_executable(agent: AgentConfig, root: Path) -> str | None:
    """A preset agent's ``executable`` as run: a path with a slash made
    absolute (relative to the workspace root), a bare name kept, ``None``
    for the preset's own program."""
    command = agent.executable
    if not command:
        return None
    command = expand(command, {"workspace": str(root)})
    if (os.sep in command or (os.altsep and os.altsep in command)) and not os.path.isabs(command):
        return str(root / command)
    return command


def check_preset_programs(agent: AgentConfig, root: Path, where: str) -> str:
    """The programs a preset agent runs are there (:func:`missing_programs`):
    its harness and what the harness needs (OpenCode: ``rg``). Returns the
    harness's program; :class:`RunError` naming the fix otherwise."""
    from .presets import get_preset, missing_programs

    preset = get_preset(agent.preset)
    executable = preset_executable(agent, root)
    env = {"PATH": agent.env.get("PATH", os.environ.get("PATH", os.defpath))}
    missing = missing_programs(preset, env, executable)
    if missing:
        program = executable or preset.executable
        fixes = []
        if program in missing:
            fixes.append(f"install {preset.npm_package} (tested: npm install -g {preset.npm_package}@"
                         f"{preset.tested_version}) or set agents.{agent.name}.executable")
        others = [name for name in missing if name != program]
        if others:
            fixes.append(f"put {', '.join(others)} on PATH ({preset.name} runs {'it' if len(others) == 1 else 'them'})")
        raise RunError(f"{where}: agents.{agent.name} (preset {preset.name}): {', '.join(repr(m) for m in missing)} "
                       f"not found; {'; '.join(fixes)}; see {preset.docs}")
    return executable or preset.executable


def check_preset_scratch(scratch: str | os.PathLike | None) -> None:
    """A preset's scratch projects must lie outside any git repository and
    below no skills folder (the control would see skills):
    :class:`RunError` naming ``SKILL_EVAL_SCRATCH`` otherwise."""
    import tempfile

    from .executor import default_scratch
    from .presets import PresetError, check_scratch_location

    base = Path(scratch or default_scratch(harness=True) or tempfile.gettempdir()).absolute()
    try:
        check_scratch_location(base / "start")
    except PresetError as error:
        raise RunError(f"{error} (set SKILL_EVAL_SCRATCH)") from None


def check_sandbox(agent: AgentConfig, where: str, root: Path | None = None, program: str | None = None) -> None:
    """Each start of ``agent`` can be sealed here (:mod:`skill_eval.evals.sandbox`),
    and a preset's harness (``program``) is not installed in a folder that
    holds the workspace ``root`` (a sealed start sees none of it):
    :class:`RunError` naming ``--no-sandbox`` otherwise, before any budget."""
    import shutil

    from .sandbox import NO_SANDBOX_FIX, install_root, sandbox_problem

    problem = sandbox_problem()
    if problem:
        raise RunError(f"{where}: agents.{agent.name}: cannot seal its starts: {problem}; {NO_SANDBOX_FIX}")
    if not agent.preset or not program or root is None:
        return
    found = program if os.sep in program else shutil.which(program, path={**os.environ, **agent.env}.get("PATH"))
    if found and "node_modules" in os.path.realpath(found).split(os.sep):
        installation = install_root(found)
        if _inside(root.resolve(), Path(installation)):
            raise RunError(f"{where}: agents.{agent.name}: its harness is installed in {installation}, which holds "
                           f"the workspace, and a sealed start sees nothing of the workspace: install it elsewhere "
                           f"(npm install --prefix DIR) and set agents.{agent.name}.executable, or {NO_SANDBOX_FIX}")


def resolve_executable(agent: AgentConfig, root: Path, where: str) -> tuple[str, str]:
    """The agent's executable as run (``argv[0]`` after placeholders) and its
    full path; :class:`RunError` when it is not found or not executable.

    A bare name is looked up on ``PATH`` (the agent's ``env`` may set it); a
    relative path with a slash is taken relative to the workspace root. For a
    preset agent, :func:`check_preset_programs`."""
    if agent.preset:
        import shutil

        program = check_preset_programs(agent, root, where)
        search = agent.env.get("PATH", os.environ.get("PATH", os.defpath))
        return program, (program if os.sep in program else shutil.which(program, path=search) or program)
    template = agent.command[0]
    if any("{" + name + "}" in template for name in ("prompt_file", "probe_dir", "skill_dir", "skill_file")):
        raise RunError(f"{where}: agents.{agent.name}.command[0] is {template!r}; the executable cannot be a "
                       "placeholder of the scratch folder")
    command = expand(template, {"model": agent.model, "workspace": str(root)})
    fix = f"install it, or fix agents.{agent.name}.command in {where}"
    if os.sep in command or (os.altsep and os.altsep in command):
        path = Path(command) if os.path.isabs(command) else root / command
        if not path.is_file():
            raise RunError(f"{where}: the agent's executable {str(path)!r} does not exist; {fix}")
        if not os.access(path, os.X_OK):
            raise RunError(f"{where}: the agent's executable {str(path)!r} is not executable; chmod +x it or {fix}")
        return str(path), str(path)
    import shutil

    search = agent.env.get("PATH", os.environ.get("PATH", os.defpath))
    found = shutil.which(command, path=search)
    if found is None:
        import difflib

        close = difflib.get_close_matches(command, KNOWN_AGENT_CLIS, n=1, cutoff=0.7)
        hint = f" (did you mean {close[0]!r}?)" if close and close[0] != command else ""
        raise RunError(f"{where}: the agent's executable {command!r} was not found on PATH{hint}; {fix}")
    return command, found


def parse_arms(text: str | Sequence[str]) -> tuple[str, ...]:
    arms = [a.strip() for a in (text.split(",") if isinstance(text, str) else text) if a.strip()]
    for arm in arms:
        if arm not in ARMS:
            raise RunError(f"unknown arm {arm!r}; arms are control and treatment (e.g. --arms control,treatment)")
    if not arms:
        raise RunError("no arms given; use --arms control,treatment")
    return tuple(dict.fromkeys(arms))


# -- the workspace's runs files, safely ------------------------------------------------


def _inside(path: Path, root: Path) -> bool:
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def check_runs_folder(suite: Path, root: Path) -> Path:
    """The suite's runs folder, refused (:class:`RunError`) when ``evals`` or
    ``evals/runs`` is a symbolic link or not a folder, or resolves outside
    the workspace."""
    folder = runs_folder(suite)
    for path in (folder.parent, folder):
        if path.is_symlink():
            raise RunError(f"{path}: is a symbolic link; run records must stay in the workspace, in a real folder "
                           "(replace the link with a folder)")
        if path.exists() and not path.is_dir():
            raise RunError(f"{path}: is not a folder; move it away so the runner can keep its records there")
    if not _inside(folder if folder.exists() else suite, root):
        raise RunError(f"{folder}: resolves outside the workspace {root}; keep run records inside it")
    return folder


def workspace_runs_files(root: Path) -> list[Path]:
    """Every runs file of the workspace; :class:`RunError` for a link in the way."""
    links: list[str] = []
    files = find_runs_files(root, links)
    bad = runs_links(links)
    if bad:
        raise RunError(f"{bad[0]}: is a symbolic link; run records must be real files and folders inside the "
                       "workspace, or their starts would not count against the budget (replace the link)")
    return files


@contextmanager
def run_lock(root: Path, cancel: threading.Event | None = None, timeout: float = LOCK_TIMEOUT,
             waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """The workspace's run lock: an exclusive ``flock`` on the root folder.

    ``fcntl.flock`` rather than the ``filelock`` library: the lock is on a
    folder (no lock file left in the user's tree) and the liveness lock of a
    runs file must be on that very file, which ``filelock`` (a ``.lock`` file
    beside it) does not offer; the kernel drops both when the process dies.
    """
    import fcntl

    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        deadline = time.monotonic() + timeout
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if cancel is not None and cancel.is_set():
                    raise RunError(f"{root}: cancelled while waiting for another skill-eval run to finish "
                                   "planning; nothing was started") from None
                if time.monotonic() > deadline:
                    raise RunError(f"{root}: another skill-eval run has held the workspace's run lock for over "
                                   f"{timeout:g} s; wait for it to finish planning, or stop it") from None
                if not told and waiting is not None:
                    waiting()
                    told = True
                if cancel is not None:
                    cancel.wait(0.02)  # the next try at once when cancelled
                else:
                    time.sleep(0.02)
        yield
    finally:
        os.close(fd)


class RecordsState:
    """What the workspace's runs files say, for planning: the starts used,
    live reservations, and per rep identity its state."""

    def __init__(self, files: Iterable[Path]) -> None:
        self.used = 0
        self.reserved = 0
        self.ok: set[tuple] = set()
        self.live: set[tuple] = set()
        self.latest_failure: dict[tuple, dict[str, Any]] = {}
        self.passed: dict[tuple, bool] = {}
        """Per rep identity with an ``ok`` record, whether it caught what the probe asks for."""
        self.unreadable: set[tuple] = set()
        """Rep identities whose latest ``ok`` answer had no field the output spec names."""
        self.files = list(files)
        for path in self.files:
            runs = read_runs_file(path)
            self.used += runs.starts
            alive = bool(runs.unfinished or runs.plans) and writer_alive(path)
            if alive:
                reserved = reserved_starts(runs)
                self.reserved += len(reserved)
                self.live.update(reserved)
            for _line, record in runs.records:
                identity = rep_identity(record)
                status = record.get("status")
                if status == "ok" and not record.get("contaminated"):
                    self.ok.add(identity)
                    self.passed[identity] = bool(record_passed(record))
                    if record.get("answer_source") == "none":
                        self.unreadable.add(identity)
                    else:
                        self.unreadable.discard(identity)
                elif record.get("unfinished") and alive:
                    self.live.add(identity)
                else:
                    previous = self.latest_failure.get(identity)
                    if previous is None or str(record.get("started", "")) >= str(previous.get("started", "")):
                        self.latest_failure[identity] = record


def plan_starts(probes: Iterable[Probe], state: RecordsState, *, agent: str, model: str, arms: Sequence[str],
                reps: int, retry_errors: bool = False) -> Plan:
    """The starts still to make (see the module docstring for resume)."""
    plan = Plan([], arms=tuple(arms), reps=reps, retry_errors=retry_errors)
    for probe in probes:
        for arm in arms:
            for rep in range(1, reps + 1):
                start = Start(probe, arm, rep)
                identity = start.identity(agent, model)
                if identity in state.ok:
                    plan.done += 1
                elif identity in state.live:
                    plan.elsewhere += 1
                elif identity in state.latest_failure:
                    latest = state.latest_failure[identity]
                    if is_interrupted(latest):
                        plan.starts.append(Start(probe, arm, rep, resume_of=latest.get("start_id")))
                    elif retry_errors:
                        plan.starts.append(Start(probe, arm, rep, retry_of=latest.get("start_id")))
                    else:
                        plan.failed_waiting += 1
                elif not retry_errors:
                    plan.starts.append(start)
    return plan


# -- answers under the runs folder -------------------------------------------------------


def _open_folder(name: str, dir_fd: int | None, create: bool) -> int:
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    if create:
        try:
            os.mkdir(name, 0o755, dir_fd=dir_fd)
        except FileExistsError:
            pass
    return os.open(name, flags, dir_fd=dir_fd)


def _checked_part(part: str, folder: Path) -> str:
    if part in ("", ".", "..") or "/" in part or "\0" in part:
        raise OSError(f"refusing the path component {part!r} under {folder}")
    return part


class AnswerFolders:
    """Writes answer files under runs folders, never through a symbolic link:
    every folder is opened relative to the one above it without following
    links, and each file is created exclusively. The folders' descriptors are
    kept for the run (opening four folders per answer added to each start:
    docs/performance.md)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._folders: dict[tuple, int] = {}

    def _folder(self, folder: Path, parts: tuple[str, ...]) -> int:
        key = (str(folder), parts)
        with self._lock:
            fd = self._folders.get(key)
            if fd is not None:
                return fd
            fd = _open_folder(str(folder), None, False)
            try:
                for part in parts:
                    child = _open_folder(_checked_part(part, folder), fd, True)
                    os.close(fd)
                    fd = child
            except BaseException:
                os.close(fd)
                raise
            self._folders[key] = fd
            return fd

    def write(self, folder: Path, parts: Sequence[str], data: bytes) -> None:
        """Write ``data`` to ``folder/parts...`` (the file must not exist)."""
        fd = self._folder(folder, tuple(parts[:-1]))
        name = _checked_part(parts[-1], folder)
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644, dir_fd=fd)
        try:
            write_all(out, data)
        finally:
            os.close(out)

    def close(self) -> None:
        with self._lock:
            folders, self._folders = self._folders, {}
        for fd in folders.values():
            os.close(fd)


def write_under(folder: Path, parts: Sequence[str], data: bytes) -> None:
    """Write ``data`` to ``folder/parts...`` through :class:`AnswerFolders`."""
    folders = AnswerFolders()
    try:
        folders.write(folder, parts, data)
    finally:
        folders.close()


# -- the skill's copy ------------------------------------------------------------------

def skill_bundle(probe: Probe) -> SkillBundle:
    """The files of the skill folder the treatment gets a copy of: those of
    ``probe``'s :class:`~skill_eval.evals.probes.SkillTree` (read once when
    the probe was loaded, so the copy holds exactly the bytes its
    ``skill_tree_sha256`` was taken of): everything but ``evals/`` folders,
    folders holding a probe.json (probes, their transcripts), VCS and tool
    folders, virtual environments and symbolic links."""
    skill_path = probe.skill_path
    folder = skill_path.parent
    tree = probe.skill_tree
    if tree is None:
        raise RunError(f"{skill_path}: the treatment arm needs the skill folder, and it could not be read; "
                       "run `skill-eval check` to see why")
    if tree.holds_probe:
        raise RunError(f"{folder}: the skill folder itself holds a probe.json; keep probes under "
                       "evals/probes/ so the treatment's copy of the skill holds no answer key")
    return SkillBundle(folder.name, skill_path.name, tree.files)


class Cancel(threading.Event):
    """Stops a run: a :class:`threading.Event` whose :meth:`set` also resolves
    :attr:`future`, which the run loop waits on beside the starts' futures, so
    a cancel wakes :func:`~concurrent.futures.wait` at once instead of being
    looked at between waits. Set from any thread (the signal watcher of the
    CLI, the language server's progress), never from a signal handler."""

    def __init__(self) -> None:
        super().__init__()
        self.future: Future = Future()
        """Done once the cancel is set."""

    def set(self) -> None:
        super().set()
        try:
            self.future.set_result(None)
        except InvalidStateError:
            pass  # set already (by another thread, or twice)

    def clear(self) -> None:
        """Unset, with a new :attr:`future` (the old one stays done)."""
        super().clear()
        self.future = Future()


CANCEL_CHECK = 0.2
"""Seconds at most between two looks of the run loop at a ``cancel`` that is a
plain :class:`threading.Event` (API callers' own): a :class:`Cancel` wakes it at once."""
DRAIN_TIMEOUT = 30.0
"""Seconds a cancelled run waits for the next killed start to be graded before it gives up."""


class Runner:
    """Runs a plan with an executor and records every start.

    ``on_record(record)`` is called (from the thread that ran :meth:`run`) after
    each outcome is written, with the start and its outcome as one record;
    ``cancel`` stops the run: running agents are killed and recorded as
    interrupted, queued ones never start. A :class:`Cancel` stops it at once;
    a plain :class:`threading.Event` is looked at every :data:`CANCEL_CHECK`
    seconds.
    """

    def __init__(
        self,
        workspace: Workspace,
        agent: AgentConfig,
        *,
        model: str | None = None,
        executor: Executor | None = None,
        jobs: int = 4,
        on_record: Callable[[dict[str, Any]], None] | None = None,
        cancel: threading.Event | None = None,
        fsync: bool = True,
        max_output: int | None = None,
    ) -> None:
        self.workspace = workspace
        self.agent = agent
        self.model = agent.model if model is None else model
        self.executor = executor
        self.jobs = jobs
        self.on_record = on_record
        self.cancel = cancel or Cancel()
        self.fsync = fsync
        self.max_output = max_output or getattr(agent, "max_output", None) or DEFAULT_MAX_OUTPUT
        self.on_wait: Callable[[], None] | None = None
        """Called once when the run lock is held by another runner."""
        self.lint_at_run: dict[Path, list[dict[str, Any]]] = {}
        """Per probe.json, the lint findings :meth:`preflight` saw; the plan
        record keeps those of the probes it reserves starts of."""
        self._bundles: dict[Any, SkillBundle] = {}
        self._hashes: dict[tuple, str] = {}
        self._answers = AnswerFolders()
        self._evidence = StartEvidence(workspace.root)
        self._runner = {"pid": os.getpid(), "host": socket.gethostname()}

    @property
    def where(self) -> str:
        source = self.workspace.config.source
        return str(source) if source else "skill-eval.toml"

    # -- preflight ------------------------------------------------------------------------

    def preflight(self, probes: Sequence[Probe], arms: Sequence[str], *, allow_lint_errors: bool = False) -> Preflight:
        """Check everything that can be checked before any budget is spent."""
        check_agent(self.agent, arms, self.where)
        executable, _found = resolve_executable(self.agent, self.workspace.root, self.where)
        bad_ids = [probe for probe in probes if not valid_probe_id(probe.probe_id)]
        if bad_ids:
            raise RunError("\n".join(f"{probe.json_path}: id {probe.probe_id!r} does not match ^[a-z0-9][a-z0-9._-]*$; "
                                     "ids name answer folders, so this probe is never run: fix the id"
                                     for probe in bad_ids))
        for probe in probes:
            check_runs_folder(probe.suite, self.workspace.root)
        if self.agent.preset:
            check_preset_scratch(getattr(self.executor, "scratch", None))
        if self.agent.sandbox == "on":
            check_sandbox(self.agent, self.where, self.workspace.root, executable)
        problems = [problem for probe in probes for problem in judge_problems(probe, self.workspace.root)]
        if problems:
            raise RunError("\n".join(problems + ["no start was made: a defect's judge could not grade its answers"]))
        result = Preflight(list(probes), executable=executable)
        findings = lint_findings(self.workspace, probes)
        self.lint_at_run.update(findings)
        if not allow_lint_errors:
            errors = lint_errors(self.workspace, probes, findings)
            result.probes = [probe for probe in probes if probe.json_path not in errors]
            result.withheld = [Withheld(probe, errors[probe.json_path]) for probe in probes if probe.json_path in errors]
        return result

    # -- planning ---------------------------------------------------------------------------

    def _check(self, probes: Sequence[Probe], arms: Sequence[str], reps: int) -> None:
        check_agent(self.agent, arms, self.where)
        if reps < 1:
            raise RunError("--reps must be at least 1")
        if "treatment" in arms:
            for probe in probes:
                if probe.skill_bytes is None:
                    raise RunError(f"{probe.json_path}: the treatment arm needs the skill, and this probe has none; "
                                   "add a SKILL.md above it or run --arms control")
        for probe in probes:
            if not valid_probe_id(probe.probe_id):
                raise RunError(f"{probe.json_path}: id {probe.probe_id!r} does not match ^[a-z0-9][a-z0-9._-]*$; fix the id")
            validate_expectations(probe)
            if self.agent.preset:
                self._check_prompt(probe, arms)

    def _check_prompt(self, probe: Probe, arms: Sequence[str]) -> None:
        """A preset hands the prompt over as one argument: it must fit one
        (:data:`MAX_PROMPT_ARGUMENT`) and hold no NUL byte."""
        prompt = build_prompt(probe.artifact_bytes, probe.output_spec)
        if "treatment" in arms and self.agent.treatment == "prepend":
            prompt = with_skill(probe.skill_bytes or b"", prompt)
        if b"\0" in prompt:
            raise RunError(f"{probe.artifact_path}: holds a NUL byte, which a command-line argument cannot carry; "
                           "remove it (`skill-eval lint` reports the file)")
        if len(prompt) > MAX_PROMPT_ARGUMENT:
            raise RunError(f"{probe.artifact_path}: the prompt is {len(prompt)} bytes, over the {MAX_PROMPT_ARGUMENT} "
                           f"a command-line argument holds; agents.{self.agent.name} (preset {self.agent.preset}) "
                           "passes it as one: shorten the artifact" + (" or use treatment = \"install\""
                           if self.agent.treatment == "prepend" else ""))

    def _plan(self, probes: Sequence[Probe], arms: Sequence[str], reps: int, retry_errors: bool,
              planner: Callable[[RecordsState], Plan] | None = None) -> Plan:
        state = RecordsState(workspace_runs_files(self.workspace.root))
        if planner is not None:
            plan = planner(state)
            plan.planner = planner
        else:
            plan = plan_starts(probes, state, agent=self.agent.name, model=self.model, arms=arms, reps=reps,
                               retry_errors=retry_errors)
        plan.probes = list(probes)
        plan.budget = Budget(state.used, self.workspace.config.calibration_max_starts, self.where, state.reserved)
        return plan

    def plan(self, probes: Sequence[Probe], arms: Sequence[str], reps: int, retry_errors: bool = False) -> Plan:
        """The starts still to make, as the records stand now (nothing reserved)."""
        self._check(probes, arms, reps)
        return self._plan(probes, arms, reps, retry_errors)

    def reserve(self, plan: Plan) -> Plan:
        """Make ``plan`` again under the run lock and reserve its starts (see the
        module docstring); :class:`BudgetRefused` when it does not fit. Returns
        the reserved plan (``plan`` itself, updated)."""
        if plan.logs is not None:
            return plan
        with run_lock(self.workspace.root, self.cancel, waiting=self.on_wait):
            fresh = self._plan(plan.probes, plan.arms, plan.reps, plan.retry_errors, plan.planner)
            plan.starts, plan.done, plan.failed_waiting = fresh.starts, fresh.done, fresh.failed_waiting
            plan.elsewhere, plan.budget, plan.held = fresh.elsewhere, fresh.budget, fresh.held
            if not plan.fits:
                budget = plan.budget
                needs = f"up to {plan.worst_case}" if plan.held else f"{plan.worst_case}"
                raise BudgetRefused(
                    f"{budget.source}: refused: the plan needs {needs} start(s) but only {budget.remaining} "
                    f"of [calibration] max-starts = {budget.cap} remain ({budget.used} used, failed starts included"
                    + (f"; {budget.reserved} reserved by another run" if budget.reserved else "")
                    + "); narrow the run (fewer probes, arms or reps) or raise the cap deliberately")
            plan.plan_id = uuid.uuid4().hex
            plan.logs = {}
            try:
                by_suite: dict[Path, list[Start]] = {}
                for start in [*plan.starts, *plan.held]:
                    by_suite.setdefault(start.probe.suite, []).append(start)
                for suite, starts in by_suite.items():
                    folder = check_runs_folder(suite, self.workspace.root)
                    folder.mkdir(parents=True, exist_ok=True)
                    check_runs_folder(suite, self.workspace.root)
                    log = RunsLog(new_runs_file(suite, self.agent.name), fsync=self.fsync)
                    plan.logs[suite] = log
                    log.append([PlanRecord(
                        plan_id=plan.plan_id, created=now_iso(), agent=self.agent.name, model=self.model,
                        runner=self._runner,
                        starts=[[s.probe.probe_id, s.probe.version, s.probe.probe_sha256, s.probe.artifact_sha256,
                                 s.probe.skill_sha256, s.arm, s.rep, s.probe.skill_tree_sha256] for s in starts],
                        **plan.record_fields,
                        **self._plan_lint(starts),
                    )])
            except BaseException:
                self._close(plan)
                raise
        return plan

    def _plan_lint(self, starts: Sequence[Start]) -> dict[str, Any]:
        """The plan record's ``lint``: per probe content it reserves starts of,
        the findings preflight saw (nothing when preflight did not lint it)."""
        entries, seen = [], set()
        for start in starts:
            probe = start.probe
            if probe.json_path in seen or probe.json_path not in self.lint_at_run:
                continue
            seen.add(probe.json_path)
            entries.append({**probe_identity(probe), "findings": self.lint_at_run[probe.json_path]})
        return {"lint": entries} if entries else {}

    @staticmethod
    def _close(plan: Plan) -> None:
        for log in (plan.logs or {}).values():
            log.close()

    # -- jobs -------------------------------------------------------------------------

    def _skill_bundle(self, probe: Probe) -> SkillBundle:
        folder = probe.skill_path.parent
        bundle = self._bundles.get(folder)
        if bundle is None:
            bundle = self._bundles[folder] = skill_bundle(probe)
        return bundle

    def _install_bundle(self, probe: Probe) -> SkillBundle:
        """The skill as a preset installs it: :func:`skill_bundle`'s files, in a
        folder named after the skill's front-matter ``name`` (harnesses key
        a skill by its folder; OpenCode requires the two to match)."""
        from .presets import PresetError, skill_name

        folder = probe.skill_path.parent
        key = ("install", folder)
        bundle = self._bundles.get(key)
        if bundle is None:
            plain = self._skill_bundle(probe)
            try:
                name = skill_name(folder)
            except PresetError as error:
                raise RunError(str(error)) from None
            bundle = self._bundles[key] = SkillBundle(name, plain.skill_file, plain.files)
        return bundle

    def installed_skill(self, probe: Probe) -> tuple[str, str]:
        """Where the treatment's copy of the skill lands in a preset's project
        (relative to the project) and :func:`~skill_eval.evals.presets.files_hash`
        of what it holds: the installed skill's hash, for the record."""
        from .presets import files_hash, get_preset

        bundle = self._install_bundle(probe)
        key = ("hash", bundle.name, probe.skill_path.parent)
        digest = self._hashes.get(key)
        if digest is None:
            digest = self._hashes[key] = files_hash((name, data) for name, data, _mode in bundle.files)
        return f"{get_preset(self.agent.preset).skills_folder}/{bundle.name}", digest

    def job_for(self, start: Start, job_id: str) -> AgentJob:
        """The job of ``start``: the seam where what an agent is handed is decided."""
        probe = start.probe
        prompt = build_prompt(probe.artifact_bytes, probe.output_spec)
        values = {"model": self.model, "workspace": str(self.workspace.root)}
        if self.agent.preset:
            skill = None
            if start.arm == "treatment":
                if self.agent.treatment == "install":
                    skill = self._install_bundle(probe)
                else:
                    prompt = with_skill(probe.skill_bytes or b"", prompt)
            harness = HarnessLaunch(self.agent.preset, tuple(expand(arg, values) for arg in self.agent.args),
                                    preset_executable(self.agent, self.workspace.root))
            return AgentJob(job_id, (), prompt, probe.artifact_path.name, probe.artifact_bytes, dict(self.agent.env),
                            self.agent.timeout, values=values, skill=skill, max_output=self.max_output,
                            harness=harness, files=probe.input_files,
                            sealed=self.agent.sandbox == "on")
        argv = list(self.agent.command)
        skill = None
        if start.arm == "treatment":
            if self.agent.treatment == "prepend":
                prompt = with_skill(probe.skill_bytes or b"", prompt)
            else:
                argv += list(self.agent.treatment_args)
                if any("{" + name + "}" in arg for arg in self.agent.treatment_args for name in SKILL_PLACEHOLDERS):
                    skill = self._skill_bundle(probe)
        command = argv[0]
        if (os.sep in command or (os.altsep and os.altsep in command)) and "{" not in command \
                and not os.path.isabs(command):
            argv[0] = str(self.workspace.root / command)
        return AgentJob(job_id, tuple(argv), prompt, probe.artifact_path.name, probe.artifact_bytes,
                        dict(self.agent.env), self.agent.timeout, values=values,
                        skill=skill, max_output=self.max_output, files=probe.input_files,
                        sealed=self.agent.sandbox == "on")

    # -- recording ----------------------------------------------------------------------

    def start_record(self, start: Start, job: AgentJob, plan_id: str,
                     fields: dict[str, Any] | None = None) -> StartRecord:
        probe = start.probe
        record = StartRecord(
            **probe_identity(probe),
            start_id=job.job_id,
            probe_path=_relative(probe.json_path, self.workspace.root),
            kind=probe.kind,
            band=probe.band,
            defects=probe.defect_ids,
            arm=start.arm,
            rep=start.rep,
            agent=self.agent.name,
            model=self.model,
            started=now_iso(),
            plan_id=plan_id,
            runner=self._runner,
            sandbox="bwrap" if job.sealed else "off",
            **(fields or {}),
        )
        if start.retry_of:
            record.retry_of = start.retry_of
        if start.resume_of:
            record.resume_of = start.resume_of
        if self.agent.preset:
            record.preset = self.agent.preset
            record.treatment = self.agent.treatment
            if job.skill is not None:
                record.installed_skill, record.installed_skill_sha256 = self.installed_skill(probe)
        return record

    def outcome_record(self, start: Start, job: AgentJob, outcome: AgentOutcome) -> OutcomeRecord:
        """Grade ``outcome``, keep its answer in a file under the suite's runs
        folder, and build its outcome record.

        A preset agent's answer is the final answer parsed from what the
        harness printed (kept as the answer file; the raw output beside it,
        ``output_file``), and its usage (tokens, cost, the harness's own
        duration as ``agent_duration_s``, turns) lands on the record. A judge
        that gives no verdict makes the start an ``error`` with
        ``grading_errors`` (the answer is kept): an ungraded rep is no sample.
        The evidence (:mod:`~skill_eval.evals.evidence`): ``skill_loaded`` and
        ``skill_evidence`` from the harness's transcript, each judge's verdict
        and reason (``judge_verdicts``), and ``contaminated`` when the output
        holds answer-key text: then the start is an ``error``, never graded."""
        probe = start.probe
        record = OutcomeRecord(start_id=job.job_id, probe=probe.probe_id, version=probe.version, arm=start.arm,
                               rep=start.rep, ended=outcome.ended, duration_s=outcome.duration, status=outcome.status,
                               exit_code=outcome.exit_code)
        if outcome.truncated:
            record.truncated = dict(outcome.truncated)
        harness = outcome.harness
        text = outcome.stdout.decode("utf-8", errors="replace")
        stem = ["answers", probe.probe_id, f"v{int(probe.version)}", f"{start.arm}-r{int(start.rep)}-{job.job_id[:12]}"]
        if harness is not None:
            usage = harness.usage() if outcome.status in ("ok", "error") else {}  # a killed harness reported nothing
            if "duration_s" in usage:
                usage["agent_duration_s"] = usage.pop("duration_s")
            for name, value in usage.items():
                setattr(record, name, value)
            if outcome.stdout:
                parts = stem[:-1] + [stem[-1] + ".output.txt"]
                self._answers.write(probe.runs_folder, parts, outcome.stdout)
                record.output_file = "/".join(parts)
            text = harness.answer or ""
            if harness.answer is not None:
                parts = stem[:-1] + [stem[-1] + ".txt"]
                self._answers.write(probe.runs_folder, parts, harness.answer.encode("utf-8", "surrogateescape"))
                record.answer_file = "/".join(parts)
        elif outcome.stdout or outcome.status == "ok":
            parts = stem[:-1] + [stem[-1] + ".txt"]
            self._answers.write(probe.runs_folder, parts, outcome.stdout)
            record.answer_file = "/".join(parts)
        transcript = outcome.stdout.decode("utf-8", errors="replace") if harness is not None else ""
        installed = None
        if harness is not None and job.skill is not None:
            installed = self.installed_skill(probe)[0]
        use = self._evidence.skill_use(probe, self.agent, start.arm, transcript or text, installed)
        if use is not None:
            record.skill_loaded, record.skill_evidence = use.loaded, use.evidence
        leaks = self._evidence.leaks(probe, text, "\n".join((transcript, outcome.stderr_tail or "")))
        if leaks:
            record.contaminated, contamination = contamination_error(leaks)
        if outcome.status == "ok" and leaks:
            record.status, record.caught, record.error = "error", [], contamination
        elif outcome.status == "ok":
            answer, grades = grade_answer(text, list(probe.defects), probe.output_spec,
                                          judge=ProbeJudge(probe, self.workspace.root))
            record.answer_source = answer.source
            record.caught = [g.defect_id for g in grades if g.caught]
            if probe.json_path.name != "probe.json":  # a skill-creator eval (evals/suites.py)
                from .suites import expectation_results

                record.expectations = expectation_results(probe, grades)
            if judge_verdicts(grades):
                record.judge_verdicts = judge_verdicts(grades)
            failed = {g.defect_id: g.error for g in grades if g.error}
            if failed:
                record.status = "error"
                record.caught = []
                record.grading_errors = failed
                record.error = "grading error: " + "; ".join(f"{d}: {e}" for d, e in failed.items())
            else:
                record.passed = record_passed({"status": "ok", "caught": record.caught, "kind": probe.kind,
                                               "band": probe.band, "defects": probe.defect_ids})
        else:
            record.caught = []
            record.error = outcome.error
            if outcome.stderr_tail:
                record.stderr_tail = outcome.stderr_tail
        return record

    # -- running --------------------------------------------------------------------------

    def run(self, plan: Plan, starts: Sequence[Start] | None = None, *, close: bool = True) -> RunSummary:
        """Reserve ``plan`` (if not yet) and run its starts, or ``starts``: a
        later stage's, from what it holds. ``close=False`` keeps its runs files
        locked, and so what it holds reserved, for a later stage."""
        self.reserve(plan)
        summary = RunSummary()
        summary.files.update(log.path for log in plan.logs.values())
        batch = plan.starts if starts is None else list(starts)
        try:
            if batch:
                self._run(plan, batch, summary)
        finally:
            self._answers.close()
            if close:
                self._close(plan)
        return summary

    def _run(self, plan: Plan, starts: Sequence[Start], summary: RunSummary) -> None:
        """Submit every start, then append outcome records as starts are
        graded, one batch per :func:`~concurrent.futures.wait`. The wait also
        returns when :attr:`cancel` is set (by another thread: the signal
        watcher, the language server's progress): at once for a
        :class:`Cancel`, whose future it waits on too, within
        :data:`CANCEL_CHECK` seconds for a plain event. Starts graded in the
        same wait are written before the cancel is acted on."""
        executor = self.executor or LocalExecutor(self.jobs)
        pending: set[Future] = set()
        try:
            for start in starts:
                job = self.job_for(start, uuid.uuid4().hex)
                log = plan.logs[start.probe.suite]
                started = threading.Event()
                future = executor.submit(job, self._on_start(start, job, log, plan, started))
                pending.add(self._recorder(future, start, job, started))
            while pending:
                if self.cancel.is_set():
                    raise KeyboardInterrupt
                cancelled = self.cancel.future if isinstance(self.cancel, Cancel) else None
                if cancelled is None:
                    done, pending = wait(pending, timeout=CANCEL_CHECK, return_when=FIRST_COMPLETED)
                else:
                    done, pending = wait(pending | {cancelled}, return_when=FIRST_COMPLETED)
                    done.discard(cancelled)
                    pending.discard(cancelled)
                if done:
                    self._write(summary, [graded.result() for graded in done], plan)
        except KeyboardInterrupt:
            summary.interrupted = True
            executor.cancel()
            self._drain(summary, pending, plan)
        except BaseException:
            executor.cancel()  # e.g. a full disk: stop spending starts that cannot be recorded
            raise
        finally:
            if self.executor is None:
                executor.shutdown(wait=True)

    def _on_start(self, start: Start, job: AgentJob, log: RunsLog, plan: Plan, started: threading.Event):
        """The job's ``on_start``: its start record, on disk, before the agent runs."""

        def on_start() -> None:
            if self.cancel.is_set():
                raise StartRefused("the run is being cancelled")
            log.append([self.start_record(start, job, plan.plan_id, plan.record_fields)])
            started.set()

        return on_start

    def _recorder(self, future: Future, start: Start, job: AgentJob, started: threading.Event) -> Future:
        """A future of the job's ``(future, start, record, error)``: its
        done-callback grades the job and keeps its answer file where it
        finished (a worker thread, locally); the thread that called
        :meth:`run` waits on it and appends the record."""
        graded: Future = Future()

        def finished(future: Future) -> None:
            try:
                outcome = future.result()
            except BaseException as error:  # noqa: BLE001 - a lost or cancelled task
                outcome = None
                lost = f"interrupted: the task was lost ({type(error).__name__}: {error})"
            else:
                lost = "interrupted: the executor gave no outcome after the start was recorded"
            if not started.is_set():
                graded.set_result((future, start, None, None))  # never started: costs nothing
                return
            if outcome is None or not outcome.is_start:
                stamp = now_iso()
                outcome = AgentOutcome(job.job_id, "interrupted", stamp, stamp, 0.0, error=lost)
            try:
                graded.set_result((future, start, self.outcome_record(start, job, outcome), None))
            except BaseException as error:  # noqa: BLE001 - re-raised by the run loop
                graded.set_result((future, start, None, error))

        future.add_done_callback(finished)
        return graded

    def _write(self, summary: RunSummary, batch: list[tuple], plan: Plan) -> None:
        """Append the outcome records of ``batch`` (one group commit per file)."""
        by_log: dict[Path, list[tuple[Start, dict[str, Any]]]] = {}
        failure = None
        for _future, start, record, error in batch:
            if error is not None:
                failure = failure or error
                continue
            if record is None:
                summary.skipped += 1
                continue
            by_log.setdefault(start.probe.suite, []).append((start, record))
        for suite, items in by_log.items():
            plan.logs[suite].append([record for _start, record in items], durable=False)
            for start, record in items:
                merged = self._merged(start, record)
                summary.records.append(merged)
                if self.on_record is not None:
                    self.on_record(merged)
        if failure is not None:
            raise failure

    def _merged(self, start: Start, outcome: OutcomeRecord) -> dict[str, Any]:
        """The start and its outcome as one record (as readers see them)."""
        probe = start.probe
        merged = {**probe_identity(probe), "kind": probe.kind, "band": probe.band, "defects": probe.defect_ids,
                  "arm": start.arm, "rep": start.rep, "agent": self.agent.name, "model": self.model}
        merged.update({k: v for k, v in record_fields(outcome).items() if k not in ("schema", "type")})
        return merged

    def _drain(self, summary: RunSummary, pending: set[Future], plan: Plan) -> None:
        """After a cancel: record every start that happened (killed ones
        included), giving up when none is graded for :data:`DRAIN_TIMEOUT` seconds."""
        while pending:
            try:
                done, pending = wait(pending, timeout=DRAIN_TIMEOUT, return_when=FIRST_COMPLETED)
            except KeyboardInterrupt:
                continue  # a second Ctrl-C must not lose the records of killed starts
            if not done:
                break
            self._write(summary, [graded.result() for graded in done], plan)


def lint_findings(workspace: Workspace, probes: Sequence[Probe]) -> dict[Path, list[dict[str, Any]]]:
    """Per probe.json, every lint finding on the probe (its probe.json and
    artifact, and the workspace-wide checks that point at it), each as a dict
    of ``code``, ``severity``, ``message``, ``path`` (relative to the
    workspace), ``line`` and ``column`` (1-based): what the plan record keeps
    and the report shows. Every probe given has an entry, empty when clean."""
    from skill_eval.linter.engine import lint_targets
    from skill_eval.linter.rules.base import Scope
    from skill_eval.linter.workspace import Targets

    found: dict[Path, list[dict[str, Any]]] = {probe.json_path: [] for probe in probes}
    if not probes:
        return found
    session = workspace.session
    targets = Targets(probes={p.json_path for p in probes if p.json_path.name == "probe.json"})
    targets.suites = {p.json_path for p in probes if p.json_path.name != "probe.json"}  # evals.json (evals/suites.py)
    diagnostics, _checked = lint_targets(session, targets, scopes=frozenset({Scope.PROBE, Scope.WORKSPACE, Scope.SUITE}))
    owners: dict[Path, Path] = {}
    for probe in probes:
        owners[probe.json_path] = probe.json_path
        owners.setdefault(probe.artifact_path, probe.json_path)
    by_folder = {probe.folder: probe.json_path for probe in probes}
    for diagnostic in sorted(diagnostics, key=lambda d: d.sort_key()):
        owner = owners.get(diagnostic.path) or by_folder.get(diagnostic.probe)
        if owner is None:
            continue
        start = diagnostic.start
        found[owner].append({"code": diagnostic.code, "severity": diagnostic.severity.value,
                             "message": diagnostic.message, "path": _relative(diagnostic.path, workspace.root),
                             "line": max(1, start.line), "column": max(1, start.column)})
    return found


def lint_errors(workspace: Workspace, probes: Sequence[Probe],
                findings: dict[Path, list[dict[str, Any]]] | None = None) -> dict[Path, list[str]]:
    """Per probe.json with lint errors, its error findings (of
    :func:`lint_findings`, or ``findings`` when given), each as
    ``path:line:column: CODE message``. Warnings and info never block."""
    if findings is None:
        findings = lint_findings(workspace, probes)
    found: dict[Path, list[str]] = {}
    for owner, items in findings.items():
        errors = [f"{f['path']}:{f['line']}:{f['column']}: {f['code']} {f['message']}" for f in items
                  if f["severity"] == "error"]
        if errors:
            found[owner] = errors
    return found


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def suite_budget(workspace: Workspace) -> Budget:
    """The workspace's budget as the records stand (starts, live reservations, cap)."""
    state = RecordsState(workspace_runs_files(workspace.root))
    source = str(workspace.config.source) if workspace.config.source else "skill-eval.toml"
    return Budget(state.used, workspace.config.calibration_max_starts, source, state.reserved)


def open_workspace(paths: Sequence[str | os.PathLike], config_path: Path | None = None) -> Workspace:
    return Workspace.open([Path(p) for p in paths], config_path)
