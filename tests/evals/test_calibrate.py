"""Issue 19, ``skill-eval calibrate``: the seed's live-calibration procedure with
a predeclared stop and the fewest starts.

Real subprocess agents (tests/evals/agents/calib_agent.py) log every start
themselves — pid, the start id the runner handed them, the arm they were
given, the probe they saw — and that log, never the records under test, is the
ground truth for how many starts each probe cost."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from skill_eval.evals.cli import calibrate_main, run_main
from skill_eval.evals.probes import Workspace
from skill_eval.evals.viewer_build import build_model
from skill_eval.evals.viewer_model import validate
from skill_eval.evals.records import count_starts
from skill_eval.linter.run_records import calibration_rule_sha256

from evals_helpers import PYTHON, Suite, agent_command, cli

CLI = [PYTHON, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())"]
CASES = {"ceiling": "ceiling export", "floor": "floor export", "window": "window export"}
"""Probe id prefix -> the marker its artifact carries (the agent tells probes apart by it)."""


def make_cases(suite: Suite, names=("ceiling", "floor", "window"), transcripts: bool = True) -> None:
    """Replace the fixture's probes with copies of euphemized-coverage, one per
    name, each with its own id and a marker in its artifact's title."""
    source = suite.probe("euphemized-coverage")
    for name in names:
        target = suite.probe(f"{name}-case")
        shutil.copytree(source, target)
        probe = target / "probe.json"
        probe.write_text(probe.read_text().replace("euphemized-coverage", f"{name}-case"))
        question = target / "question.md"
        question.write_text(question.read_text().replace("export job", f"{CASES[name]} job"))
        if not transcripts:
            shutil.rmtree(target / "transcripts")
    shutil.rmtree(source)
    shutil.rmtree(suite.probe("two-gaps"))


def calib_agent(log: Path, *args: str) -> dict:
    return {"command": agent_command("calib_agent.py", "--log", str(log), "--markers", ",".join(CASES.values()),
                                     "--markers", "invoice rounding", *args)}


def standard_agent(log: Path, *extra: str) -> dict:
    """The control catches the ceiling case; the treatment catches the ceiling and window cases."""
    return calib_agent(log, "--control", CASES["ceiling"], "--treatment", CASES["ceiling"],
                       "--treatment", CASES["window"], *extra)


def logged(log: Path) -> list[tuple[int, str, str, str]]:
    """``(pid, start id, arm, marker)`` of every start the agent logged."""
    if not log.exists():
        return []
    found = []
    for line in log.read_text().splitlines():
        pid, start_id, arm, *marker, _what = line.split()
        found.append((int(pid), start_id, arm, " ".join(marker)))
    return found


def starts_by_case(log: Path) -> Counter:
    return Counter((marker.split()[0], arm) for _pid, _id, arm, marker in logged(log))


def decisions(suite: Suite) -> dict[str, dict]:
    """The latest decision record per probe id."""
    found = {}
    for line in suite.lines():
        if line["type"] == "decision":
            found[line["probe"]] = line
    return found


def calibrate(suite: Suite, *args: str) -> int:
    paths = [] if args and not args[0].startswith("-") else [str(suite.root)]
    return calibrate_main([*paths, "--no-progress", *args])


def configure(suite: Suite, agent: dict, max_starts: int | None = None, **rule) -> None:
    suite.configure({"a": agent}, max_starts=max_starts)
    if rule:
        text = (suite.root / "skill-eval.toml").read_text()
        lines = [f"{key.replace('_', '-')} = {json.dumps(value)}" for key, value in rule.items()]
        if "[calibration]" in text:
            text = text.replace("[calibration]\n", "[calibration]\n" + "\n".join(lines) + "\n", 1)
        else:
            text = "[calibration]\n" + "\n".join(lines) + "\n\n" + text
        (suite.root / "skill-eval.toml").write_text(text)


# -- the three observations, with the starts each cost ----------------------------------------


