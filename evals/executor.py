"""Running agent commands: the job, its outcome, and the executors that run jobs.

The runner never starts a process itself. It turns each planned start into an
:class:`AgentJob` — plain, picklable data: the argv *template*, prompt bytes,
artifact bytes, the skill's files (treatment), environment, timeout, output
cap — and hands it to an :class:`Executor` together with an ``on_start``
callback. :func:`execute_job` is the one function that turns a job into an
:class:`AgentOutcome`; any executor (the local thread pool here, a Ray
executor elsewhere, see docs/distributed.md) only decides *where* it runs.
Grading and recording stay with the runner, in one process.

What an agent sees (one fresh scratch folder per start, ``ROOT``)::

    ROOT/work/<artifact>        the working directory: the artifact only   {probe_dir}
    ROOT/prompt/prompt.txt      the prompt (when the command takes it)     {prompt_file}
    ROOT/skill/<skill folder>/  treatment only: a copy of the skill folder {skill_dir}
                                without evals/, without any folder holding
                                a probe.json, hidden folders or links      ({skill_file}: its SKILL.md)
    ROOT/tmp/                   $TMPDIR

``ROOT`` is made in the executor's own scratch folder
(``skill-eval-run-<random>``, one per :class:`ProcessRegistry`), which is made
under ``$SKILL_EVAL_SCRATCH``, else ``/dev/shm`` when writable
(memory-backed; never for a preset: :func:`default_scratch`), else the
system's temporary folder. ``ROOT`` is removed
after the start; the executor's folder when the executor shuts down, or, by
the watchdog, when the process running the executor dies.

A **preset** agent's job (``AgentJob.harness``, see docs/harnesses/) is laid
out by :func:`skill_eval.evals.presets.prepare_project` instead::

    ROOT/project/<artifact>     the working directory; for the treatment with
    ROOT/project/<skills folder>/<name>/   treatment = "install", the skill's copy
    ROOT/home/                  a fresh $HOME (XDG folders, the harness's config)
    ROOT/tmp/                   $TMPDIR

The preset builds the argv (the prompt is one argument, stdin is /dev/null)
and the whole environment: the runner's minus what the isolation replaces,
never merged over the runner's again. What the harness printed is parsed in
the worker (:func:`~skill_eval.evals.presets.parse_output`, which needs the
whole stderr) into ``AgentOutcome.harness``; a harness that exits 0 without an
answer is an ``error``.

Placeholders are expanded in one pass over the command template
(:func:`expand`): a substituted value is never scanned again, so a skill
folder named ``{prompt_file}`` stays that name. The prompt lives outside the
working directory, so an artifact named ``prompt.txt`` cannot overwrite it.
The environment is the runner's plus the agent's ``env``, with ``PWD`` set to
the working directory, ``OLDPWD`` dropped, ``TMPDIR``/``TMP``/``TEMP`` in
``ROOT/tmp``, and ``SKILL_EVAL_START_ID`` (the record's start id) and
``SKILL_EVAL_RUN`` (this executor's token) added. A sealed job
(``AgentJob.sealed``, the runner's default) runs in a bubblewrap sandbox that
holds its ``ROOT``, its installation and the system, and nothing of the
workspace or the runner (:mod:`skill_eval.evals.sandbox`); a sealed command
agent also gets ``ROOT/home/`` as ``HOME``. An unsealed job is isolation by
what is handed over only: its agent can read what the user can.

Bounded processes: the command runs without a shell, in its own process group
(session); stdout and stderr are read with a cap per stream (beyond it the
output is read and dropped, and the outcome says how much there was); when the
agent exits, its process group is killed, so a lingering child holding stdout
cannot turn a finished answer into a timeout. A **watchdog** process per
executor (:mod:`skill_eval.evals.watchdog`: a second Python holding the read
end of a pipe) kills every
registered process group, and every process whose environment carries this
executor's ``SKILL_EVAL_RUN`` token, then removes the executor's scratch
folders, as soon as the runner dies — ``kill -9`` included — or the executor
shuts down. Judges (``evals/judges.py``) run under a watchdog of their own
the same way.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, Sequence

from skill_eval.linter.reader import write_all

from .sandbox import SandboxError, sealed_argv
from .watchdog import Watchdog

if TYPE_CHECKING:
    from .presets import HarnessOutput

PLACEHOLDERS = ("prompt_file", "probe_dir", "skill_dir", "skill_file", "model", "workspace")
"""``{workspace}`` is the workspace root, for agent scripts kept in the
repository: it hands the workspace's path to both arms alike."""
SKILL_PLACEHOLDERS = ("skill_dir", "skill_file")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")
_WORDLIKE = re.compile(r"\{([a-z][a-z0-9_]{0,40})\}")
REAP_TIMEOUT = 2.0
"""Seconds to wait, after the agent's process group was killed, for its pipes to close."""
STDERR_TAIL = 2000
DEFAULT_MAX_OUTPUT = 10 * 1024 * 1024
"""Bytes kept per stream (stdout, stderr) of one start."""
_CHUNK = 1 << 16


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def expand(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each ``{name}`` of :data:`PLACEHOLDERS` found in
    ``values`` replaced, in one pass: substituted text is never expanded again."""
    return _PLACEHOLDER.sub(lambda match: values.get(match.group(1), match.group(0)), template)


def unknown_placeholders(argv: tuple[str, ...] | list[str]) -> list[str]:
    """``{word}`` tokens of ``argv`` that are no placeholder (likely typos)."""
    return sorted({match.group(0) for arg in argv for match in _WORDLIKE.finditer(arg)
                   if match.group(1) not in PLACEHOLDERS})


@dataclass(frozen=True)
class SkillBundle:
    """A skill folder's files as data (what the treatment's copy holds)."""

    name: str
    """The skill folder's name (Agent Skills: the skill's ``name``)."""
    skill_file: str
    """The SKILL.md's path inside the folder, ``/``-separated."""
    files: tuple[tuple[str, bytes, int], ...]
    """``(relative path, bytes, mode)`` of every file copied."""


