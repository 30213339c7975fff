"""``skill-eval calibrate``: the seed's optional live development calibration.

The seed ("Optional live development calibration") gives a procedure, and this
module runs it per probe version, for one agent and model:

1. Draft the artifact with the defect (the probe, linted and checked first:
   its known transcripts must grade as labelled, as ``skill-eval run`` checks).
2. Run a bounded control sample: ``[calibration] reps`` reps of the control arm.
3. If the control catches it in every sampled rep, record the observed
   ceiling; the treatment is not run, and the case stays listed as a
   regression/cost control.
4. Otherwise hand the same artifact to the treatment arm (``reps`` reps). If
   the treatment also misses every rep, it is below the window: record the
   floor, and check the discriminator (the transcripts that cover the defect
   are named, or their absence said).
5. Report the observed result whatever it is (a ``decision`` record per
   probe version, shown by ``skill-eval report``), and, with ``--freeze``,
   freeze the decided cases.

A band probe goes through the same steps on its band assertion: a rep
"catches" when its caught count lies within ``band``
(:func:`~skill_eval.linter.run_records.record_passed`).

**The stop is predeclared** in config (:class:`~skill_eval.linter.config.CalibrationRule`:
``reps``, ``caught-in-every-rep``, ``max-starts-per-probe``) and written, as
``calibration_rule`` and its ``calibration_rule_sha256``, into the plan
record, every start record and every decision record it governs. A probe
version whose starts were governed by another rule is not calibrated again
under this one (SE506 reports the change).

**Stages.** Calibration is a sequence of runner plans with a decision between
them, on the runner's own machinery (:class:`~skill_eval.evals.runner.Runner`):

* under the workspace's run lock, the whole procedure is planned from the
  records (:meth:`Calibration._planner`): the starts it needs now (control
  samples; treatment samples already known to be needed) and the starts it
  may need later (the treatment samples of probes whose control is still
  being sampled). Both are checked together against ``[calibration]
  max-starts`` — the worst case, before the first start — and written into
  one plan record, so that another runner counts them and leaves them alone;
* the first stage runs; the records are read again and the same planning
  decides which held treatment samples to run; the second stage runs them;
  and so on until nothing held is needed (two stages at most, in practice);
* the runs files are closed: unneeded reservations lapse.

Nothing is decided from anything but the records on disk, so a calibration
killed at any moment is resumed by the plain command: reps with an ``ok``
record are not run again, interrupted starts are run again as new counted
starts (``resume_of``), and the decision is made again from the records.
Within one invocation each rep is started at most once (a start that fails is
re-run by a later invocation with ``--retry-errors``), so calibrate never plans
more than ``skill-eval run --reps N`` would.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from skill_eval.linter.config import CalibrationRule
from skill_eval.linter.run_records import (
    ARMS, ArmSample, calibration_rule_record, calibration_rule_sha256, is_interrupted, zone_of,
)

from .agents import AgentConfig
from .executor import Executor, now_iso
from .probes import Probe, Workspace
from .records import DecisionRecord, RunsLog, new_runs_file, probe_identity, read_runs_file, record_fields
from .runner import (
    BudgetRefused, Plan, Preflight, RecordsState, RunError, Runner, RunSummary, Start, check_runs_folder,
    workspace_runs_files,
)
from .viewer_model import CALIBRATION_ZONES, CalibrationDecision

DECIDED_ZONES = ("ceiling", "window", "floor", "adverse", "mixed", "unreadable")
"""Observations a calibration records (``undecided`` is recorded only when
``max-starts-per-probe`` stopped the probe)."""

CAUGHT, MISSED, FAILED, INTERRUPTED, LIVE, NEW = "caught", "missed", "failed", "interrupted", "live", "new"


@dataclass(frozen=True)
class RepState:
    """One rep of one arm as the records stand: its latest graded result, or
    why it has none."""

    rep: int
    state: str
    """caught, missed, failed (error or timeout), interrupted, live (another
    running skill-eval run holds it), new (never started)."""
    latest: str | None = None
    """The start id of its latest failed or interrupted start."""
    status: str | None = None
    """That start's status (error, timeout, interrupted)."""
    unreadable: bool = False
    """A graded rep whose answer had no field the output spec names (``answer_source: "none"``)."""


