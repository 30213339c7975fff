#!/usr/bin/env python3
"""A test agent that behaves like a harness preset's CLI (not an agent CLI: a
script of ours, so the runner's preset path can be tested fast and anywhere).

Run as a preset agent's ``executable``. It prints what the harness named by
``$FAKE_HARNESS`` prints (claude-code, codex, gemini-cli, opencode), and logs
what it saw to ``$FAKE_HARNESS_LOG`` (one JSON line per start): its argv, its
working directory and what is in it, its environment's home and config
variables, whether stdin is /dev/null, and, per skill it discovers in the
preset's skills folder, a hash of that folder computed here (sha256 over the
sorted relative paths and bytes, each length-prefixed: a reference
implementation, not the runner's).

It answers ``verdict: NOT_PROVEN`` with ``criteria: 3`` when it discovered a
skill whose SKILL.md holds ``$FAKE_HARNESS_NEEDLE``, else ``verdict: PASS``.
``$FAKE_HARNESS_MODE``: ``answer`` (default), ``fail`` (the harness's own error,
exit 1), ``silent`` (exit 0, no answer), ``sleep`` (sleep 60 s first).
"""

import hashlib
import json
import os
import stat
import sys
import time
from pathlib import Path

SKILLS = {"claude-code": ".claude/skills", "codex": ".agents/skills", "gemini-cli": ".gemini/skills",
          "opencode": ".agents/skills"}
harness = os.environ.get("FAKE_HARNESS", "claude-code")
mode = os.environ.get("FAKE_HARNESS_MODE", "answer")
needle = os.environ.get("FAKE_HARNESS_NEEDLE", "Evidence that argues from prior behavior is not proof")
argv = sys.argv[1:]


def tree_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    entries = []
    for dirpath, _dirnames, filenames in os.walk(folder):
        for filename in filenames:
            path = Path(dirpath) / filename
            entries.append((path.relative_to(folder).as_posix().encode(), path.read_bytes()))
    for name, data in sorted(entries):
        digest.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


if harness == "gemini-cli":
    prompt = next(arg[len("--prompt="):] for arg in argv if arg.startswith("--prompt="))
else:
    prompt = argv[argv.index("--") + 1]
cwd = Path.cwd()
skills = {}
folder = cwd / SKILLS[harness]
for skill in sorted(folder.iterdir()) if folder.is_dir() else ():
    skills[skill.name] = {"hash": tree_hash(skill), "needle": needle in (skill / "SKILL.md").read_text("utf-8")}
stdin = os.fstat(0)
devnull = os.stat(os.devnull)
log = {
    "argv": argv, "cwd": str(cwd), "files": sorted(p.relative_to(cwd).as_posix() for p in cwd.rglob("*") if p.is_file()),
    "home": os.environ.get("HOME"), "tmpdir": os.environ.get("TMPDIR"),
    "env": {key: os.environ.get(key) for key in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GIT_DIR", "FAKE_SECRET",
                                                 "SKILL_EVAL_START_ID", "CLAUDE_CODE_MAX_RETRIES", "XDG_CONFIG_HOME")},
    "stdin_is_devnull": stat.S_ISCHR(stdin.st_mode) and stdin.st_rdev == devnull.st_rdev,
    "skills": skills, "prompt": prompt,
}
if os.environ.get("FAKE_HARNESS_LOG"):
    with open(os.environ["FAKE_HARNESS_LOG"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps(log) + "\n")

if mode == "sleep":
    time.sleep(60)
caught = any(skill["needle"] for skill in skills.values())
answer = "I reviewed it.\n\nverdict: NOT_PROVEN\ncriteria: 3\n" if caught else "I reviewed it.\n\nverdict: PASS\n"
tokens_in, tokens_out = (1500, 70) if caught else (1000, 50)

if harness == "claude-code":
    if mode == "fail":
        print(json.dumps({"type": "result", "subtype": "success", "is_error": True,
                          "result": "API Error: Unable to connect to API (ConnectionRefused)", "num_turns": 1}))
        sys.exit(1)
    if mode == "silent":
        sys.exit(0)
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": answer,
                      "duration_ms": 1234, "num_turns": 3 if caught else 1, "total_cost_usd": 0.0123,
                      "usage": {"input_tokens": tokens_in - 100, "cache_read_input_tokens": 100,
                                "cache_creation_input_tokens": 0, "output_tokens": tokens_out}}))
elif harness == "codex":
    print(json.dumps({"type": "thread.started", "thread_id": "t"}))
    if mode == "fail":
        print(json.dumps({"type": "turn.failed", "error": {"message": "stream disconnected before completion"}}))
        sys.exit(1)
    if mode != "silent":
        print(json.dumps({"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": answer}}))
        print(json.dumps({"type": "turn.completed", "usage": {"input_tokens": tokens_in, "cached_input_tokens": 100,
                                                              "output_tokens": tokens_out}}))
elif harness == "gemini-cli":
    print(json.dumps({"response": answer, "stats": {"models": {"m": {
        "api": {"totalRequests": 2, "totalLatencyMs": 10},
        "tokens": {"prompt": tokens_in, "candidates": tokens_out, "cached": 100, "thoughts": 0}}}}}))
else:
    print(json.dumps({"type": "step_start", "timestamp": 1000, "part": {}}))
    print(json.dumps({"type": "text", "timestamp": 1500, "part": {"text": answer}}))
    print(json.dumps({"type": "step_finish", "timestamp": 3000, "part": {
        "cost": 0.002, "tokens": {"input": tokens_in - 100, "output": tokens_out, "cache": {"read": 100, "write": 0}}}}))
