"""End to end with real subprocess agents (tests/evals/agents/)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time

import pytest

from skill_eval.evals.api import ApiError, probe_status, run_probe
from skill_eval.evals.cli import run_main
from skill_eval.evals.records import read_runs_file

from evals_helpers import PYTHON, agent_command, cli

RULE = {"command": agent_command("rule_agent.py"), "model": "m1", "timeout": 30}


def run(suite, *args):
    """``skill-eval run`` in-process: the whole suite unless a path is given."""
    paths = [] if args and not args[0].startswith("-") else [str(suite.root)]
    return run_main([*paths, "--no-progress", *args])


def keys(records):
    return [(r["probe"], r["arm"], r["rep"]) for r in records if r["status"] == "ok"]


def test_run_grades_records_and_keeps_answers(suite, capsys):
    suite.configure({"rule": RULE})
    assert run(suite, "-j", "4") == 0
    records = suite.records("euphemized-coverage")
    assert len(records) == 4
    for record in records:
        for key in ("probe", "version", "probe_sha256", "artifact_sha256", "arm", "rep", "agent", "model",
                    "started", "ended", "status", "answer_file", "caught"):
            assert key in record
        assert record["status"] == "ok" and record["agent"] == "rule" and record["model"] == "m1"
        assert (suite.runs / record["answer_file"]).is_file()
        # the rule agent catches iff the skill's text was in its prompt
        assert record["caught"] == (["D1"] if record["arm"] == "treatment" else [])
    answer = (suite.runs / records[0]["answer_file"]).read_text()
    assert "verdict:" in answer
    # the band probe: the rule agent names only criterion 3, so neither arm is in the band
    assert all(r["passed"] is False for r in suite.records("two-gaps"))
    status = probe_status(suite.probe("euphemized-coverage") / "probe.json")
    assert status.zone == "window" and status.arms["treatment"].caught == 2 and status.starts == 4
    assert status.last_run is not None


def test_prompt_is_the_artifact_then_the_answer_format(suite, capsys):
    suite.configure({"echo": {"command": agent_command("env_agent.py", "m={model}", "dir={probe_dir}"), "model": "mm",
                              "env": {"SKILL_EVAL_TEST": "yes"}}})
    assert run(suite, str(suite.probe("euphemized-coverage")), "--reps", "1") in (0,)
    by_arm = {r["arm"]: json.loads((suite.runs / r["answer_file"]).read_text()) for r in suite.records("euphemized-coverage")}
    artifact = (suite.probe("euphemized-coverage") / "question.md").read_text()
    skill = (suite.skill / "SKILL.md").read_text()
    control = by_arm["control"]
    assert control["prompt"].startswith(artifact)
    instructions = control["prompt"][len(artifact):]
    assert "verdict: one of PASS, NOT_PROVEN" in instructions and "status, result" in instructions
    assert "criteria" in instructions and "unproven" in instructions
    for leak in ("caught_when", "D1", "euphemized", "quote", "probe.json", "Evidence that argues"):
        assert leak not in instructions
    assert "Evidence that argues" not in control["prompt"]
    assert by_arm["treatment"]["prompt"].startswith(skill.rstrip("\n"))
    assert by_arm["treatment"]["prompt"].endswith(control["prompt"])
    assert control["argv"][0] == "m=mm" and control["env"] == "yes"
    # {probe_dir} (also the cwd) holds only the artifact: never probe.json, never the prompt
    assert control["argv"][1].startswith("dir=") and "euphemized-coverage" not in control["argv"][1]
    assert control["cwd_files"] == ["question.md"]


def test_scratch_folder_is_emptied_between_starts(suite, capsys):
    suite.configure({"echo": {"command": agent_command("env_agent.py", "--litter")}})
    assert run(suite, "-j", "1") == 0
    assert len(suite.all_records()) == 8
    for record in suite.all_records():
        assert json.loads((suite.runs / record["answer_file"]).read_text())["cwd_files"] == ["question.md"]


def test_treatment_by_args_and_prompt_file(suite, capsys):
    suite.configure({"args": {
        "command": agent_command("rule_agent.py", "--prompt-file", "{prompt_file}"),
        "treatment": "args", "treatment-args": ["--skill-dir", "{skill_dir}"]}})
    assert run(suite, str(suite.probe("euphemized-coverage"))) == 0
    records = suite.records("euphemized-coverage")
    assert sorted((r["arm"], r["caught"]) for r in records) == [
        ("control", []), ("control", []), ("treatment", ["D1"]), ("treatment", ["D1"])]


def test_skill_placeholder_in_the_base_command_is_refused(suite, capsys):
    suite.configure({"leak": {"command": agent_command("rule_agent.py", "--skill-dir", "{skill_dir}")}})
    assert run(suite) == 2
    err = capsys.readouterr().err
    assert "would hand the skill to the control arm" in err and "Traceback" not in err
    assert suite.all_records() == []


def test_crash_timeout_and_garbage(suite, capsys):
    suite.configure({
        "crash": {"command": agent_command("crash_agent.py")},
        "hang": {"command": agent_command("hang_agent.py"), "timeout": 1},
        "garbage": {"command": agent_command("garbage_agent.py")},
    })
    probe = str(suite.probe("euphemized-coverage"))
    assert run_main([probe, "--no-progress", "--agent", "crash", "--arms", "control", "--reps", "1"]) == 1
    started = time.monotonic()
    assert run_main([probe, "--no-progress", "--agent", "hang", "--arms", "control", "--reps", "1"]) == 1
    assert time.monotonic() - started < 15
    assert run_main([probe, "--no-progress", "--agent", "garbage", "--arms", "control", "--reps", "1"]) == 0
    by_agent = {r["agent"]: r for r in suite.records("euphemized-coverage")}
    assert by_agent["crash"]["status"] == "error" and by_agent["crash"]["exit_code"] == 3
    assert "boom" in by_agent["crash"]["stderr_tail"]
    assert by_agent["hang"]["status"] == "timeout" and "thinking" in (suite.runs / by_agent["hang"]["answer_file"]).read_text()
    assert by_agent["garbage"]["status"] == "ok" and by_agent["garbage"]["caught"] == []
    assert by_agent["garbage"]["answer_source"] == "none"


def test_resume_and_more_reps(suite, capsys):
    suite.configure({"rule": RULE})
    assert run(suite) == 0
    assert len(suite.all_records()) == 8
    assert run(suite) == 0
    assert len(suite.all_records()) == 8          # nothing re-run
    assert "0 start(s) to make, 8 already recorded ok" in capsys.readouterr().err
    assert run(suite, "--reps", "3") == 0
    records = suite.all_records()
    assert len(records) == 12 and sorted({r["rep"] for r in records}) == [1, 2, 3]
    assert len(set(keys(records))) == 12


def test_retry_errors_reruns_only_failures(suite, tmp_path, capsys):
    state = tmp_path / "flaky-state"
    suite.configure({"flaky": {"command": agent_command("flaky_agent.py", str(state))}})
    probe = str(suite.probe("euphemized-coverage"))
    assert run_main([probe, "--no-progress", "-j", "1"]) == 1
    records = suite.records("euphemized-coverage")
    assert [r["status"] for r in records].count("error") == 1 and len(records) == 4
    assert run_main([probe, "--no-progress"]) == 0
    assert "1 recorded as error/timeout" in capsys.readouterr().err
    assert len(suite.records("euphemized-coverage")) == 4
    assert run_main([probe, "--no-progress", "--retry-errors"]) == 0
    records = suite.records("euphemized-coverage")
    assert len(records) == 5
    failed = next(r for r in records if r["status"] == "error")
    [retry] = [r for r in records if "retry_of" in r]
    assert retry["retry_of"] == failed["start_id"] and retry["status"] == "ok"
    assert (retry["arm"], retry["rep"]) == (failed["arm"], failed["rep"])
    assert records[-1] is retry or records[-1] == retry   # runs files sort in time order
    assert run_main([probe, "--no-progress", "--retry-errors"]) == 0
    assert len(suite.records("euphemized-coverage")) == 5


def test_budget_refuses_and_dry_run_reports(suite, capsys, tmp_path):
    suite.configure({"crash": {"command": agent_command("crash_agent.py")}}, max_starts=6)
    assert run(suite, "--arms", "control", "--reps", "2") == 1          # 4 failed starts, all counted
    assert len(suite.all_records()) == 4
    capsys.readouterr()
    assert run(suite, "--dry-run") == 1
    out = capsys.readouterr().out
    assert "would spend 4 start(s)" in out and "4 of 6 starts used, 2 remain" in out and "refused" in out
    assert run(suite) == 1
    err = capsys.readouterr().err
    assert "needs 4 start(s) but only 2" in err and "max-starts = 6" in err
    assert len(suite.all_records()) == 4
    # a plan that fits still runs, up to the cap exactly
    assert run(suite, "--arms", "treatment", "--reps", "1") == 1
    assert len(suite.all_records()) == 6
    assert run(suite, "--arms", "treatment", "--reps", "2", "--dry-run") == 1


def test_bad_input_is_one_line_without_traceback(suite, capsys, tmp_path):
    assert run(suite) == 2
    err = capsys.readouterr().err
    assert "no agents configured" in err and "skill-eval.toml" in err
    suite.configure({"rule": RULE})
    assert run(suite, "--agent", "nope") == 2
    assert "no agent 'nope'" in capsys.readouterr().err
    (suite.probe("two-gaps") / "probe.json").write_text("{ not json")
    assert run(suite) == 2
    err = capsys.readouterr().err
    assert "two-gaps/probe.json: probe.json is not valid JSON" in err and "Traceback" not in err
    assert suite.all_records() == []
    assert run_main([str(tmp_path / "nowhere"), "--no-progress"]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    assert run(suite, "--arms", "control,placebo") == 2


def test_run_refuses_when_known_transcripts_disagree(suite, capsys):
    suite.configure({"rule": RULE})
    transcript = suite.probe("euphemized-coverage") / "transcripts" / "missed-pass.md"
    transcript.write_text(transcript.read_text().replace("D1: missed", "D1: caught"))
    assert run(suite) == 1
    assert "calibrate the discriminator on known transcripts" in capsys.readouterr().err
    assert suite.all_records() == []
    assert run(suite, "--skip-check") == 0


def _wait_for(predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _ok_keys(suite):
    records = [r for path in suite.files() for _l, r in read_runs_file(path).records]
    return [(r["arm"], r["rep"]) for r in records if r["status"] == "ok"], records


@pytest.mark.parametrize("signals", [[signal.SIGINT], [signal.SIGINT] * 12 + [signal.SIGTERM] * 4],
                         ids=["once", "a burst"])
def test_ctrl_c_records_in_flight_starts_as_interrupted(suite, tmp_path, signals):
    """Ctrl-C, once or pressed again and again while the run stops (a
    second signal while the first was being handled could hang it for good):
    the run ends with 130, its in-flight starts on record as interrupted."""
    log = tmp_path / "starts.log"
    suite.configure({"slow": {"command": agent_command("rule_agent.py", "--sleep", "30", "--log", str(log))}})
    probe = suite.probe("euphemized-coverage")
    process = subprocess.Popen(
        [PYTHON, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())",
         "run", str(probe), "--reps", "4", "-j", "2"],
        cwd=suite.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert _wait_for(lambda: log.exists() and len(log.read_text().splitlines()) >= 2)
        started = time.monotonic()
        for signum in signals:
            if process.poll() is None:
                process.send_signal(signum)
        _out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert process.returncode == 130, err
    assert time.monotonic() - started < 20
    records = suite.records("euphemized-coverage")
    assert len(records) == 2 and all(r["status"] == "interrupted" and "interrupted" in r["error"] for r in records)
    assert "Traceback" not in err and "resume" in err
    # the interrupted starts count, and the plain command resumes them (each a new counted start)
    suite.configure({"slow": {"command": agent_command("rule_agent.py")}})
    result = cli("run", str(probe), "--reps", "4", "--no-progress", cwd=suite.root)
    assert result.returncode == 0 and "(2 resuming interrupted starts)" in result.stderr, result.stderr
    records = suite.records("euphemized-coverage")
    assert len(records) == 10 and sum(r["status"] == "ok" for r in records) == 8
    resumed = {r["resume_of"] for r in records if "resume_of" in r}
    assert resumed == {r["start_id"] for r in records if r["status"] == "interrupted"}


def test_api_run_probe_with_callback_and_cancel(suite):
    suite.configure({"slow": {"command": agent_command("rule_agent.py", "--sleep", "0.3")}})
    path = suite.probe("euphemized-coverage") / "probe.json"
    seen = []
    status = run_probe(path, reps=1, on_record=seen.append)
    assert status.zone == "window" and status.new_records == 2 and len(seen) == 2
    assert status.arms["control"].reps == 1

    suite.configure({"hang": {"command": agent_command("hang_agent.py"), "timeout": 60}})
    cancel = threading.Event()
    timer = threading.Timer(1.0, cancel.set)
    timer.start()
    started = time.monotonic()
    status = run_probe(path, reps=2, cancel=cancel)
    timer.cancel()
    assert time.monotonic() - started < 20
    assert status.interrupted and status.new_records == 4
    # the hang agent's reps are its own row (agent is part of the row key): 2 interrupted per arm
    assert status.agents == ("hang",) and status.starts == 4
    assert status.arms["control"].errors == 2 and status.arms["control"].reps == 0

    with pytest.raises(ApiError, match="no agent 'other'"):
        run_probe(path, agent="other")


STOP_SCRIPT = """
import os, signal, sys, threading, time
from skill_eval.evals.cli import _StopOnSignals

