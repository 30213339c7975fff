"""The server's copy of an editor buffer never drifts from the editor's.

A property test drives the real server object (``create_server()``: pygls's
protocol, our document model and handlers) with JSON-RPC messages —
``initialize``, ``didOpen`` and random ``didChange`` notifications, incremental
and whole — and compares the text the server lints (``ls.buffers``) with a
reference model of the client's buffer (``_client_buffer.ClientBuffer``,
written from the LSP specification). Texts are built from the characters that
split lines in Python but not in the LSP (U+2028, U+2029, U+0085, form feed,
vertical tab, U+001C-U+001E) mixed with the LSP's own line breaks, astral and
multi-byte characters and a byte-order mark; positions fall past line ends and
past the last line too. It also checks the engine <-> LSP conversion of
diagnostics' positions against the model, in each position encoding.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from skill_eval.linter.textfile import Position, TextDocument
from skill_eval.server.server import create_server
from skill_eval.server.textsync import LspPositionCodec, engine_text, split_lines

from _client_buffer import ClientBuffer

ENCODINGS = ["utf-8", "utf-16", "utf-32"]

TRICKY = ["\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\n", "\r", "\r\n", "\ufeff"]
PLAIN = ["a", "b", " ", "é", "\u00e9\u0301", "—", "\U0001F680", "漢", "{", '"']

pieces = st.sampled_from(TRICKY + PLAIN)
texts = st.lists(pieces, max_size=24).map("".join)


class Collect:
    """The server's output stream (what a client would read)."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass


class InProcessSession:
    """The real server object, fed JSON-RPC messages as its reader would."""

    def __init__(self, root: Path, encoding: str) -> None:
        self.ls = create_server()
        self.output = Collect()
        self.ls.protocol.set_writer(self.output)
        self.send({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "processId": None, "rootUri": root.as_uri(),
                "capabilities": {"general": {"positionEncodings": [encoding]}},
            },
        })

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        self.ls.protocol.handle_message(json.loads(body, object_hook=self.ls.protocol.structure_message))

    def open(self, uri: str, text: str) -> None:
        self.version = 1
        self.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}}})

    def close(self, uri: str) -> None:
        self.send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})

    def change(self, uri: str, changes: list[dict]) -> None:
        self.version += 1
        self.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": self.version}, "contentChanges": changes}})


@st.composite
def edits(draw, model: ClientBuffer):
    """One client edit over the model's current text: a range given as the
    client would (cursor positions on character boundaries, sometimes past a
    line's end or past the last line), or a whole-document change."""
    if draw(st.integers(0, 9)) == 0:
        return {"text": draw(texts)}
    lines = model.lines()

    def position():
        line = draw(st.integers(0, len(lines)))  # == len(lines): past the last line
        if line == len(lines):
            return line, draw(st.integers(0, 3))
        content = model.line_text(line)
        characters = draw(st.integers(0, len(content) + 2))  # past the end of the line, too
        units = model.units_of(content[:characters]) + max(characters - len(content), 0)
        return line, units

    start, end = position(), position()
    if draw(st.booleans()) and start > end:
        start, end = end, start  # mostly ordered; sometimes reversed, which the model swaps
    return {
        "range": {"start": {"line": start[0], "character": start[1]}, "end": {"line": end[0], "character": end[1]}},
        "text": draw(texts),
    }


def apply_to_model(model: ClientBuffer, change: dict) -> None:
    if "range" in change:
        start, end = change["range"]["start"], change["range"]["end"]
        model.apply((start["line"], start["character"]), (end["line"], end["character"]), change["text"])
    else:
        model.replace_all(change["text"])


