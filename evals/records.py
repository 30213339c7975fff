"""Eval-run records, written: the runner's side of the runs file format.

fixture-format.md, "Results of eval runs": each start of an agent on a probe
is on record before the agent runs. The format is read by
:mod:`skill_eval.linter.run_records` (which the calibration rules use too);
this module writes it, and reads whole files for the runner and the report
(:func:`read_runs_file`, cached by size and time). docs/format.md ("Run
records") lists the fields.

Records (schema 2)
------------------
Each runner invocation appends to a file of its own per suite
(:func:`new_runs_file`: ``evals/runs/<UTC time>-<agent>-<random>.jsonl``),
created exclusively and held under an exclusive ``flock`` for the runner's
whole life. Its lines:

* ``{"schema":2,"type":"plan",...}`` — the starts this runner reserved under
  the workspace's run lock (``starts``: ``[probe, version, probe_sha256,
  artifact_sha256, skill_sha256, arm, rep, skill_tree_sha256]`` each). A reservation holds only while the
  file's lock is held (its runner is alive); it is never a start.
* ``{"schema":2,"type":"start","start_id":...}`` — written whole and
  fsync'd before the agent's process is spawned.
* ``{"schema":2,"type":"outcome","start_id":...}`` — the start's end: its
  ``status`` (``ok``, ``error``, ``timeout``, ``interrupted``), answer and
  grading.
* ``{"schema":2,"type":"decision",...}`` — ``skill-eval calibrate``'s
  observation of one probe version (zone, the starts it cost, the rule that
  decided it); never a start.

The records are typed (:class:`PlanRecord`, :class:`StartRecord`,
:class:`OutcomeRecord`, :class:`DecisionRecord`: ``msgspec`` structs, one
encoder); the fields that say which probe content a record is of are
declared once (:class:`ProbeRecord`, filled by :func:`probe_identity`). A
field that is sometimes left out is ``UNSET`` until set, and then not
written. Their JSON Schema (:func:`records_schema`) is published as
``viewer_assets/run-records.schema.json``, beside the report model's.

Durability
----------
:class:`RunsLog` writes a batch of records with one ``os.write`` and one
``fdatasync`` (group commit: the starts that threads hand in while a sync is
under way go out together with the next). Nothing is reported as recorded
before its sync returned. A killed writer leaves at most one torn last line.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Union

import msgspec
from msgspec import UNSET, UnsetType

from skill_eval.linter.run_records import RunsFile, parse_runs, rep_identity, runs_folder, sha256_bytes

RECORD_SCHEMA = 2
"""The ``schema`` of the records a runner writes now."""

PROBE_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
"""probe.json's ``id`` pattern (fixture-format.md); only such ids name folders."""


def sha256_file(path: Path) -> str:
    return sha256_bytes(Path(path).read_bytes())


def valid_probe_id(probe_id: object) -> bool:
    """Whether ``probe_id`` matches :data:`PROBE_ID_PATTERN` (and so may name a folder)."""
    if not isinstance(probe_id, str) or not probe_id or len(probe_id) > 200:
        return False
    if not ("a" <= probe_id[0] <= "z" or "0" <= probe_id[0] <= "9"):
        return False
    return all("a" <= c <= "z" or "0" <= c <= "9" or c in "._-" for c in probe_id)


def new_runs_file(suite: Path, agent: str) -> Path:
    """A fresh runs file for one invocation of the runner: records of concurrent
    runners never share a file, and branches never conflict on merge."""
    import re
    import uuid
    from datetime import datetime, timezone

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")  # names sort in time order
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", agent).strip("-.") or "agent"
    return runs_folder(suite) / f"{stamp}-{safe[:60]}-{uuid.uuid4().hex[:6]}.jsonl"


# -- the records ----------------------------------------------------------------------


class Record(msgspec.Struct, kw_only=True):
    """A line of a runs file. ``schema`` and ``type`` come first, so that a
    torn line still shows its type
    (:data:`skill_eval.linter.run_records._NOT_A_START`)."""

    schema: int = RECORD_SCHEMA
    type: str


