"""Sealed starts (evals/sandbox.py): a plain-command agent that hunts for the
answer keys finds none, and an unsealed run is on record as such.

The agent (agents/hunt_agent.py) reads every file it can reach through
``/proc/*/fd``, ``/proc/*/cwd``, ``$HOME`` and the tree from ``/``, and
prints the canaries it found: the ground truth is what it could read, not
what the runner says of itself. Canaries are planted in probe.json, a
transcript, a file under ``evals/`` and (the skill's own) SKILL.md; the
agent is given a regular expression, so that no canary is in its command.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evals_helpers import AGENTS, PYTHON, cli
from skill_eval.evals.sandbox import sandbox_problem

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")

PATTERN = "SECANARY[a-z]+[0-9a-f]{16}"


def plant_canaries(suite) -> dict[str, str]:
    """A canary in probe.json (an ``x-`` field), a transcript, a file under
    evals/ and SKILL.md; returns them by where they are."""
    canaries = {where: f"SECANARY{where}{secrets.token_hex(8)}" for where in ("probe", "transcript", "evals", "skill")}
    probe_json = suite.probe("euphemized-coverage") / "probe.json"
    data = json.loads(probe_json.read_text("utf-8"))
    data["x-canary"] = canaries["probe"]
    probe_json.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    transcript = suite.probe("euphemized-coverage") / "transcripts" / "missed-pass.md"
    transcript.write_text(transcript.read_text("utf-8") + f"\n<!-- {canaries['transcript']} -->\n", "utf-8")
    (suite.skill / "evals" / "notes.md").write_text(f"Reviewer notes: {canaries['evals']}\n", "utf-8")
    skill = suite.skill / "SKILL.md"
    skill.write_text(skill.read_text("utf-8") + f"\n<!-- {canaries['skill']} -->\n", "utf-8")
    return canaries


def configure_hunter(suite, *, delay: float, extra: str = "") -> None:
    """The hunting agent, with no ``sandbox`` key: the default."""
    command = json.dumps([PYTHON, str(AGENTS / "hunt_agent.py"), PATTERN, str(delay)])
    (suite.root / "skill-eval.toml").write_text(
        f'[agents.hunter]\ncommand = {command}\ntimeout = 120\ntreatment = "args"\n'
        f'treatment-args = ["{{skill_dir}}"]\n{extra}', "utf-8")


def run(*args: str, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    """``skill-eval ARGS`` as a real process whose ``PATH`` holds only the
    system's folders (a developer's PATH, with pyenv or cargo, is bound into
    each sealed start: tens of thousands of files for the agent to walk)."""
    env = dict(os.environ, PATH="/usr/local/bin:/usr/bin:/bin")
    return subprocess.run([PYTHON, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def answers(suite) -> list[tuple[dict, dict]]:
    """Each start's record and what its agent reported (its answer's JSON line)."""
    found = []
    for record in suite.all_records():
        text = (suite.runs / record["answer_file"]).read_text("utf-8")
        found.append((record, json.loads(text.splitlines()[0])))
    return found


def test_a_sealed_command_agent_reaches_no_answer_key_nor_another_starts_skill(suite):
    canaries = plant_canaries(suite)
    configure_hunter(suite, delay=0.5)
    result = run("run", "--no-progress", "--skip-check", "--reps", "2", "-j", "4", str(suite.root), cwd=suite.root)
    assert result.returncode in (0, 1), result.stderr
    reported = answers(suite)
    assert len(reported) == 8 and {record["arm"] for record, _ in reported} == {"control", "treatment"}, result.stderr
    keys = {canaries[where] for where in ("probe", "transcript", "evals")}
    for record, seen in reported:
        assert record["status"] == "ok", record
        assert record["sandbox"] == "bwrap"
        # The walk ended within its budget: everything the agent could see was read.
        assert seen["complete"] and seen["files_read"] > 0, seen
        assert not keys & set(seen["found"]), (record["arm"], seen["found"])
        # A fresh home, and only the sandbox's own processes in /proc (the runner's are not there).
        assert seen["home"] != str(Path.home()) and seen["pids"] <= 4, seen
        if record["arm"] == "treatment":
            # What the treatment is given, it reads: the skill's copy in its own scratch folder.
            assert set(seen["found"]) == {canaries["skill"]}, seen["found"]
        else:
            # Four treatment starts ran beside the controls (-j 4, each for 0.5 s at least): no control saw their copies.
            assert seen["found"] == {}, seen["found"]


def test_an_unsealed_run_is_reachable_on_record_and_flagged_in_the_report(suite):
    """The same agent with --no-sandbox reads probe.json through the runner's
    working folder (/proc/PPID/cwd): what sealing prevents. Its starts say
    ``sandbox: "off"`` and the report flags the row as unsealed."""
    canaries = plant_canaries(suite)
    configure_hunter(suite, delay=0)
    result = run("run", "--no-progress", "--skip-check", "--reps", "1", "--arms", "control", "--no-sandbox",
                 str(suite.probe("euphemized-coverage")), cwd=suite.root, timeout=180)
    assert result.returncode in (0, 1), result.stderr
    records = suite.all_records()
    assert [record["status"] for record in records] == ["ok"], (records, result.stderr[-3000:])
    ((record, seen),) = answers(suite)
    assert record["sandbox"] == "off"
    assert canaries["probe"] in seen["found"], (seen, record)
    report = cli("report", str(suite.root), cwd=suite.root)
    assert "UNSEALED" in report.stdout, report.stdout
    model = json.loads(cli("report", "--format", "json", str(suite.root), cwd=suite.root).stdout)
    assert [group["unsealed"] for group in model["groups"]] == [1], model["groups"]


def test_sandbox_off_in_the_config_runs_unsealed_and_a_bad_value_is_refused(suite):
    configure_hunter(suite, delay=0, extra='sandbox = "no"\n')
    result = cli("run", "--no-progress", "--skip-check", "--reps", "1", str(suite.root), cwd=suite.root)
    assert result.returncode == 2 and "agents.hunter.sandbox" in result.stderr and "Traceback" not in result.stderr
    assert suite.all_records() == []


def test_without_a_sandbox_the_run_is_refused_naming_no_sandbox(suite, tmp_path):
    """No bwrap on PATH: refused before any start, in one line naming --no-sandbox."""
    configure_hunter(suite, delay=0)
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "python3").symlink_to(PYTHON)
    env = dict(os.environ, PATH=str(bin_folder))
    result = subprocess.run([sys.executable, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())",
                             "run", "--no-progress", "--skip-check", "--reps", "1", str(suite.root)],
                            cwd=suite.root, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.strip()]
    assert "bubblewrap" in line and "--no-sandbox" in line and "agents.hunter" in line, line
    assert suite.all_records() == []


def test_a_workspace_below_a_bound_folder_is_covered(suite, tmp_path):
    """A PATH folder that holds the workspace (here the test's folder) is
    bound read-only into each start, and an empty folder covers the
    workspace in it: the agent reads a file beside the workspace, and no
    answer key."""
    canaries = plant_canaries(suite)
    beside = f"SECANARYbeside{secrets.token_hex(8)}"
    (tmp_path / "beside.txt").write_text(beside, "utf-8")
    configure_hunter(suite, delay=0)
    env = dict(os.environ, PATH=f"{tmp_path}:/usr/local/bin:/usr/bin:/bin")
    result = subprocess.run([PYTHON, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())", "run",
                             "--no-progress", "--skip-check", "--reps", "1", str(suite.probe("euphemized-coverage"))],
                            cwd=suite.root, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode in (0, 1), result.stderr
    reported = answers(suite)
    assert len(reported) == 2, result.stderr
    for record, seen in reported:
        assert record["sandbox"] == "bwrap" and seen["complete"], seen
        assert beside in seen["found"], seen  # the bound folder is there...
        assert not {canaries[w] for w in ("probe", "transcript", "evals")} & set(seen["found"]), seen  # ...not the workspace


def processes_with(token: str) -> list[int]:
    """Running processes (host view of /proc) whose command line holds
    ``token``: ground truth the runner does not write."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                cmdline = handle.read()
            with open(f"/proc/{name}/stat", encoding="utf-8") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in cmdline and state != "Z":
            found.append(int(name))
    return found


def wait_for(predicate, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_sealed_agents_and_their_children_die_with_a_killed_runner_and_resume(suite):
    """kill -9 of the runner mid-start ends the sandboxes (bwrap, the agent and
    the child it started), as unsealed; the starts read as interrupted."""
    child_token = f"{secrets.randbelow(10**6) + 600}.125"  # the child's sleep seconds: a token in its command line
    (suite.root / "skill-eval.toml").write_text(
        "[agents.a]\ncommand = " + json.dumps([PYTHON, str(AGENTS / "probe_agent.py"), "--sleep", "30",
                                                 "--child-sleep", child_token]) + "\ntimeout = 120\n", "utf-8")
    runner = subprocess.Popen([PYTHON, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())", "run",
                               str(suite.probe("euphemized-coverage")), "--reps", "1", "-j", "2", "--no-progress"],
                              cwd=suite.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=dict(os.environ, PATH="/usr/local/bin:/usr/bin:/bin"))
    try:
        assert wait_for(lambda: len(processes_with(f"time.sleep({child_token})")) == 2), "two sealed children"
        sandboxed = processes_with(child_token)  # bwrap (its argv holds the agent's), the agents, their children
        assert len(sandboxed) >= 6, sandboxed
    finally:
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(timeout=30)
    assert wait_for(lambda: not processes_with(child_token), timeout=15), processes_with(child_token)
    records = suite.records("euphemized-coverage")
    assert len(records) == 2 and {(r["status"], r["sandbox"]) for r in records} == {("interrupted", "bwrap")}


def test_a_sealed_agent_past_its_timeout_is_killed_and_its_output_capped(suite):
    """The timeout ends the sandbox with everything in it; the output cap holds."""
    child_token = f"{secrets.randbelow(10**6) + 600}.25"

    def configure(*args: str, timeout: float) -> None:
        (suite.root / "skill-eval.toml").write_text(
            "[agents.a]\ncommand = " + json.dumps([PYTHON, str(AGENTS / "probe_agent.py"), *args])
            + f"\ntimeout = {timeout}\nmax-output = 1000\n", "utf-8")

    configure("--child-sleep", child_token, "--sleep", "60", timeout=3)
    result = run("run", str(suite.probe("euphemized-coverage")), "--reps", "1", "--arms", "control", "--no-progress",
                 cwd=suite.root)
    assert result.returncode == 1, result.stderr
    (record,) = suite.records("euphemized-coverage")
    assert record["status"] == "timeout" and record["sandbox"] == "bwrap", record
    assert record["duration_s"] < 3 + 10, record
    assert wait_for(lambda: not processes_with(child_token), timeout=10), processes_with(child_token)
    configure("--out-bytes", str(3 << 20), timeout=60)
    result = run("run", str(suite.probe("euphemized-coverage")), "--reps", "2", "--arms", "control", "--no-progress",
                 cwd=suite.root)
    record = suite.records("euphemized-coverage")[-1]
    assert record["status"] == "ok" and record["truncated"]["stdout"] >= 3 << 20, (record, result.stderr)
    assert (suite.runs / record["answer_file"]).stat().st_size == 1000


def test_calibrate_runs_sealed_by_default_and_unsealed_with_no_sandbox(suite):
    (suite.root / "skill-eval.toml").write_text(
        "[agents.a]\ncommand = " + json.dumps([PYTHON, str(AGENTS / "probe_agent.py")]) + "\ntimeout = 60\n", "utf-8")
    probe = str(suite.probe("euphemized-coverage"))
    sealed = run("calibrate", probe, "--no-progress", "--skip-check", cwd=suite.root)
    assert sealed.returncode == 0, sealed.stderr
    assert {r["sandbox"] for r in suite.records("euphemized-coverage")} == {"bwrap"}
    unsealed = run("calibrate", str(suite.probe("two-gaps")), "--no-progress", "--skip-check", "--no-sandbox",
                   cwd=suite.root)
    assert unsealed.returncode == 0, unsealed.stderr
    assert {r["sandbox"] for r in suite.records("two-gaps")} == {"off"}


def test_what_counts_as_a_programs_installation(tmp_path, monkeypatch):
    """An npm package's installation is the folder holding its node_modules
    (found through the .bin link); a PATH folder named bin or shims stands
    for the folder above it, unless that is the home folder."""
    from skill_eval.evals.sandbox import install_prefix, install_root

    prefix = tmp_path / "agent-clis" / "codex"
    package = prefix / "node_modules" / "@openai" / "codex" / "bin"
    package.mkdir(parents=True)
    (package / "codex.js").write_text("#!/usr/bin/env node\n")
    (prefix / "node_modules" / ".bin").mkdir()
    (prefix / "node_modules" / ".bin" / "codex").symlink_to("../@openai/codex/bin/codex.js")
    assert install_root(str(prefix / "node_modules" / ".bin" / "codex")) == str(prefix)
    assert install_root(str(package / "codex.js")) == str(prefix)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert install_prefix(str(tmp_path / "venv" / "bin")) == str(tmp_path / "venv")
    assert install_prefix(str(tmp_path / ".pyenv" / "shims")) == str(tmp_path / ".pyenv")
    assert install_prefix(str(tmp_path / "home" / "bin")) == str(tmp_path / "home" / "bin")
    assert install_prefix(str(tmp_path / "tools")) == str(tmp_path / "tools")


def test_a_path_folder_whose_installation_is_the_workspace_does_not_unseal_it(suite):
    """``WORKSPACE/bin`` on PATH stands for its installation, the folder above
    it: the workspace itself. It stays covered: the agent reads no answer key."""
    canaries = plant_canaries(suite)
    (suite.root / "bin").mkdir()
    configure_hunter(suite, delay=0)
    env = dict(os.environ, PATH=f"{suite.root / 'bin'}:/usr/local/bin:/usr/bin:/bin")
    result = subprocess.run([PYTHON, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())", "run",
                             "--no-progress", "--skip-check", "--reps", "1", "--arms", "control",
                             str(suite.probe("euphemized-coverage"))],
                            cwd=suite.root, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode in (0, 1), result.stderr
    ((record, seen),) = answers(suite)
    assert record["sandbox"] == "bwrap" and seen["complete"], seen
    assert not {canaries[w] for w in ("probe", "transcript", "evals")} & set(seen["found"]), seen


def test_a_harness_installed_in_a_folder_holding_the_workspace_is_refused_before_any_start(suite):
    """npm installed into the workspace (``WORKSPACE/node_modules``): a sealed
    start would see none of it. Refused naming the fix, nothing recorded."""
    package = suite.root / "node_modules" / "fake-harness"
    package.mkdir(parents=True)
    (package / "cli.py").write_text((AGENTS / "fake_harness.py").read_text("utf-8"), "utf-8")
    os.chmod(package / "cli.py", 0o755)
    (suite.root / "node_modules" / ".bin").mkdir()
    (suite.root / "node_modules" / ".bin" / "claude").symlink_to("../fake-harness/cli.py")
    (suite.root / "skill-eval.toml").write_text(
        '[agents.h]\npreset = "claude-code"\nexecutable = "node_modules/.bin/claude"\ntimeout = 60\n', "utf-8")
    result = run("run", "--no-progress", "--skip-check", "--reps", "1", str(suite.probe("euphemized-coverage")),
                 cwd=suite.root)
    assert result.returncode == 2, result.stderr
    assert "holds the workspace" in result.stderr and "--no-sandbox" in result.stderr and "npm install --prefix" \
        in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert suite.all_records() == []
