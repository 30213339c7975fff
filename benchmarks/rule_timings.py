#!/usr/bin/env python3
"""Per-rule wall time of one in-process lint, to find where the time goes.

usage: python benchmarks/rule_timings.py TREE [--repeat 2]

Files are read and parsed lazily, so the first rule that touches a file pays
for loading it: read the first run as "rule + the loads it triggered" and the
second (same session, caches warm) as the rule alone.

Each rule's time is split by what it was doing: ``check`` of one probe, SKILL.md
or suite; ``check`` of the workspace (the reduce step, which the parallel CLI
runs in its main process after the workers: serial); and ``probe_facts`` (the
map step, per probe, in the workers).
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from skill_eval.linter import engine
from skill_eval.linter.config import load_config
from skill_eval.linter.context import LintSession, WorkspaceContext
from skill_eval.linter.rules import REGISTRY
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
    totals: dict[tuple[str, str], float] = defaultdict(float)

    def timed_run(rule, context, path, folder):
        begin = time.perf_counter()
        try:
            return original_run(rule, context, path, folder)
        finally:
            part = "workspace" if isinstance(context, WorkspaceContext) else "check"
            totals[rule.code, part] += time.perf_counter() - begin

    def timed_facts(rule_class):
        original = rule_class.probe_facts

        def probe_facts(self, probe):
            begin = time.perf_counter()
            try:
                return original(self, probe)
            finally:
                totals[self.code, "probe_facts"] += time.perf_counter() - begin

        return original, probe_facts

    facts_originals = {rule: timed_facts(rule) for rule in REGISTRY if rule.compares_probes()}
    engine._run = timed_run
    for rule, (_original, timed) in facts_originals.items():
        rule.probe_facts = timed
    try:
        for attempt in range(1, args.repeat + 1):
            totals.clear()
            begin = time.perf_counter()
            diagnostics, _checked = engine.lint_targets(session, targets)
            elapsed = time.perf_counter() - begin
            print(f"\nrun {attempt}: {elapsed * 1000:.0f} ms, {len(diagnostics)} diagnostics")
            for (code, part), seconds in sorted(totals.items(), key=lambda item: -item[1])[:15]:
                print(f"  {code} {part:<11} {seconds * 1000:8.1f} ms")
            session.probe_facts.clear()  # the next run computes the facts again, as this one did
    finally:
        engine._run = original_run
        for rule, (original, _timed) in facts_originals.items():
            rule.probe_facts = original
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
