"""End-to-end fixtures: a small workspace on disk and a pytest-lsp client
talking to ``python -m skill_eval.server`` with a real editor's capabilities."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from _lsp_helpers import SERVER, scan_done, start, wait_until, write_workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return write_workspace(tmp_path / "ws")


@pytest_lsp.fixture(config=SERVER, params=["neovim", "vscode"])
async def client(lsp_client: LanguageClient, request, workspace: Path):
    lsp_client.profile = request.param
    lsp_client.root = workspace
    await start(lsp_client, workspace, request.param)
    await wait_until(lambda: scan_done(lsp_client), what="the start-up scan")
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 10)
