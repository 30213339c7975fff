"""The runner reads workspace files only through the engine's safe read: a
probe.json, an artifact, a transcript or a frozen.json that is a symbolic link
out of the workspace, a FIFO or a huge file gives a clear error naming the
file; nothing outside the workspace is read and nothing hangs. Real links,
real FIFOs, the CLI as a real process with a timeout (a hang fails the test)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from evals_helpers import agent_command, cli

PROBE = "euphemized-coverage"
RULE = {"command": agent_command("rule_agent.py"), "model": "m1", "timeout": 30}
HANG = 60


def outside_copy(suite, tmp_path: Path, name: str, new_id: str | None = None) -> Path:
    """A copy of one of the probe's files outside the workspace (valid content:
    a reader that followed the link would use it)."""
    target = tmp_path / "outside" / name.replace("/", "-")
    target.parent.mkdir(exist_ok=True)
    data = (suite.probe(PROBE) / name).read_bytes()
    if new_id is not None:
        probe = json.loads(data)
        probe["id"] = new_id
        data = json.dumps(probe).encode()
    target.write_bytes(data)
    return target


def link(path: Path, target: Path) -> None:
    path.unlink()
    path.symlink_to(target)


def fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def huge(path: Path, size: int = 2 * 1024 * 1024) -> None:
    """A sparse file over the default 1 MiB ``max-file-size``."""
    with open(path, "wb") as handle:
        handle.truncate(size)


def run(suite, *args: str):
    return cli("run", str(suite.probe(PROBE)), "--no-progress", "--reps", "1", "--arms", "control", *args,
               cwd=suite.root, timeout=HANG)


def test_probe_json_linked_out_of_the_workspace_is_refused(suite, tmp_path):
    suite.configure({"rule": RULE})
    probe_json = suite.probe(PROBE) / "probe.json"
    link(probe_json, outside_copy(suite, tmp_path, "probe.json", new_id="read-from-outside"))
    result = run(suite)
    assert result.returncode != 0
    assert str(probe_json) in result.stderr and "outside the workspace" in result.stderr
    assert "read-from-outside" not in result.stdout + result.stderr
    assert suite.all_records() == []


def test_artifact_linked_out_of_the_workspace_is_refused(suite, tmp_path):
    suite.configure({"rule": RULE})
    question = suite.probe(PROBE) / "question.md"
    link(question, outside_copy(suite, tmp_path, "question.md"))
    result = run(suite)
    assert result.returncode != 0
    assert "question.md" in result.stderr and "outside the workspace" in result.stderr
    assert suite.all_records() == []


def test_fifos_never_hang_the_runner(suite):
    suite.configure({"rule": RULE})
    for name in ("question.md", "probe.json"):
        fresh = suite.root.parent / f"fresh-{name}"
        shutil.rmtree(fresh, ignore_errors=True)
        path = suite.probe(PROBE) / name
        saved = path.read_bytes()
        fifo(path)
        result = run(suite)
        assert result.returncode != 0, name
        assert str(path) in result.stderr and "FIFO" in result.stderr, result.stderr
        path.unlink()
        path.write_bytes(saved)
    assert suite.all_records() == []


def test_huge_files_are_refused_naming_them(suite):
    suite.configure({"rule": RULE})
    question = suite.probe(PROBE) / "question.md"
    huge(question)
    result = run(suite)
    assert result.returncode != 0
    assert str(question) in result.stderr and "size limit" in result.stderr
    assert suite.all_records() == []


def test_transcripts_are_read_safely(suite, tmp_path):
    """A transcript linked out of the workspace, a FIFO and a huge one: each an
    error naming the file (``skill-eval check`` fails), the others still graded."""
    folder = suite.probe(PROBE) / "transcripts"
    outside = outside_copy(suite, tmp_path, "transcripts/caught-json.md")
    (folder / "linked.md").symlink_to(outside)
    os.mkfifo(folder / "pipe.md")
    huge(folder / "huge.md")
    result = cli("check", str(suite.probe(PROBE)), cwd=suite.root, timeout=HANG)
    assert result.returncode != 0
    errors = {line.split(":", 1)[0].removeprefix("ERROR "): line for line in result.stdout.splitlines()
              if line.startswith("ERROR ")}
    shown = folder.relative_to(suite.root)  # check prints paths relative to where it ran, as lint does
    assert set(errors) == {str(shown / name) for name in ("linked.md", "pipe.md", "huge.md")}
    assert "outside the workspace" in errors[str(shown / "linked.md")]
    assert "FIFO" in errors[str(shown / "pipe.md")]
    assert "size limit" in errors[str(shown / "huge.md")]
    assert f"ok    {shown / 'caught-json.md'}" in result.stdout


def test_a_transcripts_folder_linked_out_of_the_workspace_is_not_read(suite, tmp_path):
    folder = suite.probe(PROBE) / "transcripts"
    outside = tmp_path / "outside-transcripts"
    shutil.move(folder, outside)
    folder.symlink_to(outside)
    result = cli("check", str(suite.probe(PROBE)), cwd=suite.root, timeout=HANG)
    assert result.returncode != 0
    assert "ok   " not in result.stdout
    assert all("outside the workspace" in line for line in result.stdout.splitlines() if line.startswith("ERROR "))


def test_frozen_json_is_read_safely(suite, tmp_path):
    frozen = suite.skill / "evals" / "frozen.json"
    target = tmp_path / "frozen-outside.json"
    target.write_text(json.dumps({"schema": 1, "cases": []}))
    frozen.symlink_to(target)
    result = cli("freeze", str(suite.probe(PROBE)), cwd=suite.root, timeout=HANG)
    assert result.returncode != 0
    assert str(frozen) in result.stderr and "outside the workspace" in result.stderr
    assert json.loads(target.read_text()) == {"schema": 1, "cases": []}
    frozen.unlink()
    os.mkfifo(frozen)
    result = cli("freeze", str(suite.probe(PROBE)), cwd=suite.root, timeout=HANG)
    assert result.returncode != 0
    assert str(frozen) in result.stderr and "FIFO" in result.stderr
    frozen.unlink()
    huge(frozen, 65 * 1024 * 1024)
    result = cli("freeze", str(suite.probe(PROBE)), cwd=suite.root, timeout=HANG)
    assert result.returncode != 0
    assert str(frozen) in result.stderr and "size limit" in result.stderr
    frozen.unlink()
    assert cli("freeze", str(suite.probe(PROBE)), cwd=suite.root, timeout=HANG).returncode == 0
    assert [case["id"] for case in json.loads(frozen.read_text())["cases"]] == [PROBE]


def test_a_dangling_frozen_json_link_out_of_the_workspace_is_refused(suite, tmp_path):
    """frozen.json links to a file outside that does not exist yet: freeze
    refuses it and creates nothing outside."""
    target = tmp_path / "outside" / "frozen.json"
    target.parent.mkdir()
    (suite.skill / "evals" / "frozen.json").symlink_to(target)
    result = cli("freeze", str(suite.probe(PROBE)), cwd=suite.root, timeout=HANG)
    assert result.returncode != 0 and "outside the workspace" in result.stderr
    assert not target.exists()


def test_the_report_never_waits_on_an_answer_file_that_is_a_fifo(suite, tmp_path):
    """An answer file replaced by a FIFO (or a huge file): the report is built,
    that start says why its answer is not shown, nothing hangs."""
    suite.configure({"rule": RULE})
    assert run(suite).returncode == 0
    answers = sorted(suite.runs.glob("answers/**/*.txt"))
    assert len(answers) == 1
    fifo(answers[0])
    report = tmp_path / "report.html"
    result = cli("report", "--html", str(report), cwd=suite.root, timeout=HANG)
    assert result.returncode in (0, 1), result.stderr
    assert report.is_file()
    result = cli("report", "--format", "json", cwd=suite.root, timeout=HANG)
    assert "FIFO" in result.stdout or "cannot be read" in result.stdout


def test_a_preset_reads_the_skill_name_from_a_fifo_skill_md_without_waiting(tmp_path: Path) -> None:
    """``presets.skill_name`` (the folder a harness installs the skill as) reads
    SKILL.md as the engine does: a FIFO there is refused at once, never waited on."""
    import subprocess
    import sys

    skill = tmp_path / "fifo-skill"
    skill.mkdir()
    os.mkfifo(skill / "SKILL.md")
    script = ("import sys\nfrom pathlib import Path\nfrom skill_eval.evals.presets import PresetError, skill_name\n"
              "try:\n    skill_name(Path(sys.argv[1]))\nexcept PresetError as error:\n    print(error)\n")
    completed = subprocess.run([sys.executable, "-c", script, str(skill)], capture_output=True, text=True, timeout=HANG)
    assert completed.returncode == 0, completed.stderr
    assert "SKILL.md" in completed.stdout and "cannot read" in completed.stdout
