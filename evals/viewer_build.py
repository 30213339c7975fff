"""``build_model``: the report model (:mod:`~skill_eval.evals.viewer_model`)
from the run records a workspace holds.

This module is the one place that turns run records into report groups, for
every face of the report: the text and JSON of ``skill-eval report``
(:mod:`~skill_eval.evals.report`), the HTML viewer and the JUnit writer read
the model it builds. What it does:

* **Starts.** Records are read with :func:`~skill_eval.evals.records.read_runs_file`,
  which pairs each schema 2 start with its outcome (schema 1 lines are one
  start each). :func:`normalize_records` gives each start one status of
  :data:`~skill_eval.evals.viewer_model.STATUSES`: a start without an outcome
  is ``running`` while its runner holds the file
  (:func:`~skill_eval.evals.records.writer_alive`) and ``interrupted`` once
  nobody does; a schema 1 ``error`` that says it was interrupted is
  ``interrupted``.
* **Groups.** One per suite and :func:`~skill_eval.evals.stats.row_key`
  (probe id, version, the three content hashes, agent, model), never pooled.
  Each group's reps, catches, zone and evidence come from
  :func:`~skill_eval.evals.stats.sample_rows` (a rep is graded by its latest
  ``ok`` start; the one-sided Fisher test is
  :func:`~skill_eval.evals.stats.fisher_greater`), the same code the calibration
  rules and the editor's status read.
* **Lint findings.** Those the runner saw in its preflight, kept in its plan
  record (``lint.when`` ``run``); for a group run without them (an older
  runner), the probe is linted for the report when its files still hash as
  they ran (``lint.when`` ``report``).
* **The files on disk.** A group whose probe.json and artifact still hash as
  they did has each answer graded again with the probe's ``caught_when``, per
  expectation, to show which held and why. A group whose files changed keeps
  the caught defects its records hold, without expectations.
* **Answers** are read from the suite's ``evals/runs/`` folder only (a path
  in a record that leads elsewhere is not read), first :data:`ANSWER_CAP`
  characters. A group counts its graded reps whose answer no field could be
  read from (``answer_source`` ``none``): :func:`answers_unreadable`.
* **The probe itself** (:func:`probe_content`): the artifact the agents were
  handed and each defect's quote (located as the linter locates it) and
  ``caught_when``, taken from the probe the workspace's safe reader loaded,
  only while probe.json and the artifact still hash as they ran.
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
from skill_eval.linter.context import RECORDS_MAX_SIZE
from skill_eval.linter.reader import read_regular_file
from skill_eval.linter.run_records import (
    ARMS, frozen_path, is_interrupted, read_frozen, record_passed, runs_folder, sha256_bytes,
)
from skill_eval.linter.quotes import find_quote
from skill_eval.linter.textfile import TextDocument

from .calibrate import decision_summary
from .grading import BadExpectation, check_expectation, read_answer, graded_field_names
from .probes import Probe, ProbeError, Workspace
from .records import read_runs_file, writer_alive
from .stats import RowSample, fisher_greater, row_key, sample_rows, wilson
from .viewer_model import (ALPHA, ANSWER_CAP, ARTIFACT_CAP, SCHEMA_ID, STDERR_CAP, Answer, AnswersUnreadable, ArmSample,
                           ArtifactText, DefectGrading, Expectation, Finding, Group, JudgeVerdict, Leak, Lint, ProbeContent,
                           ProbeDefect, ReportModel, Start, evidence_of_sample, usage_of)

ARM_ORDER = {arm: index for index, arm in enumerate(ARMS)}
INTERRUPTED_PREFIX = "interrupted"
DEFAULT_MODEL = "(agent default)"
"""The model of a record that names none (the agent's own default)."""


# -- records -> starts ------------------------------------------------------------------


NO_OUTCOME = "no outcome on record: its runner stopped (killed, or the machine went down) while this start ran"


def normalize_records(records: Iterable[tuple[Path, dict[str, Any], bool]]) -> list[tuple[Path, dict[str, Any]]]:
    """``(suite folder, start record)`` pairs, from ``(suite folder, start
    record, whether its file's writer is alive)`` triples, each record with a
    ``status`` of :data:`~skill_eval.evals.viewer_model.STATUSES`:

    * a start without an outcome (``unfinished``, see
      :func:`~skill_eval.linter.run_records.parse_runs`) is ``running`` while a runner
      holds its file and ``interrupted`` once none does;
    * a schema 1 ``error`` whose message says it was interrupted is ``interrupted``;
    * a record with no status at all (nothing wrote its end) is ``interrupted``.
    """
    starts = []
    for suite, record, live in records:
        record = dict(record)
        status = record.get("status")
        if record.get("unfinished"):
            status = "running" if live else "interrupted"
            if not live:
                record.setdefault("error", NO_OUTCOME)
        elif is_interrupted(record):
            status = "interrupted"
        elif status not in ("ok", "error", "timeout"):
            status = "interrupted"
            record.setdefault("error", NO_OUTCOME)
        record["status"] = status
        starts.append((suite, record))
    return starts


def read_records(root: Path) -> tuple[list[tuple[Path, dict[str, Any]]], int, int, dict[tuple, list[Finding]],
                                      dict[tuple, dict[str, Any]]]:
    """Every start of the workspace's runs files (:func:`normalize_records`, in
    file and line order), the starts on record (torn lines included), the torn
    lines, the lint findings the runners' plan records kept, by
    :func:`_content` (the latest plan's, when a content was planned twice),
    and the latest ``skill-eval calibrate`` decision record per group
    (:func:`_identity`, :func:`~skill_eval.evals.calibrate.latest_decisions`).
    A symbolic link in the way of the records is refused
    (:func:`~skill_eval.evals.runner.workspace_runs_files`), as a run refuses it."""
    from .calibrate import latest_decisions
    from .runner import workspace_runs_files

    raw: list[tuple[Path, dict[str, Any], bool]] = []
    starts_on_record = torn = 0
    lint: dict[tuple, list[Finding]] = {}
    files = workspace_runs_files(root)
    for path in files:
        runs = read_runs_file(path)
        starts_on_record += runs.starts
        torn += len(runs.torn)
        suite = _suite_of(path)
        live = bool(runs.unfinished) and writer_alive(path)
        raw.extend((suite, record, live) for _line, record in runs.records)
        for _line, plan in runs.plans:
            for entry in plan.get("lint") or ():
                findings = _findings(entry.get("findings")) if isinstance(entry, dict) else None
                if findings is not None:
                    lint[_content(suite, entry)] = findings
    decisions = latest_decisions(files, key=lambda path, record: _identity(_suite_of(path), record))
    return normalize_records(raw), starts_on_record, torn, lint, decisions


def _suite_of(runs_file: Path) -> Path:
    """The suite folder of a runs file (``SUITE/evals/runs/FILE.jsonl``)."""
    return runs_file.parent.parent.parent


def _findings(items: Any) -> list[Finding] | None:
    """Lint findings as a plan record keeps them, or ``None`` when unreadable."""
    if not isinstance(items, list):
        return None
    found = []
    for item in items:
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("code", "severity", "message", "path")):
            return None
        line, column = item.get("line"), item.get("column")
        found.append(Finding(code=item["code"], severity=item["severity"], message=item["message"], path=item["path"],
                             line=line if isinstance(line, int) and line >= 1 else 1,
                             column=column if isinstance(column, int) and column >= 1 else 1))
    return found


