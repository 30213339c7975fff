"""Odd names: bytes that are no UTF-8, lone surrogates, paths over PATH_MAX.

Each becomes findings on that path (or is linted like any other), the rest of
the workspace is linted all the same, and nothing the API or the CLI hands
out holds a lone surrogate (no report, JSON or LSP message could carry it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from _workspaces import floor_probe, make_workspace, probe_folder
from skill_eval.linter.engine import lint_paths

ODD = os.fsdecode(b"odd-\xff")


def _all_text(diagnostic) -> list[str]:
    return [diagnostic.message, *(related.message for related in diagnostic.related)]


def test_no_message_carries_a_lone_surrogate(tmp_path: Path) -> None:
    """A probe.json naming its artifact ``\\ud800.md`` (a JSON escape), and one
    naming a file whose name holds the byte 0xFF: the findings say so, with
    the odd characters written out; every message encodes as UTF-8."""
    root = make_workspace(tmp_path / "ws", {
        "escaped": floor_probe("escaped", question="\ud800.md"),
        "bytes": floor_probe("bytes", question=f"{ODD}.md"),
        ODD: floor_probe("odd"),
        "plain": floor_probe("plain", step_heading="Step 9: Nowhere"),
    })
    diagnostics = lint_paths([root], jobs=1).diagnostics
    by_probe = {d.path.parent.name: d for d in diagnostics if d.code == "SE003"}
    assert "\\ud800" in by_probe["escaped"].message, by_probe["escaped"].message
    assert "\\xff" in by_probe["bytes"].message, by_probe["bytes"].message
    assert any(d.code == "SE101" and d.path.parent.name == "plain" for d in diagnostics)
    for diagnostic in diagnostics:
        for text in _all_text(diagnostic):
            text.encode("utf-8")  # raises on a lone surrogate
    completed = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", "-j", "1", "--output-format", "json",
                                str(root)], capture_output=True, timeout=120)
    assert completed.returncode == 1, completed.stderr
    findings = json.loads(completed.stdout.decode("utf-8"))
    assert {f["code"] for f in findings} >= {"SE003", "SE101"}


def test_a_probe_below_a_path_over_path_max_is_linted(tmp_path: Path) -> None:
    """A probe folder so deep that its path is over PATH_MAX (4,096 bytes):
    the walk and the reads go folder by folder from descriptors, so it is
    found and linted (its wrong step heading is reported), and the probe
    beside the deep folder too."""
    root = make_workspace(tmp_path / "ws", {"near": floor_probe("near", step_heading="Step 9: Nowhere")})
    deep = probe_folder(root, "deep")
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY | os.O_DIRECTORY)
    depth = 0
    try:
        name = "d" * 200
        while len(os.fsencode(deep)) + depth * (len(name) + 1) < 4200:
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
            depth += 1
        probe = json.dumps(floor_probe("far", step_heading="Step 9: Nowhere")).encode("utf-8")
        for file_name, data in (("probe.json", probe), ("question.md", (root / "skill" / "evals" / "probes" / "near"
                                                                           / "question.md").read_bytes())):
            out = os.open(file_name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.write(out, data)
            os.close(out)
    finally:
        os.close(fd)
    far = Path(deep, *(["d" * 200] * depth), "probe.json")
    assert len(os.fsencode(far)) > 4096
    diagnostics = lint_paths([root], jobs=1).diagnostics
    assert any(d.code == "SE101" and d.path == far for d in diagnostics), \
        sorted({(d.code, str(d.path)[-60:]) for d in diagnostics})
    assert any(d.code == "SE101" and d.path.parent.name == "near" for d in diagnostics)
