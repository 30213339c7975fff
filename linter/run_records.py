"""Run records and frozen cases, read as docs/format.md ("Run records") says: what
the calibration rules SE502-SE506, the runner and the report need. The runner writes
them (:mod:`skill_eval.evals.records`, with their typed form and JSON Schema).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

import msgspec

from .reader import TOOL_FOLDERS

ARMS = ("control", "treatment")

_NOT_STARTS = ("outcome", "plan", "decision")
"""The record types that are never starts."""
_NOT_A_START = tuple(b'{"schema":2,"type":"%s"' % kind.encode() for kind in _NOT_STARTS)
"""How a torn outcome, plan or decision line begins (the writer,
:func:`skill_eval.evals.records.encode_record`, keeps these keys first)."""

_IDENTITY_FIELDS: dict[str, Any] = {
    "probe": str, "version": int, "probe_sha256": str, "artifact_sha256": str, "skill_sha256": str | None,
    "skill_tree_sha256": str | None,
}
"""The fields that say which probe content a record is of (``null`` hashes: no skill)."""
_RULE_FIELDS: dict[str, Any] = {"calibration_rule": dict, "calibration_rule_sha256": str}
_START_FIELDS: dict[str, Any] = {
    **_IDENTITY_FIELDS, **_RULE_FIELDS, "start_id": str, "probe_path": str, "kind": str | None,
    "band": dict | None, "defects": list[str], "arm": str, "rep": int, "agent": str, "model": str | None,
    "started": str, "plan_id": str, "runner": dict, "resume_of": str, "retry_of": str, "preset": str,
    "treatment": str, "installed_skill": str, "installed_skill_sha256": str, "sandbox": str,
}
"""The JSON type of each field of a start record that readers use (docs/format.md,
"Run records"); ``null`` only where a writer writes it (no skill, no model, no kind)."""
_OUTCOME_FIELDS: dict[str, Any] = {
    "start_id": str, "probe": str, "version": int, "arm": str, "rep": int,
    "ended": str, "duration_s": int | float, "status": str, "exit_code": int | None, "answer_file": str,
    "answer_source": str, "caught": list[str], "passed": bool, "error": str | None, "stderr_tail": str,
    "truncated": dict, "output_file": str, "tokens_in": int, "tokens_out": int, "tokens_cached": int,
    "cost_usd": int | float, "agent_duration_s": int | float, "turns": int, "grading_errors": dict,
    "skill_loaded": bool | None, "skill_evidence": str, "contaminated": list, "judge_verdicts": dict,
}
"""The JSON type of each field of an outcome record that readers use."""
_OUTCOME_KEYS = tuple(_OUTCOME_FIELDS)[5:]
"""The fields of an outcome that replace its start's in the logical record (all but
the first five, which name the start: it has them too)."""


class _PlannedStart(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    """A plan's ``starts`` entry: 7 values, or 8 in plans since the tree hash."""

    probe: str
    version: int
    probe_sha256: str
    artifact_sha256: str
    skill_sha256: str | None
    arm: str
    rep: int
    skill_tree_sha256: str | None = None


def _checked(fields: dict[str, Any]) -> type[msgspec.Struct]:
    """A struct that checks the JSON type of each of ``fields`` present (all optional)."""
    return msgspec.defstruct("Checked", [(name, kind | msgspec.UnsetType, msgspec.UNSET)
                                         for name, kind in fields.items()])


