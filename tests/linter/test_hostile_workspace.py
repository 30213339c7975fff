"""Hostile workspaces: links out of the root, FIFOs, devices, huge sparse files.

Every file the engine reads goes through one safe opener
(:meth:`LintSession.read_safely`): a file whose real path is outside the
workspace root is never opened (SE004), anything but a regular file is never
read or waited on (SE005), and a file over the size limit is refused from its
``fstat`` size before a byte is read (one SE005).

"Never opened" is checked against the interpreter's own record of every file
it opens (a ``sys.addaudithook`` on the ``open`` event, which ``os.open``,
``open`` and ``io.open`` all raise) and, for the CLI in a separate process
with helpers, against the kernel's (``strace``).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from skill_eval.linter.context import LintSession
from skill_eval.linter.config import Config
from skill_eval.linter.engine import lint_paths
from skill_eval.server.overlay import OverlayReader

from _workspaces import SKILL, SPEC, floor_probe, make_workspace, probe_folder

SECRET = "# Secret\n\n## `password: hunter2`\n\nroot:x:0:0:credentials\n"

_OPENED: list[str] | None = None
"""Paths opened while a test records them (see :func:`_audit`)."""


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _OPENED is not None and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # audit hooks cannot be removed; it records only inside `recording_opens`


class recording_opens:
    """Record every path this interpreter opens inside the ``with`` block."""

    def __enter__(self) -> list[str]:
        global _OPENED
        _OPENED = []
        return _OPENED

    def __exit__(self, *exc_info) -> None:
        global _OPENED
        _OPENED = None


def _hostile_workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace whose walk finds links out of it in every role the engine
    reads, and the folder outside they point into (each target holds SECRET)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("spec.md", "skill.md", "probe.json", "question.md", "runs.jsonl", "frozen.json", "cfg.toml"):
        (outside / name).write_text(SECRET, encoding="utf-8")
    (outside / "probe.json").write_text(json.dumps(floor_probe("stolen")), encoding="utf-8")
    root = make_workspace(tmp_path / "ws", {"p": floor_probe("p"), "q": floor_probe("q", question="q.md")})
    skill = root / "skill"
    (skill / "output-spec.md").unlink()
    (skill / "output-spec.md").symlink_to(outside / "spec.md")  # found by the walk
    second = root / "second"
    second.mkdir()
    (second / "SKILL.md").symlink_to(outside / "skill.md")  # found by the walk
    linked_probe = probe_folder(root, "linked")
    linked_probe.mkdir()
    (linked_probe / "probe.json").symlink_to(outside / "probe.json")  # found by the walk
    (linked_probe / "question.md").symlink_to(outside / "question.md")
    (probe_folder(root, "q") / "q.md").symlink_to(outside / "question.md")  # referenced
    (skill / "evals" / "runs").mkdir(parents=True)
    (skill / "evals" / "runs" / "run.jsonl").symlink_to(outside / "runs.jsonl")
    (skill / "evals" / "frozen.json").symlink_to(outside / "frozen.json")
    return root, outside


def _outside_reads(opened: list[str], outside: Path) -> list[str]:
    real_outside = os.path.realpath(outside)
    return [path for path in opened if os.path.realpath(path).startswith(real_outside + os.sep)]


def test_links_out_of_the_workspace_are_never_opened(tmp_path: Path) -> None:
    root, outside = _hostile_workspace(tmp_path)
    with recording_opens() as opened:
        result = lint_paths([root], jobs=1)
    assert opened, "the audit hook saw no open at all"
    assert _outside_reads(opened, outside) == []
    se004 = {(d.path.relative_to(root).as_posix(), d.start.line) for d in result.diagnostics if d.code == "SE004"}
    assert {
        ("skill/output-spec.md", 1),
        ("second/SKILL.md", 1),
        ("skill/evals/probes/linked/probe.json", 1),
        ("skill/evals/runs/run.jsonl", 1),
        ("skill/evals/frozen.json", 1),
    } <= se004
    assert any(path == "skill/evals/probes/q/probe.json" for path, _line in se004)  # the referenced q.md
    shown = "\n".join(d.message for d in result.diagnostics)
    assert "hunter2" not in shown and "credentials" not in shown and "stolen" not in shown


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed (apt-get install strace)")
def test_cli_with_helpers_never_opens_a_link_out_of_the_workspace(tmp_path: Path) -> None:
    """The kernel's view, across the forked helpers of a parallel CLI run
    (enough probes to share the lint)."""
    root, outside = _hostile_workspace(tmp_path)
    make_workspace(root, {f"n{index:03d}": floor_probe(f"n{index:03d}") for index in range(130)})
    (root / "skill" / "output-spec.md").unlink()
    (root / "skill" / "output-spec.md").symlink_to(outside / "spec.md")
    trace = tmp_path / "trace"
    completed = subprocess.run(
        ["strace", "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", str(trace),
         sys.executable, "-m", "skill_eval.linter.cli", "-j", "2", "--output-format", "json", str(root)],
        capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 1, completed.stderr
    findings = json.loads(completed.stdout)
    assert any(f["code"] == "SE004" and f["filename"].endswith("output-spec.md") for f in findings)
    opened = [line.split('"')[1] for line in trace.read_text().splitlines() if '"' in line and "ENOENT" not in line]
    assert any(path.endswith("question.md") for path in opened), "strace saw no fixture opened"
    assert _outside_reads(opened, outside) == []
    assert "hunter2" not in completed.stdout


def _limited() -> None:
    """In the child: at most 2 GiB of address space, so that a regression
    reading a device or a huge file without bound fails the test instead of
    taking the machine's memory."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def _run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The CLI in a child process (a hang fails the test instead of wedging it)."""
    return subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", "-j", "1", *args],
                          capture_output=True, text=True, timeout=timeout, preexec_fn=_limited)


