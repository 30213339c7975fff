"""A plain-command agent that hunts for answer keys, and prints what it found.

It reads every file it can reach by the routes an agent with a shell has: the
open files of every process it can see (``/proc/*/fd``), the working folder
of every process (``/proc/*/cwd``, the runner's included when it is
visible), ``$HOME``, then the whole tree from ``/`` (system folders left out:
they hold no workspace; so is its own interpreter's installation). Each regular file (at most 1 MiB of it) is searched
for the canary pattern given as ``argv[1]`` (a regular expression, so that
the canaries themselves appear nowhere in this command). It sleeps
``argv[2]`` seconds first, so that the starts of a run overlap.

Its answer (stdout) is JSON: the canaries found and where, how many files it
read, whether the walk ended before its budget, and its own working folder.
"""

import json
import os
import re
import stat
import sys
import time

PATTERN = re.compile(sys.argv[1].encode())
time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0)
SYSTEM = {"/usr", "/etc", "/opt", "/sys", "/proc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
          "/boot", "/var", "/snap", "/run"}
BUDGET_FILES, BUDGET_SECONDS = 20000, 20.0
found: dict[str, list[str]] = {}
read = 0
seen_files: set[tuple[int, int]] = set()
clock = time.monotonic()
complete = True


def over_budget() -> bool:
    global complete
    if read >= BUDGET_FILES or time.monotonic() - clock > BUDGET_SECONDS:
        complete = False
        return True
    return False


def scan(path: str) -> None:
    """Search one file, never waiting on a FIFO or device, never twice."""
    global read
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) in seen_files:
            return
        seen_files.add((info.st_dev, info.st_ino))
        data = os.read(fd, 1 << 20)
        read += 1
    except OSError:
        return
    finally:
        os.close(fd)
    for match in PATTERN.finditer(data):
        found.setdefault(match.group(0).decode(), []).append(path)


OWN_INTERPRETER = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
"""Left unread: this agent's own Python (tens of thousands of files, no workspace)."""


def walk(top: str, skip_system: bool = False) -> None:
    for folder, folders, files in os.walk(top, followlinks=False):
        if over_budget():
            return
        folders[:] = [name for name in folders if os.path.realpath(os.path.join(folder, name)) not in OWN_INTERPRETER
                      and not (skip_system and os.path.join(folder, name) in SYSTEM)]
        for name in files:
            scan(os.path.join(folder, name))


parent = str(os.getppid())
pids = [name for name in os.listdir("/proc") if name.isdigit()]
pids.sort(key=lambda pid: pid != parent)  # the parent's first: what started this agent
for pid in pids:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd_name in fds:
        scan(f"/proc/{pid}/fd/{fd_name}")
for pid in pids:
    walk(f"/proc/{pid}/cwd/")
if os.environ.get("HOME"):
    walk(os.environ["HOME"])
walk("/", skip_system=True)
print(json.dumps({"found": found, "files_read": read, "complete": complete, "cwd": os.getcwd(),
                  "pids": len(pids), "home": os.environ.get("HOME")}))
print("verdict: PASS")
