"""The namespace driver starts nothing outside a network namespace holding only loopback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from netns_driver import network_interfaces  # noqa: E402


def test_the_driver_refuses_to_start_a_command_outside_a_loopback_only_namespace(tmp_path: Path) -> None:
    if network_interfaces() == ["lo"]:
        pytest.skip("this process's own network namespace holds only loopback")
    marker = tmp_path / "started"
    spec = {"launch": {"argv": [sys.executable, "-c", f"open({str(marker)!r}, 'w')"], "env": {},
                       "cwd": str(tmp_path)},
            "log": str(tmp_path / "requests.jsonl"), "result": str(tmp_path / "result.json"), "timeout": 30}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    completed = subprocess.run([sys.executable, str(HERE / "netns_driver.py"), str(tmp_path / "spec.json")],
                               capture_output=True, timeout=60)
    assert completed.returncode == 3
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["status"] == "refused" and "not only lo" in result["error"]
    assert not marker.exists()
    assert not (tmp_path / "requests.jsonl").exists()


def test_the_driver_refuses_to_run_phases_outside_a_loopback_only_namespace(tmp_path: Path) -> None:
    """The phases mode (commands such as ``skill-eval run``, which start agent
    CLIs) checks the namespace before starting an endpoint or a command."""
    if network_interfaces() == ["lo"]:
        pytest.skip("this process's own network namespace holds only loopback")
    marker = tmp_path / "started"
    toml = tmp_path / "skill-eval.toml"
    toml.write_text("url = '{standin}'\n")
    command = {"name": "c", "argv": [sys.executable, "-c", f"open({str(marker)!r}, 'w')"], "env": {},
               "cwd": str(tmp_path)}
    spec = {"endpoints": {"standin": {"log": str(tmp_path / "requests.jsonl")}}, "fill_files": [str(toml)],
            "phases": [[command]], "result": str(tmp_path / "result.json")}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    completed = subprocess.run([sys.executable, str(HERE / "netns_driver.py"), str(tmp_path / "spec.json")],
                               capture_output=True, timeout=60)
    assert completed.returncode == 3
    assert json.loads((tmp_path / "result.json").read_text())["status"] == "refused"
    assert not marker.exists() and toml.read_text() == "url = '{standin}'\n"
