"""TEST FIXTURE: run one agent CLI against the stand-in model, inside a loopback-only network namespace.

Usage (from :func:`tests.agents_real.netns.run_in_loopback_netns`, never by hand
outside a namespace)::

    unshare --net --pid --mount --fork --kill-child --mount-proc \
        sh -c 'ip link set lo up && exec python3 netns_driver.py SPEC.json'

SPEC.json holds the launch (argv, env, stdin, cwd), the stand-in's script, the
timeout and where to write the request log and the result.

Or, with ``"phases"`` (:func:`run_phases`), it runs commands such as
``skill-eval run`` itself (which then starts the agent CLIs, inside the same
namespace) against several endpoints at once: stand-ins with their own
scripts and logs (``"endpoints": {"NAME": {"script": ..., "log": ...}}``; a
``null`` endpoint is unreachable), ``{NAME}`` replaced by each endpoint's URL
in the commands' argv and environment and in the files listed in
``"fill_files"``. The commands of a phase run at once; phases one after the
other. The driver refuses
to start anything unless the network namespace it runs in holds no interface
but ``lo`` (read from ``/proc/self/net/dev``, which shows the reader's own
namespace). It starts the stand-in on 127.0.0.1, port 0 (or, for
``"endpoint": "unreachable"``, takes a port and closes it, so that nothing
listens there), replaces ``{standin}`` in the argv and the environment's values
with the stand-in's base URL, runs the command in its own process group with
the timeout enforced by killing that group, and writes the result as JSON.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from standin_model import Script, StandinModel  # noqa: E402


class NotIsolated(RuntimeError):
    pass


def network_interfaces() -> list[str]:
    """The interfaces of this process's network namespace."""
    lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]
    return sorted(line.split(":", 1)[0].strip() for line in lines)


def require_loopback_only() -> None:
    interfaces = network_interfaces()
    if interfaces != ["lo"]:
        raise NotIsolated(f"refusing to run an agent CLI: this network namespace holds {interfaces}, not only lo")


def unreachable_url() -> str:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return f"http://127.0.0.1:{port}"


class NameLog:
    """A DNS server on 127.0.0.1:53 that logs each name asked for and answers
    NXDOMAIN at once; ``/etc/resolv.conf`` is bind-mounted (in this mount
    namespace only) to point at it. A harness that looks up no name sends no
    telemetry, update check or download anywhere: its only endpoint is the
    stand-in, given by address."""

    def __init__(self, log_path: Path, work: Path) -> None:
        self.log_path = log_path
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(("127.0.0.1", 53))
        resolv = work / "resolv.conf"
        resolv.write_text("nameserver 127.0.0.1\noptions attempts:1 timeout:1\n")
        subprocess.run(["mount", "--bind", str(resolv), "/etc/resolv.conf"], check=True)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                packet, peer = self.socket.recvfrom(4096)
            except OSError:
                return
            name, end = _question(packet)
            with self.log_path.open("a", encoding="utf-8") as log:
                log.write(json.dumps({"name": name}) + "\n")
            if end:
                flags = 0x8183  # a response, recursion desired and available, NXDOMAIN
                reply = packet[:2] + flags.to_bytes(2, "big") + packet[4:6] + b"\0\0\0\0\0\0" + packet[12:end]
                self.socket.sendto(reply, peer)

    def close(self) -> None:
        self.socket.close()


def _question(packet: bytes) -> tuple[str, int]:
    """The first question's name and where the question ends (0 if malformed)."""
    labels, offset = [], 12
    while offset < len(packet):
        length = packet[offset]
        if length == 0:
            return ".".join(labels), offset + 5
        labels.append(packet[offset + 1:offset + 1 + length].decode("ascii", errors="replace"))
        offset += 1 + length
    return ".".join(labels), 0


def _fill(value: str, url: str) -> str:
    return value.replace("{standin}", url)