def test_fifos_are_refused_never_waited_on(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe("p"), "q": floor_probe("q"), "r": floor_probe("r")})
    fifos = [
        probe_folder(root, "p") / "question.md",
        probe_folder(root, "q") / "probe.json",
        root / "skill" / "output-spec.md",
        root / "skill" / "evals" / "runs" / "run.jsonl",
        root / "skill" / "evals" / "frozen.json",
    ]
    (root / "skill" / "evals" / "runs").mkdir()
    second = root / "second"
    second.mkdir()
    fifos.append(second / "SKILL.md")
    for path in fifos:
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    completed = _run_cli("--output-format", "json", str(root))
    assert completed.returncode == 1, completed.stderr
    findings = json.loads(completed.stdout)
    se005 = {os.path.relpath(f["filename"], root) for f in findings if f["code"] == "SE005"}
    assert {os.path.relpath(path, root) for path in fifos} <= se005
    assert not [f for f in findings if f["code"] == "SE000"]
    assert any(f["code"] == "SE005" and "FIFO" in f["message"] for f in findings)
    # the probe beside the FIFOs is still linted: its own finding is there
    (probe_folder(root, "r") / "probe.json").write_text(json.dumps(floor_probe("r", seeded_defects=3)), encoding="utf-8")
    again = json.loads(_run_cli("--output-format", "json", str(root)).stdout)
    assert any(f["code"] == "SE201" and Path(f["filename"]).parent.name == "r" for f in again)


