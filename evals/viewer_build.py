"""``build_model``: the report model (:mod:`~skill_eval.evals.viewer_model`)
from the run records a workspace holds.

This module is the one place that reads run records for the viewer and the
JUnit writer; re-pointing the report at another record format means changing
:func:`normalize_records` (and nothing that reads the model). What it does:

* **Starts.** Every record is a start. Records sharing a ``start_id`` are one
  start, later records completing earlier ones (a start record written before
  the agent ran, then its outcome); a start without an outcome status reads as
  ``interrupted``. Today's runner writes one record per start, and stores an
  interrupted start as ``error`` with an ``error`` that begins
  ``interrupted``: it is shown as ``interrupted``.
* **Groups.** One per (skill, probe id, version, probe.json hash, artifact
  hash, skill hash, agent, model), never pooled. A rep is graded by its
  latest ``ok`` start; ``passed`` is :func:`~skill_eval.linter.runs.record_passed`.
* **The files on disk.** A group whose probe.json and artifact still hash as
  they did is ``current``; its probe is linted for the report (``lint.when``
  ``report``) and each answer graded again with the probe's ``caught_when``,
  per expectation, to show which held and why. A group whose files changed
  keeps the caught defects its records hold, without expectations.
* **Answers** are read from the suite's ``evals/runs/`` folder only (a path
  in a record that leads elsewhere is not read), first :data:`ANSWER_CAP`
  characters.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

from skill_eval import __version__
from skill_eval.linter.runs import (ARMS, find_runs_files, frozen_path, read_frozen, read_runs_file, record_passed,
                                    runs_folder, sha256_bytes, wilson, zone_of, ArmSample as RunsArmSample)
from skill_eval.linter.textfile import TextDocument

from .grading import BadExpectation, check_expectation, read_answer, graded_field_names
from .probes import Probe, ProbeError, Workspace
from .viewer_model import (ALPHA, ANSWER_CAP, SCHEMA_ID, STDERR_CAP, Answer, ArmSample, DefectGrading, Expectation,
                           Finding, Group, ReportModel, Start, evidence_of)

ARM_ORDER = {arm: index for index, arm in enumerate(ARMS)}
INTERRUPTED_PREFIX = "interrupted"
DEFAULT_MODEL = "(agent default)"
"""The model of a record that names none (the agent's own default)."""


# -- records -> starts ------------------------------------------------------------------


def normalize_records(records: Iterable[tuple[Path, dict[str, Any]]]) -> list[tuple[Path, dict[str, Any]]]:
    """``(suite folder, record)`` pairs with the records of one start merged
    (by ``start_id``, in file order), each with a ``status`` of
    :data:`~skill_eval.evals.viewer_model.STATUSES`."""
    merged: dict[Any, tuple[Path, dict[str, Any]]] = {}
    for index, (suite, record) in enumerate(records):
        start_id = record.get("start_id")
        key = (str(suite), start_id) if isinstance(start_id, str) and start_id else ("line", index)
        if key in merged:
            merged[key][1].update({k: v for k, v in record.items() if v is not None})
        else:
            merged[key] = (suite, dict(record))
    starts = []
    for suite, record in merged.values():
        status = record.get("status")
        error = record.get("error")
        if status == "error" and isinstance(error, str) and error.startswith(INTERRUPTED_PREFIX):
            status = "interrupted"
        elif status not in ("ok", "error", "timeout", "interrupted"):
            status = "interrupted"
            record.setdefault("error", "no outcome on record: the runner stopped while this start ran")
        record["status"] = status
        starts.append((suite, record))
    return starts


def _identity(suite: Path, record: dict[str, Any]) -> tuple:
    return (str(suite), record["probe"], record["version"], record.get("probe_sha256"), record.get("artifact_sha256"),
            record.get("skill_sha256"), str(record.get("agent") or "?"), str(record.get("model") or DEFAULT_MODEL))


def _key(identity: tuple) -> str:
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:16]


