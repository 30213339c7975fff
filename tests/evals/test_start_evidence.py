"""What an outcome record says beyond the grade, with real subprocess agents:
contamination (an agent that read the answer key), skill use of a command
agent, and the judge's verdict and reason.

Ground truth is what the agents and the judge log themselves (what each
printed, what each was handed), and the canary planted in probe.json by the
test, never what the runner says about itself.
"""

from __future__ import annotations

import json
from pathlib import Path

from skill_eval.evals.cli import report_main, run_main
from skill_eval.evals.contamination import AnswerKey, MIN_WORDS, Shown
from skill_eval.evals.probes import Workspace
from skill_eval.evals.runner import suite_budget
from skill_eval.evals.viewer_build import build_model

from evals_helpers import HERE, PYTHON, agent_command

PROBE = "euphemized-coverage"
CANARY = "skill-eval canary 7c41: this sentence lives only in the answer key of the probe"
JUDGE = HERE / "judges" / "verdict_judge.py"
RAN_WITH_ERRORS = 1
"""``skill-eval run``'s exit status when starts ended in errors."""


def plant_canary(suite) -> Path:
    """Add an ``x-`` key holding the canary to the probe's probe.json (as an
    author might keep a note there): text of the answer key only."""
    path = suite.probe(PROBE) / "probe.json"
    probe = json.loads(path.read_text("utf-8"))
    probe["x-canary"] = CANARY
    path.write_text(json.dumps(probe, indent=2), "utf-8")
    return path


def agent_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()] if path.exists() else []


def test_an_agent_that_read_probe_json_is_contaminated_never_a_catch_and_counted(suite, tmp_path, capsys):
    probe_json = plant_canary(suite)
    log = tmp_path / "snoop.jsonl"
    # An unsealed run: the command agent is given the workspace's path and reads the answer key.
    suite.configure({"snoop": {"command": agent_command(
        "key_reader_agent.py", "--read", "{workspace}/verify-closeout/evals/probes/euphemized-coverage/probe.json",
        "--grep", "x-canary", "--log", str(log)), "timeout": 30}}, max_starts=2)
    ran = run_main([str(suite.probe(PROBE)), "--no-progress", "--reps", "1", "--skip-check"])
    printed = agent_log(log)
    assert ran == RAN_WITH_ERRORS
    assert len(printed) == 2 and all(CANARY in entry["printed"] for entry in printed)
    # Without the canary its answer is a catch: the fields say NOT_PROVEN, criterion 3.
    assert all("verdict: NOT_PROVEN\ncriteria: 3" in entry["printed"] for entry in printed)

    records = suite.records(PROBE)
    assert sorted(r["start_id"] for r in records) == sorted(entry["start_id"] for entry in printed)
    for record in records:
        assert record["status"] == "error" and record["caught"] == [] and "passed" not in record, record
        leaks = record["contaminated"]
        # The canary's line of probe.json, and its value: both only there.
        assert {leak["source"] for leak in leaks} == {probe_json.relative_to(suite.root).as_posix()}
        assert sorted(leak["text"] for leak in leaks) == [f'"x-canary": "{CANARY}"', CANARY]
        assert record["error"].startswith("contaminated: ") and "never graded" in record["error"]

    # Counted against the budget (2 of 2): running the reps again is refused, and the agent never starts.
    workspace = Workspace.open([suite.root])
    assert suite_budget(workspace).used == 2
    capsys.readouterr()
    assert run_main([str(suite.probe(PROBE)), "--no-progress", "--reps", "1", "--skip-check", "--retry-errors"]) == 1
    assert "refused: the plan needs 2 start(s) but only 0 of [calibration] max-starts = 2 remain" in capsys.readouterr().err
    assert len(agent_log(log)) == 2

    # The report: no graded rep, no catch; both starts contaminated, flagged.
    (group,) = build_model(workspace)["groups"]
    for arm in ("control", "treatment"):
        assert group["arms"][arm]["reps"] == 0 and group["arms"][arm]["caught"] == 0
        assert group["arms"][arm]["contaminated"] == 1 and group["arms"][arm]["errors"] == 1
    assert group["zone"] == "pending"
    assert report_main([str(suite.root)]) in (0, 1)
    assert "CONTAMINATED: 2 start(s) saw the answer key (never graded)" in capsys.readouterr().out


