"""A test agent that reports what it was given: argv, env var SKILL_EVAL_TEST, cwd
listing and the prompt, as JSON on stdout (for prompt/placeholder tests).
With --prompt-file F the prompt is read from F. With --litter it then leaves a file and a folder in its working directory."""

import json
import os
import sys

prompt = sys.stdin.read() if not sys.stdin.isatty() else ""
if "--prompt-file" in sys.argv:
    with open(sys.argv[sys.argv.index("--prompt-file") + 1], encoding="utf-8") as handle:
        prompt = handle.read()
print(json.dumps({
    "argv": sys.argv[1:],
    "env": os.environ.get("SKILL_EVAL_TEST"),
    "cwd_files": sorted(os.listdir(".")),
    "prompt": prompt,
}))
if "--litter" in sys.argv:
    os.makedirs("left-behind", exist_ok=True)
    with open("left-behind.txt", "w") as handle:
        handle.write("state from an earlier start")