def _content(suite: Path, record: dict[str, Any]) -> tuple:
    """What lint findings depend on: the suite, probe id, version and the three content hashes."""
    return (str(suite), record.get("probe"), record.get("version"), record.get("probe_sha256"),
            record.get("artifact_sha256"), record.get("skill_sha256"))


def _identity(suite: Path, record: dict[str, Any]) -> tuple:
    """A group: the suite and :func:`~skill_eval.evals.stats.row_key`."""
    return (str(suite), *row_key(record))


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
        return read_regular_file(path, RECORDS_MAX_SIZE).decode("utf-8", errors="replace"), None
    except OSError as error:  # a FIFO or a device (never waited on), a huge file, a missing one
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
        session = workspace.session
        limit = workspace.config.max_file_size
        for path in session.all_probe_paths:
            context = session.probe(path)
            if context.probe_id is None:
                continue
            probe_hash = artifact_hash = None
            raw = session.read_safely(path, limit)  # the engine's safe read: inside the workspace, bounded
            if isinstance(raw, bytes):
                probe_hash = sha256_bytes(raw)
                artifact = context.artifact_document
                if isinstance(artifact, TextDocument):
                    raw = session.read_safely(artifact.path, limit, resolved=True)
                    artifact_hash = sha256_bytes(raw) if isinstance(raw, bytes) else None
            self.by_id.setdefault(context.probe_id, []).append((context.version, probe_hash, artifact_hash, path))
        self._loaded: dict[Path, Probe | None] = {}

    def state(self, probe_id: str, version: int, probe_hash: Any, artifact_hash: Any,
              skill_hash: Any = None, skill_tree_hash: Any = None) -> tuple[str, Path | None]:
        """``on_disk`` of a group, and its probe.json when probe.json and the
        artifact are on disk as they ran (``current``, or ``skill-edited``
        when SKILL.md or another file of the skill folder changed since)."""
        found = self.by_id.get(probe_id)
        if not found:
            return "missing", None
        for disk_version, disk_probe, disk_artifact, path in found:
            if disk_version == version and (disk_probe, disk_artifact) == (probe_hash, artifact_hash):
                probe = self.probe(path) if skill_hash is not None else None
                if probe is not None and probe.skill_sha256 is not None and probe.skill_sha256 != skill_hash:
                    return "skill-edited", path
                if probe is not None and probe.skill_tree_sha256 is not None and probe.skill_tree_sha256 != skill_tree_hash:
                    return "skill-edited", path
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


