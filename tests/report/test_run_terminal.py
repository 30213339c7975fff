"""What ``skill-eval run`` prints, as a real process with real subprocess
agents: piped (a CI log), one flushed line per finished start on stderr and the
results on stdout; on a terminal (a pseudo-terminal), a rich progress bar with
an ETA, or lines when rich is not installed.

Ground truth is the agent's own log (tests/report/agents/verdict_agent.py:
which start it answered and whether it caught the gaps), never the runner's
output. Nothing here asserts on timing: a gate file holds the second start
until the test has seen the first start's line, which proves the line was
written (and flushed) while the run was still going.
"""

from __future__ import annotations

import fcntl
import os
import pty
import queue
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from report_helpers import Suite
from skill_eval.evals.records import read_runs_file

AGENT = Path(__file__).resolve().parent / "agents" / "verdict_agent.py"
DEADLINE = 180.0
"""Seconds after which a test fails instead of hanging (not a speed goal)."""
LINE = re.compile(r"^\[(\d+)/(\d+)(?: ETA (?:\d+:\d\d:\d\d|-:--:--))?\] (\S+) v(\d+) (control|treatment) rep (\d+): "
                  r"(caught|missed)\b.* in \d+\.\d s$")
RESULTS = re.compile(r"^(control|treatment)\s*: (\d+) start\(s\): (\d+) ok \((\d+) caught\)")
NO_RICH = "import sys; sys.modules['rich'] = None; from skill_eval.cli import main; sys.exit(main())"
WITH_CLI = "import sys; from skill_eval.cli import main; sys.exit(main())"


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR", "COLUMNS", "LINES")}
    env.update(extra)
    return env


def configure(suite: Suite, log: Path, gate: Path | None = None) -> None:
    command = [sys.executable, str(AGENT), "--log", str(log)] + (["--gate", str(gate)] if gate else [])
    suite.configure({"verdict": {"command": command, "model": "m1"}})


def agent_log(log: Path) -> dict[str, str]:
    return dict(line.split() for line in log.read_text().splitlines())


def starts_by_rep(suite: Suite) -> dict[tuple[str, str, int], str]:
    """(probe, arm, rep) -> start id, from the runs files."""
    return {(r["probe"], r["arm"], r["rep"]): r["start_id"] for path in sorted(suite.runs.glob("*.jsonl"))
            for _line, r in read_runs_file(path).records}


class Reader(threading.Thread):
    """Reads one stream of the child line by line as the lines arrive."""

    def __init__(self, stream) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.lines: queue.SimpleQueue = queue.SimpleQueue()
        self.seen: list[str] = []

    def run(self) -> None:
        for raw in iter(self.stream.readline, b""):
            self.lines.put(raw.decode("utf-8", errors="replace").rstrip("\n"))
        self.lines.put(None)

    def next_line(self) -> str | None:
        line = self.lines.get(timeout=DEADLINE)
        if line is not None:
            self.seen.append(line)
        return line

    def rest(self) -> list[str]:
        while self.next_line() is not None:
            pass
        return self.seen


def test_piped_run_prints_a_flushed_line_per_finished_start(tmp_path):
    suite = Suite(tmp_path)
    log, gate = tmp_path / "agent.log", tmp_path / "gate"
    configure(suite, log, gate)
    process = subprocess.Popen([sys.executable, "-c", WITH_CLI, "run", str(suite.root), "-j", "1", "--skip-check"],
                               cwd=suite.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               env=environment(FORCE_COLOR="1"))  # colour asked for: still a pipe, still lines
    err, out = Reader(process.stderr), Reader(process.stdout)
    err.start()
    out.start()
    try:
        # the plan's header, then the first start's line while every other start waits at the gate
        while (line := err.next_line()) is not None and not line.startswith("[1/"):
            assert not line.startswith("["), line
        assert line is not None and LINE.match(line), err.seen
        assert process.poll() is None, "the run ended before the gate opened: the line was not written as it happened"
        assert out.lines.empty(), "results were printed before the run ended"
        assert len(agent_log(log)) == 1
        gate.touch()
        err_lines = err.rest()
        out_lines = out.rest()
        assert process.wait(timeout=DEADLINE) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    decided = agent_log(log)
    by_rep = starts_by_rep(suite)
    progress = [line for line in err_lines if line.startswith("[")]
    assert len(progress) == len(decided) == 8
    for number, line in enumerate(progress, 1):
        match = LINE.match(line)
        assert match, line
        done, total, probe, _version, arm, rep, verdict = match.groups()
        assert (int(done), int(total)) == (number, 8)
        start_id = by_rep[(probe, arm, int(rep))]
        assert verdict == {"hit": "caught", "miss": "missed"}[decided[start_id]], line
    assert "ETA" in progress[0] and "ETA" not in progress[-1]
    # results on stdout, progress on stderr, never the other way round
    tallies = {m.group(1): m.groups()[1:] for m in map(RESULTS.match, out_lines) if m}
    hits = {arm: sum(decided[by_rep[key]] == "hit" for key in by_rep if key[1] == arm) for arm in ("control", "treatment")}
    assert tallies == {arm: ("4", "4", str(hits[arm])) for arm in ("control", "treatment")}
    assert hits == {"control": 0, "treatment": 4}
    assert any(line.startswith("budget: 8 starts on record") for line in out_lines)
    assert not any(line.startswith("[") for line in out_lines)
    assert not any(RESULTS.match(line) for line in err_lines)


