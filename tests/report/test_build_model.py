"""build_model from real runs: real subprocess agents run by the real runner,
then the model compared with what the agents logged and wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from _skill_tree import skill_tree_sha256
from report_helpers import SUITE, Suite, agent
from skill_eval.evals.cli import freeze_main, run_main
from skill_eval.evals.grading import grade_answer
from skill_eval.evals.probes import Workspace
from skill_eval.evals.viewer_build import build_model, grade_expectations
from skill_eval.evals.viewer_model import TYPED_DICTS, load_schema, validate
from skill_eval.evals.records import append_record


def run(suite: Suite, *args: str) -> int:
    """``skill-eval run`` in-process, on the whole suite unless a probe is named first."""
    paths = [] if args and not args[0].startswith("-") else [str(suite.root)]
    return run_main([*paths, "--no-progress", "--skip-check", *args])


@pytest.fixture
def suite(tmp_path) -> Suite:
    return Suite(tmp_path)


def model_of(suite: Suite, **options) -> dict:
    model = build_model(Workspace.open([suite.root]), **options)
    assert validate(model) == []
    return model


def by_probe(model: dict, probe: str, agent_name: str) -> list[dict]:
    return [g for g in model["groups"] if g["probe"] == probe and g["agent"] == agent_name]


def test_every_start_with_its_answer_and_grading(suite, tmp_path):
    log = tmp_path / "starts.log"
    suite.configure({"rule": {"command": agent("rule_agent.py", "--log", str(log)), "model": "m1"},
                     "crash": {"command": agent("crash_agent.py")}})
    assert run(suite, "--agent", "rule") == 0
    assert run(suite, "--agent", "crash", "--arms", "control", "--reps", "1") == 1
    model = model_of(suite)
    groups = model["groups"]
    # every start the agent logged is in the model, once
    rule_starts = [s for g in groups if g["agent"] == "rule" for s in g["starts"]]
    assert len(rule_starts) == len(log.read_text().splitlines()) == 8
    assert model["meta"]["starts_on_record"] == 8 + 2
    (window,) = by_probe(model, "euphemized-coverage", "rule")
    assert window["zone"] == "window" and window["skill"] == "verify-closeout" and window["on_disk"] == "current"
    assert window["arms"]["treatment"] == {**window["arms"]["treatment"], "reps": 2, "caught": 2, "starts": 2}
    assert window["evidence"]["p"] == pytest.approx(1 / 6) and window["evidence"]["separated"] is False
    assert "not separated at this sample" in window["evidence"]["text"]
    assert window["lint"]["when"] == "run"  # the runner's preflight findings, kept in its plan record
    records = {r["start_id"]: r for r in suite.records()}
    for start in window["starts"]:
        record = records[start["start_id"]]
        text = (suite.runs / record["answer_file"]).read_text(encoding="utf-8")
        assert start["answer"]["text"] == text and start["answer"]["chars"] == len(text)
        assert start["caught"] == record["caught"] and start["passed"] == record["passed"]
        assert start["duration_s"] == pytest.approx(record["duration_s"])
        assert start["grading_note"] is None
        _answer, grades = grade_answer(text, list(json.loads(suite.probe("euphemized-coverage").joinpath("probe.json")
                                                              .read_text())["defects"]), None)
        for grading in start["grading"]:
            assert grading["caught"] == (grading["defect"] in record["caught"])
            assert all(e["held"] for e in grading["expectations"]) == grading["caught"]
    treatment = [s for s in window["starts"] if s["arm"] == "treatment"]
    assert all(e["held"] for s in treatment for d in s["grading"] for e in d["expectations"])
    # the crashed start: status, exit code, stderr tail, no grading
    (crashed,) = by_probe(model, "euphemized-coverage", "crash")
    (start,) = crashed["starts"]
    assert start["status"] == "error" and start["exit_code"] == 3 and "boom" in start["stderr_tail"]
    assert start["grading"] == [] and crashed["arms"]["control"]["unresolved"] == 1
    assert crashed["zone"] == "pending"
    # agents and models are never pooled
    assert {(g["probe"], g["agent"]) for g in groups} == {(p, a) for p in ("euphemized-coverage", "two-gaps")
                                                          for a in ("rule", "crash")}


def test_edited_without_a_version_bump_is_its_own_flagged_group(suite):
    suite.configure({"rule": {"command": agent("rule_agent.py"), "model": "m1"}})
    assert run(suite, str(suite.probe("euphemized-coverage")), "--reps", "1") == 0
    artifact = suite.probe("euphemized-coverage") / "question.md"
    artifact.write_text(artifact.read_text() + "\nOne more line.\n")
    assert run(suite, str(suite.probe("euphemized-coverage")), "--reps", "1") == 0
    groups = by_probe(model_of(suite), "euphemized-coverage", "rule")
    assert len(groups) == 2 and all(g["edited_without_bump"] for g in groups)
    old, new = sorted(groups, key=lambda g: g["on_disk"] != "edited")
    assert old["on_disk"] == "edited" and new["on_disk"] == "current"
    assert old["lint"]["when"] == new["lint"]["when"] == "run"  # as each content ran, edits since or not
    assert all(d["expectations"] is None for s in old["starts"] for d in s["grading"])
    assert all("not on disk as it ran" in s["grading_note"] for s in old["starts"])
    assert all(d["expectations"] for s in new["starts"] for d in s["grading"])
    # an untouched probe is not flagged
    assert run(suite, str(suite.probe("two-gaps")), "--reps", "1") == 0
    (other,) = by_probe(model_of(suite), "two-gaps", "rule")
    assert other["edited_without_bump"] is False


def test_the_probe_as_it_ran_and_unreadable_answers(suite):
    """Each group carries its probe as it ran (the artifact the agents read, each
    defect's quote located in it and its caught_when, from the files on disk), and
    counts the graded reps whose answer no field could be read from: the garbage
    agent's every answer, none of the rule agent's."""
    suite.configure({"rule": {"command": agent("rule_agent.py"), "model": "m1"},
                     "garbage": {"command": agent("garbage_agent.py"), "model": "m1"}})
    assert run(suite, "--agent", "rule") == 0
    assert run(suite, "--agent", "garbage") == 0
    model = model_of(suite)
    for probe in ("euphemized-coverage", "two-gaps"):
        folder = suite.probe(probe)
        written = json.loads((folder / "probe.json").read_text(encoding="utf-8"))
        artifact = (folder / "question.md").read_text(encoding="utf-8")
        for group in by_probe(model, probe, "rule") + by_probe(model, probe, "garbage"):
            content = group["probe_content"]
            assert content["artifact"] == {"path": f"verify-closeout/evals/probes/{probe}/question.md", "text": artifact,
                                           "chars": len(artifact), "truncated": False}
            assert [(d["id"], d["quote"], d["caught_when"]) for d in content["defects"]] == \
                [(d["id"], d["quote"], d["caught_when"]) for d in written["defects"]]
            for defect in content["defects"]:
                (start, end), = defect["quote_spans"]  # ASCII text: UTF-16 offsets are character offsets
                assert artifact[start:end] == defect["quote"]
    records = suite.records()
    for group in model["groups"]:
        sources = [r["answer_source"] for r in records if r["agent"] == group["agent"] and r["probe"] == group["probe"]]
        unreadable = sources.count("none")
        assert group["answers_unreadable"] == {"graded": len(sources), "unreadable": unreadable,
                                               "most": 2 * unreadable > len(sources)}
        assert group["answers_unreadable"]["most"] == (group["agent"] == "garbage")
        assert group["answers_unreadable"]["graded"] == 4
    # once the artifact changes, the probe as it ran is no longer on disk: not shown
    artifact = suite.probe("two-gaps") / "question.md"
    artifact.write_text(artifact.read_text() + "\nedited\n")
    assert all(g["probe_content"] is None for g in by_probe(model_of(suite), "two-gaps", "rule"))


def test_a_quote_is_located_in_utf16_offsets():
    """The browser counts UTF-16 code units: a quote after an astral character
    and across a line break (whitespace runs equal one space) is where
    find_quote finds it, in those units."""
    from skill_eval.evals.viewer_build import probe_content

    artifact = "# 🧪 Closeout\n\nbehaviour unchanged,\n  so coverage applies. Twice: ok ok"
    content = probe_content(artifact, "q.md", [{"id": "D1", "quote": "behaviour unchanged, so coverage applies",
                                                "caught_when": {"verdict": "NOT_PROVEN"}},
                                               {"id": "D2", "quote": "ok", "judge": {"prompt": "x"}},
                                               {"id": "D3", "quote": "not there"}])
    units = artifact.encode("utf-16-le")
    text_of = lambda span: units[2 * span[0]:2 * span[1]].decode("utf-16-le")  # noqa: E731
    d1, d2, d3 = content["defects"]
    assert [text_of(s) for s in d1["quote_spans"]] == ["behaviour unchanged,\n  so coverage applies"]
    assert [text_of(s) for s in d2["quote_spans"]] == ["ok", "ok"] and d2["judged"] and d2["caught_when"] is None
    assert d3["quote_spans"] == [] and not d1["judged"]


def test_frozen_cases_and_lint_findings(suite):
    suite.configure({"rule": {"command": agent("rule_agent.py"), "model": "m1"}})
    assert run(suite, "--reps", "1") == 0
    assert freeze_main([str(suite.probe("two-gaps"))]) == 0
    probe_json = suite.probe("euphemized-coverage") / "probe.json"
    model = model_of(suite)
    (frozen,) = by_probe(model, "two-gaps", "rule")
    (thawed,) = by_probe(model, "euphemized-coverage", "rule")
    assert frozen["frozen"] is True and frozen["frozen_matches"] is True
    assert thawed["frozen"] is False and thawed["frozen_matches"] is None
    from skill_eval.linter.engine import lint_paths

    expected = sorted(d.code for d in lint_paths([probe_json]).diagnostics if d.probe == probe_json.parent)
    assert sorted(f["code"] for f in thawed["lint"]["findings"]) == expected


def test_lint_at_report_time_only_for_unchanged_files(suite):
    """Records without run-time findings (written by hand here, as by a runner
    before plan records kept them): the probe is linted for the report while
    its files hash as they ran, and not at all once they changed."""
    from skill_eval.linter.engine import lint_paths
    from skill_eval.evals.records import sha256_file

    folder = suite.probe("euphemized-coverage")
    record = {"probe": "euphemized-coverage", "version": 1, "probe_sha256": sha256_file(folder / "probe.json"),
              "artifact_sha256": sha256_file(folder / "question.md"), "skill_sha256": sha256_file(suite.skill / "SKILL.md"),
              "skill_tree_sha256": skill_tree_sha256(suite.skill), "agent": "hand", "model": "m", "kind": "floor", "defects": ["D1"], "arm": "control", "rep": 1,
              "status": "ok", "caught": [], "start_id": "s1"}
    append_record(suite.runs / "old.jsonl", record, fsync=False)
    (group,) = model_of(suite)["groups"]
    expected = sorted((d.code, d.message) for d in lint_paths([folder / "probe.json"]).diagnostics if d.probe == folder)
    assert group["lint"]["when"] == "report"
    assert sorted((f["code"], f["message"]) for f in group["lint"]["findings"]) == expected
    assert model_of(suite, lint=False)["groups"][0]["lint"] is None
    (folder / "question.md").write_text((folder / "question.md").read_text() + "\nedited\n")
    (group,) = model_of(suite)["groups"]
    assert group["on_disk"] == "edited" and group["lint"] is None


def test_skill_edited_since_the_run(suite):
    suite.configure({"rule": {"command": agent("rule_agent.py"), "model": "m1"}})
    assert run(suite, str(suite.probe("two-gaps")), "--reps", "1") == 0
    skill = suite.skill / "SKILL.md"
    skill.write_text(skill.read_text() + "\nOne more sentence.\n")
    (group,) = model_of(suite)["groups"]
    assert group["on_disk"] == "skill-edited"
    # probe.json and the artifact are as they ran: the answers are graded again per expectation
    assert all(d["expectations"] is not None for s in group["starts"] for d in s["grading"])


def test_restricted_to_probes_and_agent(suite):
    suite.configure({"a": {"command": agent("rule_agent.py"), "model": "m1"},
                     "b": {"command": agent("rule_agent.py"), "model": "m2"}})
    assert run(suite, "--agent", "a", "--reps", "1") == 0
    assert run(suite, "--agent", "b", "--reps", "1") == 0
    assert {g["agent"] for g in model_of(suite, agent="b")["groups"]} == {"b"}
    model = model_of(suite, ids=["two-gaps"])
    assert {g["probe"] for g in model["groups"]} == {"two-gaps"} and model["meta"]["filters"]["probes"] == ["two-gaps"]
    assert {g["probe"] for g in model_of(suite, paths=[suite.probe("euphemized-coverage")])["groups"]} == {"euphemized-coverage"}


def test_hostile_and_partial_records(suite):
    """Records the model must read without trusting: an answer path leading out
    of the runs folder, a start with no outcome in a file nobody holds, one
    in a file a runner still holds, usage an outcome reports, and a schema 1
    interrupted start stored as an error."""
    import fcntl
    import os

    suite.configure({"rule": {"command": agent("rule_agent.py"), "model": "m1"}})
    assert run(suite, str(suite.probe("euphemized-coverage")), "--reps", "1", "--arms", "control") == 0
    (record,) = suite.records()
    secret = suite.root.parent / "secret.txt"
    secret.write_text("do not show")
    base = {k: record[k] for k in ("probe", "version", "probe_sha256", "artifact_sha256", "skill_sha256",
                                   "skill_tree_sha256", "agent", "model", "kind", "defects", "arm")}

    def start(rep, start_id, **extra):
        return {"schema": 2, "type": "start", "start_id": start_id, **base, "rep": rep,
                "started": f"2025-01-01T00:00:0{rep}Z", **extra}

    def outcome(rep, start_id, **extra):
        return {"schema": 2, "type": "outcome", "start_id": start_id, "probe": base["probe"], "version": base["version"],
                "arm": base["arm"], "rep": rep, "ended": f"2025-01-01T00:01:0{rep}Z", **extra}

    path = suite.runs / "extra.jsonl"
    for line in (start(2, "s-escape"), outcome(2, "s-escape", status="ok", caught=[], answer_file="../../../../secret.txt"),
                 start(3, "s-open"),
                 start(4, "s-two"), outcome(4, "s-two", status="ok", caught=["D1"], passed=True, tokens_in=1200,
                                            tokens_out=80, cost_usd=0.01, turns=2),
                 {**base, "rep": 5, "start_id": "s-int", "status": "error",
                  "error": "interrupted: the run was cancelled while the agent ran"}):
        append_record(path, line, fsync=False)
    held = suite.runs / "held.jsonl"
    append_record(held, start(6, "s-live"), fsync=False)
    (group,) = model_of(suite)["groups"]
    starts = {s["start_id"]: s for s in group["starts"]}
    assert starts["s-escape"]["answer"] is None and "outside" in starts["s-escape"]["grading_note"]
    assert "do not show" not in json.dumps(group)
    assert starts["s-open"]["status"] == "interrupted" and "no outcome" in starts["s-open"]["error"]
    two = starts["s-two"]
    assert (two["status"], two["rep"], two["tokens_in"], two["tokens_out"], two["cost_usd"], two["turns"]) == \
        ("ok", 4, 1200, 80, 0.01, 2)
    assert starts["s-int"]["status"] == "interrupted"
    # nobody holds held.jsonl: its start is interrupted
    assert starts["s-live"]["status"] == "interrupted"
    control = group["arms"]["control"]
    assert (control["starts"], control["reps"], control["interrupted"], control["running"], control["unresolved"]) == \
        (6, 3, 3, 0, 3)
    # a runner holding it (its flock): running, neither interrupted nor a rep without outcome
    fd = os.open(held, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        (group,) = model_of(suite)["groups"]
    finally:
        os.close(fd)
    starts = {s["start_id"]: s for s in group["starts"]}
    assert starts["s-live"]["status"] == "running" and starts["s-live"]["error"] is None
    control = group["arms"]["control"]
    assert (control["starts"], control["reps"], control["interrupted"], control["running"], control["unresolved"]) == \
        (6, 3, 2, 1, 2)


def test_one_fisher_test_and_one_separation_rule(suite):
    """The model's evidence is the records' own sample (sample_rows: the text
    report, the calibration rules and the editor read the same), including the
    boundary p = alpha: 3 of 3 against 0 of 3 gives exactly 1/20."""
    from skill_eval.evals.records import read_runs_file
    from skill_eval.evals.stats import SEPARATION_ALPHA, fisher_greater, sample_rows

    assert fisher_greater(3, 3, 0, 3) == pytest.approx(1 / 20)
    assert fisher_greater(3, 4, 1, 4) == pytest.approx(17 / 70)  # Fisher's tea tasting, one-sided
    suite.configure({"rule": {"command": agent("rule_agent.py"), "model": "m1"}})
    assert run(suite, "--reps", "3") == 0
    model = model_of(suite)
    records = [r for path in sorted(suite.runs.glob("*.jsonl")) for _l, r in read_runs_file(path).records]
    samples = sample_rows(records)
    assert len(samples) == len(model["groups"]) == 2
    for group in model["groups"]:
        (sample,) = [v for k, v in samples.items() if k[0] == group["probe"]]
        assert group["zone"] == sample.zone
        assert group["evidence"]["p"] == sample.p_value and group["evidence"]["separated"] == sample.separated
        for arm in ("control", "treatment"):
            assert (group["arms"][arm]["reps"], group["arms"][arm]["caught"]) == (sample.arms[arm].reps,
                                                                                  sample.arms[arm].caught)
    (window,) = by_probe(model, "euphemized-coverage", "rule")
    assert window["evidence"]["p"] == pytest.approx(SEPARATION_ALPHA) and window["evidence"]["separated"] is True
    assert window["evidence"]["text"].startswith("separated (p = 0.05, 3 treatment vs 3 control reps)")


def test_typed_dicts_name_the_schema_keys():
    definitions = load_schema()["$defs"]
    assert set(TYPED_DICTS) == set(definitions)
    for name, typed in TYPED_DICTS.items():
        assert set(typed.__annotations__) == set(definitions[name]["properties"]), name


def test_docs_describe_every_field():
    text = (Path(__file__).resolve().parents[2] / "docs" / "report.md").read_text(encoding="utf-8")
    for name, definition in load_schema()["$defs"].items():
        for field in definition["properties"]:
            assert f"`{field}`" in text, f"docs/report.md does not describe {name}.{field}"


# -- grading per expectation agrees with the runner's grading ------------------------------


def _probes():
    workspace = Workspace.open([SUITE])
    return [workspace.load(path, need_skill=False) for path in workspace.probe_paths()]


ANSWER_LINES = st.lists(st.sampled_from([
    "verdict: PASS", "verdict: NOT_PROVEN", "**verdict**: `NOT_PROVEN`", "status: NOT_PROVEN", "criteria: 3",
    "criteria: 2, 4", "criteria:", "- 2", "- 4", "unproven: 4", '{"verdict": "NOT_PROVEN", "criteria": [2, 3]}',
    '{"result": "PASS"}', "Here is my review.", "", "criteria: 12",
]), max_size=8)


@settings(max_examples=150, deadline=None)
@given(lines=ANSWER_LINES)
def test_expectations_agree_with_grade_defect(lines):
    text = "\n".join(lines)
    for probe in PROBES:
        _source, graded = grade_expectations(text, probe)
        _answer, grades = grade_answer(text, list(probe.defects), probe.output_spec)
        assert [(d, caught) for d, caught, _e in graded] == [(g.defect_id, g.caught) for g in grades]
        assert [[f"{e['field']}: {e['reason']}" for e in expectations] for _d, _c, expectations in graded] == \
            [g.reasons for g in grades]


PROBES = _probes()