cancel = threading.Event()
stop = _StopOnSignals(cancel).install()
sent = []
notify_all = threading.Condition.notify_all
def notify_all_and_signal(self):  # another Ctrl-C while cancel.set() runs (whichever call of it comes first)
    if not sent:
        sent.append(True)
        os.kill(os.getpid(), signal.SIGINT)
    return notify_all(self)
threading.Condition.notify_all = notify_all_and_signal  # before the first signal: no race with the stop thread
with cancel._cond:  # the Event's own lock, held by this thread when the signal lands
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.2)
os.kill(os.getpid(), signal.SIGTERM)
print(cancel.wait(10), sent, flush=True)
stop.remove()
print(threading.active_count(), signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)
"""


def test_stop_handlers_take_no_lock_the_interrupted_code_may_hold():
    """A signal that lands while the main thread holds the cancel event's
    lock, and another while ``cancel.set`` runs, still stop the run: the
    handlers only write to a pipe (they called ``Event.set``, which waited
    for a lock its own thread held: the run hung for good). Afterwards the
    previous handlers are back and the watcher thread is gone."""
    done = subprocess.run([PYTHON, "-c", STOP_SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "[True]", "1", "True"], done.stdout + done.stderr
    assert done.stderr.count("stopping:") == 1, done.stderr



OTHER_THREAD_SCRIPT = """
import signal, threading, time
from skill_eval.evals.cli import _StopOnSignals

