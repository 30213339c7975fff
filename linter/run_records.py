"""Run records and frozen cases, read: what the calibration rules need.

fixture-format.md, "Results of eval runs": each start of an agent on a probe
is on record before the agent runs. The runner writes the records
(:mod:`skill_eval.evals.records`, which also holds their typed form and JSON
Schema); this module reads them, for the calibration rules SE502-SE506 and
for the runner and the report above the linter. It imports nothing but the
standard library, so the linter stays fast. docs/format.md ("Run records")
lists the fields.

Records (schema 2)
------------------
Each runner invocation appends to a file of its own per suite
(``evals/runs/<UTC time>-<agent>-<random>.jsonl``). Its lines are ``plan``
(the starts a runner reserved; a reservation holds only while the file's
lock is held), ``start`` (written whole and synced before the agent's
process is spawned), ``outcome`` (a start's end: its ``status`` ``ok``,
``error``, ``timeout`` or ``interrupted``, answer and grading) and
``decision`` (``skill-eval calibrate``'s observation of one probe version;
never a start). Schema 1 files (one record per start, written after it
ended) stay readable: each such line is one start.

Reading (:func:`parse_runs`, pure: path and bytes in) pairs each start with
its outcome into one *logical record* (the start's fields, then the
outcome's). A start without an outcome reads as ``status: "interrupted"`` with
``"unfinished": true``: its runner was killed, or is still running it —
:func:`skill_eval.evals.records.writer_alive` tells (the file's lock is held).
Every start counts: :attr:`RunsFile.starts` is the logical records plus torn
lines. A torn line (a writer killed mid-line: not a whole JSON object) counts
as a start, except one whose first bytes show it was an outcome, a plan or a
decision (the start it belongs to, if any, has its own line). A whole line
that is no record readers can use — a field of the wrong JSON type
(:func:`odd_field`: ``"rep": "1"``, ``"caught": 3``, a hash that is a list) —
is set aside the same way, by its type, before any reader meets it: the
readers (the report, the runner's planning, ``skill-eval calibrate``, the
calibration rules) never see a field of another type than docs/format.md
gives it.

Zones
-----
:func:`zone_of` classifies one sample from its per-arm counts, as in the
seed's diagram (ceiling / usable window / floor), plus ``adverse`` (control
caught more often than treatment), ``mixed`` (anything else), ``pending``
(an arm needed for the call has no graded rep yet) and ``unreadable`` (most
graded answers had no field the output spec names, ``answer_source:
"none"``: an agent answering in prose is graded a miss every time, and its
sample would read as a floor). SE505 reads a version's history by zone
(:func:`sample_versions`); the intervals and tests of the report (Wilson,
Fisher) are the runner's: :mod:`skill_eval.evals.stats`.
"""

from __future__ import annotations

import json
import os
from itertools import repeat
from pathlib import Path
from typing import Any, Iterable

from .reader import TOOL_FOLDERS

RUNS_FOLDER = ("evals", "runs")
FROZEN_FILE = ("evals", "frozen.json")
RECORD_SCHEMA = 2
"""The ``schema`` of the records a runner writes now."""
STATUSES = ("ok", "error", "timeout", "interrupted")
ARMS = ("control", "treatment")

_SKIPPED = TOOL_FOLDERS
"""The folders the runs walk never enters: the fixture walk's, so the two agree."""
_NOT_A_START = (b'{"schema":2,"type":"outcome"', b'{"schema":2,"type":"plan"', b'{"schema":2,"type":"decision"')
"""How a torn outcome, plan or decision line begins (the writer,
:func:`skill_eval.evals.records.encode_record`, keeps these keys first)."""
_NOT_STARTS = ("outcome", "plan", "decision")
"""The record types that are never starts (:func:`parse_runs`)."""
_OUTCOME_KEYS = ("ended", "duration_s", "status", "exit_code", "answer_file", "answer_source", "caught", "passed",
                 "error", "stderr_tail", "truncated",
                 # a preset agent's output and usage, a judge's grading errors (docs/format.md)
                 "output_file", "tokens_in", "tokens_out", "tokens_cached", "cost_usd", "agent_duration_s", "turns",
                 "grading_errors",
                 # evidence: the skill loaded or not, the answer key seen, the judges' verdicts
                 "skill_loaded", "skill_evidence", "contaminated", "judge_verdicts")

