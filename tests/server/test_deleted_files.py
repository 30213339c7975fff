"""Diagnostics of deleted files and folders are cleared, with and without the
client's file watching.

* VS Code-like clients (dynamic registration of workspace/didChangeWatchedFiles)
  get a watcher for deletions of any path; a deleted folder is reported as the
  folder alone, and everything known below it goes.
* Neovim 0.11 watches nothing: the server re-checks the disk at document
  events (open, save, close) and in a periodic sweep
  (``SKILL_EVAL_LS_SWEEP_SECONDS``).
* Whatever the client, a file is confirmed to exist before its findings are
  published: findings for a deleted file are replaced by an empty list.

Probe ``renamed`` has SE101; ``dup-a`` and ``dup-b`` share an id (SE006 on both).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from _lsp_helpers import make_client, probe_json, scan_done, uri, wait_until, write_workspace

PROBES = Path("skills/verify/evals/probes")
DUPLICATES = {
    "dup-a": probe_json("same-id", "Step 2: Check the evidence lines"),
    "dup-b": probe_json("same-id", "Step 2: Check the evidence lines"),
}


def config(sweep_seconds: str) -> ClientServerConfig:
    return ClientServerConfig(
        server_command=[sys.executable, "-m", "skill_eval.server"],
        client_factory=make_client,
        server_env={**os.environ, "SKILL_EVAL_LS_SWEEP_SECONDS": sweep_seconds},
    )


async def start(client: LanguageClient, root: Path, capabilities: types.ClientCapabilities) -> None:
    await client.initialize_session(types.InitializeParams(
        capabilities=capabilities, root_uri=uri(root),
        workspace_folders=[types.WorkspaceFolder(uri=uri(root), name=root.name)]))
    await wait_until(lambda: scan_done(client), what="the start-up scan")


def codes(client: LanguageClient, path: Path) -> list[str]:
    return sorted(d.code for d in client.diagnostics.get(uri(path), []))


def cleared(client: LanguageClient, path: Path) -> bool:
    """Whether the client was sent an empty list for ``path`` last."""
    return uri(path) in client.diagnostics and not client.diagnostics[uri(path)]


async def stop(client: LanguageClient) -> None:
    await asyncio.wait_for(client.shutdown_session(), 10)


def vscode_capabilities(relative_patterns: bool) -> types.ClientCapabilities:
    capabilities = client_capabilities("visual-studio-code")
    capabilities.workspace.did_change_watched_files.relative_pattern_support = relative_patterns
    return capabilities


@pytest_lsp.fixture(config=config("0"), params=[False, True], ids=["globs", "relative-patterns"])
async def watching(lsp_client: LanguageClient, request, tmp_path: Path):
    lsp_client.root = write_workspace(tmp_path / "ws", DUPLICATES)
    lsp_client.relative_patterns = request.param
    await start(lsp_client, lsp_client.root, vscode_capabilities(request.param))
    yield
    await stop(lsp_client)


async def test_watching_client_deleted_folder_event_clears_everything_below(watching: LanguageClient):
    client, root = watching, watching.root
    renamed, dup_a, dup_b = (root / PROBES / name / "probe.json" for name in ("renamed", "dup-a", "dup-b"))
    assert codes(client, renamed) == ["SE101"] and "SE006" in codes(client, dup_a)
    # the server asked for deletions of any path (folders included), as globs or relative to the folder
    watchers = [w for r in client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
                for w in r.register_options["watchers"]]
    deletions = [w for w in watchers if w.get("kind") == types.WatchKind.Delete]
    if client.relative_patterns:
        assert [w["globPattern"] for w in deletions] == [{"baseUri": uri(root), "pattern": "**/*"}]
    else:
        assert [w["globPattern"] for w in deletions] == ["**/*"]

    # VS Code reports a deleted folder as the folder alone
    for name in ("renamed", "dup-b"):
        shutil.rmtree(root / PROBES / name)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=uri(root / PROBES / name), type=types.FileChangeType.Deleted) for name in ("renamed", "dup-b")]))
    await wait_until(lambda: cleared(client, renamed) and cleared(client, dup_b), what="the deleted probes cleared")
    await wait_until(lambda: "SE006" not in codes(client, dup_a), what="SE006 gone from the remaining duplicate")


@pytest_lsp.fixture(config=config("0.3"))
async def sweeping(lsp_client: LanguageClient, tmp_path: Path):
    lsp_client.root = write_workspace(tmp_path / "ws", DUPLICATES)
    await start(lsp_client, lsp_client.root, client_capabilities("neovim"))
    yield
    await stop(lsp_client)


async def test_without_watching_the_sweep_clears_a_deleted_folder(sweeping: LanguageClient):
    """Neovim 0.11 sends nothing when a folder goes; no document event follows."""
    client, root = sweeping, sweeping.root
    renamed, dup_a, dup_b = (root / PROBES / name / "probe.json" for name in ("renamed", "dup-a", "dup-b"))
    assert not client.registrations
    assert codes(client, renamed) == ["SE101"] and "SE006" in codes(client, dup_b)
    for name in ("renamed", "dup-b"):
        shutil.rmtree(root / PROBES / name)
    await wait_until(lambda: cleared(client, renamed) and cleared(client, dup_b), timeout=30,
                     what="the sweep clearing the deleted probes")
    await wait_until(lambda: "SE006" not in codes(client, dup_a), what="SE006 gone from the remaining duplicate")


@pytest_lsp.fixture(config=config("0"))
async def not_sweeping(lsp_client: LanguageClient, tmp_path: Path):
    lsp_client.root = write_workspace(tmp_path / "ws", DUPLICATES)
    await start(lsp_client, lsp_client.root, client_capabilities("neovim"))
    yield
    await stop(lsp_client)


async def test_a_deleted_file_is_never_published_again(not_sweeping: LanguageClient):
    """No sweep, no event: a SKILL.md edit re-lints every probe using it; the
    one whose folder is gone gets an empty list, not its old findings."""
    client, root = not_sweeping, not_sweeping.root
    renamed, good = root / PROBES / "renamed" / "probe.json", root / PROBES / "good" / "probe.json"
    assert codes(client, renamed) == ["SE101"]
    skill = root / "skills/verify/SKILL.md"
    text = skill.read_text(encoding="utf-8")
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri(skill), language_id="markdown", version=1, text=text)))
    await wait_until(lambda: uri(skill) in client.diagnostics, what="SKILL.md opened")
    await asyncio.sleep(0.5)  # the open's look at the disk (a sweep) is over: it must not see the deletion
    shutil.rmtree(renamed.parent)
    published = len(client.published)
    line = text.splitlines().index("## Step 2: Check the evidence lines")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(skill), version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=line, character=3), end=types.Position(line=line, character=35)),
            text="Step 2: Weigh the proof")]))
    await wait_until(lambda: "SE101" in codes(client, good), what="the dependents re-linted")
    after = [p for p in client.published[published:] if p.uri == uri(renamed)]
    assert after and all(not p.diagnostics for p in after), after