def _report_lint(workspace: Workspace, probes: Sequence[Probe]) -> dict[Path, list[Finding]]:
    """Each probe's lint findings now, as the runner's preflight lints it
    (:func:`~skill_eval.evals.runner.lint_findings`), by probe.json."""
    from .runner import lint_findings

    return {path: [Finding(**finding) for finding in findings]
            for path, findings in lint_findings(workspace, probes).items()}


# -- the model ----------------------------------------------------------------------------


def _start(suite: Path, record: dict[str, Any], root: Path, probe: Probe | None, answers: bool = True) -> Start:
    status = record["status"]
    text, problem = (read_answer_file(suite, record.get("answer_file")) if answers and record.get("answer_file")
                     else (None, None))
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
    verdicts = judge_verdicts_of(record)
    if status == "ok" and answers:
        if probe is not None and text is not None:
            source, graded = grade_expectations(text, probe)
            if answer is not None and answer["source"] is None:
                answer["source"] = source
            # a judge is not run again for a report: a judged defect counts as the run recorded it
            judged = {str(d.get("id", "?")) for d in probe.defects if d.get("judge") is not None}
            regraded = sorted(d for d, ok, _e in graded if (d in caught if d in judged else ok))
            if regraded != sorted(caught):
                note = (f"graded again for this report: caught {', '.join(regraded) or 'nothing'}; the run recorded "
                        f"{', '.join(sorted(caught)) or 'nothing'} (the output spec or the grading changed since)")
            grading = [DefectGrading(defect=d, caught=d in caught, expectations=e, judge=verdicts.get(d))
                       for d, _ok, e in graded]
        else:
            grading = [DefectGrading(defect=d, caught=d in caught, expectations=None, judge=verdicts.get(d))
                       for d in defects]
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
        resume_of=record.get("resume_of") if isinstance(record.get("resume_of"), str) else None,
        passed=record_passed(record) if status == "ok" else None, caught=caught, answer=answer, grading=grading,
        grading_note=note, error=str(record["error"]) if record.get("error") is not None else None,
        stderr_tail=stderr[-STDERR_CAP:] if isinstance(stderr, str) and stderr else None,
        **skill_use_of(record), contaminated=leaks_of(record),
        sandbox=record["sandbox"] if record.get("sandbox") in ("bwrap", "off") else None,
    )


def _utf16(text: str, offset: int) -> int:
    """``offset`` (in code points of ``text``) in UTF-16 code units, as a browser counts."""
    return len(text[:offset].encode("utf-16-le")) // 2


def probe_content(artifact: str, artifact_path: str, defects: Iterable[dict[str, Any]]) -> ProbeContent:
    """The probe as the viewer shows it beside the answers: the artifact's
    first :data:`ARTIFACT_CAP` characters, and per defect its quote, where
    :func:`~skill_eval.linter.quotes.find_quote` finds it in the artifact
    (UTF-16 offsets into the text carried, an occurrence past the cap left
    out), and its ``caught_when`` as written."""
    text = artifact[:ARTIFACT_CAP]
    shown = []
    for defect in defects:
        quote = defect.get("quote") if isinstance(defect.get("quote"), str) else None
        spans = []
        if quote:
            spans = [[_utf16(text, start), _utf16(text, end)] for start, end in find_quote(artifact, quote).occurrences
                     if end <= len(text)]
        shown.append(ProbeDefect(id=str(defect.get("id", "?")), quote=quote, caught_when=defect.get("caught_when"),
                                 judged=defect.get("judge") is not None, quote_spans=spans))
    return ProbeContent(artifact=ArtifactText(path=artifact_path, text=text, chars=len(artifact),
                                              truncated=len(artifact) > len(text)), defects=shown)