@dataclass(frozen=True)
class HarnessLaunch:
    """A job's harness preset (``evals/presets.py``): the worker lays out the
    preset's scratch project, builds its argv and parses its output."""

    preset: str
    """A name of :data:`~skill_eval.evals.presets.PRESET_NAMES`."""
    args: tuple[str, ...] = ()
    """The agent's ``args``, placeholders already expanded."""
    executable: str | None = None
    """The harness's program, when not the preset's on ``PATH``."""


@dataclass(frozen=True)
class AgentJob:
    """One start of an agent: everything needed to run it anywhere (picklable)."""

    job_id: str
    """The start id (also the records' ``start_id``)."""
    argv: tuple[str, ...]
    """The command template; placeholders are expanded by :func:`prepare_job`."""
    prompt: bytes
    artifact_name: str
    artifact: bytes
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 600.0
    values: Mapping[str, str] = field(default_factory=dict)
    """Placeholder values known to the driver: ``model``, ``workspace``."""
    skill: SkillBundle | None = None
    """The treatment's skill folder, copied into the scratch folder when the
    command takes ``{skill_dir}`` or ``{skill_file}``, or, for a harness,
    installed in its skill folder (``treatment = "install"``)."""
    max_output: int = DEFAULT_MAX_OUTPUT
    harness: HarnessLaunch | None = None
    """Set for a preset agent: ``argv`` is then unused (the preset builds it),
    the prompt is one argument, stdin is ``/dev/null``."""
    files: tuple[tuple[str, bytes], ...] = ()
    """More input files beside the artifact, ``(relative path, bytes)``: a
    skill-creator eval's ``files`` (:mod:`skill_eval.evals.suites`), laid out
    at those paths in the working folder (the project, for a preset)."""
    sealed: bool = False
    """Run the agent in a bubblewrap sandbox that holds only its scratch
    folder, its installation and the system (:mod:`skill_eval.evals.sandbox`)."""

    @property
    def prompt_on_stdin(self) -> bool:
        """Whether the prompt goes to stdin (the argv does not take ``{prompt_file}``)."""
        return not any("{prompt_file}" in arg for arg in self.argv)


