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
