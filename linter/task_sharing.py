"""Forked helper processes that share a lint run's tasks with this process.

The parallel CLI cuts a run into tasks (chunks of probes) and lets this
process and ``jobs`` - 1 forked helpers take them from one shared counter.
:class:`Helpers` forks the helpers as soon as it is made, before the tasks
are known: each first runs a ``prepare`` step (the engine's: the imports its
tasks will need, ~70 ms of markdown-it and PyYAML) while this process is still
walking the workspace, then waits for its order. :meth:`Helpers.share` sends
the order (the session and the tasks, pickled) and yields every task's result
as it is done; :meth:`Helpers.close` dismisses helpers that got no order (a
workspace too small to share).

This module knows nothing of linting: a task is an index, a result any
picklable value, and what a process runs for an index is what the ``start``
callable makes of the order. Plain ``os.fork`` and pipes, not
:mod:`multiprocessing` (importing it costs ~30 ms of the serial start:
sockets, tempfile, shutil, signal).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache

Runner = Callable[[int], object]
"""What a process runs for a task: its index in, its result out."""

Start = Callable[[object], Runner]
"""Installs an order in a process (this one or a helper) and returns its runner."""


class Helpers:
    """``count`` helper processes forked from this one when made.

    Each runs ``prepare`` (its errors are ignored: a task that needs what
    failed meets the failure again, where it is reported), then waits for the
    order :meth:`share` sends; a helper whose order never comes is killed by
    :meth:`close`. Helpers are forked as :func:`forking` describes and leave
    with ``os._exit``.
    """

    def __init__(self, count: int, start: Start, prepare: Callable[[], None] | None = None) -> None:
        import mmap

        self._start = start
        self._counter = _TaskCounter(mmap.mmap(-1, 16), *os.pipe())
        self._children: list[int] = []
        self._order_pipes: list[int] = []
        self._result_pipes: list[int] = []
        try:
            with forking():
                for _ in range(count):
                    order_read, order_write = os.pipe()
                    result_read, result_write = os.pipe()
                    _widen(order_write)
                    _widen(result_write)
                    pid = os.fork()
                    if pid == 0:  # the helper: it never leaves this block
                        code = 1
                        try:
                            _close(order_write, result_read, *self._order_pipes, *self._result_pipes)
                            _helper_main(self._counter, order_read, result_write, start, prepare)
                            code = 0
                        finally:
                            os._exit(code)
                    _close(order_read, result_write)
                    self._children.append(pid)
                    self._order_pipes.append(order_write)
                    self._result_pipes.append(result_read)
        except BaseException:
            self.close()
            raise

    def __len__(self) -> int:
        return len(self._children)

    def share(self, order: object, count: int) -> Iterator[tuple[int, object]]:
        """``(index, result)`` of each of ``count`` tasks, as each is done, in no
        fixed order, each exactly once: run by this process and the helpers,
        taking tasks from one shared counter, this process from the front and
        the helpers from the back (each works through neighbouring tasks).

        ``order`` is installed here with ``start`` and sent, pickled, to every
        helper, which installs it likewise. A helper's results are received by
        a thread here (a helper blocked on a full pipe would idle), which also
        sends its order first (an order larger than a pipe holds would block
        this process while the helper is still preparing); they are handed
        over between this process's own tasks. A task whose result never came
        (its helper died, or the task raised there) is run here at the end,
        where an error surfaces as it would without helpers; so is every task
        when the order cannot be pickled. The helpers are ended with the
        iteration (or when it is closed early).
        """
        import queue
        import threading

        run = self._start(order)
        try:
            message = _framed(dumps(order))
        except Exception:  # noqa: BLE001 - an order that cannot travel is run here, all of it
            self._end(completed=False)
            return ((index, run(index)) for index in range(count))
        self._counter.reset(count)
        received: queue.SimpleQueue = queue.SimpleQueue()
        threads = []
        for order_pipe, result_pipe in zip(self._order_pipes, self._result_pipes):
            threads.append(threading.Thread(target=_serve, args=(order_pipe, message, result_pipe, received), daemon=True))
        self._order_pipes, self._result_pipes = [], []  # the threads close them
        for thread in threads:
            thread.start()
        return self._results(run, count, received, len(threads))

    def _results(self, run: Runner, count: int, received, helpers: int) -> Iterator[tuple[int, object]]:
        import queue

        completed = False
        try:
            done: set[int] = set()
            finished = 0
            while True:
                while True:  # what the helpers finished meanwhile
                    try:
                        item = received.get_nowait()
                    except queue.Empty:
                        break
                    if item is None:
                        finished += 1
                    elif item[1]:
                        done.add(item[0])
                        yield item[0], item[2]
                index = self._counter.take(front=True)
                if index is None:
                    break
                result = run(index)
                done.add(index)
                yield index, result
            while finished < helpers:
                item = received.get()
                if item is None:
                    finished += 1
                elif item[1]:
                    done.add(item[0])
                    yield item[0], item[2]
            for index in range(count):
                if index not in done:
                    yield index, run(index)
            completed = True
        finally:
            self._end(completed)

    def close(self) -> None:
        """Dismiss helpers that were given no order (a no-op after :meth:`share`)."""
        self._end(completed=False)

    def _end(self, completed: bool) -> None:
        """Reap the helpers: done by now when the run ``completed`` (each leaves
        once the counter runs out), else killed."""
        import signal

        children, self._children = self._children, []
        for pid in children:
            try:
                if not completed:
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
        _close(*self._order_pipes, *self._result_pipes)
        self._order_pipes, self._result_pipes = [], []
        self._counter.close()


class _TaskCounter:
    """The tasks not taken yet, shared by this process and its forked helpers:
    the first and the last index left, in an anonymous shared ``mmap``,
    guarded by a one-byte token in a pipe (the protocol of make's jobserver: a
    one-byte read or write of a pipe is atomic). This process takes from the
    front, helpers from the back (:meth:`take`)."""

    def __init__(self, memory, token_read: int, token_write: int) -> None:
        self.memory = memory
        self.token_read, self.token_write = token_read, token_write
        self.reset(0)
        os.write(token_write, b"t")

    def reset(self, count: int) -> None:
        """Tasks ``0 .. count - 1`` left (set before any helper takes one)."""
        self.memory[:16] = (0).to_bytes(8, "little", signed=True) + (count - 1).to_bytes(8, "little", signed=True)

    def take(self, front: bool) -> int | None:
        """The next task's index from the front (or back), ``None`` when none is left."""
        os.read(self.token_read, 1)  # blocks while another process holds the token
        try:
            first = int.from_bytes(self.memory[:8], "little", signed=True)
            last = int.from_bytes(self.memory[8:16], "little", signed=True)
            if first > last:
                return None
            if front:
                self.memory[:8] = (first + 1).to_bytes(8, "little", signed=True)
                return first
            self.memory[8:16] = (last - 1).to_bytes(8, "little", signed=True)
            return last
        finally:
            os.write(self.token_write, b"t")

    def close(self) -> None:
        _close(self.token_read, self.token_write)
        if not self.memory.closed:
            self.memory.close()