_STRING = (str,)
_STRING_OR_NULL = (str, type(None))
_INT = (int,)
"""Exact types: ``json.loads`` makes ``bool`` for true and false, which this leaves out."""
_INT_OR_NULL = (int, type(None))
_NUMBER = (int, float)
_BOOL = (bool,)
_OBJECT = (dict,)
_OBJECT_OR_NULL = (dict, type(None))
_LIST = (list,)
"""A list; its items are checked by :data:`_LIST_ITEMS`."""

_START_FIELDS: dict[str, tuple[type, ...]] = {
    "start_id": _STRING, "probe": _STRING, "version": _INT, "probe_sha256": _STRING, "artifact_sha256": _STRING,
    "skill_sha256": _STRING_OR_NULL, "skill_tree_sha256": _STRING_OR_NULL, "probe_path": _STRING,
    "kind": _STRING_OR_NULL, "band": _OBJECT_OR_NULL, "defects": _LIST, "arm": _STRING, "rep": _INT,
    "agent": _STRING, "model": _STRING_OR_NULL, "started": _STRING, "plan_id": _STRING, "runner": _OBJECT,
    "resume_of": _STRING, "retry_of": _STRING, "calibration_rule": _OBJECT, "calibration_rule_sha256": _STRING,
    "preset": _STRING, "treatment": _STRING, "installed_skill": _STRING, "installed_skill_sha256": _STRING,
    "sandbox": _STRING,
}
"""The JSON type of each field of a start record that readers use (docs/format.md,
"Run records"); ``null`` only where a writer writes it (no skill, no model, no kind)."""
_OUTCOME_FIELDS: dict[str, tuple[type, ...]] = {
    "start_id": _STRING, "probe": _STRING, "version": _INT, "arm": _STRING, "rep": _INT,
    "ended": _STRING, "duration_s": _NUMBER, "status": _STRING, "exit_code": _INT_OR_NULL, "answer_file": _STRING,
    "answer_source": _STRING, "caught": _LIST, "passed": _BOOL, "error": _STRING_OR_NULL, "stderr_tail": _STRING,
    "truncated": _OBJECT, "output_file": _STRING, "tokens_in": _INT, "tokens_out": _INT, "tokens_cached": _INT,
    "cost_usd": _NUMBER, "agent_duration_s": _NUMBER, "turns": _INT, "grading_errors": _OBJECT,
    "skill_loaded": (bool, type(None)), "skill_evidence": _STRING, "contaminated": _LIST, "judge_verdicts": _OBJECT,
}
"""The JSON type of each field of an outcome record that readers use."""
_PLAN_FIELDS: dict[str, tuple[type, ...]] = {
    "plan_id": _STRING, "created": _STRING, "agent": _STRING, "model": _STRING_OR_NULL, "runner": _OBJECT,
    "starts": _LIST, "lint": _LIST, "calibration_rule": _OBJECT, "calibration_rule_sha256": _STRING,
}
"""The JSON type of each field of a plan record that readers use."""
_DECISION_FIELDS: dict[str, tuple[type, ...]] = {
    "probe": _STRING, "version": _INT, "probe_sha256": _STRING, "artifact_sha256": _STRING,
    "skill_sha256": _STRING_OR_NULL, "skill_tree_sha256": _STRING_OR_NULL, "probe_path": _STRING,
    "kind": _STRING_OR_NULL, "agent": _STRING, "model": _STRING_OR_NULL, "zone": _STRING,
    "decided_after": _STRING_OR_NULL, "control": _OBJECT, "treatment": _OBJECT_OR_NULL, "starts": _INT,
    "version_starts": _INT, "decided": _STRING, "plan_id": _STRING, "calibration_rule": _OBJECT,
    "calibration_rule_sha256": _STRING, "reason": _STRING_OR_NULL, "discriminator": _OBJECT,
}
"""The JSON type of each field of a decision record that readers use."""
_RECORD_FIELDS: dict[str | None, dict[str, tuple[type, ...]]] = {
    "start": _START_FIELDS, "outcome": _OUTCOME_FIELDS, "plan": _PLAN_FIELDS, "decision": _DECISION_FIELDS,
    None: {**_START_FIELDS, **_OUTCOME_FIELDS},  # a schema 1 record: a start and its outcome in one line
}
_PLANNED_START_TYPES = (_STRING, _INT, _STRING, _STRING, _STRING_OR_NULL, _STRING, _INT, _STRING_OR_NULL)
"""A plan's ``starts`` entry: probe, version, the three content hashes, arm,
rep and (plans since the tree hash) ``skill_tree_sha256``."""
_PLANNED_LINT_FIELDS: dict[str, tuple[type, ...]] = {
    "probe": _STRING, "version": _INT, "probe_sha256": _STRING, "artifact_sha256": _STRING,
    "skill_sha256": _STRING_OR_NULL, "skill_tree_sha256": _STRING_OR_NULL, "findings": _LIST,
}
"""A plan's ``lint`` entry (its findings are checked one by one where the report reads them)."""