def test_huge_sparse_files_are_one_se005_each_read_not_at_all(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe("p"), "q": floor_probe("q")})
    second = root / "second"
    second.mkdir()
    huge = [probe_folder(root, "p") / "question.md", probe_folder(root, "q") / "probe.json", second / "SKILL.md"]
    for path in huge:
        with open(path, "wb") as handle:
            handle.truncate(2 << 30)  # 2 GiB, sparse: no disk used
    script = (
        "import json, sys\n"
        "from skill_eval.linter.engine import lint_paths\n"
        "result = lint_paths([sys.argv[1]], jobs=1)\n"
        "print(json.dumps({'codes': [[d.code, str(d.path)] for d in result.diagnostics],"
        " 'rss_kb': [int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM:')][0]}))\n"
    )
    completed = subprocess.run([sys.executable, "-c", script, str(root)], capture_output=True, text=True, timeout=300,
                               preexec_fn=_limited)
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)
    codes = [code for code, _path in report["codes"]]
    assert codes.count("SE005") == 3 and "SE000" not in codes
    assert sorted(path for code, path in report["codes"] if code == "SE005") == sorted(map(str, huge))
    assert report["rss_kb"] < 200 * 1024, report  # 2 GiB were never read in (peak since exec: not ru_maxrss,
    # which counts the forked pytest process's pages before the exec)


def test_a_device_in_the_workspace_is_refused(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe("p")})
    artifact = probe_folder(root, "p") / "question.md"
    artifact.unlink()
    try:
        os.mknod(artifact, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # what /dev/zero is
    except (PermissionError, AttributeError, OSError):
        pytest.skip("cannot make a device node here (needs root: run the tests as root, e.g. in a container)")
    completed = _run_cli("--output-format", "json", str(root))
    assert completed.returncode == 1, completed.stderr
    assert [f["message"] for f in json.loads(completed.stdout) if f["code"] == "SE005"] == [
        "question.md is unreadable: question.md is a character device, not a regular file; replace it with a regular file"
    ]


def test_a_folder_where_a_probe_file_is_expected(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe("p", output_spec="spec-dir")})
    (probe_folder(root, "p") / "spec-dir").mkdir()
    diagnostics = lint_paths([root], jobs=1).diagnostics
    assert [d.code for d in diagnostics if d.path.name in ("spec-dir", "probe.json")] == ["SE005"]


def test_links_inside_the_workspace_are_read(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe("p")})
    shared = root / "shared"
    shared.mkdir()
    (root / "skill" / "output-spec.md").rename(shared / "spec.md")
    (root / "skill" / "output-spec.md").symlink_to(Path("..") / "shared" / "spec.md")
    (root / "skill" / "evals" / "runs").mkdir()
    (shared / "run.jsonl").write_text("", encoding="utf-8")
    (root / "skill" / "evals" / "runs" / "run.jsonl").symlink_to(shared / "run.jsonl")
    diagnostics = lint_paths([root], jobs=1).diagnostics
    assert not [d for d in diagnostics if d.code in ("SE004", "SE005", "SE000")]


def test_reader_refuses_before_reading(tmp_path: Path) -> None:
    from skill_eval.linter.reader import FileTooLarge, NotRegularFile, read_regular_file

    big = tmp_path / "big"
    with open(big, "wb") as handle:
        handle.truncate(10_000)
    with pytest.raises(FileTooLarge) as raised:
        read_regular_file(big, 9_999)
    assert raised.value.size == 10_000
    assert read_regular_file(big, 10_000) == bytes(10_000)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile):
        read_regular_file(fifo, 100)
    with pytest.raises(IsADirectoryError):
        read_regular_file(tmp_path, 100)


def test_overlay_buffers_go_through_the_same_checks(tmp_path: Path) -> None:
    """The language server's unsaved buffers are served first, under the same
    size limit; a buffer for a path that links out of the workspace is still
    refused (the link decides, not where the text comes from)."""
    root = make_workspace(tmp_path / "ws", {"p": floor_probe("p")})
    outside = tmp_path / "outside.md"
    outside.write_text(SECRET, encoding="utf-8")
    artifact = probe_folder(root, "p") / "question.md"
    spec = root / "skill" / "output-spec.md"
    spec.unlink()
    spec.symlink_to(outside)
    buffers = {artifact: "x" * 50, spec: SPEC, root / "skill" / "SKILL.md": SKILL}
    session = LintSession(root, Config(max_file_size=40), OverlayReader(buffers))
    assert session.load(spec).kind == "outside"
    assert session.load(artifact).kind == "unreadable"
    assert "50 bytes" in session.load(artifact).message
    buffers[artifact] = "short"
    session.forget_many((artifact,))
    assert session.load(artifact).text == "short"


