"""Running units of work in this process or, as pylint's ``parallel.py``, in
contiguous chunks through a :class:`concurrent.futures.ProcessPoolExecutor`
``map`` (docs/performance.md). Start methods: ``fork`` for the CLI (one
thread), ``forkserver`` for the language server (which has threads), ``spawn``
where there is no ``fork``; findings never depend on it. A chunk whose result
never comes (its worker killed, or raising) is linted here, with the rest.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .records import UnitResult

if TYPE_CHECKING:  # pragma: no cover
    from .cache import Cache
    from .engine import Plan, Unit
    from .session import LintSession

ChunkResults = list[tuple[tuple[str, Path], UnitResult]]
"""What a worker sends back for a chunk: each unit with its result."""

PARALLEL_MIN_WORK = 120
"""Below this much work (a probe weighs one, a SKILL.md :data:`SKILL_WORK`),
the units are linted in this process: starting a pool costs more than it
saves (docs/performance.md)."""

SKILL_WORK = 10
"""What linting one SKILL.md weighs against a probe."""

SERIAL_CHUNK = 64
"""Units per chunk when everything is linted here (the language server
reports progress between chunks)."""

SMALLEST_CHUNK = 16
LARGEST_CHUNK = 200
"""Bounds of a chunk's size for the pool: :func:`chunk_size`."""

CHUNKS_PER_WORKER = 16
"""Chunks per worker: enough that no worker is left with a long last chunk
while the others wait (a chunk takes every n-th probe: costly probes cluster,
docs/performance.md)."""

PRELOAD = ["skill_eval.linter.engine", "skill_eval.linter.markdown", "skill_eval.linter.probejson",
           "pyromark", "yaml"]
"""What the fork server imports once for all its workers."""

FORK_PRELOAD = ["pyromark", "jsonschema_rs", "rapidfuzz.distance.Indel", "tree_sitter_json",
                "skill_eval.linter.rules.artifact._stance_words"]
"""What this process imports before it forks its workers, so that each does
not import it again (~60 ms of CPU per worker at the first chunk); this
process needs ``pyromark`` itself for the output-spec units it lints last."""


def start_method_for(threads: bool) -> str:
    """The start method for a pool started by a process that has other
    threads running (``threads``) or not: forking a process with threads can
    leave a lock held forever in the child."""
    if not hasattr(os, "fork"):
        return "spawn"
    return "forkserver" if threads else "fork"


def chunk_size(count: int, workers: int) -> int:
    """Units per chunk for ``count`` units over ``workers`` processes."""
    return min(LARGEST_CHUNK, max(SMALLEST_CHUNK, math.ceil(count / (CHUNKS_PER_WORKER * workers))))


def run_in_chunks(
    session: LintSession,
    units: Sequence[Unit],
    plan: Plan,
    *,
    workers: int = 0,
    cache: Cache | None = None,
) -> Iterator[list[tuple[Unit, UnitResult]]]:
    """``[(unit, result), ...]`` per chunk of ``units``, every unit exactly
    once: first those ``cache`` still holds (or, for a facts-only unit, the
    session has the facts of), then the rest computed, in a pool of
    ``workers`` processes when there are any and the work reaches
    :data:`PARALLEL_MIN_WORK`, else here. Probe facts are kept in
    ``session.probe_facts`` as they come; the output-spec units, which read
    them, are linted last, here. With ``cache``, every query a computed unit
    asks is recorded and its result stored there."""
    served: list[tuple[Unit, UnitResult]] = []
    pending: list[Unit] = []
    specs: list[Unit] = []
    facts_only = not plan.checks["probe"]
    # output-spec units last: their cached answers name the probes' references,
    # read from the facts the probes before them left in the session
    for unit in sorted(units, key=lambda unit: unit[0] == "spec"):
        if unit[0] == "facts" or (facts_only and unit[0] == "probe"):
            known = session.probe_facts.get(unit[1])
            if known is not None:  # computed earlier in this session (the language server's)
                served.append((unit, UnitResult(None if unit[0] == "facts" else (), known)))
                continue
        found = cache.lookup(unit) if cache is not None else None
        if found is None:
            (specs if unit[0] == "spec" else pending).append(unit)
        else:
            served.append((unit, found))
            if found.facts is not None:
                session.probe_facts[unit[1]] = found.facts
    for start in range(0, len(served), SERIAL_CHUNK):
        yield served[start:start + SERIAL_CHUNK]
    yield from _computed(session, pending, plan, workers, cache)
    yield from _computed(session, specs, plan, 0, cache)