cancel = threading.Event()
stop = _StopOnSignals(cancel).install()
other = threading.Thread(target=time.sleep, args=(3,))
other.start()
signal.pthread_kill(other.ident, signal.SIGINT)  # the kernel's choice, made here: not the main thread
started = time.monotonic()
print(cancel.wait(10), time.monotonic() - started < 2, flush=True)
stop.remove()
"""


def test_a_signal_another_thread_receives_stops_a_blocked_main_thread():
    """Ctrl-C handed by the kernel to a thread other than the main one (an
    agent's reader) while the main thread is blocked on a lock: the run
    loop's ``wait`` without a timeout slept on, and the run hung about one
    time in six (CI caught it as a timeout of the burst case above). The
    stop must reach ``cancel`` without the main thread waking up."""
    done = subprocess.run([PYTHON, "-c", OTHER_THREAD_SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"], done.stdout + done.stderr


STDERR_GONE_SCRIPT = """
import os, signal, sys, threading
from skill_eval.evals.cli import _StopOnSignals

cancel = threading.Event()
stop = _StopOnSignals(cancel).install()
print("ready", flush=True)
sys.stdin.read()  # the test has closed its end of our stderr, then sent SIGTERM
print(cancel.wait(20), flush=True)
"""


def test_a_stop_signal_stops_the_run_when_stderr_is_gone():
    """SIGTERM to a run whose stderr's reader has died (a CI job stopped by
    hand: its runner killed first) still sets ``cancel``: the stop thread's
    "stopping:" line raised BrokenPipeError and the thread died before
    setting it, so the run went on and a Ray of its own outlived the job."""
    process = subprocess.Popen([PYTHON, "-c", STDERR_GONE_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "ready"
        process.stderr.close()
        process.send_signal(signal.SIGTERM)
        process.stdin.close()
        assert process.stdout.read().split() == ["True"]
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("timeout", ["inf", "nan", "-inf", "1e300", "604801", "0"])
def test_an_agent_timeout_that_is_no_usable_number_is_refused_before_any_start(suite, tmp_path, timeout):
    """``timeout = inf`` or ``1e300`` passed the checks and every start then
    failed on the clock's overflow, counted; ``nan`` never timed out. Each
    is refused with the rule, naming the key, and nothing is started (the
    agent logs its starts: none)."""
    log = tmp_path / "starts.log"
    command = json.dumps(agent_command("rule_agent.py", "--log", str(log)))
    (suite.root / "skill-eval.toml").write_text(f"[agents.slow]\ncommand = {command}\ntimeout = {timeout}\n",
                                               encoding="utf-8")
    result = cli("run", str(suite.probe("euphemized-coverage")), "--reps", "1", "--no-progress", cwd=suite.root)
    assert result.returncode != 0 and "agents.slow.timeout" in result.stderr and "a week" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert not log.exists() and suite.records("euphemized-coverage") == []


@pytest.mark.parametrize("reps, said", [("100000000000", "over 10,000"), ("0", "at least 1"), ("300", "can never fit")])
def test_reps_that_can_never_run_are_refused_at_once(suite, tmp_path, reps, said):
    """A typo'd ``--reps`` built its whole plan (minutes, gigabytes) before
    the budget refused it: more reps than the cap allows, or than any plan
    should hold, is refused before any probe is loaded, with no start made."""
    log = tmp_path / "starts.log"
    command = json.dumps(agent_command("rule_agent.py", "--log", str(log)))
    (suite.root / "skill-eval.toml").write_text(f"[agents.a]\ncommand = {command}\n\n[calibration]\nmax-starts = 200\n",
                                               encoding="utf-8")
    started = time.monotonic()
    result = cli("run", str(suite.probe("euphemized-coverage")), "--reps", reps, "--no-progress", cwd=suite.root)
    assert result.returncode != 0 and said in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert time.monotonic() - started < 30
    assert not log.exists() and suite.records("euphemized-coverage") == []
