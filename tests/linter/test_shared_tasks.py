"""The parallel CLI's task sharing: this process and forked helpers take tasks
from one counter; every task's result arrives exactly once, whatever a helper
does."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from skill_eval.linter import engine
from skill_eval.linter.config import load_config
from skill_eval.linter.context import LintSession
from skill_eval.linter.reader import FileSystemReader

pytestmark = pytest.mark.skipif(not engine._can_fork(), reason="no fork on this platform")

TASKS = 24


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task) -> list[tuple[int, object]]:
    monkeypatch.setattr(engine, "_lint_chunk_task", task)
    session = LintSession(tmp_path, load_config(tmp_path), FileSystemReader())
    return list(engine._share_tasks(session, [None] * TASKS, helpers=1))


def test_this_process_and_a_helper_share_the_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()

    def task(index: int) -> int:
        time.sleep(0.01)
        return os.getpid()

    results = _run(tmp_path, monkeypatch, task)
    assert sorted(index for index, _pid in results) == list(range(TASKS))
    by = {pid for _index, pid in results}
    assert parent in by and len(by) == 2, "both processes took tasks"


def test_a_helper_that_dies_loses_no_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper killed mid-task (out of memory, say): the task it held is run
    here at the end, and nothing is reported twice."""
    parent = os.getpid()

    def task(index: int) -> int:
        if os.getpid() != parent:
            os._exit(3)
        time.sleep(0.005)
        return index

    results = _run(tmp_path, monkeypatch, task)
    assert sorted(index for index, _value in results) == list(range(TASKS))
    assert all(index == value for index, value in results)


def test_a_task_that_raises_in_a_helper_is_run_again_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Here it raises as it would without helpers (an engine bug surfaces
    once, with its traceback, rather than being lost in a helper)."""
    parent = os.getpid()

    def task(index: int) -> str:
        if os.getpid() != parent:
            raise RuntimeError("helper only")
        time.sleep(0.005)
        return "here"

    results = _run(tmp_path, monkeypatch, task)
    assert sorted(index for index, _value in results) == list(range(TASKS))
    assert {value for _index, value in results} == {"here"}

    def failing(index: int) -> str:
        raise RuntimeError(f"task {index} fails everywhere")

    with pytest.raises(RuntimeError, match="fails everywhere"):
        _run(tmp_path, monkeypatch, failing)