def _computed(session: LintSession, units: Sequence[Unit], plan: Plan, workers: int,
              cache: Cache | None) -> Iterator[list[tuple[Unit, UnitResult]]]:
    """:func:`run_in_chunks` of the units it does not serve."""
    from .engine import lint_units_here

    record = cache is not None
    if workers < 1 or sum(SKILL_WORK if kind == "skill" else 1 for kind, _path in units) < PARALLEL_MIN_WORK:
        chunks = (lint_units_here(session, units[start:start + SERIAL_CHUNK], plan, record)
                  for start in range(0, len(units), SERIAL_CHUNK))
    else:
        probes = [unit for unit in units if unit[0] != "skill"]
        count = math.ceil(len(probes) / chunk_size(len(probes), workers))
        # every count-th probe: costly probes sit together (a skill whose artifacts are long), so that
        # slices in order left one worker with the costly last chunks while the other waited
        batches = [probes[first::count] for first in range(count)]
        skills = [unit for unit in units if unit[0] == "skill"]
        if skills:
            batches.insert(0, skills)  # the heaviest first, so that it does not finish last
        chunks = _map(session, batches, plan, workers, record)
    for chunk in chunks:
        if cache is not None:  # what it asked goes into the cache, encoded: not kept here as objects
            chunk = [(unit, cache.store(unit, result)) for unit, result in chunk]
        for unit, result in chunk:
            if result.facts is not None:
                session.probe_facts[unit[1]] = result.facts
        yield chunk


def _map(session: LintSession, chunks: list[list[Unit]], plan: Plan, workers: int,
         record: bool) -> Iterator[list[tuple[Unit, UnitResult]]]:
    """``executor.map`` of the chunks; from the first chunk whose result
    never comes, the rest are linted here."""
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor

    from .cache import CODEC
    from .engine import lint_units_here

    method = start_method_for(threading.active_count() > 1)
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(PRELOAD)
    if method == "fork":
        _share_before_fork(session)
    # a forked worker starts from this process's memory: it uses this session as it is now (nothing
    # is pickled); any other start gets what rebuilds an equivalent one
    pool = ProcessPoolExecutor(min(workers, len(chunks)), mp_context=context, initializer=_start_worker,
                               initargs=(session if method == "fork" else session.spec(), plan.scopes, record,
                                         method != "fork"))
    done = 0
    try:
        for data in pool.map(_lint_chunk, chunks):
            done += 1
            yield CODEC.decode(data, ChunkResults, session.path_of)
    except Exception:  # noqa: BLE001 - a worker killed or raising: this process lints the rest
        pass
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for chunk in chunks[done:]:
        yield lint_units_here(session, chunk, plan, record)


def _share_before_fork(session: LintSession) -> None:
    """Before forking workers: import :data:`FORK_PRELOAD`, and read and parse
    every SKILL.md and output-spec.md the walk found, once here, instead of
    once in each worker (each worker's probes read all of them) and again
    here for the output-spec units. Only the session's documents are filled,
    no context: each unit still asks (and records) its own reads."""
    from importlib import import_module

    from .context import markdown_of, output_spec_of
    from .textfile import TextDocument
    from .workspace import SKILL_FILE

    for name in FORK_PRELOAD:
        try:
            import_module(name)
        except ImportError:  # pragma: no cover - as the fork server's preload, a missing module is skipped
            pass
    for path in sorted(session.walked_fixtures):
        document = session.load(path)
        if not isinstance(document, TextDocument):
            continue
        if path.name == SKILL_FILE:
            markdown_of(document)
        else:
            output_spec_of(document)


_WORKER: dict[str, Any] = {}
"""A worker process's session, plan and whether it records (set once by :func:`_start_worker`)."""


def _start_worker(spec: tuple | LintSession, scopes: frozenset, record: bool, quiet_stdout: bool) -> None:
    """A worker's start: its session (the parent's own, when forked, else
    rebuilt from its :meth:`~skill_eval.linter.session.LintSession.spec`) and
    plan. A worker not forked from this process keeps its standard output off
    the parent's (the language server's protocol channel): it writes to
    standard error instead."""
    if quiet_stdout:
        os.dup2(2, 1)
    from .engine import Plan
    from .session import LintSession

    session = spec if isinstance(spec, LintSession) else LintSession(*spec)
    _WORKER.update(session=session, plan=Plan(session.config, scopes), record=record)


def _lint_chunk(units: list[Unit]) -> bytes:
    """One chunk in a worker: its results in the cache's codec
    (:data:`~skill_eval.linter.cache.CODEC`), which keeps each file's one
    ``Path`` on the other side."""
    from .cache import CODEC
    from .engine import lint_units_here

    return CODEC.encode(lint_units_here(_WORKER["session"], units, _WORKER["plan"], _WORKER["record"]))
