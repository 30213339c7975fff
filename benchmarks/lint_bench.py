#!/usr/bin/env python3
"""Cold-CLI wall time of ``skill-eval-lint`` on benchmark trees, with skillsaw as reference.

usage: python benchmarks/lint_bench.py [--sizes 10,1000,10000] [--runs 5] [--no-skillsaw] [--as-is]

Trees come from ``../shared/bench/make_bench_corpus.py`` (deterministic: same
arguments, same bytes). Each measurement is a fresh process (``cold``: no
warm interpreter, nothing cached between runs), timed from spawn to exit; the
median of ``--runs`` is printed with the minimum, and skillsaw's runs alternate
with ours (up to 1,000 probes, as many; above, three). What is timed is a regular
install of this tree (refreshed in a cache venv), as users run it; ``--as-is``
times the ``skill-eval-lint`` beside the interpreter instead. skillsaw 0.22 — the closest
existing skill linter — runs on the same tree as the reference; it is installed
into a cache venv on first use (PyPI access needed once).

Goals on the 2-core reference machine: 1,000 probes in <= 0.5x skillsaw's wall
time; 10 probes in <= 0.25 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS_SCRIPT = next((base / "shared" / "bench" / "make_bench_corpus.py" for base in ROOT.parents
                      if (base / "shared" / "bench" / "make_bench_corpus.py").is_file()),
                     ROOT.parent / "shared" / "bench" / "make_bench_corpus.py")
"""Beside the checkout (CI's layout), or above it (a worktree of a checkout)."""
SKILLSAW_VERSION = "0.22.0"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "skill-eval-bench"


def make_tree(out: Path, probes: int) -> Path:
    tree = out / f"bench-{probes}"
    if not tree.exists():
        skills = max(1, min(10, probes // 10))
        subprocess.run([sys.executable, str(CORPUS_SCRIPT), str(tree), "--probes", str(probes), "--skills", str(skills)],
                       check=True)
    return tree


def installed_copy() -> list[str]:
    """``skill-eval-lint`` of a regular (non-editable) install of this tree, in a
    cache venv refreshed on every call: what a user gets from ``pip install``.

    An editable install is not what users run, and under
    ``PYTHONDONTWRITEBYTECODE=1`` (set on some machines, this one included) its
    modules are compiled from source on every start, which costs ~0.1 s; pip
    compiles an installed copy's bytecode once, at install time.
    """
    import hashlib

    # one venv per checkout: two worktrees timed at once must not install over each other
    venv = CACHE / f"skill-eval-installed-{hashlib.sha256(str(ROOT).encode()).hexdigest()[:8]}"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(ROOT)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", "--force-reinstall", str(ROOT)],
                   check=True)
    return [str(venv / "bin" / "skill-eval-lint")]


def wall_time(argv: list[str]) -> float:
    """Seconds from spawning ``argv`` to its exit."""
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def time_commands(ours: list[str], theirs: list[str] | None, runs: int, their_runs: int):
    """``(median, min)`` of each command, the runs alternating (ours, theirs,
    ours, ...): this machine's speed drifts by up to ±30% within a minute, so
    timing one command's runs after the other's skews their ratio."""
    mine, other = [], []
    for index in range(runs):
        mine.append(wall_time(ours))
        if theirs is not None and index < their_runs:
            other.append(wall_time(theirs))
    summary = (statistics.median(mine), min(mine))
    return summary, (statistics.median(other), min(other)) if other else None


def skillsaw_command(explicit: str | None) -> list[str] | None:
    if explicit:
        return [explicit]
    found = shutil.which("skillsaw")
    if found:
        return [found]
    venv = CACHE / f"skillsaw-{SKILLSAW_VERSION}"
    executable = venv / "bin" / "skillsaw"
    if not executable.exists():
        print(f"installing skillsaw {SKILLSAW_VERSION} into {venv} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        result = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"skillsaw=={SKILLSAW_VERSION}"])
        if result.returncode != 0:
            print("could not install skillsaw; skipping the reference", file=sys.stderr)
            return None
    return [str(executable)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,1000,10000", help="probe counts (comma-separated)")
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per measurement")
    parser.add_argument("--work", type=Path, help="where to build the trees (default: a temp folder)")
    parser.add_argument("--skillsaw", help="path of a skillsaw executable")
    parser.add_argument("--no-skillsaw", action="store_true", help="skip the reference")
    parser.add_argument("--as-is", action="store_true",
                        help="time the skill-eval-lint beside this interpreter (e.g. an editable install) "
                             "instead of a regular install of this tree")
    args = parser.parse_args()
    if not CORPUS_SCRIPT.is_file():
        print(f"benchmark corpus script not found at {CORPUS_SCRIPT}", file=sys.stderr)
        return 2
    if args.as_is:
        beside = Path(sys.executable).with_name("skill-eval-lint")
        lint = [str(beside) if beside.exists() else shutil.which("skill-eval-lint") or "skill-eval-lint"]
    else:
        lint = installed_copy()
    print(f"timing: {lint[0]}", file=sys.stderr)
    reference = None if args.no_skillsaw else skillsaw_command(args.skillsaw)
    work = args.work or Path(tempfile.mkdtemp(prefix="skill-eval-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"{'probes':>7}  {'skill-eval-lint (median / min)':>32}  {'skillsaw (median / min)':>26}  {'ratio':>6}")
    for size in (int(s) for s in args.sizes.split(",")):
        tree = make_tree(work, size)
        their_runs = args.runs if size <= 1000 else max(1, min(args.runs, 3))  # skillsaw takes ~6 s at 10,000
        ours, theirs = time_commands([*lint, str(tree), "--exit-zero", "-q"],
                                     [*reference, "lint", str(tree)] if reference else None, args.runs, their_runs)
        line = f"{size:>7}  {ours[0]:>22.3f} / {ours[1]:.3f} s"
        if theirs:
            line += f"  {theirs[0]:>16.3f} / {theirs[1]:.3f} s  {ours[0] / theirs[0]:>6.2f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
