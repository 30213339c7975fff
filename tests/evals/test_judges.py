"""Judge graders: real subprocess judges (judges/verdict_judge.py) in check and run."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from skill_eval.evals.cli import check_main, run_main
from skill_eval.evals.judges import JudgeError, JudgeSpec, resolve_command, run_judge

from evals_helpers import HERE, PYTHON, agent_command

JUDGE = HERE / "judges" / "verdict_judge.py"
RULE = {"command": agent_command("rule_agent.py"), "model": "m1", "timeout": 30}


def judge_probe(suite, mode: str = "rule", *, fields: dict | None = None, timeout: float | None = None,
                command: list[str] | None = None) -> Path:
    """Grade euphemized-coverage's D1 by the test judge (instead of its fields, unless given)."""
    path = suite.probe("euphemized-coverage") / "probe.json"
    probe = json.loads(path.read_text("utf-8"))
    defect = probe["defects"][0]
    del defect["caught_when"]
    if fields is not None:
        defect["caught_when"] = fields
    defect["judge"] = {"command": command or [PYTHON, "{workspace}/judge.py", "--mode", mode],
                       "rubric": "Names criterion 3 and does not pass it"}
    if timeout is not None:
        defect["judge"]["timeout"] = timeout
    path.write_text(json.dumps(probe, indent=2), "utf-8")
    (suite.root / "judge.py").write_bytes(JUDGE.read_bytes())
    return path


def judge_calls(tmp_path: Path) -> list[dict]:
    log = tmp_path / "judge.jsonl"
    return [json.loads(line) for line in log.read_text("utf-8").splitlines()] if log.exists() else []