def test_ceiling_costs_two_floor_and_window_four(suite, tmp_path, capsys):
    make_cases(suite)
    log = tmp_path / "agent.log"
    configure(suite, standard_agent(log))
    assert calibrate(suite) == 0
    out = capsys.readouterr().out
    # the agents' own record: the control sample first everywhere, the treatment only where the control missed
    assert starts_by_case(log) == {("ceiling", "control"): 2, ("floor", "control"): 2, ("floor", "treatment"): 2,
                                   ("window", "control"): 2, ("window", "treatment"): 2}
    found = decisions(suite)
    assert {probe: d["zone"] for probe, d in found.items()} == {
        "ceiling-case": "ceiling", "floor-case": "floor", "window-case": "window"}
    assert {probe: d["starts"] for probe, d in found.items()} == {"ceiling-case": 2, "floor-case": 4, "window-case": 4}
    assert found["ceiling-case"]["decided_after"] == "control" and found["ceiling-case"]["treatment"] is None
    assert found["window-case"]["treatment"]["caught"] == 2 and found["window-case"]["control"]["caught"] == 0
    # a floor says "check the discriminator" and names the transcripts covering the defect
    floor_line = next(line for line in out.splitlines() if line.startswith("floor-case v1: floor"))
    assert "check the discriminator" in floor_line
    assert "floor-case/transcripts/caught-json.md" in floor_line
    assert "floor-case/transcripts/caught-markdown-list.md" in floor_line
    assert "missed-pass.md" not in floor_line  # labelled missed: it does not cover the catch
    assert found["floor-case"]["discriminator"]["transcripts_catching"]["D1"] == [
        "verify-closeout/evals/probes/floor-case/transcripts/caught-json.md",
        "verify-closeout/evals/probes/floor-case/transcripts/caught-markdown-list.md"]
    assert "regression/cost control" in next(line for line in out.splitlines() if line.startswith("ceiling-case"))
    # every start the agents made is on record, and nothing else
    recorded = {r["start_id"] for r in suite.all_records()}
    assert recorded == {start_id for _pid, start_id, _arm, _m in logged(log)}
    assert count_starts(suite.files()) == 10
    # and the plain command again spends nothing and writes no second decision
    assert calibrate(suite) == 0
    assert len(logged(log)) == 10
    assert sum(1 for line in suite.lines() if line["type"] == "decision") == 3


def test_floor_without_transcripts_says_there_are_none(suite, tmp_path, capsys):
    make_cases(suite, ("floor",), transcripts=False)
    log = tmp_path / "agent.log"
    configure(suite, standard_agent(log))
    assert calibrate(suite) == 0
    out = capsys.readouterr().out
    assert "check the discriminator" in out and "no known transcript covers D1" in out
    assert decisions(suite)["floor-case"]["discriminator"] == {"transcripts_catching": {"D1": []}}
    assert starts_by_case(log) == {("floor", "control"): 2, ("floor", "treatment"): 2}


def test_band_probe_goes_through_its_band_assertion(suite, tmp_path):
    """two-gaps is a band probe (min 2, max 2): a control answer catching one of
    its two defects is outside the band, a miss, so the treatment runs."""
    log = tmp_path / "agent.log"
    configure(suite, calib_agent(log, "--partial", "invoice rounding", "--treatment", "invoice rounding"))
    assert calibrate(suite, str(suite.probe("two-gaps"))) == 0
    control = [r for r in suite.records("two-gaps") if r["arm"] == "control"]
    assert [sorted(r["caught"]) for r in control] == [["D1"], ["D1"]] and not any(r["passed"] for r in control)
    assert starts_by_case(log) == {("invoice", "control"): 2, ("invoice", "treatment"): 2}
    decision = decisions(suite)["two-gaps"]
    assert decision["zone"] == "window" and decision["kind"] == "band" and decision["starts"] == 4


