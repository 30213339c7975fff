#!/usr/bin/env python3
"""Wall time of ``skill-eval-lint`` on benchmark trees, with skillsaw as reference.

usage: python benchmarks/lint_bench.py [--cases cold,warm,precommit] [--sizes 1000,10000] [--runs 5]
                                       [--precommit-sizes 10000]
                                       [--lint EXE] [--no-skillsaw] [--as-is] [--work DIR]

Trees come from ``benchmarks/make_bench_corpus.py`` (deterministic: same
arguments, same bytes). Each measurement is a fresh process timed from spawn
to exit; the median of ``--runs`` is printed with the minimum, and
skillsaw's runs alternate with ours (up to 1,000 probes, as many; above,
three), since this machine's speed drifts within a minute. Cases:

* ``cold``: each of ``--sizes``, nothing cached: ``--no-cache`` up to 1,000
  probes; above, with the cache on but emptied before each run (a first run,
  writing the cache included);
* ``warm``: 1,000 probes again, the cache the previous run left,
  :data:`SETTLED` seconds later (the floor: reading and hashing the files,
  or their ``stat``);
* ``precommit``: 10,000 probes (each of ``--precommit-sizes``), warm cache
  (:data:`SETTLED` seconds old), then two question.md and one probe.json
  changed before each run and only those three named, as pre-commit runs
  the hook.

What is timed is a regular install of this tree (refreshed in a cache venv
under ``$XDG_CACHE_HOME/skill-eval-bench``), as users run it; ``--lint``
times another ``skill-eval-lint`` (an older version for a baseline: one
without ``--no-cache`` has no cache, and is timed as it is) and ``--as-is``
the one beside this interpreter. skillsaw 0.22, the closest existing skill
linter, runs on the same trees as the reference; it is installed into a
cache venv on first use (PyPI access needed once).

Goals on the 2-core reference machine are in docs/performance.md, with the
figures measured.
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
CORPUS_SCRIPT = Path(__file__).resolve().with_name("make_bench_corpus.py")
"""The benchmark corpus generator, shipped beside this script (benchmarks/make_bench_corpus.py)."""
"""Beside the checkout (CI's layout), or above it (a worktree of a checkout)."""
SKILLSAW_VERSION = "0.22.0"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "skill-eval-bench"
SETTLED = 2.5
"""Seconds between filling the cache and the timed runs of the warm and
pre-commit cases: a run that creates ``.skill-eval-cache/`` changes the
workspace root's folder, and the cache trusts a folder's ``stat`` (its walk
record) only once its last change is ``RACY_SECONDS`` (2 s) old, as a repeat
run seconds or minutes later finds it; the runs timed right after the first
would walk the workspace again (1,000 probes: ~0.03 s more)."""


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


def time_commands(ours: list[str], theirs: list[str] | None, runs: int, their_runs: int, before=None):
    """``(median, min)`` of each command, the runs alternating (ours, theirs,
    ours, ...): this machine's speed drifts by up to ±30% within a minute, so
    timing one command's runs after the other's skews their ratio.
    ``before(index)`` runs (untimed) before each of ours."""
    mine, other = [], []
    for index in range(runs):
        if before is not None:
            before(index)
        mine.append(wall_time(ours))
        if theirs is not None and index < their_runs:
            other.append(wall_time(theirs))
    summary = (statistics.median(mine), min(mine))
    return summary, (statistics.median(other), min(other)) if other else None


def has_cache(lint: list[str]) -> bool:
    """Whether this ``skill-eval-lint`` has the on-disk cache (``--no-cache``)."""
    found = subprocess.run([*lint, "--help"], capture_output=True, text=True)
    return "--no-cache" in found.stdout


def clear_cache(tree: Path) -> None:
    shutil.rmtree(tree / ".skill-eval-cache", ignore_errors=True)


def changed_files(tree: Path) -> list[Path]:
    """Two question.md and one probe.json, of probes of different skills."""
    probes = sorted(tree.glob("skills/*/evals/probes/*/probe.json"))
    return [probes[len(probes) // 3].parent / "question.md", probes[len(probes) // 2].parent / "question.md",
            probes[(2 * len(probes)) // 3]]


def change(paths: list[Path], index: int) -> None:
    """A new version of each file (a line added or dropped at its end: same
    findings, other content)."""
    for path in paths:
        text = path.read_text(encoding="utf-8")
        marker = "\n" if path.suffix == ".json" else "\nEdited.\n"
        text = text[: -len(marker)] if text.endswith(marker) and index % 2 else text + marker
        path.write_text(text, encoding="utf-8")


def report(label: str, ours, theirs) -> None:
    line = f"{label:<34} {ours[0]:>8.3f} / {ours[1]:.3f} s"
    if theirs:
        line += f"  {theirs[0]:>8.3f} / {theirs[1]:.3f} s  {ours[0] / theirs[0]:>6.2f}x"
    print(line, flush=True)


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
    parser.add_argument("--cases", default="cold,warm,precommit", help="which cases (comma-separated)")
    parser.add_argument("--sizes", default="1000,10000", help="probe counts of the cold case (comma-separated)")
    parser.add_argument("--precommit-sizes", default="10000",
                        help="probe counts of the pre-commit case (comma-separated): how its time grows with the workspace")
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per measurement")
    parser.add_argument("--work", type=Path, help="where to build the trees (default: a temp folder)")
    parser.add_argument("--lint", help="time this skill-eval-lint instead of a regular install of this tree")
    parser.add_argument("--skillsaw", help="path of a skillsaw executable")
    parser.add_argument("--no-skillsaw", action="store_true", help="skip the reference")
    parser.add_argument("--as-is", action="store_true",
                        help="time the skill-eval-lint beside this interpreter (e.g. an editable install) "
                             "instead of a regular install of this tree")
    args = parser.parse_args()
    if not CORPUS_SCRIPT.is_file():
        print(f"benchmark corpus script not found at {CORPUS_SCRIPT}", file=sys.stderr)
        return 2
    if args.lint:
        lint = [args.lint]
    elif args.as_is:
        beside = Path(sys.executable).with_name("skill-eval-lint")
        lint = [str(beside) if beside.exists() else shutil.which("skill-eval-lint") or "skill-eval-lint"]
    else:
        lint = installed_copy()
    cached = has_cache(lint)
    print(f"timing: {lint[0]} ({'with' if cached else 'without'} the on-disk cache)", file=sys.stderr)
    reference = None if args.no_skillsaw else skillsaw_command(args.skillsaw)
    work = args.work or Path(tempfile.mkdtemp(prefix="skill-eval-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    cases = args.cases.split(",")
    quiet = ["--exit-zero", "-q"]
    print(f"{'case':<34} {'skill-eval-lint (median / min)':>22}  {'skillsaw':>19}  {'ratio':>6}")
    if "cold" in cases:
        for size in (int(s) for s in args.sizes.split(",")):
            tree = make_tree(work, size)
            clear_cache(tree)
            their_runs = args.runs if size <= 1000 else max(1, min(args.runs, 3))  # skillsaw takes ~6 s at 10,000
            if size <= 1000 or not cached:
                command, before, how = [*lint, str(tree), *quiet, *(["--no-cache"] if cached else [])], None, "--no-cache"
            else:
                command, before, how = [*lint, str(tree), *quiet], lambda _index: clear_cache(tree), "empty cache"
            ours, theirs = time_commands(command, [*reference, "lint", str(tree)] if reference else None, args.runs,
                                         their_runs, before)
            report(f"{size:,} probes, cold ({how if cached else 'no cache'})", ours, theirs)
    if "warm" in cases:
        tree = make_tree(work, 1000)
        clear_cache(tree)
        wall_time([*lint, str(tree), *quiet])  # fills the cache
        time.sleep(SETTLED)
        ours, theirs = time_commands([*lint, str(tree), *quiet], [*reference, "lint", str(tree)] if reference else None,
                                     args.runs, args.runs)
        report("1,000 probes, repeat (warm cache)", ours, theirs)
    if "precommit" in cases:
        for size in (int(s) for s in args.precommit_sizes.split(",")):
            tree = make_tree(work, size)
            clear_cache(tree)
            wall_time([*lint, str(tree), *quiet])  # fills the cache
            time.sleep(SETTLED)
            paths = changed_files(tree)
            ours, _theirs = time_commands([*lint, *map(str, paths), *quiet], None, max(args.runs, 7), 0,
                                          lambda index: change(paths, index))
            change(paths, 1)  # the files as they were (an odd index drops the added line)
            report(f"{size:,} probes, 3 changed files", ours, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
