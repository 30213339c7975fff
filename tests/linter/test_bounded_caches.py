"""What a process keeps of the artifacts it linted stays bounded: nothing derived
from an artifact outlives its lint (no cache keyed by content grows with them)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

from _workspaces import ARTIFACT, floor_probe, make_workspace

from skill_eval.linter.engine import lint_paths

WORDS = "export ledger gateway invoice queue retry batch timeout dashboard owner".split()


def _distinct_artifact(seed: int, kilobytes: int) -> str:
    rng = random.Random(seed)
    words = [f"{rng.choice(WORDS)}{rng.randrange(100_000)}" for _ in range(kilobytes * 1024 // 12)]
    prose = "\n\n".join(" ".join(words[i:i + 12]) + "." for i in range(0, len(words), 12))
    return ARTIFACT + "\n" + prose + "\n"


def test_linting_many_large_distinct_artifacts_keeps_a_bounded_amount(tmp_path: Path) -> None:
    """Distinct 60 KB artifacts, each linted by its own ``lint_paths`` call:
    once the caches are full (~250 artifacts), 100 more add next to nothing
    to what the process holds. With caches bounded by a count only, each
    artifact left ~0.6 MB behind: 100 more would add ~60 MB.

    The property is the plateau, not an absolute figure: how much the full
    caches hold (~50 MB resident here) depends on the allocator; a fixed
    ceiling on it failed by 2 MB on CI's machine and proved nothing more."""
    roots = [make_workspace(tmp_path / f"ws{n}", {"p": floor_probe("p")}, artifact=_distinct_artifact(n, 60))
             for n in range(354)]
    script = (
        "import gc, sys\n"
        "from skill_eval.linter.engine import lint_paths\n"
        "def rss():\n"
        "    return int(open('/proc/self/statm').read().split()[1]) * 4096\n"
        "roots = sys.argv[1:]\n"
        "for root in roots[:254]: lint_paths([root], jobs=1)  # imports, one-time tables, full caches\n"
        "gc.collect(); full = rss()\n"
        "for root in roots[254:]: lint_paths([root], jobs=1)\n"
        "gc.collect(); print(rss() - full)\n"
    )
    completed = subprocess.run([sys.executable, "-c", script, *map(str, roots)], capture_output=True, text=True,
                               timeout=600)
    assert completed.returncode == 0, completed.stderr
    grown = int(completed.stdout)
    assert grown < 8 * 1024 * 1024, f"{grown / 1e6:.1f} MB more resident after 100 more artifacts with full caches"
