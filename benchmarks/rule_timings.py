#!/usr/bin/env python3
"""Per-rule wall time of one in-process lint, to find where the time goes.

usage: python benchmarks/rule_timings.py TREE [--repeat 2]

Files are read and parsed lazily, so the first rule that touches a file pays
for loading it: read the first run as "rule + the loads it triggered" and the
second (same session, caches warm) as the rule alone.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from skill_eval.linter import engine
from skill_eval.linter.config import load_config
from skill_eval.linter.context import LintSession
from skill_eval.linter.reader import FileSystemReader
from skill_eval.linter.workspace import discover, find_workspace_root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    root = find_workspace_root(args.tree)
    reader = FileSystemReader()
    start = time.perf_counter()
    targets = discover(args.tree, reader)
    print(f"discovery: {(time.perf_counter() - start) * 1000:.0f} ms ({len(targets.probes)} probes)")
    session = LintSession(root, load_config(root), reader)
    original_run = engine._run
    totals: dict[str, float] = defaultdict(float)

    def timed_run(rule, context, path, folder):
        begin = time.perf_counter()
        try:
            return original_run(rule, context, path, folder)
        finally:
            totals[rule.code] += time.perf_counter() - begin

    engine._run = timed_run
    try:
        for attempt in range(1, args.repeat + 1):
            totals.clear()
            begin = time.perf_counter()
            diagnostics, _checked = engine.lint_targets(session, targets)
            elapsed = time.perf_counter() - begin
            print(f"\nrun {attempt}: {elapsed * 1000:.0f} ms, {len(diagnostics)} diagnostics")
            for code, seconds in sorted(totals.items(), key=lambda item: -item[1])[:15]:
                print(f"  {code}  {seconds * 1000:8.1f} ms")
    finally:
        engine._run = original_run
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
