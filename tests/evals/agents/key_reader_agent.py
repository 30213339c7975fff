#!/usr/bin/env python3
"""A test agent that answers with a catch, and copies into its answer what it
was pointed at: an unsealed run, where an agent can read the answer key.

usage: key_reader_agent.py [--read FILE] [--grep TEXT] [--quote-prompt] [--quote-artifact NAME]
                           [--log FILE] [--answer TEXT]

--read FILE      read FILE (e.g. the probe's probe.json)
--grep TEXT      print only the lines of FILE holding TEXT (default: all of it)
--quote-prompt   print the prompt it was handed (the artifact, verbatim) first
--quote-artifact NAME  print the file NAME of its working folder (the artifact it was handed)
--answer TEXT    the answer's fields (default: a catch of the test suite's D1)
--log FILE       append one JSON line: the start id and exactly what it printed
                 (ground truth the runner does not write)
"""

import argparse
import json
import os
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--read")
parser.add_argument("--grep")
parser.add_argument("--quote-prompt", action="store_true")
parser.add_argument("--quote-artifact")
parser.add_argument("--answer", default="verdict: NOT_PROVEN\ncriteria: 3")
parser.add_argument("--log")
args = parser.parse_args()

prompt = sys.stdin.read()
parts = []
if args.quote_prompt:
    parts.append(prompt)
if args.quote_artifact:
    with open(args.quote_artifact, encoding="utf-8") as handle:
        parts.append(handle.read())
if args.read:
    with open(args.read, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    parts.append("\n".join(line for line in lines if args.grep is None or args.grep in line))
parts.append(args.answer)
printed = "\n\n".join(parts) + "\n"
sys.stdout.write(printed)
if args.log:
    with open(args.log, "a", encoding="utf-8") as log:
        log.write(json.dumps({"start_id": os.environ.get("SKILL_EVAL_START_ID"), "printed": printed}) + "\n")
