#!/usr/bin/env python3
"""What any lint of a few changed files in a large workspace must spend.

usage: python benchmarks/precommit_floor.py [--probes 10000] [--python PYTHON] [--work DIR] [--runs 5]

The pre-commit goal of issue 15 is 0.15 s for 3 changed files in a
10,000-probe workspace. This script measures the parts no design of a
process started per run can skip, each on its own, and what a process that
stays resident would spend instead:

* starting the interpreter (``python -I -S -c pass`` and ``python -c pass``);
* importing the command line and engine, the rule registry (a changed probe
  is linted by every rule) and markdown-it-py (its SKILL.md's headings);
* telling which files changed: an ``lstat`` of every file the other
  probes' findings and facts depend on (each probe.json and question.md,
  each SKILL.md and output-spec.md), in a Python loop, compared with the
  signatures taken before;
* a resident process (the engine in this process, the workspace linted once):
  that ``lstat`` pass, then two question.md changed and their probes linted
  again with the workspace-wide rules.

``--python`` is the interpreter of the install to time (a regular install:
see docs/performance.md); this script's own interpreter needs
``skill_eval`` importable for the resident part (it re-runs itself under
``--python`` for that). Figures are medians of ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

IMPORT_STEPS = (
    ("command line and engine", "import skill_eval.linter.cli, skill_eval.linter.engine"),
    ("rule registry", "import skill_eval.linter.rules"),
    ("markdown-it-py", "import markdown_it"),
)


def median_seconds(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def import_costs(python: str, runs: int) -> list[tuple[str, float]]:
    """Each step's import time, in a fresh process where the steps before it
    are imported already (measured inside the process: no start-up)."""
    costs = []
    done = "import time"
    for label, statement in IMPORT_STEPS:
        program = (f"{done}\nstart = time.perf_counter()\n{statement}\n"
                   "print(time.perf_counter() - start)")
        samples = [float(subprocess.run([python, "-c", program], check=True, capture_output=True, text=True).stdout)
                   for _ in range(runs)]
        costs.append((label, statistics.median(samples)))
        done += "\n" + statement
    return costs


def resident(tree: Path, runs: int) -> dict:
    """The resident part, run inside ``--python``'s interpreter."""
    import gc

    gc.disable()
    from skill_eval.linter.config import resolve_config
    from skill_eval.linter.engine import lint_targets
    from skill_eval.linter.reader import FileSystemReader
    from skill_eval.linter.session import LintSession
    from skill_eval.linter.workspace import Exclusion, Targets, discover, sorted_paths

    config = resolve_config(tree, None, ())
    reader = FileSystemReader()
    walked = discover(tree, reader, exclude=Exclusion.of(config, tree))
    session = LintSession(tree, config, reader, sorted_paths(walked.probes), walked.skills | walked.output_specs,
                          pruned_folders=walked.pruned, walked_links=walked.links)
    start = time.perf_counter()
    lint_targets(session, walked)
    full = time.perf_counter() - start
    files = [str(path) for path in walked.probes] + [str(path.parent / "question.md") for path in walked.probes]
    files += [str(path) for path in walked.skills | walked.output_specs]

    def signature(path: str) -> tuple:
        found = os.lstat(path)
        return found.st_mtime_ns, found.st_ctime_ns, found.st_size, found.st_ino

    signatures = {path: signature(path) for path in files}
    probes = sorted_paths(walked.probes)
    edited = [probes[len(probes) // 3].parent / "question.md", probes[len(probes) // 2].parent / "question.md"]
    scans, relints = [], []
    for _ in range(runs):
        for path in edited:
            with open(path, "a", encoding="utf-8") as stream:
                stream.write("\n")
        start = time.perf_counter()
        changed = []
        for path in files:
            now = signature(path)
            if now != signatures[path]:
                signatures[path] = now
                changed.append(path)
        scanned = time.perf_counter()
        for path in changed:
            session.forget(Path(path))
        lint_targets(session, Targets(probes={Path(path).parent / "probe.json" for path in changed}))
        scans.append(scanned - start)
        relints.append(time.perf_counter() - scanned)
    return {"full": full, "files": len(files), "scan": statistics.median(scans), "relint": statistics.median(relints)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=10_000)
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the install to time")
    parser.add_argument("--work", type=Path, help="where to build the tree (default: a temp folder)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--resident-in", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.resident_in:
        print(json.dumps(resident(args.resident_in, args.runs)))
        return 0
    from lint_bench import CORPUS_SCRIPT, make_tree

    if not CORPUS_SCRIPT.is_file():
        print(f"benchmark corpus script not found at {CORPUS_SCRIPT}", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="skill-eval-floor-"))
    work.mkdir(parents=True, exist_ok=True)
    tree = make_tree(work, args.probes)
    print(f"{args.probes:,} probes; medians of {args.runs} runs; {args.python}")
    bare = median_seconds([args.python, "-I", "-S", "-c", "pass"], args.runs)
    plain = median_seconds([args.python, "-c", "pass"], args.runs)
    print(f"  interpreter start, -I -S / with site-packages   {bare * 1000:6.1f} / {plain * 1000:6.1f} ms")
    total = plain
    for label, seconds in import_costs(args.python, args.runs):
        total += seconds
        print(f"  import {label:<40} {seconds * 1000:6.1f} ms")
    found = json.loads(subprocess.run([args.python, __file__, "--resident-in", str(tree), "--runs", str(args.runs)],
                                      check=True, capture_output=True, text=True).stdout)
    total += found["scan"]
    print(f"  lstat of the {found['files']:,} files the facts depend on  {found['scan'] * 1000:6.1f} ms")
    print(f"  = {total * 1000:.0f} ms before a file is read, a probe linted or a cached fact loaded")
    print(f"resident process (workspace linted once in {found['full']:.1f} s): lstat pass {found['scan'] * 1000:.0f} ms"
          f" + two probes linted again with the workspace-wide rules {found['relint'] * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