def sha256_bytes(data: bytes) -> str:
    import hashlib  # only workspaces with run records need it (slow to import: docs/performance.md)

    return hashlib.sha256(data).hexdigest()


def calibration_rule_record(rule) -> dict[str, Any]:
    """The ``calibration_rule`` object written into the records a
    :class:`~skill_eval.linter.config.CalibrationRule` governs (the config's
    spelling of its keys)."""
    return {"reps": rule.reps, "caught-in-every-rep": rule.caught_in_every_rep,
            "max-starts-per-probe": rule.max_starts_per_probe}


def calibration_rule_sha256(record: dict[str, Any]) -> str:
    """The SHA-256 of a ``calibration_rule`` object (canonical JSON: sorted
    keys, no spaces): the ``calibration_rule_sha256`` of the records it governs."""
    return sha256_bytes(json.dumps(record, sort_keys=True, separators=(",", ":")).encode("utf-8"))


# -- where things are -------------------------------------------------------------


def suite_folder(skill_path: Path | None, probe_folder: Path) -> Path:
    """The folder whose ``evals/`` holds a probe's runs and frozen.json: the
    skill's folder; without a skill, the folder above the nearest ``evals``
    ancestor of the probe; else the probe folder itself."""
    if skill_path is not None:
        return (skill_path if isinstance(skill_path, Path) else Path(skill_path)).parent
    for folder in (probe_folder, *probe_folder.parents):
        if folder.name == "evals":
            return folder.parent
    return probe_folder


def runs_folder(suite: Path) -> Path:
    return suite.joinpath(*RUNS_FOLDER)


def frozen_path(suite: Path) -> Path:
    return suite.joinpath(*FROZEN_FILE)


def suite_runs_files(suite: Path, root: Path | None = None) -> list[Path]:
    """The runs files of one suite (one skill's ``evals/runs/*.jsonl``), sorted.

    ``root`` (the workspace's): the folder is opened below it only, no link
    followed out of it (:class:`~skill_eval.linter.reader.SealedRoot`), and
    listed from that descriptor: an ``evals/runs`` that is a link out of the
    workspace is not listed (none of its files); without ``root``, it is
    opened by name, not through a link of its own name."""
    from .reader import _DIR_FLAGS, SEALED, OutsideRoot, list_folder, sealed_root

    folder = runs_folder(suite)
    if root is not None and SEALED:
        try:
            fd = sealed_root(root).open(os.fspath(folder), _DIR_FLAGS)
        except (OSError, ValueError):  # OutsideRoot among them
            return []
        try:
            listing = list_folder(os.fspath(folder), None, fd)
        finally:
            os.close(fd)
    else:
        listing = list_folder(os.fspath(folder))
    if listing is None:
        return []
    return sorted(path for path in (Path(folder, name) for name in listing[0] if name.endswith(".jsonl"))
                  if os.path.isfile(path))


