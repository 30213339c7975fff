"""Planning, budgeting, running, grading and recording starts.

A **start** is one run of one agent on one probe in one arm for one rep. The
runner plans the starts a command asks for, drops those already on record
(resume), checks the plan against the suite's budget
(``[calibration] max-starts``), hands jobs to an :class:`Executor`, and for
each outcome grades the answer, writes the answer to a file and appends one
record (see :mod:`skill_eval.linter.runs` for the durability contract).

Files: each invocation appends to a new file per skill,
``evals/runs/<UTC time>-<agent>-<random>.jsonl``, and keeps each answer in
``evals/runs/answers/<probe id>/v<version>/<arm>-r<rep>-<start id>.txt``
(the record's ``answer_file``, relative to ``evals/runs/``).

Resume key: (sha256 of probe.json, sha256 of the artifact, arm, rep, agent,
model). A key with an ``ok`` record is done. A key whose latest record is an
error or a timeout is re-run only with ``retry_errors`` — and then only those
keys; each retry is a new, counted start. A key never started is planned.

The **suite** whose starts the budget counts is the workspace: every
``evals/runs/*.jsonl`` below its root (torn lines included: every start counts).

Nothing here imports rich: the language server calls this through
:mod:`skill_eval.evals.api`.
"""

from __future__ import annotations

import os
import queue
import threading
import uuid
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from skill_eval.linter.config import AgentConfig, Config
from skill_eval.linter.runs import (
    ARMS, append_records, count_starts, find_runs_files, new_runs_file, record_passed, RECORD_SCHEMA,
)

from .executor import AgentJob, AgentOutcome, Executor, LocalExecutor
from .grading import BadExpectation, Value, check_expectation, grade_answer
from .probes import Probe, ProbeError, Workspace
from .prompt import build_prompt, with_skill


class RunError(ProbeError):
    """A run that must not start (config, budget, agent); one line with the fix."""


@dataclass(frozen=True)
class Start:
    probe: Probe
    arm: str
    rep: int
    retry_of: str | None = None


@dataclass(frozen=True)
class Budget:
    used: int
    cap: int | None
    source: str

    @property
    def remaining(self) -> int | None:
        return None if self.cap is None else max(0, self.cap - self.used)

    def describe(self) -> str:
        if self.cap is None:
            return f"{self.used} starts on record; no cap ([calibration] max-starts is not set)"
        return f"{self.used} of {self.cap} starts used, {self.remaining} remain"


@dataclass
class Plan:
    starts: list[Start]
    done: int = 0
    """Starts skipped because an ok record exists."""
    failed_waiting: int = 0
    """Keys whose latest record is an error/timeout, not re-run without retry_errors."""
    budget: Budget | None = None

    @property
    def fits(self) -> bool:
        remaining = self.budget.remaining if self.budget else None
        return remaining is None or len(self.starts) <= remaining


@dataclass
class RunSummary:
    records: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    skipped: int = 0
    """Planned starts never started (cancelled first): they cost nothing."""
    files: set[Path] = field(default_factory=set)
    """The runs files written."""

    def tally(self) -> dict[str, dict[str, int]]:
        """Per arm: starts, ok, caught (passed), error, timeout."""
        tallies = {arm: {"starts": 0, "ok": 0, "caught": 0, "error": 0, "timeout": 0} for arm in ARMS}
        for record in self.records:
            tally = tallies[record["arm"]]
            tally["starts"] += 1
            tally[record["status"]] += 1
            tally["caught"] += int(bool(record.get("passed")))
        return tallies


def validate_expectations(probe: Probe) -> None:
    """Refuse a probe whose ``caught_when`` holds an expectation grading cannot read."""
    for defect in probe.defects:
        caught_when = defect.get("caught_when")
        for name, expectation in (caught_when.items() if isinstance(caught_when, dict) else ()):
            try:
                check_expectation(expectation, Value.from_text(""))
            except BadExpectation as error:
                raise RunError(f"{probe.json_path}: defect {defect.get('id')}, field {name}: {error}; "
                               "fix caught_when (run `skill-eval lint`)") from None


