"""Issue 13, "Trustworthy runs": every start on record, one budget across kills
and runners, a treatment that sees only the skill, preflight, paths from data,
bounded agents. Real runner processes and real subprocess agents; ground truth
comes from what the agents log themselves (tests/evals/agents/probe_agent.py),
never from the records under test."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from skill_eval.evals.cli import run_main
from skill_eval.evals.records import count_starts, read_runs_file
from skill_eval.linter.run_records import parse_runs

from evals_helpers import PYTHON, agent_command, cli

PROBE = "euphemized-coverage"
CLI = [PYTHON, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())"]


def run(suite, *args):
    paths = [] if args and not args[0].startswith("-") else [str(suite.root)]
    return run_main([*paths, "--no-progress", *args])


def logged(log: Path, kind: str = "start") -> list[tuple[int, str]]:
    """``(pid, start id)`` of every line of ``kind`` an agent logged."""
    if not log.exists():
        return []
    lines = [line.split() for line in log.read_text().splitlines() if line.strip()]
    return [(int(pid), start_id) for pid, start_id, what in lines if what == kind]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a dead parent's reaper is not running)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_for(predicate, timeout=60.0, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def start_ids_on_record(suite) -> set[str]:
    return {record["start_id"] for record in suite.all_records() if "start_id" in record}


# -- 1. a start is on record before the agent runs --------------------------------------


def test_start_record_is_on_disk_before_the_agent_runs(suite):
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--runs-dir", str(suite.runs))}})
    assert run(suite, str(suite.probe(PROBE)), "--reps", "2") == 0
    records = suite.records(PROBE)
    assert len(records) == 4
    for record in records:
        answer = (suite.runs / record["answer_file"]).read_text()
        assert '"recorded_before_spawn": true' in answer, answer
    kinds = [line["type"] for line in suite.lines()]
    assert kinds[0] == "plan" and kinds.count("start") == 4 and kinds.count("outcome") == 4


def test_kill_9_at_random_moments_then_resume_matches_the_agents_log(suite, tmp_path):
    log = tmp_path / "agent.log"
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--log", str(log), "--sleep", "0.6")}})
    command = [*CLI, "run", str(suite.root), "--reps", "4", "-j", "3", "--no-progress"]
    rng = random.Random(1313)
    kills = 0
    for _round in range(5):
        process = subprocess.Popen(command, cwd=suite.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.4, 1.6))
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            kills += 1
        process.wait(timeout=30)
        # no agent outlives its runner by more than a moment
        pids = [pid for pid, _id in logged(log)]
        assert wait_for(lambda: not any(alive(pid) for pid in pids), timeout=10), "an agent outlived its killed runner"
    assert kills >= 3
    result = cli("run", str(suite.root), "--reps", "4", "-j", "3", "--no-progress", cwd=suite.root)
    assert result.returncode == 0, result.stderr
    agent_starts = logged(log)
    recorded = start_ids_on_record(suite)
    # every start the agents made is on record (by the id the runner handed them)
    assert {start_id for _pid, start_id in agent_starts} <= recorded
    # ... and the budget counts them all: start records (plus any torn line) >= the agents' own count;
    # a start recorded but killed before its spawn is the only difference allowed
    starts = count_starts(suite.files())
    assert len(agent_starts) <= starts <= len(agent_starts) + 3 * kills
    # every rep ended ok exactly once, interrupted ones were resumed by the plain command
    records = suite.all_records()
    oks = [(r["probe"], r["arm"], r["rep"]) for r in records if r["status"] == "ok"]
    assert sorted(oks) == sorted({(p, a, r) for p in (PROBE, "two-gaps") for a in ("control", "treatment")
                                  for r in range(1, 5)})
    interrupted = {r["start_id"] for r in records if r["status"] == "interrupted"}
    resumed = {r.get("resume_of") for r in records}
    assert interrupted <= resumed
    report = json.loads(cli("report", "--format", "json", cwd=suite.root).stdout)
    assert report["meta"]["starts_on_record"] == starts


def test_agent_and_its_child_die_with_a_killed_runner(suite, tmp_path):
    log = tmp_path / "agent.log"
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--log", str(log), "--sleep", "30",
                                                    "--child-sleep", "60")}})
    process = subprocess.Popen([*CLI, "run", str(suite.probe(PROBE)), "--reps", "1", "-j", "2", "--no-progress"],
                               cwd=suite.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: len(logged(log, "child")) == 2)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    pids = [pid for pid, _id in logged(log)] + [pid for pid, _id in logged(log, "child")]
    assert len(pids) == 4
    assert wait_for(lambda: not any(alive(pid) for pid in pids), timeout=10), \
        [pid for pid in pids if alive(pid)]
    # the two starts are on record, unfinished: interrupted, and the plain command resumes them
    records = suite.records(PROBE)
    assert len(records) == 2 and {r["status"] for r in records} == {"interrupted"}
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--log", str(log))}})
    result = cli("run", str(suite.probe(PROBE)), "--reps", "1", "--no-progress", cwd=suite.root)
    assert result.returncode == 0 and "(2 resuming interrupted starts)" in result.stderr, result.stderr
    assert count_starts(suite.files()) == 4


def test_a_runner_killed_9_leaves_no_scratch_folder(suite, tmp_path, monkeypatch):
    """The starts' scratch folders of a runner killed with ``kill -9`` are
    removed by its watchdog, with the agents: the scratch location (this
    test's own) holds as many folders after the kill as before."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "someone-elses").mkdir()  # never touched
    monkeypatch.setenv("SKILL_EVAL_SCRATCH", str(scratch))
    log = tmp_path / "agent.log"
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--log", str(log), "--sleep", "30")}})
    before = sorted(path.name for path in scratch.iterdir())
    process = subprocess.Popen([*CLI, "run", str(suite.root), "--reps", "1", "-j", "3", "--no-progress"],
                               cwd=suite.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: len(logged(log)) == 3)
        # the agents' folders are there while they run: one folder of the runner's, a folder per start in it
        [runner_folder] = [path for path in scratch.iterdir() if path.name.startswith("skill-eval-")]
        assert len(list(runner_folder.iterdir())) == 3
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    pids = [pid for pid, _id in logged(log)]
    assert wait_for(lambda: not any(alive(pid) for pid in pids), timeout=10)
    assert wait_for(lambda: sorted(path.name for path in scratch.iterdir()) == before, timeout=10), \
        sorted(path.name for path in scratch.iterdir())
    # a run to the end leaves nothing either
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--log", str(log))}})
    result = cli("run", str(suite.root), "--reps", "1", "-j", "3", "--no-progress", cwd=suite.root)
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in scratch.iterdir()) == before