def find_runs_files(root: Path, links: list[str] | None = None) -> list[Path]:
    """Every ``evals/runs/*.jsonl`` below the workspace ``root``, sorted.

    VCS and tool folders (:data:`~skill_eval.linter.reader.TOOL_FOLDERS`) and
    virtual environments (a folder holding ``pyvenv.cfg``) are not entered; nor
    are symbolic links to folders (:func:`~skill_eval.linter.reader.walk_folders`;
    ``os.walk`` plus a ``pyvenv.cfg`` test per folder cost more:
    docs/performance.md). ``links``, when given, receives every symbolic link
    met (see :func:`runs_links`)."""
    from .reader import walk_folders

    found: list[Path] = []
    for folder, files, subfolders in walk_folders(root, _SKIPPED, None, links):
        if os.path.basename(folder) == "runs" and os.path.basename(os.path.dirname(folder)) == "evals":
            found.extend(Path(folder, name) for name in files if name.endswith(".jsonl"))
            subfolders.clear()  # answers/ and the like are not records
    return sorted(found)


def runs_links(links: Iterable[str]) -> list[str]:
    """Of the symbolic links a walk met, those that would hide or redirect run
    records: an ``evals`` or ``evals/runs`` folder, or a ``.jsonl`` file in one."""
    found = []
    for link in links:
        name, parent = os.path.basename(link), os.path.dirname(link)
        if name == "evals" or (name == "runs" and os.path.basename(parent) == "evals") or (
                name.endswith(".jsonl") and os.path.basename(parent) == "runs"
                and os.path.basename(os.path.dirname(parent)) == "evals"):
            found.append(link)
    return sorted(found)


def runs_files_in(pruned: Iterable[str]) -> list[Path]:
    """:func:`find_runs_files` of a workspace root from the folders a walk of
    it for fixtures left out by name (:data:`~skill_eval.linter.reader.SKIPPED_FOLDERS`,
    which holds ``runs``; the walks agree on everything else), without walking
    the workspace again: an ``evals/runs`` folder's runs files are listed, any
    other ``runs`` folder is searched as :func:`find_runs_files` would."""
    from .reader import list_folder

    found: list[Path] = []
    for folder in pruned:
        if os.path.basename(folder) != "runs":
            continue  # node_modules, __pycache__, site-packages: never searched
        if os.path.basename(os.path.dirname(folder)) != "evals":
            found.extend(find_runs_files(Path(folder)))
            continue
        listing = list_folder(folder)
        if listing is not None and "pyvenv.cfg" not in listing[0]:
            found.extend(Path(folder, name) for name in listing[0] if name.endswith(".jsonl"))
    return sorted(found)


# -- reading --------------------------------------------------------------------------


