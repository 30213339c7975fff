"""TEST FIXTURE: a stand-in model endpoint for the real agent CLIs.

Never shipped, never an agent: the real-harness tests (tests/agents_real) start
it on 127.0.0.1, port 0, inside a network namespace that holds nothing but
loopback, and point a real harness at it. It speaks each harness's wire API on
one port, routed by path:

- Anthropic Messages (``POST /v1/messages``, SSE when ``stream`` is set):
  Claude Code, and OpenCode configured with an Anthropic provider;
- OpenAI Responses (``POST /v1/responses``, SSE): Codex;
- OpenAI Chat Completions (``POST /v1/chat/completions``): OpenAI-compatible
  providers;
- Gemini (``POST /v1beta/models/MODEL:generateContent`` and
  ``:streamGenerateContent``, SSE with ``alt=sse``): Gemini CLI.

Every request is appended to a JSON-lines log (path, headers, parsed body, and
the usage the stand-in reported for it) before it is answered. The answer is
scripted: the model's final text (a probe's answer fields, e.g. ``verdict:
NOT_PROVEN``) and the token usage reported with it. When told the name of a
skill and of the harness's own skill tool, the scripted model first calls that
tool for the skill (when the request offers the tool and names the skill), so
that the harness loads the skill and sends its body in the next request. Told
to ``hang``, it reads the request and never answers; told to fail, it answers
every request with an HTTP error.
"""

from __future__ import annotations

import json
import re
import shlex
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

DEFAULT_ANSWER = "Reviewed the closeout report.\n\nverdict: NOT_PROVEN\nunproven: 2\nconfidence: medium\n"


@dataclass
class Script:
    """What the scripted model does."""

    answer: str = DEFAULT_ANSWER
    input_tokens: int = 1200
    """Input tokens reported for a request; the n-th request (from 1) reports
    ``input_tokens + n`` so that sums over requests can be told apart."""
    output_tokens: int = 40
    """Output tokens reported; the n-th request reports ``output_tokens + n``."""
    cached_tokens: int = 0
    """Of each request's input tokens, how many are reported as read from a
    cache (Anthropic reports them beside ``input_tokens``, the others as a
    part of it)."""
    skill_name: str | None = None
    """Call the harness's skill tool for this skill when a request offers the
    tool and shows this name, and no tool result came back yet."""
    skill_tools: tuple[str, ...] = ("Skill", "activate_skill", "skill", "exec_command")
    trigger_words: tuple[str, ...] = ()
    """When given, call the skill tool only for a request whose text holds
    one of these words (a trigger test: the model loads the skill for some
    queries and not for others; the log's ``reply`` says which)."""
    hunt: tuple[dict, ...] = ()
    """Tool calls to make first, one per request, in order: each step maps
    tool names to their arguments (one entry per harness's own tools); the
    first tool of a step that the request offers is called, a step none of
    whose tools is offered is left out. The skill is loaded after them."""
    mode: str = "answer"
    """``answer``; ``hang`` (read the request, never answer); ``error`` (HTTP
    ``error_status`` for every request)."""
    error_status: int = 500


@dataclass
class LoggedRequest:
    number: int
    method: str
    path: str
    api: str
    headers: dict
    body: object
    reported_usage: dict = field(default_factory=dict)
    reply: str = ""
    time: float = 0.0
    """When the request arrived (seconds since the epoch), to tell which start sent it."""


