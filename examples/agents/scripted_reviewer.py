#!/usr/bin/env python3
"""A scripted stand-in for a model, so that `skill-eval run` can be tried with
no model at hand. It is NOT an evaluation of anything: replace it with your
agent's CLI in skill-eval.toml (see the README).

It reads the prompt on stdin and reviews the closeout table the way the
closeout-review skill teaches, but only when the skill's text came with the
prompt (the treatment arm prepends SKILL.md): then it flags every criterion
whose evidence argues from prior behavior, is self-graded, skipped or
deferred. Without the skill (the control arm) it skims and signs off.
"""

import json
import re
import sys

TELLS = ("unchanged", "already", "existing", "verified by the implementing", "reviewed by the author",
         "skipped", "deferred", "same one")

prompt = sys.stdin.read()
with_skill = "Match each criterion to direct evidence" in prompt
unproven = []
if with_skill:
    for line in prompt.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        numbered = re.match(r"^\**(\d+)[.)]?\**", cells[0]) if cells and cells[0] else None
        if numbered and any(tell in line.lower() for tell in TELLS):
            unproven.append(numbered.group(1))
answer = {"verdict": "NOT_PROVEN" if unproven else "PASS", "unproven": unproven}
print("Closeout review.\n")
print(json.dumps(answer))