def _number(value: Any, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return kind(value) if value >= 0 or kind is int else None


def _first(record: dict[str, Any], *names: str) -> Any:
    for name in names:
        value = record.get(name)
        if value is not None:
            return value
    usage = record.get("usage")
    if isinstance(usage, dict):
        for name in names:
            if usage.get(name) is not None:
                return usage[name]
    return None


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


# -- answers and grading ------------------------------------------------------------------


def read_answer_file(suite: Path, name: Any) -> tuple[str | None, str | None]:
    """The text of an answer file named in a record (relative to the suite's
    ``evals/runs/``), or why it is not read."""
    if not isinstance(name, str) or not name:
        return None, None
    folder = runs_folder(suite).resolve()
    path = (folder / name).resolve()
    if folder not in path.parents:
        return None, f"answer file {name!r} is outside {folder}: not read"
    try:
        return path.read_bytes().decode("utf-8", errors="replace"), None
    except OSError as error:
        return None, f"answer file {name!r} cannot be read ({error.strerror or error})"


def grade_expectations(text: str, probe: Probe) -> tuple[str, list[tuple[str, bool, list[Expectation]]]]:
    """How the answer was read (``json``, ``lines``, ``none``), and per defect:
    its id, whether it is caught, and each ``caught_when`` field's expectation,
    whether it held and why. The same reading and reasons as
    :func:`skill_eval.evals.grading.grade_defect` (a test holds them equal),
    one expectation at a time."""
    spec = probe.output_spec
    answer = read_answer(text, spec, graded_field_names(probe.defects))
    graded = []
    for defect in probe.defects:
        defect_id = str(defect.get("id", "?"))
        caught_when = defect.get("caught_when")
        expectations: list[Expectation] = []
        if not isinstance(caught_when, dict) or not caught_when:
            graded.append((defect_id, False, expectations))
            continue
        for field_name, expected in caught_when.items():
            name = field_name
            if spec is not None:
                found = spec.lookup(field_name)
                if found is None:
                    expectations.append(Expectation(field=field_name, expected=expected, held=False,
                                                    reason="not a field of the output spec"))
                    continue
                name = found.name
            value = answer.fields.get(name)
            if value is None:
                expectations.append(Expectation(field=field_name, expected=expected, held=False,
                                                reason="missing from the answer"))
                continue
            try:
                held, reason = check_expectation(expected, value)
            except BadExpectation as error:
                held, reason = False, f"unreadable expectation: {error}"
            expectations.append(Expectation(field=field_name, expected=expected, held=held, reason=reason))
        graded.append((defect_id, all(e["held"] for e in expectations), expectations))
    return answer.source, graded


class _Disk:
    """What the workspace holds now: probes by id, their hashes, loaded probes."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.by_id: dict[str, list[tuple[int, str | None, str | None, Path]]] = {}
        reader = workspace.session.reader
        for path in workspace.session.all_probe_paths:
            context = workspace.session.probe(path)
            if context.probe_id is None:
                continue
            probe_hash = artifact_hash = None
            try:
                probe_hash = sha256_bytes(reader.read_bytes(path))
                artifact = context.artifact_document
                if isinstance(artifact, TextDocument):
                    artifact_hash = sha256_bytes(reader.read_bytes(artifact.path))
            except OSError:
                pass
            self.by_id.setdefault(context.probe_id, []).append((context.version, probe_hash, artifact_hash, path))
        self._loaded: dict[Path, Probe | None] = {}

    def state(self, probe_id: str, version: int, probe_hash: Any, artifact_hash: Any) -> tuple[str, Path | None]:
        """``on_disk`` of a group, and its probe.json when it is current."""
        found = self.by_id.get(probe_id)
        if not found:
            return "missing", None
        for disk_version, disk_probe, disk_artifact, path in found:
            if disk_version == version and (disk_probe, disk_artifact) == (probe_hash, artifact_hash):
                return "current", path
        highest = max(v for v, *_ in found)
        if any(v == version for v, *_ in found):
            return "edited", None
        return ("superseded" if highest > version else "older"), None

    def probe(self, path: Path) -> Probe | None:
        if path not in self._loaded:
            try:
                self._loaded[path] = self.workspace.load(path, need_skill=False, need_spec=False)
            except ProbeError:
                self._loaded[path] = None
        return self._loaded[path]


def _lint_findings(workspace: Workspace, paths: Sequence[Path]) -> dict[Path, list[Finding]]:
    """Each probe folder's lint findings (its own files and what it reads)."""
    from skill_eval.linter.engine import lint_paths

    if not paths:
        return {}
    result = lint_paths(list(paths), config=workspace.config)
    found: dict[Path, list[Finding]] = {path.parent: [] for path in paths}
    for diagnostic in result.diagnostics:
        folder = diagnostic.probe
        if folder is None:
            folder = next((f for f in found if f == diagnostic.path.parent or f in diagnostic.path.parents), None)
        if folder in found:
            found[folder].append(Finding(code=diagnostic.code, severity=diagnostic.severity.value,
                                         message=diagnostic.message, path=_relative(diagnostic.path, workspace.root),
                                         line=max(1, diagnostic.start.line), column=max(1, diagnostic.start.column)))
    return found


# -- the model ----------------------------------------------------------------------------


def _start(suite: Path, record: dict[str, Any], root: Path, probe: Probe | None) -> Start:
    status = record["status"]
    text, problem = read_answer_file(suite, record.get("answer_file")) if record.get("answer_file") else (None, None)
    answer: Answer | None = None
    truncated = record.get("truncated")
    output_truncated = bool(truncated.get("stdout")) if isinstance(truncated, dict) else bool(
        truncated or record.get("stdout_truncated") or record.get("output_truncated"))
    if text is not None:
        answer = Answer(text=text[:ANSWER_CAP], chars=len(text), truncated=len(text) > ANSWER_CAP,
                        output_truncated=output_truncated,
                        file=_relative(runs_folder(suite) / record["answer_file"], root),
                        source=record.get("answer_source") if record.get("answer_source") in ("json", "lines", "none") else None)
    caught = [str(c) for c in record.get("caught") or [] if isinstance(c, str)]
    defects = [str(d) for d in record.get("defects") or []]
    grading: list[DefectGrading] = []
    note = problem
    if status == "ok":
        if probe is not None and text is not None:
            source, graded = grade_expectations(text, probe)
            if answer is not None and answer["source"] is None:
                answer["source"] = source
            regraded = sorted(d for d, ok, _e in graded if ok)
            if regraded != sorted(caught):
                note = (f"graded again for this report: caught {', '.join(regraded) or 'nothing'}; the run recorded "
                        f"{', '.join(sorted(caught)) or 'nothing'} (the output spec or the grading changed since)")
            grading = [DefectGrading(defect=d, caught=d in caught, expectations=e) for d, _ok, e in graded]
        else:
            grading = [DefectGrading(defect=d, caught=d in caught, expectations=None) for d in defects]
            if note is None:
                note = ("the expectations are not shown: this version's probe.json is not on disk as it ran"
                        if probe is None else "the expectations are not shown: the answer file is not on record")
    stderr = record.get("stderr_tail")
    return Start(
        start_id=record.get("start_id") if isinstance(record.get("start_id"), str) else None,
        arm=record["arm"], rep=record["rep"] if isinstance(record.get("rep"), int) and record["rep"] >= 1 else None,
        status=status, started=record.get("started") if isinstance(record.get("started"), str) else None,
        ended=record.get("ended") if isinstance(record.get("ended"), str) else None,
        duration_s=_number(_first(record, "duration_s"), float),
        tokens_in=_number(_first(record, "tokens_in", "input_tokens"), int),
        tokens_out=_number(_first(record, "tokens_out", "output_tokens"), int),
        cost_usd=_number(_first(record, "cost_usd"), float), turns=_number(_first(record, "turns", "num_turns"), int),
        exit_code=record.get("exit_code") if isinstance(record.get("exit_code"), int) and not isinstance(record.get("exit_code"), bool) else None,
        retry_of=record.get("retry_of") if isinstance(record.get("retry_of"), str) else None,
        passed=record_passed(record) if status == "ok" else None, caught=caught, answer=answer, grading=grading,
        grading_note=note, error=str(record["error"]) if record.get("error") is not None else None,
        stderr_tail=stderr[-STDERR_CAP:] if isinstance(stderr, str) and stderr else None,
    )


def arm_sample(starts: Sequence[Start]) -> ArmSample:
    """One arm's sample: a rep is graded by its latest ``ok`` start."""
    latest_ok: dict[Any, Start] = {}
    for start in sorted(starts, key=lambda s: s["ended"] or s["started"] or ""):
        if start["status"] == "ok":
            latest_ok[start["rep"]] = start
    reps = len(latest_ok)
    caught = sum(1 for s in latest_ok.values() if s["passed"])
    return ArmSample(
        starts=len(starts), reps=reps, caught=caught, rate=caught / reps if reps else None,
        wilson95=list(wilson(caught, reps)) if reps else None,
        errors=sum(s["status"] == "error" for s in starts), timeouts=sum(s["status"] == "timeout" for s in starts),
        interrupted=sum(s["status"] == "interrupted" for s in starts),
        unresolved=len({s["rep"] for s in starts} - set(latest_ok)),
    )


def reps_note(groups: Sequence[Group]) -> str:
    """What the rep counts of this report can say, with the real counts."""
    reps = Counter(g["arms"][arm]["reps"] for g in groups for arm in ARMS if g["arms"][arm]["reps"])
    if not reps:
        counts = "No graded reps yet."
    else:
        common, _n = reps.most_common(1)[0]
        low, high = min(reps), max(reps)
        spread = f" (from {low} to {high})" if low != high else ""
        best = 1 / _comb(2 * common, common)
        counts = (f"Graded reps per arm: {common} in most groups{spread}; at {common} vs {common} reps the smallest "
                  f"possible p is {best:.2g}.")
    return (f"{counts} Two reps diagnose a scenario; they do not prove a rate. Intervals are Wilson 95% intervals, wide "
            "on purpose: a zone is an observation of this sample, not a measured rate, and a group counts as separated "
            f"only when a one-sided Fisher exact test gives p < {ALPHA:g}.")


def _comb(n: int, k: int) -> int:
    import math

    return math.comb(n, k)


def build_model(workspace: Workspace, paths: Sequence[Path] = (), ids: Sequence[str] = (), agent: str | None = None,
                *, lint: bool = True, now: datetime | None = None) -> ReportModel:
    """The report model of ``workspace``'s run records (restricted to the probes
    of ``paths`` and ``ids``, and to ``agent``, when given)."""
    root = workspace.root
    files = find_runs_files(root)
    wanted: set[str] | None = None
    if paths or ids:
        wanted = set(ids)
        for path in (workspace.probe_paths(paths, ()) if paths else ()):
            probe_id = workspace.session.probe(path).probe_id
            if probe_id:
                wanted.add(probe_id)
    raw: list[tuple[Path, dict[str, Any]]] = []
    starts_on_record = torn = 0
    for path in files:
        runs = read_runs_file(path)
        starts_on_record += runs.starts
        torn += len(runs.torn)
        suite = path.parent.parent.parent
        raw.extend((suite, record) for _line, record in runs.records)
    records = [(suite, r) for suite, r in normalize_records(raw)
               if (wanted is None or r["probe"] in wanted) and (agent is None or r.get("agent") == agent)
               and isinstance(r.get("version"), int) and not isinstance(r.get("version"), bool) and r.get("arm") in ARMS]
    contents: dict[tuple, set[tuple]] = {}
    by_group: dict[tuple, list[tuple[Path, dict[str, Any]]]] = {}
    for suite, record in records:
        identity = _identity(suite, record)
        by_group.setdefault(identity, []).append((suite, record))
        contents.setdefault(identity[:3], set()).add(identity[3:5])
    disk = _Disk(workspace)
    states = {identity: disk.state(identity[1], identity[2], identity[3], identity[4]) for identity in by_group}
    current_paths = sorted({path for _state, path in states.values() if path is not None})
    findings = _lint_findings(workspace, current_paths) if lint else {}
    frozen_cases = {suite: read_frozen(frozen_path(Path(suite))) for suite in {identity[0] for identity in by_group}}
    groups: list[Group] = []
    for identity in sorted(by_group, key=lambda i: tuple("" if v is None else str(v) for v in i)):
        suite_text, probe_id, version, probe_hash, artifact_hash, skill_hash, agent_name, model_name = identity
        suite = Path(suite_text)
        on_disk, probe_path = states[identity]
        probe = disk.probe(probe_path) if probe_path is not None else None
        pairs = sorted(by_group[identity], key=lambda p: (ARM_ORDER[p[1]["arm"]], p[1].get("rep") or 0,
                                                           p[1].get("started") or "", p[1].get("ended") or ""))
        starts = [_start(s, r, root, probe) for s, r in pairs]
        arms = {arm: arm_sample([s for s in starts if s["arm"] == arm]) for arm in ARMS}
        zone = zone_of(RunsArmSample(arms["control"]["reps"], arms["control"]["caught"]),
                       RunsArmSample(arms["treatment"]["reps"], arms["treatment"]["caught"]))
        last = next((r for _s, r in reversed(pairs) if r.get("kind") is not None or r.get("band") is not None), pairs[-1][1])
        case = frozen_cases[suite_text].get((probe_id, version))
        folder_findings = findings.get(probe_path.parent) if probe_path is not None else None
        ended = [s["ended"] for s in starts if s["ended"]]
        groups.append(Group(
            key=_key(identity), skill=_relative(suite, root) if suite != root else ".", probe=probe_id, version=version,
            probe_path=next((r["probe_path"] for _s, r in pairs if isinstance(r.get("probe_path"), str)), None),
            kind=last.get("kind") if isinstance(last.get("kind"), str) else None,
            band={k: v for k, v in last["band"].items() if isinstance(v, int) and not isinstance(v, bool)}
            if isinstance(last.get("band"), dict) else None,
            defects=[str(d) for d in last.get("defects") or []],
            hashes={"probe_sha256": probe_hash, "artifact_sha256": artifact_hash, "skill_sha256": skill_hash},
            agent=agent_name, model=model_name, zone=zone, arms=arms,
            evidence=evidence_of(arms["treatment"], arms["control"]),
            edited_without_bump=len(contents[identity[:3]]) > 1, on_disk=on_disk,
            frozen=case is not None,
            frozen_matches=(case.get("probe_sha256"), case.get("artifact_sha256")) == (probe_hash, artifact_hash)
            if case is not None else None,
            lint={"when": "report", "findings": folder_findings} if folder_findings is not None else None,
            last_run=max(ended) if ended else None, starts=starts,
        ))
    generated = (now or datetime.now(timezone.utc)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return ReportModel(schema=SCHEMA_ID, meta={
        "workspace": str(root), "generated": generated, "tool": f"skill-eval {__version__}", "note": reps_note(groups),
        "starts_on_record": starts_on_record, "torn_lines": torn, "max_starts": workspace.config.calibration_max_starts,
        "alpha": ALPHA, "answer_cap": ANSWER_CAP,
        "filters": {"paths": [os.fspath(p) for p in paths], "probes": list(ids), "agent": agent},
    }, groups=groups)
