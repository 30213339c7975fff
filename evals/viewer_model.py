"""The report model: what ``skill-eval report`` knows, as plain JSON data.

The HTML viewer (:mod:`skill_eval.evals.viewer`) and the JUnit writer
(:mod:`skill_eval.evals.junit`) read only this model, never run records, so the
way records are read and grouped (:mod:`skill_eval.evals.viewer_build`) can
change without touching them. ``docs/report.md`` describes every field; the
JSON Schema ``viewer_assets/report-model.schema.json`` is its machine-readable
form (tests validate models against it and check that these TypedDicts name
the same keys).

A model is one :class:`ReportModel`: ``meta`` about the whole report, and one
:class:`Group` per (probe id, version, content hashes of probe.json, artifact
and skill, agent, model): samples are never pooled across any of these. Each
group carries its per-arm samples, the evidence of separation, its flags, the
probe's lint findings, its latest ``skill-eval calibrate`` decision, and every
:class:`Start` with its answer and grading.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, Optional, TypedDict

from skill_eval.linter.run_records import ArmSample as _RunsArmSample

from .stats import SEPARATION_ALPHA, RowSample

SCHEMA_ID = "skill-eval-report/1"
"""``ReportModel.schema``: bumped when a field changes meaning or goes away."""

SCHEMA_PATH = Path(__file__).with_name("viewer_assets") / "report-model.schema.json"

ANSWER_CAP = 4000
"""Characters of an answer the model carries (the rest stays in the answer file)."""

STDERR_CAP = 2000
"""Characters of an agent's stderr tail the model carries."""

ARTIFACT_CAP = 20000
"""Characters of a probe's artifact the model carries (the rest stays on disk)."""

ALPHA = SEPARATION_ALPHA
"""A group is *separated* when the one-sided Fisher p-value is at most this
(:data:`skill_eval.evals.stats.SEPARATION_ALPHA`, which the text report uses too)."""

Zone = Literal["ceiling", "window", "floor", "adverse", "mixed", "pending", "unreadable"]
Status = Literal["ok", "error", "timeout", "interrupted", "running"]
Arm = Literal["control", "treatment"]
OnDisk = Literal["current", "skill-edited", "edited", "superseded", "older", "missing"]
CalibrationZone = Literal["ceiling", "window", "floor", "adverse", "mixed", "unreadable", "undecided"]


class Filters(TypedDict):
    """What the report was restricted to (empty lists / null: everything)."""

    paths: list[str]
    probes: list[str]
    agent: Optional[str]


class Meta(TypedDict):
    workspace: str
    generated: str
    """ISO 8601 UTC time the model was built."""
    tool: str
    """``skill-eval X.Y.Z``."""
    note: str
    """What the rep counts of this report can and cannot say (shown on every page)."""
    starts_on_record: int
    """Every start on record in the workspace, failed ones and torn lines included."""
    torn_lines: int
    """Starts whose record was cut off while being written: counted, never graded."""
    max_starts: Optional[int]
    alpha: float
    answer_cap: int
    filters: Filters


class Hashes(TypedDict):
    probe_sha256: Optional[str]
    artifact_sha256: Optional[str]
    skill_sha256: Optional[str]
    skill_tree_sha256: Optional[str]


class ArmSample(TypedDict):
    starts: int
    """Starts of this arm, whatever their status."""
    reps: int
    """Graded reps: rep numbers with an ``ok`` start (the latest ok one counts)."""
    caught: int
    """Graded reps that caught what the probe asks for."""
    rate: Optional[float]
    wilson95: Optional[list[float]]
    """[low, high] Wilson 95% interval of caught/reps; null without a graded rep."""
    errors: int
    timeouts: int
    interrupted: int
    """Starts with these statuses (every start counts, retried ones too)."""
    running: int
    """Starts whose runner is running them now (no outcome yet, its runs file is held)."""
    unresolved: int
    """Rep numbers that have starts but no graded outcome and none running (every start failed)."""
    unreadable: int
    """Of the graded reps, those whose answer had no field the output spec names
    (``answer_source: "none"``): graded as misses; when they are most of a
    group's graded reps its zone is ``unreadable``, never ``floor``."""
    mean: Optional[float]
    """The mean of the graded reps' outcomes (caught 1, missed 0): the rate, as a reducer."""
    pass_at_k: dict[str, float]
    """k -> the unbiased pass@k estimate (1 - C(reps-caught, k) / C(reps, k)), k = 1 .. min(reps, 5)."""
    skill_loaded: int
    """Starts whose record says the harness loaded the skill (``skill_loaded: true``)."""
    skill_not_loaded: int
    """Starts whose record says it did not (``false``); the others' evidence is unknown."""
    contaminated: int
    """Starts that saw the answer key (``contaminated``): errors, never graded."""


