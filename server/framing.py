"""LSP base-protocol framing that survives a malformed peer.

A message is a header block (``Content-Length: N``, optionally
``Content-Type``, each line ending in ``\\r\\n``), an empty line, and N bytes
of JSON. pygls 2.x reads a header line without bound (a peer sending bytes
without a line break grows it forever), allocates whatever ``Content-Length``
says, waits forever for a body that claimed too many bytes, and never finds
its footing again after a body that claimed too few (the rest of that body
swallows the next header line).

:class:`FrameDecoder` is the framing alone, without I/O: bytes in, events out.

* Memory is bounded: a header line is at most :data:`MAX_HEADER_LINE` bytes
  (longer garbage is dropped as it comes, keeping only a tail that could start
  a header), and a ``Content-Length`` over :data:`MAX_MESSAGE_BYTES` is fatal:
  the connection is dropped before anything is allocated for it.
* Garbage is logged (once per run of it) and skipped; a ``Content-Length``
  header is found even after garbage on the same line, so the stream
  resynchronizes at the next well-formed message.
* A body that is not JSON is logged and dropped; if it holds a header (its
  ``Content-Length`` claimed too many bytes and it swallowed the next
  message's start), decoding resumes there. While a body is still arriving, a
  header inside it preceded by a complete JSON message, or a received part
  that is complete JSON already, means the length was wrong (a JSON message
  can only be followed by whitespace): the message is delivered at once
  instead of waiting for bytes that may never come.
* End of input in the middle of a message is logged.

:func:`serve` drives a decoder from a chunk reader into pygls's protocol;
:class:`StdinChunks` reads standard input in a daemon thread (a blocked read
cannot keep the process from exiting), handing chunks over one at a time so
that a fast peer cannot queue unbounded input.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from typing import Any, Awaitable, Callable

from lsprotocol.types import ResponseError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The largest body accepted (64 MiB): far above any message of ours (a
buffer is linted up to 1 MiB by default), far below what would hurt."""
MAX_HEADER_LINE = 8 * 1024
"""The longest header line kept (headers are ~40 bytes)."""
CHUNK = 64 * 1024
"""Bytes read from the peer at a time."""

_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*", re.IGNORECASE)
_HEADER = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*:[ \t]*[^\x00-\x08\x0a-\x1f\x7f]*")
"""A well-formed header line (RFC 7230's token, a colon, a value)."""
_DIGITS = re.compile(rb"[0-9]{1,20}")

MESSAGE, PROBLEM, FATAL = "message", "problem", "fatal"


def _shown(data: bytes, limit: int = 60) -> str:
    text = repr(bytes(data[:limit]))
    return text + ("..." if len(data) > limit else "")


def _json(data: bytes) -> Any:
    """``data`` parsed as JSON; raises ``ValueError`` if it is not."""
    try:
        return json.loads(data)
    except RecursionError as error:
        raise ValueError("nested too deeply") from error