@pytest.fixture(autouse=True)
def judge_log(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_LOG", str(tmp_path / "judge.jsonl"))


def test_check_calibrates_a_judge_on_the_known_transcripts(suite, tmp_path, capsys):
    judge_probe(suite)
    assert check_main([str(suite.probe("euphemized-coverage"))]) == 0
    out = capsys.readouterr().out
    assert "4 transcript(s) checked, 0 mismatched" in out
    assert "judge: caught (verdict 'NOT_PROVEN'" in out and "judge: missed (verdict 'PASS'" in out
    calls = judge_calls(tmp_path)
    assert len(calls) == 4
    transcripts = suite.probe("euphemized-coverage") / "transcripts"
    by_body = {call["answer"].strip(): call for call in calls}
    for path in transcripts.glob("*.md"):
        body = path.read_text("utf-8").split("---\n", 2)[2]
        call = by_body[body.strip()]
        # What the judge read: the whole answer, the fields read from it, the defect as probe.json has it,
        # the artifact, the probe; it ran in the probe's folder.
        assert call["schema"] == 1
        assert call["probe"] == {"id": "euphemized-coverage", "version": 1, "step_heading": "Step 2: Check the evidence lines"}
        assert call["defect"]["id"] == "D1" and call["defect"]["judge"]["rubric"] == "Names criterion 3 and does not pass it"
        assert call["artifact"] == (suite.probe("euphemized-coverage") / "question.md").read_text("utf-8")
        assert Path(call["cwd"]) == suite.probe("euphemized-coverage")
        assert call["argv"][0] == str(suite.root / "judge.py")
    fields = {name: call["fields"] for name, call in by_body.items()}
    assert fields["All three criteria have evidence lines; the change is ready.\n\nverdict: PASS"] == {"verdict": "PASS"}
    assert {"verdict": "NOT_PROVEN", "criteria": ["3"]} in fields.values()


def test_a_judge_that_disagrees_with_a_transcript_blocks_the_run(suite, tmp_path, capsys):
    judge_probe(suite, "always")
    suite.configure({"rule": RULE})
    assert check_main([str(suite.probe("euphemized-coverage"))]) == 1
    out = capsys.readouterr().out
    assert "2 mismatched" in out and "expected missed, graded caught [MISMATCH]" in out
    assert run_main([str(suite.probe("euphemized-coverage")), "--no-progress"]) == 1
    assert "known transcripts disagree" in capsys.readouterr().err
    assert suite.files() == []


@pytest.mark.parametrize("mode, message", [
    ("garbage", "printed 'The answer looks right to me.', not a verdict"),
    ("nobool", "not a verdict"),
    ("exit", "exited with status 3 (stderr: judge model unavailable)"),
])
def test_a_judge_without_a_verdict_fails_the_check_clearly(mode, message, suite, capsys):
    judge_probe(suite, mode)
    assert check_main([str(suite.probe("euphemized-coverage"))]) == 1
    out = capsys.readouterr().out
    assert "4 mismatched" in out and "graded not graded [MISMATCH]" in out and message in out
    assert "Traceback" not in out


def test_a_hanging_judge_is_killed_at_its_timeout_with_what_it_started(suite, tmp_path, capsys):
    judge_probe(suite, "sleep", timeout=1)
    (suite.probe("euphemized-coverage") / "transcripts" / "caught-json.md").unlink()
    for name in ("missed-pass.md", "names-but-passes.md"):
        (suite.probe("euphemized-coverage") / "transcripts" / name).unlink()
    clock = time.monotonic()
    assert check_main([str(suite.probe("euphemized-coverage"))]) == 1
    assert time.monotonic() - clock < 30
    assert "gave no verdict within 1 s; killed" in capsys.readouterr().out
    # The judge's own child (a `sleep 60` holding its stdout) went with it.
    time.sleep(0.2)
    sleepers = [pid for pid in os.listdir("/proc") if pid.isdigit() and _cmdline(pid) == ["sleep", "60"]
                and _started_by_this_test(pid, tmp_path)]
    assert sleepers == []


def _cmdline(pid: str) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    except OSError:
        return []


def _started_by_this_test(pid: str, tmp_path: Path) -> bool:
    """Whether the process carries this test's ``JUDGE_LOG`` (the judge's child does)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"JUDGE_LOG={tmp_path / 'judge.jsonl'}".encode() in environ


def test_live_answers_are_graded_by_the_judge(suite, tmp_path, capsys):
    judge_probe(suite)
    suite.configure({"rule": RULE})
    assert run_main([str(suite.probe("euphemized-coverage")), "--no-progress", "--reps", "2"]) == 0
    records = suite.all_records()
    assert sorted((r["arm"], r["passed"], tuple(r["caught"])) for r in records) == [
        ("control", False, ()), ("control", False, ()), ("treatment", True, ("D1",)), ("treatment", True, ("D1",))]
    live = [call for call in judge_calls(tmp_path) if call["answer"].startswith("Here is my closeout review.")]
    assert len(live) == 4  # one per start (and 4 more for the transcripts checked first)
    assert sorted(call["fields"]["verdict"] for call in live) == ["NOT_PROVEN", "NOT_PROVEN", "PASS", "PASS"]


def test_a_judge_is_not_asked_when_a_field_already_fails(suite, tmp_path):
    judge_probe(suite, "always", fields={"verdict": "NOT_PROVEN"})
    suite.configure({"rule": RULE})
    assert run_main([str(suite.probe("euphemized-coverage")), "--no-progress", "--reps", "1", "--skip-check"]) == 0
    records = {r["arm"]: r for r in suite.all_records()}
    assert records["treatment"]["caught"] == ["D1"] and records["control"]["caught"] == []
    calls = judge_calls(tmp_path)
    assert [call["fields"]["verdict"] for call in calls] == ["NOT_PROVEN"]


def test_a_judge_that_fails_on_a_live_answer_is_a_grading_error_on_record(suite, tmp_path, capsys):
    judge_probe(suite, "exit")
    suite.configure({"rule": RULE})
    assert run_main([str(suite.probe("euphemized-coverage")), "--no-progress", "--reps", "1", "--skip-check"]) == 1
    for record in suite.all_records():
        assert record["status"] == "error" and "passed" not in record and record["caught"] == []
        assert record["error"].startswith(f"grading error: D1: the judge `{PYTHON} {{workspace}}/judge.py --mode exit` "
                                          "exited with status 3")
        assert "judge model unavailable" in record["grading_errors"]["D1"]
        assert (suite.runs / record["answer_file"]).read_text("utf-8").startswith("Here is my closeout review.")


def test_a_missing_judge_program_is_refused_before_any_start(suite, tmp_path, capsys):
    judge_probe(suite, command=["./judges/absent.py"])
    suite.configure({"rule": RULE})
    assert run_main([str(suite.probe("euphemized-coverage")), "--no-progress", "--skip-check"]) == 2
    error = capsys.readouterr().err
    assert "defect D1: the judge's program" in error and "absent.py" in error and "does not exist" in error
    assert suite.files() == []


def test_run_judge_reads_one_verdict_object(tmp_path):
    script = tmp_path / "judge.py"
    script.write_text("import sys, json; data = json.load(sys.stdin); "
                      "print(json.dumps({'caught': data['answer'] == 'yes', 'reason': 'read ' + data['answer']}))")
    argv = resolve_command(JudgeSpec((PYTHON, str(script))), tmp_path, None)
    assert run_judge(argv, {"answer": "yes"}, cwd=tmp_path, timeout=30) == (True, "read yes")
    assert run_judge(argv, {"answer": "no"}, cwd=tmp_path, timeout=30) == (False, "read no")
    with pytest.raises(JudgeError, match="cannot start"):
        run_judge([str(tmp_path)], {}, cwd=tmp_path, timeout=5)
    with pytest.raises(JudgeError, match="not found on PATH"):
        resolve_command(JudgeSpec(("no-such-judge-program",)), tmp_path, None)
    with pytest.raises(JudgeError, match="not executable"):
        resolve_command(JudgeSpec(("./judge.py",)), tmp_path, None)


def test_the_report_does_not_regrade_a_judged_defect(suite, tmp_path):
    """The report grades answers again with caught_when; a judge is not run
    again there, so a judged defect reads as the run recorded it."""
    from skill_eval.evals.probes import Workspace
    from skill_eval.evals.viewer_build import build_model

    judge_probe(suite)
    suite.configure({"rule": RULE})
    assert run_main([str(suite.probe("euphemized-coverage")), "--no-progress", "--reps", "1"]) == 0
    calls = len(judge_calls(tmp_path))
    model = build_model(Workspace.open([suite.root]), lint=False)
    starts = {start["arm"]: start for group in model["groups"] for start in group["starts"]}
    assert starts["treatment"]["caught"] == ["D1"] and starts["control"]["caught"] == []
    assert starts["treatment"]["grading_note"] is None and starts["control"]["grading_note"] is None
    assert len(judge_calls(tmp_path)) == calls
