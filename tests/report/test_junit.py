"""The JUnit writer, read back by a real consumer's parser (junitparser)."""

from __future__ import annotations

import copy

import pytest

junitparser = pytest.importorskip("junitparser", reason="junitparser is not installed (pip install -e '.[test]')")

from skill_eval.evals.junit import write_junit  # noqa: E402
from synthetic_report import synthetic_model  # noqa: E402


def expected_result(group: dict) -> tuple[str, str | None]:
    """What docs/report.md says a group's test case reports: the element and its type."""
    if group["arms"]["control"]["unresolved"] or group["arms"]["treatment"]["unresolved"]:
        return "error", "unresolved-reps"
    if any(start["contaminated"] for start in group["starts"]):
        return "error", "contaminated"
    if group["zone"] == "unreadable":
        return "error", "unreadable-answers"
    if group["zone"] == "adverse":
        return "failure", "adverse"
    if any(start["skill_flag"] == "isolation-failure" for start in group["starts"]):
        return "failure", "isolation-failure"
    if group["unsealed"]:
        return "failure", "unsealed"
    if group["zone"] == "pending":
        return "skipped", "pending"
    return "passed", None


def expected_outcome(group: dict) -> str:
    return expected_result(group)[0]


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
        if kind == "failure" and case.result[0].type == "adverse":
            assert "control caught it more often" in case.result[0].message
        elif kind == "failure":
            assert case.result[0].type == "unsealed" and "ran without the sandbox" in case.result[0].message
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


def _passing_group(model: dict) -> dict:
    """A group of ``model`` whose test case passes (window, every rep graded, sealed)."""
    return next(g for g in model["groups"] if expected_outcome(g) == "passed" and g["zone"] == "window")


def test_contamination_isolation_failure_and_unsealed_starts_fail_the_probe(tmp_path):
    """Each integrity problem of docs/report.md's JUnit list gives its own
    element and type; a case with several reports the first and names the rest."""
    model = synthetic_model(60)
    base = _passing_group(model)
    variants = {}
    for name in ("contaminated", "isolation", "unsealed", "adverse+unsealed+isolation"):
        group = copy.deepcopy(base)
        group["key"] = (name.encode().hex() + "0" * 16)[:16]
        group["probe"] = f"variant-{name}"
        control = next(s for s in group["starts"] if s["arm"] == "control" and s["status"] == "ok")
        if name == "contaminated":
            treatment = next(s for s in group["starts"] if s["arm"] == "treatment")
            treatment["contaminated"] = [{"source": "skill/evals/probes/x/probe.json", "text": "the answer key"}]
        if "isolation" in name:
            control["skill_loaded"], control["skill_flag"] = True, "isolation-failure"
        if "unsealed" in name:
            group["unsealed"] = 3
        if "adverse" in name:
            group["zone"] = "adverse"
        variants[group["probe"]] = group
        model["groups"].append(group)
    path = tmp_path / "report.xml"
    write_junit(model, path)
    cases = {name.split(" v")[0]: case for (_s, _c, name), (_k, case) in read_back(path).items()}
    for probe, group in variants.items():
        (result,) = list(cases[probe].result)
        kind, kind_type = expected_result(group)
        assert (type(result).__name__.lower(), result.type) == (kind, kind_type), probe
    message = lambda probe: list(cases[probe].result)[0].message  # noqa: E731
    assert "1 start(s) saw the answer key (skill/evals/probes/x/probe.json)" in message("variant-contaminated")
    assert "isolation failure: 1 control start(s) loaded the skill" in message("variant-isolation")
    assert f"unsealed: 3 of {len(base['starts'])} start(s) ran without the sandbox" in message("variant-unsealed")
    combined = message("variant-adverse+unsealed+isolation")
    assert combined.startswith("adverse: ") and "; also isolation failure: " in combined and "; also unsealed: " in combined
    # pass@k of each arm, as the model holds it, in the case's output
    at_k = base["arms"]["treatment"]["pass_at_k"]
    assert ", ".join(f"{k}: {v:.2f}" for k, v in at_k.items()) in cases[base["probe"]].system_out


def test_skill_creator_evals_and_trigger_tests_are_test_cases(tmp_path):
    """Rows of suite_evals and trigger_tests built from start records by the
    report's own functions become test cases: an adverse eval fails, a pending
    one is skipped, a trigger set with a failed start errors; the numbers of
    the model are in each case's output."""
    from skill_eval.evals.suites import suite_report
    from skill_eval.evals.triggers import trigger_report

    def start(probe, arm, passed, status="ok"):
        return {"probe_path": "skill/evals/evals.json", "probe": probe, "probe_sha256": "ab" * 32, "agent": "a",
                "model": "m", "arm": arm, "status": status,
                "expectations": [{"text": "e1", "passed": passed}, {"text": "e2", "passed": True}]}

    records = [start("better", "control", False), start("better", "control", False),
               start("better", "treatment", True), start("better", "treatment", True),
               start("worse", "control", True), start("worse", "control", True),
               start("worse", "treatment", False), start("worse", "treatment", False),
               start("half", "control", False)]
    triggers = [{"kind": kind, "probe": f"q{i}", "probe_path": "skill/evals/triggers.json", "agent": "a", "model": "m",
                 "status": status, "skill_loaded": loaded}
                for i, (kind, status, loaded) in enumerate([
                    ("should-trigger", "ok", True), ("should-trigger", "ok", False), ("should-not-trigger", "ok", False),
                    ("should-not-trigger", "ok", True), ("should-trigger", "error", None)])]
    model = synthetic_model(5)
    model["suite_evals"] = suite_report(records)
    model["trigger_tests"] = trigger_report(triggers)
    assert {row["eval"]: row["zone"] for row in model["suite_evals"]} == {"better": "window", "worse": "adverse",
                                                                         "half": "pending"}
    path = tmp_path / "report.xml"
    write_junit(model, path)
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = {suite.name: suite for suite in xml}
    evals = {case.name: case for case in suites["skill-creator evals · a · m"]}
    assert set(evals) == {"eval better", "eval worse", "eval half"}
    assert all(case.classname == "skill/evals/evals.json" for case in evals.values())
    assert list(evals["eval better"].result) == []
    (failure,) = list(evals["eval worse"].result)
    assert type(failure).__name__ == "Failure" and failure.type == "adverse"
    (skipped,) = list(evals["eval half"].result)
    assert type(skipped).__name__ == "Skipped"
    better = next(row for row in model["suite_evals"] if row["eval"] == "better")
    low, high = better["effect_interval"]
    assert f"effect (treatment - control): {better['effect']:+.2f} [{low:+.2f}, {high:+.2f}]" in evals["eval better"].system_out
    low, high = better["arms"]["treatment"]["interval"]
    assert f"4/4 expectations = 1.00 [{low:.2f}-{high:.2f}]" in evals["eval better"].system_out
    (trigger_case,) = list(suites["trigger tests"])
    assert trigger_case.name == "triggers a · m"
    (error,) = list(trigger_case.result)
    assert type(error).__name__ == "Error" and error.type == "failed-starts"
    row = model["trigger_tests"][0]
    assert (row["tp"], row["fn"], row["fp"], row["tn"], row["failed"]) == (1, 1, 1, 1, 1)
    low, high = row["precision"]["interval"]
    assert f"precision: 1/2 = 0.50 [{low:.2f}-{high:.2f}]" in trigger_case.system_out
    xml.update_statistics()
    assert suites["skill-creator evals · a · m"].failures == 1 and suites["trigger tests"].errors == 1
