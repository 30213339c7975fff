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
        """Write the agents into skill-eval.toml, unsealed unless a table says
        ``sandbox`` (these agents log outside their scratch folder)."""
        lines = []
        for name, table in agents.items():
            table = {"sandbox": "off", **table}
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