def test_an_answer_that_quotes_the_artifact_is_clean(suite, tmp_path):
    plant_canary(suite)
    log = tmp_path / "quoter.jsonl"
    suite.configure({"quoter": {"command": agent_command("key_reader_agent.py", "--quote-artifact", "question.md",
                                                                  "--log", str(log)),
                                "timeout": 30}})
    assert run_main([str(suite.probe(PROBE)), "--no-progress", "--reps", "1", "--skip-check"]) == 0
    printed = agent_log(log)
    artifact = (suite.probe(PROBE) / "question.md").read_text("utf-8")
    quote = json.loads((suite.probe(PROBE) / "probe.json").read_text("utf-8"))["defects"][0]["quote"]
    # Each answer holds the artifact whole, the defect's quote (which probe.json holds too) included.
    assert len(printed) == 2 and all(artifact in entry["printed"] and quote in entry["printed"] for entry in printed)
    for record in suite.records(PROBE):
        assert "contaminated" not in record, record
        assert record["status"] == "ok" and record["passed"] is True and record["caught"] == ["D1"]


def test_a_command_agents_skill_use(suite, tmp_path):
    """A treatment handed SKILL.md in its prompt loaded it by construction; a
    command agent's plain answer cannot tell (unknown, never false)."""
    suite.configure({"rule": {"command": agent_command("rule_agent.py"), "timeout": 30}})
    assert run_main([str(suite.probe(PROBE)), "--no-progress", "--reps", "1", "--skip-check"]) == 0
    records = {r["arm"]: r for r in suite.records(PROBE)}
    assert records["treatment"]["skill_loaded"] is True and "prepend" in records["treatment"]["skill_evidence"]
    assert records["control"]["skill_loaded"] is None and records["control"]["skill_evidence"]
    (group,) = build_model(Workspace.open([suite.root]))["groups"]
    assert group["arms"]["treatment"]["skill_loaded"] == 1 and group["arms"]["control"]["skill_loaded"] == 0
    assert all(start["skill_flag"] is None for start in group["starts"])


def judged_probe(suite) -> None:
    """Grade D1 by the test judge (a real subprocess) instead of its fields."""
    path = suite.probe(PROBE) / "probe.json"
    probe = json.loads(path.read_text("utf-8"))
    defect = probe["defects"][0]
    del defect["caught_when"]
    defect["judge"] = {"command": [PYTHON, "{workspace}/judge.py", "--mode", "rule"],
                       "rubric": "Names criterion 3 and does not pass it"}
    path.write_text(json.dumps(probe, indent=2), "utf-8")
    (suite.root / "judge.py").write_bytes(JUDGE.read_bytes())


def test_the_judges_verdict_and_reason_are_on_the_outcome_record(suite, tmp_path, monkeypatch):
    judged_probe(suite)
    judge_log = tmp_path / "judge.jsonl"
    monkeypatch.setenv("JUDGE_LOG", str(judge_log))
    suite.configure({"rule": {"command": agent_command("rule_agent.py"), "timeout": 30}})
    assert run_main([str(suite.probe(PROBE)), "--no-progress", "--reps", "1", "--skip-check"]) == 0
    calls = [json.loads(line) for line in judge_log.read_text("utf-8").splitlines()]
    assert len(calls) == 2
    records = {r["arm"]: r for r in suite.records(PROBE)}
    for call in calls:
        # What the judge printed, restated from what it was handed (its own log).
        fields = call["fields"]
        criteria = fields.get("criteria", [])
        criteria = criteria if isinstance(criteria, list) else [part.strip() for part in criteria.split(",")]
        caught = fields.get("verdict") == "NOT_PROVEN" and "3" in criteria
        reason = f"verdict {fields.get('verdict')!r}, criteria {criteria!r}"
        (record,) = [r for r in records.values() if call["answer"] == (suite.runs / r["answer_file"]).read_text("utf-8")]
        assert record["judge_verdicts"] == {"D1": {"caught": caught, "reason": reason}}, record
        assert record["caught"] == (["D1"] if caught else [])
    assert records["treatment"]["judge_verdicts"]["D1"]["caught"] is True
    assert records["control"]["judge_verdicts"]["D1"]["caught"] is False
    # The report model carries them to the viewer, per defect of each graded start.
    (group,) = build_model(Workspace.open([suite.root]))["groups"]
    for start in group["starts"]:
        (grading,) = start["grading"]
        assert grading["judge"] == records[start["arm"]]["judge_verdicts"]["D1"]