@dataclass(frozen=True)
class ArmState:
    """An arm's sample of ``reps`` reps."""

    arm: str
    reps: tuple[RepState, ...]

    def count(self, state: str) -> int:
        return sum(1 for rep in self.reps if rep.state == state)

    @property
    def caught(self) -> int:
        return self.count(CAUGHT)

    @property
    def graded(self) -> int:
        return self.count(CAUGHT) + self.count(MISSED)

    @property
    def started(self) -> bool:
        return any(rep.state != NEW for rep in self.reps)

    def complete(self, rule: CalibrationRule) -> bool:
        """Whether the sample is taken, as the rule reads "every rep": all
        ``reps`` graded (``all-reps``), or every rep ended and at least one
        graded, failed starts set aside (``graded-reps``)."""
        if rule.caught_in_every_rep == "all-reps":
            return self.graded == len(self.reps)
        return self.graded >= 1 and all(rep.state in (CAUGHT, MISSED, FAILED) for rep in self.reps)

    def caught_every_rep(self, rule: CalibrationRule) -> bool:
        """The seed's "the control catches it in every sampled rep"."""
        return self.complete(rule) and self.caught == self.graded

    def open_reps(self, rule: CalibrationRule, retry_errors: bool) -> list[RepState]:
        """The reps a start could still be made for: never started, interrupted
        (resumed, as ``run`` does), failed when ``retry_errors`` and the rule
        needs them (``all-reps``, or no graded rep at all)."""
        retry_failed = retry_errors and (rule.caught_in_every_rep == "all-reps" or self.graded == 0)
        return [rep for rep in self.reps
                if rep.state in (NEW, INTERRUPTED) or (rep.state == FAILED and retry_failed)]

    def sample(self) -> ArmSample:
        return ArmSample(reps=self.graded, caught=self.caught,
                         errors=sum(1 for rep in self.reps if rep.state == FAILED and rep.status == "error"),
                         timeouts=sum(1 for rep in self.reps if rep.state == FAILED and rep.status == "timeout"),
                         interrupted=self.count(INTERRUPTED),
                         unreadable=sum(1 for rep in self.reps if rep.state in (CAUGHT, MISSED) and rep.unreadable))

    def text(self) -> str:
        """``"2/2"`` (caught/graded), with failed and open reps said."""
        out = f"{self.caught}/{self.graded}" if self.graded else "-"
        failed = self.count(FAILED) + self.count(INTERRUPTED)
        return out + (f" (+{failed} failed)" if failed else "")


@dataclass
class Observation:
    """Where one probe version stands in the procedure."""

    probe: Probe
    control: ArmState
    treatment: ArmState
    zone: str | None = None
    """ceiling, window, floor, adverse, mixed; ``undecided`` when the
    per-probe cap stopped it; ``None`` while the procedure goes on."""
    decided_after: str | None = None
    """``control`` (a ceiling) or ``treatment``."""
    now: list[Start] = field(default_factory=list)
    """Starts it needs now."""
    later: list[Start] = field(default_factory=list)
    """Starts it may need after this stage (the treatment sample, if the control misses a rep)."""
    reason: str = ""
    """Why it is not decided (and cannot go on in this invocation), when so."""
    spent: int = 0
    """Starts on record for this probe version, agent and model (failed and interrupted included)."""
    row_starts: int = 0
    """Of those, the starts of this content (probe.json, artifact, SKILL.md hashes)."""
    refused: bool = False
    """Calibrated under another rule before: nothing is spent on it (SE506)."""
    decision: dict[str, Any] | None = None
    """The latest decision on record for this row under this rule, if any."""

    @property
    def decided(self) -> bool:
        return self.zone is not None


@dataclass
class CalibrationResult:
    observations: list[Observation]
    summary: RunSummary
    decisions: list[dict[str, Any]] = field(default_factory=list)
    """Decision records written by this invocation."""
    stages: int = 0
    """Runner stages that made starts."""
    plan: Plan | None = None

    @property
    def interrupted(self) -> bool:
        return self.summary.interrupted