def test_a_huge_config_file_is_refused_not_read(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe("p")})
    with open(root / "skill-eval.toml", "wb") as handle:
        handle.truncate(2 << 30)
    completed = _run_cli(str(root))
    assert completed.returncode == 2
    assert "cannot read the config file" in completed.stderr and "over the" in completed.stderr, completed.stderr


@pytest.mark.parametrize("name", ["skill-eval.toml", "pyproject.toml"])
def test_a_config_file_linked_out_of_the_workspace_is_never_opened(tmp_path: Path, name: str) -> None:
    """The workspace's config file is read only inside it: a
    ``skill-eval.toml`` linking out is refused with a message that names it
    and what to do (exit 2), a ``pyproject.toml`` linking out is not read
    to see whether it is one (a cloned repository could point either at any
    file of the user's). Neither is opened (the audit hook)."""
    from skill_eval.linter.config import ConfigError

    root = make_workspace(tmp_path / "ws", {"p": floor_probe("p")})
    (root / "skill-eval.toml").unlink()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / name).write_text('select = ["SE201"]\n[tool.skill-eval]\nselect = ["SE201"]\n', encoding="utf-8")
    (root / name).symlink_to(outside / name)
    (root / ".git").mkdir()  # the root, whatever the config says
    with recording_opens() as opened:
        try:
            lint_paths([root], jobs=1)
        except ConfigError as error:
            refused = str(error)
        else:
            refused = None
    assert _outside_reads(opened, outside) == []
    if name == "skill-eval.toml":
        assert refused is not None and str(root / name) in refused and "--config" in refused, refused
        completed = _run_cli(str(root))
        assert completed.returncode == 2 and "outside the workspace" in completed.stderr, completed.stderr
        assert "Traceback" not in completed.stderr and "internal error" not in completed.stderr
    else:
        assert refused is None


def test_a_pyproject_that_only_names_skill_eval_is_not_its_config(tmp_path: Path) -> None:
    """A pyproject.toml is a workspace root and config only with a
    ``[tool.skill-eval]`` table: one that names skill-eval as a dependency
    beside a ``[tool.ruff]`` table is neither (it made its folder the root,
    and the real root's config was silently left out), and one whose ``tool``
    is not a table is an error naming it (``--config``), not a crash."""
    monorepo = tmp_path / "mono"
    (monorepo / ".git").mkdir(parents=True)
    (monorepo / "skill-eval.toml").write_text('ignore = ["SE1"]\n', encoding="utf-8")
    tools = monorepo / "tools"
    make_workspace(tools, {"p": floor_probe("p", step_heading="No such step")})
    (tools / "skill-eval.toml").unlink()
    skill = tools / "skill"

    def codes() -> list[str]:
        return sorted(d.code for d in lint_paths([skill], jobs=1).diagnostics)

    assert "SE101" not in codes()  # the monorepo's config applies
    (tools / "pyproject.toml").write_text('[project]\nname = "tools"\ndependencies = ["skill-eval"]\n\n'
                                          '[tool.ruff]\nline-length = 100\n', encoding="utf-8")
    assert "SE101" not in codes()
    (tools / "pyproject.toml").write_text('[tool.skill-eval]\nignore = []\n', encoding="utf-8")
    assert "SE101" in codes()  # now it is the root, and its config applies
    (tools / "pyproject.toml").write_text('tool = "skill-eval"\n', encoding="utf-8")
    assert "SE101" not in codes()
    completed = _run_cli(str(skill), "--config", str(tools / "pyproject.toml"))
    assert completed.returncode == 2 and "`tool` must be a table" in completed.stderr, completed.stderr
    assert str(tools / "pyproject.toml") in completed.stderr
