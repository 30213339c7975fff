#!/usr/bin/env python3
"""Where a lint of a few changed files in a large workspace spends its time.

usage: python benchmarks/precommit_floor.py [--probes 10000] [--python PYTHON] [--work DIR] [--runs 5]

The pre-commit goal of issue 29 is 0.5 s for 3 changed files in a
10,000-probe workspace with a warm cache. This script measures:

* the parts no design of a process started per run can skip, each on its
  own: starting the interpreter (``python -I -S -c pass`` and ``python -c
  pass``); importing the command line and engine, the rule registry (a
  changed probe is linted by every rule) and pyromark (its SKILL.md's
  headings); telling which files changed, as an ``lstat`` of every file the
  other probes' findings and facts depend on (each probe.json and
  question.md, each SKILL.md and output-spec.md), in a Python loop;
* the CLI's own pre-commit run by stage, as ``lint_bench.py``'s pre-commit
  case runs it (cache filled by a whole lint, :data:`~lint_bench.SETTLED`
  seconds old, then two question.md and one probe.json changed and only
  those three named): CPU seconds of each stage in a fresh process, each
  stage's own time without the stages it calls (the walk of the workspace,
  the sort of its probes, reading the cache file or its index, looking up
  each unit's entry (reading and decoding it), telling
  whether each recorded answer is still the answer, the workspace-wide
  rules, writing the cache), the rest of the run, and the whole process;
* a resident process (the engine in this process, the workspace linted
  once): that ``lstat`` pass, then two question.md changed and their probes
  linted again with the workspace-wide rules.

``--python`` is the interpreter of the install to time (a regular install:
see docs/performance.md); this script's own interpreter needs
``skill_eval`` importable for the resident part (it re-runs itself under
``--python`` for that and for each staged run). Figures are medians of
``--runs``. CPU time, unlike wall time, stays comparable on a loaded machine.
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
    ("pyromark", "import pyromark"),
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
            session.forget_many((Path(path),))
        lint_targets(session, Targets(probes={Path(path).parent / "probe.json" for path in changed}))
        scans.append(scanned - start)
        relints.append(time.perf_counter() - scanned)
    return {"full": full, "files": len(files), "scan": statistics.median(scans), "relint": statistics.median(relints)}


STAGES = (
    ("engine", "discover", "walk of the workspace (discover)"),
    ("engine", "sorted_paths", "sort of its probes"),
    ("cache", "Cache._load", "cache file (or its index) read and decoded"),
    ("cache", "Cache.lookup", "cache entries looked up (read, decoded)"),
    ("cache", "Cache._answer_now", "recorded answers asked again"),
    ("engine", "_workspace_pass", "workspace-wide rules"),
    ("cache", "Cache.save", "cache file written"),
)
"""``(module of skill_eval.linter, attribute, label)`` of each stage timed in
a staged run; one the engine no longer has is left out of the report."""


def staged_run(argv: list[str]) -> dict:
    """One CLI run of ``argv`` in this process (started for it), with the CPU
    seconds of each of :data:`STAGES` (exclusive of the stages it calls) and
    of the imports before it; run inside ``--python``'s interpreter."""
    import importlib
    import resource

    start = time.process_time()
    from skill_eval.linter import cache, cli, engine, rules  # noqa: F401 - imported here to be timed

    imported = time.process_time() - start
    import gc

    gc.disable()  # as the console script does (skill_eval.linter.cli.entry)
    spent: dict[str, float] = {}
    nested: list[float] = []

    def timed(function, label):
        def stage(*args, **kwargs):
            began = time.process_time()
            nested.append(0.0)
            try:
                return function(*args, **kwargs)
            finally:
                inner, total = nested.pop(), time.process_time() - began
                spent[label] = spent.get(label, 0.0) + total - inner
                if nested:
                    nested[-1] += total
        return stage

    for module_name, attribute, label in STAGES:
        owner = importlib.import_module(f"skill_eval.linter.{module_name}")
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        if owner is not None and hasattr(owner, name):
            setattr(owner, name, timed(getattr(owner, name), label))
    begun = time.process_time()
    with open(os.devnull, "w") as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            cli.main(argv)
        finally:
            sys.stdout = stdout
    ran = time.process_time() - begun
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"imports": imported, "run": ran, "stages": spent, "process": usage.ru_utime + usage.ru_stime}


def staged(python: str, tree: Path, runs: int) -> dict:
    """Medians of ``runs`` staged pre-commit runs of ``tree`` under ``python``."""
    from lint_bench import SETTLED, change, changed_files

    subprocess.run([python, "-m", "skill_eval.linter.cli", str(tree), "--exit-zero", "-q"], check=True,
                   stdout=subprocess.DEVNULL)  # fills the cache
    time.sleep(SETTLED)
    paths = changed_files(tree)
    found = []
    try:
        for index in range(runs):
            change(paths, index)
            done = subprocess.run([python, __file__, "--staged-run", *map(str, paths), "--exit-zero", "-q"],
                                  check=True, capture_output=True, text=True)
            found.append(json.loads(done.stdout))
    finally:
        if runs % 2:
            change(paths, 1)  # the files as they were (an odd index drops the added line)
    labels = [label for _module, _attribute, label in STAGES if any(label in run["stages"] for run in found)]
    stages = {label: statistics.median(run["stages"].get(label, 0.0) for run in found) for label in labels}
    rest = statistics.median(run["run"] - sum(run["stages"].values()) for run in found)
    return {"imports": statistics.median(run["imports"] for run in found), "stages": stages, "rest": rest,
            "run": statistics.median(run["run"] for run in found),
            "process": statistics.median(run["process"] for run in found)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=10_000)
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the install to time")
    parser.add_argument("--work", type=Path, help="where to build the tree (default: a temp folder)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--resident-in", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--staged-run", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.staged_run is not None:
        print(json.dumps(staged_run(args.staged_run)))
        return 0
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
    run = staged(args.python, tree, args.runs)
    print("the CLI's pre-commit run, 3 changed files, warm cache (CPU, fresh process):")
    print(f"  imports (command line, engine, rules, cache)     {run['imports'] * 1000:6.1f} ms")
    for label, seconds in run["stages"].items():
        print(f"  {label:<48} {seconds * 1000:6.1f} ms")
    print(f"  {'the rest (lazy imports, units, findings, output)':<48} {run['rest'] * 1000:6.1f} ms")
    print(f"  = run {run['run'] * 1000:.0f} ms; the whole process {run['process'] * 1000:.0f} ms (with the interpreter's start)")
    print(f"resident process (workspace linted once in {found['full']:.1f} s): lstat pass {found['scan'] * 1000:.0f} ms"
          f" + two probes linted again with the workspace-wide rules {found['relint'] * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