class FrameDecoder:
    """Splits an LSP byte stream into parsed JSON messages.

    :meth:`feed` takes the next bytes and :meth:`eof` the end of input; both
    return events ``(MESSAGE, parsed JSON)``, ``(PROBLEM, text)`` (logged,
    decoding goes on) and ``(FATAL, text)`` (the connection must be dropped;
    nothing more is decoded)."""

    def __init__(self, max_message: int = MAX_MESSAGE_BYTES, max_header_line: int = MAX_HEADER_LINE) -> None:
        self.max_message = max_message
        self.max_header_line = max_header_line
        self.buffer = bytearray()
        self.length: int | None = None
        """The body length being read, or ``None`` while reading headers."""
        self.pending: int | None = None
        """A ``Content-Length`` seen in the current header block."""
        self.header_lines = 0
        self.scanned = 0
        """How much of a body still arriving was searched for a header."""
        self.troubled = False
        """Whether a problem was reported since the last good message (one
        report per run of garbage)."""
        self.skipped = 0
        self.dead = False

    # -- events ----------------------------------------------------------------------

    def _problem(self, events: list, text: str, skipped: int = 0) -> None:
        self.skipped += skipped
        if not self.troubled:
            self.troubled = True
            events.append((PROBLEM, text))

    def _message(self, events: list, message: Any) -> None:
        if self.troubled:
            events.append((PROBLEM, f"resynchronized after skipping {self.skipped:,} bytes"))
        self.troubled = False
        self.skipped = 0
        events.append((MESSAGE, message))

    def _fatal(self, events: list, text: str) -> None:
        self.dead = True
        self.buffer = bytearray()
        events.append((FATAL, text))

    # -- input -----------------------------------------------------------------------

    def feed(self, data: bytes) -> list[tuple[str, Any]]:
        events: list[tuple[str, Any]] = []
        if self.dead:
            return events
        self.buffer += data
        while not self.dead:
            if self.length is None:
                if not self._header_line(events):
                    break
            elif not self._body(events):
                break
        return events

    def eof(self) -> list[tuple[str, Any]]:
        events: list[tuple[str, Any]] = []
        if self.dead:
            return events
        if self.length is not None:
            events.append((PROBLEM, (
                f"the client closed the connection {len(self.buffer):,} bytes into a message "
                f"of {self.length:,} bytes (Content-Length)")))
        elif self.buffer.strip() or self.header_lines:
            events.append((PROBLEM, f"the client closed the connection inside a header: {_shown(self.buffer)}"))
        self.buffer = bytearray()
        self.dead = True
        return events

    # -- headers ---------------------------------------------------------------------

    def _header_line(self, events: list) -> bool:
        """Consume one header line; whether decoding can go on."""
        buffer, limit = self.buffer, self.max_header_line
        newline = buffer.find(b"\n")
        if newline < 0 and len(buffer) <= limit:
            return False  # wait for the rest of the line
        if newline < 0 or newline > limit:
            # A line longer than any header: garbage. Only a header at its end
            # (what follows garbage, when the stream resynchronizes) is kept.
            end = newline if newline >= 0 else len(buffer)
            headers = [h.start() for h in _CONTENT_LENGTH.finditer(buffer, max(end - limit, 0), end)]
            if headers:
                cut = headers[-1]
            elif newline >= 0:
                cut = newline + 1
            else:
                cut = len(buffer) - 32  # the start of a header may be arriving
            self._problem(events, f"garbage instead of a header: {_shown(buffer)}", cut)
            del buffer[:cut]
            return newline >= 0 or bool(headers)
        line = bytes(buffer[:newline])
        del buffer[: newline + 1]
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line.strip():
            self._end_of_headers(events)
            return True
        self.header_lines += 1
        headers = list(_CONTENT_LENGTH.finditer(line))
        if headers:
            header = headers[-1]
            if line[: header.start()].strip():
                self._problem(events, f"garbage before a header: {_shown(line)}", header.start())
            value = line[header.end() :].strip()
            if _DIGITS.fullmatch(value) is None:
                if value.isdigit():
                    self._fatal(events, f"Content-Length {_shown(value, 30)} is over the {self.max_message:,}-byte limit")
                else:
                    self._problem(events, f"invalid Content-Length: {_shown(line)}", len(line))
                return True
            length = int(value)
            if length > self.max_message:
                self._fatal(events, f"Content-Length {length:,} is over the {self.max_message:,}-byte limit")
                return True
            self.pending = length
        elif _HEADER.fullmatch(line) is None:
            self._problem(events, f"garbage instead of a header: {_shown(line)}", len(line) + 1)
        return True

    def _end_of_headers(self, events: list) -> None:
        if self.pending is not None:
            self.length, self.pending = self.pending, None
            self.scanned = 0
        elif self.header_lines:
            self._problem(events, "a header block without Content-Length")
        self.header_lines = 0

    # -- bodies ----------------------------------------------------------------------

    def _body(self, events: list) -> bool:
        """Deliver the body being read if it is complete (or provably is); whether
        decoding can go on."""
        buffer, length = self.buffer, self.length
        if len(buffer) >= length:
            body = bytes(buffer[:length])
            del buffer[:length]
            self.length = None
            self._complete_body(events, body)
            return True
        return self._early_body(events)

    def _complete_body(self, events: list, body: bytes) -> None:
        try:
            self._message(events, _json(body))
            return
        except ValueError as error:
            reason = str(error)
        header = _CONTENT_LENGTH.search(body)
        if header is None:
            self._problem(events, f"a message body of {len(body):,} bytes is not JSON ({reason}): {_shown(body)}",
                          len(body))
            return
        # The body swallowed the start of the next message: resume at its header.
        self.buffer[:0] = body[header.start() :]
        head = body[: header.start()]
        try:
            message = _json(head)
        except ValueError:
            self._problem(events, f"a message body of {len(body):,} bytes is not JSON ({reason}) and holds a "
                          f"header at byte {header.start():,}: resuming there", header.start())
            return
        events.append((PROBLEM, f"Content-Length was {len(body):,} but the message took {len(head):,} bytes"))
        self._message(events, message)

    def _early_body(self, events: list) -> bool:
        """A body still arriving: deliver it now if its length was provably wrong."""
        buffer = self.buffer
        start = max(self.scanned - 20, 0)
        self.scanned = len(buffer)
        for at in [header.start() for header in _CONTENT_LENGTH.finditer(buffer, start)]:
            try:
                message = _json(bytes(buffer[:at]))
            except ValueError:
                continue  # inside a string of the message, say
            events.append((PROBLEM, (
                f"Content-Length was {self.length:,} but the message took {at:,} bytes "
                "and the next one followed")))
            del buffer[:at]
            self.length = None
            self._message(events, message)
            return True
        if buffer[-4096:].rstrip()[-1:] in (b"}", b"]"):
            try:
                message = _json(bytes(buffer))
            except ValueError:
                return False
            # Only whitespace may follow a JSON message: the rest, if it comes, is harmless.
            events.append((PROBLEM, f"Content-Length was {self.length:,} but the message took {len(buffer):,} bytes"))
            buffer.clear()
            self.length = None
            self._message(events, message)
            return True
        return False


