"""The watchdog: a small process that ends what a dying process leaves behind.

A runner (or a Ray driver, or a Ray worker) starts processes that must not
outlive it: agents, judges, a Ray of its own. A :class:`Watchdog` is a second
Python process holding the read end of a pipe whose only writer is the process
that started it. End of file on that pipe means that process has exited or
was killed (``kill -9`` included) or closed the watchdog (:meth:`Watchdog.close`);
the watchdog then kills what it was told of and removes the folders it was
given, and exits.

This file is both the client (:class:`Watchdog`, imported by
:mod:`~skill_eval.evals.executor` and :mod:`~skill_eval.evals.ray_executor`)
and the watchdog's program (:func:`main`), which the client runs *by path*
with ``python -I -S``: no ``site`` (so no ``.pth`` hook, no
``sitecustomize``, no site-packages), no ``PYTHONPATH`` or other ``PYTHON*``
variable, no user site and not even this file's folder on ``sys.path``.
So the program starts in a few milliseconds, nothing of the user's
environment runs inside it, and it imports the standard library only — never
``skill_eval``, which a ``-S`` interpreter could not find anyway. Keep it so:
this module imports nothing outside the standard library.

The protocol is one line per message on the watchdog's standard input:

- ``+PID`` / ``-PID``: a process group to kill, or no longer;
- ``=PID START``: a process to kill, known by its pid and its start time
  (:func:`start_time`), so that a pid the system reused meanwhile is never
  killed;
- ``>HEX`` / ``<HEX``: a folder, as the hexadecimal of its path's bytes, to
  remove at the end, or no longer.

Its only argument, when given, is a token: at the end it also kills every
process whose environment carries ``SKILL_EVAL_RUN=<token>`` (found in
``/proc``), which covers an agent spawned but not yet told of, and children
that left their agent's process group.

The program forks and its first process exits at once, so the watchdog is no
child of the process it guards: a runtime that kills its workers' children
when they exit (Ray does) must not end it before it has done its work. Its
first line on standard output is its pid; its standard output closes when it
has finished, which is how :meth:`Watchdog.close` knows.
"""

from __future__ import annotations

import os
import signal
import sys
import time

CLOSE_TIMEOUT = 10.0
"""Seconds a closing watchdog may take to end what is left and remove its folders."""
RUN_VARIABLE = "SKILL_EVAL_RUN"
"""The environment variable whose value (a watchdog's token) marks the processes it kills."""
PROGRAM = os.path.abspath(__file__)
"""This file, which the client runs as the watchdog's program."""


