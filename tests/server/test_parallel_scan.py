"""The start-up scan of a large workspace lints probes in worker processes
(:func:`skill_eval.linter.engine.lint_probe_chunks`): the findings must be
the serial scan's, and an edit made while the workers run must win over their
older findings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _large_workspace import copy_examples_with_probes

from skill_eval.linter.config import load_config
from skill_eval.linter.execution import PARALLEL_MIN_WORK as PARALLEL_MIN_PROBES
from skill_eval.server.state import WorkspaceState


@pytest.fixture(scope="module")
def big_workspace(tmp_path_factory) -> Path:
    """The examples with their probes copied until there are enough for workers."""
    return copy_examples_with_probes(tmp_path_factory.mktemp("parallel") / "big", PARALLEL_MIN_PROBES)


def scanned(root: Path, jobs: int, buffers: dict | None = None, cache: bool = False) -> WorkspaceState:
    state = WorkspaceState(root, load_config(root), buffers if buffers is not None else {}, jobs=jobs, cache=cache)
    steps = list(state.scan())
    assert steps[-1][0] == steps[-1][1], "the last step reports everything done"
    return state


def findings(state: WorkspaceState) -> dict[Path, list[tuple]]:
    return {
        path: [(d.code, d.start, d.end, d.message) for d in found]
        for path, found in state.all_diagnostics().items()
    }


def test_workers_find_what_the_serial_scan_finds(big_workspace: Path) -> None:
    serial = scanned(big_workspace, jobs=1)
    parallel = scanned(big_workspace, jobs=2)
    assert sum(len(found) for found in findings(serial).values()) > PARALLEL_MIN_PROBES
    assert findings(parallel) == findings(serial)
    assert parallel.probe_files == serial.probe_files, "the reverse index is built from the workers' chunks too"
    assert parallel.dependents == serial.dependents


def test_an_edit_during_the_scan_wins_over_the_workers_older_findings(big_workspace: Path) -> None:
    """Workers lint the files as they were when the scan started; a probe an
    edit re-lints meanwhile keeps the edit's findings."""
    buffers: dict[Path, str] = {}
    state = WorkspaceState(big_workspace, load_config(big_workspace), buffers, jobs=2, cache=False)
    probe = sorted(state.discover().probes)[-1]  # in the last chunk: still running when the edit lands
    data = json.loads(probe.read_text())
    steps = state.scan()
    next(steps)  # workers started; SKILL.md, output-spec and workspace checks done here
    data["seeded_defects"] = 99
    buffers[probe] = json.dumps(data, indent=2)
    state.changed({probe})
    for _step in steps:
        pass
    codes = [d.code for d in state.diagnostics_for(probe)]
    assert "SE201" in codes, "the edited (unsaved) count drifted: the edit's finding is kept"
    del buffers[probe]
    state.changed({probe})
    assert [d.code for d in state.diagnostics_for(probe)] == [
        d.code for d in scanned(big_workspace, jobs=1).diagnostics_for(probe)
    ]


@pytest.mark.parametrize("cache", [False, True], ids=["no cache", "cache"])
def test_a_scan_keeps_one_path_object_per_file(big_workspace: Path, tmp_path: Path, cache: bool) -> None:
    """What a server holds after a scan (the reverse index, every probe's
    facts and findings, loaded from workers or the cache) names each file
    with one ``Path`` object, whatever number of probes name it: at 10,000
    probes a copy per probe of each SKILL.md's and output-spec's path, each
    with its own parts, was ~8 MB of the server's memory."""
    import shutil

    root = tmp_path / "ws"
    shutil.copytree(big_workspace, root)
    if cache:
        scanned(root, jobs=2, cache=True)  # fills the cache: the next scan loads from it
    state = scanned(root, jobs=2, cache=cache)
    held: list[Path] = [file for files in state.probe_files.values() for file in files]
    held += list(state.dependents)
    for found in state.all_diagnostics().values():
        held += [d.path for d in found] + [related.span.path for d in found for related in d.related]
    by_text: dict[str, set[int]] = {}
    for path in held:
        by_text.setdefault(str(path), set()).add(id(path))
    shared = [text for text in by_text if text.endswith(("SKILL.md", "output-spec.md"))]
    assert shared and len(state.probe_files) >= PARALLEL_MIN_PROBES
    assert {text: len(ids) for text, ids in by_text.items() if len(ids) > 1} == {}
