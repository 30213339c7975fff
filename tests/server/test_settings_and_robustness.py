"""Settings layering, invalid config reported once, errors contained, CLI args."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from _lsp_helpers import SERVER, scan_done, start, uri, wait_until, write_workspace

PROBES = Path("skills/verify/evals/probes")


@pytest_lsp.fixture(config=SERVER)
async def configured(lsp_client: LanguageClient, tmp_path: Path):
    root = write_workspace(tmp_path / "ws")
    (root / "skill-eval.toml").write_text('ignore = ["SE201"]\nmax-artifact-lines = "many"\n', encoding="utf-8")
    lsp_client.root = root
    lsp_client.set_configuration({"ignore": ["SE101"]}, section="skill-eval")
    await start(lsp_client, root, "neovim", options={"skill-eval": {"select": ["SE0", "SE1", "SE2"]}})
    await wait_until(lambda: scan_done(lsp_client), what="the start-up scan")
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), 10)


async def test_invalid_config_reported_once_and_settings_layered(configured: LanguageClient):
    client = configured
    root = client.root
    errors = [m for m in client.messages if m.type == types.MessageType.Error]
    assert len(errors) == 1 and "skill-eval.toml" in errors[0].message and "max-artifact-lines" in errors[0].message
    # the file config is unusable: editor settings still apply (ignore SE101 from workspace/configuration)
    renamed = root / PROBES / "renamed" / "probe.json"
    drifted = root / PROBES / "drifted" / "probe.json"
    assert not client.diagnostics.get(uri(renamed))
    assert any(d.code == "SE201" for d in client.diagnostics[uri(drifted)])
    # fix the file: it re-lints on save (Neovim has no file watching) and SE201 is ignored now
    toml = root / "skill-eval.toml"
    toml.write_text('[per-file-ignores]\n"skills/verify/evals/probes/drifted/*" = ["SE201"]\n', encoding="utf-8")
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(toml), language_id="toml", version=1, text=toml.read_text(encoding="utf-8"))))
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri(toml))))
    await wait_until(lambda: not any(d.code == "SE201" for d in client.diagnostics.get(uri(drifted), [])),
                     what="SE201 ignored after the config file changed")
    # editor settings win over the file, key by key
    client.set_configuration({"per-file-ignores": {}}, section="skill-eval")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await wait_until(lambda: any(d.code == "SE101" for d in client.diagnostics.get(uri(renamed), [])),
                     what="SE101 back: the editor no longer ignores it")
    await wait_until(lambda: any(d.code == "SE201" for d in client.diagnostics.get(uri(drifted), [])),
                     what="SE201 back: the editor's per-file-ignores replace the file's")
    # a bad editor setting is reported once, naming the key
    client.set_configuration({"ignroe": ["SE101"]}, section="skill-eval")
    for _ in range(2):
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await wait_until(lambda: any("ignroe" in m.message for m in client.messages), what="the settings error")
    await asyncio.sleep(0.3)
    assert sum("ignroe" in m.message for m in client.messages) == 1


async def test_handler_failure_is_logged_not_fatal(configured: LanguageClient):
    client = configured
    # a document outside any file: scheme, and a position far outside the text
    result = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri="untitled:Untitled-1"), position=types.Position(line=99, character=0)))
    assert result is None
    probe = client.root / PROBES / "good" / "probe.json"
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(probe), language_id="json", version=1, text="{\n  [[[ \"\\u12")))
    result = await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri(probe)), position=types.Position(line=40, character=3)))
    assert result is None or isinstance(result, types.CompletionList)
    await wait_until(lambda: any(d.code == "SE001" for d in client.diagnostics.get(uri(probe), [])), what="SE001")
    # still serving
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri(client.root / "skills/verify/SKILL.md"))))
    assert lenses
    assert not [m for m in client.messages if "internal" in m.message.lower()]


def test_command_line():
    run = [sys.executable, "-m", "skill_eval.server"]
    version = subprocess.run(run + ["--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("skill-eval-ls ")
    for bad in (["--tcp", "nowhere"], ["--bogus"]):
        result = subprocess.run(run + bad, capture_output=True, text=True, timeout=60)
        assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr


def test_cli_does_not_import_the_server():
    code = "import sys, skill_eval.linter.cli, skill_eval.cli; print([m for m in sys.modules if m.startswith(('pygls', 'lsprotocol', 'skill_eval.server'))])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]"


async def test_tcp_mode(tmp_path: Path):
    """``--tcp PORT`` listens on loopback, says it has no authentication, serves
    one client (a second connection is closed) and stops when that client goes."""
    root = write_workspace(tmp_path / "ws")
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skill_eval.server", "--tcp", "0", stderr=asyncio.subprocess.PIPE)
    try:
        announcement = (await asyncio.wait_for(server.stderr.readline(), 60)).decode()
        assert "listening on 127.0.0.1:" in announcement and "no authentication" in announcement, announcement
        assert "loopback only" in announcement
        port = int(announcement.split("listening on 127.0.0.1:")[1].split()[0])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"' + uri(root).encode() + b'","capabilities":{}}}'
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 20)
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        payload = await asyncio.wait_for(reader.readexactly(length), 20)
        assert b'"serverInfo"' in payload and b"skill-eval-ls" in payload
        # a second client is not served: refused, or closed at once
        try:
            other_reader, other_writer = await asyncio.open_connection("127.0.0.1", port)
            assert await asyncio.wait_for(other_reader.read(), 20) == b""
            other_writer.close()
        except ConnectionError:
            pass
        writer.close()
        assert await asyncio.wait_for(server.wait(), 60) == 0
    finally:
        if server.returncode is None:
            server.kill()
        await asyncio.wait_for(server.wait(), 10)


def test_tcp_help_says_loopback_and_no_authentication():
    result = subprocess.run([sys.executable, "-m", "skill_eval.server", "--help"], capture_output=True, text=True, timeout=60)
    text = " ".join(result.stdout.split())
    assert "127.0.0.1" in text and "NO AUTHENTICATION" in text


def test_tcp_port_parsing():
    from skill_eval.server.__main__ import _host_port

    assert _host_port("2087") == ("127.0.0.1", 2087)
    assert _host_port("0.0.0.0:2087") == ("0.0.0.0", 2087)
    assert _host_port("[::1]:2087") == ("::1", 2087)
