"""The JUnit writer, read back by a real consumer's parser (junitparser)."""

from __future__ import annotations

import copy

import pytest

junitparser = pytest.importorskip("junitparser", reason="junitparser is not installed (pip install -e '.[test]')")

from skill_eval.evals.junit import write_junit  # noqa: E402
from synthetic_report import synthetic_model  # noqa: E402


def expected_outcome(group: dict) -> str:
    """What docs/report.md says a group's test case reports."""
    if group["arms"]["control"]["unresolved"] or group["arms"]["treatment"]["unresolved"]:
        return "error"
    if group["zone"] == "adverse":
        return "failure"
    if group["zone"] == "pending":
        return "skipped"
    return "passed"


def read_back(path) -> dict[tuple[str, str, str], tuple[str, object]]:
    xml = junitparser.JUnitXml.fromfile(str(path))
    cases = {}
    for suite in xml:
        for case in suite:
            key = (suite.name, case.classname, case.name)
            assert key not in cases, f"two test cases named {key}"
            results = list(case.result)
            kind = "passed" if not results else type(results[0]).__name__.lower()
            cases[key] = (kind, case)
    return cases


def test_one_case_per_group_failing_on_adverse_or_errored(tmp_path):
    model = synthetic_model(120)
    path = tmp_path / "report.xml"
    write_junit(model, path)
    cases = read_back(path)
    assert len(cases) == len(model["groups"])
    outcomes = {}
    for group in model["groups"]:
        matches = [kind for (series, skill, name), (kind, _case) in cases.items()
                   if series == f"{group['agent']} · {group['model']}" and skill == group["skill"]
                   and name.startswith(f"{group['probe']} v{group['version']}")]
        assert len(matches) == 1
        outcomes[group["key"]] = matches[0]
        assert matches[0] == expected_outcome(group), group["probe"]
    kinds = set(outcomes.values())
    assert {"error", "failure", "skipped", "passed"} <= kinds
    xml = junitparser.JUnitXml.fromfile(str(path))
    xml.update_statistics()
    for suite in xml:
        assert suite.tests == len(list(suite))


def test_adverse_and_errors_say_why(tmp_path):
    model = synthetic_model(120)
    path = tmp_path / "report.xml"
    write_junit(model, path)
    for kind, case in read_back(path).values():
        if kind == "failure":
            assert case.result[0].type == "adverse" and "control caught it more often" in case.result[0].message
        if kind == "error":
            assert case.result[0].type == "unresolved-reps" and "without an outcome" in case.result[0].message
        assert "zone:" in case.system_out


def test_edited_groups_keep_unique_names_and_odd_text_survives(tmp_path):
    model = synthetic_model(30)
    group = model["groups"][0]
    twin = copy.deepcopy(group)
    twin["key"] = "f" * 16
    twin["hashes"]["artifact_sha256"] = "a" * 64
    group["edited_without_bump"] = twin["edited_without_bump"] = True
    twin["probe"] = group["probe"] = 'odd <"&\x01> probe'
    model["groups"].append(twin)
    path = tmp_path / "report.xml"
    write_junit(model, path)
    names = [name for (_s, _k, name) in read_back(path) if name.startswith('odd <"&> probe')]
    assert len(names) == 2