class RunsFile:
    """The starts of one runs file: logical records (a start with its outcome,
    or a schema 1 record) with the 1-based line of each start, torn lines that
    count as starts, plans (reservations) and the ids of unfinished starts.

    This module's records are plain classes, not dataclasses: the calibration
    rules import it on every start, and importing :mod:`dataclasses` and
    making each class add to every start (docs/performance.md)."""

    __slots__ = ("path", "records", "torn", "torn_other", "plans", "unfinished", "decisions")

    def __init__(self, path: Path, records: list[tuple[int, dict[str, Any]]] | None = None,
                 torn: list[int] | None = None) -> None:
        self.path = path
        self.records: list[tuple[int, dict[str, Any]]] = [] if records is None else records
        self.torn: list[int] = [] if torn is None else torn
        self.torn_other: list[int] = []
        """Torn lines that were outcomes or plans: not starts."""
        self.plans: list[tuple[int, dict[str, Any]]] = []
        self.unfinished: list[str] = []
        """start_id of every start without an outcome."""
        self.decisions: list[tuple[int, dict[str, Any]]] = []
        """``skill-eval calibrate``'s observations (never starts)."""

    def __repr__(self) -> str:
        return f"RunsFile({self.path!r}, {len(self.records)} records, torn lines {self.torn})"

    @property
    def starts(self) -> int:
        """Starts this file stands for: one per logical record, one per torn line."""
        return len(self.records) + len(self.torn)

    def reserved(self) -> list[tuple]:
        """The reservations of its plans not yet started, as rep identities
        (:func:`rep_identity`). They hold only while its writer is alive
        (:func:`skill_eval.evals.records.writer_alive`)."""
        if not self.plans:
            return []
        started = {rep_identity(record) for _line, record in self.records}
        found = []
        for _line, plan in self.plans:
            agent, model = plan.get("agent"), plan.get("model")
            for entry in plan.get("starts") or ():
                if isinstance(entry, list) and len(entry) in (7, 8):
                    tree = entry[7] if len(entry) == 8 else None
                    identity = (*entry[:7], agent, model, tree)
                    if identity not in started:
                        found.append(identity)
        return found


def odd_field(record: dict[str, Any]) -> str | None:
    """The first field of a parsed run record whose JSON type is not the one
    docs/format.md gives its record type (a string where a number belongs, a
    number where a list of ids does, a list or an object where a hash does, a
    boolean where a count does, ``null`` where none is written), or ``None``
    when every field it has is of its type.

    Only the fields readers use are checked; a missing field, and one this
    version does not know, are not odd. A record type of a later schema is not
    checked (:func:`parse_runs` leaves it out anyway). The lists are checked
    item by item: ``defects`` and ``caught`` hold strings, a plan's ``starts``
    entries of 7 or 8 typed values, its ``lint`` entries typed objects.

    One dictionary look-up and one exact type test per field: for a start,
    about a quarter of what ``json.loads`` of its line costs (a runs file of
    22,400 lines: 250 ms parsed without the checks, about 310 ms with)."""
    kind = record.get("type")
    if kind is not None and type(kind) is not str:
        return "type"
    fields = _RECORD_FIELDS.get(kind)
    if fields is None:
        return None
    for name, value in record.items():
        allowed = fields.get(name)
        if allowed is not None and type(value) not in allowed:
            return name
    for name, items_of_type in _LIST_ITEMS.get(kind, ()):
        value = record.get(name)
        if value and not items_of_type(value):
            return name
    return None


def _ids(items: list) -> bool:
    """Whether every item is a string (a defect id)."""
    return all(map(isinstance, items, repeat(str)))


def _planned_starts(entries: list) -> bool:
    """Whether every entry of a plan's ``starts`` is 7 or 8 values of :data:`_PLANNED_START_TYPES`."""
    return all(type(entry) is list and len(entry) in (7, 8)
               and all(type(value) in allowed for value, allowed in zip(entry, _PLANNED_START_TYPES))
               for entry in entries)


def _planned_lint(entries: list) -> bool:
    """Whether every entry of a plan's ``lint`` is an object of :data:`_PLANNED_LINT_FIELDS`."""
    return all(type(entry) is dict and all(type(value) in _PLANNED_LINT_FIELDS.get(name, (type(value),))
                                           for name, value in entry.items())
               for entry in entries)


_LIST_ITEMS = {
    "start": (("defects", _ids),), "outcome": (("caught", _ids),), None: (("defects", _ids), ("caught", _ids)),
    "plan": (("starts", _planned_starts), ("lint", _planned_lint)),
}
"""Per record type, its list fields and the check of their items."""