def test_old_records_without_the_fields_still_read(suite):
    """A runs file written before these fields: the report reads it, the
    skill's use is unknown, nothing is flagged or contaminated."""
    from skill_eval.linter.run_records import parse_runs

    suite.configure({"rule": {"command": agent_command("rule_agent.py"), "timeout": 30}})
    assert run_main([str(suite.probe(PROBE)), "--no-progress", "--reps", "1", "--skip-check"]) == 0
    (path,) = suite.files()
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    for line in lines:
        for key in ("skill_loaded", "skill_evidence", "contaminated", "judge_verdicts"):
            line.pop(key, None)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    assert len(parse_runs(path, path.read_bytes()).records) == 2
    (group,) = build_model(Workspace.open([suite.root]))["groups"]
    assert group["zone"] == "window"
    for start in group["starts"]:
        assert start["skill_loaded"] is None and start["skill_flag"] is None and start["contaminated"] == []
    assert group["arms"]["treatment"]["skill_loaded"] == 0 and group["arms"]["treatment"]["skill_not_loaded"] == 0


def test_a_field_of_the_wrong_type_sets_the_line_aside(suite):
    """skill_loaded as a string, contaminated as an object: the outcome line is
    set aside whole (its start reads as interrupted), never half-read."""
    from skill_eval.linter.run_records import parse_runs

    suite.configure({"rule": {"command": agent_command("rule_agent.py"), "timeout": 30}})
    assert run_main([str(suite.probe(PROBE)), "--no-progress", "--reps", "1", "--skip-check"]) == 0
    (path,) = suite.files()
    original = path.read_text("utf-8").splitlines()
    for key, value in (("skill_loaded", "yes"), ("contaminated", {"source": "x"}), ("judge_verdicts", []),
                       ("skill_evidence", 3)):
        lines = [json.loads(line) for line in original]
        for line in lines:
            if line["type"] == "outcome":
                line[key] = value
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
        records = [record for _line, record in parse_runs(path, path.read_bytes()).records]
        assert all(record["status"] == "interrupted" for record in records), (key, records)
        build_model(Workspace.open([suite.root]))


def test_the_answer_key_needs_distinctive_text():
    """Short lines, answer-shaped lines and lines the agent was shown are never
    looked for; a long line of the key's own words is."""
    artifact = "| 3 | metrics emitted | behavior unchanged from prior release, so existing coverage applies |"
    key = AnswerKey.build([
        ("p/probe.json", json.dumps({"quote": "behavior unchanged from prior release, so existing coverage applies",
                                     "x-note": "the metrics criterion is the one a careless reviewer signs off"},
                                    indent=2)),
        ("p/transcripts/t.md", 'verdict: PASS\n{"verdict": "PASS", "criteria": []}\n'
                               "Criterion 3 leans on prior behavior, not on a test of this change."),
    ], Shown([artifact, "verdict: PASS or NOT_PROVEN; criteria: the numbers"]))
    texts = sorted(leak.text for leak in key.needles.values())
    assert texts == ['"x-note": "the metrics criterion is the one a careless reviewer signs off"',
                     "Criterion 3 leans on prior behavior, not on a test of this change.",
                     "the metrics criterion is the one a careless reviewer signs off"], texts
    assert all(needle.count(" ") + 1 >= MIN_WORDS for needle in key.needles)
    # Found through markup, case and JSON escaping; not found when only partly said.
    assert key.find("> CRITERION 3 leans on prior behavior,\n> not on a test of this change!")
    escaped = json.dumps({"type": "tool_result", "content": "x-note: The metrics criterion is the one a careless "
                                                             "reviewer signs off\n"})
    assert [leak.text for leak in key.find("", escaped)] == [
        '"x-note": "the metrics criterion is the one a careless reviewer signs off"',
        "the metrics criterion is the one a careless reviewer signs off"]
    assert key.find("Criterion 3 leans on prior behavior, not on a test") == []
    assert key.find(artifact + "\nverdict: PASS") == []


def test_another_probes_answer_key_is_contamination_too(suite, tmp_path):
    """An agent that read another probe's probe.json saw the suite's answer
    key: the suite's key (every file under evals/ but runs/) finds it."""
    log = tmp_path / "snoop.jsonl"
    other = suite.probe("two-gaps") / "probe.json"
    suite.configure({"snoop": {"command": agent_command("key_reader_agent.py", "--read", str(other), "--log", str(log)),
                               "timeout": 30}})
    run_main([str(suite.probe(PROBE)), "--no-progress", "--reps", "1", "--skip-check", "--arms", "control"])
    (printed,) = agent_log(log)
    (record,) = suite.records(PROBE)
    assert record["status"] == "error" and record["contaminated"], record
    source = other.relative_to(suite.root).as_posix()
    assert {leak["source"] for leak in record["contaminated"]} == {source}
    assert all(leak["text"] in printed["printed"] for leak in record["contaminated"])


