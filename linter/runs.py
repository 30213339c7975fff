"""Eval-run records and frozen cases, read and written in one place.

fixture-format.md, "Results of eval runs": every start of an agent on a probe
appends one JSON object as one line to a file under ``evals/runs/`` beside the
probe's skill. This module is that file format's single implementation, shared
by the eval runner (which writes) and the calibration rules SE502-SE505 (which
read). It imports nothing but the standard library, so the linter stays fast.

Durability contract
-------------------
* :func:`append_records` writes each record with **one** ``os.write`` of the
  full line on an ``O_APPEND`` descriptor, under an exclusive ``flock``, then
  ``fsync`` (once per batch: group commit; nothing is reported as recorded
  before its fsync returns). A killed writer can leave at most one torn
  (partial) last line.
* The runner starts a new file per invocation and suite
  (``evals/runs/<UTC time>-<agent>-<random>.jsonl``); resume, budget and
  report read every file of the folder.
* Before appending, the writer checks the file's last byte: if a torn line
  is there, the new record starts on a fresh line, so it is never glued to the
  fragment.
* :func:`read_runs_file` ignores any line that is not a complete JSON object
  ending in a newline and counts it in ``torn``. A torn line stands for a start
  whose record was lost while being written, so the budget counts it as a start
  (every start counts) while the report cannot grade it.

Zones
-----
:func:`zone_of` classifies one probe version from its per-arm sample, as in the
seed's diagram (ceiling / usable window / floor), plus ``adverse`` (control
caught more often than treatment), ``mixed`` (anything else) and ``pending``
(an arm needed for the call has no graded rep yet).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

RUNS_FOLDER = ("evals", "runs")
FROZEN_FILE = ("evals", "frozen.json")
RECORD_SCHEMA = 1
STATUSES = ("ok", "error", "timeout")
ARMS = ("control", "treatment")

_SKIPPED = frozenset({"node_modules", "__pycache__", "site-packages"})


def sha256_bytes(data: bytes) -> str:
    import hashlib  # only workspaces with run records need it (~5 ms to import)

    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    return sha256_bytes(Path(path).read_bytes())


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


def new_runs_file(suite: Path, agent: str) -> Path:
    """A fresh runs file for one invocation of the runner: records of concurrent
    runners never share a file, and branches never conflict on merge."""
    import re
    import uuid
    from datetime import datetime, timezone

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")  # names sort in time order
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", agent).strip("-") or "agent"
    return runs_folder(suite) / f"{stamp}-{safe}-{uuid.uuid4().hex[:6]}.jsonl"


def suite_runs_files(suite: Path) -> list[Path]:
    """The runs files of one suite (one skill's ``evals/runs/*.jsonl``), sorted."""
    folder = runs_folder(suite)
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file())
    except OSError:
        return []


def find_runs_files(root: Path) -> list[Path]:
    """Every ``evals/runs/*.jsonl`` below the workspace ``root``, sorted.

    Hidden folders, ``node_modules``, ``__pycache__``, ``site-packages`` and
    virtual environments (a folder holding ``pyvenv.cfg``) are not entered; nor
    are symbolic links to folders (:func:`~skill_eval.linter.reader.walk_folders`;
    ``os.walk`` plus a ``pyvenv.cfg`` test per folder cost ~2x as much over
    1,000 probe folders)."""
    from .reader import walk_folders

    found: list[Path] = []
    for folder, files, subfolders in walk_folders(root, _SKIPPED):
        if os.path.basename(folder) == "runs" and os.path.basename(os.path.dirname(folder)) == "evals":
            found.extend(Path(folder, name) for name in files if name.endswith(".jsonl"))
            subfolders.clear()  # answers/ and the like are not records
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


# -- writing --------------------------------------------------------------------------


def encode_record(record: dict[str, Any]) -> bytes:
    """The record as one line: compact JSON, no raw newlines, ending in ``\\n``."""
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":"), sort_keys=False) + "\n").encode("utf-8")


def append_record(path: Path, record: dict[str, Any], *, fsync: bool = True) -> None:
    """Append ``record`` to ``path`` whole (see the module's durability contract)."""
    append_records(path, [record], fsync=fsync)


