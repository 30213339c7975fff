"""Judge graders: a defect graded by a command that reads the answer.

A defect's ``caught_when`` compares answer fields with expectations. Some acts
are not a field's value ("names the criterion that lacks proof, in its own
words"): such a defect may name a **judge**, a command of the author's that
reads the answer and says whether it caught the defect (docs/format.md,
"Judges")::

    "judge": {"command": ["python3", "../../judges/names_criterion.py"],
              "timeout": 60, "rubric": "Names criterion 3 as unproven"}

- ``command`` is an argv, never a shell. It runs in the probe's folder; a
  program given as a relative path with a slash is taken relative to that
  folder, a bare name is looked up on ``PATH``; ``{workspace}`` in any argument
  is the workspace root. The environment is the runner's.
- Standard input is one JSON object (:func:`judge_input`): the probe (``id``,
  ``version``, ``step_heading``), the ``defect`` as probe.json has it (its
  ``judge`` with the ``rubric`` included), the ``artifact``'s text, the whole
  ``answer`` and the ``fields`` read from it.
- Standard output is one JSON object, ``{"caught": true|false, "reason":
  "..."}`` (``reason`` optional). Exit status 0.
- Anything else — a timeout (``timeout`` seconds, default
  :data:`DEFAULT_TIMEOUT`), another exit status, output that is not such an
  object, a program that cannot start — is a :class:`JudgeError`: a grading
  error, never a crash and never a "missed".

With ``caught_when`` fields too, the defect is caught when the fields hold and
the judge says caught; the judge is not asked when a field already fails.

The judge runs in its own process group (killed whole at the timeout), with
its output capped at :data:`MAX_JUDGE_OUTPUT` bytes per stream. Like an
agent, it is watched (:func:`judge_registry`): when the process running it
dies (a runner killed with ``kill -9`` while grading), a watchdog kills the
judge's process group and every process carrying its ``SKILL_EVAL_RUN``
token at once, instead of leaving it to its own timeout. ``skill-eval
check`` runs judges on the known transcripts exactly as live answers are
graded, so a judge that disagrees with a transcript blocks the run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from .timeouts import TIMEOUT_RULE, is_timeout

if TYPE_CHECKING:
    from .executor import ProcessRegistry

DEFAULT_TIMEOUT = 60.0
"""Seconds a judge may take, unless its ``timeout`` says otherwise."""
MAX_JUDGE_OUTPUT = 1 << 20
"""Bytes of a judge's stdout (and of its stderr) read."""
INPUT_SCHEMA = 1
"""The ``schema`` of the JSON a judge reads (bumped on incompatible changes)."""


class JudgeError(Exception):
    """A judge that gave no verdict; the message says which and why."""


@dataclass(frozen=True)
class JudgeSpec:
    """A defect's ``judge``, as probe.json gives it."""

    command: tuple[str, ...]
    timeout: float = DEFAULT_TIMEOUT

    @property
    def name(self) -> str:
        """The command as probe.json writes it, for messages."""
        return " ".join(self.command)


def judge_spec(defect: Mapping[str, Any]) -> JudgeSpec | None:
    """The defect's judge, ``None`` when it has none; :class:`JudgeError` for a
    ``judge`` that is not an object with a non-empty ``command`` of strings and
    a positive ``timeout`` (the schema says the same: SE002)."""
    judge = defect.get("judge")
    if judge is None:
        return None
    command = judge.get("command") if isinstance(judge, dict) else None
    if not isinstance(command, list) or not command or not all(isinstance(a, str) and a for a in command):
        raise JudgeError("`judge.command` must be a non-empty list of strings (argv, no shell)")
    timeout = judge.get("timeout", DEFAULT_TIMEOUT)
    if not is_timeout(timeout):
        raise JudgeError(f"`judge.timeout` {TIMEOUT_RULE}")
    return JudgeSpec(tuple(command), float(timeout))


def has_judge(defect: Mapping[str, Any]) -> bool:
    return defect.get("judge") is not None


def resolve_command(spec: JudgeSpec, probe_folder: Path, workspace: Path | None) -> list[str]:
    """The argv to run: ``{workspace}`` expanded, the program found
    (:class:`JudgeError` naming the fix when it is not)."""
    argv = [arg.replace("{workspace}", str(workspace)) if workspace is not None else arg for arg in spec.command]
    program = argv[0]
    if "/" in program:
        path = Path(program) if os.path.isabs(program) else probe_folder / program
        if not path.is_file():
            raise JudgeError(f"the judge's program {str(path)!r} does not exist (a relative path is taken from the "
                             "probe's folder); fix `judge.command`")
        if not os.access(path, os.X_OK):
            raise JudgeError(f"the judge's program {str(path)!r} is not executable; chmod +x it or run it with an "
                             "interpreter, e.g. [\"python3\", \"judge.py\"]")
        argv[0] = str(path.absolute())
    elif shutil.which(program) is None:
        raise JudgeError(f"the judge's program {program!r} was not found on PATH; install it or fix `judge.command`")
    return argv


