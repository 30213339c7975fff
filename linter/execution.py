"""Running units of work in this process and in worker processes.

One executor for the CLI and the language server:
:class:`concurrent.futures.ProcessPoolExecutor`, with this process linting a
share of the work too. The units are cut into contiguous chunks (neighbouring
probes share a SKILL.md, so each process parses few), largest at both ends
and smallest in the middle (:func:`guided_chunks`); this process takes chunks
from the front, the pool from the back, so that both finish at about the
same time and the last chunks are small. A worker builds its own session
from :meth:`~skill_eval.linter.session.LintSession.spec` and sends each
chunk's results back as plain data (:func:`dumps`).

Start methods (:func:`start_method_for`):

* ``fork`` for the CLI. It is the cheapest (a worker inherits the imports
  and the walk) and safe here: the CLI has one thread when the pool starts,
  and ``ProcessPoolExecutor`` forks every worker before it starts its own
  threads.
* ``forkserver`` for the language server, which has threads (pygls's reader,
  the asyncio executor's): forking a process with threads can leave a lock
  held forever in the child. The fork server is a fresh, single-threaded
  interpreter that imports the engine once (:data:`PRELOAD`) and forks the
  workers; its first start costs about one cold start of the linter.
* ``spawn`` works everywhere and pays a cold interpreter and the engine's
  imports per worker; it is what platforms without ``fork`` get.

Findings never depend on the start method: everything a worker needs comes
from the session's spec and the files, and the rules' hashes are stable
across processes (``tests/linter/test_execution.py`` lints with each method
and compares).

A chunk whose result never comes (its worker was killed, or raised) is linted
in this process at the end: no unit is lost, and none is reported twice
(results are keyed by chunk, and a chunk is taken once).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from concurrent.futures import Future

    from .engine import Plan, Unit, UnitResult
    from .session import LintSession

PARALLEL_MIN_WORK = 120
"""Below this much work (:func:`work_of`: a probe weighs one, a SKILL.md
:data:`SKILL_WORK`), the units are linted in this process alone: starting a
pool (importing :mod:`multiprocessing`, forking, each worker's first imports)
costs more than it saves. See docs/performance.md."""

SKILL_WORK = 10
"""What linting one SKILL.md weighs against a probe (its parse against a
probe's checks; docs/performance.md)."""

SERIAL_CHUNK = 64
"""Units per chunk when everything is linted here (the language server
reports progress between chunks)."""

PRELOAD = ["skill_eval.linter.engine", "skill_eval.linter.markdown", "skill_eval.linter.probejson",
           "markdown_it", "yaml", "json_source_map"]
"""What the fork server imports once for all its workers."""


def start_method_for(threads: bool) -> str:
    """The start method for a pool started by a process that has other
    threads running (``threads``) or not (see the module's docstring)."""
    import os

    if not hasattr(os, "fork"):
        return "spawn"
    return "forkserver" if threads else "fork"


def work_of(units: Sequence[Unit]) -> int:
    """The work of linting ``units``, in probes."""
    return sum(SKILL_WORK if kind == "skill" else 1 for kind, _path in units)


SMALLEST_CHUNK = 16
"""The size of the last (middle) chunks of :func:`guided_chunks`."""

LARGEST_CHUNK = 200
"""The size of the first chunks of :func:`guided_chunks`, at most. A chunk is
linted rule by rule (:func:`~skill_eval.linter.engine.lint_units_here`),
and the rules share what they compute of an artifact through caches that keep
the last 256 texts: in larger chunks the artifacts' words were split again by
each rule (docs/performance.md)."""


def guided_chunks(count: int, jobs: int, smallest: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` of contiguous chunks of ``count`` units for ``jobs``
    processes, in order, largest at both ends and smallest in the middle
    ("guided" scheduling from two ends: this process takes chunks from the
    front, the pool from the back). Chunk sizes are the remaining units over
    ``2 * jobs``, down to ``smallest``, dealt to the two ends in turn. Big
    chunks keep per-task costs low; small ones last keep one process from
    finishing a long chunk while the others wait; from two ends each
    process's chunks are neighbours, so a SKILL.md is rarely parsed twice."""
    smallest = SMALLEST_CHUNK if smallest is None else smallest
    sizes = []
    remaining = count
    while remaining > 0:
        size = min(remaining, LARGEST_CHUNK, max(smallest, math.ceil(remaining / (2 * jobs))))
        sizes.append(size)
        remaining -= size
    front, back = sizes[0::2], sizes[1::2]
    bounds = []
    start = 0
    for size in front + back[::-1]:
        bounds.append((start, start + size))
        start += size
    return bounds


def run_in_chunks(
    session: LintSession,
    units: Sequence[Unit],
    plan: Plan,
    *,
    jobs: int = 1,
    record: bool = False,
    start_method: str | None = None,
    here: bool = True,
    tail: Sequence[Unit] = (),
) -> Iterator[list[tuple[Unit, UnitResult]]]:
    """``[(unit, result), ...]`` per chunk, as each is done, in no fixed
    order; every unit exactly once. ``jobs`` counts this process (with
    ``here=False``, this process lints none: ``jobs`` workers do); workers
    start only for :data:`PARALLEL_MIN_WORK` or more. ``tail`` (the
    output-spec units, which read every probe's facts) is linted here once
    this process has no other chunk to take: while the pool's last chunks
    run, after the results yielded so far (whose facts the caller keeps)."""
    from .engine import lint_units_here

    if not units and not tail:
        return
    workers = jobs - 1 if here else jobs
    if workers < 1 or work_of(units) < PARALLEL_MIN_WORK:
        for start in range(0, len(units), SERIAL_CHUNK):
            yield lint_units_here(session, units[start:start + SERIAL_CHUNK], plan, record)
        if tail:
            yield lint_units_here(session, tail, plan, record)
        return
    probes = [unit for unit in units if unit[0] != "skill"]
    chunks = [probes[start:end] for start, end in guided_chunks(len(probes), jobs)]
    skills = [unit for unit in units if unit[0] == "skill"]
    if skills:
        chunks.append(skills)  # the back: a worker's first task, and this process need not import PyYAML
    method = start_method or start_method_for(threading.active_count() > 1)
    yield from _share(session, chunks, plan, workers, record, method, here, list(tail))


def _share(session: LintSession, chunks: list, plan: Plan, workers: int, record: bool, method: str, here: bool,
           tail: list):
    """Lint ``chunks`` here (from the front, when ``here``) and in a pool of
    ``workers`` started with ``method`` (from the back); then ``tail`` here."""
    import multiprocessing
    import queue
    from concurrent.futures import ProcessPoolExecutor

    from .engine import lint_units_here

    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(PRELOAD)
    spec = session.spec()
    # a forked worker inherits the spec; another gets it pickled as this module pickles
    # (the config's read-only mappings do not pickle as they are)
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                               initargs=(spec if method == "fork" else dumps(spec), *plan.codes(), record,
                                         method != "fork"))
    lock = threading.Lock()
    ends = [0, len(chunks) - 1]  # the first and the last chunk not taken yet
    finished: queue.SimpleQueue = queue.SimpleQueue()
    outstanding = [0]

    def take(front: bool) -> int | None:
        with lock:
            if ends[0] > ends[1]:
                return None
            if front:
                ends[0] += 1
                return ends[0] - 1
            ends[1] -= 1
            return ends[1] + 1

    def submit_next() -> None:
        index = take(front=False)
        if index is None:
            return
        with lock:
            outstanding[0] += 1  # one item in `finished` per submission, whatever becomes of it
        try:
            future = pool.submit(_lint_chunk, chunks[index])
        except Exception:  # noqa: BLE001 - a broken pool: this process takes the chunk
            finished.put((index, None))
            return
        future.add_done_callback(lambda done, index=index: _on_done(done, index))

    def _on_done(future, index: int) -> None:
        submit_next()  # keep the pool busy, from the back; before this one counts as done,
        finished.put((index, future))  # so that nothing outstanding means nothing left to submit

    def collect(item) -> list | None:
        index, future = item
        with lock:
            outstanding[0] -= 1
        if future is not None and not future.cancelled() and future.exception() is None:
            return loads(future.result(), session.path_table)
        redo.append(index)
        return None

    redo: list[int] = []
    try:
        for _ in range(2 * workers):  # one running and one queued per worker
            submit_next()
        while here:
            while True:  # what the pool finished meanwhile
                try:
                    item = finished.get_nowait()
                except queue.Empty:
                    break
                result = collect(item)
                if result is not None:
                    yield result
            index = take(front=True)
            if index is None:
                break
            yield lint_units_here(session, chunks[index], plan, record)
        if tail and here:
            yield lint_units_here(session, tail, plan, record)
            tail = []
        while True:
            with lock:
                if not outstanding[0]:
                    break
            result = collect(finished.get())
            if result is not None:
                yield result
        while True:  # a broken pool leaves chunks nobody took
            index = take(front=True)
            if index is None:
                break
            redo.append(index)
        for index in redo:
            yield lint_units_here(session, chunks[index], plan, record)
        if tail:
            yield lint_units_here(session, tail, plan, record)
    finally:
        with lock:
            ends[0], ends[1] = 1, 0  # nothing more is submitted
        pool.shutdown(wait=True, cancel_futures=True)


def can_fork() -> bool:
    """Whether :func:`run_forked` forks here: a platform with ``fork`` and no
    other thread running (a process with threads, such as the language
    server, could leave a lock held forever in the child)."""
    import os

    return hasattr(os, "fork") and threading.active_count() == 1


def run_forked(call: Callable[[], Any]) -> Future | None:
    """``call()`` in a process forked from this one now, while this one goes
    on: the child sees this process's memory as it is at the fork, so
    nothing is pickled but the call's result (the cache's shards written in
    the background, :meth:`~skill_eval.linter.cache.Cache.start_saving`).
    The child is the one worker of a ``fork`` pool of the standard executor,
    started by the submission and shut down after it.

    ``None`` where a fork is not safe or not possible (:func:`can_fork`), and
    the caller does the work itself."""
    if not can_fork():
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    _FORKED_CALL.append(call)
    try:
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
        try:
            return pool.submit(_run_forked_call)  # forks the worker now: it inherits the call
        finally:
            pool.shutdown(wait=False)
    finally:
        _FORKED_CALL.clear()


_FORKED_CALL: list[Callable[[], Any]] = []
"""The call a :func:`run_forked` child inherits (set while it is forked)."""


def _run_forked_call() -> Any:
    return _FORKED_CALL[0]()


_WORKER: dict[str, Any] = {}
"""A worker process's session and plan (set once by :func:`_start_worker`)."""


def _start_worker(spec: tuple | bytes, codes: tuple[str, ...], scopes, record: bool, quiet_stdout: bool) -> None:
    """A worker's start: its session and plan. A worker not forked from this
    process keeps its standard output off the parent's (the language
    server's protocol channel): it writes to standard error instead."""
    import os

    if quiet_stdout:
        os.dup2(2, 1)
    from .engine import Plan
    from .rules import BY_CODE
    from .session import LintSession

    session = LintSession(*(loads(spec) if isinstance(spec, bytes) else spec))
    _WORKER["session"] = session
    _WORKER["plan"] = Plan(session.config, [BY_CODE[code]() for code in codes], scopes)
    _WORKER["record"] = record


def _lint_chunk(units: list[Unit]) -> bytes:
    """One chunk in a worker: its results, serialized (:func:`dumps`)."""
    from .engine import lint_units_here

    return dumps(lint_units_here(_WORKER["session"], units, _WORKER["plan"], _WORKER["record"]))


def dumps(value: object) -> bytes:
    """``value`` pickled, paths as their text (a path pickled as its parts
    is slower to load than its text, and a run sends a few paths per probe
    between processes: docs/performance.md; :func:`path_of` loads them), read-only mappings (the config's
    defaults) as the mappings they show, and named tuples as their class
    and values (:class:`_Reducers`)."""
    import io
    import pickle

    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _dispatch_table()
    pickler.dump(value)
    return buffer.getvalue()


def loads(data: bytes, paths: dict[str, Any] | None = None) -> Any:
    """What :func:`dumps` pickled (only ever data this program pickled).
    ``paths`` (a session's :attr:`~skill_eval.linter.session.LintSession.path_table`):
    each path is that table's ``Path`` of its text, added when new. A language
    server holding 10,000 probes' findings and facts had every file's path
    twice or more, each ``Path`` with its own list of parts (docs/performance.md)."""
    import pickle

    if paths is None:
        return pickle.loads(data)
    _LOADING.paths = paths
    try:
        return pickle.loads(data)
    finally:
        _LOADING.paths = None


_LOADING = threading.local()
"""The path table of the :func:`loads` running in this thread, if any."""


def path_of(kind: type, text: str):
    """The path ``text`` as ``kind`` (how :func:`dumps` pickles a path): the
    one of the path table :func:`loads` was given, if any."""
    table = getattr(_LOADING, "paths", None)
    if table is None:
        return kind(text)
    found = table.get(text)
    if found is None or type(found) is not kind:
        found = table[text] = kind(text)
    return found


_TABLE: list[dict] = []


class _Reducers(dict):
    """The pickler's dispatch table (type -> reducer), which gives every named
    tuple class the reducer :meth:`named_tuple` when first met. Pickle's own
    way goes through the object's ``__reduce_ex__`` and the class's
    ``__getnewargs__``, a Python method, for every named tuple (a cache of
    10,000 probes holds ~45,000: findings, spans, facts): a slower pickle,
    for the same bytes (docs/performance.md). Any other type met (an ``array``)
    gets :meth:`as_pickle_would`, what pickle does without a table entry,
    so that it is looked up here once, not missed at every object."""

    def __init__(self, entries: dict) -> None:
        import copyreg
        import pickle

        super().__init__(entries)
        self._newobj = copyreg.__newobj__
        self._protocol = pickle.HIGHEST_PROTOCOL

    def __missing__(self, kind: type):
        if issubclass(kind, type):
            raise KeyError(kind)  # a class whose metaclass is not type: pickle saves it by name
        reducer = self.named_tuple if _plain_named_tuple(kind) else self.as_pickle_would
        self[kind] = reducer
        return reducer

    def named_tuple(self, value: tuple) -> tuple:
        """A named tuple reduced as pickle reduces it (``copyreg.__newobj__``:
        its class and values, pickled as ``NEWOBJ``, the same bytes), without
        the calls to its ``__reduce_ex__`` and Python-level ``__getnewargs__``."""
        return self._newobj, (type(value), *value)

    def as_pickle_would(self, value: object):
        """What pickle reduces ``value`` to without a dispatch table entry."""
        return value.__reduce_ex__(self._protocol)


def _plain_named_tuple(kind: type) -> bool:
    """Whether ``kind`` is a named tuple class whose instances are their
    values alone: no instance ``__dict__`` (a subclass without ``__slots__``
    could carry attributes), and pickled as every named tuple is (no
    ``__reduce__``, ``__reduce_ex__`` or ``__getnewargs__`` of its own)."""
    getnewargs = getattr(kind, "__getnewargs__", None)
    return (issubclass(kind, tuple) and hasattr(kind, "_fields") and kind.__dictoffset__ == 0
            and getattr(getnewargs, "__code__", None) is _named_tuple_getnewargs()
            and kind.__reduce_ex__ is tuple.__reduce_ex__ and kind.__reduce__ is tuple.__reduce__)


def _named_tuple_getnewargs():
    """The code of the ``__getnewargs__`` :func:`collections.namedtuple` gives every class."""
    from collections import namedtuple

    return namedtuple("Probe", "value").__getnewargs__.__code__


def _dispatch_table() -> dict:
    if not _TABLE:
        import copyreg
        from pathlib import PosixPath, WindowsPath
        from types import MappingProxyType

        table = _Reducers(copyreg.dispatch_table)
        table[PosixPath] = table[WindowsPath] = _path_as_text
        table[MappingProxyType] = _read_only_mapping
        _TABLE.append(table)
    return _TABLE[0]


def _path_as_text(path) -> tuple:
    return path_of, (type(path), str(path))


def _read_only_mapping(mapping) -> tuple:
    return read_only_mapping, (dict(mapping),)


def read_only_mapping(items: dict):
    """A read-only view of ``items`` (what a pickled one is loaded as)."""
    from types import MappingProxyType

    return MappingProxyType(items)
