"""Grading is linear in the answer's length and never raises (issue 13, point 6)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from skill_eval.evals.grading import BadExpectation, grade_answer, read_answer
from skill_eval.linter.outputspec import parse_output_spec

SPEC = parse_output_spec(
    "# Output spec\n\n"
    "## `verdict` — the call\nValues: `PASS`, `NOT_PROVEN`\nAliases: `status`, `result`\n\n"
    "## `criteria`\nAliases: `unproven`\n"
)
FLOOR = [{"id": "D1", "caught_when": {"verdict": "NOT_PROVEN", "criteria": {"contains": "3"}}}]


def caught(text, defects=FLOOR, spec=SPEC):
    _answer, grades = grade_answer(text, defects, spec)
    return [g.defect_id for g in grades if g.caught]


def test_deeply_nested_json_does_not_raise_and_lines_still_count():
    nested = '{"verdict": ' * 5000
    assert caught(nested) == []
    assert caught(nested + "\nverdict: NOT_PROVEN\ncriteria: 3\n") == ["D1"]
    assert caught('[' * 100000 + '{"verdict": "NOT_PROVEN", "criteria": [3]}') == ["D1"]


def test_a_qualifying_object_nested_in_another_is_found_in_document_order():
    text = 'x {"meta": {"model": "m"}, "answer": {"verdict": "NOT_PROVEN", "criteria": "3"}} {"verdict": "PASS"}'
    assert read_answer(text, SPEC).fields["verdict"].text == "NOT_PROVEN"
    assert caught(text) == ["D1"]


def test_lines_with_long_runs_of_spaces_are_read_exactly():
    assert caught("verdict: NOT_PROVEN" + " " * 5000 + "\ncriteria:\n-   3" + " " * 5000 + "\n") == ["D1"]
    assert read_answer("verdict: a" + " " * 1000 + "b", SPEC).fields["verdict"].text == "a" + " " * 1000 + "b"


PATHOLOGICAL = textwrap.dedent('''
    import sys
    from skill_eval.evals.grading import grade_answer
    from skill_eval.linter.outputspec import parse_output_spec

    spec = parse_output_spec("## `verdict`\\nValues: `PASS`, `NOT_PROVEN`\\n\\n## `criteria`\\n")
    defects = [{"id": "D1", "caught_when": {"verdict": {"matches": "(a+)+$"}, "criteria": {"contains": "3"}}},
               {"id": "D2", "caught_when": {"verdict": {"matches": "criterion.*3.*x"}}}]
    mib = 1 << 20
    answers = [
        "verdict: a" + " " * 200000 + "b",
        "verdict: a" + " " * mib + "b",
        "{" * mib,
        '{"verdict": ' * (mib // 12),
        '{"a":' * (mib // 5),
        '{"x":"' * (mib // 6),
        '{"k": "' + "v" * mib,
        "- " + " " * mib + "x",
        "criteria:\\n" + "- " + " " * mib + "3",
        "verdict: " + "a" * mib + "b",
        "verdict: " + "criterion 3 " * (mib // 12),
        "**" * (mib // 2),
        "verdict:" * (mib // 8),
    ]
    for answer in answers:
        grade_answer(answer, defects, spec)
    print("graded", len(answers))
''')


def test_pathological_megabyte_answers_grade_without_hanging_or_raising():
    """A hang guard, not a speed test (benchmarks/run_bench.py times these):
    the backtracking regexes and quadratic JSON scans this replaces took
    minutes to hours on these answers."""
    result = subprocess.run([sys.executable, "-c", PATHOLOGICAL], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "graded 13"


ALPHABET = st.sampled_from(list('{}[]":,\n\r\t -*+`_\\/ab3') + ["verdict", "criteria", "status", "NOT_PROVEN",
                                                              "PASS", "null", "true", "1e999", "\ufffd", "**"])
EXPECTATIONS = st.recursive(
    st.one_of(st.text(max_size=5), st.builds(lambda s: {"equals": s}, st.text(max_size=5)),
              st.builds(lambda s: {"contains": s}, st.text(max_size=5)),
              st.builds(lambda items: {"one_of": items}, st.lists(st.text(max_size=5), max_size=3)),
              st.sampled_from([{"matches": "^NOT_"}, {"matches": "(a|b)*c"}, {"matches": "(a+)+b"}])),
    lambda inner: st.builds(lambda e: {"not": e}, inner), max_leaves=3)


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=80).map("".join), EXPECTATIONS, st.booleans())
def test_grading_never_raises(answer, expectation, with_spec):
    defects = [{"id": "D1", "caught_when": {"verdict": expectation}},
               {"id": "D2", "caught_when": {"criteria": {"contains": "3"}, "status": expectation}}]
    answer_read, grades = grade_answer(answer, defects, SPEC if with_spec else None)
    assert answer_read.source in ("json", "lines", "none")
    assert [g.defect_id for g in grades] == ["D1", "D2"]


UNRUNNABLE = ["^(?!PASS)(\\w+)*$", "(?=a)a", "(?<=x)y", "(a)\\1"]
"""``matches`` patterns RE2 cannot run (lookaround, a backreference)."""


@pytest.mark.parametrize("pattern", UNRUNNABLE)
def test_a_pattern_grading_cannot_run_in_linear_time_is_refused_not_run(pattern):
    """A pattern only a backtracking engine runs is a :class:`BadExpectation`
    (``^(?!PASS)(\\w+)*$`` on 28 characters of answer took 18 s, and the
    runner could not be stopped meanwhile), and the linter reports it
    (SE002) at the pattern, so that a run refuses the probe before it
    spends a start."""
    from skill_eval.linter.probejson import ProbeJson
    from skill_eval.linter.textfile import TextDocument

    answer = "verdict: " + "NOT_PROVEN_BECAUSE_THE_RETRY_TEST_WAS_SKIPPED" * 4
    defects = [{"id": "D1", "caught_when": {"verdict": {"not": {"matches": pattern}}}}]
    with pytest.raises(BadExpectation, match="linear time"):
        grade_answer(answer, defects, None)
    probe = {"id": "p", "tier": 1, "step_heading": "Step 1", "defects": [{**defects[0], "quote": "x"}]}
    text = json.dumps(probe)
    where = "/defects/0/caught_when/verdict/not/matches"
    problems = ProbeJson.parse(TextDocument(Path("/w/probe.json"), text)).schema_problems()
    assert [p.pointer for p in problems if "linear time" in p.message] == [where], problems
    runnable = ProbeJson.parse(TextDocument(Path("/w/probe.json"), text.replace(json.dumps(pattern)[1:-1], "^NOT_")))
    assert where not in [p.pointer for p in runnable.schema_problems()]