# -- 2. one suite, one budget, across processes -----------------------------------------


def _two_runners(suite, first: list[str], second: list[str]) -> list[subprocess.CompletedProcess]:
    processes = [subprocess.Popen([*CLI, "run", *args, "--no-progress"], cwd=suite.root, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for args in (first, second)]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    return results


def test_two_runners_started_together_run_each_start_once(suite, tmp_path):
    log = tmp_path / "agent.log"
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--log", str(log), "--sleep", "0.5")}},
                    max_starts=8)
    args = [str(suite.root), "--reps", "2", "-j", "2"]
    results = _two_runners(suite, args, args)
    assert {r.returncode for r in results} == {0}, [r.stderr for r in results]
    # the agents' own log: 8 starts for the 8 planned, none twice
    assert len(logged(log)) == 8
    records = suite.all_records()
    keys = [(r["probe"], r["arm"], r["rep"]) for r in records]
    assert len(keys) == 8 and len(set(keys)) == 8
    assert count_starts(suite.files()) == 8
    assert any("held by another running skill-eval run" in r.stderr or "0 start(s) to make" in r.stderr
               for r in results) or sum("8 start(s) to make" in r.stderr for r in results) == 1


def test_two_runners_on_different_probes_never_pass_the_cap_together(suite, tmp_path):
    log = tmp_path / "agent.log"
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--log", str(log), "--sleep", "0.5")}},
                    max_starts=6)
    results = _two_runners(suite, [str(suite.probe(PROBE)), "--reps", "2"], [str(suite.probe("two-gaps")), "--reps", "2"])
    assert sorted(r.returncode for r in results) == [0, 1], [r.stderr for r in results]
    refused = next(r for r in results if r.returncode == 1)
    assert "refused: the plan needs 4 start(s) but only 2" in refused.stderr and "max-starts = 6" in refused.stderr
    assert len(logged(log)) == 4 and count_starts(suite.files()) == 4


