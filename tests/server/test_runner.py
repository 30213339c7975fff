"""The eval runner in the editor: code lens, status hover and skill-eval.runProbe
with progress, records landing, and cancellation. The agent is a small Python
script (argv, no shell) that answers like a model would."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from _lsp_helpers import SERVER, SKILL, scan_done, start, uri, wait_until, write_workspace

pytest.importorskip("skill_eval.evals.api")

PROBE = Path("skills/verify/evals/probes/good/probe.json")

AGENT = """\
import sys, time
time.sleep(float(sys.argv[1]))
print("verdict: NOT_PROVEN")
print("unproven: 3")
"""


def agent_config(root: Path, delay: float) -> None:
    script = root / "agent.py"
    script.write_text(AGENT, encoding="utf-8")
    command = json.dumps([sys.executable, str(script), str(delay)])
    (root / "skill-eval.toml").write_text(f"[agents.fake]\ncommand = {command}\ntimeout = 60\n", encoding="utf-8")


@pytest_lsp.fixture(config=SERVER)
async def runner_client(lsp_client: LanguageClient, tmp_path: Path):
    root = write_workspace(tmp_path / "ws")
    agent_config(root, 0.05)
    lsp_client.root = root
    await start(lsp_client, root, "vscode")
    await wait_until(lambda: scan_done(lsp_client), what="the start-up scan")
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 20)


async def test_run_probe_with_progress_and_lens(runner_client: LanguageClient):
    client = runner_client
    probe = client.root / PROBE
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri(probe))))
    run = next(lens for lens in lenses if lens.command.command == "skill-eval.runProbe")
    assert run.command.title == "Run: control + treatment × 2"
    assert not list((client.root / "skills/verify/evals").glob("runs/*")), "nothing runs before the command"
    result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="skill-eval.runProbe", arguments=[uri(probe)])), 120)
    assert result is not None, [m.message for m in client.messages]
    assert result["new_records"] == 4 and result["starts"] == 4
    reports = [r for rs in client.progress_reports.values() for r in rs if isinstance(r, types.WorkDoneProgressReport)]
    assert sum("rep" in (r.message or "") for r in reports) == 4
    assert client.lens_refreshes >= 4
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri(probe))))
    assert any("4 starts" in lens.command.title for lens in lenses)
    text = probe.read_text(encoding="utf-8")
    offset = text.index('"good"') + 2
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri(probe)),
        position=types.Position(line=text.count("\n", 0, offset), character=offset - text.rfind("\n", 0, offset) - 1)))
    assert "Calibration" in hover.contents.value and "4 starts" in hover.contents.value


# -- code actions: run and calibrate (issue 19) ---------------------------------------------

CALIBRATION_AGENT = """\
import os, sys, time
prompt = sys.stdin.read()
arm = "treatment" if "Evidence that argues from prior behavior" in prompt else "control"
with open(sys.argv[1], "a") as log:
    log.write(f"{os.getpid()} {os.environ['SKILL_EVAL_START_ID']} {arm}\\n")
    log.flush()
    os.fsync(log.fileno())
