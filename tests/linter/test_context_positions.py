"""A probe context parses probe.json's syntax tree at most once for every span
its rules ask (issue 29), and lets the tree go once the probe's facts are
computed (the session keeps its contexts)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from skill_eval.linter import probejson
from skill_eval.linter.config import Config
from skill_eval.linter.context import compute_probe_facts
from skill_eval.linter.engine import lint_paths
from skill_eval.linter.reader import FileSystemReader
from skill_eval.linter.session import LintSession
from skill_eval.linter.textfile import Position

ROOT = Path(__file__).resolve().parents[2]

PROBE = {
    "id": "p1",
    "tier": 2,
    "kind": "floor",
    "step_heading": "Step 9: nowhere",
    "defects": [{"id": "D1", "quote": "q", "caught_when": {"verdict": "FAIL"}}],
}


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """How many times each text was parsed by tree-sitter-json."""
    counted: Counter = Counter()
    parse = probejson.json_syntax_tree

    def counting(raw: bytes):
        counted[raw] += 1
        return parse(raw)

    monkeypatch.setattr(probejson, "json_syntax_tree", counting)
    return counted


def _position(text: str, offset: int) -> Position:
    line = text.count("\n", 0, offset) + 1
    return Position(line, offset - (text.rfind("\n", 0, offset) + 1) + 1)


def test_spans_of_one_context_share_one_parse_and_are_where_the_text_says(tmp_path: Path, parses: Counter) -> None:
    path = tmp_path / "probe.json"
    text = json.dumps(PROBE, indent=2) + "\n"
    path.write_text(text)
    context = LintSession(tmp_path, Config(), FileSystemReader()).probe(path)

    value = context.value_span("step_heading")
    edit = context.edit_span("step_heading")
    key = context.key_span("defects", 0, "caught_when", "verdict")
    key_edit = context.edit_span("defects", 0, "caught_when", "verdict", key=True)
    missing = context.edit_span("defects", 3)

    assert sum(parses.values()) == 1
    start = text.index('"Step 9: nowhere"')
    expected = (_position(text, start), _position(text, start + len('"Step 9: nowhere"')))
    assert (value.start, value.end) == expected
    assert edit == value
    start = text.index('"verdict"')
    assert (key.start, key.end) == (_position(text, start), _position(text, start + len('"verdict"')))
    assert key_edit == key
    assert missing is None


def test_facts_release_the_tree_and_a_later_span_parses_again(tmp_path: Path, parses: Counter) -> None:
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(PROBE, indent=2))
    context = LintSession(tmp_path, Config(), FileSystemReader()).probe(path)
    before = context.value_span("id")

    compute_probe_facts(context, [])

    assert "positions" not in context.__dict__
    assert context.value_span("id") == before
    assert sum(parses.values()) == 2


def test_unreadable_json_answers_the_first_line_without_a_tree(tmp_path: Path, parses: Counter) -> None:
    path = tmp_path / "probe.json"
    path.write_text('{"id": "p1",\n  "step_heading": ')
    context = LintSession(tmp_path, Config(), FileSystemReader()).probe(path)

    assert context.value_span("step_heading").start == Position(1, 1)
    assert context.edit_span("step_heading") is None
    assert sum(parses.values()) == 0


def test_a_lint_of_the_examples_parses_each_probe_at_most_once(parses: Counter) -> None:
    result = lint_paths([ROOT / "examples"], jobs=1)

    assert result.diagnostics
    assert parses and max(parses.values()) == 1