def run_on_a_terminal(suite: Suite, code: str, command: tuple[str, ...] = ("run",)) -> tuple[str, str, int]:
    """``skill-eval run`` (or ``command``) with stderr on a pseudo-terminal
    (160 columns) and stdout on a pipe: what the terminal showed, stdout, the
    exit status."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    process = subprocess.Popen([sys.executable, "-c", code, *command, str(suite.root), "-j", "2", "--skip-check"],
                               cwd=suite.root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave,
                               env=environment(TERM="xterm-256color"))
    os.close(slave)
    out = Reader(process.stdout)
    out.start()
    shown = bytearray()
    deadline = time.monotonic() + DEADLINE
    try:
        while time.monotonic() < deadline:
            ready, _w, _x = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer of the terminal is gone
                    break
                if not chunk:
                    break
                shown += chunk
            elif process.poll() is not None:
                break
        status = process.wait(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    return shown.decode("utf-8", errors="replace"), "\n".join(out.rest()), status


def plain(text: str) -> str:
    """Terminal output without escape sequences, carriage returns as new lines."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r\n", "\n").replace("\r", "\n")


def test_a_terminal_shows_a_progress_bar_with_an_eta(tmp_path):
    suite = Suite(tmp_path)
    log = tmp_path / "agent.log"
    configure(suite, log)
    shown, out, status = run_on_a_terminal(suite, WITH_CLI)
    assert status == 0, shown + out
    screen = plain(shown)
    assert "\x1b[" in shown, "no terminal drawing: rich did not see a terminal"
    frames = [line for line in screen.splitlines() if line.startswith("runs ")]
    assert frames, screen
    assert all(re.search(r"\b\d+/8\b.*\bETA (?:\d+:\d\d:\d\d|-:--:--)", frame) for frame in frames), frames
    hits = sum(verdict == "hit" for verdict in agent_log(log).values())
    assert re.search(rf"\b8/8\b.*control 0/4 caught\s+treatment {hits}/4 caught", frames[-1]), frames[-1]
    assert not re.search(r"^\[\d+/8", screen, re.M), "lines instead of a bar on a terminal"
    # the results still go to stdout, and only they
    assert re.search(rf"^treatment: 4 start\(s\): 4 ok \({hits} caught\)", out, re.M) and "ETA" not in out


def test_a_terminal_without_rich_gets_lines(tmp_path):
    suite = Suite(tmp_path)
    log = tmp_path / "agent.log"
    configure(suite, log)
    shown, out, status = run_on_a_terminal(suite, NO_RICH)
    assert status == 0, shown + out
    lines = [line for line in plain(shown).splitlines() if line.startswith("[")]
    assert len(lines) == len(agent_log(log)) == 8 and all(LINE.match(line) for line in lines), lines
    assert "\x1b[" not in shown
    assert re.search(r"^control  : 4 start\(s\)", out, re.M)


@pytest.mark.parametrize("code", [WITH_CLI, NO_RICH])
def test_no_progress_prints_no_progress(tmp_path, code):
    suite = Suite(tmp_path)
    configure(suite, tmp_path / "agent.log")
    result = subprocess.run([sys.executable, "-c", code, "run", str(suite.root), "--reps", "1", "--no-progress",
                             "--skip-check"], cwd=suite.root, capture_output=True, text=True, env=environment(),
                            timeout=DEADLINE)
    assert result.returncode == 0, result.stderr
    assert len(agent_log(tmp_path / "agent.log")) == 4
    assert not re.search(r"^\[\d+/", result.stderr, re.M) and "ETA" not in result.stderr
    assert re.search(r"^control  : 2 start\(s\)", result.stdout, re.M)


# -- calibrate shows its starts the same way ---------------------------------------------

CALIBRATE_LINE = re.compile(r"^\[(\d+)/(\d+)(?: ETA (?:\d+:\d\d:\d\d|-:--:--))?\] (\S+) v(\d+) "
                            r"(control|treatment) rep (\d+): (caught|missed)\b.* in \d+\.\d s$")