_PLAN_FIELDS: dict[str, Any] = {
    **_RULE_FIELDS, "plan_id": str, "created": str, "agent": str, "model": str | None, "runner": dict,
    "starts": list[_PlannedStart], "lint": list[_checked({**_IDENTITY_FIELDS, "findings": list})],
}
"""A plan's fields (its ``lint`` entries' findings are checked one by one where the report reads them)."""
_DECISION_FIELDS: dict[str, Any] = {
    **_IDENTITY_FIELDS, **_RULE_FIELDS, "probe_path": str, "kind": str | None, "agent": str,
    "model": str | None, "zone": str, "decided_after": str | None, "control": dict,
    "treatment": dict | None, "starts": int, "version_starts": int, "decided": str,
    "plan_id": str, "reason": str | None, "discriminator": dict,
}
_RECORD_FIELDS: dict[str | None, dict[str, Any]] = {
    "start": _START_FIELDS, "outcome": _OUTCOME_FIELDS, "plan": _PLAN_FIELDS, "decision": _DECISION_FIELDS,
    None: {**_START_FIELDS, **_OUTCOME_FIELDS},  # a schema 1 record: a start and its outcome in one line
}
"""Per record type, the JSON type of each field readers use."""
_CHECKS = {kind: _checked(fields) for kind, fields in _RECORD_FIELDS.items()}
"""Per record type, the struct :func:`odd_field` converts a record to."""


