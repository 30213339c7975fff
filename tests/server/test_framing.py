"""Malformed LSP framing over a real server process's stdin/stdout.

Each test writes raw bytes to ``python -m skill_eval.server`` and reads its
stdout with a strict frame reader of its own. Every exchange runs under a time
bound of the harness (``bounded``): a server that hangs fails the test with
what it logged, instead of wedging the suite. (This is a bound, not a timing
assertion: the server needs well under a second for any of these.)

The framing itself, without I/O, is covered by ``test_frame_decoder_*``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skill_eval.server.framing import FATAL, MESSAGE, PROBLEM, FrameDecoder

BOUND = 60.0
"""Seconds any one exchange may take before the test fails as a hang."""


def frame(message: dict, length_delta: int = 0) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % (len(body) + length_delta) + body


def initialize(root: Path, msg_id: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize",
            "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}}


def hover(msg_id: int) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": "untitled:x"}, "position": {"line": 0, "character": 0}}}


class RawServer:
    """The server as a subprocess, spoken to in raw bytes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.logs: list[str] = []
        self.stderr = bytearray()
        self._stderr_task = asyncio.ensure_future(self._drain_stderr())

    @classmethod
    async def start(cls) -> "RawServer":
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "skill_eval.server",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        return cls(process)

    async def _drain_stderr(self) -> None:
        while chunk := await self.process.stderr.read(65536):
            self.stderr += chunk

    async def send(self, data: bytes) -> None:
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def read_message(self) -> dict:
        """One frame of the server's output, read strictly."""
        header = await self.process.stdout.readuntil(b"\r\n\r\n")
        lengths = [line.split(b":", 1)[1] for line in header.split(b"\r\n") if line.lower().startswith(b"content-length:")]
        assert len(lengths) == 1, header
        return json.loads(await self.process.stdout.readexactly(int(lengths[0])))

    async def response(self, msg_id) -> dict:
        """The response to request ``msg_id``; log messages met on the way are kept."""
        while True:
            message = await self.read_message()
            if message.get("method") == "window/logMessage":
                self.logs.append(message["params"]["message"])
            elif message.get("id") == msg_id and "method" not in message:
                return message

    async def log_containing(self, text: str) -> str:
        while not any(text in log for log in self.logs):
            message = await self.read_message()
            if message.get("method") == "window/logMessage":
                self.logs.append(message["params"]["message"])
        return next(log for log in self.logs if text in log)

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()
        self._stderr_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._stderr_task


@contextlib.asynccontextmanager
async def bounded(server: RawServer, what: str, seconds: float = BOUND):
    """Fail (not wedge) when the body takes longer than ``seconds``."""
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError:
        pytest.fail(f"the server hung: {what} took over {seconds:.0f}s; logs {server.logs}; "
                    f"stderr {bytes(server.stderr[-2000:])!r}")


@pytest.fixture
async def server():
    started = await RawServer.start()
    yield started
    await started.stop()


async def test_garbage_headers_are_logged_and_skipped(server: RawServer, tmp_path: Path):
    async with bounded(server, "a request after garbage header lines"):
        await server.send(b"hello there\r\nX-Nonsense\x01\x02: yes\r\n\r\n" + b"\xff\xfe junk \r\n" + frame(initialize(tmp_path)))
        answer = await server.response(1)
        assert "capabilities" in answer["result"]
        assert "garbage instead of a header" in await server.log_containing("malformed LSP input")


async def test_a_line_without_end_is_dropped_as_it_comes(server: RawServer, tmp_path: Path):
    """Hundreds of megabytes without a line break: pygls kept them all in one
    header line; the server keeps no more than a header's worth."""
    async with bounded(server, "256 MiB of garbage, then a request"):
        await server.send(frame(initialize(tmp_path)))
        await server.response(1)
        block = b"x" * (1 << 20)
        for _ in range(256):
            await server.send(block)
        await server.send(frame(hover(2)))
        assert (await server.response(2))["result"] is None
        status = Path(f"/proc/{server.process.pid}/status").read_text()
        peak_kb = int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])
        assert peak_kb < 200 * 1024, f"peak RSS {peak_kb} kB"