class ProbeRecord(Record, kw_only=True):
    """A record of one probe content: the probe's id and version and the
    content hashes of probe.json, its artifact, SKILL.md and the skill folder
    (``None`` without a skill). :func:`probe_identity` fills them."""

    probe: str
    version: int
    probe_sha256: str
    artifact_sha256: str
    skill_sha256: Union[str, None]
    skill_tree_sha256: Union[str, None]


IDENTITY_FIELDS = tuple(name for name in ProbeRecord.__struct_fields__ if name not in Record.__struct_fields__)
"""The probe-identity fields of :class:`ProbeRecord`, in order."""


def probe_identity(probe: Any) -> dict[str, Any]:
    """:data:`IDENTITY_FIELDS` of a :class:`~skill_eval.evals.probes.Probe`."""
    return {"probe": probe.probe_id, "version": probe.version, "probe_sha256": probe.probe_sha256,
            "artifact_sha256": probe.artifact_sha256, "skill_sha256": probe.skill_sha256,
            "skill_tree_sha256": probe.skill_tree_sha256}


class PlanRecord(Record, kw_only=True):
    """The starts one runner reserved under the workspace's run lock: each
    ``[probe, version, probe_sha256, artifact_sha256, skill_sha256, arm, rep,
    skill_tree_sha256]``; ``lint``: per probe content, the findings its
    preflight saw."""

    type: Literal["plan"] = "plan"
    plan_id: str
    created: str
    agent: str
    model: Union[str, None]
    runner: dict[str, Any]
    starts: list[list[Union[str, int, None]]]
    calibration_rule: Union[dict[str, Any], UnsetType] = UNSET
    calibration_rule_sha256: Union[str, UnsetType] = UNSET
    lint: Union[list[dict[str, Any]], UnsetType] = UNSET


class StartRecord(ProbeRecord, kw_only=True):
    """A start, written whole and synced before the agent's process is spawned."""

    type: Literal["start"] = "start"
    start_id: str
    probe_path: str
    kind: Union[str, None]
    band: Union[dict[str, Any], None]
    defects: list[str]
    arm: str
    rep: int
    agent: str
    model: Union[str, None]
    started: str
    plan_id: str
    runner: dict[str, Any]
    sandbox: str
    retry_of: Union[str, UnsetType] = UNSET
    resume_of: Union[str, UnsetType] = UNSET
    preset: Union[str, UnsetType] = UNSET
    treatment: Union[str, UnsetType] = UNSET
    installed_skill: Union[str, UnsetType] = UNSET
    installed_skill_sha256: Union[str, UnsetType] = UNSET
    calibration_rule: Union[dict[str, Any], UnsetType] = UNSET
    calibration_rule_sha256: Union[str, UnsetType] = UNSET


class OutcomeRecord(Record, kw_only=True):
    """A start's end: its status, answer and grading (docs/format.md lists
    when each optional field is written)."""

    type: Literal["outcome"] = "outcome"
    start_id: str
    probe: str
    version: int
    arm: str
    rep: int
    ended: str
    duration_s: float
    status: str
    exit_code: Union[int, None]
    truncated: Union[dict[str, int], UnsetType] = UNSET
    tokens_in: Union[int, UnsetType] = UNSET
    tokens_out: Union[int, UnsetType] = UNSET
    tokens_cached: Union[int, UnsetType] = UNSET
    cost_usd: Union[float, UnsetType] = UNSET
    agent_duration_s: Union[float, UnsetType] = UNSET
    turns: Union[int, UnsetType] = UNSET
    output_file: Union[str, UnsetType] = UNSET
    answer_file: Union[str, UnsetType] = UNSET
    skill_loaded: Union[bool, None, UnsetType] = UNSET
    skill_evidence: Union[str, UnsetType] = UNSET
    contaminated: Union[list[dict[str, str]], UnsetType] = UNSET
    answer_source: Union[str, UnsetType] = UNSET
    caught: Union[list[str], UnsetType] = UNSET
    expectations: Union[list[dict[str, Any]], UnsetType] = UNSET
    judge_verdicts: Union[dict[str, dict[str, Any]], UnsetType] = UNSET
    grading_errors: Union[dict[str, str], UnsetType] = UNSET
    error: Union[str, None, UnsetType] = UNSET
    passed: Union[bool, UnsetType] = UNSET
    stderr_tail: Union[str, UnsetType] = UNSET