def test_never_more_than_run_would(suite, tmp_path, capsys):
    make_cases(suite)
    log = tmp_path / "agent.log"
    configure(suite, standard_agent(log))
    assert run_main([str(suite.root), "--dry-run", "--reps", "2"]) == 0
    run_plan = capsys.readouterr().out
    assert "would spend 12 start(s)" in run_plan
    assert calibrate(suite, "--dry-run") == 0
    dry = capsys.readouterr().out
    assert "worst case: 12 start(s)" in dry and "expected: 6 start(s) now" in dry and "up to 6 more" in dry
    assert "ceiling-case v1: now control rep 1, 2; then treatment rep 1, 2 if the control misses a rep" in dry
    assert not log.exists() and suite.files() == []


# -- the stop on record --------------------------------------------------------------------------


def test_the_rule_is_written_into_every_record_it_governs(suite, tmp_path):
    make_cases(suite, ("window",))
    log = tmp_path / "agent.log"
    configure(suite, standard_agent(log), reps=3, caught_in_every_rep="all-reps", max_starts_per_probe=6)
    assert calibrate(suite) == 0
    rule = {"reps": 3, "caught-in-every-rep": "all-reps", "max-starts-per-probe": 6}
    digest = calibration_rule_sha256(rule)
    lines = suite.lines()
    assert {line["type"] for line in lines} == {"plan", "start", "outcome", "decision"}
    for line in lines:
        if line["type"] in ("plan", "start", "decision"):
            assert line["calibration_rule"] == rule and line["calibration_rule_sha256"] == digest, line
    assert sum(1 for line in lines if line["type"] == "start") == 6 == len(logged(log))
    # the plan record reserved the worst case before the first start: both samples
    (plan,) = [line for line in lines if line["type"] == "plan"]
    assert sorted((entry[5], entry[6]) for entry in plan["starts"]) == [
        ("control", 1), ("control", 2), ("control", 3), ("treatment", 1), ("treatment", 2), ("treatment", 3)]


def test_a_changed_rule_is_refused_and_reported(suite, tmp_path, capsys):
    make_cases(suite, ("floor", "window"))
    log = tmp_path / "agent.log"
    configure(suite, standard_agent(log))
    assert calibrate(suite, str(suite.probe("floor-case"))) == 0
    assert decisions(suite)["floor-case"]["zone"] == "floor"
    capsys.readouterr()
    # the floor is unfavourable; raising the reps now would be reseeding until treatment wins
    configure(suite, standard_agent(log), reps=4)
    before = len(logged(log))
    assert calibrate(suite) == 1
    captured = capsys.readouterr()
    assert "governed by another [calibration] rule" in captured.out and "SE506" in captured.out
    assert starts_by_case(log)[("floor", "control")] == 2  # nothing more spent on it
    # the probe that was never calibrated runs under the new rule
    assert starts_by_case(log)[("window", "control")] == 4 and len(logged(log)) == before + 8
    lint = cli("lint", str(suite.root), "--output-format", "json", cwd=suite.root)
    findings = [f for f in json.loads(lint.stdout) if f["code"] == "SE506"]
    assert len(findings) == 1 and "floor-case" in findings[0]["message"], lint.stdout


def test_max_starts_per_probe_is_a_predeclared_stop(suite, tmp_path, capsys):
    make_cases(suite, ("floor",))
    log = tmp_path / "agent.log"
    configure(suite, standard_agent(log), max_starts_per_probe=3)
    assert calibrate(suite, "--dry-run") == 0
    dry = capsys.readouterr().out
    assert "worst case: 2 start(s)" in dry  # the treatment sample (2) would pass the cap: never started
    assert calibrate(suite) == 1
    out = capsys.readouterr().out
    assert "stopped by the predeclared max-starts-per-probe = 3" in out
    assert starts_by_case(log) == {("floor", "control"): 2}
    decision = decisions(suite)["floor-case"]
    assert decision["zone"] == "undecided" and "max-starts-per-probe" in decision["reason"]