def rule_fields(rule: CalibrationRule) -> dict[str, Any]:
    """What every record a rule governs carries: ``calibration_rule`` and its hash."""
    record = calibration_rule_record(rule)
    return {"calibration_rule": record, "calibration_rule_sha256": calibration_rule_sha256(record)}


def describe_rule(rule: CalibrationRule) -> str:
    cap = "no per-probe cap" if rule.max_starts_per_probe is None else f"max-starts-per-probe = {rule.max_starts_per_probe}"
    return f"reps = {rule.reps}, caught-in-every-rep = {rule.caught_in_every_rep!r}, {cap}"


def observe(rule: CalibrationRule, control: ArmState, treatment: ArmState) -> tuple[str | None, str | None]:
    """The zone the rule decides from two arm samples, and after which arm;
    ``(None, None)`` while a needed sample is not taken.

    Ceiling from the control alone ("If the control catches it in every
    sampled rep, record the observed ceiling"); otherwise the treatment's
    sample decides, together with the control's, as the report's zones do
    (:func:`~skill_eval.linter.run_records.zone_of`): window, floor, adverse, mixed,
    or unreadable when most graded answers had no field the output spec names
    (never a floor: those misses are answers nobody could read).
    """
    if control.caught_every_rep(rule):
        return "ceiling", "control"
    if control.count(MISSED) == 0 or not control.complete(rule) or not treatment.complete(rule):
        return None, None
    return zone_of(control.sample(), treatment.sample()), "treatment"


def discriminator_hint(probe: Probe, root: Path) -> dict[str, Any]:
    """For a floor: the known transcripts that cover each defect (label it
    ``caught``), as paths relative to ``root``. The transcripts were checked
    before any start (they grade as labelled)."""
    from .transcripts import TranscriptError, read_transcript, transcript_paths

    covering: dict[str, list[str]] = {defect: [] for defect in probe.defect_ids}
    for path in transcript_paths(probe):
        try:
            transcript = read_transcript(probe, path)
        except TranscriptError:
            continue
        for defect, label in transcript.expect.items():
            if label == "caught" and defect in covering:
                covering[defect].append(_relative(path, root))
    return {"transcripts_catching": covering}


def hint_text(hint: dict[str, Any]) -> str:
    """The seed's "check the discriminator", with the known transcripts that
    cover each defect, or the lack of them."""
    parts = []
    for defect, paths in (hint.get("transcripts_catching") or {}).items():
        if paths:
            parts.append(f"known transcripts catching {defect}: {', '.join(paths)}")
        else:
            parts.append(f"no known transcript covers {defect} (add transcripts/*.md with "
                         f"`expect: {{{defect}: caught}}` and run `skill-eval check`)")
    return ("check the discriminator (caught_when): can the defect be derived from the discipline alone? "
            + "; ".join(parts) + ". Do not infer a general defect in the skill from these misses")