class Evidence(TypedDict):
    test: str
    """``fisher-exact-one-sided``: does treatment catch more often than control?"""
    p: Optional[float]
    separated: bool
    text: str
    """``separated (p = 0.008)`` / ``not separated at this sample (p = 0.17, 2 vs 2 reps)``."""


class Finding(TypedDict):
    code: str
    severity: str
    message: str
    path: str
    line: int
    column: int


class Lint(TypedDict):
    when: Literal["run", "report"]
    """``run``: recorded when the probe ran; ``report``: linted when the report was
    built, from files whose hashes still equal the run's."""
    findings: list[Finding]


class Expectation(TypedDict):
    field: str
    expected: Any
    """The ``caught_when`` expectation as written in probe.json."""
    held: bool
    reason: str


class JudgeVerdict(TypedDict):
    """What a defect's judge said on this answer (the record's ``judge_verdicts``)."""

    caught: bool
    reason: str


class DefectGrading(TypedDict):
    defect: str
    caught: bool
    """As recorded by the run."""
    expectations: Optional[list[Expectation]]
    """Each ``caught_when`` field, whether it held and why; null when the probe
    version's ``caught_when`` is no longer on disk."""
    judge: Optional[JudgeVerdict]
    """The judge's verdict and reason, when a judge graded this defect on record."""


class Leak(TypedDict):
    """Answer-key text found in a start's answer or transcript."""

    source: str
    """The answer-key file (relative to the workspace)."""
    text: str


class Answer(TypedDict):
    text: str
    """The answer's first :data:`ANSWER_CAP` characters."""
    chars: int
    """The whole answer's length in characters."""
    truncated: bool
    """``text`` is shorter than the answer."""
    output_truncated: bool
    """The run capped the agent's output (the answer file holds the capped output)."""
    file: Optional[str]
    """The answer file, relative to the workspace."""
    source: Optional[str]
    """How grading read the answer: ``json``, ``lines`` or ``none``."""


class Start(TypedDict):
    start_id: Optional[str]
    arm: Arm
    rep: Optional[int]
    status: Status
    started: Optional[str]
    ended: Optional[str]
    duration_s: Optional[float]
    tokens_in: Optional[int]
    tokens_out: Optional[int]
    cost_usd: Optional[float]
    turns: Optional[int]
    exit_code: Optional[int]
    retry_of: Optional[str]
    resume_of: Optional[str]
    """The interrupted start this one ran again."""
    passed: Optional[bool]
    """Whether this start's answer caught what the probe asks for; null unless ok."""
    caught: list[str]
    answer: Optional[Answer]
    grading: list[DefectGrading]
    grading_note: Optional[str]
    """Why grading detail is missing or differs from the record, when it does."""
    error: Optional[str]
    stderr_tail: Optional[str]
    skill_loaded: Optional[bool]
    """Whether the harness loaded the skill, from its transcript; null when unknown or not recorded."""
    skill_evidence: Optional[str]
    """What shows it (the tool call, the file read) or why it is unknown."""
    skill_flag: Optional[Literal["skill-not-loaded", "isolation-failure"]]
    """``skill-not-loaded``: a treatment start that never loaded the skill;
    ``isolation-failure``: a control start that loaded it."""
    contaminated: list[Leak]
    """Answer-key text the start's output held (empty when none): never graded."""
    sandbox: Optional[Literal["bwrap", "off"]]
    """How the start ran: ``bwrap`` (sealed) or ``off`` (unsealed: its agent
    could read the answer keys); null for records written before it was recorded."""


CalibrationRule = TypedDict("CalibrationRule", {
    "reps": Optional[int],
    "caught-in-every-rep": Optional[str],
    "max-starts-per-probe": Optional[int],
})
"""The ``[calibration]`` rule a decision was made under, in the config's
spelling of its keys (as the records carry it)."""


class Discriminator(TypedDict):
    transcripts_catching: dict[str, list[str]]
    """Per defect, the known transcripts (relative to the workspace) labelled
    ``caught``: where to start checking the discriminator of a floor."""