def calibrate_expectations(log: Path) -> int:
    """Starts the agent answered, from its own log."""
    return len(agent_log(log))


@pytest.mark.parametrize("code", [WITH_CLI, NO_RICH], ids=["rich", "no-rich"])
def test_piped_calibrate_prints_a_line_per_finished_start_and_no_bar(tmp_path, code):
    """Piped (a CI log), with rich installed or not and even with FORCE_COLOR:
    one line per start the agent answered, never a bar's drawing."""
    suite = Suite(tmp_path)
    log = tmp_path / "agent.log"
    configure(suite, log)
    result = subprocess.run([sys.executable, "-c", code, "calibrate", str(suite.root), "--skip-check"],
                            cwd=suite.root, capture_output=True, text=True, env=environment(FORCE_COLOR="1"),
                            timeout=DEADLINE)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("[")]
    answered = calibrate_expectations(log)
    assert answered and len(lines) == answered, result.stderr
    assert all(CALIBRATE_LINE.match(line) for line in lines), lines
    assert "\x1b[" not in result.stderr and "\r" not in result.stderr and "━" not in result.stderr
    assert re.search(r"^stage 1: \d+ start\(s\)", result.stderr, re.M)


def test_calibrate_on_a_terminal_without_rich_gets_lines(tmp_path):
    suite = Suite(tmp_path)
    log = tmp_path / "agent.log"
    configure(suite, log)
    shown, out, status = run_on_a_terminal(suite, NO_RICH, ("calibrate",))
    assert status == 0, shown + out
    assert "Traceback" not in shown + out
    lines = [line for line in plain(shown).splitlines() if line.startswith("[")]
    assert len(lines) == calibrate_expectations(log) and all(CALIBRATE_LINE.match(line) for line in lines), lines
    assert "\x1b[" not in shown


def test_calibrate_on_a_terminal_draws_a_bar(tmp_path):
    suite = Suite(tmp_path)
    log = tmp_path / "agent.log"
    configure(suite, log)
    shown, out, status = run_on_a_terminal(suite, WITH_CLI, ("calibrate",))
    assert status == 0, shown + out
    frames = [line for line in plain(shown).splitlines() if line.startswith("calibrate ")]
    answered = calibrate_expectations(log)
    assert frames and re.search(rf"\b{answered}/{answered}\b", frames[-1]), frames
    assert not re.search(r"^\[\d+/", plain(shown), re.M), "lines instead of a bar on a terminal"


# -- a crashing agent's own words --------------------------------------------------------

CRASHING_AGENT = """\
import sys
sys.stdin.read()
print("loading the model...", file=sys.stderr)
print("Traceback (most recent call last):", file=sys.stderr)
print('  File "agent.py", line 3, in <module>', file=sys.stderr)
print("\\x1b[31mred\\x1b[0m", file=sys.stderr)
print("KeyError: 'OPENAI_API_KEY' is not set", file=sys.stderr)
sys.exit(2)
"""


@pytest.mark.parametrize("command", ["run", "calibrate"])
def test_a_crashing_agent_shows_its_stderr_in_its_line_and_the_summary(tmp_path, command):
    """The agent's last stderr lines (what it said as it died) appear in each
    failed start's progress line and in the summary, not only "exited with
    status 2"; the records hold the same tail (the runner's ground truth)."""
    suite = Suite(tmp_path)
    agent = tmp_path / "crash.py"
    agent.write_text(CRASHING_AGENT, encoding="utf-8")
    suite.configure({"crash": {"command": [sys.executable, str(agent)], "model": "m1"}})
    result = subprocess.run([sys.executable, "-c", WITH_CLI, command, str(suite.root), "--skip-check", "-j", "1"],
                            cwd=suite.root, capture_output=True, text=True, env=environment(), timeout=DEADLINE)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr.replace("Traceback (most recent call last):", "")
    records = suite.records()
    assert records and all(r["status"] == "error" and "KeyError: 'OPENAI_API_KEY' is not set" in r["stderr_tail"]
                           for r in records)
    lines = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == len(records)
    for line in lines:
        assert "error" in line and "the agent exited with status 2" in line, line
        assert line.endswith("KeyError: 'OPENAI_API_KEY' is not set"), line
        assert "loading the model" not in line  # only the last lines
        assert "\x1b" not in line and "?[31mred?[0m" in line  # an agent's escapes never reach the terminal
    summary = result.stderr[result.stderr.index(f"{len(records)} start(s) failed"):]
    assert re.search(r"^  \S+ v\d+ (control|treatment) rep \d+: error in \d+\.\d s: the agent exited with status 2; "
                     r"its stderr ends: .*KeyError: 'OPENAI_API_KEY' is not set$", summary, re.M), summary