class Calibration:
    """The procedure over a set of probes, for one agent and model (see the
    module docstring). ``on_record(record)`` is called after each start's
    outcome is written; ``cancel`` stops it (running agents are killed and
    recorded as interrupted; the plain command resumes)."""

    def __init__(
        self,
        workspace: Workspace,
        agent: AgentConfig,
        *,
        model: str | None = None,
        jobs: int = 4,
        retry_errors: bool = False,
        executor: Executor | None = None,
        cancel: threading.Event | None = None,
        on_record: Callable[[dict[str, Any]], None] | None = None,
        max_output: int | None = None,
        fsync: bool = True,
    ) -> None:
        self.workspace = workspace
        self.rule: CalibrationRule = workspace.config.calibration_rule
        self.fields = rule_fields(self.rule)
        self.rule_sha256: str = self.fields["calibration_rule_sha256"]
        self.retry_errors = retry_errors
        self.runner = Runner(workspace, agent, model=model, executor=executor, jobs=jobs, on_record=on_record,
                             cancel=cancel, fsync=fsync, max_output=max_output)
        self.observations: dict[Path, Observation] = {}
        """The latest planning's view, per probe.json."""
        self._own: set[tuple] = set()
        """Rep identities this invocation reserved: held by itself, not by another runner."""

    @property
    def agent(self) -> str:
        return self.runner.agent.name

    @property
    def model(self) -> str:
        return self.runner.model

    def preflight(self, probes: Sequence[Probe], *, allow_lint_errors: bool = False) -> Preflight:
        """As ``run``'s: the agent's executable, probe ids, runs folders, lint
        errors; both arms, since the treatment may be needed."""
        return self.runner.preflight(probes, ARMS, allow_lint_errors=allow_lint_errors)

    # -- planning -------------------------------------------------------------------------

    def plan(self, probes: Sequence[Probe]) -> Plan:
        """The procedure as the records stand (a preview: nothing reserved)."""
        self.runner._check(probes, ARMS, self.rule.reps)
        plan = self.runner._plan(probes, ARMS, self.rule.reps, self.retry_errors, self._planner(probes))
        plan.record_fields = dict(self.fields)
        return plan

    def _planner(self, probes: Sequence[Probe]) -> Callable[[RecordsState], Plan]:
        def planner(state: RecordsState) -> Plan:
            plan = Plan([], arms=ARMS, reps=self.rule.reps, retry_errors=self.retry_errors)
            self.observations = self._observe_all(probes, state)
            for observation in self.observations.values():
                plan.starts.extend(observation.now)
                plan.held.extend(observation.later)
            plan.record_fields = dict(self.fields)
            return plan

        return planner

    def _observe_all(self, probes: Sequence[Probe], state: RecordsState) -> dict[Path, Observation]:
        agent, model = self.agent, self.model
        spent: dict[tuple, int] = {}
        row_starts: dict[tuple, int] = {}
        rules: dict[tuple, set[str]] = {}
        decisions: dict[tuple, dict[str, Any]] = {}
        wanted = {(probe.probe_id, probe.version) for probe in probes}
        for path in state.files:
            runs = read_runs_file(path)
            for _line, record in runs.records:
                if (record.get("probe"), record.get("version")) not in wanted:
                    continue
                if record.get("agent") != agent or record.get("model") != model:
                    continue
                key = (record["probe"], record["version"])
                spent[key] = spent.get(key, 0) + 1
                content = (*key, record.get("probe_sha256"), record.get("artifact_sha256"), record.get("skill_sha256"),
                           record.get("skill_tree_sha256"))
                row_starts[content] = row_starts.get(content, 0) + 1
                if isinstance(record.get("calibration_rule_sha256"), str):
                    rules.setdefault(key, set()).add(record["calibration_rule_sha256"])
            for _line, record in runs.decisions:
                if record.get("agent") != agent or record.get("model") != model:
                    continue
                key = (record.get("probe"), record.get("version"))
                if key not in wanted:
                    continue
                if isinstance(record.get("calibration_rule_sha256"), str):
                    rules.setdefault(key, set()).add(record["calibration_rule_sha256"])
                content = (*key, record.get("probe_sha256"), record.get("artifact_sha256"), record.get("skill_sha256"),
                           record.get("skill_tree_sha256"))
                if record.get("calibration_rule_sha256") == self.rule_sha256:
                    decisions[content] = record
        found: dict[Path, Observation] = {}
        for probe in probes:
            key = (probe.probe_id, probe.version)
            content = (*key, probe.probe_sha256, probe.artifact_sha256, probe.skill_sha256, probe.skill_tree_sha256)
            control, treatment = (self._arm(probe, arm, state) for arm in ARMS)
            observation = Observation(probe, control, treatment, spent=spent.get(key, 0),
                                      row_starts=row_starts.get(content, 0), decision=decisions.get(content))
            found[probe.json_path] = observation
            other_rules = rules.get(key, set()) - {self.rule_sha256}
            if other_rules:
                observation.refused = True
                observation.reason = (f"its starts were governed by another [calibration] rule "
                                      f"({', '.join(sorted(h[:12] for h in other_rules))}); the stop is predeclared: "
                                      "restore that rule, or calibrate a new variant (bump \"version\") (SE506)")
                continue
            self._decide(observation)
        return found

    def _arm(self, probe: Probe, arm: str, state: RecordsState) -> ArmState:
        reps = []
        for rep in range(1, self.rule.reps + 1):
            identity = Start(probe, arm, rep).identity(self.agent, self.model)
            if identity in state.passed:
                reps.append(RepState(rep, CAUGHT if state.passed[identity] else MISSED,
                                     unreadable=identity in state.unreadable))
            elif identity in state.live and identity not in self._own:
                reps.append(RepState(rep, LIVE))
            elif identity in state.latest_failure:
                latest = state.latest_failure[identity]
                interrupted = is_interrupted(latest)
                reps.append(RepState(rep, INTERRUPTED if interrupted else FAILED, latest.get("start_id"),
                                     "interrupted" if interrupted else str(latest.get("status"))))
            else:
                reps.append(RepState(rep, NEW))
        return ArmState(arm, tuple(reps))

    def _starts(self, probe: Probe, arm: ArmState) -> list[Start]:
        starts = []
        for rep in arm.open_reps(self.rule, self.retry_errors):
            if rep.state == INTERRUPTED:
                starts.append(Start(probe, arm.arm, rep.rep, resume_of=rep.latest))
            elif rep.state == FAILED:
                starts.append(Start(probe, arm.arm, rep.rep, retry_of=rep.latest))
            else:
                starts.append(Start(probe, arm.arm, rep.rep))
        return starts

    def _decide(self, observation: Observation) -> None:
        """The rule's next step for one probe version: decided, or the starts
        it needs now and may need later, within ``max-starts-per-probe``."""
        rule, probe = self.rule, observation.probe
        control, treatment = observation.control, observation.treatment
        zone, after = observe(rule, control, treatment)
        if zone is not None:
            observation.zone, observation.decided_after = zone, after
            return
        control_starts, treatment_starts = self._starts(probe, control), self._starts(probe, treatment)
        if control.count(MISSED) == 0:
            # the control may still catch it in every rep: sample it; the treatment waits
            now, later, waiting = control_starts, treatment_starts, control
        else:
            # it did not: hand the same artifact to the treatment arm (and finish the control's sample)
            now, later = control_starts + treatment_starts, []
            waiting = control if not control.complete(rule) else treatment
        cap = rule.max_starts_per_probe
        if cap is not None:
            allowance = max(0, cap - observation.spent)
            if len(now) > allowance:
                observation.zone = "undecided"
                observation.reason = (f"stopped by the predeclared max-starts-per-probe = {cap}: "
                                      f"{observation.spent} start(s) spent, the next sample needs {len(now)}")
                return
            if len(now) + len(later) > allowance:
                later = []  # a partial treatment sample is never started
        if not now:
            observation.reason = self._stuck(waiting)
            later = []
        observation.now, observation.later = now, later

    def _stuck(self, arm: ArmState) -> str:
        """Why an undecided arm cannot be sampled further in this invocation."""
        live = [rep.rep for rep in arm.reps if rep.state == LIVE]
        if live:
            return (f"{arm.arm} rep(s) {', '.join(map(str, live))} are held by another running skill-eval run; "
                    "run calibrate again when it is done")
        failed = [rep for rep in arm.reps if rep.state == FAILED]
        if failed:
            return (f"{arm.arm} rep(s) {', '.join(f'{rep.rep} ({rep.status})' for rep in failed)} failed and the rule "
                    f"({self.rule.caught_in_every_rep}) needs them graded; re-run them with --retry-errors "
                    "(each a new counted start)")
        if not arm.started:
            return f"the {arm.arm} sample does not fit max-starts-per-probe = {self.rule.max_starts_per_probe}"
        return f"the {arm.arm} sample is not complete"

    # -- running ------------------------------------------------------------------------------

    def run(self, plan: Plan, on_stage: Callable[[int, list[Start]], None] | None = None) -> CalibrationResult:
        """Reserve ``plan`` (the whole procedure's worst case, under the run
        lock) and run it stage by stage; write the decisions. Raises
        :class:`~skill_eval.evals.runner.BudgetRefused` before any start when
        the worst case does not fit ``max-starts``."""
        runner = self.runner
        plan.record_fields = dict(self.fields)
        runner.reserve(plan)
        self._own = {start.identity(self.agent, self.model) for start in [*plan.starts, *plan.held]}
        held = {start.identity(self.agent, self.model): start for start in plan.held}
        summary = RunSummary()
        summary.files.update(log.path for log in (plan.logs or {}).values())
        result = CalibrationResult([], summary, plan=plan)
        try:
            stage = list(plan.starts)
            while stage:
                result.stages += 1
                if on_stage is not None:
                    on_stage(result.stages, stage)
                part = runner.run(plan, stage, close=False)
                summary.records.extend(part.records)
                summary.skipped += part.skipped
                if part.interrupted or runner.cancel.is_set():
                    summary.interrupted = True
                    break
                self._replan(plan)
                stage = []
                for observation in self.observations.values():
                    for start in observation.now:
                        reserved = held.pop(start.identity(self.agent, self.model), None)
                        if reserved is not None:
                            stage.append(reserved)
            if not summary.interrupted:
                result.decisions = self._record_decisions(plan)
        finally:
            Runner._close(plan)
        result.observations = list(self.observations.values())
        return result

    def _replan(self, plan: Plan) -> None:
        """Read the records again and decide the next stage (no lock: what it
        runs was reserved by ``plan``)."""
        state = RecordsState(workspace_runs_files(self.workspace.root))
        self.observations = self._observe_all(plan.probes, state)

    def _record_decisions(self, plan: Plan) -> list[dict[str, Any]]:
        """A decision record for every probe version decided (or stopped by
        its cap) whose decision is not on record as it stands."""
        written: list[dict[str, Any]] = []
        by_suite: dict[Path, list[DecisionRecord]] = {}
        for observation in self.observations.values():
            if not observation.decided or observation.refused:
                continue
            record = self.decision_record(observation, plan.plan_id)
            previous, fields = observation.decision, record_fields(record)
            if previous is not None and all(previous.get(key) == fields.get(key) for key in
                                            ("zone", "decided_after", "control", "treatment", "starts")):
                continue
            by_suite.setdefault(observation.probe.suite, []).append(record)
        if plan.logs is None:
            plan.logs = {}
        logs = plan.logs
        for suite, records in by_suite.items():
            log = logs.get(suite)
            if log is None:
                folder = check_runs_folder(suite, self.workspace.root)
                folder.mkdir(parents=True, exist_ok=True)
                check_runs_folder(suite, self.workspace.root)
                log = logs[suite] = RunsLog(new_runs_file(suite, self.agent), fsync=self.runner.fsync)
            log.append(records)
            written.extend(map(record_fields, records))
        return written

    def decision_record(self, observation: Observation, plan_id: str = "") -> DecisionRecord:
        probe = observation.probe
        record = DecisionRecord(
            **probe_identity(probe),
            probe_path=_relative(probe.json_path, self.workspace.root),
            kind=probe.kind,
            agent=self.agent,
            model=self.model,
            zone=observation.zone,
            decided_after=observation.decided_after,
            control=_arm_json(observation.control),
            treatment=_arm_json(observation.treatment) if observation.treatment.started else None,
            starts=observation.row_starts,
            version_starts=observation.spent,
            decided=now_iso(),
            plan_id=plan_id,
            **self.fields,
        )
        if observation.zone == "undecided":
            record.reason = observation.reason
        if observation.zone == "floor":
            record.discriminator = discriminator_hint(probe, self.workspace.root)
        return record