@dataclass
class AgentOutcome:
    """What came of a job. ``status`` is ``ok``, ``error``, ``timeout``,
    ``interrupted`` (the run was cancelled while it ran, or its worker was
    lost) or ``skipped`` (it never started: not a start)."""

    job_id: str
    status: str
    started: str
    ended: str
    duration: float
    exit_code: int | None = None
    stdout: bytes = b""
    stderr_tail: str = ""
    error: str | None = None
    truncated: dict[str, int] = field(default_factory=dict)
    """Per capped stream, the bytes the agent wrote in all."""
    harness: "HarnessOutput | None" = None
    """A preset agent's output, parsed (final answer, usage, the harness's
    own error), when its process ran."""

    @property
    def is_start(self) -> bool:
        return self.status != "skipped"


class StartRefused(Exception):
    """Raised by an ``on_start`` callback: do not start this job (the run is
    being cancelled, or its start could not be recorded)."""


SCRATCH_PREFIX = "skill-eval-run-"
"""The name of an executor's scratch folder, under which its starts' folders are made."""


class ProcessRegistry:
    """The live agents of an executor, so that a cancel can kill them all, its
    :class:`Watchdog` (started with the first agent) and its scratch folder
    (:meth:`scratch_root`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[subprocess.Popen] = set()
        self.cancelled = threading.Event()
        self._watchdog: Watchdog | None = None
        self._roots: dict[str, str] = {}
        self._default_roots: dict[bool, str] = {}
        self.base_env: dict[bytes, bytes] = dict(os.environb) if hasattr(os, "environb") else None
        """The environment agents start from (taken once)."""

    @property
    def token(self) -> str:
        """The ``SKILL_EVAL_RUN`` value of this registry's agents."""
        return self.watchdog.token

    @property
    def watchdog(self) -> Watchdog:
        with self._lock:
            if self._watchdog is None:
                self._watchdog = Watchdog(token=uuid.uuid4().hex)
            return self._watchdog

    def scratch_root(self, base: str | os.PathLike | None = None, harness: bool = False) -> str:
        """This registry's scratch folder under ``base`` (default:
        :func:`default_scratch`, else the system's temporary folder):
        ``skill-eval-run-<random>``, made on first use, the folder every start
        of this registry makes its own folder in. The watchdog learns it before
        it is made and removes it when this process dies (``kill -9``
        included) or the registry closes, so that a killed runner leaves no
        scratch behind. ``harness``: for a preset's start (its default
        location is never ``/dev/shm``: :func:`default_scratch`)."""
        if base is None:
            root = self._default_roots.get(harness)
            if root is not None:
                return root  # one look at the environment and /dev/shm per registry, not per start
            key = default_scratch(harness) or tempfile.gettempdir()
        else:
            key = os.fspath(base)
        root = self._roots.get(key)
        if root is not None:
            return root
        watchdog = self.watchdog
        with self._lock:
            root = self._roots.get(key)
            if root is None:
                root = os.path.join(os.path.abspath(key), SCRATCH_PREFIX + uuid.uuid4().hex[:16])
                watchdog.remove_on_exit(root)
                os.mkdir(root, 0o700)
                self._roots[key] = root
            if base is None:
                self._default_roots[harness] = root
        return root

    def remove_on_exit(self, folder: str) -> None:
        """Have the watchdog remove ``folder`` too when this process dies or the registry closes."""
        self.watchdog.remove_on_exit(folder)

    def keep(self, folder: str) -> None:
        """Undo :meth:`remove_on_exit`."""
        with self._lock:
            watchdog = self._watchdog
        if watchdog is not None:
            watchdog.keep(folder)

    def add(self, process: subprocess.Popen) -> bool:
        """Track ``process``; ``False`` (and the process killed) if cancelled already."""
        watchdog = self.watchdog
        with self._lock:
            if self.cancelled.is_set():
                _kill_group(process.pid)
                return False
            self._live.add(process)
        watchdog.watch(process.pid)
        return True

    def discard(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._live.discard(process)
            watchdog = self._watchdog
        if watchdog is not None:
            watchdog.unwatch(process.pid)

    def cancel(self) -> None:
        """Refuse new processes and kill the process group of every live one."""
        with self._lock:
            self.cancelled.set()
            for process in list(self._live):
                _kill_group(process.pid)

    def close(self) -> None:
        """End the watchdog, which ends what is left of this registry's
        processes and removes its scratch folders."""
        with self._lock:
            watchdog, self._watchdog = self._watchdog, None
            roots, self._roots = list(self._roots.values()), {}
            self._default_roots = {}
        if watchdog is not None:
            watchdog.close()
        for root in roots:  # the watchdog removed it, unless it could not run
            if os.path.lexists(root):
                remove_tree(root)


def _kill_group(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# -- preparing a job ----------------------------------------------------------------


@dataclass
class PreparedJob:
    """A job laid out in its scratch folder: what is spawned, exactly.

    This is the seam where a harness preset may adjust the scratch project
    (e.g. put the skill copy where its CLI discovers skills) before spawning."""

    root: Path
    argv: list[str]
    env: dict[bytes, bytes]
    cwd: Path
    stdin: bytes | None
    preset: str | None = None
    """The harness preset whose output this job prints (parsed after it ran)."""
    made: tuple[str, ...] | None = None
    """What :func:`prepare_job` made in ``root``, files before the folders
    holding them: removed one by one after the agent ended
    (:func:`remove_scratch`) when the agent left nothing else."""


SEALED_DROPPED_VARIABLES = (b"XDG_CONFIG_HOME", b"XDG_DATA_HOME", b"XDG_CACHE_HOME", b"XDG_STATE_HOME",
                            b"XDG_RUNTIME_DIR")
"""Folders of the runner's user that a sealed command agent cannot see: dropped
(``HOME`` is the start's own ``home/``)."""


def _safe_name(name: str) -> str:
    """A file name from data, as one harmless path component."""
    name = name.replace("/", "_").replace("\\", "_").replace("\0", "_")
    return name if name not in ("", ".", "..") else "artifact"


def write_skill_copy(bundle: SkillBundle, folder: Path) -> Path:
    """Materialize ``bundle`` as ``folder/<name>/`` and return that folder."""
    target = folder / _safe_name(bundle.name)
    target.mkdir(parents=True)
    for relative, data, mode in bundle.files:
        parts = [part for part in relative.split("/") if part not in ("", ".", "..")]
        if not parts:
            continue
        path = target.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.chmod(path, mode & 0o755)
    return target


def write_input_files(folder: Path, files: Sequence[tuple[str, bytes]]) -> None:
    """Write ``files`` (``(relative path, bytes)``) below ``folder``, never
    above it: ``..``, ``.`` and empty parts are dropped, and an existing file
    (the artifact) is not overwritten."""
    for relative, data in files:
        parts = [part for part in relative.replace("\\", "/").split("/") if part not in ("", ".", "..")]
        if not parts:
            continue
        path = folder.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "xb") as handle:
            handle.write(data)


def prepare_job(job: AgentJob, root: Path, token: str = "", base_env: Mapping[bytes, bytes] | None = None) -> PreparedJob:
    """Lay ``job`` out in the empty folder ``root`` and expand its command.

    ``base_env`` is the environment to start from, as bytes (default: this
    process's): an executor takes it once, since decoding ``os.environ`` for
    every start slowed each start (docs/performance.md)."""
    if job.harness is not None:
        return _prepare_harness(job, root, token, base_env)
    base = os.fspath(root)
    work, tmp = base + "/work", base + "/tmp"
    artifact = work + "/" + _safe_name(job.artifact_name)
    os.mkdir(work)
    os.mkdir(tmp)
    _write_new(artifact, job.artifact)
    made = [artifact, work, tmp]
    if job.files:
        write_input_files(Path(work), job.files)
        made = None  # folders of files: removed by the walk
    values = dict(job.values)
    values["probe_dir"] = work
    uses = {match.group(1) for arg in job.argv for match in _PLACEHOLDER.finditer(arg)}
    if "prompt_file" in uses:
        os.mkdir(base + "/prompt")
        prompt_file = base + "/prompt/prompt.txt"
        _write_new(prompt_file, job.prompt)
        values["prompt_file"] = prompt_file
        if made is not None:
            made += [prompt_file, base + "/prompt"]
    if job.skill is not None and uses & set(SKILL_PLACEHOLDERS):
        made = None  # a copy of many files: removed by the walk
        skill_dir = write_skill_copy(job.skill, root / "skill")
        values["skill_dir"] = str(skill_dir)
        values["skill_file"] = str(skill_dir.joinpath(*[p for p in job.skill.skill_file.split("/") if p not in ("", ".", "..")]))
    argv = [expand(arg, values) if "{" in arg else arg for arg in job.argv]
    env = dict(base_env) if base_env is not None else {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}
    for name, value in job.env.items():
        env[os.fsencode(name)] = os.fsencode(value)
    env.pop(b"OLDPWD", None)
    env[b"PWD"] = os.fsencode(work)
    tmp_bytes = os.fsencode(tmp)
    env[b"TMPDIR"] = env[b"TMP"] = env[b"TEMP"] = tmp_bytes
    if job.sealed:  # the runner's home is not in the sandbox: a fresh one, as a preset's
        home = base + "/home"
        os.mkdir(home)
        if made is not None:
            made.append(home)
        env[b"HOME"] = os.fsencode(home)
        for name in SEALED_DROPPED_VARIABLES:
            env.pop(name, None)
    env[b"SKILL_EVAL_START_ID"] = os.fsencode(job.job_id)
    if token:
        env[b"SKILL_EVAL_RUN"] = os.fsencode(token)
    return PreparedJob(root, argv, env, Path(work), job.prompt if job.prompt_on_stdin else None,
                       made=tuple(made) if made is not None else None)


def _prepare_harness(job: AgentJob, root: Path, token: str, base_env: Mapping[bytes, bytes] | None) -> PreparedJob:
    """Lay out a preset's scratch project in ``root`` (``project/`` with the
    artifact and, for the treatment, the skill in the harness's skill folder;
    a fresh ``home/`` and ``tmp/``): :func:`skill_eval.evals.presets.prepare_project`.

    The environment is the preset's whole environment (the runner's minus what
    the isolation replaces, the preset's, the agent's ``env``), never merged
    over the runner's again, plus ``SKILL_EVAL_START_ID`` and ``SKILL_EVAL_RUN``."""
    from .presets import prepare_project

    harness = job.harness
    environ = ({os.fsdecode(k): os.fsdecode(v) for k, v in base_env.items()} if base_env is not None
               else dict(os.environ))
    launch = prepare_project(
        harness.preset, root, prompt=job.prompt.decode("utf-8", "surrogateescape"),
        artifact_name=_safe_name(job.artifact_name), artifact=job.artifact, skill=job.skill,
        model=job.values.get("model") or None, args=harness.args, env=dict(job.env), base_env=environ,
        executable=harness.executable)
    if job.files:
        write_input_files(launch.cwd, job.files)
    env = {os.fsencode(k): os.fsencode(v) for k, v in launch.env.items()}
    env[b"SKILL_EVAL_START_ID"] = os.fsencode(job.job_id)
    if token:
        env[b"SKILL_EVAL_RUN"] = os.fsencode(token)
    return PreparedJob(root, list(launch.argv), env, launch.cwd, None, preset=harness.preset)


def _write_new(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)


# -- running a job ------------------------------------------------------------------


class _Stream:
    __slots__ = ("chunks", "kept", "total", "cap")

    def __init__(self, cap: int) -> None:
        self.chunks: list[bytes] = []
        self.kept = 0
        self.total = 0
        self.cap = cap

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.cap - self.kept
        if room > 0:
            piece = data[:room]
            self.chunks.append(piece)
            self.kept += len(piece)

    def value(self) -> bytes:
        return b"".join(self.chunks)


def _communicate(process: subprocess.Popen, stdin: bytes | None, deadline: float, max_output: int,
                 ) -> tuple[bytes, bytes, dict[str, int], bool]:
    """Feed ``stdin``, read both streams (capped) until the agent exits, then
    kill its process group and drain what its pipes still hold. Returns
    ``(stdout, stderr, truncated, timed_out)``."""
    streams = {"stdout": _Stream(max_output), "stderr": _Stream(max_output)}
    selector = selectors.PollSelector() if hasattr(selectors, "PollSelector") else selectors.DefaultSelector()
    pidfd = -1
    try:
        if hasattr(os, "pidfd_open"):
            try:
                pidfd = os.pidfd_open(process.pid)
                selector.register(pidfd, selectors.EVENT_READ, "exit")
            except OSError:
                pidfd = -1
        for name in ("stdout", "stderr"):
            selector.register(getattr(process, name), selectors.EVENT_READ, name)
        view = memoryview(stdin or b"")
        if process.stdin is not None:
            if view:
                os.set_blocking(process.stdin.fileno(), False)
                selector.register(process.stdin, selectors.EVENT_WRITE, "stdin")
            else:
                process.stdin.close()
        exited = timed_out = False
        drain_until = None

        def pipes_open() -> bool:
            return any(key.data != "exit" for key in selector.get_map().values())

        while not exited or pipes_open():
            # an agent may close its pipes before it exits (coreutils do, at exit): wait for the exit itself
            now = time.monotonic()
            if not exited and now >= deadline:
                timed_out = exited = True
                _kill_group(process.pid)
                drain_until = now + REAP_TIMEOUT
            if drain_until is not None and now >= drain_until:
                break  # a process outside the group holds a pipe: stop waiting for it
            limit = (drain_until if exited else deadline) - now
            if pidfd < 0 and not exited:
                limit = min(limit, 0.02)
            for key, _mask in selector.select(max(0.0, limit)):
                if key.data == "exit":
                    selector.unregister(key.fileobj)
                    exited = True
                    _kill_group(process.pid)  # children that outlive the agent
                    drain_until = time.monotonic() + REAP_TIMEOUT
                elif key.data == "stdin":
                    try:
                        written = os.write(key.fd, view[:_CHUNK])
                        view = view[written:]
                    except (BrokenPipeError, OSError):
                        view = view[:0]
                    if not view:
                        selector.unregister(key.fileobj)
                        key.fileobj.close()
                else:
                    data = os.read(key.fd, _CHUNK)
                    if data:
                        streams[key.data].add(data)
                    else:
                        selector.unregister(key.fileobj)
            if pidfd < 0 and not exited and process.poll() is not None:
                exited = True
                _kill_group(process.pid)
                drain_until = time.monotonic() + REAP_TIMEOUT
    finally:
        selector.close()
        if pidfd >= 0:
            os.close(pidfd)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
    truncated = {name: stream.total for name, stream in streams.items() if stream.total > stream.kept}
    return streams["stdout"].value(), streams["stderr"].value(), truncated, timed_out


def execute_job(
    job: AgentJob,
    registry: ProcessRegistry | None = None,
    scratch: Path | None = None,
    on_start: Callable[[], None] | None = None,
) -> AgentOutcome:
    """Run ``job``'s command once and report what happened. Never raises.

    ``on_start`` is called first (see :class:`Executor`); if it raises, the job
    is ``skipped``. ``scratch`` is the folder under which the registry's
    scratch folder (:meth:`ProcessRegistry.scratch_root`), and in it the job's
    own, is made (default: :func:`default_scratch`); the job's folder is
    removed afterwards.
    """
    own_registry = registry is None
    registry = registry or ProcessRegistry()
    started, clock = now_iso(), time.monotonic()

    def outcome(status: str, **values) -> AgentOutcome:
        return AgentOutcome(job.job_id, status, started, now_iso(), round(time.monotonic() - clock, 4), **values)

    if registry.cancelled.is_set():
        return outcome("skipped", error="cancelled before it started")
    if on_start is not None:
        try:
            on_start()
        except StartRefused as refused:
            return outcome("skipped", error=f"not started: {refused}")
        except Exception as error:  # noqa: BLE001 - not recorded, so not started
            return outcome("skipped", error=f"not started: the start could not be recorded ({error})")
        started, clock = now_iso(), time.monotonic()
    root = prepared = None
    try:
        scratch_root = registry.scratch_root(scratch, harness=job.harness is not None)
        root = Path(_start_folder(scratch_root, job.job_id))
        prepared = prepare_job(job, root, registry.token, registry.base_env)
        argv = prepared.argv
        if job.sealed:
            try:
                argv = sealed_argv(job, prepared, hidden=(job.values.get("workspace", ""), scratch_root))
            except SandboxError as error:
                return outcome("error", error=str(error))
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if prepared.stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=os.fspath(prepared.cwd),
                env=prepared.env,
                start_new_session=True,
            )
        except OSError as error:
            return outcome("error", error=f"cannot start {prepared.argv[0]!r}: {error.strerror or error}")
        if not registry.add(process):
            process.wait()
            return outcome("interrupted", error="interrupted: the run was cancelled as the agent started")
        try:
            stdout, stderr, truncated, timed_out = _communicate(
                process, prepared.stdin, clock + job.timeout, job.max_output)
            try:
                returncode = process.wait(timeout=REAP_TIMEOUT)
            except subprocess.TimeoutExpired:
                _kill_group(process.pid)
                returncode = process.wait()
        finally:
            registry.discard(process)
        values = dict(exit_code=returncode, stdout=stdout, stderr_tail=_tail(stderr), truncated=truncated)
        said = ""
        if prepared.preset is not None:
            from .presets import parse_output

            parsed = values["harness"] = parse_output(prepared.preset, stdout, stderr)
            said = f": {parsed.error}" if parsed.error else ""
        if timed_out:
            return outcome("timeout", error=f"no answer within {job.timeout:g} s; killed", **values)
        if registry.cancelled.is_set() and returncode is not None and returncode < 0:
            return outcome("interrupted", error="interrupted: the run was cancelled while the agent ran", **values)
        if returncode != 0:
            return outcome("error", error=f"the agent exited with status {returncode}{said}", **values)
        if prepared.preset is not None and values["harness"].answer is None:
            return outcome("error", error=f"{prepared.preset} gave no answer{said}", **values)
        return outcome("ok", **values)
    except Exception as error:  # noqa: BLE001 - an outcome, never a crash of the worker
        return outcome("error", error=f"runner error: {type(error).__name__}: {error}")
    finally:
        if root is not None:
            remove_scratch(str(root), prepared.made if prepared is not None else None)
        if own_registry:
            registry.close()


