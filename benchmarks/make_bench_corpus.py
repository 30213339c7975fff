#!/usr/bin/env python3
"""Write a deterministic workspace of N probes for benchmarks.

usage: make_bench_corpus.py OUT_DIR [--probes N] [--skills K] [--seed S]

The workspace follows docs/spec/fixture-format.md: K skills, each with a
SKILL.md of 24 steps and an output-spec.md, and N probes spread over them.
About one probe in ten carries a lint finding (a drifted count, a
misanchored step or a signposting phrase), so a linter has output to write.
Artifacts are 20-38 lines of varied text: no two are near-duplicates.
Same arguments, same bytes.
"""
import argparse
import json
import random
from pathlib import Path

WORDS = (
    "account audit backlog batch billing build cache canary checkout cluster config "
    "coverage cron dashboard deploy digest disk endpoint export feature fixture flag "
    "gateway handler index invoice job ledger limit log merge metric migration mirror "
    "monitor node notice owner packet pager parser patch payload pipeline policy queue "
    "quota record region release replica report request retry review rollout route "
    "runbook sample schema scope secret service session shard signal snapshot socket "
    "source spike storage stream suite table tenant ticket timer token trace traffic "
    "upload usage vendor version volume webhook window worker"
).split()


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def skill_md(name, steps):
    out = [
        "---",
        f"name: {name}",
        f"description: Use when reviewing {name.replace('-', ' ')} reports.",
        "---",
        "",
        f"# {name.replace('-', ' ').title()}",
        "",
    ]
    for i, title in enumerate(steps, 1):
        out += [f"## Step {i}: {title}", ""]
        out += [
            f"Check each item of the report against step {i}. When an item fails,",
            "the `verdict` is `NOT_PROVEN` and the item goes in `unproven`.",
            "Otherwise the `verdict` is `PASS`.",
            "",
            "- Read the whole report before deciding.",
            "- Name every failing item.",
            "",
            "```",
            "verdict: NOT_PROVEN",
            "unproven: 2",
            "```",
            "",
        ]
    return "\n".join(out)


OUTPUT_SPEC = """# Output spec

## `verdict`
Values: `PASS`, `NOT_PROVEN`, `FAIL`

## `unproven`
Aliases: `unproven_items`

The items that lack proof.
"""


def artifact(rng, pid, quote):
    lines = [f"# Report {pid}", "", sentence(rng, 12), ""]
    lines += ["| # | item | evidence |", "|---|---|---|"]
    rows = rng.randint(6, 14)
    at = rng.randrange(rows)
    for r in range(rows):
        ev = quote if r == at else sentence(rng, rng.randint(5, 10))
        lines.append(f"| {r + 1} | {sentence(rng, 4)} | {ev} |")
    lines.append("")
    for _ in range(rng.randint(4, 12)):
        lines.append(f"- {sentence(rng, rng.randint(6, 12))}")
    lines += ["", sentence(rng, 10)]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--probes", type=int, default=1000)
    ap.add_argument("--skills", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    root = Path(a.out)
    (root / "skill-eval.toml").parent.mkdir(parents=True, exist_ok=True)
    (root / "skill-eval.toml").write_text("# benchmark workspace\n")
    skills = []
    for k in range(a.skills):
        name = f"bench-skill-{k:02d}"
        steps = [f"{rng.choice(WORDS)} the {rng.choice(WORDS)} {rng.choice(WORDS)} {i}" for i in range(1, 25)]
        d = root / "skills" / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "SKILL.md").write_text(skill_md(name, steps))
        (d / "output-spec.md").write_text(OUTPUT_SPEC)
        skills.append((name, steps))
    for p in range(a.probes):
        name, steps = skills[p % len(skills)]
        pid = f"probe-{p:05d}"
        quote = f"covered by existing behavior of {rng.choice(WORDS)} {rng.choice(WORDS)} {p}"
        text = artifact(rng, pid, quote)
        step = rng.randrange(len(steps))
        heading = f"Step {step + 1}: {steps[step]}"
        count = 1
        flaw = p % 10
        if flaw == 3:
            count = 2  # drifted seeded_defects
        elif flaw == 6:
            heading += " (renamed)"  # misanchored step
        elif flaw == 9:
            text = "Please note the following before you sign.\n" + text  # signposting
        probe = {
            "id": pid,
            "tier": 2,
            "kind": "floor",
            "step_heading": heading,
            "shapes": ["euphemized"],
            "seeded_defects": count,
            "defects": [{
                "id": "D1",
                "shape": "euphemized",
                "quote": quote,
                "caught_when": {"verdict": "NOT_PROVEN", "unproven": {"contains": "1"}},
            }],
        }
        d = root / "skills" / name / "evals" / "probes" / pid
        d.mkdir(parents=True, exist_ok=True)
        (d / "question.md").write_text(text)
        (d / "probe.json").write_text(json.dumps(probe, indent=2) + "\n")


if __name__ == "__main__":
    main()