def check_conversions(session: InProcessSession, path: Path, model: ClientBuffer, data) -> None:
    """Engine spans -> LSP positions land where the client has the same text,
    and client positions -> engine positions point at the client's character."""
    buffer = session.ls.buffers[path]
    engine = TextDocument(path, engine_text(buffer))
    converter = session.ls.converter
    assert len(engine.lines) == len(model.lines())
    for offset in data.draw(st.lists(st.integers(0, len(engine.text)), max_size=6)):
        position = engine.position(offset)
        lsp = converter.position(path, position)
        rest_of_line = engine.text[offset:].split("\n", 1)[0]
        assert model.text_from(lsp.line, lsp.character) == rest_of_line, (position, lsp)
        assert converter.engine_position(path, lsp) == position
    for line in data.draw(st.lists(st.integers(0, len(engine.lines) - 1), max_size=4)):
        content = model.line_text(line)
        characters = data.draw(st.integers(0, len(content)))
        lsp = types.Position(line=line, character=model.units_of(content[:characters]))
        found = converter.engine_position(path, lsp)
        expected = model.text_from(line, lsp.character)
        if line == 0 and content.startswith("\ufeff"):
            expected = expected[1:] if characters == 0 else expected
        assert engine.text[engine.offset(found):].split("\n", 1)[0] == expected, (line, characters, found)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    """One server object per position encoding, all on one event loop that
    lives as long as the module's tests (timers the handlers set stay valid
    from one example to the next); each example opens a document of its own."""
    root = tmp_path_factory.mktemp("text-sync") / "ws"
    root.mkdir()
    (root / "skill-eval.toml").write_text("", encoding="utf-8")
    loop = asyncio.new_event_loop()
    made: dict[str, InProcessSession] = {}

    def session(encoding: str) -> InProcessSession:
        if encoding not in made:
            made[encoding] = InProcessSession(root, encoding)
        return made[encoding]

    yield root, loop, session
    loop.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(initial=texts, data=st.data())
def test_incremental_edits_keep_the_buffer_in_step(sessions, encoding: str, initial: str, data) -> None:
    root, loop, session_for = sessions
    session = session_for(encoding)
    session.opened = getattr(session, "opened", 0) + 1
    path = root / encoding / f"notes-{session.opened}.md"
    uri = path.as_uri()

    async def scenario() -> None:
        assert session.ls.workspace.position_encoding == encoding
        model = ClientBuffer(initial, encoding)
        session.open(uri, initial)
        for _ in range(data.draw(st.integers(1, 8))):
            # The changes of one notification apply in order, each to the text the previous left.
            changes = []
            for _ in range(data.draw(st.integers(1, 3))):
                changes.append(data.draw(edits(model)))
                apply_to_model(model, changes[-1])
            session.change(uri, changes)
            assert session.ls.buffers[path] == model.text
            assert session.ls.workspace.get_text_document(uri).source == model.text
        check_conversions(session, path, model, data)
        session.close(uri)

    loop.run_until_complete(scenario())


def test_python_line_breaks_are_not_lsp_line_breaks():
    """What pygls 2.1's TextDocument got wrong, named: str.splitlines breaks at
    eight characters the LSP does not count."""
    text = "a\u2028b\u2029c\x85d\x0ce\x0bf\x1cg\x1dh\x1ei\r\nj\rk\nl"
    assert split_lines(text) == ["a\u2028b\u2029c\x85d\x0ce\x0bf\x1cg\x1dh\x1ei", "j", "k", "l"]
    assert len(text.splitlines()) == 12


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_codec_clamps_to_the_line_end_as_the_lsp_says(encoding: str):
    codec = LspPositionCodec(encoding)
    lines = ["ab\r", "\U0001F680x\n", ""]
    # past the end of "ab": the end of "ab", not after (or before) the CR
    assert codec.position_from_client_units(lines, types.Position(line=0, character=9)).character == 2
    # past the end of the last content of line 1, which ends in a line feed
    assert codec.position_from_client_units(lines, types.Position(line=1, character=50)).character == 2
    # the position given is not modified (pygls's codec rewrote its character)
    given_position = types.Position(line=0, character=9)
    codec.position_from_client_units(lines, given_position)
    assert given_position.character == 9
    assert codec.units("\U0001F680x", 1) == {"utf-8": 4, "utf-16": 2, "utf-32": 1}[encoding]


def test_engine_position_round_trip_with_byte_order_mark(tmp_path: Path):
    """A buffer that holds a byte-order mark: the engine drops it, the client
    counts it, so first-line columns differ by one and the others do not."""
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "notes.md"

    async def scenario() -> None:
        session = InProcessSession(root, "utf-16")
        session.open(path.as_uri(), "\ufeffab\ncd")
        converter = session.ls.converter
        assert converter.position(path, Position(1, 1)) == types.Position(line=0, character=1)
        assert converter.position(path, Position(2, 2)) == types.Position(line=1, character=1)
        assert converter.engine_position(path, types.Position(line=0, character=2)) == Position(1, 2)

    asyncio.run(scenario())