class CalibrationDecision(TypedDict):
    """The latest ``skill-eval calibrate`` decision on record for a group (its
    ``decision`` record, docs/calibrate.md)."""

    zone: CalibrationZone
    decided_after: Optional[Arm]
    """The arm whose sample decided it: ``control`` for a ceiling, else ``treatment``."""
    starts: Optional[int]
    """The starts of this content (the group) the procedure had spent when it decided."""
    version_starts: Optional[int]
    """The starts of the probe version, every content of it."""
    decided: Optional[str]
    calibration_rule: Optional[CalibrationRule]
    calibration_rule_sha256: Optional[str]
    regression_control: bool
    """A ceiling: keep the case as a regression or cost control (the seed)."""
    reason: Optional[str]
    """Why an ``undecided`` decision stopped (the per-probe cap)."""
    discriminator: Optional[Discriminator]
    """For a floor: "check the discriminator", with the transcripts covering each defect."""


class ArtifactText(TypedDict):
    """The artifact the agents were handed, as it ran (its hash is the group's)."""

    path: str
    """The artifact file, relative to the workspace."""
    text: str
    """Its first :data:`ARTIFACT_CAP` characters."""
    chars: int
    truncated: bool


class ProbeDefect(TypedDict):
    """One seeded defect of the probe as it ran: what a rep must catch."""

    id: str
    quote: Optional[str]
    """The defect's quote in the artifact, as written in probe.json."""
    caught_when: Any
    """The defect's ``caught_when`` as written in probe.json (null for a judged defect)."""
    judged: bool
    """A judge decides this defect (probe.json names a ``judge``)."""
    quote_spans: list[list[int]]
    """Where the quote is in ``artifact.text`` (as :func:`skill_eval.linter.quotes.find_quote`
    finds it: whitespace runs equal, NFC): ``[start, end)`` offsets in UTF-16
    code units, as a browser's strings count them; empty when it is not there."""


class ProbeContent(TypedDict):
    """The probe itself, beside what the agents said: read from the workspace
    only while probe.json and the artifact still hash as they ran."""

    artifact: ArtifactText
    defects: list[ProbeDefect]


class AnswersUnreadable(TypedDict):
    """Graded reps whose answer no field of the output spec could be read from
    (the record's ``answer_source`` is ``none``): their misses say nothing of
    the skill."""

    graded: int
    """Graded reps (both arms) whose reading is known."""
    unreadable: int
    """Of them, those read as ``none``."""
    most: bool
    """More than half of ``graded`` are unreadable: the viewer's "answers unreadable" flag."""


class Group(TypedDict):
    key: str
    """A stable id of the group (hex), used in links: ``report.html#g=KEY``."""
    skill: Optional[str]
    """The skill's folder, relative to the workspace."""
    probe: str
    version: int
    probe_path: Optional[str]
    kind: Optional[str]
    band: Optional[dict[str, int]]
    defects: list[str]
    hashes: Hashes
    agent: str
    model: str
    zone: Zone
    arms: dict[str, ArmSample]
    """``control`` and ``treatment``."""
    evidence: Evidence
    edited_without_bump: bool
    """Another group has this probe id and version with other probe.json or artifact hashes."""
    on_disk: OnDisk
    frozen: bool
    """This probe id and version is in the suite's frozen.json."""
    frozen_matches: Optional[bool]
    """The frozen hashes equal this group's; null when not frozen."""
    unsealed: int
    """Starts of this group on record as run unsealed (``sandbox: "off"``): their
    agent could read what the runner's user can, the answer keys included."""
    lint: Optional[Lint]
    calibration: Optional[CalibrationDecision]
    """The latest ``skill-eval calibrate`` decision of this group; null when none is on record."""
    last_run: Optional[str]
    starts: list[Start]
    probe_content: Optional[ProbeContent]
    """The artifact and each defect's quote and ``caught_when``; null when
    probe.json or the artifact on disk are not the ones that ran (or the
    report read no answers)."""
    answers_unreadable: AnswersUnreadable


class Usage(TypedDict):
    """What one agent and model cost in one arm: the sums over the report's
    starts (any status) of the usage their agents reported."""

    agent: str
    model: str
    arm: Arm
    starts: int
    reporting: int
    """Starts that reported any usage (a preset harness's; none from a plain command, a timeout or a crash)."""
    tokens_in: Optional[int]
    tokens_out: Optional[int]
    cost_usd: Optional[float]
    turns: Optional[int]
    """Each sum is over the starts that reported that figure; null when none did."""


class ReportModel(TypedDict):
    schema: str
    meta: Meta
    groups: list[Group]
    usage: list[Usage]
    suite_evals: list[dict]
    """skill-creator evals (:func:`skill_eval.evals.suites.suite_report`); only when the records hold some."""
    trigger_tests: list[dict]
    """Trigger tests (:func:`skill_eval.evals.triggers.trigger_report`); only when the records hold some."""


