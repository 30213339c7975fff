"""The watchdog program (evals/watchdog.py), run as its clients run it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

from skill_eval.evals import watchdog as watchdog_module
from skill_eval.evals.watchdog import Watchdog, start_time


def _gone(process: subprocess.Popen, within: float = 10.0) -> bool:
    try:
        process.wait(timeout=within)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_the_program_imports_the_standard_library_only():
    """It runs as ``python -I -S watchdog.py``: no site-packages, no
    ``skill_eval`` on its path. An import of anything else would fail there
    (and the watchdog would silently not run)."""
    tree = ast.parse(Path(watchdog_module.PROGRAM).read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "a relative import cannot run in the isolated program"
            names.add((node.module or "").split(".")[0])
    assert names - {"__future__"} <= set(sys.stdlib_module_names), names - set(sys.stdlib_module_names)


def test_a_process_told_of_by_pid_and_start_time_is_killed_and_a_stale_identity_is_not():
    """``=PID START``: at the end the watchdog kills the process that is
    still the one told of; a start time that does not match (a pid the system
    reused) spares the process."""
    told = subprocess.Popen(["sleep", "60"])
    stale = subprocess.Popen(["sleep", "60"])
    try:
        watchdog = Watchdog()
        assert watchdog.running
        watchdog.watch_processes({told.pid: start_time(told.pid), stale.pid: b"1"})
        watchdog.close()
        assert _gone(told), "the process told of outlived the watchdog"
        assert told.returncode == -9
        assert stale.poll() is None, "a process whose start time differs was killed"
    finally:
        for process in (told, stale):
            process.kill()
            process.wait()


def test_a_killed_client_leaves_no_marked_process_nor_folder(tmp_path):
    """The client (here a child Python) is killed with SIGKILL: its watchdog
    kills the process group it was told of, a process carrying its token in
    its environment but never told of, and removes the folder it was given."""
    script = f"""
import os, subprocess, sys, time
sys.path[:0] = {sys.path!r}
from skill_eval.evals.watchdog import Watchdog
watchdog = Watchdog(token="t0ken")
folder = {str(tmp_path / "scratch")!r}
watchdog.remove_on_exit(folder)
os.mkdir(folder)
grouped = subprocess.Popen(["sleep", "60"], start_new_session=True)
watchdog.watch(grouped.pid)
marked = subprocess.Popen(["sleep", "60"], start_new_session=True, env=dict(os.environ, SKILL_EVAL_RUN="t0ken"))
print(grouped.pid, marked.pid, flush=True)
time.sleep(60)
"""
    client = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    grouped, marked = (int(word) for word in client.stdout.readline().split())
    assert (tmp_path / "scratch").is_dir()
    client.kill()
    client.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (
            (tmp_path / "scratch").exists() or _alive(grouped) or _alive(marked)):
        time.sleep(0.05)
    assert not _alive(grouped), "the process group told of outlived its killed client"
    assert not _alive(marked), "the process carrying the token outlived its killed client"
    assert not (tmp_path / "scratch").exists()


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie, killed and not yet reaped by init, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_a_line_outside_the_protocol_does_not_stop_the_sweep(tmp_path):
    """A malformed line is skipped: the folder told of after it is still removed."""
    folder = tmp_path / "scratch"
    watchdog = Watchdog()
    watchdog._send(b"+not-a-pid\n=1\n>zz\n")
    watchdog.remove_on_exit(str(folder))
    folder.mkdir()
    watchdog.close()
    assert not folder.exists()
