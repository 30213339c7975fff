#!/usr/bin/env python3
"""Fuzz the engine for as long as you like, with fresh random inputs.

usage: python tests/fuzz/run_fuzz.py [--inputs 1000000] [--targets probe_json,raw_bytes,markdown,files]
                                     [--seed S] [--batch 10000] [--report FILE]

Runs the strategies of ``_fuzzing.py`` (hypothesis, generation only) in
batches, each with its own seed, the targets taking turns; after every batch
it prints the figures so far: inputs, exceptions escaping the API, SE000
findings, outside files opened, invalid reports, probes not linted beside a
fuzzed one, and the slowest input. Every problem found is printed with the
input that caused it (and written to ``--report`` as JSON when given). A
lint taking longer than ``_fuzzing.HANG_SECONDS`` counts as a hang: the
process prints every thread's stack and exits.

Exit status: 0 when nothing was found, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _fuzzing import (FuzzWorkspace, Figures, apply_layout, file_layouts, lint_input,  # noqa: E402
                      markdown_texts, probe_json_texts, raw_bytes)
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

TARGETS = ("probe_json", "raw_bytes", "markdown", "files")


def batch(target: str, workspace: FuzzWorkspace, figures: Figures, count: int, batch_seed: int) -> None:
    """``count`` inputs of ``target``."""
    chosen = settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
                      suppress_health_check=list(HealthCheck), print_blob=False)

    if target == "probe_json":
        @seed(batch_seed)
        @chosen
        @given(probe_json_texts())
        def run(case):
            raw, described = case
            workspace.put("probe.json", "regular", raw)
            lint_input(workspace, figures, described, render=figures.inputs % 4 == 0)
    elif target in ("raw_bytes", "markdown"):
        @seed(batch_seed)
        @chosen
        @given(raw_bytes() if target == "raw_bytes" else markdown_texts())
        def run(case):
            role, raw, described = case
            workspace.put(role, "regular", raw)
            lint_input(workspace, figures, described, render=figures.inputs % 4 == 0)
            workspace.reset([role])
    else:
        @seed(batch_seed)
        @chosen
        @given(file_layouts())
        def run(case):
            kinds, refs, described = case
            apply_layout(workspace, kinds, refs)
            lint_input(workspace, figures, described)
            workspace.reset(list(kinds) + (["probe.json"] if refs else []))

    run()
    workspace.reset()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=1_000_000)
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--seed", type=int, default=None, help="first batch's seed (default: random)")
    parser.add_argument("--batch", type=int, default=10_000, help="inputs per batch (one target, one seed)")
    parser.add_argument("--report", type=Path, help="write the problems found here as JSON")
    args = parser.parse_args()
    targets = [target.strip() for target in args.targets.split(",") if target.strip()]
    unknown = set(targets) - set(TARGETS)
    if unknown:
        parser.error(f"unknown targets {sorted(unknown)}; choose from {', '.join(TARGETS)}")
    first_seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"seed {first_seed}; {args.inputs:,} inputs over {', '.join(targets)}", flush=True)
    workspace = FuzzWorkspace()
    figures = Figures()
    reported = 0
    try:
        number = 0
        while figures.inputs < args.inputs:
            target = targets[number % len(targets)]
            count = min(args.batch, args.inputs - figures.inputs)
            batch(target, workspace, figures, count, first_seed + number)
            number += 1
            print(f"[{target}] {figures.summary()}", flush=True)
            for described, detail in figures.problems()[reported:]:
                print(f"  PROBLEM {described}\n    {detail[-800:]}", flush=True)
            reported = len(figures.problems())
    finally:
        workspace.close()
        if args.report:
            args.report.write_text(json.dumps({"summary": figures.summary(), "problems": figures.problems()}, indent=2),
                                   encoding="utf-8")
    return 1 if figures.problems() else 0


if __name__ == "__main__":
    raise SystemExit(main())
