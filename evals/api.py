"""The runner's API for editors (the language server calls this).

Two functions, both synchronous and safe to call from a worker thread; neither
imports rich, pygls or lsprotocol.

``probe_status(probe_json_path)``
    Reads the run records of the probe's current version and returns a
    :class:`ProbeStatus`: zone, counts per arm, starts, last run time. Cheap:
    the skill's ``evals/runs/*.jsonl``, parsed once and cached by mtime. Never
    starts anything.

``run_probe(probe_json_path, *, agent=None, arms=("control", "treatment"), reps=2, ...)``
    Runs the probe's missing starts with a configured agent, exactly as
    ``skill-eval run PROBE --agent NAME --arms ... --reps N`` would (same
    resume, budget, transcript check and records), calling ``on_record(record)``
    after each record is written, and returns the new :class:`ProbeStatus`.
    Set the ``cancel`` event to stop: running agents are killed and recorded as
    interrupted starts (a :class:`~skill_eval.evals.runner.Cancel` stops the run
    at once, a plain :class:`threading.Event` within 0.2 s). Blocks until done —
    call it from a thread.

``calibrate_probes(probe_json_paths, *, agent=None, ...)``
    Runs ``skill-eval calibrate`` on those probes (one workspace): the control
    sample first, the treatment only where the control did not catch the
    defect in every rep, under the config's predeclared ``[calibration]`` rule
    (:mod:`skill_eval.evals.calibrate`), and returns a :class:`CalibrationStatus`.
    ``on_stage(stage, starts, worst_case)`` is called before each stage,
    ``on_record`` after each record; ``cancel`` stops it as for ``run_probe``.

Agent commands come from the workspace's config file; they run only when an
explicit user action calls :func:`run_probe` or :func:`calibrate_probes`
(never on open, save or hover).
Errors are raised as :class:`ApiError` with a one-line message naming the file
and the fix, suitable for ``window/showMessage``.

Example (in a server command handler)::

    cancel = Cancel()                # skill_eval.evals.runner.Cancel
    def work():
        return run_probe(path, agent="claude", reps=2,
                         on_record=lambda r: progress(r["arm"], r["status"]),
                         cancel=cancel)
    future = executor.submit(work)   # keep `cancel` to honour $/cancelRequest
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from .probes import ProbeError, Workspace
from .runner import RunError, Runner, parse_arms, select_agent, suite_budget
from .stats import sample_rows, wilson
from .transcripts import check_probe


class ApiError(Exception):
    """A request that cannot be served; ``str(error)`` is one line with the fix."""


@dataclass(frozen=True)
class ArmStatus:
    reps: int
    caught: int
    errors: int
    timeouts: int
    wilson95: tuple[float, float] | None


@dataclass(frozen=True)
class ProbeStatus:
    """The calibration state of a probe's current version."""

    probe: str
    version: int
    zone: str
    """ceiling, window, floor, adverse, mixed or pending (see skill_eval.linter.run_records)."""
    arms: dict[str, ArmStatus]
    starts: int
    """Starts on record for this version (failed ones included)."""
    last_run: str | None
    """ISO 8601 end time of the latest start of this version, if any."""
    budget: str = ""
    """The suite's budget, e.g. ``"12 of 40 starts used, 28 remain"`` (empty
    from :func:`probe_status` unless ``with_budget=True``)."""
    interrupted: bool = False
    new_records: int = 0
    agents: tuple[str, ...] = field(default=())
    """Agents with a row for this content (the status is one row: one agent and model)."""
    model: str = ""
    p_value: float | None = None
    """One-sided Fisher exact p of "treatment catches more often" (None while an arm has no graded rep)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _workspace(probe_json_path: Path | str) -> Workspace:
    path = Path(probe_json_path)
    if path.is_dir():
        path = path / "probe.json"
    try:
        return Workspace.open([path])
    except ProbeError as error:
        raise ApiError(str(error)) from None


def _load(workspace: Workspace, probe_json_path: Path | str, need_skill: bool):
    path = Path(probe_json_path)
    if path.is_dir():
        path = path / "probe.json"
    paths = workspace.probe_paths([path])
    if not paths:
        raise ApiError(f"{probe_json_path}: not a probe (no probe.json); open a probe's probe.json")
    try:
        return workspace.load(paths[0], need_skill=need_skill)
    except ProbeError as error:
        raise ApiError(str(error)) from None


def _status(workspace: Workspace, probe, with_budget: bool = True, agent: str | None = None, **extra: Any) -> ProbeStatus:
    """The row of the probe's current content (version and hashes): of ``agent``
    if given, else of the agent and model that ran it last. Rows of other
    agents or models are never pooled in."""
    current = (probe.probe_id, probe.version, probe.probe_sha256, probe.artifact_sha256, probe.skill_sha256)
    records = [r for r in probe.records() if r.get("version") == probe.version]
    rows = [row for key, row in sample_rows(records, agent).items()
            if key[:5] == current and key[7] == probe.skill_tree_sha256]
    sample = max(rows, key=lambda row: row.last_ended or "", default=None)
    arms: dict[str, ArmStatus] = {}
    for arm in ("control", "treatment"):
        arm_sample = sample.arms[arm] if sample else None
        arms[arm] = ArmStatus(
            reps=arm_sample.reps if arm_sample else 0,
            caught=arm_sample.caught if arm_sample else 0,
            errors=(arm_sample.errors + arm_sample.interrupted) if arm_sample else 0,
            timeouts=arm_sample.timeouts if arm_sample else 0,
            wilson95=wilson(arm_sample.caught, arm_sample.reps) if arm_sample and arm_sample.reps else None,
        )
    budget = ""
    if with_budget:
        try:
            budget = suite_budget(workspace).describe()
        except RunError as error:
            budget = str(error)
    return ProbeStatus(
        probe=probe.probe_id,
        version=probe.version,
        zone=sample.zone if sample else "pending",
        arms=arms,
        starts=sample.starts if sample else 0,
        last_run=sample.last_ended if sample else None,
        budget=budget,
        agents=tuple(sorted({a for row in rows for a in row.agents})),
        model=sorted(sample.models)[0] if sample and sample.models else "",
        p_value=sample.p_value if sample else None,
        **extra,
    )


def probe_status(probe_json_path: Path | str, *, with_budget: bool = False) -> ProbeStatus:
    """The calibration summary of the probe's current version (no agent runs).

    Reads only the probe's suite's ``evals/runs``; ``with_budget=True`` also
    counts the starts of the whole workspace (a walk of its folders) to fill
    :attr:`ProbeStatus.budget`.
    """
    workspace = _workspace(probe_json_path)
    probe = _load(workspace, probe_json_path, need_skill=False)
    return _status(workspace, probe, with_budget)


def run_probe(
    probe_json_path: Path | str,
    *,
    agent: str | None = None,
    arms: Sequence[str] = ("control", "treatment"),
    reps: int = 2,
    jobs: int = 4,
    retry_errors: bool = False,
    allow_lint_errors: bool = False,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    cancel: threading.Event | None = None,
) -> ProbeStatus:
    """Run the probe's missing starts (see the module docstring); blocks until done."""
    workspace = _workspace(probe_json_path)
    try:
        chosen_arms = parse_arms(arms)
        agent_config = select_agent(workspace.config, agent, workspace.root)
    except RunError as error:
        raise ApiError(str(error)) from None
    probe = _load(workspace, probe_json_path, need_skill="treatment" in chosen_arms)
    mismatched = [r for r in check_probe(probe, workspace.root) if not r.ok]
    if mismatched:
        first = mismatched[0]
        raise ApiError(first.error or f"{first.path}: known transcript graded differently than labelled; "
                       "run `skill-eval check` and calibrate the discriminator before spending live reps")
    runner = Runner(workspace, agent_config, jobs=jobs, on_record=on_record, cancel=cancel)
    try:
        preflight = runner.preflight([probe], chosen_arms, allow_lint_errors=allow_lint_errors)
        if preflight.withheld:
            findings = preflight.withheld[0].findings
            raise ApiError(f"{probe.json_path}: not run: the probe has lint errors ({findings[0]}"
                           + (f"; and {len(findings) - 1} more" if len(findings) > 1 else "")
                           + "); fix them first")
        plan = runner.plan([probe], chosen_arms, reps, retry_errors)
        summary = runner.run(plan)
    except (RunError, ProbeError) as error:
        raise ApiError(str(error)) from None
    except OSError as error:
        raise ApiError(f"{probe.runs_folder}: cannot record runs ({error.strerror or error}); check the folder") from None
    return _status(workspace, probe, agent=agent_config.name, interrupted=summary.interrupted,
                   new_records=len(summary.records))