def start_time(pid: int) -> bytes | None:
    """A process's start time (``/proc/PID/stat`` field 22): with the pid, its identity."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


# -- the watchdog's program -----------------------------------------------------------


class Orders:
    """What the watchdog was told to end and remove (the protocol's state)."""

    def __init__(self) -> None:
        self.groups: set[int] = set()
        self.processes: dict[int, bytes] = {}
        self.folders: set[bytes] = set()

    def take(self, line: bytes) -> None:
        """Apply one protocol line."""
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            self.groups.add(int(rest))
        elif kind == b"-":
            self.groups.discard(int(rest))
        elif kind == b"=":
            pid, start = rest.split()
            self.processes[int(pid)] = start
        elif kind == b">":
            self.folders.add(bytes.fromhex(rest.decode()))
        elif kind == b"<":
            self.folders.discard(bytes.fromhex(rest.decode()))


def read_orders(fd: int) -> Orders:
    """The orders read from ``fd`` until its end of file (or a read error)."""
    orders, pending = Orders(), b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except InterruptedError:
            continue
        except OSError:
            break
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            try:
                orders.take(line)
            except ValueError:
                pass  # not a line of the protocol: the orders before and after it still hold
    return orders


def kill_groups(groups: set[int]) -> None:
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass


def kill_processes(processes: dict[int, bytes]) -> None:
    """Kill each process that is still the one told of (same pid, same start
    time), in three passes 0.1 s apart, as processes of one family (a Ray's)
    may still be starting one another when the first pass lands."""
    me = os.getpid()
    for attempt in range(3):
        if attempt:
            time.sleep(0.1)
        for pid, start in processes.items():
            if pid != me and start_time(pid) == start:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass


def kill_marked(token: str) -> None:
    """Kill every process whose environment carries ``SKILL_EVAL_RUN=token``;
    twice, 20 ms apart, for what a process forked before its kill landed (a
    killed process forks no more)."""
    marker = (RUN_VARIABLE + "=" + token).encode()
    me = os.getpid()
    for attempt in range(2):
        if attempt:
            time.sleep(0.02)
        try:
            pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
        except OSError:
            return
        for pid in pids:
            if pid == me:
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    environ = handle.read()
            except OSError:
                continue
            if (marker + b"\0") in environ or environ.endswith(marker):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass


def remove_folders(folders: set[bytes]) -> None:
    """Remove each folder (links in it are not followed), retrying for up to
    five seconds while a process that was just killed may still be writing."""
    if not folders:
        return
    import shutil

    for attempt in range(50):
        for folder in list(folders):
            shutil.rmtree(folder, ignore_errors=True)
            if not os.path.lexists(folder):
                folders.discard(folder)
        if not folders:
            return
        time.sleep(0.1)


def main(argv: list[str]) -> None:
    """The watchdog's program: ``python -I -S watchdog.py [TOKEN]``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.fork():
        os._exit(0)
    try:
        os.write(1, b"%d\n" % os.getpid())
    except OSError:
        pass  # the guarded process died before reading it (a broken pipe): still sweep
    orders = read_orders(0)
    kill_groups(orders.groups)
    if orders.processes:
        kill_processes(orders.processes)
    if len(argv) > 1:
        kill_marked(argv[1])
    remove_folders(orders.folders)


# -- the client ---------------------------------------------------------------------------


class Watchdog:
    """A watchdog process (see the module's docstring), started at once, and
    the calls that tell it what to end.

    ``token``: also kill, at the end, every process whose environment carries
    ``SKILL_EVAL_RUN=<token>`` (the executor sets it in each agent's). Every
    call is a no-op when the watchdog could not be started (:attr:`running`
    is false) or has gone. The modules only the client needs (``subprocess``,
    ``threading``, ``selectors``) are imported in its methods, so that the
    program's start-up imports ``os``, ``signal``, ``sys`` and ``time`` only."""

    def __init__(self, token: str | None = None) -> None:
        import subprocess
        import threading

        self.token = token
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        if not sys.executable:
            return
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", PROGRAM, *([token] if token else [])], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        except OSError:
            self._process = None

    def _send(self, lines: bytes) -> None:
        process = self._process
        if process is None or process.stdin is None:
            return
        with self._lock:
            try:
                os.write(process.stdin.fileno(), lines)
            except (OSError, ValueError):
                pass  # the watchdog is gone: its caller still ends its processes itself

    def watch(self, group: int) -> None:
        """Kill process group ``group`` at the end."""
        self._send(b"+%d\n" % group)

    def unwatch(self, group: int) -> None:
        """Undo :meth:`watch` (the group has ended)."""
        self._send(b"-%d\n" % group)

    def watch_processes(self, processes: dict[int, bytes]) -> None:
        """Kill each process (pid → :func:`start_time`) at the end, if it is still that process."""
        self._send(b"".join(b"=%d %s\n" % (pid, start) for pid, start in processes.items()))

    def remove_on_exit(self, folder: str) -> None:
        """Have the watchdog remove ``folder`` (links in it are not followed)
        once the processes are ended, when the guarded process dies or
        :meth:`close` is called. Sent before the folder is made, so that no
        moment leaves a folder the watchdog does not know."""
        self._send(b">" + os.fsencode(folder).hex().encode() + b"\n")

    def keep(self, folder: str) -> None:
        """Undo :meth:`remove_on_exit` (the folder outlives this watchdog)."""
        self._send(b"<" + os.fsencode(folder).hex().encode() + b"\n")

    @property
    def running(self) -> bool:
        return self._process is not None

    @property
    def pid(self) -> int | None:
        """The pid of the watchdog's first process (which forks the watchdog and exits)."""
        return None if self._process is None else self._process.pid

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Let the watchdog end and remove what it was told of, and exit;
        returns when it has (its stdout closes), or kills it after ``timeout``
        seconds."""
        import selectors
        import subprocess

        process, self._process = self._process, None
        if process is None:
            return
        with self._lock:
            try:
                process.stdin.close()
            except OSError:
                pass
        said = b""
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while (left := deadline - time.monotonic()) > 0:
                if selector.select(left):
                    chunk = os.read(process.stdout.fileno(), 4096)
                    if not chunk:
                        break
                    said += chunk
            else:
                pid = said.split(b"\n", 1)[0]
                if pid.isdigit():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except OSError:
                        pass
        process.stdout.close()
        try:
            process.wait(timeout=timeout)  # the watchdog's first process, which forked it and exited
        except subprocess.TimeoutExpired:
            process.kill()


if __name__ == "__main__":
    main(sys.argv)
