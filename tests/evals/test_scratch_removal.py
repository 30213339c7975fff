"""A start's scratch folder is removed after the agent ends, whatever the
agent left in it, and nothing a link in it points at is touched (the quick
removal of what the runner made falls back to the walk). Real subprocess
agents (``sh -c``), the real executor."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from skill_eval.evals.executor import AgentJob, ProcessRegistry, execute_job

SCRIPTS = {
    "nothing": "cat >/dev/null",
    "files": "cat >/dev/null; echo x > left.txt; mkdir -p deep/er; echo y > deep/er/z; echo t > \"$TMPDIR/t\"",
    "artifact removed": "cat >/dev/null; rm question.md",
    "link out": "cat >/dev/null; ln -s \"$OUTSIDE\" out; rm question.md; ln -s \"$OUTSIDE/keep.txt\" question.md",
    "work replaced by a link": "cat >/dev/null; cd ..; rm -r work; ln -s \"$OUTSIDE\" work",
}


@pytest.mark.parametrize("prompt_file", [False, True])
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_the_start_folder_is_removed_and_links_are_not_followed(tmp_path, name, prompt_file):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep me\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    sh = shutil.which("sh")
    argv = (sh, "-c", SCRIPTS[name] + (" # {prompt_file}" if prompt_file else ""))
    job = AgentJob("0123456789abcdef0123456789abcdef", argv, b"the prompt", "question.md", b"the artifact",
                   {"OUTSIDE": str(outside)}, 30.0, values={"model": "m", "workspace": str(tmp_path)})
    registry = ProcessRegistry()
    try:
        outcome = execute_job(job, registry, scratch)
        assert outcome.status == "ok", outcome.error
        (root,) = list(scratch.iterdir())
        assert list(root.iterdir()) == [], f"left in the start's scratch: {list(root.iterdir())}"
    finally:
        registry.close()
    assert list(scratch.iterdir()) == []
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "keep me\n"
    assert os.path.isdir(outside) and not Path(outside).is_symlink()


def test_the_watchdog_sweeps_though_its_runner_died_before_reading_its_pid(tmp_path):
    """A runner killed while its watchdog starts: the watchdog's first write
    (its pid, to the runner) meets a broken pipe; it must still remove the
    folders it was told of. The runner's death is played by closing both ends
    it holds right after the watchdog was spawned (Python's start-up takes far
    longer than that)."""
    import time

    from skill_eval.evals.watchdog import Watchdog

    watchdog = Watchdog()
    process = watchdog._process
    assert process is not None
    folder = tmp_path / "skill-eval-run-dead"
    process.stdout.close()  # the runner's end of the watchdog's stdout: gone, as in kill -9
    watchdog.remove_on_exit(str(folder))
    folder.mkdir()
    (folder / "left.txt").write_text("x")
    process.stdin.close()  # end of file: the runner is dead
    process.wait(timeout=30)  # the first process, which forks the watchdog and exits
    deadline = time.monotonic() + 30
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not folder.exists(), "the watchdog died on the broken pipe and left the folder"
