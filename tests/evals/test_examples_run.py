"""The README's runner walk-through on the shipped examples: check the known
transcripts, run both arms with the scripted stand-in agent (a real
subprocess), report the zones, and resume without spending starts."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

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
    assert ran.returncode == 0, ran.stdout + ran.stderr
    runs = list((workspace / "skills" / "closeout-review" / "evals" / "runs").glob("*.jsonl"))
    records = [json.loads(line) for path in runs for line in path.read_text().splitlines()]
    assert len(records) == 7 * 2 * 2
    assert {r["status"] for r in records} == {"ok"}

    report = json.loads(skill_eval("report", "--format", "json", cwd=workspace).stdout)
    zones = {p["probe"]: p["zone"] for p in report["probes"]}
    assert zones["self-graded-latency"] == "window"
    assert zones["skipped-retry-test"] == "floor"
    assert report["starts"] == 28

    again = skill_eval("run", "--agent", "scripted", "--reps", "2", "--no-progress", cwd=workspace)
    assert again.returncode == 0
    runs_after = list((workspace / "skills" / "closeout-review" / "evals" / "runs").glob("*.jsonl"))
    records_after = sum(len(p.read_text().splitlines()) for p in runs_after)
    assert records_after == 28, "a resumed run spends no starts on what is recorded"