def _probe_content(probe: Probe, root: Path) -> ProbeContent:
    return probe_content(probe.artifact_bytes.decode("utf-8", errors="replace"), _relative(probe.artifact_path, root),
                         probe.defects)


def answers_unreadable(graded: Iterable[tuple[dict[str, Any], Start]]) -> AnswersUnreadable:
    """How many graded reps were read as ``none`` (no field the output spec
    names), of those whose reading is known: the record's ``answer_source``,
    else how grading the answer again for this report read it. ``graded`` is
    each graded rep's grading start (its latest ``ok`` one) as record and
    model start."""
    sources = []
    for record, start in graded:
        source = record.get("answer_source")
        if source not in ("json", "lines", "none"):
            source = start["answer"]["source"] if start["answer"] is not None else None
        if source is not None:
            sources.append(source)
    unreadable = sources.count("none")
    return AnswersUnreadable(graded=len(sources), unreadable=unreadable, most=2 * unreadable > len(sources))


def judge_verdicts_of(record: dict[str, Any]) -> dict[str, JudgeVerdict]:
    """The record's ``judge_verdicts`` (per defect, the judge's ``caught`` and
    ``reason``), entries of another shape left out; empty on older records."""
    found = record.get("judge_verdicts")
    verdicts: dict[str, JudgeVerdict] = {}
    for defect, verdict in (found.items() if isinstance(found, dict) else ()):
        if isinstance(verdict, dict) and isinstance(verdict.get("caught"), bool):
            reason = verdict.get("reason")
            verdicts[str(defect)] = JudgeVerdict(caught=verdict["caught"], reason=reason if isinstance(reason, str) else "")
    return verdicts


def skill_use_of(record: dict[str, Any]) -> dict[str, Any]:
    """``skill_loaded``, ``skill_evidence`` and ``skill_flag`` of a start: a
    treatment start that did not load the skill, or a control start that did
    (an isolation failure), is flagged. Null on records without the fields."""
    loaded = record.get("skill_loaded") if isinstance(record.get("skill_loaded"), bool) else None
    evidence = record.get("skill_evidence") if isinstance(record.get("skill_evidence"), str) else None
    flag = None
    if loaded is False and record.get("arm") == "treatment":
        flag = "skill-not-loaded"
    elif loaded is True and record.get("arm") == "control":
        flag = "isolation-failure"
    return {"skill_loaded": loaded, "skill_evidence": evidence, "skill_flag": flag}


def leaks_of(record: dict[str, Any]) -> list[Leak]:
    """The record's ``contaminated`` entries (answer-key text found in the start's output)."""
    found = record.get("contaminated")
    return [Leak(source=item["source"], text=item["text"]) for item in (found if isinstance(found, list) else ())
            if isinstance(item, dict) and isinstance(item.get("source"), str) and isinstance(item.get("text"), str)]


def arm_sample(starts: Sequence[Start], graded: Any) -> ArmSample:
    """One arm's sample: ``graded`` (a :class:`~skill_eval.linter.run_records.ArmSample`
    of :func:`~skill_eval.evals.stats.sample_rows`) holds its graded reps and
    catches; ``starts`` the status counts and the reps left without an outcome."""
    reps, caught = graded.reps, graded.caught
    ok = {s["rep"] for s in starts if s["status"] == "ok"}
    running = {s["rep"] for s in starts if s["status"] == "running"}
    return ArmSample(
        starts=len(starts), reps=reps, caught=caught, rate=graded.rate,
        wilson95=list(wilson(caught, reps)) if reps else None,
        errors=sum(s["status"] == "error" for s in starts), timeouts=sum(s["status"] == "timeout" for s in starts),
        interrupted=sum(s["status"] == "interrupted" for s in starts), running=sum(s["status"] == "running" for s in starts),
        unresolved=len({s["rep"] for s in starts} - ok - running), unreadable=graded.unreadable,
        mean=graded.rate,
        pass_at_k=pass_at_ks(reps, caught),
        skill_loaded=sum(s["skill_loaded"] is True for s in starts),
        skill_not_loaded=sum(s["skill_loaded"] is False for s in starts),
        contaminated=sum(bool(s["contaminated"]) for s in starts),
    )