def _helper_main(counter: _TaskCounter, order_pipe: int, result_pipe: int, start: Start, prepare) -> None:
    """A forked helper: prepare, wait for the order, then take tasks until
    none are left, sending ``(index, True, result)`` for each (``(index,
    False, None)`` for one that raised, which this process then runs itself)."""
    try:
        if prepare is not None:
            try:
                prepare()
            except Exception:  # noqa: BLE001, S110 - the tasks meet it again and report it
                pass
        data = _read_message(order_pipe)
        os.close(order_pipe)
        if data is None:
            return  # dismissed
        run = start(loads(data))
        while True:
            index = counter.take(front=False)
            if index is None:
                break
            try:
                message = (index, True, run(index))
            except Exception:  # noqa: BLE001 - this process redoes the task and reports
                message = (index, False, None)
            _write_all(result_pipe, _framed(dumps(message)))
            if not message[1]:
                break
    finally:
        os.close(result_pipe)


def _serve(order_pipe: int, message: bytes, result_pipe: int, received) -> None:
    """A thread of this process serving one helper: send its order, then move
    its results into ``received`` until it is done (its end of the pipe
    closed, or it died); then ``None``."""
    try:
        try:
            _write_all(order_pipe, message)
        except OSError:
            pass  # the helper died: its tasks are run here
        finally:
            os.close(order_pipe)
        while True:
            data = _read_message(result_pipe)
            if data is None:
                break
            received.put(loads(data))
    except OSError:
        pass
    finally:
        os.close(result_pipe)
        received.put(None)