# -- decisions, for the report -------------------------------------------------------------------


def latest_decisions(files: Sequence[Path],
                     key: Callable[[Path, dict[str, Any]], tuple] | None = None) -> dict[tuple, dict[str, Any]]:
    """The latest decision record (by ``decided``) per ``key(runs file,
    record)`` in ``files``; by default per report row (``probe, version,
    probe_sha256, artifact_sha256, skill_sha256, agent, model,
    skill_tree_sha256``, as
    :func:`~skill_eval.evals.stats.row_key`). The report model keys them like
    its groups, with the suite in front."""
    from .stats import row_key

    found: dict[tuple, dict[str, Any]] = {}
    for path in files:
        for _line, record in read_runs_file(path).decisions:
            found_key = row_key(record) if key is None else key(path, record)
            previous = found.get(found_key)
            if previous is None or str(record.get("decided", "")) >= str(previous.get("decided", "")):
                found[found_key] = record
    return found


def decision_summary(decision: dict[str, Any]) -> CalibrationDecision | None:
    """What the report shows of a decision record (the report model's
    ``CalibrationDecision``): the zone, after which arm, the starts it cost,
    the rule that decided it and its hash, whether it is kept as a
    regression/cost control (a ceiling), and why it stopped undecided or which
    transcripts cover a floor's defects. Fields of the wrong type read as null;
    a record without a known zone is no decision (``None``)."""
    zone = decision.get("zone")
    if zone not in CALIBRATION_ZONES:
        return None

    def count(name: str) -> int | None:
        value = decision.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    def text(name: str) -> str | None:
        value = decision.get(name)
        return value if isinstance(value, str) else None

    rule = decision.get("calibration_rule")
    if isinstance(rule, dict):
        reps, cap = rule.get("reps"), rule.get("max-starts-per-probe")
        every = rule.get("caught-in-every-rep")
        rule = {"reps": reps if isinstance(reps, int) and not isinstance(reps, bool) and reps >= 1 else None,
                "caught-in-every-rep": every if isinstance(every, str) else None,
                "max-starts-per-probe": cap if isinstance(cap, int) and not isinstance(cap, bool) and cap >= 1 else None}
    else:
        rule = None
    digest = text("calibration_rule_sha256")
    hint = decision.get("discriminator")
    covering = hint.get("transcripts_catching") if isinstance(hint, dict) else None
    discriminator = None
    if isinstance(covering, dict):
        discriminator = {"transcripts_catching": {
            str(defect): [str(p) for p in paths if isinstance(p, str)] if isinstance(paths, list) else []
            for defect, paths in covering.items()}}
    return CalibrationDecision(
        zone=zone, decided_after=decision.get("decided_after") if decision.get("decided_after") in ARMS else None,
        starts=count("starts"), version_starts=count("version_starts"), decided=text("decided"),
        calibration_rule=rule,
        calibration_rule_sha256=digest if digest is not None and len(digest) == 64
        and all(c in "0123456789abcdef" for c in digest) else None,
        regression_control=zone == "ceiling", reason=text("reason"), discriminator=discriminator)