@dataclass(frozen=True)
class ProbeCalibration:
    """Where one probe version stands after a calibration."""

    probe: str
    version: int
    zone: str
    """ceiling, window, floor, adverse, mixed; ``undecided`` (not decided in this
    invocation, or stopped by max-starts-per-probe); ``refused`` (calibrated
    under another rule: SE506); ``withheld`` (lint errors: not run)."""
    control: str
    """caught/graded reps, e.g. ``"0/2"``."""
    treatment: str
    starts: int
    """Starts on record for this content (failed and interrupted ones included)."""
    note: str = ""
    """Why it is undecided or refused; for a floor, "check the discriminator" and the transcripts."""


@dataclass(frozen=True)
class CalibrationStatus:
    probes: tuple[ProbeCalibration, ...]
    new_records: int
    interrupted: bool
    worst_case: int
    """The starts the procedure reserved before its first start."""
    budget: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def calibrate_probes(
    probe_json_paths: Sequence[Path | str],
    *,
    agent: str | None = None,
    jobs: int = 4,
    retry_errors: bool = False,
    allow_lint_errors: bool = False,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    on_stage: Callable[[int, int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> CalibrationStatus:
    """Calibrate the probes (see the module docstring); blocks until done.
    ``on_stage(stage, starts in it, worst case)``."""
    from .calibrate import Calibration, hint_text

    if not probe_json_paths:
        raise ApiError("no probe to calibrate; open a probe.json, or a SKILL.md heading its probes anchor on")
    workspace = _workspace(probe_json_paths[0])
    try:
        agent_config = select_agent(workspace.config, agent, workspace.root)
    except RunError as error:
        raise ApiError(str(error)) from None
    probes = [_load(workspace, path, need_skill=True) for path in probe_json_paths]
    for probe in probes:
        if workspace.root not in probe.json_path.parents:
            raise ApiError(f"{probe.json_path}: belongs to another workspace than {workspace.root}; "
                           "calibrate each workspace separately")
    for probe in probes:
        mismatched = [r for r in check_probe(probe) if not r.ok]
        if mismatched:
            first = mismatched[0]
            raise ApiError(first.error or f"{first.path}: known transcript graded differently than labelled; "
                           "run `skill-eval check` and calibrate the discriminator before spending live reps")
    calibration = Calibration(workspace, agent_config, jobs=jobs, retry_errors=retry_errors, on_record=on_record,
                              cancel=cancel)
    try:
        preflight = calibration.preflight(probes, allow_lint_errors=allow_lint_errors)
        if not preflight.probes:
            withheld = preflight.withheld[0]
            raise ApiError(f"{withheld.probe.json_path}: not calibrated: the probe has lint errors "
                           f"({withheld.findings[0]}); fix them first")
        plan = calibration.plan(preflight.probes)
        staged = None if on_stage is None else (lambda number, starts: on_stage(number, len(starts), plan.worst_case))
        result = calibration.run(plan, on_stage=staged)
    except (RunError, ProbeError) as error:
        raise ApiError(str(error)) from None
    except OSError as error:
        raise ApiError(f"{probes[0].runs_folder}: cannot record runs ({error.strerror or error}); check the folder") from None
    found = [ProbeCalibration(item.probe.probe_id, item.probe.version, "withheld", "-", "-", 0,
                              f"not calibrated: lint errors ({item.findings[0]}); fix them first")
             for item in preflight.withheld]
    for observation in result.observations:
        probe = observation.probe
        if observation.refused:
            zone, note = "refused", observation.reason
        elif observation.zone is None:
            zone, note = "undecided", observation.reason or "interrupted: run it again to resume"
        else:
            zone, note = observation.zone, observation.reason
            if zone == "floor":
                from .calibrate import discriminator_hint

                note = hint_text(discriminator_hint(probe, workspace.root))
        found.append(ProbeCalibration(probe.probe_id, probe.version, zone, observation.control.text(),
                                      observation.treatment.text() if observation.treatment.started else "-",
                                      observation.row_starts, note))
    try:
        budget = suite_budget(workspace).describe()
    except RunError as error:
        budget = str(error)
    return CalibrationStatus(tuple(found), len(result.summary.records), result.interrupted, plan.worst_case, budget)
