"""A test agent for calibration that keeps its own record of its starts (the
ground truth the runner does not write) and catches a probe's defects in the
arms it is told to.

usage: calib_agent.py --log FILE [--control MARKER]... [--treatment MARKER]...
                      [--partial MARKER]... [--fail MARKER]... [--fail-first MARKER]...
                      [--markers M1,M2] [--sleep S]

The arm is read from what the agent is handed: the treatment's prompt holds
SKILL.md (``treatment = "prepend"``), whose text holds --needle. The probe is
told apart by a MARKER found in its artifact. With ``--control M`` the control
arm catches every defect of the probe whose artifact holds M; with
``--treatment M`` the treatment arm does. Otherwise it answers PASS (a miss).
``--partial M``: the control arm catches only the defect of criterion 2 (one
of a band probe's two). ``--fail M`` exits 3 without an answer on that probe
(an error start); ``--fail-first M`` does so on the first start of each arm
only (remembered in a file beside the log). ``--markers`` names markers that
only tell probes apart.

Each start appends "<pid> <SKILL_EVAL_START_ID> <arm> <marker or -> start"
to --log, flushed and fsync'd, before anything else.
"""

import argparse
import os
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--log", required=True)
parser.add_argument("--control", action="append", default=[])
parser.add_argument("--treatment", action="append", default=[])
parser.add_argument("--fail", action="append", default=[])
parser.add_argument("--fail-first", action="append", default=[])
parser.add_argument("--partial", action="append", default=[])
parser.add_argument("--markers", action="append", default=[])
parser.add_argument("--needle", default="Evidence that argues from prior behavior is not proof")
parser.add_argument("--sleep", type=float, default=0.0)
args = parser.parse_args()

prompt = sys.stdin.read()
arm = "treatment" if args.needle in prompt else "control"
markers = ([m for group in args.markers for m in group.split(",") if m] + args.control + args.treatment + args.fail + args.fail_first
           + args.partial)
marker = next((m for m in markers if m in prompt), "-")
fd = os.open(args.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
try:
    os.write(fd, f"{os.getpid()} {os.environ.get('SKILL_EVAL_START_ID', '?')} {arm} {marker} start\n".encode())
    os.fsync(fd)
finally:
    os.close(fd)
if args.sleep:
    time.sleep(args.sleep)
if marker in args.fail:
    sys.exit(3)
if marker in args.fail_first:
    state = f"{args.log}.{arm}.{marker.replace(' ', '_')}.failed"
    if not os.path.exists(state):
        open(state, "w").close()
        sys.exit(3)
if arm == "control" and marker in args.partial:
    print("verdict: NOT_PROVEN\ncriteria: 2")
    sys.exit(0)
catches = marker in (args.control if arm == "control" else args.treatment)
print("Here is my closeout review.\n")
print("verdict: NOT_PROVEN\ncriteria: 2, 3, 4" if catches else "verdict: PASS")