def decision_note(decision: dict[str, Any]) -> str:
    """``calibrated: ceiling after the control (2 starts; rule 9d212e30054f: reps 2, ...)``,
    of a decision record or its :func:`decision_summary`."""
    rule = decision.get("calibration_rule") if isinstance(decision.get("calibration_rule"), dict) else {}
    cap = rule.get("max-starts-per-probe")
    described = (f"reps {rule.get('reps')}, {rule.get('caught-in-every-rep')}, "
                 + ("no per-probe cap" if cap is None else f"max-starts-per-probe {cap}"))
    after = f" after the {decision['decided_after']}" if decision.get("decided_after") else ""
    digest = str(decision.get("calibration_rule_sha256") or "")[:12]
    return f"calibrated: {decision.get('zone')}{after} ({decision.get('starts')} starts; rule {digest}: {described})"


def _arm_json(arm: ArmState) -> dict[str, Any]:
    sample = arm.sample()
    return {"reps": sample.reps, "caught": sample.caught, "errors": sample.errors, "timeouts": sample.timeouts,
            "interrupted": sample.interrupted}


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


__all__ = ["Calibration", "CalibrationResult", "Observation", "ArmState", "RepState", "observe", "rule_fields",
           "describe_rule", "discriminator_hint", "hint_text", "latest_decisions", "decision_summary", "decision_note",
           "BudgetRefused", "RunError"]