def _start_folder(scratch_root: str, job_id: str) -> str:
    """A new folder for one start in ``scratch_root``: ``start-<job id>`` (one
    ``mkdir``; the id is a fresh random hex), else a ``mkdtemp`` name."""
    name = _safe_name(job_id)
    if len(name) <= 64 and name.isalnum():
        try:
            path = f"{scratch_root}/start-{name}"
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            pass
    return tempfile.mkdtemp(prefix="start-", dir=scratch_root)


def remove_scratch(root: str, made: Sequence[str] | None) -> None:
    """Remove a start's folder: when ``made`` lists what was put in it, those
    entries one by one, then the folder (5 system calls, against ~15 for the
    walk); if the agent left anything else (a folder is not empty), or
    ``made`` is ``None``, :func:`remove_tree` walks it."""
    if made is not None:
        try:
            for path in made:
                if path.endswith(("/work", "/tmp", "/prompt", "/home")):
                    os.rmdir(path)
                else:
                    os.unlink(path)
            os.rmdir(root)
            return
        except OSError:
            pass
    remove_tree(root)


def default_scratch(harness: bool = False) -> str | None:
    """Where scratch folders are made: ``$SKILL_EVAL_SCRATCH`` if set, else
    ``/dev/shm`` when it is a writable folder (memory-backed: making and
    removing a scratch folder there is much faster than on the reference
    machine's disk: docs/performance.md), else the system's temporary folder
    (``None``).

    A harness preset's start (``harness``) never defaults to ``/dev/shm``:
    a harness that sandboxes its own tools mounts a fresh ``/dev`` for them
    (Codex's shell does), and would not see its project, nor the skill
    installed in it; its default is the system's temporary folder."""
    chosen = os.environ.get("SKILL_EVAL_SCRATCH")
    if chosen:
        return chosen
    if harness:
        return None
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK):
        return "/dev/shm"
    return None


