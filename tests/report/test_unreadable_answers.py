"""An agent whose answers carry no field the output spec names (it answers in
prose) is graded a miss on every start; the run, calibrate and the report say
that the answers could not be read, and no probe of it is a floor.

Ground truth: the agent below prints prose only, so every one of its ``ok``
starts has an unreadable answer; the test counts its starts from its own log,
not from the runner's output. A second agent that answers in fields but
catches nothing is the control case: its probes are floors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from report_helpers import Suite

PROSE_AGENT = """\
import os, sys
sys.stdin.read()
with open(sys.argv[1], "a", encoding="utf-8") as log:
    log.write(os.environ.get("SKILL_EVAL_START_ID", "?") + "\\n")
print("I read the closeout carefully. Criterion three worries me: its evidence is thin.")
"""

FIELDS_AGENT = """\
import sys
sys.stdin.read()
print('{"verdict": "PASS"}')
"""


def skill_eval(suite: Suite, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skill_eval", *args, str(suite.root)], cwd=suite.root,
                          capture_output=True, text=True, timeout=300)


def prose_suite(tmp_path: Path) -> tuple[Suite, Path]:
    suite = Suite(tmp_path)
    agent, log = tmp_path / "prose.py", tmp_path / "prose.log"
    agent.write_text(PROSE_AGENT, encoding="utf-8")
    suite.configure({"prose": {"command": [sys.executable, str(agent), str(log)], "model": "m1"}})
    return suite, log


def test_a_prose_agent_is_reported_unreadable_never_floor(tmp_path: Path) -> None:
    suite, log = prose_suite(tmp_path)
    run = skill_eval(suite, "run", "--skip-check")
    assert run.returncode == 0, run.stderr
    answered = len(log.read_text(encoding="utf-8").split())
    assert answered > 0
    # the run summary: per arm, how many ok answers could not be read
    counts = {m.group(1): (int(m.group(2)), int(m.group(3)))
              for m in re.finditer(r"^(control|treatment)\s*: \d+ start\(s\): (\d+) ok .*; (\d+) ok answer\(s\) "
                                   r"unreadable$", run.stdout, re.M)}
    assert set(counts) == {"control", "treatment"}, run.stdout
    assert all(ok == unreadable for ok, unreadable in counts.values())
    assert sum(ok for ok, _u in counts.values()) == answered
    assert "answers with no field output-spec.md names" in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == answered
    assert all(re.search(r": missed .*, answer unreadable \(no field output-spec\.md names\) in \d+\.\d s$", line)
               for line in lines), lines

    report = skill_eval(suite, "report", "--format", "json")
    assert report.returncode == 0, report.stderr
    model = json.loads(report.stdout)
    assert model["groups"]
    for group in model["groups"]:
        assert group["zone"] == "unreadable", group["probe"]
        for arm in ("control", "treatment"):
            sample = group["arms"][arm]
            assert sample["unreadable"] == sample["reps"] > 0
            assert sample["caught"] == 0
    assert sum(g["arms"][arm]["unreadable"] for g in model["groups"] for arm in ("control", "treatment")) == answered

    from skill_eval.evals.viewer_model import validate

    assert validate(model) == []

    junit = tmp_path / "report.xml"
    done = subprocess.run([sys.executable, "-m", "skill_eval", "report", "--junit", str(junit), str(suite.root)],
                          cwd=suite.root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr  # CI fails: nothing of this run could be graded
    xml = junit.read_text(encoding="utf-8")
    assert xml.count('type="unreadable-answers"') == len(model["groups"])

    text = skill_eval(suite, "report")
    assert text.returncode == 0, text.stderr
    rows = [line for line in text.stdout.splitlines() if line.startswith("  ") and " v" not in line]
    table = [line for line in rows if re.match(r"^  \S+\s+\d+\s", line)]
    assert table and all(re.search(r"\sunreadable\s", line) for line in table), text.stdout
    assert not any(re.search(r"\sfloor\s", line) for line in table), text.stdout
    assert all("graded answers unreadable (no field output-spec.md names): not a floor" in line for line in table)
    assert re.search(r": \d+ probe version\(s\): unreadable \d+;", text.stdout)


def test_calibrate_decides_unreadable_for_a_prose_agent(tmp_path: Path) -> None:
    suite, _log = prose_suite(tmp_path)
    result = skill_eval(suite, "calibrate", "--skip-check", "--no-progress")
    assert result.returncode == 0, result.stdout + result.stderr
    decisions = [line for line in suite.lines() if line.get("type") == "decision"]
    assert decisions and all(d["zone"] == "unreadable" for d in decisions)
    table = [line for line in result.stdout.splitlines() if re.match(r"^\S+\s+\d+\s+0/\d", line)]
    assert table and all(re.search(r"\sunreadable\s", line) for line in table)
    assert not re.search(r"^\S+ v\d+: floor:", result.stdout, re.M)
    assert re.search(r"^\S+ v\d+: unreadable: most answers had no field output-spec.md names", result.stdout, re.M)


def test_an_agent_answering_in_fields_that_misses_is_still_a_floor(tmp_path: Path) -> None:
    """The unreadable zone takes nothing from a real floor."""
    suite = Suite(tmp_path)
    agent = tmp_path / "fields.py"
    agent.write_text(FIELDS_AGENT, encoding="utf-8")
    suite.configure({"fields": {"command": [sys.executable, str(agent)], "model": "m1"}})
    assert skill_eval(suite, "run", "--skip-check", "--no-progress").returncode == 0
    model = json.loads(skill_eval(suite, "report", "--format", "json").stdout)
    assert model["groups"] and {g["zone"] for g in model["groups"]} == {"floor"}
    assert all(g["arms"][arm]["unreadable"] == 0 for g in model["groups"] for arm in ("control", "treatment"))


@pytest.mark.parametrize("unreadable,zone", [((0, 0), "floor"), ((2, 1), "unreadable"), ((1, 1), "floor"),
                                             ((2, 2), "unreadable")])
def test_the_zone_is_unreadable_only_when_most_graded_reps_are(unreadable, zone) -> None:
    from skill_eval.linter.run_records import ArmSample, zone_of

    control = ArmSample(reps=2, caught=0, unreadable=unreadable[0])
    treatment = ArmSample(reps=2, caught=0, unreadable=unreadable[1])
    assert zone_of(control, treatment) == zone
