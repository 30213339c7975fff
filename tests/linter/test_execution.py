"""The executor (:mod:`skill_eval.linter.execution`): every unit's result
exactly once, whatever the workers do, and the same findings whichever way
the workers start."""

from __future__ import annotations

import enum
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

import pytest
from _large_workspace import copy_examples_with_probes

from skill_eval.linter import engine, execution
from skill_eval.linter.engine import PROBE, Plan, lint_paths
from skill_eval.linter.execution import guided_chunks, run_in_chunks
from skill_eval.linter.session import LintSession
from skill_eval.linter.workspace import discover
from skill_eval.linter.config import load_config
from skill_eval.linter.reader import FileSystemReader
from skill_eval.linter.textfile import Position, Span

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "lint"

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked here")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return copy_examples_with_probes(tmp_path_factory.mktemp("execution") / "ws", 40)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execution, "PARALLEL_MIN_WORK", 1)
    monkeypatch.setattr(execution, "SMALLEST_CHUNK", 2)


def _units(root: Path) -> tuple[LintSession, list, Plan]:
    session = LintSession(root, load_config(root), FileSystemReader())
    probes = sorted(discover(root, FileSystemReader()).probes)
    return session, [(PROBE, path) for path in probes], Plan(session.config)


def _results(root: Path, jobs: int, **options) -> list:
    session, units, plan = _units(root)
    chunks = list(run_in_chunks(session, units, plan, jobs=jobs, **options))
    return [(unit, result.diagnostics, result.facts) for chunk in chunks for unit, result in chunk]


def _by_unit(results: list) -> dict:
    by_unit = {}
    for unit, diagnostics, facts in results:
        assert unit not in by_unit, f"{unit} reported twice"
        by_unit[unit] = (diagnostics, facts)
    return by_unit


def test_every_unit_once_from_this_process_and_a_worker(workspace: Path, small_chunks: None) -> None:
    serial = _by_unit(_results(workspace, jobs=1))
    pids = []
    original = engine.lint_units_here

    def noting(session, units, plan, record):
        pids.append(os.getpid())
        return original(session, units, plan, record)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "lint_units_here", noting)
        shared = _by_unit(_results(workspace, jobs=2))
    assert shared == serial
    assert len(serial) > 40
    assert os.getpid() in pids, "this process linted a share"


