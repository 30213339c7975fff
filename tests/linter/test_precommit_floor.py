"""benchmarks/precommit_floor.py still runs against the engine it measures
(it drives internal entry points: a rename there would silently leave the
docs' floor figures unreproducible). Its figures are not checked: speed
goals live in benchmarks/, never in tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from lint_bench import CORPUS_SCRIPT  # noqa: E402


def test_the_corpus_generator_ships_in_the_repository() -> None:
    """The benchmarks and this test build their trees with the repository's own
    generator: nothing outside the checkout is needed."""
    assert CORPUS_SCRIPT == ROOT / "benchmarks" / "make_bench_corpus.py" and CORPUS_SCRIPT.is_file()


def test_precommit_floor_runs_on_a_small_workspace(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "precommit_floor.py"), "--probes", "12", "--runs", "1",
         "--work", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "lstat of the 26 files the facts depend on" in done.stdout  # 12 probe.json, 12 question.md, SKILL.md, output-spec.md
    assert "resident process" in done.stdout