def select_agent(config: Config, name: str | None) -> AgentConfig:
    """The agent called ``name``, or the only configured one."""
    where = str(config.source) if config.source else "skill-eval.toml"
    if not config.agents:
        raise RunError(f"{where}: no agents configured; add one, e.g. [agents.mine] command = [\"my-agent\", \"--print\"]")
    if name is None:
        if len(config.agents) == 1:
            return next(iter(config.agents.values()))
        raise RunError(f"{where}: several agents are configured ({', '.join(sorted(config.agents))}); choose one with --agent NAME")
    agent = config.agents.get(name)
    if agent is None:
        raise RunError(f"{where}: no agent {name!r} ([agents.{name}]); configured: {', '.join(sorted(config.agents))}")
    return agent


def check_agent(agent: AgentConfig, arms: Sequence[str], where: str) -> None:
    """Refuse agent commands that would leak the skill into the control arm."""
    for placeholder in ("{skill_dir}", "{skill_file}"):
        if any(placeholder in arg for arg in agent.command):
            raise RunError(f"{where}: agents.{agent.name}.command uses {placeholder}, which would hand the skill to the "
                           f"control arm too; move it to treatment-args and set treatment = \"args\"")
    if "treatment" in arms and agent.treatment == "args" and not agent.treatment_args:
        raise RunError(f"{where}: agents.{agent.name} has treatment = \"args\" but no treatment-args, so both arms would "
                       f"be the same; add treatment-args such as [\"--skill\", \"{{skill_dir}}\"]")


def parse_arms(text: str | Sequence[str]) -> tuple[str, ...]:
    arms = [a.strip() for a in (text.split(",") if isinstance(text, str) else text) if a.strip()]
    for arm in arms:
        if arm not in ARMS:
            raise RunError(f"unknown arm {arm!r}; arms are control and treatment (e.g. --arms control,treatment)")
    if not arms:
        raise RunError("no arms given; use --arms control,treatment")
    return tuple(dict.fromkeys(arms))


def suite_budget(workspace: Workspace) -> Budget:
    used = count_starts(find_runs_files(workspace.root))
    source = str(workspace.config.source) if workspace.config.source else "skill-eval.toml"
    return Budget(used, workspace.config.calibration_max_starts, source)


def rep_key(probe: Probe, arm: str, rep: int, agent: str, model: str) -> tuple:
    return (probe.probe_sha256, probe.artifact_sha256, arm, rep, agent, model)


def plan_starts(
    probes: Iterable[Probe],
    *,
    agent: AgentConfig,
    model: str,
    arms: Sequence[str],
    reps: int,
    retry_errors: bool = False,
) -> Plan:
    """The starts still to make (see the module docstring for resume)."""
    plan = Plan([])
    for probe in probes:
        latest: dict[tuple, dict[str, Any]] = {}
        ok_keys: set[tuple] = set()
        for record in probe.records():
            key = (record.get("probe_sha256"), record.get("artifact_sha256"), record.get("arm"),
                   record.get("rep"), record.get("agent"), record.get("model"))
            latest[key] = record
            if record.get("status") == "ok":
                ok_keys.add(key)
        for arm in arms:
            for rep in range(1, reps + 1):
                key = rep_key(probe, arm, rep, agent.name, model)
                if key in ok_keys:
                    plan.done += 1
                elif key in latest:
                    if retry_errors:
                        plan.starts.append(Start(probe, arm, rep, retry_of=latest[key].get("start_id")))
                    else:
                        plan.failed_waiting += 1
                elif not retry_errors:
                    plan.starts.append(Start(probe, arm, rep))
    return plan


