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
    """Records of this probe's id in its suite's runs files (none at all when
    the session's walk of the workspace found no runs files)."""
    probe_id = context.probe_id
    if probe_id is None or _walked_without_runs_files(context.session):
        return []
    return [(line, record) for path in _for_suite(_SUITE_FILES, context, _suite_files)
            for line, record in read_runs_file(path).records if record.get("probe") == probe_id]


def probe_runs(context) -> list[tuple[Path, Any]]:
    """``(path, RunsFile)`` of this probe's suite's runs files (none when the
    session's walk of the workspace found no runs files)."""
    if context.probe_id is None or _walked_without_runs_files(context.session):
        return []
    return [(path, read_runs_file(path)) for path in _for_suite(_SUITE_FILES, context, _suite_files)]


def _walked_without_runs_files(session) -> bool:
    """Whether the session walked the whole workspace (the CLI) and found no
    runs files. A session that did not (the language server's) is not
    walked for this: each of its forked workers would walk it again."""
    return session.pruned_folders is not None and not suite_runs_files(session)


def _for_suite(store: "weakref.WeakKeyDictionary", context, compute):
    """``compute(suite_of(context))``, remembered in ``store`` for the session
    (the probes of a suite share it: a thousand probes asked a thousand
    times). Keyed by what decides the suite: the probe's SKILL.md, whose
    ``Path`` the suite's probes share (its hash computed once), else the
    probe's folder."""
    by_key = store.get(context.session)
    if by_key is None:
        by_key = store[context.session] = {}
    skill = context.skill_ref
    key = skill if isinstance(skill, Path) else context.folder
    found = by_key.get(key)
    if found is None:
        found = by_key[key] = compute(suite_of(context))
    return found


def frozen_case(context) -> tuple[Path, bytes, dict[str, Any]] | None:
    """This probe version's entry in frozen.json (read through the session's
    reader, so an unsaved frozen.json counts), with the file's path and bytes."""
    probe_id = context.probe_id
    if probe_id is None:
        return None
    path = _for_suite(_FROZEN_PATHS, context, frozen_path)
    raw = context.session.read_raw(path)
    if raw is None:
        return None
    case = read_frozen(path, raw).get((probe_id, context.version))
    return (path, raw, case) if case is not None else None


def line_span_of(path: Path, raw: bytes, needle: str) -> Span:
    """The span of the first line of ``raw`` holding ``needle`` (else the file start)."""
    text = raw.decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            stripped = len(line) - len(line.lstrip())
            return Span.at(path, number, stripped + 1, number, len(line) + 1)
    return Span.file_start(path)