def sha256_bytes(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    import hashlib  # only workspaces with run records need it (slow to import: docs/performance.md)

    return hashlib.sha256(data).hexdigest()


def calibration_rule_record(rule) -> dict[str, Any]:
    """The ``calibration_rule`` object of the records a :class:`~skill_eval.linter.config.CalibrationRule` governs."""
    return {"reps": rule.reps, "caught-in-every-rep": rule.caught_in_every_rep,
            "max-starts-per-probe": rule.max_starts_per_probe}


def calibration_rule_sha256(record: dict[str, Any]) -> str:
    """The ``calibration_rule_sha256`` of the records ``record`` governs: its canonical JSON's SHA-256."""
    return sha256_bytes(json.dumps(record, sort_keys=True, separators=(",", ":")).encode("utf-8"))


# -- where things are -------------------------------------------------------------


def suite_folder(skill_path: Path | None, probe_folder: Path) -> Path:
    """The folder whose ``evals/`` holds a probe's runs and frozen.json: the
    skill's folder; without a skill, the folder above the nearest ``evals``
    ancestor of the probe; else the probe folder itself."""
    if skill_path is not None:
        return Path(skill_path).parent
    for folder in (probe_folder, *probe_folder.parents):
        if folder.name == "evals":
            return folder.parent
    return probe_folder


def runs_folder(suite: Path) -> Path:
    """A suite's ``evals/runs`` folder."""
    return suite.joinpath("evals", "runs")


def frozen_path(suite: Path) -> Path:
    """A suite's ``evals/frozen.json``."""
    return suite.joinpath("evals", "frozen.json")


def suite_runs_files(suite: Path, root: Path | None = None) -> list[Path]:
    """The runs files of one suite (one skill's ``evals/runs/*.jsonl``), sorted; with the
    workspace ``root``, listed below it only (an ``evals/runs`` linking out lists nothing)."""
    from .reader import list_folder, walk_folders

    folder = runs_folder(suite)
    if root is None:
        listing = list_folder(os.fspath(folder))
        names = listing[0] if listing is not None else []
    else:
        walk = walk_folders(folder, TOOL_FOLDERS, below=root)
        names = next((files for _folder, files, _subfolders in walk), [])  # its first folder: the runs folder
    return sorted(path for path in (Path(folder, name) for name in names if name.endswith(".jsonl"))
                  if os.path.isfile(path))


def find_runs_files(root: Path, links: list[str] | None = None) -> list[Path]:
    """Every ``evals/runs/*.jsonl`` below the workspace ``root``, sorted, as
    :func:`~skill_eval.linter.reader.walk_folders` walks; ``links`` receives every link met."""
    from .reader import walk_folders

    found: list[Path] = []
    for folder, files, subfolders in walk_folders(root, TOOL_FOLDERS, None, links):
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
    """:func:`find_runs_files` of a workspace root from the folders its fixture walk
    left out by name (``pruned``: :data:`~skill_eval.linter.reader.SKIPPED_FOLDERS`), without walking it again."""
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


class RunsFile(msgspec.Struct):
    """The starts of one runs file, as :func:`parse_runs` reads them."""

    path: Path
    records: list[tuple[int, dict[str, Any]]] = []
    """Logical records (a start with its outcome, or a schema 1 record) by 1-based line."""
    torn: list[int] = []
    """Lines set aside that count as starts."""
    torn_other: list[int] = []
    """Lines set aside that were outcomes, plans or decisions: not starts."""
    plans: list[tuple[int, dict[str, Any]]] = []
    unfinished: list[str] = []
    """start_id of every start without an outcome."""
    decisions: list[tuple[int, dict[str, Any]]] = []
    """``skill-eval calibrate``'s observations (never starts)."""

    @property
    def starts(self) -> int:
        """Starts this file stands for: one per logical record, one per torn line."""
        return len(self.records) + len(self.torn)


def odd_field(record: dict[str, Any]) -> str | None:
    """msgspec's path (such as ``$.defects[0]``) to a value of a field readers use whose
    JSON type is not docs/format.md's, or ``None``: missing and unknown fields and record
    types are not odd."""
    kind = record.get("type")
    if kind is not None and type(kind) is not str:
        return "type"
    check = _CHECKS.get(kind)
    if check is None:
        return None
    try:
        msgspec.convert(record, check)
    except msgspec.ValidationError as error:
        return str(error).rpartition(" - at ")[2].strip("`")
    except UnicodeEncodeError:  # a key with a lone surrogate, which msgspec cannot match to a field
        return odd_field(_without_surrogate_keys(record))
    return None


def _without_surrogate_keys(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` (and a plan's ``lint`` entries) without the keys holding a lone surrogate."""
    def kept(entry: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in entry.items() if key.encode("utf-8", "replace").decode() == key}

    found = kept(record)
    if isinstance(found.get("lint"), list):
        found["lint"] = [kept(entry) if isinstance(entry, dict) else entry for entry in found["lint"]]
    return found


def parse_runs(path: Path, raw: bytes) -> RunsFile:
    """The starts of a runs file from its bytes (callers read them through the opener they
    trust). A line that is no JSON object, has an :func:`odd_field`, or is a start,
    outcome or schema 1 record without a ``probe`` string is set aside in
    :attr:`RunsFile.torn` (a start) or :attr:`RunsFile.torn_other`."""
    result = RunsFile(path)
    starts: dict[str, int] = {}
    outcomes: dict[str, tuple[int, dict[str, Any]]] = {}
    for number, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            (result.torn_other if line.lstrip().startswith(_NOT_A_START) else result.torn).append(number)
            continue
        if not isinstance(record, dict):
            result.torn.append(number)
            continue
        kind = record.get("type")
        if odd_field(record) is not None:
            (result.torn_other if kind in _NOT_STARTS else result.torn).append(number)
        elif kind == "plan":
            result.plans.append((number, record))
        elif kind == "decision":
            result.decisions.append((number, record))
        elif kind == "outcome":
            if isinstance(record.get("probe"), str) and isinstance(record.get("start_id"), str):
                outcomes.setdefault(record["start_id"], (number, record))
            else:
                result.torn_other.append(number)
        elif not isinstance(record.get("probe"), str):
            result.torn.append(number)
        elif kind in (None, "start"):  # not a later schema's record type
            if kind == "start" and isinstance(record.get("start_id"), str):
                starts.setdefault(record["start_id"], len(result.records))
            result.records.append((number, record))
    for start_id, position in starts.items():
        number, merged = result.records[position][0], dict(result.records[position][1])
        found = outcomes.pop(start_id, None)
        if found is None:
            merged.update(status="interrupted", unfinished=True, caught=[])
            result.unfinished.append(start_id)
        else:
            outcome = found[1]
            merged |= {key: outcome[key] for key in _OUTCOME_KEYS if key in outcome}
            merged |= {key: value for key, value in outcome.items() if key not in merged and key != "type"}
            merged.setdefault("status", "error")
        result.records[position] = (number, merged)
    for number, outcome in outcomes.values():  # an outcome whose start line is gone: still a start
        result.records.append((number, dict(outcome)))
    result.records.sort(key=lambda item: item[0])
    return result


def read_frozen(path: Path, raw: bytes | None = None) -> dict[tuple[str, int], dict[str, Any]]:
    """frozen.json's cases keyed by ``(id, version)``; empty when missing or invalid."""
    try:
        data = json.loads((Path(path).read_bytes() if raw is None else raw).decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):  # a UnicodeDecodeError is a ValueError
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
    status, error = record.get("status"), record.get("error")
    return status == "interrupted" or (
        status == "error" and isinstance(error, str) and error.startswith("interrupted"))


# -- samples and zones ----------------------------------------------------------------


def record_passed(record: dict[str, Any]) -> bool | None:
    """Whether an ``ok`` record's answer caught every defect (a band probe: a count within
    ``band``); ``None`` when not ok or ``contaminated`` (it saw the answer key)."""
    if record.get("status") != "ok" or record.get("contaminated"):
        return None
    caught = record.get("caught") or []
    band = record.get("band")
    if record.get("kind") == "band" and isinstance(band, dict):
        low, high = band.get("min_caught", 0), band.get("max_caught", len(record.get("defects") or ()))
        return isinstance(low, int) and isinstance(high, int) and low <= len(caught) <= high
    defects = record.get("defects") or []
    return bool(defects) and all(d in caught for d in defects)


class ArmSample(msgspec.Struct):
    """One arm's graded reps of one sample, and its failed starts. ``unreadable``: graded
    reps whose answer had no field the output spec names (misses)."""

    reps: int = 0
    caught: int = 0
    errors: int = 0
    timeouts: int = 0
    interrupted: int = 0
    unreadable: int = 0

    @property
    def rate(self) -> float | None:
        """The caught share of the graded reps (``None`` without any)."""
        return self.caught / self.reps if self.reps else None


ZONES = ("ceiling", "window", "floor", "adverse", "mixed", "pending", "unreadable")


def zone_of(control: ArmSample, treatment: ArmSample) -> str:
    """The calibration zone of a sample, checked in the order of docs/report.md ("Zones"), ``unreadable`` first."""
    graded = control.reps + treatment.reps
    if graded > 0 and 2 * (control.unreadable + treatment.unreadable) > graded:
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


class VersionSample(msgspec.Struct):
    """The graded sample of one probe version (or of a report row: :class:`skill_eval.evals.stats.RowSample`)."""

    probe: str
    version: int
    arms: dict[str, ArmSample] = msgspec.field(default_factory=lambda: {arm: ArmSample() for arm in ARMS})
    starts: int = 0

    @property
    def zone(self) -> str:
        """:func:`zone_of` its arms."""
        return zone_of(self.arms["control"], self.arms["treatment"])

    def count(self, record: dict[str, Any]) -> None:
        """Count ``record`` as one of the sample's starts (the report's row notes more of it)."""
        self.starts += 1


_REP_FIELDS = ("probe", "version", "probe_sha256", "artifact_sha256", "skill_sha256", "arm", "rep", "agent",
               "model", "skill_tree_sha256")


def rep_identity(record: dict[str, Any]) -> tuple:
    """What makes two records the same rep, the runner's resume key (docs/format.md,
    "Rep identity"); ``skill_tree_sha256`` last, ``None`` in records older than it."""
    return tuple(map(record.get, _REP_FIELDS))


def sample_by(records: Iterable[dict[str, Any]], group, agent: str | None,
              sample_type: type[VersionSample] | None = None) -> dict[tuple, VersionSample]:
    """Records grouped by ``group(record)`` into samples of ``sample_type``, each rep graded
    once: by its latest ``ok`` record, else its latest failure. Starts count every record."""
    samples: dict[tuple, VersionSample] = {}
    outcomes: dict[tuple, tuple[tuple, bool, bool]] = {}
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
            sample = samples[key] = (sample_type or VersionSample)(record["probe"], version)
        sample.count(record)
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


def sample_versions(records: Iterable[dict[str, Any]]) -> dict[tuple[str, int], VersionSample]:
    """Samples per (probe id, version), every agent and content of the version pooled
    (the calibration rules' view; the report's :func:`skill_eval.evals.stats.sample_rows` never pools)."""
    return sample_by(records, lambda record: (record["probe"], record["version"]), None)
