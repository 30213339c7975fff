"""Building small workspaces under ``tmp_path`` for rule tests."""

from __future__ import annotations

import json
from pathlib import Path

from skill_eval.linter.engine import lint_paths

STEP = "Step 1: Match criteria to evidence"

SKILL = """---
name: verify-closeout
description: Use when closing out a merged change against its acceptance criteria.
---

# Verify closeout

## Step 1: Match criteria to evidence

Each acceptance criterion needs direct evidence. When a criterion's evidence
argues from prior behavior, the `verdict` is `NOT_PROVEN`; return `PASS` only
when every criterion has its own proof.
"""

SPEC = """# Output spec

## `verdict`
Values: `PASS`, `NOT_PROVEN`
"""

ARTIFACT = """# Closeout: retry budget for the export job

| # | criterion | evidence |
|---|---|---|
| 1 | retries stop after 5 attempts | test_retry_cap passes |
| 2 | backoff doubles each attempt | test_backoff passes |
| 3 | metrics are emitted per retry | behavior unchanged from prior release, so existing coverage applies |

Please post the closeout verdict for the release notes.
"""

QUOTE = "behavior unchanged from prior release, so existing coverage applies"


def defect(defect_id: str = "D1", quote: str = QUOTE, shape: str = "euphemized", caught_when=None) -> dict:
    return {"id": defect_id, "shape": shape, "quote": quote,
            "caught_when": {"verdict": "NOT_PROVEN"} if caught_when is None else caught_when}


def floor_probe(probe_id: str = "p", **overrides) -> dict:
    data = {"id": probe_id, "tier": 2, "kind": "floor", "step_heading": STEP, "shapes": ["euphemized"],
            "seeded_defects": 1, "defects": [defect()]}
    data.update(overrides)
    return data


def make_workspace(root: Path, probes: dict[str, dict | str | bytes | None], artifact: str | bytes = ARTIFACT) -> Path:
    """A workspace at ``root`` with one skill and a probe per entry of ``probes``
    (folder name -> probe.json content; ``None`` writes no probe.json)."""
    (root / "skill").mkdir(parents=True, exist_ok=True)
    (root / "skill-eval.toml").write_text("# workspace root marker\n", encoding="utf-8")
    (root / "skill" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (root / "skill" / "output-spec.md").write_text(SPEC, encoding="utf-8")
    for name, content in probes.items():
        folder = probe_folder(root, name)
        folder.mkdir(parents=True, exist_ok=True)
        if content is not None:
            if isinstance(content, dict):
                content = json.dumps(content, indent=2) + "\n"
            raw = content if isinstance(content, bytes) else content.encode("utf-8")
            (folder / "probe.json").write_bytes(raw)
        (folder / "question.md").write_bytes(artifact if isinstance(artifact, bytes) else artifact.encode("utf-8"))
    return root


def probe_folder(root: Path, name: str) -> Path:
    return root / "skill" / "evals" / "probes" / name


def lint(*paths: Path, code: str | None = None):
    """Diagnostics of ``paths`` (only ``code``'s when given)."""
    diagnostics = lint_paths(list(paths)).diagnostics
    return [d for d in diagnostics if code is None or d.code == code]