class DecisionRecord(ProbeRecord, kw_only=True):
    """``skill-eval calibrate``'s observation of one probe version (never a start)."""

    type: Literal["decision"] = "decision"
    probe_path: str
    kind: Union[str, None]
    agent: str
    model: Union[str, None]
    zone: str
    decided_after: Union[str, None]
    control: dict[str, Any]
    treatment: Union[dict[str, Any], None]
    starts: int
    version_starts: int
    decided: str
    plan_id: str
    calibration_rule: Union[dict[str, Any], UnsetType] = UNSET
    calibration_rule_sha256: Union[str, UnsetType] = UNSET
    reason: Union[str, None, UnsetType] = UNSET
    discriminator: Union[dict[str, Any], UnsetType] = UNSET


RECORD_TYPES = (PlanRecord, StartRecord, OutcomeRecord, DecisionRecord)
"""The record types a runner writes now (schema :data:`RECORD_SCHEMA`)."""

SCHEMA_PATH = Path(__file__).with_name("viewer_assets") / "run-records.schema.json"
"""The published JSON Schema of the records (:func:`records_schema`)."""

_ENCODER = msgspec.json.Encoder()


def record_fields(record: Record) -> dict[str, Any]:
    """A record's fields as plain data, those left ``UNSET`` out (what a
    reader of its line gets)."""
    return msgspec.to_builtins(record)


def records_schema() -> dict[str, Any]:
    """The JSON Schema of a runs file's line as the runner writes it now,
    generated from :data:`RECORD_TYPES` (``python -m
    skill_eval.evals.records`` writes it to :data:`SCHEMA_PATH`)."""
    refs, components = msgspec.json.schema_components(RECORD_TYPES, ref_template="#/$defs/{name}")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "skill-eval run record",
            "description": "One line of evals/runs/*.jsonl (docs/format.md, \"Run records\"), schema "
                           f"{RECORD_SCHEMA}.", "oneOf": list(refs), "$defs": components}


def schema_text() -> str:
    """:func:`records_schema` as the published file's text."""
    return json.dumps(records_schema(), indent=2, ensure_ascii=False) + "\n"


# -- writing --------------------------------------------------------------------------


def encode_record(record: Record | dict[str, Any]) -> bytes:
    """The record as one line: compact JSON, no raw newlines, ending in ``\\n``.
    ``schema`` and ``type`` come first, so a torn line still shows its type.
    A typed record is encoded by msgspec; a dict (tools, tests, old records
    merged) by :mod:`json`, to the same text."""
    if isinstance(record, Record):
        return _ENCODER.encode(record) + b"\n"
    if "type" in record and next(iter(record)) != "schema":
        record = {"schema": record.get("schema", RECORD_SCHEMA), "type": record["type"], **record}
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":"), sort_keys=False) + "\n").encode("utf-8")


def append_record(path: Path, record: dict[str, Any], *, fsync: bool = True) -> None:
    """Append ``record`` to ``path`` whole (see :func:`append_records`)."""
    append_records(path, [record], fsync=fsync)


def append_records(path: Path, records: list[dict[str, Any]], *, fsync: bool = True) -> None:
    """Append records to a file that no runner holds (tools, tests, merges):
    each with its own single ``os.write``, under an exclusive ``flock``, then
    one ``fsync``. A torn last line left by a killed writer is first ended, so
    a new record is never glued to the fragment. The runner writes through
    :class:`RunsLog` instead."""
    import fcntl

    if not records:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
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


