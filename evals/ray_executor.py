"""Agents on a Ray cluster: ``skill-eval run --executor ray[=ADDRESS]``.

:class:`RayExecutor` is an :class:`~skill_eval.evals.executor.Executor`: the
runner plans, reserves (under the workspace's run lock), grades and records
exactly as with the local executor; only where the agent runs changes. Each
job becomes one Ray task that calls :func:`run_on_worker`, which is
:func:`~skill_eval.evals.executor.execute_job` on the worker (its scratch
folder, the isolated arm, the output caps, the agent's own process group and
a watchdog that ends the agent if the worker dies).

The executor's contract (docs/distributed.md), as kept here:

- ``on_start`` runs on the driver, in this executor's dispatch thread, just
  before the task is handed to Ray; a job whose ``on_start`` refuses is
  resolved ``skipped`` and never reaches the cluster.
- At most ``slots`` tasks are in flight (default: the cluster's CPUs), so a
  start on record is a task the cluster can run now, not one waiting in a
  queue (a driver killed with queued tasks would leave them as interrupted
  starts that never ran an agent).
- A task that comes back with an error instead of an outcome — its worker
  killed, its node lost, ``ray.cancel``, the driver's Ctrl-C — resolves
  ``interrupted`` (a counted start the plain command resumes), never
  ``skipped``. Tasks are never retried by Ray (``max_retries=0``): a retry
  would run the agent again under one record.
- :meth:`RayExecutor.cancel` cancels every task in flight (``force=True``:
  its worker is killed, and the worker's watchdog kills the agent) and
  resolves queued jobs ``skipped``.

Without an ADDRESS the executor starts a Ray of its own for this run, on
loopback only (node address 127.0.0.1 in Ray's single-machine mode, no
dashboard, no usage statistics, so nothing listens beyond 127.0.0.1 and
nothing reports to anyone), and stops it when the run ends; a
:class:`~skill_eval.evals.watchdog.Watchdog` (the guard) kills that Ray's
processes if the driver is killed. With an ADDRESS (``HOST:PORT`` of a cluster's head, or ``auto``) it connects to that
cluster and leaves it running.

Before any start is reserved (:meth:`RayExecutor.connect`,
:meth:`RayExecutor.check_worker`): the head must answer at ADDRESS (Ray
itself would retry for minutes), and one task on the cluster must import this
module and find the agent's executable; otherwise the run exits 2 and
nothing is recorded, since a cluster that cannot run the agent would turn
every start into a lost task.

Ray is an optional dependency (``pip install 'skill-eval[ray]'``); this module
imports it only when an executor connects.
"""

from __future__ import annotations

import collections
import logging
import os
import signal
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable

from .executor import (
    AgentJob, AgentOutcome, ProcessRegistry, StartRefused, default_scratch, execute_job, now_iso, remove_tree,
)
from .watchdog import Watchdog, start_time

