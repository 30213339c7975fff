#!/usr/bin/env python3
"""Benchmark of the language server, driven by a real LSP client over stdio.

usage: python benchmarks/lsp_bench.py [--probes 1000] [--big 10000] [--edits 60] [--scans 5]
                                     [--server-python PYTHON] [--work DIR]

Builds trees with benchmarks/make_bench_corpus.py, starts
``python -m skill_eval.server`` as a subprocess with pytest-lsp's
``LanguageClient`` (VS Code's capabilities: utf-16, work-done progress) and
prints:

* start-up scan of N probes: ``initialized`` -> the scan's progress ``end``,
  cold (no ``.skill-eval-cache/``) and, over ``--scans`` more starts, warm
  (the cache the previous start left; median);
* question.md didChange -> publishDiagnostics of its probe (p50/p95 over
  ``--edits`` edits, one edit at a time, >= 100 ms apart so that each edit is
  the first of its debounce window);
* SKILL.md heading edit (unsaved) -> every probe using that skill re-published;
* RSS of the server after scanning ``--big`` probes, and its peak (VmRSS,
  VmHWM from /proc).

``--server-python`` runs the server of another install (a regular one, or
an older version for a baseline); the client runs here.

Goals: question p95 <= 20 ms, SKILL.md <= 300 ms, cold scan <= 2 s, warm
scan of 1,000 probes <= 0.5 s, RSS at 10,000 probes <= 150 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

CORPUS = Path(__file__).resolve().with_name("make_bench_corpus.py")
TIMEOUT = 600.0


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.publish_times = {}  # uri -> list of perf_counter times
    client.scan_end = None

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams):
        client.diagnostics[params.uri] = params.diagnostics
        client.publish_times.setdefault(params.uri, []).append(time.perf_counter())

    def progress(client: LanguageClient, params: types.ProgressParams):
        value = params.value or {}
        if value.get("kind") == "end":
            client.scan_end = time.perf_counter()

    def create_progress(client: LanguageClient, params):
        return None

    def register(client: LanguageClient, params):
        return None

    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[types.PROGRESS] = progress
    features[types.WINDOW_WORK_DONE_PROGRESS_CREATE] = create_progress
    features[types.CLIENT_REGISTER_CAPABILITY] = register
    register_lsp_features(client, features)
    return client


async def wait_for(predicate, timeout: float = TIMEOUT, what: str = ""):
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.0005)


def build(folder: Path, probes: int) -> Path:
    if not (folder / "skill-eval.toml").exists():
        subprocess.run([sys.executable, str(CORPUS), str(folder), "--probes", str(probes)], check=True,
                       stdout=subprocess.DEVNULL)
    return folder


SERVER_PYTHON = [sys.executable]


async def start(root: Path) -> tuple[LanguageClient, float]:
    client = make_client()
    await client.start_io(*SERVER_PYTHON, "-m", "skill_eval.server")
    client.capabilities = client_capabilities("visual-studio-code")
    await client.initialize_async(types.InitializeParams(
        capabilities=client.capabilities, process_id=os.getpid(), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))
    started = time.perf_counter()
    client.initialized(types.InitializedParams())
    await wait_for(lambda: client.scan_end is not None, what="the start-up scan")
    return client, client.scan_end - started


async def stop(client: LanguageClient) -> None:
    await asyncio.wait_for(client.shutdown_async(None), 30)
    client.exit(None)
    await asyncio.wait_for(client._server.wait(), 30)


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """The process's resident memory now (``VmRSS``) or at its peak so far
    (``VmHWM``: every moment of a scan), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def published_after(client: LanguageClient, uris: list[str], t0: float, what: str) -> float:
    await wait_for(lambda: all(any(t >= t0 for t in client.publish_times.get(u, ())) for u in uris), what=what)
    return max(min(t for t in client.publish_times[u] if t >= t0) for u in uris) - t0


