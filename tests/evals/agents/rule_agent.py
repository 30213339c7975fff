"""A test agent that answers by a rule: it catches the defect iff the skill's
text is in what it was handed (the prompt, or a --skill-dir given by the
treatment arm's args).

usage: rule_agent.py [--prompt-file F] [--skill-dir D] [--needle TEXT]
                     [--hit ANSWER] [--miss ANSWER] [--sleep SECONDS] [--log FILE]
The prompt comes from --prompt-file or stdin. --log appends one line per start.
"""

import argparse
import os
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--prompt-file")
parser.add_argument("--skill-dir")
parser.add_argument("--needle", default="Evidence that argues from prior behavior is not proof")
parser.add_argument("--hit", default="verdict: NOT_PROVEN\ncriteria: 3")
parser.add_argument("--miss", default="verdict: PASS")
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--log")
args = parser.parse_args()

if args.prompt_file:
    with open(args.prompt_file, encoding="utf-8") as handle:
        prompt = handle.read()
else:
    prompt = sys.stdin.read()
seen = prompt
if args.skill_dir:
    with open(os.path.join(args.skill_dir, "SKILL.md"), encoding="utf-8") as handle:
        seen += handle.read()
if args.log:
    with open(args.log, "a", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()} start\n")
if args.sleep:
    time.sleep(args.sleep)
print("Here is my closeout review.\n")
print((args.hit if args.needle in seen else args.miss).replace("\\n", "\n"))
