"""A cancel wakes the run loop's :func:`concurrent.futures.wait` at once (no
poll): the run returns a bounded time after the cancel is set from another
thread, while real subprocess agents run, and every start it made has its
outcome recorded."""

from __future__ import annotations

import threading
import time

from skill_eval.evals.api import run_probe
from skill_eval.evals.runner import Cancel

from evals_helpers import agent_command

RETURN_BOUND = 5.0
"""Seconds from the cancel to the run's return: the agents killed, their
outcomes graded and written (the poll the cancel replaced is set to 60 s)."""


def test_a_cancel_set_from_another_thread_stops_the_run_at_once_and_loses_no_outcome(suite, monkeypatch):
    monkeypatch.setattr("skill_eval.evals.runner.CANCEL_CHECK", 60.0)  # a poll would now see the cancel late
    suite.configure({"split": {"command": agent_command("split_agent.py"), "timeout": 120}})
    path = suite.probe("euphemized-coverage") / "probe.json"
    cancel, answered, set_at = Cancel(), threading.Event(), []
    seen: list[dict] = []

    def on_record(record: dict) -> None:
        seen.append(record)
        if sum(r["status"] == "ok" for r in seen) == 2:
            answered.set()

    def cancel_when_answered() -> None:
        answered.wait(60)
        time.sleep(0.5)  # the control arm's agents still run
        set_at.append(time.monotonic())
        cancel.set()

    canceller = threading.Thread(target=cancel_when_answered)
    canceller.start()
    status = run_probe(path, agent="split", reps=2, jobs=4, on_record=on_record, cancel=cancel)
    returned = time.monotonic()
    canceller.join(10)
    assert set_at, "the treatment arm's answers never landed"
    assert returned - set_at[0] < RETURN_BOUND, returned - set_at[0]
    assert status.interrupted and status.new_records == 4
    outcomes = sorted((r["arm"], r["status"]) for r in seen)
    assert outcomes == [("control", "interrupted"), ("control", "interrupted"), ("treatment", "ok"), ("treatment", "ok")]
    # on disk: every start record has its outcome
    lines = suite.lines()
    started = {line["start_id"] for line in lines if line.get("type") == "start"}
    finished = {line["start_id"] for line in lines if line.get("type") == "outcome"}
    assert len(started) == 4 and started == finished, lines


def test_a_cancel_resolves_its_future_once_and_clear_starts_a_new_one() -> None:
    cancel = Cancel()
    first = cancel.future
    assert not first.done() and not cancel.is_set()
    threads = [threading.Thread(target=cancel.set) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cancel.is_set() and first.done() and first.result() is None
    cancel.clear()
    assert not cancel.is_set() and not cancel.future.done() and first.done()