class RunsLog:
    """One runner's records file: created exclusively (never through a
    symbolic link), locked (``flock``, exclusive) for the runner's whole life,
    appended to with group commit.

    :meth:`append` may be called from any thread; it returns once the records
    are on disk. Whoever finds no sync under way writes everything handed in
    so far with one ``os.write`` and syncs it; the others wait for that sync
    (or the next). A failed write or sync breaks the log: that call and every
    later one raise :class:`OSError`.
    """

    def __init__(self, path: Path, *, fsync: bool = True, dir_fd: int | None = None) -> None:
        import fcntl

        self.path = Path(path)
        self.fsync = fsync
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        name = self.path.name if dir_fd is not None else self.path
        self._fd = os.open(name, flags, 0o644, dir_fd=dir_fd)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX)  # a reader's writer_alive() holds LOCK_SH for a moment
        except OSError:
            os.close(self._fd)
            raise
        self._cond = threading.Condition()
        self._pending: list[bytes] = []
        self._handed = 0   # sequence number of the last batch handed in
        self._durable = 0  # ... and of the last one on disk
        self._syncing = False
        self._broken: OSError | None = None

    def append(self, records: list[Record | dict[str, Any]], durable: bool = True) -> None:
        """Append ``records``; with ``durable``, return once they are synced.
        Without, they are written now (whole lines: a kill cannot lose them)
        and synced with the next durable batch or :meth:`close`: what a crash
        of the machine itself may then lose is an outcome, whose start then
        reads as interrupted — never a start (the runner makes start records
        durable)."""
        data = b"".join(encode_record(record) for record in records)
        if not data:
            return
        if not durable:
            with self._cond:
                if self._broken is not None:
                    raise OSError(f"{self.path}: an earlier write failed ({self._broken})")
                fd = self._fd
            try:
                self._write(data, sync=False, fd=fd)
            except OSError as error:
                with self._cond:
                    self._broken = error
                raise
            return
        with self._cond:
            if self._broken is not None:
                raise OSError(f"{self.path}: an earlier write failed ({self._broken})")
            self._pending.append(data)
            self._handed += 1
            mine = self._handed
            while self._durable < mine:
                if self._broken is not None:
                    raise OSError(f"{self.path}: {self._broken}")
                if self._syncing:
                    self._cond.wait()
                    continue
                self._syncing = True
                batch, self._pending, upto = self._pending, [], self._handed
                self._cond.release()
                failure = None
                try:
                    self._write(b"".join(batch))
                except OSError as error:
                    failure = error
                finally:
                    self._cond.acquire()
                    self._syncing = False
                    if failure is None:
                        self._durable = upto
                    else:
                        self._broken = failure
                    self._cond.notify_all()

    def _write(self, data: bytes, sync: bool = True, fd: int | None = None) -> None:
        """One ``os.write`` of whole lines (``O_APPEND`` writes of concurrent
        threads do not interleave), then the sync."""
        fd = self._fd if fd is None else fd
        written = os.write(fd, data)
        if written != len(data):  # a short write on a regular file means a full disk
            raise OSError(f"short write to {self.path}: {written} of {len(data)} bytes (is the disk full?)")
        if sync and self.fsync:
            getattr(os, "fdatasync", os.fsync)(fd)

    def close(self) -> None:
        """Sync and close the file (which releases its lock: unfinished starts
        then read as interrupted)."""
        with self._cond:
            while self._syncing:
                self._cond.wait()
            if self._fd >= 0:
                try:
                    if self.fsync and self._broken is None:
                        getattr(os, "fdatasync", os.fsync)(self._fd)
                finally:
                    os.close(self._fd)
                    self._fd = -1


def writer_alive(path: Path) -> bool:
    """Whether a runner still holds ``path`` (its ``flock``): its unfinished
    starts are running and its reservations hold. A file nobody holds — its
    runner ended or was killed — is not alive."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def reserved_starts(runs: RunsFile) -> list[tuple]:
    """The reservations of ``runs``' plans not yet started, as rep identities
    (:func:`~skill_eval.linter.run_records.rep_identity`). They hold only while
    its writer is alive (:func:`writer_alive`)."""
    if not runs.plans:
        return []
    started = {rep_identity(record) for _line, record in runs.records}
    found = []
    for _line, plan in runs.plans:  # its starts are 7 or 8 values each (run_records.odd_field)
        for entry in plan.get("starts") or ():
            identity = (*entry[:7], plan.get("agent"), plan.get("model"), entry[7] if len(entry) == 8 else None)
            if identity not in started:
                found.append(identity)
    return found


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


# -- reading whole files ----------------------------------------------------------


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


def iter_records(files: Iterable[Path]) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    for path in files:
        runs = read_runs_file(path)
        for line, record in runs.records:
            yield path, line, record


def count_starts(files: Iterable[Path]) -> int:
    """Every start on record in ``files``: records of any status, plus torn lines."""
    return sum(read_runs_file(path).starts for path in files)


if __name__ == "__main__":  # pragma: no cover - regenerates the published schema
    SCHEMA_PATH.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