async def test_content_length_too_small_resyncs_at_the_next_message(server: RawServer, tmp_path: Path):
    async with bounded(server, "a request after a message whose Content-Length was too small"):
        await server.send(frame(initialize(tmp_path)))
        await server.response(1)
        await server.send(frame(hover(2), length_delta=-7) + frame(hover(3)))
        assert (await server.response(3))["result"] is None
        assert "not JSON" in await server.log_containing("malformed LSP input")


async def test_content_length_too_large_does_not_wait_for_bytes_that_never_come(server: RawServer, tmp_path: Path):
    async with bounded(server, "a request whose Content-Length is too large, the client then waiting"):
        await server.send(frame(initialize(tmp_path), length_delta=500))
        assert "capabilities" in (await server.response(1))["result"]
        # too large, followed by another request: both answered
        await server.send(frame(hover(2), length_delta=100_000) + frame(hover(3)))
        assert (await server.response(2))["result"] is None
        assert (await server.response(3))["result"] is None
        assert "Content-Length was" in await server.log_containing("malformed LSP input")


async def test_huge_content_length_drops_the_connection(server: RawServer, tmp_path: Path):
    async with bounded(server, "a Content-Length of a petabyte"):
        await server.send(frame(initialize(tmp_path)))
        await server.response(1)
        await server.send(b"Content-Length: 1000000000000000\r\n\r\n{")
        # stdin stays open: the server ends the connection itself
        assert await server.process.wait() == 1
        await asyncio.sleep(0)  # let stderr drain
    assert b"over the 67,108,864-byte limit; dropping the connection" in server.stderr


async def test_truncated_body_at_end_of_input_is_logged_and_the_server_exits(server: RawServer, tmp_path: Path):
    async with bounded(server, "end of input inside a message"):
        await server.send(frame(initialize(tmp_path)))
        await server.response(1)
        await server.send(frame(hover(2))[:-10])
        server.process.stdin.close()
        assert await server.process.wait() == 0
        await server._stderr_task
    assert b"closed the connection" in server.stderr


async def test_invalid_request_is_answered_with_an_error(server: RawServer, tmp_path: Path):
    async with bounded(server, "a request pygls cannot read"):
        await server.send(frame(initialize(tmp_path)))
        await server.response(1)
        await server.send(frame({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"nope": 1}}))
        answer = await server.response(2)
        assert answer["error"]["code"] in (-32602, -32603), answer
        await server.send(frame({"id": 3, "method": "textDocument/hover"}))  # no "jsonrpc"
        assert (await server.response(3))["error"]["code"] == -32600


# -- the decoder alone ---------------------------------------------------------------


def decode(data: bytes, step: int) -> list[tuple[str, object]]:
    decoder = FrameDecoder(max_header_line=256)
    events = []
    for start in range(0, len(data), step):
        events += decoder.feed(data[start : start + step])
    return events + decoder.eof()


@pytest.mark.parametrize("step", [1, 7, 4096])
def test_frame_decoder_in_any_chunking(step: int):
    good = frame(hover(1))
    cases = {
        "two messages": (good + good, [MESSAGE, MESSAGE]),
        "LF-only header lines": (good.replace(b"\r\n", b"\n"), [MESSAGE]),
        "lower-case header, Content-Type": (
            b"content-length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" % len(good.split(b"\r\n\r\n", 1)[1])
            + good.split(b"\r\n\r\n", 1)[1], [MESSAGE]),
        "garbage line": (b"hello\r\n" + good, [PROBLEM, PROBLEM, MESSAGE]),
        "garbage longer than a header line": (b"y" * 5000 + good, [PROBLEM, PROBLEM, MESSAGE]),
        "header block without length": (b"Content-Type: x\r\n\r\n" + good, [PROBLEM, PROBLEM, MESSAGE]),
        "invalid length": (b"Content-Length: -5\r\n\r\n" + good, [PROBLEM, PROBLEM, MESSAGE]),
        "too small": (frame(hover(1), -3) + good, [PROBLEM, PROBLEM, MESSAGE]),
        "too large": (frame(hover(1), 40) + good, [PROBLEM, MESSAGE, MESSAGE]),
        "too large, alone": (frame(hover(1), 40), [PROBLEM, MESSAGE]),
        "not JSON": (b"Content-Length: 3\r\n\r\n{x}" + good, [PROBLEM, PROBLEM, MESSAGE]),
        "nested too deeply": (b"Content-Length: 100000\r\n\r\n" + b"[" * 100000 + good, [PROBLEM, PROBLEM, MESSAGE]),
        "over the limit": (b"Content-Length: 68000000\r\n\r\n" + good, [FATAL]),
        "hundreds of digits": (b"Content-Length: " + b"9" * 200 + b"\r\n\r\n" + good, [FATAL]),
        "truncated": (good[:-4], [PROBLEM]),
    }
    for name, (data, kinds) in cases.items():
        assert [kind for kind, _ in decode(data, step)] == kinds, name


