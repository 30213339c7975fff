"""The end of ``skill-eval run`` and ``skill-eval calibrate`` says per arm how
often the skill was loaded and names every contaminated start.

Real runs (a subprocess of the CLI) with scripted agents: one replays a
captured Claude Code transcript that calls the Skill tool (so its control start
loads the skill: an isolation failure), one reads probe.json's planted canary
into its answer (contaminated). Ground truth is the runs files as written,
paired by the test (``Suite.records``), and the agent's own log.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from report_helpers import AGENTS, Suite, agent

CLI = [sys.executable, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())"]
PROBE = "euphemized-coverage"
CANARY = "skill-eval canary 51c3: this sentence lives only in the answer key of the probe"
TRANSCRIPT = AGENTS.parent.parent / "fixtures" / "skill_use" / "claude-code-treatment.out"


def skill_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def expected_line(records: list[dict]) -> str:
    """The documented line (docs/report.md "The terminal"), from the records."""
    parts = []
    for arm in ("control", "treatment"):
        mine = [r for r in records if r["arm"] == arm]
        if not mine:
            continue
        loaded = sum(r.get("skill_loaded") is True for r in mine)
        told = sum(isinstance(r.get("skill_loaded"), bool) for r in mine)
        if not told:
            parts.append(f"{arm} unknown in {len(mine)} start(s) (the transcript cannot tell)")
            continue
        part = f"{arm} {loaded} of {told} start(s)"
        if len(mine) > told:
            part += f", {len(mine) - told} unknown"
        if arm == "control" and loaded:
            part += f" (ISOLATION FAILURE: the control loaded it in {loaded})"
        if arm == "treatment" and told - loaded:
            part += f" (TREATMENT DID NOT LOAD THE SKILL in {told - loaded})"
        parts.append(part)
    return "skill loaded: " + "; ".join(parts)


def test_the_run_says_how_often_each_arm_loaded_the_skill_and_names_contaminated_starts(tmp_path):
    suite = Suite(tmp_path)
    probe_json = suite.probe(PROBE) / "probe.json"
    probe = json.loads(probe_json.read_text("utf-8"))
    probe["x-canary"] = CANARY
    probe_json.write_text(json.dumps(probe, indent=2), "utf-8")
    transcript = tmp_path / "transcript.out"  # the captured skill's name, as this suite's skill is named
    transcript.write_text(TRANSCRIPT.read_text("utf-8").replace("closeout-review", "verify-closeout"), "utf-8")
    log = tmp_path / "snoop.jsonl"
    suite.configure({
        "wrapper": {"command": agent("key_reader_agent.py", "--read", str(transcript)), "timeout": 60},
        "snoop": {"command": agent("key_reader_agent.py", "--read", str(probe_json), "--grep", "x-canary",
                                   "--log", str(log)), "timeout": 60},
    })

    ran = skill_eval("run", str(suite.probe(PROBE)), "--no-progress", "--skip-check", "--agent", "wrapper",
                     "--reps", "2", cwd=suite.root)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    records = suite.records()
    assert len(records) == 4 and all(r["skill_loaded"] is True for r in records), records
    assert expected_line(records) in ran.stdout.splitlines(), ran.stdout
    assert "skill loaded: control 2 of 2 start(s) (ISOLATION FAILURE: the control loaded it in 2); " \
           "treatment 2 of 2 start(s)" in ran.stdout
    assert "CONTAMINATED" not in ran.stderr

    ran = skill_eval("run", str(suite.probe(PROBE)), "--no-progress", "--skip-check", "--agent", "snoop",
                     "--reps", "1", "--arms", "control", cwd=suite.root)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # its start is an error: contaminated
    (snooped,) = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    assert CANARY in snooped["printed"]
    (record,) = [r for r in suite.records() if r["agent"] == "snoop"]
    assert record["start_id"] == snooped["start_id"] and record["contaminated"], record
    assert expected_line([record]) in ran.stdout.splitlines(), ran.stdout
    source = probe_json.relative_to(suite.root).as_posix()
    assert {leak["source"] for leak in record["contaminated"]} == {source}
    named = [line.strip() for line in ran.stderr.splitlines() if line.strip().startswith("CONTAMINATED:")]
    assert named == [f"CONTAMINATED: {PROBE} v{record['version']} control rep 1 (start {record['start_id'][:12]}, "
                     f"agent snoop): held text of {source}"], ran.stderr
    assert re.search(r"skill-eval: 1 contaminated start\(s\) saw the answer key", ran.stderr)


def test_calibrate_says_how_often_each_arm_loaded_the_skill(tmp_path):
    """``skill-eval calibrate`` prints the same line from the records of its starts."""
    suite = Suite(tmp_path)
    transcript = tmp_path / "transcript.out"
    transcript.write_text(TRANSCRIPT.read_text("utf-8").replace("closeout-review", "verify-closeout"), "utf-8")
    suite.configure({"wrapper": {"command": agent("key_reader_agent.py", "--read", str(transcript)), "timeout": 60}})
    ran = skill_eval("calibrate", str(suite.probe(PROBE)), "--no-progress", cwd=suite.root)
    records = suite.records()
    assert records, ran.stdout + ran.stderr
    assert expected_line(records) in ran.stdout.splitlines(), ran.stdout + ran.stderr
    assert "ISOLATION FAILURE: the control loaded it in" in ran.stdout