class Runner:
    """Runs a plan with an executor and records every start.

    ``on_record(record)`` is called (from the thread that ran :meth:`run`) after
    each record is written; ``cancel`` stops the run: running agents are killed
    and recorded as interrupted errors, queued ones never start.
    """

    def __init__(
        self,
        workspace: Workspace,
        agent: AgentConfig,
        *,
        model: str | None = None,
        executor: Executor | None = None,
        jobs: int = 4,
        on_record: Callable[[dict[str, Any]], None] | None = None,
        cancel: threading.Event | None = None,
        fsync: bool = True,
    ) -> None:
        self.workspace = workspace
        self.agent = agent
        self.model = agent.model if model is None else model
        self.executor = executor
        self.jobs = jobs
        self.on_record = on_record
        self.cancel = cancel or threading.Event()
        self.fsync = fsync

    def plan(self, probes: Sequence[Probe], arms: Sequence[str], reps: int, retry_errors: bool = False) -> Plan:
        where = str(self.workspace.config.source) if self.workspace.config.source else "skill-eval.toml"
        check_agent(self.agent, arms, where)
        if reps < 1:
            raise RunError("--reps must be at least 1")
        if "treatment" in arms:
            for probe in probes:
                if probe.skill_bytes is None:
                    raise RunError(f"{probe.json_path}: the treatment arm needs the skill, and this probe has none; "
                                   "add a SKILL.md above it or run --arms control")
        for probe in probes:
            validate_expectations(probe)
        plan = plan_starts(probes, agent=self.agent, model=self.model, arms=arms, reps=reps, retry_errors=retry_errors)
        plan.budget = suite_budget(self.workspace)
        return plan

    # -- jobs -------------------------------------------------------------------------

    def job_for(self, start: Start, job_id: str) -> AgentJob:
        probe = start.probe
        prompt = build_prompt(probe.artifact_bytes, probe.output_spec)
        argv = list(self.agent.command)
        if start.arm == "treatment":
            if self.agent.treatment == "prepend":
                prompt = with_skill(probe.skill_bytes or b"", prompt)
            else:
                argv += list(self.agent.treatment_args)
        skill_file = str(probe.skill_path) if probe.skill_path else ""
        skill_dir = str(probe.skill_path.parent) if probe.skill_path else ""
        root = str(self.workspace.root)
        argv = [a.replace("{skill_dir}", skill_dir).replace("{skill_file}", skill_file).replace("{model}", self.model)
                .replace("{workspace}", root) for a in argv]
        return AgentJob(job_id, tuple(argv), prompt, probe.artifact_path.name, probe.artifact_bytes,
                        dict(self.agent.env), self.agent.timeout)

    # -- recording ----------------------------------------------------------------------

    def record(self, start: Start, job: AgentJob, outcome: AgentOutcome) -> dict[str, Any]:
        """Grade ``outcome``, keep its answer in a file, and build its record
        (written by :meth:`_write`)."""
        probe = start.probe
        record: dict[str, Any] = {
            "schema": RECORD_SCHEMA,
            "start_id": job.job_id,
            "probe": probe.probe_id,
            "version": probe.version,
            "probe_sha256": probe.probe_sha256,
            "artifact_sha256": probe.artifact_sha256,
            "skill_sha256": probe.skill_sha256,
            "probe_path": _relative(probe.json_path, self.workspace.root),
            "kind": probe.kind,
            "band": probe.band,
            "defects": probe.defect_ids,
            "arm": start.arm,
            "rep": start.rep,
            "agent": self.agent.name,
            "model": self.model,
            "started": outcome.started,
            "ended": outcome.ended,
            "duration_s": outcome.duration,
            "status": outcome.status,
            "exit_code": outcome.exit_code,
        }
        if start.retry_of:
            record["retry_of"] = start.retry_of
        if outcome.stdout or outcome.status == "ok":
            answer_path = (probe.runs_folder / "answers" / probe.probe_id / f"v{probe.version}"
                           / f"{start.arm}-r{start.rep}-{job.job_id[:12]}.txt")
            answer_path.parent.mkdir(parents=True, exist_ok=True)
            answer_path.write_bytes(outcome.stdout)
            record["answer_file"] = answer_path.relative_to(probe.runs_folder).as_posix()
        if outcome.status == "ok":
            text = outcome.stdout.decode("utf-8", errors="replace")
            answer, grades = grade_answer(text, list(probe.defects), probe.output_spec)
            record["answer_source"] = answer.source
            record["caught"] = [g.defect_id for g in grades if g.caught]
            record["passed"] = record_passed({**record, "caught": record["caught"]})
        else:
            record["caught"] = []
            record["error"] = outcome.error
            if outcome.stderr_tail:
                record["stderr_tail"] = outcome.stderr_tail
        return record

    # -- running --------------------------------------------------------------------------

    def run(self, plan: Plan) -> RunSummary:
        """Run ``plan`` (refusing it when it does not fit the budget)."""
        if not plan.fits:
            budget = plan.budget
            raise RunError(f"{budget.source}: the plan needs {len(plan.starts)} starts but only {budget.remaining} of "
                           f"[calibration] max-starts = {budget.cap} remain ({budget.used} used); narrow the run "
                           "(fewer probes, arms or reps) or raise the cap deliberately")
        summary = RunSummary()
        if not plan.starts:
            return summary
        executor = self.executor or LocalExecutor(self.jobs)
        pending: set[Future] = set()
        done: queue.SimpleQueue = queue.SimpleQueue()
        self._files: dict[Path, Path] = {}
        try:
            for start in plan.starts:
                job = self.job_for(start, uuid.uuid4().hex)
                future = executor.submit(job)
                pending.add(future)
                future.add_done_callback(self._recorder(start, job, done))
            while pending:
                if self.cancel.is_set():
                    raise KeyboardInterrupt
                try:
                    batch = [done.get(timeout=0.2)]
                except queue.Empty:
                    continue
                batch += _drain_queue(done)
                pending.difference_update(item[0] for item in batch)
                self._write(summary, batch)
        except KeyboardInterrupt:
            summary.interrupted = True
            executor.cancel()
            self._drain(summary, pending, done)
        except BaseException:
            executor.cancel()  # e.g. a full disk: stop spending starts that cannot be recorded
            raise
        finally:
            if self.executor is None:
                executor.shutdown(wait=True)
        return summary

    def _recorder(self, start: Start, job: AgentJob, done: queue.SimpleQueue):
        """The done-callback of a job: grade it and keep its answer file where it
        finished (a worker thread, locally), then pass the record to the thread
        that called :meth:`run`, which appends it."""

        def finished(future: Future) -> None:
            try:
                outcome = future.result()
            except BaseException:  # noqa: BLE001 - cancelled before it ran (remote executors)
                done.put((future, start, None, None))
                return
            if not outcome.is_start:
                done.put((future, start, None, None))
                return
            try:
                done.put((future, start, self.record(start, job, outcome), None))
            except BaseException as error:  # noqa: BLE001 - re-raised by the run loop
                done.put((future, start, None, error))

        return finished

    def _write(self, summary: RunSummary, batch: list[tuple]) -> None:
        """Append the records of ``batch``: one file per suite per invocation;
        each record one whole write; one fsync per file per batch."""
        by_file: dict[Path, list[dict[str, Any]]] = {}
        failure = None
        for _future, start, record, error in batch:
            if error is not None:
                failure = failure or error
                continue
            if record is None:
                summary.skipped += 1
                continue
            suite = start.probe.suite
            path = self._files.get(suite)
            if path is None:
                path = self._files[suite] = new_runs_file(suite, self.agent.name)
            by_file.setdefault(path, []).append(record)
        for path, records in by_file.items():
            append_records(path, records, fsync=self.fsync)
            for record in records:
                summary.records.append(record)
                if self.on_record is not None:
                    self.on_record(record)
        summary.files.update(by_file)
        if failure is not None:
            raise failure

    def _drain(self, summary: RunSummary, pending: set[Future], done: queue.SimpleQueue) -> None:
        """After a cancel: record every start that happened (killed ones included)."""
        while pending:
            try:
                batch = [done.get(timeout=30)]
            except KeyboardInterrupt:
                continue  # a second Ctrl-C must not lose the records of killed starts
            except queue.Empty:
                break
            batch += _drain_queue(done)
            pending.difference_update(item[0] for item in batch)
            self._write(summary, batch)


def _drain_queue(done: queue.SimpleQueue) -> list:
    items = []
    while True:
        try:
            items.append(done.get_nowait())
        except queue.Empty:
            return items


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def open_workspace(paths: Sequence[str | os.PathLike], config_path: Path | None = None) -> Workspace:
    return Workspace.open([Path(p) for p in paths], config_path)
