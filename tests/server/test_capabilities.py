"""What the server announces in its ``initialize`` result, as a real client
reads it: the handlers registered (server.py's ``lsp_feature`` /
``lsp_command`` methods) and their options, written out here as the editors
(editors/) rely on them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from _lsp_helpers import PROFILES, SERVER, uri, write_workspace


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield


async def test_the_initialize_result_announces_every_handler_and_its_options(client: LanguageClient, tmp_path: Path):
    root = write_workspace(tmp_path / "ws")
    result = await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(PROFILES["vscode"]), root_uri=uri(root),
        workspace_folders=[types.WorkspaceFolder(uri=uri(root), name=root.name)]))
    announced = result.capabilities
    sync = announced.text_document_sync
    assert sync.change == types.TextDocumentSyncKind.Incremental and sync.open_close
    assert getattr(sync.save, "include_text", None) is False
    assert announced.hover_provider and announced.definition_provider and announced.references_provider
    assert sorted(announced.completion_provider.trigger_characters) == sorted(['"', ":", " ", ">"])
    assert announced.code_lens_provider.resolve_provider is False
    assert announced.rename_provider.prepare_provider is True
    kinds = set(announced.code_action_provider.code_action_kinds)
    assert {types.CodeActionKind.QuickFix, "source.fixAll.skill-eval"} <= kinds
    assert {"skill-eval.showProbes", "skill-eval.runProbe", "skill-eval.calibrate"} <= set(
        announced.execute_command_provider.commands)
    await asyncio.wait_for(client.shutdown_session(), 10)