def judge_input(probe: Any, defect: Mapping[str, Any], text: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON a judge reads: see the module docstring."""
    try:
        step_heading = json.loads(probe.probe_bytes).get("step_heading")
    except (ValueError, AttributeError):
        step_heading = None
    return {
        "schema": INPUT_SCHEMA,
        "probe": {"id": probe.probe_id, "version": probe.version, "step_heading": step_heading},
        "defect": dict(defect),
        "artifact": probe.artifact_bytes.decode("utf-8", errors="replace"),
        "answer": text,
        "fields": {name: (list(value.items) if value.is_list else value.text) for name, value in fields.items()},
    }


_registry: "ProcessRegistry | None" = None
_registry_lock = threading.Lock()


def judge_registry() -> "ProcessRegistry":
    """The :class:`~skill_eval.evals.executor.ProcessRegistry` judges run
    under in this process, made on first use and kept for the process's life:
    its watchdog ends every judge still running when this process dies (its
    pipe's end of file), as an executor's watchdog ends agents. Never
    cancelled: a run's Ctrl-C lets a judge grading a finished answer finish."""
    global _registry
    with _registry_lock:
        if _registry is None:
            from .executor import ProcessRegistry

            _registry = ProcessRegistry()
        return _registry


def run_judge(argv: list[str], payload: Mapping[str, Any], *, cwd: Path, timeout: float,
              env: Mapping[str, str] | None = None, name: str | None = None,
              registry: "ProcessRegistry | None" = None) -> tuple[bool, str]:
    """Run one judge on ``payload``: ``(caught, reason)``, or :class:`JudgeError`
    (whose message names the judge by ``name``, default its argv). The judge
    runs in its own process group, watched by ``registry`` (default:
    :func:`judge_registry`), with ``SKILL_EVAL_RUN`` set to its token."""
    from .executor import _communicate, _kill_group, _tail

    name = name or " ".join(argv)
    name = name if len(name) <= 120 else name[:117] + "..."
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    registry = registry or judge_registry()
    environment = dict(os.environ if env is None else env)
    environment["SKILL_EVAL_RUN"] = registry.token
    try:
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   cwd=os.fspath(cwd), env=environment, start_new_session=True)
    except OSError as error:
        raise JudgeError(f"the judge `{name}` cannot start: {error.strerror or error}") from None
    registry.add(process)
    try:
        stdout, stderr, truncated, timed_out = _communicate(process, data, time.monotonic() + timeout, MAX_JUDGE_OUTPUT)
    finally:
        _kill_group(process.pid)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        registry.discard(process)
    said = _tail(stderr).strip()
    said = f" (stderr: {said[-300:]})" if said else ""
    if timed_out:
        raise JudgeError(f"the judge `{name}` gave no verdict within {timeout:g} s; killed")
    if process.returncode != 0:
        raise JudgeError(f"the judge `{name}` exited with status {process.returncode}{said}")
    if truncated:
        raise JudgeError(f"the judge `{name}` printed over {MAX_JUDGE_OUTPUT} bytes; a verdict is one JSON object")
    text = stdout.decode("utf-8", errors="replace").strip()
    try:
        verdict = json.loads(text)
    except ValueError:
        verdict = None
    if not isinstance(verdict, dict) or not isinstance(verdict.get("caught"), bool):
        shown = text[:200] + ("..." if len(text) > 200 else "")
        raise JudgeError(f"the judge `{name}` printed {shown!r}, not a verdict: print one JSON object such as "
                         f"{{\"caught\": true, \"reason\": \"...\"}}{said}")
    reason = verdict.get("reason")
    return verdict["caught"], reason if isinstance(reason, str) else ""


class ProbeJudge:
    """The judge caller grading uses for one probe (see
    :func:`skill_eval.evals.grading.grade_answer`'s ``judge``)."""

    def __init__(self, probe: Any, workspace: Path | None = None, env: Mapping[str, str] | None = None) -> None:
        self.probe = probe
        self.workspace = workspace
        self.env = env

    def __call__(self, defect: Mapping[str, Any], text: str, fields: Mapping[str, Any]) -> tuple[bool, str]:
        spec = judge_spec(defect)
        if spec is None:
            raise JudgeError("the defect has no judge")
        argv = resolve_command(spec, self.probe.folder, self.workspace)
        return run_judge(argv, judge_input(self.probe, defect, text, fields), cwd=self.probe.folder,
                         timeout=spec.timeout, env=self.env, name=spec.name)


def judge_problems(probe: Any, workspace: Path | None = None) -> list[str]:
    """What keeps the probe's judges from running, one line each (checked
    before any start is spent)."""
    problems = []
    for defect in probe.defects:
        try:
            spec = judge_spec(defect)
            if spec is not None:
                resolve_command(spec, probe.folder, workspace)
        except JudgeError as error:
            problems.append(f"{probe.json_path}: defect {defect.get('id')}: {error}")
    return problems
