"""Running agent commands: the job, its outcome, and the executors that run jobs.

The runner never starts a process itself. It turns each planned start into an
:class:`AgentJob` — plain, picklable data: argv template, prompt bytes,
artifact bytes, environment, timeout — and hands it to an :class:`Executor`.
:func:`execute_job` is the one function that turns a job into an
:class:`AgentOutcome`; any executor (the local thread pool here, a Ray or
Kubernetes executor elsewhere, see docs/distributed.md) only decides *where*
it is called. Grading and recording stay with the runner, in one process.

A job runs in an empty scratch folder (its working directory). When its argv
takes ``{prompt_file}`` or ``{probe_dir}``, the folder holds ``prompt.txt`` and
a copy of the artifact under its own file name: ``{probe_dir}`` is that folder
(never the real probe folder, whose probe.json holds the quotes),
``{prompt_file}`` the prompt in it. The command is an argv list run without a shell, in its own
process group, so a timeout or a cancel kills the agent and everything it
started.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Protocol

PLACEHOLDERS = ("{prompt_file}", "{skill_dir}", "{skill_file}", "{probe_dir}", "{model}", "{workspace}")
"""``{workspace}`` is the workspace root, for agent scripts kept in the repository."""
REAP_TIMEOUT = 5.0
"""Seconds to wait for a killed process group's pipes to close."""
STDERR_TAIL = 2000


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class AgentJob:
    """One start of an agent: everything needed to run it anywhere."""

    job_id: str
    argv: tuple[str, ...]
    """The command with ``{skill_dir}``/``{skill_file}``/``{model}`` already
    substituted; ``{prompt_file}`` and ``{probe_dir}`` are filled in by
    :func:`execute_job` once the scratch folder exists."""
    prompt: bytes
    artifact_name: str
    artifact: bytes
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 600.0

    @property
    def prompt_on_stdin(self) -> bool:
        """Whether the prompt goes to stdin (the argv does not take ``{prompt_file}``)."""
        return not any("{prompt_file}" in arg for arg in self.argv)


@dataclass
class AgentOutcome:
    """What came of a job. ``status`` is ``ok``, ``error``, ``timeout`` or
    ``skipped`` (cancelled before its process started: not a start)."""

    job_id: str
    status: str
    started: str
    ended: str
    duration: float
    exit_code: int | None = None
    stdout: bytes = b""
    stderr_tail: str = ""
    error: str | None = None

    @property
    def is_start(self) -> bool:
        return self.status != "skipped"


class ProcessRegistry:
    """The live processes of an executor, so that a cancel can kill them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[subprocess.Popen] = set()
        self.cancelled = threading.Event()

    def add(self, process: subprocess.Popen) -> bool:
        """Track ``process``; ``False`` (and the process killed) if cancelled already."""
        with self._lock:
            if self.cancelled.is_set():
                _kill_group(process)
                return False
            self._live.add(process)
            return True

    def discard(self, process: subprocess.Popen) -> None:
        with self._lock:
            self._live.discard(process)

    def cancel(self) -> None:
        """Refuse new processes and kill the process group of every live one."""
        with self._lock:
            self.cancelled.set()
            for process in list(self._live):
                _kill_group(process)


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            process.kill()
        except ProcessLookupError:
            pass


def _fill(arg: str, scratch: Path, prompt_file: Path) -> str:
    return arg.replace("{prompt_file}", str(prompt_file)).replace("{probe_dir}", str(scratch))


def _clear(folder: Path) -> None:
    """Empty ``folder`` (what an earlier agent left must not reach the next)."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                try:
                    os.unlink(entry.path)
                except FileNotFoundError:
                    pass


