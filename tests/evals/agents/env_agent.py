"""A test agent that reports what it was given: argv, env var SKILL_EVAL_TEST, cwd
listing and the prompt, as JSON on stdout (for prompt/placeholder tests)."""

import json
import os
import sys

prompt = sys.stdin.read() if not sys.stdin.isatty() else ""
print(json.dumps({
    "argv": sys.argv[1:],
    "env": os.environ.get("SKILL_EVAL_TEST"),
    "cwd_files": sorted(os.listdir(".")),
    "prompt": prompt,
}))