def run(spec: dict) -> dict:
    require_loopback_only()
    script = Script(**spec.get("script", {}))
    names = NameLog(Path(spec["names_log"]), Path(spec["result"]).parent) if spec.get("names_log") else None
    standin = None
    if spec.get("endpoint", "standin") == "unreachable":
        url = unreachable_url()
    else:
        standin = StandinModel(Path(spec["log"]), script)
        url = standin.start()
    launch = spec["launch"]
    argv = [_fill(arg, url) for arg in launch["argv"]]
    env = {key: _fill(value, url) for key, value in launch["env"].items()}
    stdin_path = launch.get("stdin")
    timeout = float(spec.get("timeout", 60))
    result: dict = {"url": url, "argv": argv}
    clock = time.monotonic()
    try:
        with open(stdin_path or os.devnull, "rb") as stdin:
            process = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       cwd=launch["cwd"], env=env, start_new_session=True)
            try:
                stdout, stderr = process.communicate(timeout=timeout)
                result["status"] = "ok" if process.returncode == 0 else "error"
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                try:
                    stdout, stderr = process.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    stdout, stderr = b"", b""
                result["status"] = "timeout"
        result["exit_code"] = process.returncode
        result["stdout"] = stdout.decode("utf-8", errors="replace")
        result["stderr"] = stderr.decode("utf-8", errors="replace")
    finally:
        result["duration"] = round(time.monotonic() - clock, 3)
        if standin is not None:
            standin.stop()
        if names is not None:
            names.close()
    return result


def _run_command(command: dict, urls: dict[str, str]) -> dict:
    def fill(value: str) -> str:
        for name, url in urls.items():
            value = value.replace("{" + name + "}", url)
        return value

    argv = [fill(arg) for arg in command["argv"]]
    env = {key: fill(value) for key, value in command["env"].items()}
    clock = time.monotonic()
    result: dict = {"argv": argv, "started": time.time()}
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               cwd=command["cwd"], env=env, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=float(command.get("timeout", 120)))
        result["status"] = "ok" if process.returncode == 0 else "error"
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        try:
            stdout, stderr = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            stdout, stderr = b"", b""
        result["status"] = "timeout"
    result.update(exit_code=process.returncode, stdout=stdout.decode("utf-8", errors="replace"),
                  stderr=stderr.decode("utf-8", errors="replace"), duration=round(time.monotonic() - clock, 3))
    return result


def run_phases(spec: dict) -> dict:
    """Start the endpoints, fill their URLs in, run each phase's commands at once."""
    require_loopback_only()
    names = NameLog(Path(spec["names_log"]), Path(spec["result"]).parent) if spec.get("names_log") else None
    standins: list[StandinModel] = []
    urls: dict[str, str] = {}
    try:
        for name, endpoint in spec["endpoints"].items():
            if endpoint is None:
                urls[name] = unreachable_url()
            else:
                standin = StandinModel(Path(endpoint["log"]), Script(**endpoint.get("script", {})))
                standins.append(standin)
                urls[name] = standin.start()
        for path in spec.get("fill_files", []):
            text = Path(path).read_text("utf-8")
            for name, url in urls.items():
                text = text.replace("{" + name + "}", url)
            Path(path).write_text(text, "utf-8")
        results: dict[str, dict] = {}
        for phase in spec["phases"]:
            threads = []
            for command in phase:
                def target(command=command) -> None:
                    results[command["name"]] = _run_command(command, urls)

                thread = threading.Thread(target=target)
                thread.start()
                threads.append(thread)
            for thread in threads:
                thread.join()
        return {"status": "ok", "urls": urls, "commands": results}
    finally:
        for standin in standins:
            standin.stop()
        if names is not None:
            names.close()


def main() -> int:
    spec = json.loads(Path(sys.argv[1]).read_text("utf-8"))
    try:
        result = run_phases(spec) if "phases" in spec else run(spec)
    except NotIsolated as error:
        result = {"status": "refused", "error": str(error)}
    Path(spec["result"]).write_text(json.dumps(result), "utf-8")
    return 0 if result["status"] != "refused" else 3


if __name__ == "__main__":
    sys.exit(main())
