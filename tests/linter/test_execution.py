"""The executor (:mod:`skill_eval.linter.execution`): every unit's result
exactly once, whatever the workers do, and the same findings whichever way
the workers start."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _large_workspace import copy_examples_with_probes

from skill_eval.linter import engine, execution
from skill_eval.linter.engine import PROBE, Plan, lint_paths
from skill_eval.linter.execution import chunk_size, run_in_chunks
from skill_eval.linter.session import LintSession
from skill_eval.linter.workspace import discover
from skill_eval.linter.config import load_config
from skill_eval.linter.reader import FileSystemReader

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


def _results(root: Path, workers: int, **options) -> list:
    session, units, plan = _units(root)
    chunks = list(run_in_chunks(session, units, plan, workers=workers, **options))
    return [(unit, result.diagnostics, result.facts) for chunk in chunks for unit, result in chunk]


def _by_unit(results: list) -> dict:
    by_unit = {}
    for unit, diagnostics, facts in results:
        assert unit not in by_unit, f"{unit} reported twice"
        by_unit[unit] = (diagnostics, facts)
    return by_unit


def test_every_unit_once_from_the_workers(workspace: Path, small_chunks: None) -> None:
    serial = _by_unit(_results(workspace, workers=0))
    pids = []
    original = engine.lint_units_here

    def noting(session, units, plan, record):
        pids.append(os.getpid())
        return original(session, units, plan, record)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "lint_units_here", noting)
        shared = _by_unit(_results(workspace, workers=2))
    assert shared == serial
    assert len(serial) > 40
    assert os.getpid() not in pids, "the workers linted every chunk"


def test_a_worker_killed_mid_run_loses_no_unit(workspace: Path, small_chunks: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that dies (killed, out of memory) breaks the pool: the chunks
    it and the pool held are linted here, each once."""
    serial = _by_unit(_results(workspace, workers=0))
    parent = os.getpid()
    original = engine.lint_units_here

    def dies_in_a_worker(session, units, plan, record):
        if os.getpid() != parent:
            os.kill(os.getpid(), 9)
        return original(session, units, plan, record)

    monkeypatch.setattr(engine, "lint_units_here", dies_in_a_worker)
    assert _by_unit(_results(workspace, workers=2)) == serial


def test_a_worker_that_dies_after_some_chunks_loses_and_repeats_none(workspace: Path, small_chunks: None,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    serial = _by_unit(_results(workspace, workers=0))
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
    assert _by_unit(_results(workspace, workers=2)) == serial


def test_a_chunk_that_raises_in_a_worker_is_linted_here(workspace: Path, small_chunks: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Here it raises as it would without workers: an engine bug surfaces
    once, with its traceback, rather than being lost in a worker."""
    serial = _by_unit(_results(workspace, workers=0))
    parent = os.getpid()
    original = engine.lint_units_here

    def raises_in_a_worker(session, units, plan, record):
        if os.getpid() != parent:
            raise RuntimeError("worker only")
        return original(session, units, plan, record)

    monkeypatch.setattr(engine, "lint_units_here", raises_in_a_worker)
    assert _by_unit(_results(workspace, workers=2)) == serial

    def raises_everywhere(session, units, plan, record):
        raise RuntimeError("fails everywhere")

    monkeypatch.setattr(engine, "lint_units_here", raises_everywhere)
    with pytest.raises(RuntimeError, match="fails everywhere"):
        _results(workspace, workers=2)


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
@pytest.mark.parametrize("case", [FIXTURES / "se501-reused-scenario", FIXTURES / "se006-duplicate-probe-id", ROOT / "examples"],
                         ids=lambda case: case.name)
def test_findings_do_not_depend_on_how_workers_start(case: Path, method: str, small_chunks: None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers started by ``spawn`` and ``forkserver`` are fresh interpreters
    (each with its own ``PYTHONHASHSEED``): their facts (SE501's 5-gram
    hashes) and findings equal those of this process."""
    full = lambda ds: [(d.code, d.path, d.span, d.message, d.related, d.fixes) for d in ds]  # noqa: E731
    parent = os.getpid()
    original = engine.lint_units_here
    from_pool = []

    def noting(session, units, plan, record):
        found = original(session, units, plan, record)
        if os.getpid() != parent:
            os.write(write_end, b"1")
        return found

    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    monkeypatch.setattr(engine, "lint_units_here", noting)
    serial = lint_paths([case], jobs=1).diagnostics
    monkeypatch.setattr(execution, "start_method_for", lambda threads: method)
    assert full(lint_paths([case], jobs=2).diagnostics) == full(serial)
    if method == "fork":  # a worker started otherwise imports the engine afresh, without the patch
        from_pool = os.read(read_end, 1 << 16)
        assert from_pool, "no chunk came from a worker"
    os.close(read_end)
    os.close(write_end)


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
        execution._start_worker(session.spec(), None, False, True)
        print("from the worker")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout == ""
    assert "from the worker" in done.stderr


def test_a_process_with_threads_does_not_fork_its_workers() -> None:
    assert execution.start_method_for(threads=False) == "fork"
    assert execution.start_method_for(threads=True) == "forkserver"


def test_chunks_are_bounded_and_give_each_worker_several() -> None:
    for count in (1, 15, 16, 17, 100, 1000, 10_000):
        for workers in (1, 2, 3, 8):
            size = chunk_size(count, workers)
            assert execution.SMALLEST_CHUNK <= size <= execution.LARGEST_CHUNK
            if execution.SMALLEST_CHUNK < size < execution.LARGEST_CHUNK:
                assert -(-count // size) >= execution.CHUNKS_PER_WORKER * workers - 1
