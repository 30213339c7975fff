"""A driver with a Ray of its own, stopped with SIGTERM after whoever read its
output died (a CI job stopped by hand: pytest killed first), leaves no
process: its Ray (GCS, raylet, monitor, agents, workers), its watchdogs and
the agents are gone soon after, and the starts are on record as
interrupted. Before, the stop thread's "stopping:" line raised
BrokenPipeError and the thread died without stopping the run: the driver
and its whole Ray ran on until the agents ended (here: 10 minutes).

Runs like tests/evals/test_ray_executor.py (whose helpers it uses), in a
loopback-only network namespace; the ground truth is the processes in it."""

from __future__ import annotations

import signal
import subprocess
import time

from test_ray_executor import (PROBE, REQUIRED, Namespace, _configure_sleeper, _require, command_line, logged, needs_ray,
                               new_suite, start_ray_driver, wait_for)

GONE_WITHIN = 60.0
"""Seconds the driver and its Ray may take to end after SIGTERM (about 3-6 s
on a loaded 2-core box; generous for a slower one)."""


@needs_ray
def test_sigterm_to_a_driver_whose_output_reader_died_ends_its_ray(tmp_path):
    if REQUIRED:
        _require()
    suite, log = new_suite(tmp_path), tmp_path / "agent.log"
    _configure_sleeper(suite, log, 600)
    home = tmp_path / "home"
    home.mkdir()
    namespace = Namespace()
    try:
        driver = start_ray_driver(namespace, suite, home, subprocess.PIPE)
        try:
            assert wait_for(lambda: len(logged(log)) == 2, timeout=180)
            running = namespace.processes()
            assert any("gcs_server" in command_line(pid) for pid in running), [command_line(p) for p in running]
            driver.stdout.close()  # the reader of its output is gone
            driver.stderr.close()
            clock = time.monotonic()
            driver.send_signal(signal.SIGTERM)
            gone = wait_for(lambda: namespace.processes() == [], timeout=GONE_WITHIN)
            took = time.monotonic() - clock
            assert gone, [command_line(pid) for pid in namespace.processes()]
        finally:
            if driver.poll() is None:
                driver.kill()
            driver.wait(timeout=60)
        print(f"driver and its Ray gone {took:.1f} s after SIGTERM")
        assert sorted(r["status"] for r in suite.records(PROBE)) == ["interrupted", "interrupted"]
    finally:
        left = namespace.close()
    assert left == [], [command_line(pid) for pid in left]
