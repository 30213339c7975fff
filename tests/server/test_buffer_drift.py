"""A real LSP client edits a question.md holding characters that are line
breaks to Python but not to the LSP (U+2028, U+2029, U+0085, form feed, a
lone CR which is one); the diagnostics land where the client's buffer has the
text, move with the edits, and none survive a save that removed their cause.

The client's buffer is modelled by ``_client_buffer.ClientBuffer`` (from the
LSP specification); edits are computed on the model and sent as incremental
changes, as an editor does.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from skill_eval.linter.engine import lint_paths

from _client_buffer import ClientBuffer
from _lsp_helpers import QUESTION, uri, wait_until

PROBES = Path("skills/verify/evals/probes")
PHRASE = "Look carefully"
HOSTILE_HEAD = (
    "# Closeout\u2028for the export job\n"
    "Intro\x0cpage two\x85next\u2029paragraph\n"
    "Line with a lone CR\rthen this\n"
    "\U0001F680 launch notes\u2028more\n"
)


def se301(client: LanguageClient, path: Path) -> list[types.Diagnostic]:
    return [d for d in client.diagnostics.get(uri(path), []) if d.code == "SE301"]


def change(client: LanguageClient, path: Path, model: ClientBuffer, version: int,
           start: tuple[int, int], end: tuple[int, int], text: str) -> None:
    model.apply(start, end, text)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(path), version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=start[0], character=start[1]),
                              end=types.Position(line=end[0], character=end[1])),
            text=text)]))


def expected_range(model: ClientBuffer, line: int) -> types.Range:
    """Where the client shows PHRASE on ``line``."""
    content = model.line_text(line)
    first = model.units_of(content[: content.index(PHRASE)])
    return types.Range(start=types.Position(line=line, character=first),
                       end=types.Position(line=line, character=first + model.units_of(PHRASE)))


async def test_diagnostics_follow_edits_over_unicode_line_separators(client: LanguageClient):
    root = client.root
    question = root / PROBES / "good" / "question.md"
    question.write_text(HOSTILE_HEAD + QUESTION, encoding="utf-8", newline="")
    text = question.read_bytes().decode("utf-8")
    model = ClientBuffer(text, client.position_encoding)
    assert len(model.lines()) == len(text.split("\n")) + 1  # the lone CR breaks a line, the others do not

    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(question), language_id="markdown", version=1, text=text)))
    await wait_until(lambda: uri(question) in client.diagnostics, what="question.md published")
    assert not se301(client, question)

    # Type the phrase at the start of the line after the one with U+2028, U+2029, U+0085 and a form feed.
    change(client, question, model, 2, (2, 0), (2, 0), f"{PHRASE} at this. ")
    await wait_until(lambda: se301(client, question), what="SE301 after typing the phrase")
    assert [d.range for d in se301(client, question)] == [expected_range(model, 2)]

    # Move it: delete it there (a range the client computes), type it after the emoji line.
    change(client, question, model, 3, (2, 0), (2, len(f"{PHRASE} at this. ")), "")
    line = 5
    change(client, question, model, 4, (line, 0), (line, 0), f"{PHRASE}: ")
    await wait_until(lambda: [d.range for d in se301(client, question)] == [expected_range(model, line)],
                     what=f"SE301 moved to line {line}")

    # An edit inside the emoji line, past a character that takes several units.
    emoji_line = 4
    after_emoji = model.units_of("\U0001F680")
    change(client, question, model, 5, (emoji_line, after_emoji), (emoji_line, after_emoji + 1), "  ")
    # Remove the phrase again, save: nothing stale remains, and the server agrees with the CLI.
    change(client, question, model, 6, (line, 0), (line, len(f"{PHRASE}: ")), "")
    question.write_text(model.text, encoding="utf-8", newline="")
    assert question.read_bytes().decode("utf-8") == HOSTILE_HEAD.replace("\U0001F680 ", "\U0001F680  ", 1) + QUESTION
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(question))))
    await wait_until(lambda: not se301(client, question), what="SE301 gone after the save")
    expected = [(d.code, d.span.start.line - 1) for d in lint_paths([root]).diagnostics if d.path == question]
    # (workspace-wide rules such as SE501 follow once edits settle)
    await wait_until(lambda: [(d.code, d.range.start.line) for d in client.diagnostics.get(uri(question), [])] == expected,
                     what=f"the CLI's findings in question.md: {expected}")
