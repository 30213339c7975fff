"""What a new user reads on ``examples/``: paths as the linter prints them
(relative to where the command ran), and no legend or caveat under a report
that has no rows."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def skill_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skill_eval", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def examples(tmp_path: Path) -> Path:
    target = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", target, ignore=shutil.ignore_patterns("runs", ".skill-eval-cache"))
    return target


def test_an_empty_report_says_so_without_the_caveat(tmp_path: Path) -> None:
    done = skill_eval("report", cwd=examples(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no runs on record (run `skill-eval run` first)")
    assert "starts on record: 0 of max-starts 200" in done.stdout
    for caveat in ("Wilson", "Fisher", "do not prove a rate"):
        assert caveat not in done.stdout


def test_runner_commands_print_paths_relative_to_where_they_ran(tmp_path: Path) -> None:
    folder = examples(tmp_path)
    outputs = [skill_eval("check", cwd=folder), skill_eval("run", "--agent", "scripted", "--reps", "1", cwd=folder),
               skill_eval("freeze", "--probe", "skipped-retry-test", cwd=folder)]
    said = "".join(done.stdout + done.stderr for done in outputs)
    assert [done.returncode for done in outputs] == [0, 1, 0], said
    assert re.search(r"^ok    skills/closeout-review/evals/probes/skipped-retry-test/transcripts/\S+\.md$", said, re.M)
    assert re.search(r"^records appended to skills/closeout-review/evals/runs/\S+\.jsonl$", said, re.M)
    assert re.search(r"^skills/closeout-review/evals/frozen\.json: froze skipped-retry-test v1$", said, re.M)
    assert str(folder) not in "".join(done.stdout for done in outputs)
