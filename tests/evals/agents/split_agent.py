"""A test agent that answers at once when the skill's text is in its prompt
(the treatment arm) and never answers otherwise (the control arm): a run of
both arms has finished starts and running ones when it is cancelled."""

import sys
import time

NEEDLE = "Evidence that argues from prior behavior is not proof"

prompt = sys.stdin.read()
if NEEDLE in prompt:
    print("Here is my closeout review.\n\nverdict: NOT_PROVEN\ncriteria: 3")
else:
    print("thinking...", flush=True)
    while True:
        time.sleep(60)
