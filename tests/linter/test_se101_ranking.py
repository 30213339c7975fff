"""SE101's suggestions are ranked by meaning, never by file order, and
``--unsafe-fixes`` applies the first one from the command line.

The case is issue 28's: ``Step 3: Check the tests`` against two headings that
rapidfuzz's WRatio scores the same. The heading the author meant shares the
step's number and every one of its words; the ground truth is that heading's
text as SKILL.md writes it, and each face (the message, the `= help:` line,
the JSON fix, the quick fixes' order, `--fix --unsafe-fixes`) must offer it
first, whichever of the two headings comes first in the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rapidfuzz import fuzz

from _workspaces import SPEC, floor_probe, make_workspace, probe_folder

from skill_eval.linter.cli import main
from skill_eval.linter.engine import lint_paths

WRONG = "Step 1: Read the diff for behaviour changes"
MEANT = "Step 3: Check that tests cover the change"
TYPED = "Step 3: Check the tests"

SKILL_TEMPLATE = """---
name: verify-closeout
description: Use when closing out a merged change against its acceptance criteria.
---

# Verify closeout

## {first}

Read what changed before anything else.

## {second}

Each changed behaviour needs a test that ran. When one has none, the
`verdict` is `NOT_PROVEN`; return `PASS` only when every change has its test.
"""


def workspace(tmp_path: Path, headings: tuple[str, str]) -> Path:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe(step_heading=TYPED)})
    (root / "skill" / "SKILL.md").write_text(SKILL_TEMPLATE.format(first=headings[0], second=headings[1]),
                                             encoding="utf-8")
    (root / "skill" / "output-spec.md").write_text(SPEC, encoding="utf-8")
    return root


def test_the_scores_tie_so_only_meaning_can_decide() -> None:
    """The premise of the case: the fuzzy score alone cannot tell the two apart."""
    assert fuzz.WRatio(TYPED, WRONG) == fuzz.WRatio(TYPED, MEANT)


@pytest.mark.parametrize("order", [(WRONG, MEANT), (MEANT, WRONG)], ids=["wrong-first", "meant-first"])
def test_the_heading_sharing_the_number_and_words_comes_first(tmp_path: Path, order, capsys) -> None:
    root = workspace(tmp_path, order)
    [diagnostic] = [d for d in lint_paths([root], jobs=1, cache=False).diagnostics if d.code == "SE101"]
    assert f"did you mean {MEANT!r}" in diagnostic.message
    assert diagnostic.fixes[0].title == f"Change step_heading to {MEANT!r}"
    assert not diagnostic.fixes[0].safe

    assert main([str(root), "--select", "SE101", "--output-format", "json", "--no-cache"]) == 1
    [item] = json.loads(capsys.readouterr().out)
    assert item["fix"]["edits"][0]["content"] == json.dumps(MEANT)
    assert item["fix"]["applicability"] == "unsafe"

    assert main([str(root), "--select", "SE101", "--output-format", "full", "--no-cache"]) == 1
    help_lines = [line for line in capsys.readouterr().out.splitlines() if "= help:" in line]
    assert help_lines and MEANT in help_lines[0] and WRONG not in help_lines[0]


def test_fix_leaves_an_unsafe_fix_and_unsafe_fixes_applies_it(tmp_path: Path, capsys) -> None:
    root = workspace(tmp_path, (WRONG, MEANT))
    probe = probe_folder(root, "p") / "probe.json"
    before = probe.read_bytes()
    assert main([str(root), "--select", "SE101", "--fix", "--no-cache"]) == 1
    assert probe.read_bytes() == before, "--fix took an unsafe fix"
    assert "1 finding more can be fixed with --unsafe-fixes" in capsys.readouterr().err

    assert main([str(root), "--select", "SE101", "--diff", "--unsafe-fixes", "--no-cache"]) == 1
    patch = capsys.readouterr().out
    assert f'+  "step_heading": {json.dumps(MEANT)},' in patch and probe.read_bytes() == before

    assert main([str(root), "--select", "SE101", "--fix", "--unsafe-fixes", "--no-cache"]) == 0
    assert json.loads(probe.read_text(encoding="utf-8"))["step_heading"] == MEANT
    assert not [d for d in lint_paths([root], jobs=1, cache=False).diagnostics if d.code == "SE101"]


def test_a_renumbered_step_is_found_by_its_words(tmp_path: Path) -> None:
    """Words outweigh the number: a step renumbered from 3 to 2 is still the
    heading holding its words, not the one that took its number."""
    root = workspace(tmp_path, ("Step 2: Match each criterion to direct evidence", "Step 3: Check the deploy log"))
    data = json.loads((probe_folder(root, "p") / "probe.json").read_text(encoding="utf-8"))
    data["step_heading"] = "Step 3: Match criteria to evidence"
    (probe_folder(root, "p") / "probe.json").write_text(json.dumps(data), encoding="utf-8")
    [diagnostic] = [d for d in lint_paths([root], jobs=1, cache=False).diagnostics if d.code == "SE101"]
    assert diagnostic.fixes[0].title == "Change step_heading to 'Step 2: Match each criterion to direct evidence'"