def remove_tree(path: str) -> None:
    """Remove a scratch folder: links are removed, never followed
    (``shutil.rmtree``'s descriptor-based walk was slower: docs/performance.md)."""
    try:
        entries = list(os.scandir(path))
    except NotADirectoryError:
        os.unlink(path)
        return
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                remove_tree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            pass
    try:
        os.rmdir(path)
    except OSError:
        shutil.rmtree(path, ignore_errors=True)


def _tail(data: bytes | None) -> str:
    return (data or b"")[-STDERR_TAIL:].decode("utf-8", errors="replace")


class Executor(Protocol):
    """Where jobs run. The runner calls only these three methods.

    ``submit(job, on_start)`` returns a future resolving to an
    :class:`AgentOutcome`. The contract, which is what keeps every start on
    record:

    1. Call ``on_start()`` exactly once per job, before the agent's process
       can start (locally: in the worker, just before spawning; on a cluster:
       on the driver, just before handing the task over). It blocks until the
       start record is on disk. If it raises (:class:`StartRefused`: the run
       is being cancelled, or the record could not be written), do not start
       the job and resolve it as ``skipped``.
    2. Once ``on_start`` has returned, the job is a start: resolve it with
       ``ok``, ``error``, ``timeout`` or ``interrupted`` — never ``skipped``.
       A lost or cancelled task (a dead worker, a cancelled remote task)
       resolves as ``interrupted``, or raises: the runner records an
       exception after ``on_start`` as an interrupted start.
    3. ``cancel()`` kills running agents (their outcomes come back
       ``interrupted``) and resolves jobs that have not called ``on_start``
       yet as ``skipped``. ``shutdown()`` releases workers (and ends any agent
       still alive).

    Never retry a job on your own: a retry is a new start and needs its own
    record (the runner plans it).
    """

    def submit(self, job: AgentJob, on_start: Callable[[], None]) -> "Future[AgentOutcome]": ...

    def cancel(self) -> None: ...

    def shutdown(self, wait: bool = True) -> None: ...


class LocalExecutor:
    """Jobs as subprocesses of this machine, ``jobs`` at a time (a thread pool)."""

    def __init__(self, jobs: int = 4, scratch: Path | None = None) -> None:
        self.registry = ProcessRegistry()
        self.scratch = scratch
        self._pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="skill-eval-agent")

    def submit(self, job: AgentJob, on_start: Callable[[], None] | None = None) -> "Future[AgentOutcome]":
        return self._pool.submit(execute_job, job, self.registry, self.scratch, on_start)

    def cancel(self) -> None:
        self.registry.cancel()

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=not wait)
        self.registry.close()
