"""What the calibration rules read: frozen.json and the suite's run records.

The file formats are read by :mod:`skill_eval.linter.run_records` (standard
library only; the eval runner writes them), parsed there from bytes
(:func:`~skill_eval.linter.run_records.parse_runs`,
:func:`~skill_eval.linter.run_records.read_frozen`); the bytes are read here, through
the session's safe reader (:meth:`~skill_eval.linter.context.LintSession.read_safely`):
a runs file or frozen.json that is a link out of the workspace is never read
(SE004), a FIFO or a device never waited on (SE005), and none is read past
:data:`~skill_eval.linter.context.RECORDS_MAX_SIZE` (or ``max-file-size`` when
higher). Reads are cached per lint session, so the workspace's
``evals/runs`` folders are walked once however many rules ask.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...run_records import RunsFile, frozen_path, parse_runs, read_frozen, suite_folder
from ...session import FileProblem
from ...textfile import Span, normalize_newlines


def runs_file(session, path: Path) -> RunsFile | FileProblem:
    """The parsed runs file at ``path``, or why it was not read; once per
    session (the language server starts a fresh session when a calibration
    file changes). The bytes are not kept, only the records."""
    limit = session.records_limit
    session.note(("content", str(path), limit))
    parsed = session.derived.setdefault("runs-files", {})
    found = parsed.get(path)
    if found is None:
        raw = session.read_safely(path, limit)
        found = parsed[path] = raw if isinstance(raw, FileProblem) else parse_runs(path, raw)
    return found


def read_runs(session, path: Path) -> RunsFile:
    """:func:`runs_file`, a file that was not read counting as empty (SE004
    and SE005 report why)."""
    found = runs_file(session, path)
    return RunsFile(path) if isinstance(found, FileProblem) else found


def runs_file_problems(session) -> list[FileProblem]:
    """Why some runs files of the workspace were not read (outside it, not a
    regular file, over the size limit); a missing one (deleted since the
    walk) is no problem."""
    problems = [runs_file(session, path) for path in suite_runs_files(session)]
    return [problem for problem in problems if isinstance(problem, FileProblem) and problem.kind != "missing"]


def frozen_problem(context) -> FileProblem | None:
    """Why this probe's frozen.json was not read, when it exists but was not
    (outside the workspace, not a regular file, too large)."""
    if context.probe_id is None:
        return None
    found = context.session.raw_problem(_frozen_path(context))
    return found if isinstance(found, FileProblem) and found.kind != "missing" else None


def suite_of(context) -> Path:
    """The folder whose ``evals/`` holds this probe's runs and frozen.json."""
    skill = context.skill_ref if isinstance(context.skill_ref, Path) else None
    return suite_folder(skill, context.folder)


def suite_runs_files(session) -> list[Path]:
    """Every ``evals/runs/*.jsonl`` of the session's workspace (walked once per session)."""
    return [Path(path) for path in session.query("workspace-runs")]


def probe_records(context) -> list[tuple[int, dict[str, Any]]]:
    """Records of this probe's id in its suite's runs files (none at all when
    the session's walk of the workspace found no runs files)."""
    probe_id = context.probe_id
    if probe_id is None or _walked_without_runs_files(context.session):
        return []
    return [(line, record) for path in _suite_runs_files(context)
            for line, record in read_runs(context.session, path).records if record.get("probe") == probe_id]


def probe_runs(context) -> list[tuple[Path, Any]]:
    """``(path, RunsFile)`` of this probe's suite's runs files (none when the
    session's walk of the workspace found no runs files)."""
    if context.probe_id is None or _walked_without_runs_files(context.session):
        return []
    return [(path, read_runs(context.session, path)) for path in _suite_runs_files(context)]


def _walked_without_runs_files(session) -> bool:
    """Whether the session walked the whole workspace (the CLI) and found no
    runs files. A session that did not (the language server's) is not
    walked for this: each of its workers would walk it again."""
    return session.pruned_folders is not None and not session.query("workspace-runs")


def _suite_runs_files(context) -> list[Path]:
    return [Path(path) for path in context.session.query("suite-runs", str(suite_of(context)))]


def _frozen_path(context) -> Path:
    """The probe's suite's frozen.json (remembered per skill: the probes of
    a suite share it, and a thousand probes asked a thousand times)."""
    skill = context.skill_ref
    key = skill if isinstance(skill, Path) else context.folder
    paths = context.session.derived.setdefault("frozen-paths", {})
    found = paths.get(key)
    if found is None:
        found = paths[key] = frozen_path(suite_of(context))
    return found


def frozen_case(context) -> tuple[Path, bytes, dict[str, Any]] | None:
    """This probe version's entry in frozen.json (read through the session's
    reader, so an unsaved frozen.json counts), with the file's path and bytes."""
    probe_id = context.probe_id
    if probe_id is None:
        return None
    path = _frozen_path(context)
    raw = context.session.read_raw(path)
    if raw is None:
        return None
    case = read_frozen(path, raw).get((probe_id, context.version))
    return (path, raw, case) if case is not None else None


def line_span_of(path: Path, raw: bytes, needle: str) -> Span:
    """The span of the first line of ``raw`` holding ``needle`` (else the file
    start), its lines counted as the engine counts them: a byte-order mark
    dropped, CRLF and CR as one break, and only those (``str.splitlines``
    also breaks at U+2028, U+2029, U+0085 and form feeds, which a JSON
    string may hold: the line would be off by one for each)."""
    text = normalize_newlines(raw.decode("utf-8", errors="replace").removeprefix("\ufeff"))
    for number, line in enumerate(text.split("\n"), 1):
        if needle in line:
            stripped = len(line) - len(line.lstrip())
            return Span.at(path, number, stripped + 1, number, len(line) + 1)
    return Span.file_start(path)
