"""A test agent that never answers (the runner's timeout must kill it)."""

import time

print("thinking...", flush=True)
while True:
    time.sleep(60)
