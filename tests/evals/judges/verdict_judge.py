#!/usr/bin/env python3
"""A test judge (a real subprocess): reads the judge input on stdin, appends
it to ``$JUDGE_LOG`` (one JSON line), and prints a verdict.

usage: verdict_judge.py [--mode MODE]
MODE ``rule`` (default): caught when the fields read from the answer say
``verdict`` NOT_PROVEN and ``criteria`` holds "3"; ``always``: caught;
``never``: missed; ``sleep``: sleeps 60 s (and leaves a child holding stdout);
``garbage``: prints prose; ``nobool``: ``{"caught": "yes"}``; ``exit``: exits 3
after writing to stderr.
"""

import json
import os
import subprocess
import sys
import time

mode = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else "rule"
payload = json.loads(sys.stdin.read())
if os.environ.get("JUDGE_LOG"):
    with open(os.environ["JUDGE_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"mode": mode, "cwd": os.getcwd(), "argv": sys.argv, **payload}) + "\n")
if mode == "sleep":
    subprocess.Popen(["sleep", "60"])
    time.sleep(60)
if mode == "garbage":
    print("The answer looks right to me.")
    sys.exit(0)
if mode == "nobool":
    print(json.dumps({"caught": "yes"}))
    sys.exit(0)
if mode == "exit":
    print("judge model unavailable", file=sys.stderr)
    sys.exit(3)
fields = payload["fields"]
criteria = fields.get("criteria", [])
criteria = criteria if isinstance(criteria, list) else [part.strip() for part in criteria.split(",")]
if mode == "always":
    caught = True
elif mode == "never":
    caught = False
else:
    caught = fields.get("verdict") == "NOT_PROVEN" and "3" in criteria
print(json.dumps({"caught": caught, "reason": f"verdict {fields.get('verdict')!r}, criteria {criteria!r}"}))