def append_records(path: Path, records: list[dict[str, Any]], *, fsync: bool = True) -> None:
    """Append each record with its own single ``os.write`` (each line whole),
    then one ``fsync`` for the lot (group commit): none is acknowledged before
    all are on disk."""
    import fcntl

    if not records:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        fresh = b""
        if size:
            with open(path, "rb") as tail:
                tail.seek(size - 1)
                if tail.read(1) != b"\n":
                    fresh = b"\n"  # a killed writer left a torn line: start on a fresh one
        for record in records:
            line = fresh + encode_record(record)
            fresh = b""
            written = os.write(fd, line)
            if written != len(line):  # a short write on a regular file means a full disk
                raise OSError(f"short write to {path}: {written} of {len(line)} bytes (is the disk full?)")
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as pretty JSON through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


# -- reading --------------------------------------------------------------------------


class RunsFile:
    """The records of one runs file, each with its 1-based line, and torn lines.

    This module's records are plain classes, not dataclasses: the calibration
    rules import it on every start, and :mod:`dataclasses` costs ~10 ms to
    import (~1 ms more per class)."""

    __slots__ = ("path", "records", "torn")

    def __init__(self, path: Path, records: list[tuple[int, dict[str, Any]]] | None = None,
                 torn: list[int] | None = None) -> None:
        self.path = path
        self.records: list[tuple[int, dict[str, Any]]] = [] if records is None else records
        self.torn: list[int] = [] if torn is None else torn

    def __repr__(self) -> str:
        return f"RunsFile({self.path!r}, {len(self.records)} records, torn lines {self.torn})"

    @property
    def starts(self) -> int:
        """Starts this file stands for: one per record, one per torn line."""
        return len(self.records) + len(self.torn)


_RUNS_CACHE: dict[Path, tuple[tuple[int, int], RunsFile]] = {}


def read_runs_file(path: Path) -> RunsFile:
    """Parse a runs file; cached by (mtime, size) so the language server re-reads
    only changed files. A missing file reads as empty."""
    path = Path(path)
    try:
        stat = os.stat(path)
    except OSError:
        return RunsFile(path)
    key = (stat.st_mtime_ns, stat.st_size)
    cached = _RUNS_CACHE.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        raw = path.read_bytes()
    except OSError:
        return RunsFile(path)
    result = parse_runs(path, raw)
    _RUNS_CACHE[path] = (key, result)
    return result


def parse_runs(path: Path, raw: bytes) -> RunsFile:
    result = RunsFile(path)
    lines = raw.split(b"\n")
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            result.torn.append(index + 1)
            continue
        if not isinstance(record, dict) or not isinstance(record.get("probe"), str):
            result.torn.append(index + 1)
            continue
        result.records.append((index + 1, record))
    # A final line without its newline is kept only if it is a whole record (the
    # one write landed but for nothing); a fragment of a killed write is torn.
    return result


def iter_records(files: Iterable[Path]) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    for path in files:
        runs = read_runs_file(path)
        for line, record in runs.records:
            yield path, line, record


def count_starts(files: Iterable[Path]) -> int:
    """Every start on record in ``files``: records of any status, plus torn lines."""
    return sum(read_runs_file(path).starts for path in files)


def read_frozen(path: Path, raw: bytes | None = None) -> dict[tuple[str, int], dict[str, Any]]:
    """frozen.json's cases keyed by ``(id, version)``; empty when missing or invalid."""
    if raw is None:
        try:
            raw = Path(path).read_bytes()
        except OSError:
            return {}
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return {}
    cases = data.get("cases") if isinstance(data, dict) else None
    frozen: dict[tuple[str, int], dict[str, Any]] = {}
    for case in cases if isinstance(cases, list) else ():
        if isinstance(case, dict) and isinstance(case.get("id"), str) and isinstance(case.get("version"), int):
            frozen[(case["id"], case["version"])] = case
    return frozen


# -- samples, intervals and zones -----------------------------------------------------


def record_passed(record: dict[str, Any]) -> bool | None:
    """Whether an ``ok`` record's answer caught what the probe asks for.

    A floor (or kind-less) probe: every defect caught. A band probe: the count
    of caught defects within ``band`` (min..max). ``None`` when not ok.
    """
    if record.get("status") != "ok":
        return None
    caught = record.get("caught") or []
    band = record.get("band")
    if record.get("kind") == "band" and isinstance(band, dict):
        low, high = band.get("min_caught", 0), band.get("max_caught", len(record.get("defects") or ()))
        return isinstance(low, int) and isinstance(high, int) and low <= len(caught) <= high
    defects = record.get("defects") or []
    return bool(defects) and all(d in caught for d in defects)


