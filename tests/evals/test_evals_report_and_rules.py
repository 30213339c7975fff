"""report (text/JSON; the HTML viewer and JUnit: tests/report/), check, freeze, and the calibration rules SE502-SE505."""

from __future__ import annotations

import json
import re

from skill_eval.evals.cli import check_main, freeze_main, report_main
from skill_eval.linter.engine import lint_paths
from skill_eval.evals.records import append_record, sha256_file


def rec(suite, probe, version, arm, rep, passed, *, status="ok", kind="floor", agent="x"):
    folder = suite.probe(probe)
    return {"probe": probe, "version": version, "probe_sha256": sha256_file(folder / "probe.json"),
            "artifact_sha256": sha256_file(folder / "question.md"), "arm": arm, "rep": rep, "agent": agent,
            "model": "m", "status": status, "kind": kind, "defects": ["D1"],
            "caught": ["D1"] if passed and status == "ok" else [], "started": "2025-01-01T00:00:00Z",
            "ended": f"2025-01-0{rep}T00:00:00Z"}


def write(suite, probe, *records):
    """Append records to the probe's own file (any name under evals/runs/ is read)."""
    for record in records:
        append_record(suite.runs / f"{record['probe']}.jsonl", record, fsync=False)


def codes(suite, code):
    return [d for d in lint_paths([suite.root]).diagnostics if d.code == code]


def seed_window_and_floor(suite):
    write(suite, "euphemized-coverage",
          rec(suite, "euphemized-coverage", 1, "control", 1, False), rec(suite, "euphemized-coverage", 1, "control", 2, False),
          rec(suite, "euphemized-coverage", 1, "treatment", 1, True), rec(suite, "euphemized-coverage", 1, "treatment", 2, True),
          rec(suite, "euphemized-coverage", 1, "treatment", 3, True, status="timeout"))
    write(suite, "two-gaps",
          rec(suite, "two-gaps", 1, "control", 1, False), rec(suite, "two-gaps", 1, "control", 2, False),
          rec(suite, "two-gaps", 1, "treatment", 1, False), rec(suite, "two-gaps", 1, "treatment", 2, False))