PASS_AT_K_MAX = 5
"""The largest k the report model gives pass@k for (each k at most the reps)."""


def pass_at_ks(reps: int, caught: int) -> dict[str, float]:
    """pass@k of an arm's graded reps (:func:`~skill_eval.evals.suites.pass_at_k`,
    the unbiased estimator) for k = 1 .. min(reps, :data:`PASS_AT_K_MAX`)."""
    from .suites import pass_at_k

    return {str(k): pass_at_k(reps, caught, k) for k in range(1, min(reps, PASS_AT_K_MAX) + 1)}


def reps_note(groups: Sequence[Group]) -> str:
    """What the rep counts of this report can say, with the real counts."""
    reps = Counter(g["arms"][arm]["reps"] for g in groups for arm in ARMS if g["arms"][arm]["reps"])
    if not reps:
        counts = "No graded reps yet."
    else:
        common, _n = reps.most_common(1)[0]
        low, high = min(reps), max(reps)
        spread = f" (from {low} to {high})" if low != high else ""
        best = fisher_greater(common, common, 0, common)
        counts = (f"Graded reps per arm: {common} in most groups{spread}; at {common} vs {common} reps the smallest "
                  f"possible p is {best:.2g}.")
    return (f"{counts} Two reps diagnose a scenario; they do not prove a rate. Intervals are Wilson 95% intervals, wide "
            "on purpose: a zone is an observation of this sample, not a measured rate, and a group counts as separated "
            f"only when a one-sided Fisher exact test gives p <= {ALPHA:g}.")


