"""A test agent that keeps its own record of its starts (ground truth the
runner does not write) and can misbehave on demand.

usage: probe_agent.py [--log FILE] [--sleep S] [--child-sleep S] [--answer TEXT]
                      [--out-bytes N] [--err-bytes N] [--runs-dir DIR]

--log FILE       append "<pid> <SKILL_EVAL_START_ID> start" (flushed and fsync'd) first thing
--sleep S        then sleep S seconds
--child-sleep S  start a child that sleeps S seconds holding stdout open (its pid is logged)
--out-bytes N    write N bytes of filler to stdout before the answer
--err-bytes N    write N bytes of filler to stderr
--runs-dir DIR   report whether this start's start record was on disk in DIR when it began
--close-early    close stdout and stderr after answering, then take a moment to exit (as coreutils do)
"""

import argparse
import json
import os
import subprocess
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--log")
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--child-sleep", type=float, default=0.0)
parser.add_argument("--answer", default="verdict: NOT_PROVEN\ncriteria: 3")
parser.add_argument("--out-bytes", type=int, default=0)
parser.add_argument("--err-bytes", type=int, default=0)
parser.add_argument("--runs-dir")
parser.add_argument("--close-early", action="store_true")
args = parser.parse_args()

start_id = os.environ.get("SKILL_EVAL_START_ID", "?")


def log(line: str) -> None:
    if args.log:
        fd = os.open(args.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)


log(f"{os.getpid()} {start_id} start")
recorded = None
if args.runs_dir:
    recorded = False
    for name in os.listdir(args.runs_dir):
        if name.endswith(".jsonl"):
            with open(os.path.join(args.runs_dir, name), encoding="utf-8") as handle:
                for line in handle:
                    if '"type":"start"' in line and f'"start_id":"{start_id}"' in line:
                        recorded = True
if not sys.stdin.isatty():
    sys.stdin.read()
if args.child_sleep:
    child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({args.child_sleep})"])
    log(f"{child.pid} {start_id} child")
if args.sleep:
    time.sleep(args.sleep)
if args.err_bytes:
    sys.stderr.write("e" * args.err_bytes)
    sys.stderr.flush()
if args.out_bytes:
    sys.stdout.write("x" * args.out_bytes + "\n")
if recorded is not None:
    print(json.dumps({"recorded_before_spawn": recorded}))
print(args.answer.replace("\\n", "\n"), flush=True)
if args.close_early:
    sys.stdout.flush()
    os.close(1)
    os.close(2)
    time.sleep(0.5)
    os._exit(0)