class StandinModel:
    """The server. ``start()`` returns its base URL; ``stop()`` ends it and
    releases any hanging request."""

    def __init__(self, log_path: Path, script: Script | None = None, host: str = "127.0.0.1") -> None:
        self.log_path = Path(log_path)
        self.script = script or Script()
        self.host = host
        self.requests: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------
    def start(self) -> str:
        standin = self

        class Handler(_Handler):
            model = standin

        server = _QuietServer((self.host, 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="standin-model", daemon=True)
        self._thread.start()
        return self.url

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self._released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "StandinModel":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- the scripted model ------------------------------------------------
    def record(self, method: str, path: str, api: str, headers: dict, body: object) -> LoggedRequest:
        with self._lock:
            entry = LoggedRequest(len(self.requests) + 1, method, path, api, headers, body, time=time.time())
            self.requests.append(entry)
        return entry

    def write_log(self, entry: LoggedRequest) -> None:
        line = json.dumps(entry.__dict__, ensure_ascii=False)
        with self._lock, self.log_path.open("a", encoding="utf-8") as log:
            log.write(line + "\n")

    def usage_for(self, entry: LoggedRequest) -> tuple[int, int, int]:
        """``(all input tokens, of which cached, output tokens)`` reported for a
        request, logged as the request's ``reported_usage``."""
        tokens_in = self.script.input_tokens + entry.number + self.script.cached_tokens
        tokens_out = self.script.output_tokens + entry.number
        entry.reported_usage = {"input": tokens_in, "cached": self.script.cached_tokens, "output": tokens_out}
        return tokens_in, self.script.cached_tokens, tokens_out

    def next_call(self, body: object, offered_tools: list[str], results: int) -> tuple[str, dict] | None:
        """The tool call to make now, ``(tool, arguments)``, or ``None`` to
        answer: the ``results``-th applicable hunt step while any is left, then
        the skill tool (:meth:`wants_skill_call`)."""
        steps = [step for step in self.script.hunt if any(tool in offered_tools for tool in step)]
        if results < len(steps):
            step = steps[results]
            tool = next(tool for tool in step if tool in offered_tools)
            return tool, step[tool]
        tool = self.wants_skill_call(body, offered_tools, results > len(steps))
        return (tool, _skill_arguments(tool, self.script.skill_name, body)) if tool else None

    def wants_skill_call(self, body: object, offered_tools: list[str], has_tool_result: bool) -> str | None:
        """The skill tool to call now, or ``None`` to answer."""
        name = self.script.skill_name
        if name is None or has_tool_result:
            return None
        text = json.dumps(body, ensure_ascii=False)
        if name not in text:
            return None
        if self.script.trigger_words and not any(word in text for word in self.script.trigger_words):
            return None
        for tool in self.script.skill_tools:
            if tool in offered_tools:
                return tool
        return None

    def hang(self) -> None:
        self._released.wait()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """A client that hangs up (a harness killed mid-request) is no error of the stand-in."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def _skill_arguments(tool: str, skill: str, body: object = None) -> dict:
    """The arguments a model gives the harness's skill tool to load ``skill``.

    Codex has no skill tool: its skill list gives each SKILL.md's path under a
    root (``(file: r1/NAME/SKILL.md)``, with ``r1`` = an absolute folder) and
    the model reads the file with its shell tool, as done here.
    """
    if tool == "Skill":
        return {"skill": skill}
    if tool == "exec_command":
        text = json.dumps(body, ensure_ascii=False)
        entry = re.search(r"\(file: (r\d+)/" + re.escape(skill) + r"/SKILL\.md\)", text)
        root = entry and re.search(r"`" + entry.group(1) + r"` = `([^`]+)`", text)
        path = f"{root.group(1)}/{skill}/SKILL.md" if root else f"{skill}/SKILL.md"
        return {"cmd": f"cat {shlex.quote(path)}"}
    return {"name": skill}


class _Handler(BaseHTTPRequestHandler):
    model: StandinModel
    protocol_version = "HTTP/1.1"
    server_version = "standin-model/1"

    def log_message(self, format, *args) -> None:  # noqa: A002 - quiet
        pass

    # --- plumbing ----------------------------------------------------------
    def _body(self) -> object:
        length = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = self._read_chunked()
        else:
            raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding", "").lower() in ("gzip", "zstd", "br", "deflate"):
            return {"_encoded": self.headers.get("Content-Encoding"), "_bytes": len(raw)}
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", errors="replace")

    def _read_chunked(self) -> bytes:
        data = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return data
            data += self.rfile.read(size)
            self.rfile.readline()

    def _json(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", f"req_{uuid.uuid4().hex[:12]}")
        self.end_headers()
        self.wfile.write(data)

    def _sse_start(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", f"req_{uuid.uuid4().hex[:12]}")
        self.end_headers()
        self.close_connection = True

    def _event(self, data: object, event: str | None = None) -> None:
        text = ""
        if event:
            text += f"event: {event}\n"
        text += f"data: {json.dumps(data) if not isinstance(data, str) else data}\n\n"
        self.wfile.write(text.encode("utf-8"))
        self.wfile.flush()

    # --- routing -----------------------------------------------------------
    def do_HEAD(self) -> None:  # noqa: N802
        self._handle("HEAD")

    def do_GET(self) -> None:  # noqa: N802
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        body = self._body() if method == "POST" else None
        path = url.path
        if path.endswith("/messages/count_tokens"):
            api = "anthropic-count-tokens"
        elif path.endswith("/messages"):
            api = "anthropic-messages"
        elif path.endswith("/responses"):
            api = "openai-responses"
        elif path.endswith("/chat/completions"):
            api = "openai-chat"
        elif ":streamGenerateContent" in path or ":generateContent" in path:
            api = "gemini"
        elif ":countTokens" in path:
            api = "gemini-count-tokens"
        else:
            api = "other"
        headers = {key.lower(): value for key, value in self.headers.items()}
        entry = self.model.record(method, self.path, api, headers, body)
        script = self.model.script
        try:
            if method != "POST" and api != "other":
                # A WebSocket upgrade (Codex tries its Responses WebSocket first):
                # refused, so that the harness falls back to HTTP.
                self.model.write_log(entry)
                self._json(404, {"error": {"message": "the stand-in model speaks HTTP only"}})
                return
            if script.mode == "hang":
                self.model.write_log(entry)
                self.model.hang()
                return
            if script.mode == "error":
                self.model.write_log(entry)
                self._json(script.error_status, {"type": "error", "error": {
                    "type": "api_error", "code": script.error_status, "status": "UNAVAILABLE",
                    "message": f"stand-in told to fail with {script.error_status}"}})
                return
            if api == "anthropic-messages":
                self._anthropic(entry, body)
            elif api == "anthropic-count-tokens":
                self.model.write_log(entry)
                self._json(200, {"input_tokens": script.input_tokens})
            elif api == "openai-responses":
                self._responses(entry, body)
            elif api == "openai-chat":
                self._chat(entry, body)
            elif api == "gemini":
                self._gemini(entry, body, stream=":streamGenerateContent" in path,
                             sse=parse_qs(url.query).get("alt") == ["sse"])
            elif api == "gemini-count-tokens":
                self.model.write_log(entry)
                self._json(200, {"totalTokens": script.input_tokens})
            else:
                self.model.write_log(entry)
                self._json(404, {"error": {"message": f"the stand-in model does not serve {path}"}})
        except (BrokenPipeError, ConnectionResetError):
            pass

    # --- Anthropic Messages ------------------------------------------------
    def _anthropic(self, entry: LoggedRequest, body: dict) -> None:
        tools = [tool.get("name") for tool in body.get("tools") or []]
        results = sum(
            isinstance(block, dict) and block.get("type") == "tool_result"
            for message in body.get("messages") or [] if isinstance(message.get("content"), list)
            for block in message["content"])
        call = self.model.next_call(body, tools, results)
        tool = call[0] if call else None
        tokens_in, cached, tokens_out = self.model.usage_for(entry)
        entry.reply = f"tool:{tool}" if tool else "answer"
        self.model.write_log(entry)
        message_id = f"msg_{uuid.uuid4().hex[:20]}"
        model = body.get("model", "standin")
        if tool:
            arguments = call[1]
            content = [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": tool, "input": arguments}]
            stop = "tool_use"
        else:
            content = [{"type": "text", "text": self.model.script.answer}]
            stop = "end_turn"
        usage = {"input_tokens": tokens_in - cached, "output_tokens": tokens_out,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": cached}
        if not body.get("stream"):
            self._json(200, {"id": message_id, "type": "message", "role": "assistant", "model": model,
                             "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage})
            return
        self._sse_start()
        self._event({"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}}, "message_start")
        block = content[0]
        if tool:
            self._event({"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": block["id"], "name": tool, "input": {}}}, "content_block_start")
            self._event({"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}, "content_block_delta")
        else:
            self._event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                        "content_block_start")
            self._event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": block["text"]}},
                        "content_block_delta")
        self._event({"type": "content_block_stop", "index": 0}, "content_block_stop")
        self._event({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                     "usage": {"input_tokens": tokens_in - cached, "output_tokens": tokens_out,
                               "cache_read_input_tokens": cached}}, "message_delta")
        self._event({"type": "message_stop"}, "message_stop")

    # --- OpenAI Responses --------------------------------------------------
    def _responses(self, entry: LoggedRequest, body: dict) -> None:
        tools = [tool.get("name") or tool.get("type") for tool in body.get("tools") or []]
        results = sum(isinstance(item, dict) and item.get("type", "").endswith("_output")
                      for item in body.get("input") or [])
        call = self.model.next_call(body, tools, results)
        tool = call[0] if call else None
        tokens_in, cached, tokens_out = self.model.usage_for(entry)
        entry.reply = f"tool:{tool}" if tool else "answer"
        self.model.write_log(entry)
        response_id = f"resp_{uuid.uuid4().hex[:20]}"
        if tool:
            item = {"type": "function_call", "id": f"fc_{uuid.uuid4().hex[:20]}", "status": "completed",
                    "call_id": f"call_{uuid.uuid4().hex[:20]}", "name": tool,
                    "arguments": json.dumps(call[1])}
        else:
            item = {"type": "message", "id": f"msg_{uuid.uuid4().hex[:20]}", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": self.model.script.answer, "annotations": []}]}
        usage = {"input_tokens": tokens_in, "input_tokens_details": {"cached_tokens": cached},
                 "output_tokens": tokens_out, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": tokens_in + tokens_out}
        response = {"id": response_id, "object": "response", "created_at": int(time.time()), "status": "completed",
                    "model": body.get("model", "standin"), "output": [item], "usage": usage}
        if not body.get("stream"):
            self._json(200, response)
            return
        self._sse_start()
        sequence = iter(range(1000))
        self._event({"type": "response.created", "sequence_number": next(sequence),
                     "response": {**response, "status": "in_progress", "output": [], "usage": None}}, "response.created")
        self._event({"type": "response.output_item.added", "sequence_number": next(sequence), "output_index": 0,
                     "item": {**item, "status": "in_progress"} if tool else {**item, "status": "in_progress", "content": []}},
                    "response.output_item.added")
        if not tool:
            self._event({"type": "response.output_text.delta", "sequence_number": next(sequence), "item_id": item["id"],
                         "output_index": 0, "content_index": 0, "delta": self.model.script.answer},
                        "response.output_text.delta")
        self._event({"type": "response.output_item.done", "sequence_number": next(sequence), "output_index": 0,
                     "item": item}, "response.output_item.done")
        self._event({"type": "response.completed", "sequence_number": next(sequence), "response": response},
                    "response.completed")

    # --- OpenAI Chat Completions -------------------------------------------
    def _chat(self, entry: LoggedRequest, body: dict) -> None:
        tools = [(tool.get("function") or {}).get("name") for tool in body.get("tools") or []]
        results = sum(message.get("role") == "tool" for message in body.get("messages") or [])
        wanted = self.model.next_call(body, tools, results)
        tool = wanted[0] if wanted else None
        tokens_in, cached, tokens_out = self.model.usage_for(entry)
        entry.reply = f"tool:{tool}" if tool else "answer"
        self.model.write_log(entry)
        chat_id = f"chatcmpl-{uuid.uuid4().hex[:20]}"
        created, model = int(time.time()), body.get("model", "standin")
        usage = {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": tokens_in + tokens_out,
                 "prompt_tokens_details": {"cached_tokens": cached}}
        call = None
        if tool:
            call = {"index": 0, "id": f"call_{uuid.uuid4().hex[:20]}", "type": "function",
                    "function": {"name": tool, "arguments": json.dumps(wanted[1])}}
        finish = "tool_calls" if tool else "stop"
        if not body.get("stream"):
            message = {"role": "assistant", "content": None if tool else self.model.script.answer}
            if call:
                message["tool_calls"] = [{key: value for key, value in call.items() if key != "index"}]
            self._json(200, {"id": chat_id, "object": "chat.completion", "created": created, "model": model,
                             "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage})
            return
        self._sse_start()

        def chunk(delta: dict, finish_reason: str | None = None, with_usage: bool = False) -> dict:
            payload = {"id": chat_id, "object": "chat.completion.chunk", "created": created, "model": model,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
            if with_usage:
                payload["usage"] = usage
            return payload

        self._event(chunk({"role": "assistant", "content": ""}))
        if call:
            self._event(chunk({"tool_calls": [call]}))
        else:
            self._event(chunk({"content": self.model.script.answer}))
        self._event(chunk({}, finish))
        payload = chunk({}, None, with_usage=True)
        payload["choices"] = []
        self._event(payload)
        self._event("[DONE]")

    # --- Gemini ------------------------------------------------------------
    def _gemini(self, entry: LoggedRequest, body: dict, stream: bool, sse: bool) -> None:
        tools = [declaration.get("name") for tool in body.get("tools") or []
                 for declaration in tool.get("functionDeclarations") or []]
        results = sum("functionResponse" in part for content in body.get("contents") or []
                         for part in content.get("parts") or [])
        call = self.model.next_call(body, tools, results)
        tool = call[0] if call else None
        tokens_in, cached, tokens_out = self.model.usage_for(entry)
        entry.reply = f"tool:{tool}" if tool else "answer"
        self.model.write_log(entry)
        if tool:
            parts = [{"functionCall": {"name": tool, "args": call[1]}}]
        else:
            parts = [{"text": self.model.script.answer}]
        response = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": tokens_in, "candidatesTokenCount": tokens_out,
                                      "cachedContentTokenCount": cached, "totalTokenCount": tokens_in + tokens_out},
                    "modelVersion": "standin", "responseId": uuid.uuid4().hex[:16]}
        if not stream:
            self._json(200, response)
        elif sse:
            self._sse_start()
            self._event(response)
        else:
            self._json(200, [response])