def test_report_text_and_json(suite, capsys, monkeypatch):
    seed_window_and_floor(suite)
    assert report_main([str(suite.root)]) == 0
    out = capsys.readouterr().out
    assert "agent x · model m: 2 probe version(s): window 1, floor 1; 0 separated" in out
    assert re.search(r"euphemized-coverage\s+1\s+0/2 \[0\.00-0\.66\]\s+2/2 \[0\.34-1\.00\] \+1 timeout\s+window\s+"
                     r"pass@2 0\.00/1\.00\s+not separated at this sample \(p=0\.17\)\s+5\s+1 rep\(s\) ungraded, their last start: 1 timed "
                     r"out", out)
    assert re.search(r"two-gaps\s+1\s+0/2 .*\s+floor\s+pass@\d 0\.00/0\.00\s+not separated at this sample \(p=1\)\s+4", out)
    assert "Graded reps per arm: 2 in most groups" in out and "they do not prove a rate" in out
    assert "starts on record: 9" in out
    assert report_main([str(suite.root), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "skill-eval-report/1" and data["meta"]["starts_on_record"] == 9
    assert [g["zone"] for g in data["groups"]] == ["window", "floor"]
    row = data["groups"][0]
    assert row["probe"] == "euphemized-coverage" and row["zone"] == "window"
    assert row["arms"]["treatment"]["timeouts"] == 1 and row["arms"]["control"]["wilson95"][1] > 0.65
    assert row["on_disk"] == "current" and row["edited_without_bump"] is False
    assert "do not prove a rate" in data["meta"]["note"]
    # only one probe
    assert report_main([str(suite.probe("two-gaps")), "--format", "json"]) == 0
    assert [p["probe"] for p in json.loads(capsys.readouterr().out)["groups"]] == ["two-gaps"]
    monkeypatch.chdir(suite.root)
    assert report_main(["--probe", "euphemized-coverage", "--format", "json"]) == 0
    assert [p["probe"] for p in json.loads(capsys.readouterr().out)["groups"]] == ["euphemized-coverage"]


def test_check_command(suite, capsys):
    assert check_main([str(suite.root)]) == 0
    out = capsys.readouterr().out
    assert "6 transcript(s) checked, 0 mismatched" in out
    transcript = suite.probe("two-gaps") / "transcripts" / "one.md"
    transcript.write_text(transcript.read_text().replace("D2: missed", "D2: caught"))
    assert check_main([str(suite.root)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "D2: expected caught, graded missed [MISMATCH]" in out and "'2' does not contain '4'" in out
    assert "calibrate the discriminator on known transcripts before spending live reps" in out
    transcript.write_text("verdict: PASS\n")
    assert check_main([str(suite.probe("two-gaps"))]) == 1
    assert "no header" in capsys.readouterr().out
    transcript.write_text("---\nexpect: {D1: caught}\n---\ncriteria: 2\n")
    assert check_main([str(suite.probe("two-gaps"))]) == 1
    assert "does not label D2" in capsys.readouterr().out
    transcript.write_text("---\nexpect: {D1: caught, D2: missed, D9: caught}\n---\ncriteria: 2\n")
    assert check_main([str(suite.probe("two-gaps"))]) == 1
    assert "names D9" in capsys.readouterr().out


def test_check_without_transcripts_fails(suite, capsys):
    for path in (suite.probe("two-gaps") / "transcripts").iterdir():
        path.unlink()
    assert check_main([str(suite.probe("two-gaps"))]) == 1
    assert "no known transcripts" in capsys.readouterr().out


def test_freeze_then_se502(suite, capsys):
    probe = suite.probe("euphemized-coverage")
    assert freeze_main([]) == 2
    assert freeze_main([str(probe)]) == 0
    frozen = json.loads((suite.skill / "evals" / "frozen.json").read_text())
    assert [(c["id"], c["version"]) for c in frozen["cases"]] == [("euphemized-coverage", 1)]
    assert frozen["cases"][0]["artifact_sha256"] == sha256_file(probe / "question.md")
    assert codes(suite, "SE502") == []
    assert freeze_main([str(probe)]) == 0
    assert "already frozen, unchanged" in capsys.readouterr().out
    question = probe / "question.md"
    question.write_text(question.read_text().replace("5 attempts", "6 attempts"))
    found = codes(suite, "SE502")
    assert len(found) == 1 and "question.md changed" in found[0].message
    assert found[0].path == probe / "probe.json" and found[0].fixes and found[0].fixes[0].edits[0].new_text == "2"
    assert freeze_main([str(probe)]) == 2
    assert "already frozen with other content" in capsys.readouterr().err
    # a new variant is a new version: no longer the frozen case
    data = json.loads((probe / "probe.json").read_text())
    data["version"] = 2
    (probe / "probe.json").write_text(json.dumps(data, indent=2))
    assert codes(suite, "SE502") == []
    assert freeze_main([str(probe)]) == 0
    frozen = json.loads((suite.skill / "evals" / "frozen.json").read_text())
    assert [(c["id"], c["version"]) for c in frozen["cases"]] == [("euphemized-coverage", 1), ("euphemized-coverage", 2)]


def test_se503_over_cap(suite):
    suite.configure({}, max_starts=4)
    seed_window_and_floor(suite)
    with open(suite.runs / "two-gaps.jsonl", "ab") as handle:
        handle.write(b'{"probe": "two-g')                      # a torn start counts too
    found = codes(suite, "SE503")
    assert len(found) == 1
    assert "10 starts are on record" in found[0].message and "max-starts = 4" in found[0].message
    assert found[0].path.name == "skill-eval.toml" and found[0].start.line == 2
    suite.configure({}, max_starts=10)
    assert codes(suite, "SE503") == []


def test_se504_erased_case(suite):
    seed_window_and_floor(suite)
    assert codes(suite, "SE504") == []
    import shutil
    shutil.rmtree(suite.probe("two-gaps"))
    found = codes(suite, "SE504")
    assert len(found) == 1 and "'two-gaps' v1" in found[0].message and "no probe has this id" in found[0].message
    assert found[0].path.name == "two-gaps.jsonl" and found[0].start.line == 1
    # superseded by a higher version: not erased
    probe = suite.probe("euphemized-coverage") / "probe.json"
    data = json.loads(probe.read_text())
    data["version"] = 2
    probe.write_text(json.dumps(data))
    assert [d.message for d in codes(suite, "SE504") if "euphemized" in d.message] == []
    # a version rolled back below the record: erased
    write(suite, "euphemized-coverage", rec(suite, "euphemized-coverage", 3, "control", 1, True))
    assert any("'euphemized-coverage' v3" in d.message for d in codes(suite, "SE504"))


def test_se505_reseeded_until_win(suite):
    name = "euphemized-coverage"
    probe = suite.probe(name) / "probe.json"
    data = json.loads(probe.read_text())
    data["version"] = 3
    probe.write_text(json.dumps(data, indent=2))
    write(suite, name, rec(suite, name, 1, "control", 1, True), rec(suite, name, 1, "control", 2, True))    # ceiling
    write(suite, name, *[rec(suite, name, 2, arm, rep, False) for arm in ("control", "treatment") for rep in (1, 2)])  # floor
    assert codes(suite, "SE505") == []
    write(suite, name, rec(suite, name, 3, "control", 1, False), rec(suite, name, 3, "control", 2, False),
          rec(suite, name, 3, "treatment", 1, True), rec(suite, name, 3, "treatment", 2, False))     # window
    found = codes(suite, "SE505")
    assert len(found) == 1
    assert "v1 ceiling, v2 floor, v3 window" in found[0].message and found[0].path == probe
    # predeclared versions: suppressed per probe
    data["x-skill-eval-disable"] = ["SE505"]
    probe.write_text(json.dumps(data, indent=2))
    assert codes(suite, "SE505") == []


def test_rule_docs_have_the_four_sections():
    from skill_eval.linter.rules import get_rule

    for code in ("SE502", "SE503", "SE504", "SE505"):
        rule = get_rule(code)
        sections = rule.doc_sections()
        assert list(sections) == ["What it does", "Why is this bad?", "Example", "Fix"], code
        assert '"' in sections["Why is this bad?"]   # quotes the seed


def test_se503_counts_schema_2_starts_not_plans_or_outcomes(suite):
    suite.configure({}, max_starts=2)
    plan = {"schema": 2, "type": "plan", "plan_id": "P", "agent": "x", "model": "m", "starts": []}
    starts = [dict(rec(suite, "two-gaps", 1, "control", rep, False), schema=2, type="start", start_id=f"S{rep}")
              for rep in (1, 2, 3)]
    outcomes = [{"schema": 2, "type": "outcome", "start_id": f"S{rep}", "probe": "two-gaps", "version": 1,
                 "status": "ok", "caught": []} for rep in (1, 2)]
    for record in [plan, *starts, *outcomes]:
        append_record(suite.runs / "r.jsonl", record, fsync=False)
    found = codes(suite, "SE503")
    assert len(found) == 1 and "3 starts are on record" in found[0].message
    suite.configure({}, max_starts=3)
    assert codes(suite, "SE503") == []