def parse_runs(path: Path, raw: bytes) -> RunsFile:
    """The starts of a runs file from its bytes (no file access: callers read
    through whatever opener they trust).

    A line that is not a JSON object, a start, outcome or schema 1 record
    without a ``probe`` string, and a record with a field of the wrong JSON
    type (:func:`odd_field`) are set aside as torn lines, never read further
    (so no reader meets a field of an unexpected type): one whose type (or,
    when it did not parse, first bytes) shows an outcome, a plan or a decision
    lands in :attr:`RunsFile.torn_other`, any other in :attr:`RunsFile.torn`,
    which counts as a start. An outcome set aside leaves its start without one
    (read as interrupted)."""
    result = RunsFile(path)
    starts: dict[str, int] = {}
    outcomes: dict[str, tuple[int, dict[str, Any]]] = {}
    for index, line in enumerate(raw.split(b"\n")):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            (result.torn_other if line.lstrip().startswith(_NOT_A_START) else result.torn).append(index + 1)
            continue
        if not isinstance(record, dict):
            result.torn.append(index + 1)
            continue
        kind = record.get("type")
        if odd_field(record) is not None:
            (result.torn_other if kind in _NOT_STARTS else result.torn).append(index + 1)
            continue
        if kind == "plan":
            result.plans.append((index + 1, record))
            continue
        if kind == "decision":
            result.decisions.append((index + 1, record))
            continue
        start_id = record.get("start_id")
        if kind == "outcome":
            if not isinstance(record.get("probe"), str) or not isinstance(start_id, str):
                result.torn_other.append(index + 1)
            else:
                outcomes.setdefault(start_id, (index + 1, record))
            continue
        if not isinstance(record.get("probe"), str):
            result.torn.append(index + 1)
            continue
        if kind == "start" and isinstance(start_id, str) and start_id not in starts:
            starts[start_id] = len(result.records)
        elif kind not in (None, "start"):
            continue  # a later schema's record type: not a start
        result.records.append((index + 1, record))
    for start_id, position in starts.items():
        line, start = result.records[position]
        found = outcomes.pop(start_id, None)
        merged = dict(start)
        if found is None:
            merged.update(status="interrupted", unfinished=True, caught=[])
            result.unfinished.append(start_id)
        else:
            outcome = found[1]
            for key in _OUTCOME_KEYS:
                if key in outcome:
                    merged[key] = outcome[key]
            for key, value in outcome.items():  # fields a start lacks (usage: tokens, cost): kept
                if key not in merged and key != "type":
                    merged[key] = value
            merged.setdefault("status", "error")
        result.records[position] = (line, merged)
    for line, outcome in outcomes.values():  # an outcome whose start line is gone: still a start
        result.records.append((line, dict(outcome)))
    result.records.sort(key=lambda item: item[0])
    return result


def read_frozen(path: Path, raw: bytes | None = None) -> dict[tuple[str, int], dict[str, Any]]:
    """frozen.json's cases keyed by ``(id, version)``; empty when missing or invalid."""
    if raw is None:
        try:
            raw = Path(path).read_bytes()
        except OSError:
            return {}
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}
    cases = data.get("cases") if isinstance(data, dict) else None
    frozen: dict[tuple[str, int], dict[str, Any]] = {}
    for case in cases if isinstance(cases, list) else ():
        if isinstance(case, dict) and isinstance(case.get("id"), str) and isinstance(case.get("version"), int):
            frozen[(case["id"], case["version"])] = case
    return frozen


def is_interrupted(record: dict[str, Any]) -> bool:
    """An interrupted start: status ``interrupted`` (schema 2), or a schema 1
    ``error`` whose message says it was interrupted."""
    status = record.get("status")
    if status == "interrupted":
        return True
    error = record.get("error")
    return status == "error" and isinstance(error, str) and error.startswith("interrupted")


