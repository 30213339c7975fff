"""A test agent that fails: writes to stderr and exits with status 3."""

import sys

sys.stdin.read()
print("partial output before the crash")
print("Traceback (most recent call last): boom", file=sys.stderr)
sys.exit(3)
