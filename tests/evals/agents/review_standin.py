"""TEST FIXTURE: a stand-in model for ``skill-eval review`` (never shipped).

Reads the review prompt on stdin and answers as a model would: one JSON
object of findings. It "judges" with a script, not a model: a numbered
artifact line holding one of the scripted phrases (``--flag PHRASE=KIND``)
is a finding of that kind. Each start appends a line to ``--log`` so that a
test can count the calls (the review must ask once per artifact content).
``--garbage`` answers prose without any JSON.
"""

import argparse
import json
import re
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--log")
parser.add_argument("--flag", action="append", default=[])
parser.add_argument("--garbage", action="store_true")
args = parser.parse_args()
prompt = sys.stdin.read()
if args.log:
    with open(args.log, "a", encoding="utf-8") as log:
        log.write(json.dumps({"chars": len(prompt), "has_instructions": "signpost:" in prompt and "key-leak:" in prompt}) + "\n")
if args.garbage:
    print("I think the artifact looks fine overall.")
    raise SystemExit(0)
findings = []
body = prompt.split("The artifact, with line numbers:", 1)[-1]
for line in body.splitlines():
    match = re.match(r"\s*(\d+)\| (.*)", line)
    if not match:
        continue
    for rule in args.flag:
        phrase, kind = rule.rsplit("=", 1)
        if phrase.lower() in match.group(2).lower():
            findings.append({"line": int(match.group(1)), "kind": kind, "text": phrase,
                             "reason": f"the line points at the planted flaw ({phrase})"})
print("Here is my review.")
print(json.dumps({"findings": findings}))