async def bench_edits(client: LanguageClient, root: Path, edits: int) -> dict:
    probes = sorted(root.glob("skills/*/evals/probes/*/probe.json"))
    probe = probes[len(probes) // 2]
    question = probe.parent / "question.md"
    text = question.read_text(encoding="utf-8")
    q_uri = question.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=q_uri, language_id="markdown", version=1, text=text)))
    await published_after(client, [q_uri], 0, "didOpen diagnostics")
    latencies = []
    for i in range(edits):
        await asyncio.sleep(0.12)  # past the 100 ms debounce window: each edit leads its window
        t0 = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=q_uri, version=i + 2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text + f"\nEdit number {i}.\n")]))
        latencies.append(await published_after(client, [probe.as_uri()], t0, "question.md edit"))
    # a burst of keystrokes 10 ms apart: the debounce coalesces them
    before = len(client.publish_times.get(probe.as_uri(), []))
    t_burst = time.perf_counter()
    for i in range(20):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=q_uri, version=1000 + i),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text + f"\nTyping {i}.\n")]))
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)
    burst_lints = len(client.publish_times.get(probe.as_uri(), [])) - before
    burst_time = time.perf_counter() - t_burst

    skill = probe.parents[3] / "SKILL.md"
    dependents = [p.as_uri() for p in probes if skill.parent in p.parents]
    skill_text = skill.read_text(encoding="utf-8")
    s_uri = skill.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=s_uri, language_id="markdown", version=1, text=skill_text)))
    await asyncio.sleep(0.5)
    skill_times = []
    for i in range(5):
        await asyncio.sleep(0.3)
        heading = next(line for line in skill_text.splitlines() if line.startswith("## Step 1:"))
        t0 = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=s_uri, version=i + 2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(
                text=skill_text.replace(heading, heading + (" (edited)" if i % 2 == 0 else ""), 1))]))
        skill_times.append(await published_after(client, dependents, t0, "SKILL.md dependents"))
    return {
        "question_p50": statistics.median(latencies) * 1000,
        "question_p95": sorted(latencies)[max(int(len(latencies) * 0.95) - 1, 0)] * 1000,
        "question_max": max(latencies) * 1000,
        "burst_lints": burst_lints,
        "burst_ms": burst_time * 1000,
        "skill_dependents": len(dependents),
        "skill_ms": [round(t * 1000, 1) for t in skill_times],
    }


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--probes", type=int, default=1000)
    parser.add_argument("--big", type=int, default=10000, help="probes for the memory figure (0: skip)")
    parser.add_argument("--edits", type=int, default=60)
    parser.add_argument("--scans", type=int, default=5, help="warm starts timed after the cold one (0: skip)")
    parser.add_argument("--server-python", help="the interpreter whose skill_eval.server is timed (default: this one)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "skill-eval-lsp-bench")
    args = parser.parse_args(argv)
    if args.server_python:
        SERVER_PYTHON[:] = [args.server_python]
    root = build(args.work / f"corpus-{args.probes}", args.probes)
    shutil.rmtree(root / ".skill-eval-cache", ignore_errors=True)
    client, scan = await start(root)
    print(f"start-up scan of {args.probes} probes, cold: {scan:.2f} s (goal <= 2 s)")
    if args.scans:
        await stop(client)
        warm = []
        for _ in range(args.scans):
            client, seconds = await start(root)
            warm.append(seconds)
            await stop(client)
        print(f"start-up scan of {args.probes} probes, warm cache: median {statistics.median(warm):.3f} s, "
              f"min {min(warm):.3f} s over {len(warm)} starts (goal <= 0.5 s)")
        client, _seconds = await start(root)
    print(f"RSS after scanning {args.probes} probes: {rss_mb(client._server.pid):.0f} MB")
    if args.edits:
        figures = await bench_edits(client, root, args.edits)
        print(f"question.md didChange -> publishDiagnostics over {args.edits} edits: "
              f"p50 {figures['question_p50']:.1f} ms, p95 {figures['question_p95']:.1f} ms, "
              f"max {figures['question_max']:.1f} ms (goal p95 <= 20 ms)")
        print(f"  burst of 20 keystrokes 10 ms apart ({figures['burst_ms']:.0f} ms): {figures['burst_lints']} lints (debounced)")
        print(f"SKILL.md edit -> all {figures['skill_dependents']} dependent probes re-published: "
              f"{figures['skill_ms']} ms (goal <= 300 ms)")
    await stop(client)
    if args.big:
        big = build(args.work / f"corpus-{args.big}", args.big)
        shutil.rmtree(big / ".skill-eval-cache", ignore_errors=True)
        for label in ("cold", "warm cache"):
            client, scan = await start(big)
            after_scan = rss_mb(client._server.pid)
            await asyncio.sleep(2)  # the warm-up lint after the scan
            settled = rss_mb(client._server.pid)
            peak = rss_mb(client._server.pid, "VmHWM")
            print(f"start-up scan of {args.big} probes, {label}: {scan:.2f} s; RSS {after_scan:.0f} MB after it, "
                  f"{settled:.0f} MB 2 s later, peak {peak:.0f} MB (goal <= 150 MB at every moment)")
            await stop(client)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