def test_frame_decoder_keeps_a_header_line_bounded():
    decoder = FrameDecoder(max_header_line=1024)
    for _ in range(1000):
        decoder.feed(b"z" * 4096)
        assert len(decoder.buffer) <= 4096 + 1024
    assert [kind for kind, _ in decoder.feed(frame(hover(1)))] == [PROBLEM, MESSAGE]


def test_frame_decoder_does_not_cut_a_message_at_a_header_inside_a_string():
    """A body that spells a header inside a JSON string is one message."""
    message = {"jsonrpc": "2.0", "method": "x", "params": {"text": "}\r\n\r\nContent-Length: 5\r\n\r\n{}"}}
    for step in (1, 3, 4096):
        events = decode(frame(message), step)
        assert events == [(MESSAGE, message)]


# -- properties of the decoder -------------------------------------------------------

messages = st.dictionaries(st.sampled_from(["id", "method", "params", "x"]),
                           st.one_of(st.integers(), st.text(max_size=30), st.lists(st.integers(), max_size=3)),
                           max_size=4).map(lambda extra: {"jsonrpc": "2.0", **extra})
garbage = st.binary(max_size=40).filter(lambda data: b"content-length" not in data.lower())


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[a:b] for a, b in zip(points, points[1:])]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(garbage, messages), min_size=1, max_size=6), st.lists(st.integers(0, 10_000), max_size=8))
def test_frame_decoder_delivers_every_message_after_any_garbage(framed, cuts):
    """Garbage between well-framed messages (anything but a Content-Length
    header) never costs a message, however the bytes are chunked."""
    data = b"".join(junk + frame(message) for junk, message in framed)
    decoder = FrameDecoder()
    events = [event for chunk in split_at(data, cuts) for event in decoder.feed(chunk)] + decoder.eof()
    assert [value for kind, value in events if kind == MESSAGE] == [message for _, message in framed]
    assert not any(kind == FATAL for kind, _ in events)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=300),
                          st.integers(1, 6000).map(lambda n: b"x" * n),
                          st.tuples(messages, st.integers(-20, 200)).map(lambda m: frame(m[0], m[1])),
                          st.just(b"Content-Length: 99999999999\r\n\r\n")), max_size=8),
       st.lists(st.integers(0, 10_000), max_size=8))
def test_frame_decoder_ends_and_stays_bounded_on_any_input(pieces, cuts):
    """Any bytes, any chunking: every call returns, nothing raises, and what
    waits in the buffer is never more than the largest body allowed (a header
    line is cut at 512 bytes here)."""
    decoder = FrameDecoder(max_message=4096, max_header_line=512)
    for chunk in split_at(b"".join(pieces), cuts):
        for kind, value in decoder.feed(chunk):
            assert kind in (MESSAGE, PROBLEM, FATAL)
        assert len(decoder.buffer) <= 4096  # a body not yet complete, at most
    decoder.eof()
    assert decoder.feed(b"Content-Length: 2\r\n\r\n{}") == []  # after the end, nothing more