class ArmSample:
    """One arm's graded reps of one probe version."""

    __slots__ = ("reps", "caught", "errors", "timeouts")

    def __init__(self, reps: int = 0, caught: int = 0, errors: int = 0, timeouts: int = 0) -> None:
        self.reps, self.caught, self.errors, self.timeouts = reps, caught, errors, timeouts

    def __repr__(self) -> str:
        return f"ArmSample(reps={self.reps}, caught={self.caught}, errors={self.errors}, timeouts={self.timeouts})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArmSample):
            return NotImplemented
        return (self.reps, self.caught, self.errors, self.timeouts) == (other.reps, other.caught, other.errors, other.timeouts)

    @property
    def rate(self) -> float | None:
        return self.caught / self.reps if self.reps else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.caught, self.reps) if self.reps else None


def wilson(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval (95% by default) of ``successes``/``trials``."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


ZONES = ("ceiling", "window", "floor", "adverse", "mixed", "pending")


def zone_of(control: ArmSample, treatment: ArmSample) -> str:
    """The calibration zone of a sample (see the module docstring)."""
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
    """The graded sample of one probe version, from its records."""

    __slots__ = ("probe", "version", "arms", "starts", "hashes", "agents", "kind", "last_ended")

    def __init__(self, probe: str, version: int) -> None:
        self.probe = probe
        self.version = version
        self.arms: dict[str, ArmSample] = {arm: ArmSample() for arm in ARMS}
        self.starts = 0
        self.hashes: set[tuple[str, str]] = set()
        self.agents: set[str] = set()
        self.kind: str | None = None
        self.last_ended: str | None = None

    def __repr__(self) -> str:
        return f"VersionSample({self.probe!r}, {self.version}, starts={self.starts}, arms={self.arms})"

    @property
    def zone(self) -> str:
        return zone_of(self.arms["control"], self.arms["treatment"])


def sample_versions(records: Iterable[dict[str, Any]], agent: str | None = None) -> dict[tuple[str, int], VersionSample]:
    """Group records by (probe id, version) and grade each rep once.

    A rep is identified by (probe hash, artifact hash, arm, rep, agent, model);
    its outcome is its latest ``ok`` record. Starts count every record.
    """
    samples: dict[tuple[str, int], VersionSample] = {}
    outcomes: dict[tuple, tuple[dict[str, Any], bool]] = {}
    failures: dict[tuple, dict[str, Any]] = {}
    for record in records:
        if agent is not None and record.get("agent") != agent:
            continue
        version = record.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            continue
        key = (record["probe"], version)
        sample = samples.get(key)
        if sample is None:
            sample = samples[key] = VersionSample(record["probe"], version)
        sample.starts += 1
        sample.hashes.add((str(record.get("probe_sha256")), str(record.get("artifact_sha256"))))
        if isinstance(record.get("agent"), str):
            sample.agents.add(record["agent"])
        if isinstance(record.get("kind"), str):
            sample.kind = record["kind"]
        ended = record.get("ended")
        if isinstance(ended, str) and (sample.last_ended is None or ended > sample.last_ended):
            sample.last_ended = ended
        arm = record.get("arm")
        if arm not in ARMS:
            continue
        rep_key = (key, record.get("probe_sha256"), record.get("artifact_sha256"), arm, record.get("rep"),
                   record.get("agent"), record.get("model"))
        passed = record_passed(record)
        if passed is None:
            failures[rep_key] = record
        else:
            outcomes[rep_key] = (record, passed)
    for rep_key, (_record, passed) in outcomes.items():
        arm_sample = samples[rep_key[0]].arms[rep_key[3]]
        arm_sample.reps += 1
        arm_sample.caught += int(passed)
    for rep_key, record in failures.items():
        if rep_key in outcomes:
            continue  # a retry succeeded
        arm_sample = samples[rep_key[0]].arms[rep_key[3]]
        if record.get("status") == "timeout":
            arm_sample.timeouts += 1
        else:
            arm_sample.errors += 1
    return samples
