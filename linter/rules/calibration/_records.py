"""What the calibration rules read: frozen.json and the suite's run records.

The file formats live in :mod:`skill_eval.linter.runs` (standard library only,
shared with the eval runner). Reads are cached per lint session, so the
workspace's ``evals/runs`` folders are walked once however many rules ask.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

from ...runs import find_runs_files, frozen_path, read_frozen, read_runs_file, runs_files_in, suite_folder
from ...runs import suite_runs_files as _suite_files
from ...textfile import Span

_RUNS_FILES: "weakref.WeakKeyDictionary[Any, list[Path]]" = weakref.WeakKeyDictionary()
_SUITE_FILES: "weakref.WeakKeyDictionary[Any, dict[Path, list[Path]]]" = weakref.WeakKeyDictionary()
_FROZEN_PATHS: "weakref.WeakKeyDictionary[Any, dict[Path, Path]]" = weakref.WeakKeyDictionary()


def suite_of(context) -> Path:
    """The folder whose ``evals/`` holds this probe's runs and frozen.json."""
    skill = context.skill_ref if isinstance(context.skill_ref, Path) else None
    return suite_folder(skill, context.folder)


def suite_runs_files(session) -> list[Path]:
    """Every ``evals/runs/*.jsonl`` of the session's workspace (walked once per session)."""
    files = _RUNS_FILES.get(session)
    if files is None:
        pruned = session.pruned_folders
        files = _RUNS_FILES[session] = find_runs_files(session.root) if pruned is None else runs_files_in(pruned)
    return files


def probe_records(context) -> list[tuple[int, dict[str, Any]]]:
    """Records of this probe's id in its suite's runs files."""
    probe_id = context.probe_id
    if probe_id is None:
        return []
    return [(line, record) for path in _runs_files_of_suite(context.session, suite_of(context))
            for line, record in read_runs_file(path).records if record.get("probe") == probe_id]


def _runs_files_of_suite(session, suite: Path) -> list[Path]:
    """One suite's runs files, listed once per session (the probes of a suite
    share the listing: a thousand probes asked for it a thousand times)."""
    return _per_suite(_SUITE_FILES, session, suite, _suite_files)


def _per_suite(store: "weakref.WeakKeyDictionary", session, suite: Path, compute):
    """``compute(suite)``, remembered in ``store`` for the session."""
    by_suite = store.get(session)
    if by_suite is None:
        by_suite = store[session] = {}
    found = by_suite.get(suite)
    if found is None:
        found = by_suite[suite] = compute(suite)
    return found


def frozen_case(context) -> tuple[Path, bytes, dict[str, Any]] | None:
    """This probe version's entry in frozen.json (read through the session's
    reader, so an unsaved frozen.json counts), with the file's path and bytes."""
    probe_id = context.probe_id
    if probe_id is None:
        return None
    path = _frozen_path_of(context.session, suite_of(context))
    raw = context.session.read_raw(path)
    if raw is None:
        return None
    case = read_frozen(path, raw).get((probe_id, context.version))
    return (path, raw, case) if case is not None else None


def _frozen_path_of(session, suite: Path) -> Path:
    """One suite's frozen.json path, built once per session (~10 us a probe)."""
    return _per_suite(_FROZEN_PATHS, session, suite, frozen_path)


def line_span_of(path: Path, raw: bytes, needle: str) -> Span:
    """The span of the first line of ``raw`` holding ``needle`` (else the file start)."""
    text = raw.decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            stripped = len(line) - len(line.lstrip())
            return Span.at(path, number, stripped + 1, number, len(line) + 1)
    return Span.file_start(path)