def test_the_suites_key_is_built_once_for_all_its_probes(suite, monkeypatch):
    """Linear in the suite: its files are read once, however many probes ask."""
    import shutil

    from skill_eval.evals import contamination
    from skill_eval.evals.evidence import StartEvidence

    for n in range(40):
        shutil.copytree(suite.probe("two-gaps"), suite.probes / f"copy-{n:02d}")
        path = suite.probes / f"copy-{n:02d}" / "probe.json"
        path.write_text(path.read_text("utf-8").replace('"two-gaps"', f'"copy-{n:02d}"'), "utf-8")
    reads = []
    real = contamination.suite_key_files
    monkeypatch.setattr(contamination, "suite_key_files", lambda folder: reads.append(folder) or real(folder))
    workspace = Workspace.open([suite.root])
    probes, _errors = workspace.load_all(workspace.probe_paths())
    assert len(probes) == 42
    evidence = StartEvidence(workspace.root)
    for probe in probes:
        assert evidence.leaks(probe, "verdict: PASS", "") == []
    assert len(reads) == 1


def test_the_search_is_linear_in_the_output():
    """20,000 strings and a 4 MiB transcript of JSON lines (a tool's output,
    escaped): one pass, found where it is, in seconds (a regular expression of
    the same strings took minutes on 10 MB)."""
    import random
    import string
    import time

    rng = random.Random(7)

    def word() -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))

    key = AnswerKey.build([("k.md", "\n".join(" ".join(word() for _ in range(9)) for _ in range(20000)))])
    assert len(key.needles) == 20000
    planted = next(iter(key.needles.values())).text
    filler = " ".join(word() for _ in range(600000))
    middle = len(filler) // 2
    text = filler[:middle] + " " + planted.upper() + " " + filler[middle:]
    transcript = "\n".join(json.dumps({"type": "tool_result", "content": text[i:i + 4096]})
                           for i in range(0, len(text), 4096))
    began = time.monotonic()
    found = key.find("", transcript)
    took = time.monotonic() - began
    assert [leak.text for leak in found] == [planted]
    assert took < 20, took


def test_a_control_that_loaded_the_skill_is_an_isolation_failure(suite, tmp_path, capsys):
    """A command agent whose output is a harness transcript (here Claude Code's
    stream-json, captured from the real CLI) is read like one: a control start
    that loaded the skill is flagged as an isolation failure."""
    transcript = HERE.parent / "fixtures" / "skill_use" / "claude-code-treatment.out"
    renamed = tmp_path / "transcript.out"  # the captured skill's name, as this suite's skill is named
    renamed.write_text(transcript.read_text("utf-8").replace("closeout-review", "verify-closeout"), "utf-8")
    suite.configure({"wrapper": {"command": agent_command("key_reader_agent.py", "--read", str(renamed)),
                                 "timeout": 30}})
    run_main([str(suite.probe(PROBE)), "--no-progress", "--reps", "1", "--skip-check", "--arms", "control"])
    (record,) = suite.records(PROBE)
    assert record["skill_loaded"] is True, record
    assert record["skill_evidence"] == 'Skill tool call {"skill": "verify-closeout"} (read as a claude-code transcript)'
    (group,) = build_model(Workspace.open([suite.root]))["groups"]
    (start,) = group["starts"]
    assert start["skill_flag"] == "isolation-failure" and group["arms"]["control"]["skill_loaded"] == 1
    capsys.readouterr()
    report_main([str(suite.root)])
    assert "ISOLATION FAILURE: the control loaded the skill in 1 start(s)" in capsys.readouterr().out


def test_links_and_fifos_under_evals_are_never_read(suite, tmp_path):
    """A link in the answer key's folders is not followed (its target, outside
    the workspace, is no answer key) and a FIFO is never opened (nothing waits)."""
    import os

    outside = tmp_path / "outside.md"
    outside.write_text(CANARY + "\n", "utf-8")
    transcripts = suite.probe(PROBE) / "transcripts"
    (transcripts / "linked.md").symlink_to(outside)
    os.mkfifo(suite.probes / "pipe")
    (suite.probes / "deep").mkdir()
    deep = suite.probes / "deep"
    for level in range(60):
        deep = deep / f"d{level}"
    deep.mkdir(parents=True)
    (deep / "note.md").write_text("a deeply nested note that no agent has any business quoting back\n", "utf-8")
    workspace = Workspace.open([suite.root])
    probe = workspace.load((suite.probe(PROBE) / "probe.json").resolve())
    from skill_eval.evals.evidence import StartEvidence

    evidence = StartEvidence(workspace.root)
    assert evidence.leaks(probe, CANARY, "") == []
    assert evidence.leaks(probe, "a deeply nested note that no agent has any business quoting back", "") == []