def test_failed_starts_under_each_reading_of_every_rep(suite, tmp_path, capsys):
    make_cases(suite, ("ceiling",))
    log = tmp_path / "agent.log"
    # -j 1: the first control start fails (an error start), the second catches
    configure(suite, standard_agent(log, "--fail-first", CASES["ceiling"]))
    assert calibrate(suite, "-j", "1") == 1
    out = capsys.readouterr().out
    assert "failed and the rule (all-reps) needs them graded; re-run them with --retry-errors" in out
    assert starts_by_case(log) == {("ceiling", "control"): 2} and decisions(suite) == {}
    assert calibrate(suite, "-j", "1", "--retry-errors") == 0
    assert starts_by_case(log) == {("ceiling", "control"): 3}
    retried = [r for r in suite.all_records() if r.get("retry_of")]
    assert len(retried) == 1 and retried[0]["status"] == "ok"
    decision = decisions(suite)["ceiling-case"]
    assert decision["zone"] == "ceiling" and decision["starts"] == 3 and decision["control"]["reps"] == 2


def test_graded_reps_sets_a_failed_start_aside(suite, tmp_path):
    make_cases(suite, ("ceiling",))
    log = tmp_path / "agent.log"
    configure(suite, standard_agent(log, "--fail-first", CASES["ceiling"]), caught_in_every_rep="graded-reps")
    assert calibrate(suite, "-j", "1") == 0
    decision = decisions(suite)["ceiling-case"]
    assert decision["zone"] == "ceiling" and decision["control"] == {
        "reps": 1, "caught": 1, "errors": 1, "timeouts": 0, "interrupted": 0}
    assert starts_by_case(log) == {("ceiling", "control"): 2}


# -- the envelope ---------------------------------------------------------------------------------


def test_whole_plan_cap_refuses_before_the_first_start(suite, tmp_path, capsys):
    make_cases(suite)
    log = tmp_path / "agent.log"
    configure(suite, standard_agent(log), max_starts=11)
    assert calibrate(suite, "--dry-run") == 1
    dry = capsys.readouterr().out
    assert "worst case: 12 start(s)" in dry and "refused: the worst case needs 12 start(s) but only 11 remain" in dry
    assert calibrate(suite) == 1
    err = capsys.readouterr().err
    assert "refused: the plan needs up to 12 start(s) but only 11" in err and "max-starts = 11" in err
    assert not log.exists() and count_starts(suite.files()) == 0
    # 10 starts will do here, but the worst case is what must fit: 12 does
    configure(suite, standard_agent(log), max_starts=12)
    assert calibrate(suite) == 0
    assert len(logged(log)) == 10 and count_starts(suite.files()) == 10


def test_failed_and_interrupted_starts_count_against_the_envelope(suite, tmp_path, capsys):
    make_cases(suite, ("window",))
    log = tmp_path / "agent.log"
    suite.configure({"crash": {"command": agent_command("crash_agent.py")}, "a": standard_agent(log)}, max_starts=5)
    assert run_main([str(suite.root), "--no-progress", "--agent", "crash", "--arms", "control", "--reps", "2"]) == 1
    capsys.readouterr()
    assert calibrate(suite, "--agent", "a") == 1  # 2 failed starts on record: 3 remain, the worst case is 4
    assert "only 3 of [calibration] max-starts = 5 remain (2 used, failed starts included" in capsys.readouterr().err
    assert not log.exists()


# -- kill -9 and resume ----------------------------------------------------------------------------