def dumps(value: object) -> bytes:
    """``value`` pickled, paths as their text (a path pickled as its parts
    costs ~9 µs to load, as its text ~3 µs; a run at 1,000 probes sends ~3,000
    paths between processes), and read-only mappings (the config's defaults)
    as the mappings they show."""
    import io
    import pickle

    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _dispatch_table()
    pickler.dump(value)
    return buffer.getvalue()


def loads(data: bytes) -> object:
    """What :func:`dumps` pickled."""
    import pickle

    return pickle.loads(data)


@lru_cache(maxsize=1)
def _dispatch_table() -> dict:
    import copyreg
    from pathlib import PosixPath, WindowsPath
    from types import MappingProxyType

    table = copyreg.dispatch_table.copy()
    table[PosixPath] = table[WindowsPath] = _path_as_text
    table[MappingProxyType] = _read_only_mapping
    return table


def _path_as_text(path) -> tuple:
    return type(path), (str(path),)


def _read_only_mapping(mapping) -> tuple:
    return read_only_mapping, (dict(mapping),)


def read_only_mapping(items: dict):
    """A read-only view of ``items`` (what a pickled one is loaded as)."""
    from types import MappingProxyType

    return MappingProxyType(items)


PIPE_SIZE = 1 << 20
"""What :func:`_widen` asks a pipe to hold: Linux's default limit for an
unprivileged process (``/proc/sys/fs/pipe-max-size``)."""


def _widen(fd: int) -> None:
    """Let ``fd``'s pipe hold :data:`PIPE_SIZE` bytes instead of 64 KiB, where
    the platform allows it (Linux's ``F_SETPIPE_SZ``).

    A helper's result is read by a thread of this process, which needs the
    GIL for each read while this process's main thread lints; with a 64 KiB
    pipe a helper sending a ~250 KB chunk result sat blocked ~5-6 ms per
    chunk (measured at 1,000 probes), waiting for that thread's turns."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    except (ImportError, AttributeError, OSError):
        pass  # another platform, or over the user's pipe quota: 64 KiB it is


def _framed(data: bytes) -> bytes:
    return len(data).to_bytes(8, "little") + data


def _read_message(fd: int) -> bytes | None:
    """One length-prefixed message from ``fd``, ``None`` at the end of the stream."""
    header = _read_exactly(fd, 8)
    return None if header is None else _read_exactly(fd, int.from_bytes(header, "little"))


def _read_exactly(fd: int, size: int) -> bytes | None:
    """``size`` bytes from ``fd``, or ``None`` at the end of the stream."""
    parts = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _close(*fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


@contextmanager
def forking():
    """The state in which this process forks helpers or workers.

    They do not get this process's standard streams: in the language server
    another thread is blocked reading stdin (holding its lock, which a forked
    child would wait on forever when multiprocessing closes stdin), and stdout
    carries the protocol, which no worker may write or flush into.

    Every object that exists at the fork is frozen out of the children's
    garbage collections (``gc.freeze``, as the ``gc`` documentation advises
    before a fork): a collection in a child would otherwise touch, and so
    copy, the memory pages of everything it inherited.
    """
    import gc
    import sys
    import warnings

    streams = sys.stdin, sys.stdout
    sys.stdin = sys.stdout = None
    gc.freeze()
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns that forking a process with threads may
            # deadlock the child: the children run engine code only, and the
            # one lock they could meet (stdin's) is out of their reach above.
            warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork.*")
            yield
    finally:
        gc.unfreeze()
        sys.stdin, sys.stdout = streams
