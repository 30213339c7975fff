"""The language server never opens a file outside its workspace, even under a
race, and re-verifies on every read rather than once per life.

A thread swaps the workspace's files and folders for links to secrets outside
it (tests/_races.py) from before the start-up scan on, while a pytest-lsp
client keeps telling the server that files changed (so that it reads them
again from disk). The kernel's record (``inotify``, tests/_opens.py, which
sees the server's worker processes too) shows no open of a secret, no
published diagnostic shows one, and once the swapping stops every probe
gets its diagnostics again: the server is still sound.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

import _opens
from _lsp_helpers import SERVER, scan_done, start, uri, wait_until, write_workspace
from _races import SECRET, Swapper, outside_secrets

pytestmark = pytest.mark.skipif(not _opens.available(), reason="needs inotify (Linux)")

PROBES = Path("skills/verify/evals/probes")


@pytest_lsp.fixture(config=SERVER)
async def raced(lsp_client: LanguageClient, tmp_path: Path):
    root = write_workspace(tmp_path / "ws")
    skill = root / "skills" / "verify"
    (skill / "evals" / "runs").mkdir()
    (skill / "evals" / "runs" / "run.jsonl").write_text("", encoding="utf-8")
    (skill / "evals" / "frozen.json").write_text("{}", encoding="utf-8")
    outside, folders = outside_secrets(tmp_path)
    lsp_client.root, lsp_client.outside, lsp_client.folders = root, outside, folders
    lsp_client.swapper = Swapper(root, outside, [root / PROBES / name for name in ("good", "renamed")], skill)
    yield
    lsp_client.swapper.stop.set()
    await asyncio.wait_for(lsp_client.shutdown_session(), 20)


def _files(root: Path) -> list[Path]:
    skill = root / "skills" / "verify"
    files = [skill / "SKILL.md", skill / "output-spec.md", skill / "evals" / "runs" / "run.jsonl"]
    for name in ("good", "renamed", "drifted", "emoji"):
        files += [root / PROBES / name / "probe.json", root / PROBES / name / "question.md"]
    return files


async def test_the_server_never_opens_a_secret_while_files_and_folders_are_swapped(raced: LanguageClient):
    client = raced
    root = client.root
    with _opens.OpenWatch(client.folders) as watch:
        client.swapper.start()
        await start(client, root, "vscode")
        await wait_until(lambda: scan_done(client), timeout=60, what="the start-up scan")
        for _round in range(25):
            client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
                types.FileEvent(uri=uri(path), type=types.FileChangeType.Changed) for path in _files(root)]))
            await asyncio.sleep(0.1)
        client.swapper.stop.set()
        client.swapper.join(10)
        assert client.swapper.error is None, client.swapper.error
        assert client.swapper.swaps > 50, client.swapper.swaps
        # Sound again: with the files back, a change of each is linted as on a quiet disk.
        client.published.clear()
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=uri(path), type=types.FileChangeType.Changed) for path in _files(root)]))
        renamed = uri(root / PROBES / "renamed" / "probe.json")
        await wait_until(lambda: any(p.uri == renamed for p in client.published), timeout=30, what="renamed re-published")
        await wait_until(lambda: "SE101" in {d.code for d in client.diagnostics.get(renamed, [])}, timeout=30,
                         what="renamed's SE101 back")
        assert watch.events() == [], sorted(set((p.rsplit("/outside/", 1)[-1], w) for p, w in watch.events()))
        read_back = client.outside / "question.md"
        read_back.read_bytes()
        assert any(path == str(read_back) for path, _what in watch.events()), "the watch saw nothing"
    shown = [d.message for found in client.diagnostics.values() for d in found]
    shown += [p.message for p in client.log_messages]
    assert not any(SECRET in text for text in shown)
    assert not any("Traceback" in message.message for message in client.log_messages), \
        [m.message for m in client.log_messages if "Traceback" in m.message][:1]
