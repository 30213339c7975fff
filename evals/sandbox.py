"""Sealed starts: each agent process runs in a bubblewrap sandbox that holds
only what its arm is given.

A sealed start (the default; an agent's ``sandbox = "off"`` or ``skill-eval
run --no-sandbox`` turns it off) runs its command as ``bwrap ... -- COMMAND``
(`bubblewrap <https://github.com/containers/bubblewrap>`_, Debian package
``bubblewrap``: the sandbox Flatpak and Codex's own Linux sandbox use). The
agent's file system is built from nothing:

* the system, read-only: ``/usr``, ``/etc``, ``/opt`` and the ``/bin``,
  ``/sbin``, ``/lib*`` links or folders, as on the host (no ``/sys``);
* the harness's own installation, read-only: each folder of the start's
  ``PATH`` (outside those; for ``.../bin`` or ``.../shims``, the folder
  above it, :func:`install_prefix`), the installation folder of a preset's
  executable (for an npm package, the folder holding its ``node_modules``,
  e.g. ``~/.cache/skill-eval/agent-clis/claude-code``), and each file a
  command agent's argv names by absolute path (an agent script kept in the
  workspace: that file alone);
* the start's own scratch folder, writable, at its own path: the artifact,
  the treatment's skill copy, a fresh ``HOME`` and ``TMPDIR``;
* a fresh ``/tmp``, ``/dev`` and ``/proc``.

Nothing else is there: not the workspace (``evals/``, probe.json, the
transcripts, the runs files), not the runner's home, not another start's
scratch folder. Should the workspace or the executor's scratch folder lie
below a folder that is bound (a workspace under ``/opt``), an empty folder
is mounted over it. The agent gets its own user, PID, IPC and UTS
namespaces (``--unshare-user --unshare-pid --unshare-ipc --unshare-uts``):
its ``/proc`` shows only the sandbox's processes, so the runner's
``/proc/PID/cwd`` and ``/proc/PID/fd`` are not there to follow; its
capabilities exist only inside its own user namespace, so it cannot undo
the mounts of the host. The network namespace is shared: the harness's model
endpoint stays reachable.

bwrap keeps the agent in the process group the executor kills, and
``--die-with-parent`` ends the sandbox with the thread that started it; when
its first process is killed, the kernel ends every process of its PID
namespace. Timeouts, output caps and the watchdog work as for an unsealed
start.

:func:`sandbox_problem` says, once per process, why no start can be sealed
here (not Linux, no ``bwrap`` on ``PATH``, or bwrap cannot make its
namespaces: user namespaces disabled); the runner then refuses the run
before any budget is spent, naming ``--no-sandbox``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

SANDBOX_MODES = ("on", "off")
"""An agent's ``sandbox`` setting."""

RECORDED_BWRAP = "bwrap"
RECORDED_OFF = "off"
"""What a start record's ``sandbox`` says: sealed by bwrap, or not sealed."""

SYSTEM_FOLDERS = ("/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Bound read-only (a link among them, such as ``/bin -> usr/bin``, is made
the same link); a missing one is skipped. ``/sys`` is not among them: binding
it (with its cgroup and other mounts below) doubled a start's cost in the
sandbox (22.6 against 11.0 ms at load 11), and none of the four harnesses
needs it."""

NAMESPACE_FLAGS = ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                   "--die-with-parent")

NO_SANDBOX_FIX = "pass --no-sandbox (or set sandbox = \"off\" on the agent) to run unsealed"


class SandboxError(RuntimeError):
    """A start that cannot be sealed as asked; the message names the fix."""


def _inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies below it (both absolute, normalized)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


@functools.lru_cache(maxsize=1)
def sandbox_problem() -> str | None:
    """Why no start can be sealed on this machine, or ``None``: bwrap is
    run once (~20 ms) with the namespaces a start gets."""
    if not sys.platform.startswith("linux"):
        return f"sealed starts need Linux with bubblewrap, and this is {sys.platform}"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (no bwrap on PATH; Debian/Ubuntu: apt-get install bubblewrap)"
    true = shutil.which("true", path="/usr/bin:/bin")
    if true is None:
        return "no /usr/bin/true to try the sandbox with"
    argv = [bwrap, *NAMESPACE_FLAGS, *system_binds(), "--proc", "/proc", "--dev", "/dev", true]
    try:
        probe = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap could not be run ({error})"
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bubblewrap cannot make its namespaces here ({said[-1] if said else f'exit {probe.returncode}'})"
    return None


def require_sandbox() -> str:
    """bwrap's path; :class:`SandboxError` naming ``--no-sandbox`` when no start can be sealed."""
    problem = sandbox_problem()
    if problem:
        raise SandboxError(f"cannot seal the agent's starts: {problem}; {NO_SANDBOX_FIX}")
    return shutil.which("bwrap") or "bwrap"


