"""The rule catalogue: every code of rules.md is registered, documented, and
its generated page in docs/rules/ is current."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from skill_eval import rule_docs as docs
from skill_eval.linter.rules import REGISTRY
from skill_eval.linter.rules.base import DOC_SECTIONS, Scope

ROOT = Path(__file__).resolve().parents[2]

CATALOGUE = (
    [f"SE00{i}" for i in range(0, 7)]
    + [f"SE10{i}" for i in range(1, 8)]
    + [f"SE20{i}" for i in range(1, 8)]
    + [f"SE30{i}" for i in range(1, 5)]
    + ["SE401", "SE402"]
    + [f"SE50{i}" for i in range(1, 6)]
)
"""Codes of spec/rules.md (v1)."""


def test_every_catalogue_code_is_registered() -> None:
    registered = {rule.code for rule in REGISTRY}
    missing = [code for code in CATALOGUE if code not in registered]
    assert not missing, f"rules.md codes without a rule: {missing}"
    assert any(code.startswith("SE7") for code in registered), "SKILL.md front-matter rules (SE7xx) are missing"


def test_codes_and_names_are_unique() -> None:
    assert len({r.code for r in REGISTRY}) == len(REGISTRY)
    assert len({r.name for r in REGISTRY}) == len(REGISTRY)


@pytest.mark.parametrize("rule", REGISTRY, ids=[r.code for r in REGISTRY])
def test_rule_is_documented_and_laid_out(rule) -> None:
    sections = rule.doc_sections()
    assert list(sections) == list(DOC_SECTIONS), f"{rule.code} docstring sections: {list(sections)}"
    assert all(sections.values()), f"{rule.code} has an empty section"
    assert re.fullmatch(r"SE\d{3}", rule.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert all(isinstance(scope, Scope) for scope in rule.scopes())
    module = importlib.import_module(rule.__module__)
    expected_module = rule.code.lower() + "_" + rule.name.replace("-", "_")
    assert module.__name__.rsplit(".", 1)[1] == expected_module, "one module per rule, named after the rule"


def test_generated_docs_are_current() -> None:
    pages = docs.expected_pages()
    folder = ROOT / "docs" / "rules"
    stale = [name for name, text in pages.items() if not (folder / name).is_file() or (folder / name).read_text(encoding="utf-8") != text]
    extra = [p.name for p in folder.glob("*.md") if p.name not in pages]
    assert not stale and not extra, f"run `python -m skill_eval.linter.docs`: stale {stale}, extra {extra}"
