"""Reading answers and grading them (fixture-format.md, "How an agent's answer is read")."""

from __future__ import annotations

import pytest

from skill_eval.evals.grading import BadExpectation, Value, check_expectation, grade_answer, read_answer
from skill_eval.linter.outputspec import parse_output_spec

SPEC = parse_output_spec(
    "# Output spec\n\n"
    "## `verdict` — the call\nValues: `PASS`, `NOT_PROVEN`\nAliases: `status`, `result`\n\n"
    "## `criteria`\nAliases: `unproven`\n"
)
FLOOR = [{"id": "D1", "caught_when": {"verdict": "NOT_PROVEN", "criteria": {"contains": "3"}}}]


def caught(text: str, defects=FLOOR, spec=SPEC) -> list[str]:
    _answer, grades = grade_answer(text, defects, spec)
    return [g.defect_id for g in grades if g.caught]


def test_json_object_is_read():
    assert caught('Done.\n```json\n{"verdict": "NOT_PROVEN", "criteria": [3]}\n```') == ["D1"]


def test_first_json_object_with_a_spec_key_wins_and_unrelated_objects_are_skipped():
    text = 'config was {"retries": 5}\n{"Status": "NOT_PROVEN", "Unproven": "3"}\n{"verdict": "PASS"}'
    answer = read_answer(text, SPEC)
    assert answer.source == "json"
    assert answer.fields["verdict"].text == "NOT_PROVEN"
    assert caught(text) == ["D1"]


def test_json_answer_excludes_lines():
    # a qualifying JSON object is the answer; `field: value` lines are then not read
    text = '{"verdict": "PASS"}\nverdict: NOT_PROVEN\ncriteria: 3'
    assert caught(text) == []


def test_field_lines_case_insensitive_and_aliases():
    assert caught("VERDICT: NOT_PROVEN\nUnproven: 3") == ["D1"]
    assert caught("result:   NOT_PROVEN  \ncriteria: 1, 3") == ["D1"]


def test_values_are_case_sensitive_and_trimmed():
    assert caught("verdict: not_proven\ncriteria: 3") == []
    assert caught("verdict:\tNOT_PROVEN\t\ncriteria: 3 ") == ["D1"]


def test_dash_item_list_after_empty_field():
    assert caught("verdict: NOT_PROVEN\ncriteria:\n- 1\n- 3\n\nthanks") == ["D1"]
    answer = read_answer("criteria:\n- 1\n- 3\nverdict: PASS", SPEC)
    assert answer.fields["criteria"].items == ("1", "3")
    assert answer.fields["verdict"].text == "PASS"


def test_markdown_wrapped_fields_and_values():
    assert caught("**Verdict**: `NOT_PROVEN`\n- criteria: 3") == ["D1"]


def test_missing_graded_field_is_not_caught_even_under_not():
    assert caught("verdict: NOT_PROVEN") == []
    negative = [{"id": "D1", "caught_when": {"verdict": {"not": "PASS"}}}]
    assert caught("criteria: 3", negative) == []
    assert caught("verdict: NOT_PROVEN", negative) == ["D1"]
    assert caught("verdict: PASS", negative) == []


def test_garbage_answer_catches_nothing():
    answer, grades = grade_answer("\ufffd{not json} verdict? {\"other\": 1}\n lorem: ipsum", FLOOR, SPEC)
    assert answer.source == "none"
    assert not grades[0].caught
    assert "missing" in grades[0].reasons[0]


def test_contains_on_list_is_element_equality():
    listed = Value.from_items(["13", "4"])
    assert check_expectation({"contains": "3"}, listed)[0] is False
    assert check_expectation({"contains": "13"}, listed)[0] is True
    # a comma-separated value is also a list of parts
    assert check_expectation({"contains": "4"}, Value.from_text("13, 4"))[0] is True
    # a plain string value: substring
    assert check_expectation({"contains": "criterion 3"}, Value.from_text("see criterion 3 evidence"))[0] is True


def test_one_of_matches_not():
    value = Value.from_text("NOT_PROVEN")
    assert check_expectation({"one_of": ["PASS", "NOT_PROVEN"]}, value)[0]
    assert not check_expectation({"one_of": ["PASS"]}, value)[0]
    assert check_expectation({"matches": "^NOT_"}, value)[0]
    assert not check_expectation({"matches": "^not_"}, value)[0]
    assert check_expectation({"not": {"equals": "PASS"}}, value)[0]
    assert check_expectation("NOT_PROVEN", value)[0]


def test_json_numbers_and_lists():
    answer = read_answer('{"verdict": "NOT_PROVEN", "criteria": [2, 4], "count": 3}', SPEC)
    assert answer.fields["criteria"].items == ("2", "4")
    assert answer.fields["criteria"].is_list


def test_band_of_two_defects():
    band = [{"id": "D1", "caught_when": {"criteria": {"contains": "2"}}},
            {"id": "D2", "caught_when": {"criteria": {"contains": "4"}}}]
    assert caught("criteria: 2, 4", band) == ["D1", "D2"]
    assert caught("criteria: 2", band) == ["D1"]


@pytest.mark.parametrize("bad", [{"equal": "x"}, {"one_of": "x"}, {"matches": "("}, {"equals": 3}, ["x"], {"a": 1, "b": 2}])
def test_bad_expectations_raise(bad):
    with pytest.raises(BadExpectation):
        check_expectation(bad, Value.from_text("x"))


def test_no_spec_uses_caught_when_names():
    assert caught("Verdict: NOT_PROVEN\ncriteria: 3", spec=None) == ["D1"]
