"""A small, lint-clean skill workspace for the editor and pre-commit tests.

``write_workspace(root)`` lays out one skill with one tier-2 floor probe whose
window teaches every graded field, so ``skill-eval-lint`` reports nothing;
tests then break one thing (the step heading, the defect count) and look for
exactly that diagnostic.
"""

from __future__ import annotations

import json
from pathlib import Path

GOOD_HEADING = "Step 2: Check the evidence lines"
BAD_HEADING = "Step 2: Check evidence"

SKILL_MD = """\
---
name: verify-closeout
description: Use when asked to sign off a closeout report for a merged change.
---

# Verify closeout

## Step 1: Read the acceptance criteria

Write down every acceptance criterion the report names.

## Step 2: Check the evidence lines

Each criterion needs evidence that exercises it. Evidence that argues from
prior behavior ("existing coverage applies") is not proof: the `verdict` is
`NOT_PROVEN`. When every criterion has direct evidence the `verdict` is `PASS`.
"""

OUTPUT_SPEC_MD = """\
# Answer fields

## `verdict` — the call on the report
Values: `PASS`, `NOT_PROVEN`
"""

QUESTION_MD = """\
# Closeout: retry budget for the export job

| # | criterion | evidence |
|---|---|---|
| 1 | retries stop after 5 attempts | test_retry_cap passes |
| 2 | backoff doubles | test_backoff passes |
| 3 | metrics emitted | behavior unchanged from prior release, so existing coverage applies |

Please post the closeout verdict.
"""

PROBE_RELATIVE = Path("skills/verify-closeout/evals/probes/retry-budget/probe.json")


def probe_data(step_heading: str = GOOD_HEADING, seeded_defects: int = 1) -> dict:
    return {
        "id": "retry-budget",
        "tier": 2,
        "kind": "floor",
        "step_heading": step_heading,
        "shapes": ["euphemized"],
        "seeded_defects": seeded_defects,
        "defects": [
            {
                "id": "D1",
                "shape": "euphemized",
                "quote": "existing coverage applies",
                "caught_when": {"verdict": "NOT_PROVEN"},
            }
        ],
    }


def probe_text(step_heading: str = GOOD_HEADING, seeded_defects: int = 1) -> str:
    return json.dumps(probe_data(step_heading, seeded_defects), indent=2, ensure_ascii=False) + "\n"


def write_workspace(root: Path, step_heading: str = GOOD_HEADING, seeded_defects: int = 1) -> Path:
    """Write the workspace under ``root``; returns the probe.json path."""
    skill = root / "skills" / "verify-closeout"
    probe = root / PROBE_RELATIVE
    probe.parent.mkdir(parents=True, exist_ok=True)
    (root / "skill-eval.toml").write_text("# skill-eval workspace root\n", encoding="utf-8")
    (skill / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (skill / "output-spec.md").write_text(OUTPUT_SPEC_MD, encoding="utf-8")
    (probe.parent / "question.md").write_text(QUESTION_MD, encoding="utf-8")
    probe.write_text(probe_text(step_heading, seeded_defects), encoding="utf-8")
    return probe