def build_model(workspace: Workspace, paths: Sequence[Path] = (), ids: Sequence[str] = (), agent: str | None = None,
                *, lint: bool = True, answers: bool = True, now: datetime | None = None) -> ReportModel:
    """The report model of ``workspace``'s run records (restricted to the probes
    of ``paths`` and ``ids``, and to ``agent``, when given).

    ``lint=False`` lints nothing for the report (findings kept at run time are
    still shown); ``answers=False`` reads no answer file and grades nothing
    again (the text report, which shows neither)."""
    root = workspace.root
    wanted: set[str] | None = None
    if paths or ids:
        wanted = set(ids)
        for path in (workspace.probe_paths(paths, ()) if paths else ()):
            probe_id = workspace.session.probe(path).probe_id
            if probe_id:
                wanted.add(probe_id)
    starts_read, starts_on_record, torn, run_lint, decisions = read_records(root)
    records = [(suite, r) for suite, r in starts_read
               if (wanted is None or r.get("probe") in wanted) and (agent is None or r.get("agent") == agent)
               and isinstance(r.get("version"), int) and not isinstance(r.get("version"), bool) and r.get("arm") in ARMS]
    contents: dict[tuple, set[tuple]] = {}
    by_group: dict[tuple, list[tuple[Path, dict[str, Any]]]] = {}
    for suite, record in records:
        identity = _identity(suite, record)
        by_group.setdefault(identity, []).append((suite, record))
        contents.setdefault(identity[:3], set()).add(identity[3:5])
    disk = _Disk(workspace)
    states = {identity: disk.state(*identity[1:6], skill_tree_hash=identity[8]) for identity in by_group}
    report_lint: dict[Path, list[Finding]] = {}
    if lint:
        unlinted = {path for identity, (state, path) in states.items()
                    if state == "current" and path is not None and _content(Path(identity[0]), _as_record(identity)) not in run_lint}
        probes = [probe for probe in (disk.probe(path) for path in sorted(unlinted)) if probe is not None]
        report_lint = _report_lint(workspace, probes)
    frozen_cases = {suite: read_frozen(frozen_path(Path(suite))) for suite in {identity[0] for identity in by_group}}
    groups: list[Group] = []
    for identity in sorted(by_group, key=lambda i: tuple("" if v is None else str(v) for v in i)):
        suite_text, probe_id, version, probe_hash, artifact_hash, skill_hash, agent_name, model_name, tree_hash = identity
        suite = Path(suite_text)
        on_disk, probe_path = states[identity]
        probe = disk.probe(probe_path) if probe_path is not None and answers else None
        in_file_order = by_group[identity]
        sample = sample_rows(r for _s, r in in_file_order if r["status"] != "running").get(row_key(in_file_order[0][1]))
        if sample is None:  # every start of it is running
            sample = RowSample(probe_id, version)
        pairs = sorted(in_file_order, key=lambda p: (ARM_ORDER[p[1]["arm"]], p[1].get("rep") or 0,
                                                     p[1].get("started") or "", p[1].get("ended") or ""))
        starts = [_start(s, r, root, probe, answers) for s, r in pairs]
        start_of = {id(r): start for (_s, r), start in zip(pairs, starts)}
        grading_starts: dict[tuple, dict[str, Any]] = {}
        for _s, r in in_file_order:  # a rep is graded by its latest ok start (sample_rows)
            if r["status"] == "ok" and record_passed(r) is not None:
                grading_starts[(r["arm"], r.get("rep"))] = r
        arms = {arm: arm_sample([s for s in starts if s["arm"] == arm], sample.arms[arm]) for arm in ARMS}
        last = next((r for _s, r in reversed(pairs) if r.get("kind") is not None or r.get("band") is not None), pairs[-1][1])
        case = frozen_cases[suite_text].get((probe_id, version))
        ended = [s["ended"] for s in starts if s["ended"]]
        groups.append(Group(
            key=_key(identity), skill=_relative(suite, root) if suite != root else ".", probe=probe_id, version=version,
            probe_path=next((r["probe_path"] for _s, r in pairs if isinstance(r.get("probe_path"), str)), None),
            kind=last.get("kind") if isinstance(last.get("kind"), str) else None,
            band={k: v for k, v in last["band"].items() if isinstance(v, int) and not isinstance(v, bool)}
            if isinstance(last.get("band"), dict) else None,
            defects=[str(d) for d in last.get("defects") or []],
            hashes={"probe_sha256": probe_hash, "artifact_sha256": artifact_hash, "skill_sha256": skill_hash,
                    "skill_tree_sha256": tree_hash},
            agent=str(agent_name or "?"), model=str(model_name or DEFAULT_MODEL), zone=sample.zone, arms=arms,
            evidence=evidence_of_sample(sample),
            edited_without_bump=len(contents[identity[:3]]) > 1, on_disk=on_disk,
            frozen=case is not None,
            frozen_matches=(case.get("probe_sha256"), case.get("artifact_sha256")) == (probe_hash, artifact_hash)
            if case is not None else None,
            unsealed=sum(1 for _s, r in pairs if r.get("sandbox") == "off"),
            lint=_group_lint(run_lint.get(_content(suite, _as_record(identity))),
                             report_lint.get(probe_path) if on_disk == "current" and probe_path is not None else None),
            calibration=decision_summary(decisions[identity]) if identity in decisions else None,
            last_run=max(ended) if ended else None, starts=starts,
            probe_content=_probe_content(probe, root) if probe is not None else None,
            answers_unreadable=answers_unreadable((r, start_of[id(r)]) for r in grading_starts.values()),
        ))
    generated = (now or datetime.now(timezone.utc)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return ReportModel(schema=SCHEMA_ID, meta={
        "workspace": str(root), "generated": generated, "tool": f"skill-eval {__version__}", "note": reps_note(groups),
        "starts_on_record": starts_on_record, "torn_lines": torn, "max_starts": workspace.config.calibration_max_starts,
        "alpha": ALPHA, "answer_cap": ANSWER_CAP,
        "filters": {"paths": [os.fspath(p) for p in paths], "probes": list(ids), "agent": agent},
    }, groups=groups, usage=usage_of(groups))


def _as_record(identity: tuple) -> dict[str, Any]:
    _suite, probe_id, version, probe_hash, artifact_hash, skill_hash, _agent, _model, tree_hash = identity
    return {"probe": probe_id, "version": version, "probe_sha256": probe_hash, "artifact_sha256": artifact_hash,
            "skill_sha256": skill_hash, "skill_tree_sha256": tree_hash}


def _group_lint(at_run: list[Finding] | None, at_report: list[Finding] | None) -> Lint | None:
    if at_run is not None:
        return Lint(when="run", findings=at_run)
    if at_report is not None:
        return Lint(when="report", findings=at_report)
    return None
