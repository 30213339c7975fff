"""The runs files found from the fixture walk's pruned folders equal those a
second walk of the workspace finds."""

from __future__ import annotations

from pathlib import Path

from skill_eval.linter.reader import FileSystemReader
from skill_eval.linter.run_records import find_runs_files, runs_files_in
from skill_eval.linter.workspace import discover

ROOT = Path(__file__).resolve().parents[2]


def _touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n", encoding="utf-8")


def test_runs_files_from_the_pruned_folders_equal_a_second_walk(tmp_path: Path) -> None:
    _touch(
        tmp_path,
        "skills/a/SKILL.md",
        "skills/a/evals/probes/p/probe.json",
        "skills/a/evals/runs/2026-01-01-x.jsonl",
        "skills/a/evals/runs/notes.txt",
        "skills/a/evals/runs/answers/ignored.jsonl",
        "skills/b/evals/runs/b.jsonl",
        "deep/x/y/evals/runs/deep.jsonl",
        "runs/evals/runs/under-a-plain-runs-folder.jsonl",
        "runs/top-level-not-a-suite.jsonl",
        "other/runs/evals/runs/nested.jsonl",
        "node_modules/pkg/evals/runs/skipped.jsonl",
        ".claude/skills/c/evals/runs/hidden-suite.jsonl",
        ".git/evals/runs/skipped.jsonl",
        ".skill-eval-cache/evals/runs/skipped.jsonl",
        "venv/pyvenv.cfg",
        "venv/evals/runs/skipped.jsonl",
        "evals/runs/root-suite.jsonl",
    )
    for root in (tmp_path, tmp_path / "skills", ROOT / "examples"):
        pruned = discover(root, FileSystemReader()).pruned
        assert pruned is not None
        assert runs_files_in(pruned) == find_runs_files(root), root
    expected = find_runs_files(tmp_path)
    assert {p.name for p in expected} == {
        "2026-01-01-x.jsonl", "b.jsonl", "deep.jsonl", "under-a-plain-runs-folder.jsonl", "nested.jsonl",
        "root-suite.jsonl", "hidden-suite.jsonl",
    }