def test_symlinked_runs_folder_or_file_is_refused(suite, tmp_path, capsys):
    log = tmp_path / "agent.log"
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--log", str(log))}}, max_starts=2)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    suite.runs.symlink_to(outside, target_is_directory=True)
    assert run(suite) == 2
    err = capsys.readouterr().err
    assert "runs: is a symbolic link" in err and "Traceback" not in err
    assert not log.exists() and list(outside.iterdir()) == []
    suite.runs.unlink()
    suite.runs.mkdir()
    (suite.runs / "x.jsonl").symlink_to(outside / "x.jsonl")
    assert run(suite) == 2
    assert "x.jsonl: is a symbolic link" in capsys.readouterr().err
    assert not log.exists()


# -- 3. treatment isolation ------------------------------------------------------------


def test_no_arm_can_reach_the_answer_key(suite, capsys):
    # the suite has run once already: answers, runs and transcripts are on disk; a stray probe folder
    # outside evals/ and a frozen.json too
    suite.configure({"rule": {"command": agent_command("rule_agent.py")}})
    assert run(suite, "--reps", "1") == 0
    stray = suite.skill / "reference" / "old-probe"
    shutil.copytree(suite.probe(PROBE), stray)
    stray_json = json.loads((stray / "probe.json").read_text())
    (stray / "probe.json").write_text(json.dumps({**stray_json, "id": "old-probe"}))
    (suite.skill / "reference" / "notes.md").write_text("kept: a reference file of the skill\n")
    (suite.skill / "evals" / "frozen.json").write_text('{"schema": 1, "cases": []}')
    suite.configure({"snoop": {
        "command": agent_command("snoop_agent.py", "--prompt-file", "{prompt_file}", "--probe-dir", "{probe_dir}"),
        "treatment": "args", "treatment-args": ["--skill-dir", "{skill_dir}", "--skill-file", "{skill_file}"]}})
    assert run(suite, str(suite.probe(PROBE)), str(suite.probe("two-gaps")), "--reps", "1", "--agent", "snoop") == 0
    records = [r for r in suite.all_records() if r["agent"] == "snoop"]
    assert len(records) == 4
    for record in records:
        seen = json.loads((suite.runs / record["answer_file"]).read_text())
        assert seen["found"] == [], (record["arm"], seen)
        assert seen["cwd_files"] == ["question.md"]
        if record["arm"] == "treatment":
            assert seen["skill_files"] == ["SKILL.md", "output-spec.md", "reference"]
        else:
            assert seen["skill_files"] == [] and not seen["skill_in_prompt"]


def test_placeholders_expand_once_and_an_artifact_cannot_replace_the_prompt(tmp_path, suite, capsys):
    # a skill folder whose name is a placeholder, a probe whose artifact is named prompt.txt
    odd = suite.root / "{prompt_file}"
    suite.skill.rename(odd)
    probe = odd / "evals" / "probes" / PROBE
    (probe / "question.md").rename(probe / "prompt.txt")
    data = json.loads((probe / "probe.json").read_text())
    data["question"] = "prompt.txt"
    (probe / "probe.json").write_text(json.dumps(data))
    suite.configure({"echo": {"command": agent_command("env_agent.py", "--prompt-file", "{prompt_file}"),
                              "treatment": "args", "treatment-args": ["--skill", "{skill_dir}"]}})
    assert run_main([str(probe), "--no-progress", "--reps", "1"]) == 0, capsys.readouterr().err
    runs = odd / "evals" / "runs"
    records = [r for path in sorted(runs.glob("*.jsonl")) for _l, r in parse_runs(path, path.read_bytes()).records]
    by_arm = {r["arm"]: json.loads((runs / r["answer_file"]).read_text()) for r in records}
    treatment = by_arm["treatment"]["argv"]
    assert treatment[-1].endswith("/{prompt_file}") and treatment[-2] == "--skill"
    prompt_file = Path(by_arm["control"]["argv"][1])
    assert prompt_file.name == "prompt.txt" and by_arm["control"]["cwd_files"] == ["prompt.txt"]
    # the prompt is the artifact plus the answer instructions, not the artifact alone
    assert "end your reply with these fields" in by_arm["control"]["prompt"]


# -- 4. preflight ----------------------------------------------------------------------


