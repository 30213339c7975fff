"""Odd names and odd requests never stop the language server.

* A folder named with a byte that is not UTF-8 (``0xFF``) is linted like any
  other: its findings are published under a ``file:`` URI that carries the
  byte percent-encoded, and every other probe still gets its diagnostics.
* ``didChange`` of a document never opened is taken as its text, with no
  internal error; a request after ``shutdown`` gets an error answer, not
  silence.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from _lsp_helpers import QUESTION, SERVER, probe_json, scan_done, start, uri, wait_until, write_workspace

PROBES = Path("skills/verify/evals/probes")

ODD = os.fsdecode(b"odd-\xff-folder")
"""A folder name with the byte 0xFF: no UTF-8 text names it."""


def _uri(path: Path) -> str:
    """The URI of ``path`` as RFC 8089 spells it: every byte that is not
    plain ASCII percent-encoded (``Path.as_uri`` encodes the file system's
    bytes)."""
    return path.as_uri()


@pytest_lsp.fixture(config=SERVER)
async def odd_client(lsp_client: LanguageClient, tmp_path: Path):
    root = write_workspace(tmp_path / "ws", {ODD: probe_json("odd", "Step 2: Check evidence")})
    lsp_client.root = root
    await start(lsp_client, root, "vscode")
    await wait_until(lambda: scan_done(lsp_client), what="the start-up scan")
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 10)


async def test_a_folder_named_with_byte_ff_does_not_stop_the_scan(odd_client: LanguageClient):
    root = odd_client.root
    probes = root / PROBES
    assert os.path.isdir(probes / ODD)
    # Every other probe gets its diagnostics, as without the odd folder.
    await wait_until(lambda: uri(probes / "renamed" / "probe.json") in odd_client.diagnostics, what="renamed's findings")
    await wait_until(lambda: uri(probes / "drifted" / "probe.json") in odd_client.diagnostics, what="drifted's findings")
    assert "SE101" in {d.code for d in odd_client.diagnostics[uri(probes / "renamed" / "probe.json")]}
    assert "SE201" in {d.code for d in odd_client.diagnostics[uri(probes / "drifted" / "probe.json")]}
    # The odd probe itself is linted (its step heading is wrong: SE101), under
    # the URI that names its bytes.
    odd_uri = _uri(probes / ODD / "probe.json")
    assert "%FF" in odd_uri
    await wait_until(lambda: odd_uri in odd_client.diagnostics, what="the odd probe's findings")
    assert "SE101" in {d.code for d in odd_client.diagnostics[odd_uri]}
    # The editor can open it by that URI and edit it; the findings follow.
    odd_client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=odd_uri, language_id="json", version=1, text=probe_json("odd", "Step 2: Check the evidence lines"))))
    await wait_until(lambda: "SE101" not in {d.code for d in odd_client.diagnostics.get(odd_uri, [])},
                     what="the odd probe re-linted from its buffer")


@pytest_lsp.fixture(config=SERVER)
async def plain_client(lsp_client: LanguageClient, tmp_path: Path):
    root = write_workspace(tmp_path / "ws")
    lsp_client.root = root
    await start(lsp_client, root, "neovim")
    await wait_until(lambda: scan_done(lsp_client), what="the start-up scan")
    lsp_client.shut = False
    yield
    if not lsp_client.shut:
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)


async def test_did_change_of_an_unopened_document_is_its_text_not_an_error(plain_client: LanguageClient):
    probe = plain_client.root / PROBES / "renamed" / "probe.json"
    await wait_until(lambda: uri(probe) in plain_client.diagnostics, what="renamed's findings")
    plain_client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(probe), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(
            text=probe_json("renamed", "Step 2: Check the evidence lines"))]))
    await wait_until(lambda: "SE101" not in {d.code for d in plain_client.diagnostics.get(uri(probe), [])},
                     what="the change linted")
    logged = "\n".join(message.message for message in plain_client.log_messages)
    assert "KeyError" not in logged and "Traceback" not in logged, logged


async def test_a_request_after_shutdown_gets_an_error_answer(plain_client: LanguageClient):
    plain_client.shut = True
    await asyncio.wait_for(plain_client.shutdown_async(None), 10)
    probe = plain_client.root / PROBES / "renamed" / "probe.json"
    with pytest.raises(Exception) as raised:
        await asyncio.wait_for(plain_client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri(probe)), position=types.Position(line=0, character=0))),
            10)
    assert not isinstance(raised.value, asyncio.TimeoutError), "no answer after shutdown"
    assert "shut" in str(raised.value).lower() or "InvalidRequest" in type(raised.value).__name__, raised.value
    plain_client.exit(None)
