"""SE401-SE402, and the documentation contract of the files, accounting and shapes rules."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _workspaces import defect, floor_probe, lint, make_workspace, probe_folder

from skill_eval.linter.cli import main
from skill_eval.linter.fixes import apply_edits
from skill_eval.linter.rules import accounting, files, shapes
from skill_eval.linter.rules.base import DOC_SECTIONS

ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = ROOT / "docs" / "spec"
"""The rule catalogue and fixture format this project implements, shipped in the repository."""
SEED_DIR = ROOT / "docs" / "seed"
"""The seed text the rules' "Why is this bad?" sections quote."""

OWN_RULES = [rule for rule in files.RULES + accounting.RULES + shapes.RULES if rule.code not in ("SE000", "SE001", "SE002")]


def test_time_pressure_alone(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {
        "alone": floor_probe("alone", shapes=["time-pressure"], defects=[defect(shape="time-pressure")]),
        "modifier": floor_probe("modifier", shapes=["euphemized", "time-pressure"]),
        "tier1": floor_probe("tier1", tier=1, shapes=["time-pressure"]),
    })
    [diagnostic] = lint(root, code="SE401")
    assert diagnostic.path.parent.name == "alone"
    assert [d.path.parent.name for d in lint(root, code="SE402")] == ["alone"]


def test_add_missing_shape_fix(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {
        "some": floor_probe("some", shapes=["time-pressure"]),
        "none": floor_probe("none", shapes=[]),
    })
    for name, expected in (("some", ["time-pressure", "euphemized"]), ("none", ["euphemized"])):
        path = probe_folder(root, name) / "probe.json"
        [diagnostic] = [d for d in lint(path, code="SE402") if "do not declare" in d.message]
        [fix] = diagnostic.fixes
        assert not fix.safe
        assert json.loads(apply_edits(path.read_text(encoding="utf-8"), fix.edits))["shapes"] == expected


def test_declared_but_unused_shape(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe(shapes=["euphemized", "structural", "time-pressure"])})
    [diagnostic] = lint(root, code="SE402")
    assert "'structural' is declared but no defect has it" in diagnostic.message
    line = (probe_folder(root, "p") / "probe.json").read_text().splitlines()[diagnostic.start.line - 1]
    assert line[diagnostic.start.column - 1:diagnostic.end.column - 1] == '"structural"'


# -- documentation ----------------------------------------------------------------------------


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


@pytest.mark.parametrize("rule", OWN_RULES, ids=[r.code for r in OWN_RULES])
def test_rule_metadata_and_module_layout(rule) -> None:
    assert rule.__name__ == _camel(rule.name)
    module = rule.__module__.rsplit(".", 1)[-1]
    assert module == f"{rule.code.lower()}_{rule.name.replace('-', '_')}"
    sections = rule.doc_sections()
    assert tuple(sections) == DOC_SECTIONS
    assert all(sections.values())
    assert rule.tags and rule.tags[0] == rule.__module__.split(".")[-2]


@pytest.mark.parametrize("rule", OWN_RULES, ids=[r.code for r in OWN_RULES])
def test_rule_matches_the_catalogue(rule) -> None:
    catalogue = (SPEC_DIR / "rules.md").read_text(encoding="utf-8")
    row = re.search(rf"^\| {rule.code} \| ([a-z-]+) \| (\w+) \|", catalogue, re.M)
    assert row, f"{rule.code} is not in rules.md"
    assert (row.group(1), row.group(2)) == (rule.name, rule.severity.value)


def _normalized(text: str) -> str:
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'").replace("'", '"')
    return " ".join(text.lower().split())


@pytest.mark.parametrize("rule", OWN_RULES, ids=[r.code for r in OWN_RULES])
def test_why_quotes_the_seed_verbatim(rule) -> None:
    sources = _normalized(" ".join(p.read_text(encoding="utf-8") for p in [*SEED_DIR.glob("*.txt"), SPEC_DIR / "fixture-format.md"]))
    why = " ".join(rule.doc_sections()["Why is this bad?"].split())
    quotes = [quote for quote in re.findall(r'"([^"]+)"', why) if len(quote) >= 12]
    assert quotes, f"{rule.code}: 'Why is this bad?' quotes nothing"
    for quote in quotes:
        assert _normalized(quote).rstrip(".") in sources, f"{rule.code}: {quote!r} is not in the seed"


def test_cli_prints_the_rule_documentation(capsys) -> None:
    assert main(["rule", "se201"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# SE201 drifted-defect-count")
    assert "## Why is this bad?" in out
    assert "A drifted count makes every band assertion meaningless" in " ".join(out.split())