ZONES: tuple[str, ...] = ("ceiling", "window", "floor", "adverse", "mixed", "pending")
"""The zones the HTML viewer lists, colours and plots. A group's ``zone``
may also be ``unreadable`` (:data:`skill_eval.linter.run_records.ZONES` lists every
zone, and the text report counts them all); the viewer's own zone lists
(colours, titles, filters) take it when they give it a colour."""
CALIBRATION_ZONES: tuple[str, ...] = ("ceiling", "window", "floor", "adverse", "mixed", "unreadable", "undecided")
ARM_NAMES: tuple[str, ...] = ("control", "treatment")
STATUSES: tuple[str, ...] = ("ok", "error", "timeout", "interrupted", "running")

TYPED_DICTS: dict[str, type] = {
    "ReportModel": ReportModel, "Meta": Meta, "Filters": Filters, "Hashes": Hashes, "ArmSample": ArmSample,
    "Evidence": Evidence, "Finding": Finding, "Lint": Lint, "Expectation": Expectation,
    "DefectGrading": DefectGrading, "JudgeVerdict": JudgeVerdict, "Leak": Leak, "Answer": Answer, "Start": Start, "Group": Group,
    "CalibrationDecision": CalibrationDecision, "CalibrationRule": CalibrationRule, "Discriminator": Discriminator,
    "Usage": Usage, "ArtifactText": ArtifactText, "ProbeDefect": ProbeDefect, "ProbeContent": ProbeContent,
    "AnswersUnreadable": AnswersUnreadable,
}
"""Each TypedDict by the name of its ``$defs`` entry in the JSON Schema."""


def evidence_of_sample(sample: RowSample) -> Evidence:
    """The evidence of separation of a sample: its p-value is
    :attr:`~skill_eval.evals.stats.RowSample.p_value` (the one-sided Fisher
    exact test, :func:`~skill_eval.evals.stats.fisher_greater`) and it is
    separated as :attr:`~skill_eval.evals.stats.RowSample.separated` says."""
    treatment, control = sample.arms["treatment"], sample.arms["control"]
    p = sample.p_value
    if p is None:
        return Evidence(test="fisher-exact-one-sided", p=None, separated=False,
                        text="not tested: an arm has no graded rep")
    sizes = f"{treatment.reps} treatment vs {control.reps} control reps"
    if sample.separated:
        return Evidence(test="fisher-exact-one-sided", p=p, separated=True, text=f"separated (p = {p:.3g}, {sizes})")
    return Evidence(test="fisher-exact-one-sided", p=p, separated=False,
                    text=f"not separated at this sample (p = {p:.3g}, {sizes})")


def evidence_of(treatment: ArmSample, control: ArmSample) -> Evidence:
    """:func:`evidence_of_sample` of two arm samples of the model."""
    sample = RowSample("", 0)
    sample.arms["treatment"] = _RunsArmSample(treatment["reps"], treatment["caught"])
    sample.arms["control"] = _RunsArmSample(control["reps"], control["caught"])
    return evidence_of_sample(sample)


def load_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def validate(model: Any) -> list[str]:
    """Problems of ``model`` against the JSON Schema (empty when valid), each
    naming the JSON path of the offending value."""
    import jsonschema  # slow to import (docs/performance.md): only when a model is checked

    validator = jsonschema.Draft202012Validator(load_schema())
    return [f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
            for error in sorted(validator.iter_errors(model), key=lambda e: list(map(str, e.absolute_path)))]


def usage_of(groups: list[Group]) -> list[Usage]:
    """:class:`Usage` per agent, model and arm (in the groups' order), summed
    over every start of ``groups``."""
    found: dict[tuple[str, str, str], Usage] = {}
    for group in groups:
        for start in group["starts"]:
            key = (group["agent"], group["model"], start["arm"])
            usage = found.get(key)
            if usage is None:
                usage = found[key] = Usage(agent=key[0], model=key[1], arm=start["arm"], starts=0, reporting=0,
                                           tokens_in=None, tokens_out=None, cost_usd=None, turns=None)
            usage["starts"] += 1
            figures = [name for name in ("tokens_in", "tokens_out", "cost_usd", "turns") if start[name] is not None]
            usage["reporting"] += bool(figures)
            for name in figures:
                usage[name] = (usage[name] or 0) + start[name]
    return sorted(found.values(), key=lambda u: (u["agent"], u["model"], ARM_NAMES.index(u["arm"])))
