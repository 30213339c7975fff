"""A stand-in agent for skill-creator suites: logs each start it makes (one
JSON line: the prompt's first line and whether the skill was in its prompt)
and the files of its working folder with their sha256) to the file named
by its first argument, then answers. With the skill in
its prompt it answers "used the openalex skill", without it "no skill"."""

import hashlib
import json
import os
import sys

prompt = sys.stdin.read()
with_skill = "name: openalex" in prompt
with open(sys.argv[1], "a", encoding="utf-8") as log:
    files = {}
    for folder, _dirs, names in os.walk("."):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                files[os.path.relpath(path).replace(os.sep, "/")] = hashlib.sha256(handle.read()).hexdigest()
    log.write(json.dumps({"pid": os.getpid(), "prompt": prompt.strip().splitlines()[-1], "skill": with_skill,
                          "files": files}) + "\n")
print("answer: used the openalex skill" if with_skill else "answer: no skill")
