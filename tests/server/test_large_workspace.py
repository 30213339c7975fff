"""A workspace large enough for the start-up scan to start worker processes
(from a fork server: the server has threads), driven by a real LSP client:
the server must finish the scan, publish exactly the CLI's findings, and
keep serving edits afterwards."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from _lsp_helpers import SERVER, probe_json, scan_done, start, uri, wait_until, write_workspace
from skill_eval.linter.engine import lint_paths
from skill_eval.linter.execution import PARALLEL_MIN_WORK as PARALLEL_MIN_PROBES

COUNT = PARALLEL_MIN_PROBES + 20


@pytest_lsp.fixture(config=SERVER)
async def big(lsp_client: LanguageClient, tmp_path: Path):
    extra = {}
    for number in range(COUNT):
        heading = "Step 2: Check evidence" if number % 7 == 0 else "Step 2: Check the evidence lines"
        extra[f"p{number:03d}"] = probe_json(f"p{number:03d}", heading, seeded=1 + (number % 5 == 0))
    root = write_workspace(tmp_path / "ws", extra_probes=extra)
    lsp_client.root = root
    await start(lsp_client, root, "neovim")
    await wait_until(lambda: scan_done(lsp_client), timeout=120, what="the start-up scan")
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 10)


async def test_the_forked_scan_publishes_the_cli_findings_and_edits_still_work(big: LanguageClient):
    client = big
    root = client.root
    expected: dict[str, list[tuple]] = {}
    for diagnostic in lint_paths([root]).diagnostics:
        expected.setdefault(uri(diagnostic.path), []).append((diagnostic.code, diagnostic.start.line - 1))
    assert len(expected) > PARALLEL_MIN_PROBES // 7, "enough probes have findings to compare"
    published = {
        key: sorted((d.code, d.range.start.line) for d in found)  # columns: see test_diagnostics (encodings)
        for key, found in client.diagnostics.items()
        if found
    }
    assert published == {key: sorted(found) for key, found in expected.items()}

    probe = root / "skills/verify/evals/probes/p001/probe.json"
    assert not client.diagnostics.get(uri(probe))
    text = probe.read_text(encoding="utf-8")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri(probe), language_id="json", version=1, text=text))
    )
    edited = text.replace('"seeded_defects": 1', '"seeded_defects": 4')
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(probe), version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
        )
    )
    found = await wait_until(
        lambda: [d for d in client.diagnostics.get(uri(probe), []) if d.code == "SE201"],
        what="SE201 on the edited probe",
    )
    assert found
