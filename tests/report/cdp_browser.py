"""Headless Debian Chromium driven over the Chrome DevTools Protocol.

The browser talks CDP over a pair of pipes (``--remote-debugging-pipe``: it
reads commands on fd 3 and writes replies and events on fd 4, each message
JSON ended by a NUL byte), so no debugging port is opened at all. Every
network request the page makes is seen through the ``Network`` domain, and
console messages and uncaught exceptions through ``Runtime`` and ``Log``.
Name resolution and proxying are pointed at nothing, so even a regression that
tried to load something could not reach the network.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
    "--no-default-browser-check", "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
    "--remote-debugging-pipe",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


class CDPError(RuntimeError):
    pass


class Browser:
    """One headless Chromium process; :meth:`page` opens a tab to drive."""

    def __init__(self, executable: str, window: tuple[int, int] = (1400, 1000)) -> None:
        self.profile = tempfile.mkdtemp(prefix="skill-eval-chromium-")
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        argv = [executable, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", f"--window-size={window[0]},{window[1]}",
                "about:blank"]
        # posix_spawn puts the pipes on fds 3 and 4 in the child; every other fd
        # of this process is close-on-exec (PEP 446), so nothing else leaks in.
        self.pid = os.posix_spawn(executable, argv, dict(os.environ), file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_DUP2, to_browser_read, 3),
            (os.POSIX_SPAWN_DUP2, from_browser_write, 4),
        ], setsid=True)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._next_id = 0
        self._lock = threading.Lock()
        self._replies: dict[int, dict[str, Any]] = {}
        self._condition = threading.Condition()
        self.events: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._condition:
                    self._replies[-1] = {"error": {"message": "the browser closed its pipe"}}
                    self._condition.notify_all()
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                with self._condition:
                    if "id" in message:
                        self._replies[message["id"]] = message
                    else:
                        self.events.append(message)
                    self._condition.notify_all()

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 60) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            message_id = self._next_id
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        with self._condition:
            while message_id not in self._replies:
                if -1 in self._replies:
                    raise CDPError(f"{method}: {self._replies[-1]['error']['message']}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise CDPError(f"{method}: no reply within {timeout} s")
                self._condition.wait(remaining)
            reply = self._replies.pop(message_id)
        if "error" in reply:
            raise CDPError(f"{method}: {reply['error'].get('message')} {reply['error'].get('data', '')}")
        return reply.get("result", {})

    def wait_event(self, method: str, session: str | None = None, timeout: float = 60, since: int = 0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._condition:
            while True:
                for event in self.events[since:]:
                    if event.get("method") == method and (session is None or event.get("sessionId") == session):
                        return event
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise CDPError(f"no {method} within {timeout} s")
                self._condition.wait(remaining)

    def page(self, width: int = 1400, height: int = 1000) -> "Page":
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        return Page(self, session, width, height, target)

    def _exited(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            pid, _status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)

    def close(self) -> None:
        """Close the browser (kill its process group if it does not exit), and
        remove its profile."""
        try:
            try:
                self.send("Browser.close", timeout=10)
            except (CDPError, OSError):
                pass
            if not self._exited(10):
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self._exited(10)
        finally:
            for fd in (self._to_browser, self._from_browser):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """One tab: navigation, script evaluation, real mouse input, screenshots,
    and what the page did (requests, console messages, exceptions)."""

    def __init__(self, browser: Browser, session: str, width: int, height: int, target: str) -> None:
        self.browser, self.session, self.target = browser, session, target
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Log.enable")
        self.send("Network.enable")
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False})

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60) -> dict[str, Any]:
        return self.browser.send(method, params, self.session, timeout)

    def _events(self, *methods: str) -> list[dict[str, Any]]:
        return [e for e in list(self.browser.events) if e.get("sessionId") == self.session and e.get("method") in methods]

    def open(self, url: str, timeout: float = 120) -> None:
        since = len(self.browser.events)
        self.send("Page.navigate", {"url": url})
        self.browser.wait_event("Page.loadEventFired", self.session, timeout, since)

    def evaluate(self, expression: str, timeout: float = 60) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True,
                                                "timeout": int(timeout * 1000)}, timeout=timeout + 5)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise CDPError(f"{expression[:80]}...: {details.get('exception', {}).get('description') or details.get('text')}")
        return result["result"].get("value")

    def mouse(self, kind: str, x: float, y: float) -> None:
        params = {"type": kind, "x": x, "y": y, "button": "left" if kind != "mouseMoved" else "none", "clickCount": 1}
        if kind == "mouseMoved":
            params.pop("clickCount")
        self.send("Input.dispatchMouseEvent", params)

    def click(self, x: float, y: float) -> None:
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y)
        self.mouse("mouseReleased", x, y)

    def type_text(self, text: str) -> None:
        """Type ``text`` into the focused element, as a keyboard's input (input events)."""
        self.send("Input.insertText", {"text": text})

    def press(self, key: str, code: str | None = None, key_code: int | None = None) -> None:
        """Press and release one key (e.g. ``Enter``, 13) on the focused element."""
        params = {"key": key, "code": code or key, "windowsVirtualKeyCode": key_code or 0}
        self.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", **params})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **params})

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target})

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        self.send("Page.bringToFront")  # a tab in the background paints no frame to capture
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            metrics = self.send("Page.getLayoutMetrics")
            size = metrics["cssContentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1})
        data = self.send("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    @property
    def requests(self) -> list[str]:
        """The URL of every request the page made, the document's own included."""
        return [e["params"]["request"]["url"] for e in self._events("Network.requestWillBeSent")]

    @property
    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and error log entries."""
        found = []
        for event in self._events("Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded"):
            params = event["params"]
            if event["method"] == "Runtime.consoleAPICalled":
                if params["type"] in ("error", "assert", "warning"):
                    found.append(f"console.{params['type']}: " + " ".join(str(a.get("value", a.get("description")))
                                                                         for a in params.get("args", [])))
            elif event["method"] == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                found.append(f"exception: {details.get('exception', {}).get('description') or details.get('text')}")
            elif params["entry"]["level"] in ("error", "warning"):
                found.append(f"log {params['entry']['level']}: {params['entry']['text']} {params['entry'].get('url', '')}")
        return found


def wait_for(page: Page, condition: str, limit_ms: int = 15000) -> bool:
    """Whether the JavaScript ``condition`` became true within ``limit_ms``
    (polled in the page; the bound only keeps a broken page from hanging a test)."""
    return bool(page.evaluate(
        "new Promise(resolve => { const t0 = performance.now(); (function poll() {"
        f" let ok = false; try {{ ok = !!({condition}); }} catch (e) {{ ok = false; }}"
        f" if (ok) resolve(true); else if (performance.now() - t0 > {limit_ms}) resolve(false);"
        " else setTimeout(poll, 25); })(); })", timeout=limit_ms / 1000 + 30))


def screenshot_element(page: Page, selector: str, path: Path, margin: int = 8) -> Path:
    """A screenshot of the element ``selector`` (scrolled into view)."""
    page.send("Page.bringToFront")
    box = page.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
                        " const b = e.getBoundingClientRect(); return {x: b.left + window.scrollX, y: b.top + window.scrollY,"
                        " width: b.width, height: b.height}; })()")
    data = page.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": {
        "x": max(0, box["x"] - margin), "y": max(0, box["y"] - margin),
        "width": box["width"] + 2 * margin, "height": box["height"] + 2 * margin, "scale": 1}})["data"]
    path.write_bytes(base64.b64decode(data))
    return path