time.sleep(float(sys.argv[2]))
print("verdict: NOT_PROVEN" if arm == "treatment" else "verdict: PASS")
"""
"""Catches the defect only when the skill was prepended (treatment): a window
probe. Logs each start itself: the ground truth of the tests below."""


def calibration_config(root: Path, log: Path, delay: float) -> None:
    script = root / "calibration_agent.py"
    script.write_text(CALIBRATION_AGENT, encoding="utf-8")
    command = json.dumps([sys.executable, str(script), str(log), str(delay)])
    (root / "skill-eval.toml").write_text(f"[calibration]\nreps = 2\n\n[agents.fake]\ncommand = {command}\ntimeout = 60\n"
                                          'sandbox = "off"\n',  # the agent logs outside its scratch folder
                                          encoding="utf-8")


def logged(log: Path) -> list[list[str]]:
    return [line.split() for line in log.read_text().splitlines()] if log.exists() else []


async def code_actions(client: LanguageClient, path: Path, line: int = 0, only=None) -> list[types.CodeAction]:
    position = types.Position(line=line, character=0)
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path)), range=types.Range(start=position, end=position),
        context=types.CodeActionContext(diagnostics=[], only=only))) or []


@pytest_lsp.fixture(config=SERVER, params=["neovim", "vscode"])
async def calibration_client(lsp_client: LanguageClient, tmp_path: Path, request):
    root = write_workspace(tmp_path / "ws")
    lsp_client.log_file = tmp_path / "agent.log"
    calibration_config(root, lsp_client.log_file, 0.05 if request.node.name.startswith("test_calibrate_") else 30)
    lsp_client.root = root
    lsp_client.profile = request.param
    await start(lsp_client, root, request.param)
    await wait_until(lambda: scan_done(lsp_client), what="the start-up scan")
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 20)


async def test_calibrate_probe_from_its_code_action(calibration_client: LanguageClient):
    client = calibration_client
    probe = client.root / PROBE
    actions = await code_actions(client, probe, line=3)
    by_title = {action.title: action for action in actions}
    assert {"Run probe", "Calibrate probe"} <= set(by_title), [a.title for a in actions]
    # without `only` (vim.lsp.buf.code_action(), VS Code's lightbulb) the actions carry no kind ...
    assert by_title["Run probe"].kind is None and by_title["Run probe"].command.command == "skill-eval.runProbe"
    # ... VS Code's Source Action menu asks for `source` and gets our source kinds
    source = {a.title: a.kind for a in await code_actions(client, probe, only=["source"])}
    assert source["Run probe"] == "source.skill-eval.run" and source["Calibrate probe"] == "source.skill-eval.calibrate"
    assert not [a for a in await code_actions(client, probe, only=["quickfix"]) if a.command]
    assert not list((client.root / "skills/verify/evals").glob("runs/*")), "an action request runs nothing"
    command = by_title["Calibrate probe"].command
    result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command.command, arguments=command.arguments)), 120)
    assert result is not None, [m.message for m in client.messages]
    (good,) = result["probes"]
    # the agent's own log: the control sample missed (2 starts), so the treatment ran (2 more)
    assert sorted(arm for _pid, _id, arm in logged(client.log_file)) == ["control", "control", "treatment", "treatment"]
    assert good["zone"] == "window" and good["starts"] == 4 and good["control"] == "0/2" and good["treatment"] == "2/2"
    assert result["new_records"] == 4 and result["worst_case"] == 4 and not result["interrupted"]
    reports = [r for rs in client.progress_reports.values() for r in rs if isinstance(r, types.WorkDoneProgressReport)]
    assert sum("good: " in (r.message or "") and " rep " in (r.message or "") for r in reports) == 4
    assert any((r.message or "").startswith("stage 2: 2 start(s)") for r in reports)
    if client.profile == "vscode":  # Neovim 0.11 announces no code-lens refresh
        assert client.lens_refreshes >= 4
    records = [json.loads(line) for path in (client.root / "skills/verify/evals/runs").glob("*.jsonl")
               for line in path.read_text().splitlines()]
    assert all(r["calibration_rule"]["reps"] == 2 for r in records if r["type"] in ("start", "decision"))


async def test_calibrate_the_probes_of_a_skill_heading(calibration_client: LanguageClient):
    client = calibration_client
    skill = client.root / "skills/verify/SKILL.md"
    heading_line = SKILL.splitlines().index("## Step 2: Check the evidence lines")
    # "good" and "drifted" anchor on Step 2; the body of the step is no heading
    (action,) = [a for a in await code_actions(client, skill, line=heading_line) if a.command]
    assert action.title == "Calibrate the 2 probes of this step"
    assert not [a for a in await code_actions(client, skill, line=heading_line + 2) if a.command]
    assert [a.kind for a in await code_actions(client, skill, line=heading_line, only=["source"])
            if a.command] == ["source.skill-eval.calibrate"]
    result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=action.command.command, arguments=action.command.arguments)), 120)
    zones = {probe["probe"]: probe["zone"] for probe in result["probes"]}
    assert zones == {"good": "window", "drifted": "withheld"}  # drifted has a lint error (SE201): never run
    assert len(logged(client.log_file)) == 4


async def test_cancel_a_calibration_from_its_progress(calibration_client: LanguageClient):
    client = calibration_client
    probe = client.root / PROBE
    (action,) = [a for a in await code_actions(client, probe) if a.title == "Calibrate probe"]
    task = asyncio.ensure_future(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=action.command.command, arguments=action.command.arguments)))
    await wait_until(lambda: len(logged(client.log_file)) == 2, timeout=60, what="both control agents started")
    token = next(token for token, reports in client.progress_reports.items()
                 if isinstance(reports[0], types.WorkDoneProgressBegin) and "calibrating" in reports[0].title)
    assert client.progress_reports[token][0].cancellable
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(task, 60)
    assert result["interrupted"] and result["new_records"] == 2
    # the two running agents were killed and recorded as interrupted; the treatment never started
    assert [arm for _pid, _id, arm in logged(client.log_file)] == ["control", "control"]
    records = [json.loads(line) for path in (client.root / "skills/verify/evals/runs").glob("*.jsonl")
               for line in path.read_text().splitlines()]
    assert sorted(r["status"] for r in records if r["type"] == "outcome") == ["interrupted", "interrupted"]
    assert not [r for r in records if r["type"] == "decision"]
    for pid, _id, _arm in logged(client.log_file):
        await wait_until(lambda: not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()
                         .rsplit(")", 1)[1].split()[0], timeout=10, what=f"agent {pid} to end")


def test_a_settings_layer_changes_only_the_calibration_keys_it_names(tmp_path: Path):
    """Editor settings layered on the config file (server/settings.py): naming
    `max-starts` must not reset the file's predeclared stop, and naming `reps`
    keeps the file's other rule keys."""
    from skill_eval.linter.config import CalibrationRule
    from skill_eval.server.settings import resolve

    (tmp_path / "skill-eval.toml").write_text(
        '[calibration]\nmax-starts = 40\nreps = 3\ncaught-in-every-rep = "graded-reps"\n', encoding="utf-8")
    config, errors = resolve(tmp_path, [("settings", {"calibration": {"max-starts": 10}})])
    assert not errors and config.calibration_max_starts == 10
    assert config.calibration_rule == CalibrationRule(3, "graded-reps", None)
    config, errors = resolve(tmp_path, [("settings", {"calibration": {"reps": 4}})])
    assert not errors and config.calibration_max_starts == 40
    assert config.calibration_rule == CalibrationRule(4, "graded-reps", None)
