"""Helpers of the eval-runner tests: the fixture suite, agent commands, the CLI
as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
AGENTS = HERE / "agents"
SUITE = HERE.parent / "fixtures" / "evals" / "suite"
PYTHON = sys.executable


def agent_command(script: str, *args: str) -> list[str]:
    return [PYTHON, str(AGENTS / script), *args]


class Suite:
    """A throwaway workspace copied from the fixture suite."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.skill = root / "verify-closeout"
        self.probes = self.skill / "evals" / "probes"
        self.runs = self.skill / "evals" / "runs"

    def probe(self, name: str) -> Path:
        return self.probes / name

    def configure(self, agents: dict[str, dict], max_starts: int | None = None) -> None:
        """Write the agents into skill-eval.toml. An agent without a ``sandbox``
        key runs unsealed (``sandbox = "off"``): these tests' agents report what
        they saw in log files outside their scratch folder, which a sealed start
        cannot reach; tests/evals/test_sandbox.py runs agents sealed."""
        lines = []
        agents = {name: {"sandbox": "off", **table} for name, table in agents.items()}
        if max_starts is not None:
            lines += ["[calibration]", f"max-starts = {max_starts}", ""]
        for name, table in agents.items():
            lines.append(f"[agents.{name}]")
            for key, value in table.items():
                if isinstance(value, dict):
                    continue
                lines.append(f"{key} = {json.dumps(value)}")
            for key, value in table.items():
                if isinstance(value, dict):
                    lines.append(f"[agents.{name}.{key}]")
                    lines += [f"{k} = {json.dumps(v)}" for k, v in value.items()]
            lines.append("")
        (self.root / "skill-eval.toml").write_text("\n".join(lines), encoding="utf-8")

    def files(self) -> list[Path]:
        return sorted(self.runs.glob("*.jsonl")) if self.runs.is_dir() else []

    def all_records(self) -> list[dict]:
        """Every start of the suite (a start with its outcome as one record),
        file by file in name (time) order."""
        from skill_eval.linter.run_records import parse_runs

        return [record for path in self.files() for _line, record in parse_runs(path, path.read_bytes()).records]

    def lines(self) -> list[dict]:
        """Every line of the suite's runs files as written (plans, starts, outcomes)."""
        return [json.loads(line) for path in self.files()
                for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def records(self, probe_id: str) -> list[dict]:
        return [r for r in self.all_records() if r["probe"] == probe_id]


def cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """``skill-eval ARGS`` as a real process (bounded by ``timeout``)."""
    return subprocess.run([PYTHON, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout)
