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

from _lsp_helpers import SERVER, scan_done, start, uri, wait_until, write_workspace

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