# -- samples, intervals and zones -----------------------------------------------------


def record_passed(record: dict[str, Any]) -> bool | None:
    """Whether an ``ok`` record's answer caught what the probe asks for.

    A floor (or kind-less) probe: every defect caught. A band probe: the count
    of caught defects within ``band`` (min..max). ``None`` when not ok, and
    for a ``contaminated`` start (it saw the answer key: never a catch, nor a
    miss), whatever its status says.
    """
    if record.get("status") != "ok" or record.get("contaminated"):
        return None
    caught = record.get("caught") or []
    band = record.get("band")
    if record.get("kind") == "band" and isinstance(band, dict):
        low, high = band.get("min_caught", 0), band.get("max_caught", len(record.get("defects") or ()))
        return isinstance(low, int) and isinstance(high, int) and low <= len(caught) <= high
    defects = record.get("defects") or []
    return bool(defects) and all(d in caught for d in defects)


class ArmSample:
    """One arm's graded reps of one sample, and its failed starts.
    ``unreadable``: of the graded reps, those whose answer had no field the
    output spec names (``answer_source: "none"``): graded, as misses."""

    __slots__ = ("reps", "caught", "errors", "timeouts", "interrupted", "unreadable")

    def __init__(self, reps: int = 0, caught: int = 0, errors: int = 0, timeouts: int = 0, interrupted: int = 0,
                 unreadable: int = 0) -> None:
        self.reps, self.caught, self.errors, self.timeouts, self.interrupted = reps, caught, errors, timeouts, interrupted
        self.unreadable = unreadable

    def __repr__(self) -> str:
        return (f"ArmSample(reps={self.reps}, caught={self.caught}, errors={self.errors}, timeouts={self.timeouts}, "
                f"interrupted={self.interrupted}, unreadable={self.unreadable})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArmSample):
            return NotImplemented
        return ((self.reps, self.caught, self.errors, self.timeouts, self.interrupted, self.unreadable)
                == (other.reps, other.caught, other.errors, other.timeouts, other.interrupted, other.unreadable))

    @property
    def failed(self) -> int:
        return self.errors + self.timeouts + self.interrupted

    @property
    def rate(self) -> float | None:
        return self.caught / self.reps if self.reps else None


ZONES = ("ceiling", "window", "floor", "adverse", "mixed", "pending", "unreadable")


def mostly_unreadable(control: ArmSample, treatment: ArmSample) -> bool:
    """Whether more than half of the graded reps of both arms together had an
    answer with no field the output spec names: the sample says how the
    agent answers, not whether it caught anything."""
    graded = control.reps + treatment.reps
    return graded > 0 and 2 * (control.unreadable + treatment.unreadable) > graded


def zone_of(control: ArmSample, treatment: ArmSample) -> str:
    """The calibration zone of a sample (see the module docstring).
    ``unreadable`` before any other (:func:`mostly_unreadable`): misses that
    are unread answers are no floor."""
    if mostly_unreadable(control, treatment):
        return "unreadable"
    if control.reps == 0:
        return "pending"
    if treatment.reps and control.rate > treatment.rate:
        return "adverse"
    if control.caught == control.reps:
        return "ceiling"  # the seed records a ceiling from the control arm alone
    if control.caught == 0:
        if treatment.reps == 0:
            return "pending"  # seed step 4: hand the same artifact to the treatment arm
        return "window" if treatment.caught > 0 else "floor"
    return "mixed" if treatment.reps else "pending"


class VersionSample:
    """The graded sample of one probe version (or, from
    :func:`skill_eval.evals.stats.sample_rows`, of one report row: one
    version, one content, one agent and model)."""

    __slots__ = ("probe", "version", "arms", "starts", "hashes", "agents", "models", "kind", "last_ended", "key")

    def __init__(self, probe: str, version: int, key: tuple = ()) -> None:
        self.probe = probe
        self.version = version
        self.key = key
        self.arms: dict[str, ArmSample] = {arm: ArmSample() for arm in ARMS}
        self.starts = 0
        self.hashes: set[tuple[str, str]] = set()
        self.agents: set[str] = set()
        self.models: set[str] = set()
        self.kind: str | None = None
        self.last_ended: str | None = None

    def __repr__(self) -> str:
        return f"VersionSample({self.probe!r}, {self.version}, starts={self.starts}, arms={self.arms})"

    @property
    def zone(self) -> str:
        return zone_of(self.arms["control"], self.arms["treatment"])


def rep_identity(record: dict[str, Any]) -> tuple:
    """What makes two records the same rep: probe, version, the content
    hashes (probe.json, artifact, SKILL.md), arm, rep number, agent, model and
    ``skill_tree_sha256`` (every file of the skill folder; last, so the
    earlier positions keep their meaning). The resume key of the runner. A
    record written before the tree was hashed has none: its rep is another
    identity than any rep of a known tree."""
    return (record.get("probe"), record.get("version"), record.get("probe_sha256"), record.get("artifact_sha256"),
            record.get("skill_sha256"), record.get("arm"), record.get("rep"), record.get("agent"), record.get("model"),
            record.get("skill_tree_sha256"))


def sample_by(records: Iterable[dict[str, Any]], group, agent: str | None,
              sample_type: type[VersionSample] | None = None) -> dict[tuple, VersionSample]:
    """Group records with ``group(record)`` into samples of ``sample_type``
    (:class:`VersionSample` by default) and grade each rep once: its
    outcome is its latest ``ok`` record; a rep that never ended ok counts its
    latest failure. Starts count every record."""
    samples: dict[tuple, VersionSample] = {}
    outcomes: dict[tuple, tuple[tuple, bool]] = {}
    failures: dict[tuple, tuple[tuple, dict[str, Any]]] = {}
    for record in records:
        if agent is not None and record.get("agent") != agent:
            continue
        version = record.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            continue
        key = group(record)
        sample = samples.get(key)
        if sample is None:
            sample = samples[key] = (sample_type or VersionSample)(record["probe"], version, key)
        sample.starts += 1
        sample.hashes.add((str(record.get("probe_sha256")), str(record.get("artifact_sha256"))))
        if isinstance(record.get("agent"), str):
            sample.agents.add(record["agent"])
        if isinstance(record.get("model"), str):
            sample.models.add(record["model"])
        if isinstance(record.get("kind"), str):
            sample.kind = record["kind"]
        ended = record.get("ended")
        if isinstance(ended, str) and (sample.last_ended is None or ended > sample.last_ended):
            sample.last_ended = ended
        if record.get("arm") not in ARMS:
            continue
        rep = rep_identity(record)
        passed = record_passed(record)
        if passed is None:
            failures[rep] = (key, record)
        else:
            outcomes[rep] = (key, passed, record.get("answer_source") == "none")
    for rep, (key, passed, unreadable) in outcomes.items():
        arm_sample = samples[key].arms[rep[5]]
        arm_sample.reps += 1
        arm_sample.caught += int(passed)
        arm_sample.unreadable += int(unreadable)
    for rep, (key, record) in failures.items():
        if rep in outcomes:
            continue  # a retry succeeded
        arm_sample = samples[key].arms[rep[5]]
        if record.get("status") == "timeout":
            arm_sample.timeouts += 1
        elif is_interrupted(record):
            arm_sample.interrupted += 1
        else:
            arm_sample.errors += 1
    return samples


def sample_versions(records: Iterable[dict[str, Any]], agent: str | None = None) -> dict[tuple[str, int], VersionSample]:
    """Samples per (probe id, version), every agent and content of the version
    together (the calibration rules' view of a version's history; the report
    uses :func:`skill_eval.evals.stats.sample_rows`, which never pools)."""
    return sample_by(records, lambda record: (record["probe"], record["version"]), agent)