INSTALL_LINE = "pip install 'skill-eval[ray]'"
"""What to run when Ray is missing."""
LOOPBACK = "127.0.0.1"
REACH_TIMEOUT = 10.0
"""Seconds to wait for the cluster's head to accept a connection."""
POLL_SECONDS = 0.1
"""How long the dispatch thread waits for a task before looking for new jobs."""
QUIET_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_USAGE_STATS_PROMPT_ENABLED": "0",
}
"""Environment set (unless the user set it) before Ray starts: no usage
statistics are collected or sent, and no prompt asks about them."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost")
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
"""Environment set before Ray is imported when it runs on, or connects to,
loopback. Ray turns a loopback node address (``_node_ip_address="127.0.0.1"``,
``ray.init("127.0.0.1:PORT")``) into "this machine's reachable address",
which it finds by routing towards a public resolver (8.8.8.8): on a machine
with a network, the node would listen on its LAN address and on every
interface. In single-machine mode (this variable, Ray's own switch for
laptops) the node address stays 127.0.0.1 and nothing is routed anywhere."""
LOCAL_ENV = {"RAY_AUTH_MODE": "token"}
"""Environment set (unless the user set it) before starting a Ray of our own:
token authentication, Ray's default for a new local cluster (its token in
``~/.ray/auth_token``), without the warning Ray prints when it chooses so."""


class RayExecutorError(Exception):
    """Ray is missing, the option is malformed, or the cluster cannot be reached
    (one line naming the fix)."""


def parse_executor(text: str) -> tuple[str, str | None]:
    """``--executor``'s value as ``(kind, address)``: ``local``, ``ray`` or
    ``ray=ADDRESS``."""
    kind, sep, address = text.partition("=")
    kind = kind.strip().lower()
    if kind == "local" and not sep:
        return "local", None
    if kind == "ray":
        address = address.strip()
        if sep and not address:
            raise RayExecutorError("--executor ray= needs an address (HOST:PORT of the cluster's head, or auto); "
                                   "or use --executor ray to start a Ray on this machine for the run")
        return "ray", address or None
    raise RayExecutorError(f"--executor {text!r}: use local, ray (a Ray started for this run on 127.0.0.1) or "
                           "ray=HOST:PORT (an existing Ray cluster)")


def check_reachable(address: str, timeout: float = REACH_TIMEOUT) -> None:
    """:class:`RayExecutorError` when nothing accepts a connection at
    ``HOST:PORT`` (``ray://HOST:PORT`` too): Ray itself retries an unreachable
    head for minutes. Other forms (``auto``) are left to Ray."""
    import socket

    text = address.split("://", 1)[-1]
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as error:
        raise RayExecutorError(f"--executor ray={address}: nothing answers there ({error.strerror or error}); start "
                               "the cluster (`ray start --head`) or give its head's HOST:PORT") from None


def ray_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def require_ray() -> None:
    """:class:`RayExecutorError` naming the install line when Ray is not installed."""
    if not ray_available():
        raise RayExecutorError(f"--executor ray needs Ray, which is not installed; install it with {INSTALL_LINE}")


# -- on the worker ----------------------------------------------------------------------

_worker_registry: ProcessRegistry | None = None
_worker_scratch: tuple[str, int] | None = None
SCRATCH_PREFIX = "skill-eval-ray-"


def worker_scratch(registry: ProcessRegistry | None = None) -> str:
    """This worker's folder for scratch folders, locked (``flock``) for the
    worker's life; folders of workers that are gone are removed first.

    A worker killed mid-start (``ray.cancel(force=True)``, the driver's
    Ctrl-C, a lost node) cannot remove its start's scratch folder. Its
    watchdog (``registry``'s, told of the folder before it is made) removes
    the worker's folder once it has ended the agent; should the watchdog be
    gone too, the next worker on the machine does, once the folder's lock
    shows its owner is dead (a lock, not a pid, so workers in other pid
    namespaces sharing the folder are safe)."""
    import fcntl
    import tempfile
    import uuid

    global _worker_scratch
    if _worker_scratch is not None:
        return _worker_scratch[0]
    base = os.path.abspath(default_scratch() or tempfile.gettempdir())
    try:
        entries = list(os.scandir(base))
    except OSError:
        entries = []
    for entry in entries:
        if not entry.name.startswith(SCRATCH_PREFIX) or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)  # a live worker's
            continue
        remove_tree(entry.path)
        os.close(fd)
    # made under another name and locked before it gets the name sweepers look for; the
    # watchdog knows both names before either exists
    name = SCRATCH_PREFIX + uuid.uuid4().hex[:16]
    fresh, folder = os.path.join(base, "." + name), os.path.join(base, name)
    if registry is not None:
        registry.remove_on_exit(fresh)
        registry.remove_on_exit(folder)
    os.mkdir(fresh, 0o700)
    fd = os.open(fresh, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(fresh, folder)
    _worker_scratch = (folder, fd)
    return folder


def run_on_worker(job: AgentJob) -> AgentOutcome:
    """The Ray task: :func:`execute_job` on the worker.

    The worker keeps one :class:`ProcessRegistry` (and so one watchdog, which
    kills the agent if the worker process dies, ``ray.cancel(force=True)``
    and a lost node included). When the task is interrupted inside the worker
    (``ray.cancel`` without force raises ``KeyboardInterrupt`` in it), that
    registry is cancelled and closed, which kills the agent's process group
    and every process carrying its token, before the interruption goes on to
    Ray; the next task gets a new registry. The registry's watchdog removes
    the worker's scratch folder when the worker dies (:func:`worker_scratch`)."""
    global _worker_registry
    registry = _worker_registry
    if registry is None or registry.cancelled.is_set():
        registry = _worker_registry = ProcessRegistry()
        if _worker_scratch is not None:
            registry.remove_on_exit(_worker_scratch[0])
    folder = worker_scratch(registry)
    # a preset's project never under /dev/shm (default_scratch): its folder is the registry's own, in the
    # temporary folder, which the registry's watchdog removes when the worker dies
    scratch = Path(folder) if job.harness is None or default_scratch(harness=True) else None
    try:
        return execute_job(job, registry, scratch)
    except BaseException:
        _worker_registry = None
        registry.keep(folder)  # the worker lives on, and keeps its folder for the next registry
        registry.cancel()
        registry.close()
        raise


def worker_check(executable: str, env: dict[str, str]) -> dict[str, Any]:
    """A Ray task run once before any start is reserved: the worker can run
    skill-eval's task (this module imports there) and finds the agent's
    executable (as :func:`execute_job` will: the agent's ``env`` over the
    worker's, ``PATH`` included)."""
    import shutil
    import socket
    import sys

    if os.sep in executable:
        found = executable if os.path.isfile(executable) and os.access(executable, os.X_OK) else None
    else:
        found = shutil.which(executable, path=env.get("PATH", os.environ.get("PATH", os.defpath)))
    return {"found": found, "host": socket.gethostname(), "python": sys.version.split()[0]}


# -- guarding a Ray of our own ----------------------------------------------------------


def descendants(root: int) -> dict[int, bytes]:
    """The processes below ``root`` (children, their children...), each with its start time."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                parent = int(handle.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(name))
    found: dict[int, bytes] = {}
    pending = list(children.get(root, []))
    while pending:
        pid = pending.pop()
        start = start_time(pid)
        if start is not None and pid not in found:
            found[pid] = start
            pending.extend(children.get(pid, []))
    return found


# -- on the driver ------------------------------------------------------------------------


class _Pending:
    __slots__ = ("job", "on_start", "future", "started", "clock")

    def __init__(self, job: AgentJob, on_start: Callable[[], None] | None, future: Future) -> None:
        self.job = job
        self.on_start = on_start
        self.future = future
        self.started = ""
        self.clock = 0.0

    def resolve(self, status: str, error: str | None = None) -> None:
        stamp = now_iso()
        duration = round(time.monotonic() - self.clock, 4) if self.clock else 0.0
        self.future.set_result(AgentOutcome(self.job.job_id, status, self.started or stamp, stamp, duration,
                                            error=error))


class RayExecutor:
    """Jobs as Ray tasks, at most ``slots`` in flight (default: the cluster's CPUs).

    ``address`` ``None`` starts a Ray of its own on 127.0.0.1 for the run
    (``num_cpus``: its CPUs, default Ray's count of this machine's), which
    :meth:`shutdown` stops; otherwise the driver connects to that cluster
    (``HOST:PORT``, ``auto``). :meth:`connect` is separate so that a
    cluster that cannot be reached fails before any start is reserved."""

    def __init__(self, address: str | None = None, *, slots: int | None = None, num_cpus: int | None = None) -> None:
        self.address = address
        self.slots = slots
        self.num_cpus = num_cpus
        self._ray: Any = None
        self._task: Any = None
        self._cond = threading.Condition()
        self._queue: collections.deque[_Pending] = collections.deque()
        self._running: dict[Any, _Pending] = {}
        self._cancelled = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self._guard: Watchdog | None = None
        """Kills the Ray this executor started (its GCS, raylet, agents and
        workers, as found when it started, each by pid and start time) if the
        driver dies (``kill -9`` included), and what is left of it after
        :meth:`shutdown`. Ray fate-shares its GCS and raylet with the driver,
        but its dashboard and runtime-env agents outlive a killed driver (they
        poll for their raylet and then report to a GCS that is gone)."""
        self.connected_in: float | None = None
        """Seconds :meth:`connect` took (starting or joining the cluster)."""

    # -- connecting ---------------------------------------------------------------------

    def connect(self) -> None:
        """Start or join the cluster; :class:`RayExecutorError` when that fails."""
        if self._ray is not None:
            return
        require_ray()
        for name, value in QUIET_ENV.items():
            os.environ.setdefault(name, value)
        host = None if self.address is None else self.address.split("://", 1)[-1].rpartition(":")[0].strip("[]")
        if self.address is None or host in LOOPBACK_NAMES:
            os.environ.update(LOOPBACK_ENV)
        if self.address is None:
            for name, value in LOCAL_ENV.items():
                os.environ.setdefault(name, value)
        clock = time.monotonic()
        if self.address is not None:
            check_reachable(self.address)
        import ray

        options: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING,
                                       configure_logging=True)
        if self.address is None:
            options.update(address="local", _node_ip_address=LOOPBACK, dashboard_host=LOOPBACK)
            if self.num_cpus is not None:
                options["num_cpus"] = self.num_cpus
        else:
            options["address"] = self.address
            if host in LOOPBACK_NAMES:
                options["_node_ip_address"] = LOOPBACK
        previous = _signal_handlers()
        before = descendants(os.getpid()) if self.address is None else {}
        try:
            ray.init(**options)
        except Exception as error:  # noqa: BLE001 - Ray's errors name no fix
            try:
                ray.shutdown()  # whatever a failed start left running
            except Exception:  # noqa: BLE001
                pass
            self._close_guard()
            where = "start a Ray on 127.0.0.1" if self.address is None else f"connect to the Ray cluster at {self.address}"
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise RayExecutorError(f"--executor ray: cannot {where} ({first}); "
                                   + ("check that Ray runs here (`ray start --head` works)" if self.address is None
                                      else "check the address (`ray status --address ADDRESS`), that this machine's "
                                           "Ray and Python versions match the cluster's, and for a cluster with token "
                                           "authentication set RAY_AUTH_MODE=token (its token in ~/.ray/auth_token "
                                           "or RAY_AUTH_TOKEN)")) from None
        finally:
            _restore_signal_handlers(previous)
        if self.address is None:
            self._guard = Watchdog()
            self._guard.watch_processes({pid: start for pid, start in descendants(os.getpid()).items()
                                         if before.get(pid) != start and pid != self._guard.pid})
        self._ray = ray
        self._task = ray.remote(num_cpus=1, max_retries=0, retry_exceptions=False)(run_on_worker)
        if self.slots is None:
            self.slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.connected_in = round(time.monotonic() - clock, 3)
        self._thread = threading.Thread(target=self._dispatch, name="skill-eval-ray", daemon=True)
        self._thread.start()

    def describe(self) -> str:
        """One line for the run's log: the cluster, how long joining took, the slots."""
        where = "started a Ray on 127.0.0.1" if self.address is None else f"connected to the Ray at {self.address}"
        took = f" in {self.connected_in:.1f} s" if self.connected_in is not None else ""
        return f"ray: {where}{took}; at most {self.slots} agent(s) at once"

    def check_worker(self, executable: str, env: dict[str, str] | None = None, timeout: float = 300.0) -> None:
        """Run :func:`worker_check` on the cluster, with a start's resources (so
        on a node that runs starts); :class:`RayExecutorError` when the task
        cannot run there (skill-eval or Ray missing or of another version on
        the workers), no worker runs it within ``timeout`` seconds, or the
        agent's executable is not found there: a misconfigured cluster would
        turn every start into a lost task."""
        self.connect()
        ray = self._ray
        check = ray.remote(num_cpus=1, max_retries=0)(worker_check)
        ref = check.remote(executable, dict(env or {}))
        try:
            result = ray.get(ref, timeout=timeout)
        except Exception as error:  # noqa: BLE001 - the task could not run on the cluster
            self._cancel_task(ref)
            if type(error).__name__ == "GetTimeoutError":
                raise RayExecutorError(f"--executor ray: no Ray worker ran skill-eval's check within {timeout:g} s "
                                       "(is the cluster busy, or still adding nodes?); try again when it has a free "
                                       "CPU") from None
            raise RayExecutorError(f"--executor ray: the cluster cannot run skill-eval's task ({_describe(error)}); "
                                   f"install {INSTALL_LINE} (this version, with this Python) on every node") from None
        if not result.get("found"):
            raise RayExecutorError(f"--executor ray: the agent's executable {executable!r} was not found on the Ray "
                                   f"worker on {result.get('host')}; install it on every node of the cluster (or set "
                                   "PATH in the agent's env)")

    # -- the Executor protocol ----------------------------------------------------------

    def submit(self, job: AgentJob, on_start: Callable[[], None] | None = None) -> "Future[AgentOutcome]":
        self.connect()
        future: Future = Future()
        with self._cond:
            if self._cancelled or self._closed:
                pending = _Pending(job, None, future)
            else:
                self._queue.append(_Pending(job, on_start, future))
                self._cond.notify_all()
                return future
        pending.resolve("skipped", "cancelled before it started")
        return future

    def cancel(self) -> None:
        """Cancel the tasks in flight (their agents are killed; they come back
        ``interrupted``) and resolve queued jobs ``skipped``."""
        with self._cond:
            self._cancelled = True
            queued = list(self._queue)
            self._queue.clear()
            running = list(self._running)
            self._cond.notify_all()
        for pending in queued:
            pending.resolve("skipped", "cancelled before it started")
        for ref in running:
            self._cancel_task(ref)

    def shutdown(self, wait: bool = True) -> None:
        """Wait for the tasks in flight (or cancel them, ``wait=False``), stop
        the dispatch thread and leave the cluster; a Ray this executor started
        is stopped."""
        if not wait:
            self.cancel()
        with self._cond:
            self._closed = True
            queued = list(self._queue)
            self._queue.clear()
            self._cond.notify_all()
        for pending in queued:
            pending.resolve("skipped", "the executor was shut down before it started")
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._ray is not None:
            ray, self._ray = self._ray, None
            previous = _signal_handlers()
            try:
                ray.shutdown()
            finally:
                _restore_signal_handlers(previous)
        self._close_guard()

    def _close_guard(self) -> None:
        """End whatever is left of the Ray this executor started."""
        guard, self._guard = self._guard, None
        if guard is not None:
            guard.close()

    # -- the dispatch thread ------------------------------------------------------------

    def _dispatch(self) -> None:
        """Hand queued jobs to Ray as slots free, and resolve finished tasks;
        if Ray fails under the driver, every task in flight resolves
        ``interrupted`` and every queued job ``skipped`` (nothing hangs)."""
        try:
            self._dispatch_loop()
        except BaseException as error:  # noqa: BLE001 - e.g. the connection to the cluster was lost
            with self._cond:
                self._cancelled = True
                queued, self._queue = list(self._queue), collections.deque()
                running, self._running = list(self._running.values()), {}
            for pending in queued:
                pending.resolve("skipped", f"not started: the driver lost Ray ({_describe(error)})")
            for pending in running:
                pending.resolve("interrupted", f"interrupted: the driver lost Ray ({_describe(error)})")

    def _dispatch_loop(self) -> None:
        ray = self._ray
        while True:
            launch: list[_Pending] = []
            with self._cond:
                while self._queue and len(self._running) + len(launch) < self.slots and not self._cancelled:
                    launch.append(self._queue.popleft())
                if not launch and not self._running:
                    if self._closed:
                        return
                    self._cond.wait(POLL_SECONDS)
                    continue
            for pending in launch:
                self._launch(pending)
            with self._cond:
                refs = list(self._running)
            if not refs:
                continue
            ready, _rest = ray.wait(refs, num_returns=1, timeout=POLL_SECONDS if not launch else 0)
            if ready:
                others = [ref for ref in refs if ref not in ready]
                if others:
                    more, _rest = ray.wait(others, num_returns=len(others), timeout=0)
                    ready += more
            for ref in ready:
                self._finish(ref)

    def _launch(self, pending: _Pending) -> None:
        """``on_start``, then the task; ``skipped`` when ``on_start`` refuses."""
        pending.started, pending.clock = now_iso(), time.monotonic()
        if self._cancelled:
            pending.resolve("skipped", "cancelled before it started")
            return
        if pending.on_start is not None:
            try:
                pending.on_start()
            except StartRefused as refused:
                pending.resolve("skipped", f"not started: {refused}")
                return
            except Exception as error:  # noqa: BLE001 - not recorded, so not started
                pending.resolve("skipped", f"not started: the start could not be recorded ({error})")
                return
        pending.started, pending.clock = now_iso(), time.monotonic()
        try:
            ref = self._task.remote(pending.job)
        except Exception as error:  # noqa: BLE001 - a start on record that never reached the cluster
            pending.resolve("interrupted", f"interrupted: the task could not be handed to Ray ({_describe(error)})")
            return
        with self._cond:
            self._running[ref] = pending
            cancelled = self._cancelled
        if cancelled:
            self._cancel_task(ref)

    def _finish(self, ref: Any) -> None:
        with self._cond:
            pending = self._running.pop(ref, None)
        if pending is None:
            return
        try:
            outcome = self._ray.get(ref)
        except Exception as error:  # noqa: BLE001 - a lost, crashed or cancelled task
            why = "the run was cancelled" if self._cancelled else "the Ray task was lost"
            pending.resolve("interrupted", f"interrupted: {why} ({_describe(error)})")
            return
        if not isinstance(outcome, AgentOutcome) or not outcome.is_start:
            pending.resolve("interrupted", "interrupted: the Ray task gave no outcome for a recorded start")
            return
        if self._cancelled and outcome.status == "error" and (outcome.exit_code or 0) < 0:
            # the cancel killed the agent (Ray ends a cancelled worker's children) a moment before its
            # worker: an interrupted start, as when the local executor's cancel kills an agent
            outcome.status = "interrupted"
            outcome.error = "interrupted: the run was cancelled while the agent ran"
        pending.future.set_result(outcome)

    def _cancel_task(self, ref: Any) -> None:
        try:
            self._ray.cancel(ref, force=True)
        except Exception:  # noqa: BLE001 - finished meanwhile, or its worker is gone already
            pass


def _describe(error: BaseException) -> str:
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {first}"[:500] if first else type(error).__name__


def _signal_handlers() -> dict:
    """SIGINT and SIGTERM handlers as they are (``ray.init`` replaces SIGTERM's:
    the runner's own handlers must stay, so that a stop records every start)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}


def _restore_signal_handlers(previous: dict) -> None:
    for signum, handler in previous.items():
        if handler is not None and signal.getsignal(signum) is not handler:
            signal.signal(signum, handler)