def test_a_missing_executable_spends_nothing(suite, capsys):
    suite.configure({"typo": {"command": ["claud", "-p"]}}, max_starts=4)
    assert run(suite) == 2
    err = capsys.readouterr().err
    assert "'claud' was not found on PATH (did you mean 'claude'?)" in err and "Traceback" not in err
    assert suite.files() == []
    not_executable = suite.root / "agent.sh"
    not_executable.write_text("#!/bin/sh\necho verdict: PASS\n")
    suite.configure({"noexec": {"command": ["./agent.sh"]}})
    assert run(suite) == 2
    assert "is not executable" in capsys.readouterr().err and suite.files() == []


def test_probes_with_lint_errors_are_listed_and_not_run(suite, capsys):
    suite.configure({"rule": {"command": agent_command("rule_agent.py")}})
    path = suite.probe("two-gaps") / "probe.json"
    data = json.loads(path.read_text())
    data["step_heading"] = "Step 9: Nowhere"
    path.write_text(json.dumps(data))
    assert run(suite, "--reps", "1") == 1
    err = capsys.readouterr().err
    assert "not run: two-gaps v1" in err and "SE101" in err and "1 probe(s) not run because of lint errors" in err
    assert {r["probe"] for r in suite.all_records()} == {PROBE}
    assert run(suite, "--reps", "1", "--allow-lint-errors") == 0
    assert {r["probe"] for r in suite.all_records()} == {PROBE, "two-gaps"}


# -- 5. paths from data ----------------------------------------------------------------


@pytest.mark.parametrize("bad_id", ["../../../../tmp/skill-eval-escape", "/tmp/skill-eval-absolute"])
def test_an_id_outside_the_pattern_never_names_a_path(suite, capsys, bad_id):
    suite.configure({"rule": {"command": agent_command("rule_agent.py")}})
    path = suite.probe(PROBE) / "probe.json"
    data = json.loads(path.read_text())
    data["id"] = bad_id
    path.write_text(json.dumps(data))
    target = Path("/tmp/skill-eval-escape") if bad_id.startswith("..") else Path(bad_id)
    shutil.rmtree(target, ignore_errors=True)
    for extra in ((), ("--allow-lint-errors",)):
        assert run(suite, str(suite.probe(PROBE)), *extra) == 2
        err = capsys.readouterr().err
        assert "does not match ^[a-z0-9][a-z0-9._-]*$" in err and "Traceback" not in err
    assert not target.exists() and suite.files() == []


# -- 6. bounded agents -----------------------------------------------------------------


def test_a_lingering_child_does_not_turn_an_answer_into_a_timeout(suite, tmp_path):
    log = tmp_path / "agent.log"
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--log", str(log), "--child-sleep", "120"),
                           "timeout": 30}})
    assert run(suite, str(suite.probe(PROBE)), "--reps", "1", "--arms", "control") == 0
    [record] = suite.records(PROBE)
    assert record["status"] == "ok" and record["caught"] == ["D1"]
    [(child, _id)] = logged(log, "child")
    assert wait_for(lambda: not alive(child), timeout=10)


def test_output_is_capped_per_stream_and_recorded_as_truncated(suite):
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--out-bytes", str(3 << 20),
                                                    "--err-bytes", str(2 << 20)), "max-output": 1 << 20}})
    assert run(suite, str(suite.probe(PROBE)), "--reps", "1", "--arms", "control") == 0
    [record] = suite.records(PROBE)
    assert record["truncated"]["stdout"] > 3 << 20 and record["truncated"]["stderr"] == 2 << 20
    assert (suite.runs / record["answer_file"]).stat().st_size == 1 << 20
    # the command line's cap wins over the config's
    assert run(suite, str(suite.probe(PROBE)), "--reps", "2", "--arms", "control", "--max-output", "1000") == 0
    record = suite.records(PROBE)[-1]
    assert (suite.runs / record["answer_file"]).stat().st_size == 1000


def test_an_agent_that_closes_its_pipes_before_exiting_is_not_killed(suite):
    suite.configure({"a": {"command": agent_command("probe_agent.py", "--close-early")}})
    assert run(suite, str(suite.probe(PROBE)), "--reps", "1") == 0
    assert {(r["status"], r["exit_code"]) for r in suite.records(PROBE)} == {("ok", 0)}
