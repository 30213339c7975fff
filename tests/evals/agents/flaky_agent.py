"""A test agent that fails its first start and answers afterwards.

usage: flaky_agent.py STATE_FILE: the first start (no STATE_FILE yet) creates it
and exits 1; later starts answer `verdict: PASS`.
"""

import os
import sys

sys.stdin.read()
state = sys.argv[1]
if not os.path.exists(state):
    open(state, "w").close()
    sys.exit(1)
print("verdict: PASS")
