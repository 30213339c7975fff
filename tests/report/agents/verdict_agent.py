"""A test agent that reviews by a rule and keeps its own record: it catches
every planted gap iff the skill's text came with the prompt (the treatment
arm prepends SKILL.md), and logs what it decided per start, so tests compare
what the report shows with what the agent did, not with the runner's records.

usage: verdict_agent.py --log FILE [--gate FILE] [--invert]

--log FILE    append "<SKILL_EVAL_START_ID> hit|miss" (flushed, fsync'd) before answering
--gate FILE   every start after the first one logged waits until FILE exists (at most 120 s)
--invert      catch only WITHOUT the skill (an adverse probe: the skill hurts)
The answer names the start, so every answer is distinct.
"""

import argparse
import os
import sys
import time

NEEDLE = "Evidence that argues from prior behavior is not proof"

parser = argparse.ArgumentParser()
parser.add_argument("--log", required=True)
parser.add_argument("--gate")
parser.add_argument("--invert", action="store_true")
args = parser.parse_args()

prompt = sys.stdin.read()
start_id = os.environ.get("SKILL_EVAL_START_ID", "?")
hit = (NEEDLE in prompt) != args.invert
try:
    with open(args.log, encoding="utf-8") as handle:
        earlier = sum(1 for _line in handle)
except FileNotFoundError:
    earlier = 0
if args.gate and earlier:
    deadline = time.monotonic() + 120
    while not os.path.exists(args.gate) and time.monotonic() < deadline:
        time.sleep(0.02)
fd = os.open(args.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
try:
    os.write(fd, f"{start_id} {'hit' if hit else 'miss'}\n".encode())
    os.fsync(fd)
finally:
    os.close(fd)
print(f"Closeout review (start {start_id}).\n")
if hit:
    print("verdict: NOT_PROVEN\ncriteria: 2, 3, 4")
else:
    print("verdict: PASS\ncriteria: none")
