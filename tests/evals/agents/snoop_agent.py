"""A test agent that looks for the answer key through every path it is handed.

It walks, downwards: its working directory and the folder above it, every
argument naming an existing path (but its own script), the folders the
runner's environment variables name (PWD, OLDPWD, TMPDIR, TMP, TEMP,
SKILL_EVAL_*: the rest is the user's own environment), and the prompt file's
folder. It reports, as JSON on stdout,
what it found that an arm must never see (probe.json, frozen.json, runs or
answers, transcripts, any file holding a probe.json's keys, a run record or a
transcript's labels; the artifact itself carries the defects' quotes by design) and
which files the skill folder it was given (if any) holds.
"""

import json
import os
import sys

args = sys.argv[1:]
prompt_path = None
skill_dir = None
for index, arg in enumerate(args):
    if arg == "--prompt-file":
        prompt_path = args[index + 1]
    if arg == "--skill-dir":
        skill_dir = args[index + 1]
prompt = open(prompt_path, encoding="utf-8").read() if prompt_path else sys.stdin.read()

me = os.path.realpath(__file__)
roots = {os.getcwd(), os.path.dirname(os.getcwd())}
for arg in args:
    if os.path.exists(arg) and os.path.realpath(arg) != me:
        roots.add(arg if os.path.isdir(arg) else os.path.dirname(arg))
for name, value in os.environ.items():
    if name in ("PWD", "OLDPWD", "TMPDIR", "TMP", "TEMP") or name.startswith("SKILL_EVAL"):
        if os.path.isdir(value) and os.path.realpath(value) != "/":
            roots.add(value)

found = []
seen = set()
for root in sorted(roots):
    for folder, subfolders, files in os.walk(root):
        real = os.path.realpath(folder)
        if real in seen:
            subfolders[:] = []
            continue
        seen.add(real)
        for name in subfolders:
            if name in ("evals", "runs", "answers", "transcripts"):
                found.append(os.path.join(folder, name))
        for name in files:
            path = os.path.join(folder, name)
            if name in ("probe.json", "frozen.json") or name.endswith(".jsonl"):
                found.append(path)
                continue
            try:
                with open(path, "rb") as handle:
                    data = handle.read(1 << 20)
            except OSError:
                continue
            if b"caught_when" in data or b"seeded_defects" in data or b'"start_id"' in data or b"expect:" in data:
                found.append(path)

skill_files = sorted(os.listdir(skill_dir)) if skill_dir else []
print(json.dumps({"found": sorted(set(found)), "skill_files": skill_files, "cwd_files": sorted(os.listdir(".")),
                  "roots": sorted(roots), "skill_in_prompt": "Evidence that argues" in prompt}))