def execute_job(job: AgentJob, registry: ProcessRegistry | None = None, scratch: Path | None = None) -> AgentOutcome:
    """Run ``job``'s command once and report what happened. Never raises.

    ``scratch`` is a folder this call may use (and empties first); without one
    a temporary folder is made and removed.
    """
    registry = registry or ProcessRegistry()
    started, clock = now_iso(), time.monotonic()

    def outcome(status: str, **values) -> AgentOutcome:
        return AgentOutcome(job.job_id, status, started, now_iso(), round(time.monotonic() - clock, 4), **values)

    if registry.cancelled.is_set():
        return outcome("skipped", error="cancelled before it started")
    own_scratch = scratch is None
    try:
        if own_scratch:
            scratch = Path(tempfile.mkdtemp(prefix="skill-eval-"))
        else:
            _clear(scratch)
        prompt_file = scratch / "prompt.txt"
        uses_files = any("{prompt_file}" in arg or "{probe_dir}" in arg for arg in job.argv)
        if uses_files:
            prompt_file.write_bytes(job.prompt)
            (scratch / job.artifact_name).write_bytes(job.artifact)
        argv = [_fill(arg, scratch, prompt_file) for arg in job.argv]
        env = dict(os.environ)
        env.update(job.env)
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if job.prompt_on_stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=scratch,
                env=env,
                start_new_session=True,
            )
        except OSError as error:
            return outcome("error", error=f"cannot start {argv[0]!r}: {error.strerror or error}")
        if not registry.add(process):
            _reap(process)
            return outcome("error", error="interrupted: the run was cancelled as the agent started")
        try:
            try:
                stdout, stderr = process.communicate(job.prompt if job.prompt_on_stdin else None, timeout=job.timeout)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                stdout, stderr = _reap(process)
                return outcome("timeout", exit_code=process.returncode, stdout=stdout,
                               stderr_tail=_tail(stderr), error=f"no answer within {job.timeout:g} s; killed")
        finally:
            registry.discard(process)
        if registry.cancelled.is_set() and process.returncode is not None and process.returncode < 0:
            return outcome("error", exit_code=process.returncode, stdout=stdout, stderr_tail=_tail(stderr),
                           error="interrupted: the run was cancelled while the agent ran")
        if process.returncode != 0:
            return outcome("error", exit_code=process.returncode, stdout=stdout, stderr_tail=_tail(stderr),
                           error=f"the agent exited with status {process.returncode}")
        return outcome("ok", exit_code=0, stdout=stdout, stderr_tail=_tail(stderr))
    except Exception as error:  # noqa: BLE001 - an outcome, never a crash of the worker
        return outcome("error", error=f"runner error: {type(error).__name__}: {error}")
    finally:
        if own_scratch and scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _reap(process: subprocess.Popen) -> tuple[bytes, bytes]:
    """Collect a killed process's output; give up on its pipes after a while."""
    try:
        return process.communicate(timeout=REAP_TIMEOUT)
    except subprocess.TimeoutExpired:
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            process.wait(timeout=REAP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        return b"", b""
    except ValueError:  # pipes already closed
        return b"", b""


def _tail(data: bytes | None) -> str:
    return (data or b"")[-STDERR_TAIL:].decode("utf-8", errors="replace")


class Executor(Protocol):
    """Where jobs run. The runner calls only these three methods.

    ``submit`` returns a future resolving to an :class:`AgentOutcome` (it never
    fails: errors are outcomes). ``cancel`` kills running jobs — their outcomes
    come back as interrupted errors, and they count as starts — and resolves
    jobs that have not started as ``skipped``. ``shutdown`` releases workers.
    """

    def submit(self, job: AgentJob) -> "Future[AgentOutcome]": ...

    def cancel(self) -> None: ...

    def shutdown(self, wait: bool = True) -> None: ...


class LocalExecutor:
    """Jobs as subprocesses of this machine, ``jobs`` at a time (a thread pool).

    Each worker thread keeps one scratch folder for its whole life, emptied
    before every job (making and removing a folder per start costs more than
    the start itself on a busy disk); :meth:`shutdown` removes them.
    """

    def __init__(self, jobs: int = 4) -> None:
        self.registry = ProcessRegistry()
        self._pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="skill-eval-agent")
        self._local = threading.local()
        self._scratches: list[Path] = []
        self._lock = threading.Lock()

    def _scratch(self) -> Path:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = Path(tempfile.mkdtemp(prefix="skill-eval-"))
            with self._lock:
                self._scratches.append(scratch)
        return scratch

    def _execute(self, job: AgentJob) -> AgentOutcome:
        try:
            scratch = self._scratch()
        except OSError:
            scratch = None  # execute_job makes its own, and reports if it cannot
        return execute_job(job, self.registry, scratch)

    def submit(self, job: AgentJob) -> "Future[AgentOutcome]":
        return self._pool.submit(self._execute, job)

    def cancel(self) -> None:
        self.registry.cancel()

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=not wait)
        with self._lock:
            scratches, self._scratches = self._scratches, []
        for scratch in scratches:
            shutil.rmtree(scratch, ignore_errors=True)