def test_a_worker_killed_mid_run_loses_no_unit(workspace: Path, small_chunks: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that dies (killed, out of memory) breaks the pool: the chunks
    it and the pool held are linted here, each once."""
    serial = _by_unit(_results(workspace, jobs=1))
    parent = os.getpid()
    original = engine.lint_units_here

    def dies_in_a_worker(session, units, plan, record):
        if os.getpid() != parent:
            os.kill(os.getpid(), 9)
        return original(session, units, plan, record)

    monkeypatch.setattr(engine, "lint_units_here", dies_in_a_worker)
    assert _by_unit(_results(workspace, jobs=2)) == serial


def test_a_worker_that_dies_after_some_chunks_loses_and_repeats_none(workspace: Path, small_chunks: None,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    serial = _by_unit(_results(workspace, jobs=1))
    parent = os.getpid()
    original = engine.lint_units_here
    done = []

    def dies_on_its_third_chunk(session, units, plan, record):
        if os.getpid() != parent:
            done.append(1)
            if len(done) == 3:
                os._exit(3)
        return original(session, units, plan, record)

    monkeypatch.setattr(engine, "lint_units_here", dies_on_its_third_chunk)
    assert _by_unit(_results(workspace, jobs=2)) == serial


def test_a_chunk_that_raises_in_a_worker_is_linted_here(workspace: Path, small_chunks: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Here it raises as it would without workers: an engine bug surfaces
    once, with its traceback, rather than being lost in a worker."""
    serial = _by_unit(_results(workspace, jobs=1))
    parent = os.getpid()
    original = engine.lint_units_here

    def raises_in_a_worker(session, units, plan, record):
        if os.getpid() != parent:
            raise RuntimeError("worker only")
        return original(session, units, plan, record)

    monkeypatch.setattr(engine, "lint_units_here", raises_in_a_worker)
    assert _by_unit(_results(workspace, jobs=2)) == serial

    def raises_everywhere(session, units, plan, record):
        raise RuntimeError("fails everywhere")

    monkeypatch.setattr(engine, "lint_units_here", raises_everywhere)
    with pytest.raises(RuntimeError, match="fails everywhere"):
        _results(workspace, jobs=2)


def test_workers_alone_lint_everything(workspace: Path, small_chunks: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The language server's way (``here=False``): no chunk is linted here
    unless the pool breaks."""
    serial = _by_unit(_results(workspace, jobs=1))
    parent = os.getpid()
    here = []
    original = engine.lint_units_here

    def noting(session, units, plan, record):
        if os.getpid() == parent:
            here.append(units)
        return original(session, units, plan, record)

    monkeypatch.setattr(engine, "lint_units_here", noting)
    assert _by_unit(_results(workspace, jobs=2, here=False)) == serial
    assert here == []


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
@pytest.mark.parametrize("case", [FIXTURES / "se501-reused-scenario", FIXTURES / "se006-duplicate-probe-id", ROOT / "examples"],
                         ids=lambda case: case.name)
def test_findings_do_not_depend_on_how_workers_start(case: Path, method: str, small_chunks: None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers started by ``spawn`` and ``forkserver`` are fresh interpreters
    (each with its own ``PYTHONHASHSEED``): their facts (SE501's 5-gram
    hashes) and findings equal those of this process."""
    full = lambda ds: [(d.code, d.path, d.span, d.message, d.related, d.fixes) for d in ds]  # noqa: E731
    from_pool = []
    original = execution.loads
    monkeypatch.setattr(execution, "loads", lambda data, *rest: from_pool.append(1) or original(data, *rest))
    serial = lint_paths([case], jobs=1).diagnostics
    assert full(lint_paths([case], jobs=2, start_method=method).diagnostics) == full(serial)
    assert from_pool, "no chunk came from a worker"


def test_5_gram_hashes_are_the_same_in_every_process() -> None:
    """SE501's hashes under three different string-hash seeds."""
    script = textwrap.dedent("""
        import sys
        from skill_eval.linter.rules.calibration.se501_reused_scenario import shingles
        print(sorted(shingles("The release train leaves at 16:00, and the on-call lead is waiting on this sign-off. "
                              "Überprüfung der Größe: naïve café résumé")))
    """)
    outputs = set()
    for seed in ("0", "1", "12345"):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        outputs.add(done.stdout)
    assert len(outputs) == 1 and len(outputs.pop()) > 100


def test_a_worker_not_forked_from_here_writes_nothing_to_standard_output(tmp_path: Path) -> None:
    """The language server's stdout carries the protocol: a fork server's
    worker writes what it prints to standard error."""
    script = textwrap.dedent(f"""
        from pathlib import Path
        from skill_eval.linter import execution
        from skill_eval.linter.config import Config
        from skill_eval.linter.reader import FileSystemReader
        from skill_eval.linter.session import LintSession
        session = LintSession(Path({str(tmp_path)!r}), Config(), FileSystemReader())
        execution._start_worker(execution.dumps(session.spec()), ("SE001",), None, False, True)
        print("from the worker")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout == ""
    assert "from the worker" in done.stderr


def test_a_process_with_threads_does_not_fork_its_workers() -> None:
    assert execution.start_method_for(threads=False) == "fork"
    assert execution.start_method_for(threads=True) == "forkserver"


def test_guided_chunks_cover_every_unit_once_largest_at_the_ends() -> None:
    for count in (0, 1, 15, 16, 17, 100, 1000, 10_000):
        for jobs in (2, 3, 8):
            bounds = guided_chunks(count, jobs, smallest=16)
            covered = [index for start, end in bounds for index in range(start, end)]
            assert covered == list(range(count))
            sizes = [end - start for start, end in bounds]
            if sizes:
                assert sizes[0] == max(sizes)
                assert sum(1 for size in sizes if size < 16) <= 1, sizes  # the remainder


class _Pair(NamedTuple):
    first: int
    second: str


class _PairWithAttributes(_Pair):
    """A named tuple subclass without ``__slots__``: its instances carry a ``__dict__``."""


class _PairReducedItsWay(NamedTuple):
    value: int

    def __reduce__(self):
        return _PairReducedItsWay, (self.value + 1,)


class _Tone(enum.IntEnum):
    LOW = 1


def test_what_workers_and_the_cache_pickle_loads_as_it_was() -> None:
    """dumps/loads keep every kind of value the executor and the cache send:
    named tuples (given the C-level reducer), a subclass whose instances hold
    attributes and a class with its own ``__reduce__`` (each pickled its own
    way), arrays, enums, paths and read-only mappings, nested."""
    from array import array
    from types import MappingProxyType

    extended = _PairWithAttributes(2, "b")
    extended.note = "kept"
    value = {
        "pair": _Pair(1, "a"),
        "extended": extended,
        "own": _PairReducedItsWay(5),
        "span": Span(Path("/w/q.md"), Position(1, 2), Position(3, 4)),
        "grams": array("I", [3, 1, 2]),
        "tone": _Tone.LOW,
        "mapping": MappingProxyType({"a": (1, 2)}),
        "nested": [(_Pair(3, "c"), frozenset({4}))],
    }
    back = execution.loads(execution.dumps(value))
    assert back["pair"] == _Pair(1, "a") and type(back["pair"]) is _Pair
    assert back["extended"] == (2, "b") and back["extended"].note == "kept"
    assert back["own"] == _PairReducedItsWay(6)  # its __reduce__ was used
    assert back["span"] == value["span"] and back["grams"] == value["grams"] and back["tone"] is _Tone.LOW
    assert dict(back["mapping"]) == {"a": (1, 2)} and back["nested"] == value["nested"]
    table = execution._dispatch_table()
    assert table[_Pair] == table.named_tuple and table[Span] == table.named_tuple
    # the same bytes as pickle's own way, which only skips its Python-level calls
    assert execution.dumps(value["span"]) == _pickled_without_table(value["span"])
    assert table[_PairWithAttributes] != table.named_tuple
    assert table[_PairReducedItsWay] != table.named_tuple


def _pickled_without_table(value) -> bytes:
    """``value`` pickled as :func:`execution.dumps` pickles it, minus the named
    tuples' reducer (paths are reduced alike)."""
    import copyreg
    import io
    import pickle

    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    table = copyreg.dispatch_table.copy()
    table[type(Path("/"))] = execution._path_as_text
    pickler.dispatch_table = table
    pickler.dump(value)
    return buffer.getvalue()


def test_a_forked_call_runs_in_a_child_that_sees_this_process_memory() -> None:
    """:func:`execution.run_forked`: the call runs in another process, on the
    data this one held at the fork (nothing of it pickled), and its result
    comes back; with another thread running (the language server), nothing
    is forked and the caller does the work."""
    import threading

    held = list(range(100_000))
    future = execution.run_forked(lambda: (os.getpid(), sum(held)))
    assert future is not None
    child, total = future.result(timeout=60)
    assert child != os.getpid() and total == sum(range(100_000))
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert execution.run_forked(lambda: 1) is None
    finally:
        stop.set()
        thread.join()