class StdinChunks:
    """Standard input's bytes as they arrive, read by a daemon thread.

    The thread hands one chunk at a time to the event loop and reads the next
    only once it was taken, so input waits in the pipe, not in memory."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self.fd = fd
        self.loop = loop
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=1)
        self.thread = threading.Thread(target=self._run, name="skill-eval-ls stdin", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            try:
                data = os.read(self.fd, CHUNK)
            except OSError as error:
                logger.error("cannot read standard input: %s", error)
                data = b""
            try:
                asyncio.run_coroutine_threadsafe(self.queue.put(data), self.loop).result()
            except RuntimeError:  # the loop is closed: the server has stopped
                return
            if not data:
                return

    async def read(self) -> bytes:
        return await self.queue.get()


async def serve(
    protocol,
    read: Callable[[], Awaitable[bytes]],
    report: Callable[[str, bool], None],
    stop: threading.Event,
    decoder: FrameDecoder | None = None,
) -> bool:
    """Decode messages from ``read`` (b"" at the end) into pygls's ``protocol``
    until the input ends or ``stop`` is set. ``report(text, fatal)`` logs a
    framing problem. Returns whether the connection ended cleanly (not dropped
    for a fatal problem)."""
    decoder = decoder or FrameDecoder()
    while not stop.is_set():
        data = await read()
        events = decoder.feed(data) if data else decoder.eof()
        for kind, value in events:
            if kind == MESSAGE:
                dispatch(protocol, value, report)
            elif kind == PROBLEM:
                report(value, False)
            else:
                report(f"{value}; dropping the connection", True)
                return False
        if not data:
            return True
    return True


def dispatch(protocol, message: Any, report: Callable[[str, bool], None]) -> None:
    """Hand one parsed JSON message to pygls; a request pygls cannot read is
    answered with an error instead of never."""
    if not isinstance(message, dict):
        report(f"a message that is not a JSON object: {_shown(json.dumps(message).encode())}", False)
        return
    try:
        structured = protocol.structure_message(message)
    except JsonRpcException as error:
        report(f"an invalid {message.get('method', 'message')!r} message: {error}", False)
        msg_id = message.get("id")
        if "method" in message and isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool):
            protocol._send_response(msg_id, error=ResponseError(code=error.code, message=error.message))
        return
    if not hasattr(structured, "jsonrpc"):
        report(f"not a JSON-RPC 2.0 message: {_shown(json.dumps(message).encode())}", False)
        msg_id = message.get("id")
        if "method" in message and isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool):
            invalid = JsonRpcInvalidRequest()
            protocol._send_response(msg_id, error=ResponseError(code=invalid.code, message=invalid.message))
        return
    try:
        protocol.handle_message(structured)
    except Exception as error:  # noqa: BLE001 - one message must not end the session (as in pygls)
        logger.exception("cannot handle a message")
        report(f"cannot handle {message.get('method', 'a response')!r}: {error}", False)