@functools.lru_cache(maxsize=1)
def system_binds() -> tuple[str, ...]:
    """bwrap arguments giving the system read-only, as on the host."""
    args: list[str] = []
    for folder in SYSTEM_FOLDERS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    resolv = "/etc/resolv.conf"
    if os.path.islink(resolv):  # systemd-resolved: the name server's file lives under /run
        target = os.path.realpath(resolv)
        if os.path.isfile(target) and not _inside(target, "/etc") and not _inside(target, "/usr"):
            args += ["--ro-bind", target, target]
    return tuple(args)


def _system_folder(path: str) -> bool:
    return any(_inside(path, folder) for folder in SYSTEM_FOLDERS if not os.path.islink(folder)) or any(
        _inside(path, os.path.join("/", os.readlink(folder))) for folder in SYSTEM_FOLDERS if os.path.islink(folder))


def install_root(executable: str) -> str:
    """The folder that holds a program's installation: for a file inside an
    npm package, the folder holding the outermost ``node_modules`` (where
    ``npm install --prefix`` put it, with every dependency); else the folder
    of the program's real file."""
    real = os.path.realpath(executable)
    parts = real.split("/")
    if "node_modules" in parts:
        index = parts.index("node_modules")
        return "/".join(parts[:index]) or "/"
    return os.path.dirname(real)


PREFIX_FOLDERS = ("bin", "sbin", "shims")


def install_prefix(folder: str) -> str:
    """The installation a ``PATH`` folder belongs to: the folder above a
    ``bin``, ``sbin`` or ``shims`` folder (``~/.local``, ``~/.pyenv``,
    ``~/.nvm/versions/node/v20``, a virtual environment: their programs
    need their libraries), unless that is the runner's home or ``/``;
    else the folder itself."""
    folder = os.path.normpath(folder)
    parent = os.path.dirname(folder)
    if os.path.basename(folder) in PREFIX_FOLDERS and parent not in ("/", os.path.normpath(os.path.expanduser("~"))):
        return parent
    return folder


def path_folders(env: Mapping[bytes, bytes]) -> list[str]:
    """The absolute, existing folders of the start's ``PATH`` (``env`` as bytes, as the executor holds it)."""
    found = []
    for entry in os.fsdecode(env.get(b"PATH", b"")).split(os.pathsep):
        if entry.startswith("/") and os.path.isdir(entry):
            found.append(os.path.normpath(entry))
    return found


@dataclass(frozen=True)
class SealedView:
    """What one sealed start sees, besides the system: ``writable`` (the
    start's scratch folder), ``read_only`` (folders and files of the
    harness's installation and of the command), ``hidden`` (the workspace,
    the executor's scratch folder: masked when a bound folder holds them)."""

    writable: str
    read_only: tuple[str, ...]
    hidden: tuple[str, ...]
    cwd: str


