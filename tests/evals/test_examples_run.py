"""The README's runner walk-through on the shipped examples: check the known
transcripts, run both arms with the scripted stand-in agent (a real
subprocess), report the zones, and resume without spending starts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from skill_eval.linter.run_records import parse_runs

ROOT = Path(__file__).resolve().parents[2]


def skill_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skill_eval", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_examples_check_run_report_and_resume(tmp_path: Path) -> None:
    workspace = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", workspace)
    checked = skill_eval("check", cwd=workspace)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 mismatched" in checked.stdout

    ran = skill_eval("run", "--agent", "scripted", "--reps", "2", "--no-progress", cwd=workspace)
    # the four probes with lint errors (SE101, SE104, SE201, SE301) are listed and not run: exit 1
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "4 probe(s) not run because of lint errors" in ran.stderr
    for withheld, code in (("renamed-step", "SE101"), ("graded-confidence", "SE104"), ("drifted-count", "SE201"),
                           ("signposted-cache", "SE301")):
        assert f"not run: {withheld} v1" in ran.stderr and code in ran.stderr
    runs = list((workspace / "skills" / "closeout-review" / "evals" / "runs").glob("*.jsonl"))
    records = [record for path in runs for _line, record in parse_runs(path, path.read_bytes()).records]
    assert len(records) == 3 * 2 * 2
    assert {r["status"] for r in records} == {"ok"}

    report = json.loads(skill_eval("report", "--format", "json", cwd=workspace).stdout)
    zones = {p["probe"]: p["zone"] for p in report["groups"]}
    assert zones["self-graded-latency"] == "window"
    assert zones["skipped-retry-test"] == "floor"
    assert set(zones) == {"self-graded-latency", "skipped-retry-test", "band-quota-rollout"}
    assert report["meta"]["starts_on_record"] == 12

    again = skill_eval("run", "--agent", "scripted", "--reps", "2", "--no-progress", cwd=workspace)
    assert again.returncode == 1 and "0 start(s) to make, 12 already recorded ok" in again.stderr
    runs_after = list((workspace / "skills" / "closeout-review" / "evals" / "runs").glob("*.jsonl"))
    starts_after = sum(parse_runs(p, p.read_bytes()).starts for p in runs_after)
    assert starts_after == 12, "a resumed run spends no starts on what is recorded"
