"""Helpers of the report tests: a throwaway copy of the eval fixture suite
whose agents are the real subprocess agents of tests/evals/agents/."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
SUITE = TESTS / "fixtures" / "evals" / "suite"
AGENTS = TESTS / "evals" / "agents"


def agent(script: str, *args: str) -> list[str]:
    return [sys.executable, str(AGENTS / script), *args]


class Suite:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "ws"
        shutil.copytree(SUITE, self.root)
        self.skill = self.root / "verify-closeout"
        self.runs = self.skill / "evals" / "runs"

    def probe(self, name: str) -> Path:
        return self.skill / "evals" / "probes" / name

    def configure(self, agents: dict[str, dict]) -> None:
        lines = []
        for name, table in agents.items():
            lines.append(f"[agents.{name}]")
            lines += [f"{key} = {json.dumps(value)}" for key, value in table.items()]
            lines.append("")
        (self.root / "skill-eval.toml").write_text("\n".join(lines), encoding="utf-8")

    def lines(self) -> list[dict]:
        """Every line of the runs files as written (plans, starts, outcomes)."""
        return [json.loads(line) for path in sorted(self.runs.glob("*.jsonl"))
                for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def records(self) -> list[dict]:
        """Every start as readers see it (a start record with its outcome),
        paired here from the lines as written, not by the code under test."""
        starts: dict[str, dict] = {}
        for line in self.lines():
            if line.get("type") == "start":
                starts[line["start_id"]] = dict(line)
        for line in self.lines():
            if line.get("type") == "outcome":
                starts[line["start_id"]].update({k: v for k, v in line.items() if k not in ("type",)})
        return list(starts.values())


TOOL_FOLDER_NAMES = {".git", ".hg", ".svn", ".jj", ".bzr", ".venv", ".tox", ".nox", "node_modules", "__pycache__",
                     "site-packages", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".skill-eval-cache"}
"""The VCS and tool folders docs/format.md lists as left out of a skill's tree."""


def skill_tree_sha256(folder: Path) -> str:
    """The ``skill_tree_sha256`` a runner records for the skill ``folder``,
    written here again independently of the runner: sha256 over every regular
    file of the folder outside ``evals/``, VCS and tool folders (no links),
    each relative path and its bytes length-prefixed, sorted by path."""
    import hashlib

    entries = []
    for path in folder.rglob("*"):
        relative = path.relative_to(folder)
        folders = relative.parts[:-1]
        if path.is_symlink() or not path.is_file() or relative.parts[0] == "evals" \
                or any(part in TOOL_FOLDER_NAMES for part in folders):
            continue
        entries.append((relative.as_posix().encode(), path.read_bytes()))
    digest = hashlib.sha256()
    for name, data in sorted(entries):
        digest.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()