def test_kill_9_mid_procedure_resumes_without_repeating_or_losing_a_start(suite, tmp_path):
    make_cases(suite)
    log = tmp_path / "agent.log"
    configure(suite, standard_agent(log, "--sleep", "0.8"))
    command = [*CLI, "calibrate", str(suite.root), "-j", "2", "--no-progress"]
    rng = random.Random(1919)
    kills = 0
    for _round in range(6):
        process = subprocess.Popen(command, cwd=suite.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 1.5))
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            kills += 1
        process.wait(timeout=60)
    assert kills >= 3
    result = cli("calibrate", str(suite.root), "-j", "2", "--no-progress", cwd=suite.root)
    assert result.returncode == 0, result.stderr
    agent_starts = logged(log)
    records = suite.all_records()
    recorded = {r["start_id"] for r in records}
    # not lost: every start an agent made is on record, and counted
    assert {start_id for _pid, start_id, _arm, _m in agent_starts} <= recorded
    starts = count_starts(suite.files())
    assert len(agent_starts) <= starts <= len(agent_starts) + 2 * kills
    # not repeated: each rep of the procedure ended ok exactly once
    oks = Counter((r["probe"], r["arm"], r["rep"]) for r in records if r["status"] == "ok")
    assert set(oks.values()) == {1}
    assert set(oks) == {("ceiling-case", "control", 1), ("ceiling-case", "control", 2),
                        *((probe, arm, rep) for probe in ("floor-case", "window-case")
                          for arm in ("control", "treatment") for rep in (1, 2))}
    # the ceiling case's treatment never ran, whatever the kills
    assert ("ceiling", "treatment") not in starts_by_case(log)
    # a start without an outcome (killed) was resumed by a new counted start
    interrupted = {r["start_id"] for r in records if r["status"] == "interrupted"}
    assert interrupted <= {r.get("resume_of") for r in records}
    found = decisions(suite)
    assert {probe: d["zone"] for probe, d in found.items()} == {
        "ceiling-case": "ceiling", "floor-case": "floor", "window-case": "window"}
    for probe, decision in found.items():
        assert decision["starts"] == sum(1 for r in records if r["probe"] == probe)


# -- freeze ------------------------------------------------------------------------------------------


def test_freeze_freezes_the_decided_cases(suite, tmp_path, capsys):
    make_cases(suite, ("ceiling", "floor"))
    log = tmp_path / "agent.log"
    configure(suite, standard_agent(log, "--fail", CASES["floor"]))
    assert calibrate(suite, "--freeze") == 1  # the floor case's control starts fail: undecided
    out = capsys.readouterr()
    frozen = json.loads((suite.skill / "evals" / "frozen.json").read_text())
    assert [(case["id"], case["version"]) for case in frozen["cases"]] == [("ceiling-case", 1)]
    assert "froze ceiling-case v1" in out.out and "not frozen (not decided): floor-case v1" in out.err
    lint = cli("lint", str(suite.root), "--output-format", "json", cwd=suite.root)
    assert not [f for f in json.loads(lint.stdout) if f["code"] == "SE502"]


# -- config ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("table, message", [
    ("reps = 0", "`calibration.reps` must be an integer >= 1"),
    ('caught-in-every-rep = "most"', '`calibration.caught-in-every-rep` must be "all-reps" or "graded-reps"'),
    ("max-starts-per-probe = 0", "`calibration.max-starts-per-probe` must be an integer >= 1"),
    ("rep = 2", "unknown key `calibration.rep` (did you mean 'reps'?)"),
])
def test_a_bad_rule_is_an_error_naming_the_file_and_key(suite, tmp_path, capsys, table, message):
    configure(suite, standard_agent(tmp_path / "agent.log"))
    config = suite.root / "skill-eval.toml"
    config.write_text(f"[calibration]\n{table}\n\n" + config.read_text())
    assert calibrate(suite) == 2
    err = capsys.readouterr().err
    assert str(config) in err and message in err and "Traceback" not in err


# -- report ------------------------------------------------------------------------------------------