def seal_view(start_root: str, cwd: str, argv: Sequence[str], env: Mapping[bytes, bytes], *,
              hidden: Iterable[str], executable: str | None = None) -> SealedView:
    """The view of one start: its scratch folder ``start_root`` writable; read-only
    the ``PATH`` folders (:func:`install_prefix`), the installation of the
    program run (``executable``, a preset's, else ``argv[0]``; as found on
    ``PATH`` and as its real file: :func:`install_root` inside an npm
    package, else :func:`install_prefix` of its folder), and each absolute
    path in ``argv`` naming a file outside ``start_root`` (that file alone).
    An installation that would hold a hidden path (the workspace, the
    executor's scratch folder) is not bound; the folder or file it stands
    for is (and a hidden path in it is covered)."""
    start_root = os.path.normpath(os.path.abspath(start_root))
    hidden_paths = tuple(dict.fromkeys(os.path.normpath(os.path.abspath(path)) for path in hidden if path))
    read_only: list[str] = []

    def add(installation: str, folder: str) -> None:
        """Bind ``installation``, or ``folder`` (the part of it the start
        needs) when the installation would hold a hidden path (the folder
        above ``WORKSPACE/bin`` is the workspace itself); a folder that
        holds one is bound too, and :func:`bwrap_argv` covers the hidden path."""
        chosen = installation if not any(_inside(path, installation) for path in hidden_paths) else folder
        if not _system_folder(chosen) and not _inside(chosen, start_root):
            read_only.append(chosen)

    for folder in path_folders(env):
        add(install_prefix(folder), folder)
    program = executable or (argv[0] if argv else None)
    if program:
        if "/" not in program:
            program = shutil.which(program, path=os.fsdecode(env.get(b"PATH", b"")) or None) or program
        if "/" in program and os.path.exists(program):
            program = os.path.abspath(program)
            for path in (program, os.path.realpath(program)):
                root = install_root(path) if "node_modules" in path.split("/") else install_prefix(os.path.dirname(path))
                add(root, path)
    for arg in argv[1:]:
        if arg.startswith("/") and os.path.isfile(arg):
            path = os.path.normpath(arg)
            add(path, path)
            real = os.path.realpath(path)
            if real != path:
                add(real, real)
    return SealedView(start_root, tuple(dict.fromkeys(read_only)), hidden_paths, os.path.abspath(cwd))


def bwrap_argv(bwrap: str, view: SealedView, command: Sequence[str]) -> list[str]:
    """The argv that runs ``command`` sealed in ``view``.

    Order matters (a later mount covers an earlier one): the system; the
    read-only folders that lie outside every hidden path; an empty folder
    over each hidden path that a bound folder holds; the read-only paths
    inside a hidden path (an agent script in the workspace: that file
    alone); the start's folder, writable; then the working directory."""
    args = [bwrap, *NAMESPACE_FLAGS, *system_binds(), "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    inner = [path for path in view.read_only if any(_inside(path, hidden) and path != hidden for hidden in view.hidden)]
    outer = [path for path in view.read_only if path not in inner]
    for path in outer:
        args += ["--ro-bind", path, path]
    bound = [folder for folder in SYSTEM_FOLDERS if os.path.isdir(folder) and not os.path.islink(folder)] + outer
    for hidden in view.hidden:
        if any(_inside(hidden, folder) for folder in bound):
            args += ["--tmpfs", hidden]
    for path in inner:
        args += ["--ro-bind", path, path]
    args += ["--bind", view.writable, view.writable, "--chdir", view.cwd, "--", *command]
    return args


def sealed_argv(job, prepared, hidden: Iterable[str]) -> list[str]:
    """The argv running ``prepared`` (an executor's laid-out job) sealed:
    :class:`SandboxError` when no start can be sealed here. ``hidden``: the
    workspace root and the executor's scratch folder."""
    bwrap = require_sandbox()
    view = seal_view(os.fspath(prepared.root), os.fspath(prepared.cwd), prepared.argv, prepared.env, hidden=hidden,
                     executable=prepared.argv[0] if job.harness is not None else None)
    return bwrap_argv(bwrap, view, prepared.argv)
