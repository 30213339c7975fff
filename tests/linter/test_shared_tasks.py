"""The parallel CLI's task sharing (:mod:`skill_eval.linter.task_sharing`):
this process and forked helpers take tasks from one counter; every task's
result arrives exactly once, whatever a helper does, and helpers forked
before their work is known wait for it, or are dismissed."""

from __future__ import annotations

import os
import select
import time
from pathlib import Path

import pytest
from skill_eval.linter import engine
from skill_eval.linter.task_sharing import Helpers, dumps, loads

pytestmark = pytest.mark.skipif(not engine._can_fork(), reason="no fork on this platform")

TASKS = 24


def _share(task, prepare=None, order=None) -> list[tuple[int, object]]:
    helpers = Helpers(1, start=lambda _order: task, prepare=prepare)
    return list(helpers.share(order, TASKS))


def test_this_process_and_a_helper_share_the_tasks() -> None:
    parent = os.getpid()

    def task(index: int) -> int:
        time.sleep(0.01)
        return os.getpid()

    results = _share(task)
    assert sorted(index for index, _pid in results) == list(range(TASKS))
    by = {pid for _index, pid in results}
    assert parent in by and len(by) == 2, "both processes took tasks"


def test_a_helper_that_dies_loses_no_task() -> None:
    """A helper killed mid-task (out of memory, say): the task it held is run
    here at the end, and nothing is reported twice."""
    parent = os.getpid()

    def task(index: int) -> int:
        if os.getpid() != parent:
            os._exit(3)
        time.sleep(0.005)
        return index

    results = _share(task)
    assert sorted(index for index, _value in results) == list(range(TASKS))
    assert all(index == value for index, value in results)


def test_a_helper_that_dies_while_preparing_loses_no_task() -> None:
    def prepare() -> None:
        os._exit(4)

    results = _share(lambda index: index, prepare=prepare)
    assert sorted(value for _index, value in results) == list(range(TASKS))


def test_a_task_that_raises_in_a_helper_is_run_again_here() -> None:
    """Here it raises as it would without helpers (an engine bug surfaces
    once, with its traceback, rather than being lost in a helper)."""
    parent = os.getpid()

    def task(index: int) -> str:
        if os.getpid() != parent:
            raise RuntimeError("helper only")
        time.sleep(0.005)
        return "here"

    results = _share(task)
    assert sorted(index for index, _value in results) == list(range(TASKS))
    assert {value for _index, value in results} == {"here"}

    def failing(index: int) -> str:
        raise RuntimeError(f"task {index} fails everywhere")

    with pytest.raises(RuntimeError, match="fails everywhere"):
        _share(failing)


def test_a_large_order_reaches_a_helper_still_preparing_without_blocking_here() -> None:
    """The order (here ~1 MB, far more than a pipe holds) is sent while the
    helper is still in ``prepare``, which ends only when this process has got
    past :meth:`Helpers.share`: had sending the order blocked until the helper
    read it, ``prepare`` would have timed out instead."""
    release_read, release_write = os.pipe()
    order = {"payload": "x" * (1 << 20), "paths": [Path(f"/w/probe-{n}/probe.json") for n in range(2000)]}
    parent = os.getpid()

    def prepare() -> None:
        ready, _, _ = select.select([release_read], [], [], 20)
        if not ready:
            os._exit(5)  # timed out: the order blocked this process

    def start(received):
        def task(index: int) -> tuple:
            if os.getpid() == parent:
                time.sleep(0.02)  # leave tasks to the helper
            return os.getpid(), len(received["payload"]), received["paths"][-1]

        return task

    helpers = Helpers(1, start=start, prepare=prepare)
    results = helpers.share(order, TASKS)
    os.write(release_write, b"go")
    values = [value for _index, value in results]
    os.close(release_read)
    os.close(release_write)
    assert len(values) == TASKS
    assert {(size, last) for _pid, size, last in values} == {(1 << 20, Path("/w/probe-1999/probe.json"))}
    assert len({pid for pid, _size, _last in values}) == 2, "the helper took tasks after its order arrived"


def test_helpers_given_no_order_are_dismissed() -> None:
    helpers = Helpers(2, start=lambda order: (lambda index: index), prepare=lambda: time.sleep(30))
    children = list(helpers._children)
    assert len(children) == 2
    helpers.close()
    for pid in children:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped already


def test_an_order_that_cannot_be_pickled_is_run_here() -> None:
    parent = os.getpid()
    helpers = Helpers(1, start=lambda order: (lambda index: (os.getpid(), order["tasks"][index])))
    children = list(helpers._children)
    results = list(helpers.share({"tasks": list(range(TASKS)), "lock": __import__("threading").Lock()}, TASKS))
    assert sorted(value for _pid, value in (result for _index, result in results)) == list(range(TASKS))
    assert {pid for _index, (pid, _value) in results} == {parent}
    for pid in children:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # dismissed and reaped


def test_the_default_config_travels() -> None:
    """Its empty mappings are read-only views, which plain pickle refuses."""
    from skill_eval.linter.config import Config

    assert loads(dumps(Config())) == Config()


def test_paths_travel_as_their_text() -> None:
    value = {"probe": Path("/w/a b/probe.json"), "nested": [(Path("relative/x.md"), 3)]}
    assert loads(dumps(value)) == value
    assert str(Path("/w/a b/probe.json")).encode() in dumps(value), "pickled as one string, not its parts"


@pytest.mark.skipif(not hasattr(__import__("fcntl"), "F_GETPIPE_SZ"), reason="pipe sizes are Linux's")
def test_result_pipes_hold_a_whole_chunk_result() -> None:
    """A helper's pipes are widened to 1 MiB, so a chunk's result (~250 KB
    at 1,000 probes) is handed in at once, not in 64 KiB turns of the
    thread that reads it."""
    import fcntl

    from skill_eval.linter.task_sharing import PIPE_SIZE, _widen

    read_end, write_end = os.pipe()
    try:
        _widen(write_end)
        assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) == PIPE_SIZE
        os.set_blocking(write_end, False)  # a narrow pipe writes part, rather than hang the test
        message = b"x" * (300 * 1024)
        assert os.write(write_end, message) == len(message), "written at once, with no reader"
    finally:
        os.close(read_end)
        os.close(write_end)