def test_report_shows_the_observed_zone_its_starts_and_the_rule(suite, tmp_path, capsys):
    make_cases(suite)
    log = tmp_path / "agent.log"
    configure(suite, standard_agent(log))
    assert calibrate(suite) == 0
    found = decisions(suite)
    digest = found["ceiling-case"]["calibration_rule_sha256"]
    capsys.readouterr()
    report = json.loads(cli("report", "--format", "json", cwd=suite.root).stdout)
    assert validate(report) == []
    groups = {group["probe"]: group for group in report["groups"]}
    assert len(groups) == len(report["groups"]) == 3
    spent = starts_by_case(log)  # the agents' own count of their starts
    for probe, zone, starts, after in (("ceiling-case", "ceiling", 2, "control"), ("floor-case", "floor", 4, "treatment"),
                                       ("window-case", "window", 4, "treatment")):
        calibration = groups[probe]["calibration"]
        assert (calibration["zone"], calibration["starts"], calibration["decided_after"]) == (zone, starts, after)
        assert calibration["calibration_rule_sha256"] == digest and calibration["calibration_rule"]["reps"] == 2
        assert calibration["calibration_rule"] == found[probe]["calibration_rule"]
        assert calibration["decided"] == found[probe]["decided"]
        assert len(groups[probe]["starts"]) == starts == sum(n for (case, _arm), n in spent.items()
                                                            if case == probe.split("-")[0])
    assert groups["ceiling-case"]["calibration"]["regression_control"] is True
    assert groups["window-case"]["calibration"]["regression_control"] is False
    assert groups["floor-case"]["calibration"]["discriminator"]["transcripts_catching"]["D1"] == \
        found["floor-case"]["discriminator"]["transcripts_catching"]["D1"] != []
    text = cli("report", cwd=suite.root).stdout
    row = {case: next(line for line in text.splitlines() if line.strip().startswith(f"{case}-case"))
           for case in CASES}
    assert f"calibrated: ceiling after the control (2 starts; rule {digest[:12]}" in row["ceiling"]
    assert "keep as a regression/cost control" in row["ceiling"]
    assert "calibrated: floor after the treatment (4 starts" in row["floor"]
    assert "regression/cost control" not in row["floor"] + row["window"]


def test_the_report_shows_each_group_its_own_decision(suite, tmp_path):
    """Decisions are keyed like the report's groups: another agent's groups of
    the same probes, and a content calibrated later, each show their own (or none)."""
    make_cases(suite, ("ceiling", "window"))
    log = tmp_path / "agent.log"
    other = calib_agent(tmp_path / "other.log", "--control", CASES["window"])
    suite.configure({"a": standard_agent(log), "b": other})
    assert calibrate(suite, "--agent", "a") == 0
    assert run_main([str(suite.root), "--no-progress", "--skip-check", "--agent", "b", "--reps", "2"]) == 0
    first = decisions(suite)["ceiling-case"]
    # a new content of ceiling-case (SKILL.md edited): its decision is its own, the old one stays with the old group
    skill = suite.skill / "SKILL.md"
    skill.write_text(skill.read_text() + "\nOne more sentence of guidance.\n")
    assert calibrate(suite, str(suite.probe("ceiling-case")), "--agent", "a") == 0
    second = decisions(suite)["ceiling-case"]
    assert second["skill_sha256"] != first["skill_sha256"]
    model = build_model(Workspace.open([suite.root]), lint=False, answers=False)
    assert validate(model) == []
    shown = {(g["agent"], g["probe"], g["hashes"]["skill_sha256"]): g["calibration"] for g in model["groups"]}
    assert shown[("b", "ceiling-case", first["skill_sha256"])] is None
    assert shown[("b", "window-case", first["skill_sha256"])] is None
    assert shown[("a", "ceiling-case", first["skill_sha256"])]["decided"] == first["decided"]
    assert shown[("a", "ceiling-case", second["skill_sha256"])]["decided"] == second["decided"]
    assert shown[("a", "window-case", first["skill_sha256"])]["zone"] == "window"
    assert len(shown) == 5


def test_an_undecided_decision_in_the_report(suite, tmp_path):
    make_cases(suite, ("floor",))
    log = tmp_path / "agent.log"
    configure(suite, standard_agent(log), max_starts_per_probe=3)
    assert calibrate(suite) == 1
    decision = decisions(suite)["floor-case"]
    model = build_model(Workspace.open([suite.root]), lint=False, answers=False)
    assert validate(model) == []
    (group,) = model["groups"]
    calibration = group["calibration"]
    assert calibration["zone"] == "undecided" and calibration["reason"] == decision["reason"]
    assert calibration["decided_after"] is None and calibration["calibration_rule"]["max-starts-per-probe"] == 3
    assert calibration["starts"] == len(group["starts"]) == len(logged(log)) == 2
    assert calibration["discriminator"] is None and calibration["regression_control"] is False
