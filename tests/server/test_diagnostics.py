"""Diagnostics: start-up scan, encodings, parity with the CLI, edits from
unsaved buffers across files, save/close/delete."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from skill_eval.linter.engine import lint_paths

from _lsp_helpers import uri, wait_until

PROBES = Path("skills/verify/evals/probes")


def codes(client: LanguageClient, path: Path) -> list[str]:
    return sorted(d.code for d in client.diagnostics.get(uri(path), []))


async def test_scan_publishes_every_probe_with_progress(client: LanguageClient):
    root = client.root
    assert codes(client, root / PROBES / "renamed" / "probe.json") == ["SE101"]
    assert "SE201" in codes(client, root / PROBES / "drifted" / "probe.json")
    tokens = [reports for reports in client.progress_reports.values() if reports]
    assert tokens, "the scan reports work-done progress"
    kinds = [type(r).__name__ for r in tokens[0]]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
    assert "WorkDoneProgressReport" in kinds


async def test_same_diagnostics_as_the_cli(client: LanguageClient):
    root = client.root
    expected = lint_paths([root]).diagnostics
    assert expected, "the fixture workspace has findings"
    by_uri: dict[str, list] = {}
    for d in expected:
        by_uri.setdefault(uri(d.path), []).append(d)
    for file_uri, found in by_uri.items():
        published = client.diagnostics.get(file_uri)
        assert published is not None, f"nothing published for {file_uri}"
        assert [(d.code, d.message) for d in published] == [(d.code, d.message) for d in found]
        for lsp, engine in zip(published, found):
            assert (lsp.range.start.line, lsp.range.end.line) == (engine.start.line - 1, engine.end.line - 1)
    published_with_findings = {u for u, ds in client.diagnostics.items() if ds}
    assert published_with_findings == set(by_uri)


async def test_columns_follow_the_negotiated_encoding(client: LanguageClient):
    path = client.root / PROBES / "emoji" / "probe.json"
    text = path.read_text(encoding="utf-8")
    [diagnostic] = [d for d in client.diagnostics[uri(path)] if d.code == "SE101"]
    code_points = text.index('"Nope"')
    # two astral-plane emoji precede the value: 4 UTF-8 bytes or 2 UTF-16 units each
    if client.profile == "neovim":  # Neovim 0.11 offers utf-8 first
        assert diagnostic.range.start.character == code_points + 2 * 3
    else:  # VS Code: utf-16
        assert diagnostic.range.start.character == code_points + 2 * 1
    assert diagnostic.source == "skill-eval"
    assert diagnostic.code_description.href.endswith("/SE101.md")
    assert diagnostic.severity == types.DiagnosticSeverity.Error


async def test_unsaved_skill_edit_rediagnoses_dependent_probes(client: LanguageClient):
    root = client.root
    skill = root / "skills/verify/SKILL.md"
    good = root / PROBES / "good" / "probe.json"
    drifted = root / PROBES / "drifted" / "probe.json"
    assert "SE101" not in codes(client, good)
    text = skill.read_text(encoding="utf-8")
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri(skill), language_id="markdown", version=1, text=text)))
    line = text.splitlines().index("## Step 2: Check the evidence lines")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(skill), version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=line, character=3), end=types.Position(line=line, character=35)),
            text="Step 2: Weigh the proof")]))
    await wait_until(lambda: "SE101" in codes(client, good) and "SE101" in codes(client, drifted),
                     what="SE101 on every probe anchored at the renamed heading")
    assert skill.read_text(encoding="utf-8") == text, "nothing was saved"
    # undo in the buffer: the findings go away again
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(skill), version=3),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    await wait_until(lambda: "SE101" not in codes(client, good), what="SE101 cleared after undo")


async def test_question_edit_and_close(client: LanguageClient):
    root = client.root
    question = root / PROBES / "good" / "question.md"
    probe = root / PROBES / "good" / "probe.json"
    text = question.read_text(encoding="utf-8")
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri(question), language_id="markdown", version=1, text=text)))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(question), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text.replace("existing coverage applies", "it is fine"))]))
    await wait_until(lambda: "SE202" in codes(client, probe), what="the quote is gone from the unsaved artifact")
    # closing without saving: the disk's text counts again
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri(question))))
    await wait_until(lambda: "SE202" not in codes(client, probe), what="findings from the disk after close")


async def test_deleted_probe_is_cleared(client: LanguageClient):
    root = client.root
    folder = root / PROBES / "renamed"
    probe = folder / "probe.json"
    assert codes(client, probe) == ["SE101"]
    probe.unlink()
    if client.profile == "vscode":  # dynamic registration of file watching
        assert any(r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in client.registrations)
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(probe), type=types.FileChangeType.Deleted)]))
    else:  # Neovim 0.11: no dynamic file watching; the next document event notices
        assert not client.registrations
        other = root / PROBES / "good" / "question.md"
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri(other), language_id="markdown", version=1,
                                                 text=other.read_text(encoding="utf-8"))))
    await wait_until(lambda: len(client.diagnostics.get(uri(probe), [None])) == 0, what="stale diagnostics cleared")
