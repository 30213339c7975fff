"""``skill-eval run | report | check | freeze | calibrate``.

Exit status: 0 success; 1 when the command worked but the result is not clean
(a start errored or timed out, a transcript mismatched, the budget refused the
plan); 2 on bad input (one line on stderr naming the file and the fix, never a
traceback); 130 when interrupted (after recording every start that happened).
``report --junit FILE`` exits 1 when a test case of the XML failed or errored.

Results (a run's tallies, a report's tables) go to stdout; progress, the plan
of a run and diagnostics go to stderr (see :mod:`skill_eval.evals.progress`).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Sequence

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130

CHECK_MOTTO = "calibrate the discriminator on known transcripts before spending live reps"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        self.exit(EXIT_ERROR, f"{self.prog}: {message} (see --help)\n")


def _fail(message: str) -> int:
    for line in str(message).splitlines() or [""]:
        print(f"skill-eval: {line}", file=sys.stderr)
    return EXIT_ERROR


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, help="probe folders, probe.json files or skill folders (default: the workspace)")
    parser.add_argument("--probe", action="append", default=[], metavar="ID", help="a probe id (repeatable)")
    parser.add_argument("--config", type=Path, help="use this skill-eval.toml / pyproject.toml instead of discovery")


def _open(args):
    from .probes import Workspace

    return Workspace.open(list(args.paths), args.config)


def _select(workspace, args) -> list[Path]:
    from .probes import ProbeError

    paths = workspace.probe_paths(args.paths, args.probe)
    if not paths:
        where = ", ".join(str(p) for p in args.paths) or str(workspace.root)
        raise ProbeError(f"{where}: no probe.json found; pass a probe folder or a skill folder holding evals/probes/")
    return paths


def _select_with_suites(workspace, args) -> tuple[list[Path], list[Path]]:
    """probe.json files and skill-creator eval suites (``evals.json``) for
    ``args.paths`` (default: the whole workspace); ``--probe`` ids select
    probes only."""
    from .probes import ProbeError
    from .suites import suite_paths

    suites = [] if args.probe else suite_paths(workspace, args.paths)
    try:
        return _select(workspace, args), suites
    except ProbeError:
        if suites:
            return [], suites
        raise


# -- run ------------------------------------------------------------------------------


def run_main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="skill-eval run", description="Run probes with an agent: control vs treatment arms, reps, grading.")
    _common(parser)
    parser.add_argument("--agent", help="an [agents.NAME] of the config (default: the only one)")
    parser.add_argument("--arms", default="control,treatment", help="comma-separated arms (default: control,treatment)")
    parser.add_argument("--reps", type=int, default=2, help="reps per arm (default: 2; rep numbers 1..N)")
    parser.add_argument("-j", "--jobs", type=int, help="agents running at once (default: 4; with --executor ray, "
                        "the cluster's CPUs)")
    parser.add_argument("--executor", default="local", metavar="local|ray[=ADDRESS]",
                        help="where agents run: local (default), ray (a Ray started for this run on 127.0.0.1) or "
                             "ray=HOST:PORT (a Ray cluster); needs skill-eval[ray]")
    parser.add_argument("--model", help="override the agent's model ({model})")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and the starts it would spend; run nothing")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run each start unsealed: the agent can read what your user can (the workspace, evals/, "
                             "the runs); recorded as sandbox \"off\" and flagged in the report")
    parser.add_argument("--retry-errors", action="store_true", help="re-run only starts recorded as error/timeout (each a new counted start)")
    parser.add_argument("--skip-check", action="store_true", help="do not grade the probes' known transcripts first")
    parser.add_argument("--allow-lint-errors", action="store_true",
                        help="also run probes whose lint has errors (by default they are listed and not run)")
    parser.add_argument("--max-output", type=int, metavar="BYTES",
                        help="bytes of stdout and of stderr kept per start (default: the agent's max-output, 10 MiB)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress on stderr (by default: a bar with an ETA on a terminal, else one line per "
                             "finished start)")
    parser.add_argument("--triggers", action="store_true",
                        help="run the skill-creator trigger sets instead (each query with the skill installed; "
                             "whether the harness loaded it is read from its transcript)")
    args = parser.parse_intermixed_args(argv)
    if args.jobs is not None and args.jobs < 1:
        return _fail("-j must be at least 1")
    executor = None
    if args.executor != "local":
        from .ray_executor import RayExecutor, RayExecutorError, parse_executor, require_ray

        try:
            _kind, address = parse_executor(args.executor)
            if _kind == "ray":
                require_ray()
                executor = RayExecutor(address, slots=args.jobs, num_cpus=args.jobs)
        except RayExecutorError as error:
            return _fail(str(error))
    if args.max_output is not None and args.max_output < 1:
        return _fail("--max-output must be at least 1 byte")
    from .probes import ProbeError
    from .runner import BudgetRefused, Cancel, RunError, Runner, parse_arms, select_agent
    from .transcripts import check_probe

    try:
        arms = ("treatment",) if args.triggers else parse_arms(args.arms)
        workspace = _open(args)
        refused = _unreachable_reps(args.reps, workspace.config)
        if refused:
            return _fail(refused)
        agent = select_agent(workspace.config, args.agent, workspace.root)
        if args.no_sandbox:
            agent = agent._replace(sandbox="off")
        from .suites import load_suites, suite_settings

        if args.triggers:
            from .triggers import load_trigger_sets, trigger_paths

            if agent.treatment == "prepend":
                raise RunError(f"agents.{agent.name}: a trigger test asks whether the harness loads the installed "
                               "skill; treatment = \"prepend\" puts it in every prompt: use a preset (treatment = "
                               "\"install\")")
            found = trigger_paths(workspace, args.paths)
            if not found:
                raise ProbeError(f"{', '.join(map(str, args.paths)) or workspace.root}: no trigger set found "
                                 "(a prompts.csv or trigger-evals.json in an evals folder)")
            skills_folder = None
            if agent.preset:
                from .presets import get_preset

                skills_folder = get_preset(agent.preset).skills_folder
            elif suite_settings(workspace).distractors:
                raise RunError(f"agents.{agent.name}: [suites] distractors are installed in a preset's skills folder; "
                               "use a preset agent")
            probes, errors = load_trigger_sets(workspace, found, skills_folder)
        else:
            probe_paths, suite_paths = _select_with_suites(workspace, args)
            probes, errors = workspace.load_all(probe_paths, need_skill="treatment" in arms)
            suite_probes, suite_errors = load_suites(workspace, suite_paths)
            probes, errors = probes + suite_probes, errors + suite_errors
        if errors:
            return _fail("\n".join(errors + ["no start was made; fix the probes above or name other probes"]))
        cancel = Cancel()
        runner = Runner(workspace, agent, model=args.model, jobs=args.jobs or 4, executor=executor, cancel=cancel,
                        max_output=args.max_output)
        preflight = runner.preflight(probes, arms, allow_lint_errors=args.allow_lint_errors)
        for withheld in preflight.withheld:
            print(f"skill-eval: not run: {withheld.probe.probe_id} v{withheld.probe.version} ({withheld.probe.json_path}) "
                  "has lint errors:", file=sys.stderr)
            for finding in withheld.findings:
                print(f"    {finding}", file=sys.stderr)
        if preflight.withheld:
            print(f"skill-eval: {len(preflight.withheld)} probe(s) not run because of lint errors; fix them "
                  "(`skill-eval lint`) or pass --allow-lint-errors", file=sys.stderr)
        probes = preflight.probes
        if not args.skip_check:
            checked = [(probe, check_probe(probe, workspace.root)) for probe in probes]
            _warn_unchecked([probe for probe, results in checked if not results])
            mismatched = [r for _probe, results in checked for r in results if not r.ok]
            if mismatched:
                for result in mismatched:
                    print(result.error or f"{result.path}: " + "; ".join(l for l in result.lines if "MISMATCH" in l),
                          file=sys.stderr)
                print(f"skill-eval: known transcripts disagree with the discriminator; {CHECK_MOTTO} "
                      "(see `skill-eval check`); no start was made", file=sys.stderr)
                return EXIT_FINDINGS
        plan = runner.plan(probes, arms, args.reps, args.retry_errors)
    except (ProbeError, RunError) as error:
        return _fail(str(error))
    withheld = len(preflight.withheld)

    def header() -> str:
        text = (f"agent {agent.name}, model {runner.model or '(agent default)'}, arms {','.join(arms)}, "
                f"reps 1..{args.reps}: {len(plan.starts)} start(s) to make")
        if plan.resumed:
            text += f" ({plan.resumed} resuming interrupted starts)"
        text += f", {plan.done} already recorded ok"
        if plan.elsewhere:
            text += f", {plan.elsewhere} held by another running skill-eval run"
        if plan.failed_waiting:
            text += f", {plan.failed_waiting} recorded as error/timeout (re-run them with --retry-errors)"
        return text

    if args.dry_run:
        print(header())
        for start in plan.starts:
            note = (f" (retry of {start.retry_of[:12]})" if start.retry_of else
                    f" (resumes interrupted {start.resume_of[:12]})" if start.resume_of else "")
            print(f"  {start.probe.probe_id} v{start.probe.version}  {start.arm:<9} rep {start.rep}{note}")
        print(f"would spend {len(plan.starts)} start(s); budget: {plan.budget.describe()}")
        if not plan.fits:
            print(f"refused: the plan needs {len(plan.starts)} starts but only {plan.budget.remaining} remain")
            return EXIT_FINDINGS
        return EXIT_FINDINGS if withheld else EXIT_OK

    stop = _StopOnSignals(cancel).install()
    try:
        if executor is not None and plan.starts:
            try:
                executor.connect()  # before reserving: a cluster out of reach spends nothing
                executor.check_worker(preflight.executable, dict(agent.env))
                print(executor.describe(), file=sys.stderr)
            except RayExecutorError as error:
                return _fail(str(error))
        runner.on_wait = lambda: print("waiting for another skill-eval run to finish planning...", file=sys.stderr)
        try:
            runner.reserve(plan)
        except BudgetRefused as error:
            print(f"skill-eval: {error}", file=sys.stderr)
            return EXIT_FINDINGS
        except RunError as error:
            return _fail(str(error))
        print(header(), file=sys.stderr)
        if not plan.starts:
            runner._close(plan)
            print("nothing to run", file=sys.stderr)
            return EXIT_FINDINGS if withheld else EXIT_OK
        from .progress import run_with_progress

        summary = run_with_progress(runner, plan, show=not args.no_progress)
    except (ProbeError, OSError) as error:
        return _fail(f"{error}")
    finally:
        if executor is not None:
            executor.shutdown(wait=True)
        stop.remove()
    return _print_results(summary, workspace, withheld)


def unreadable_by_arm(records) -> dict[str, int]:
    """Per arm, the ``ok`` starts whose answer had no field the output spec
    names (``answer_source: "none"``); arms without any are left out."""
    found: dict[str, int] = {}
    for record in records:
        if record.get("status") == "ok" and record.get("answer_source") == "none":
            found[record["arm"]] = found.get(record["arm"], 0) + 1
    return found


def _unreadable_warning(unreadable: dict[str, int], tallies) -> str:
    counts = ", ".join(f"{arm} {count} of {tallies[arm]['ok']}" for arm, count in unreadable.items())
    return (f"skill-eval: warning: answers with no field output-spec.md names ({counts} ok start(s)): each is "
            "graded a miss; if the agent answers in prose, make its command or prompt ask for the output spec's "
            "fields (`skill-eval report` marks groups made mostly of them `unreadable`)")


def skill_use_line(records) -> str | None:
    """How often each arm's starts loaded the skill, from their outcome
    records' ``skill_loaded`` (docs/format.md "Skill use"): ``skill loaded:
    control 0 of 2 start(s); treatment 1 of 2 start(s), 1 unknown``, flagging
    control starts that loaded it (isolation failure) and treatment starts
    that did not. ``None`` when the run recorded no start."""
    counts: dict[str, dict[str, int]] = {}
    for record in records:
        arm = str(record.get("arm"))
        tally = counts.setdefault(arm, {"loaded": 0, "not": 0, "unknown": 0})
        loaded = record.get("skill_loaded")
        tally["loaded" if loaded is True else "not" if loaded is False else "unknown"] += 1
    if not counts:
        return None
    parts = []
    for arm in sorted(counts, key=lambda a: (a != "control", a != "treatment", a)):
        tally = counts[arm]
        told = tally["loaded"] + tally["not"]
        part = f"{arm} {tally['loaded']} of {told} start(s)" if told else f"{arm} unknown"
        if tally["unknown"] and told:
            part += f", {tally['unknown']} unknown"
        elif tally["unknown"]:
            part += f" in {tally['unknown']} start(s) (the transcript cannot tell)"
        if arm == "control" and tally["loaded"]:
            part += f" (ISOLATION FAILURE: the control loaded it in {tally['loaded']})"
        if arm == "treatment" and tally["not"]:
            part += f" (TREATMENT DID NOT LOAD THE SKILL in {tally['not']})"
        parts.append(part)
    return "skill loaded: " + "; ".join(parts)


def _print_contaminated(records) -> None:
    """Name on stderr every start of the run that saw the answer key
    (``contaminated``): which probe, arm, rep and start, and where the text came from."""
    found = [record for record in records if isinstance(record.get("contaminated"), list) and record["contaminated"]]
    if not found:
        return
    print(f"skill-eval: {len(found)} contaminated start(s) saw the answer key (errors, never graded; seal the run, "
          "docs/format.md \"Sealed starts\"):", file=sys.stderr)
    for record in found:
        sources = sorted({str(leak.get("source")) for leak in record["contaminated"] if isinstance(leak, dict)})
        print(f"  CONTAMINATED: {record.get('probe')} v{record.get('version')} {record.get('arm')} rep "
              f"{record.get('rep')} (start {str(record.get('start_id'))[:12]}, agent {record.get('agent')}): "
              f"held text of {', '.join(sources)}", file=sys.stderr)


FAILURES_SHOWN = 3
"""Failed starts the summary describes (with their stderr) before saying how many more."""


def _print_failures(records) -> None:
    """The failed starts of a run on stderr, each with its error and the last
    lines of its stderr (:func:`~skill_eval.evals.progress.describe_start`):
    a crashing agent's own words, without opening the records."""
    from .progress import describe_start

    failed = [record for record in records if record.get("status") in ("error", "timeout")]
    for record in failed[:FAILURES_SHOWN]:
        print(f"  {describe_start(record)}", file=sys.stderr)
    if len(failed) > FAILURES_SHOWN:
        print(f"  ... and {len(failed) - FAILURES_SHOWN} more (`skill-eval report --html FILE` shows each)",
              file=sys.stderr)


def _warn_unchecked(probes) -> None:
    """Say on stderr which probes have no known transcript: their
    discriminator was never checked before live reps are spent."""
    if probes:
        names = ", ".join(f"{probe.probe_id} v{probe.version}" for probe in probes)
        print(f"skill-eval: warning: no known transcripts for {len(probes)} probe(s): {names}; their grading is "
              f"unchecked: add transcripts/*.md with an `expect:` header ({CHECK_MOTTO})", file=sys.stderr)


def _print_results(summary, workspace, withheld: int) -> int:
    """The run's results on stdout (progress went to stderr, and what to do
    about failed starts goes there too); the exit status."""
    from .runner import RunError, suite_budget

    tallies = summary.tally()
    unreadable = unreadable_by_arm(summary.records)
    for arm, tally in tallies.items():
        if tally["starts"]:
            print(f"{arm:<9}: {tally['starts']} start(s): {tally['ok']} ok ({tally['caught']} caught), "
                  f"{tally['error']} error, {tally['timeout']} timeout, {tally['interrupted']} interrupted"
                  + (f"; {unreadable[arm]} ok answer(s) unreadable" if unreadable.get(arm) else ""))
    skill_use = skill_use_line(summary.records)
    if skill_use:
        print(skill_use)
    if unreadable:
        print(_unreadable_warning(unreadable, tallies), file=sys.stderr)
    _print_contaminated(summary.records)
    if summary.records:
        print(f"records appended to {', '.join(_shown_path(p) for p in sorted(summary.files))}")
    try:
        print(f"budget: {suite_budget(workspace).describe()}")
    except RunError as error:
        print(f"skill-eval: {error}", file=sys.stderr)
    status = EXIT_FINDINGS if withheld else EXIT_OK
    if summary.interrupted:
        print(f"interrupted: {len(summary.records)} start(s) recorded, {summary.skipped} never started; "
              "run the same command again to resume", file=sys.stderr)
        status = EXIT_INTERRUPTED
    else:
        failed = sum(t["error"] + t["timeout"] for t in tallies.values())
        lost = sum(t["interrupted"] for t in tallies.values())
        if failed:
            print(f"{failed} start(s) failed; see their records' `error`, and re-run them with --retry-errors",
                  file=sys.stderr)
            _print_failures(summary.records)
        if lost:
            print(f"{lost} start(s) interrupted; run the same command again to resume them", file=sys.stderr)
        if failed or lost:
            status = EXIT_FINDINGS
    if summary.records:
        print("see them with `skill-eval report` (--html FILE for every answer and its grading)")
    sys.stdout.flush()
    return status


MAX_REPS = 10_000
"""The most ``--reps`` a run plans per arm: a plan holds every start, and a
typo (``--reps 100000000000``) built it for minutes before the budget
refused it."""


def _unreachable_reps(reps: int, config) -> str | None:
    """Why ``--reps`` can never be run, or ``None``: under 1, over
    :data:`MAX_REPS`, or over ``[calibration] max-starts`` (each rep of an arm
    is a start on record, so more reps than the cap allows can never fit)."""
    if reps < 1:
        return f"--reps must be at least 1, not {reps}"
    if reps > MAX_REPS:
        return f"--reps {reps:,} is over {MAX_REPS:,} per arm; a calibration needs a few (docs/calibrate.md)"
    cap = config.calibration_max_starts
    if cap is not None and reps > cap:
        where = config.source or "skill-eval.toml"
        return (f"--reps {reps:,} can never fit: each rep of an arm is a start, and [calibration] max-starts is "
                f"{cap:,} ({where}); lower --reps or raise max-starts")
    return None


class _StopOnSignals:
    """Ctrl-C and SIGTERM set ``cancel``: the runner then kills the running
    agents, records them as interrupted and returns; nothing is interrupted in
    the middle of writing a record.

    The handlers take no lock and need not run at all. A Python handler runs
    between two bytecodes of the main thread, which may hold the very lock
    ``Event.set`` takes (a second Ctrl-C while the first handler was inside
    ``Event.set`` hung the run for good), or be writing to stderr; and it
    runs only when the main thread wakes: a signal the kernel hands to
    another thread (an agent's reader) leaves a main thread blocked in
    :func:`~concurrent.futures.wait` without a timeout asleep, so a handler
    that did the work hung the run about one time in six. The pipe's write
    end is the process's wakeup fd (:func:`signal.set_wakeup_fd`): the C
    level of any signal with a Python handler writes its number there, in
    whichever thread received it, and a thread reads it, says once what
    happens and sets ``cancel``. Installed from the main thread only
    (elsewhere :mod:`signal` cannot install handlers: nothing is done)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel
        self._previous: dict = {}
        self._pipe: tuple[int, int] | None = None
        self._watcher: threading.Thread | None = None
        self._previous_wakeup = -1

    def install(self) -> "_StopOnSignals":
        if threading.current_thread() is not threading.main_thread():
            return self
        import os

        self._pipe = os.pipe()
        os.set_blocking(self._pipe[1], False)
        self._watcher = threading.Thread(target=self._watch, args=(self._pipe[0],), name="skill-eval-stop",
                                         daemon=True)
        self._watcher.start()
        self._previous_wakeup = signal.set_wakeup_fd(self._pipe[1], warn_on_full_buffer=False)
        self._previous = {signum: signal.signal(signum, self._on_signal) for signum in self.SIGNALS}
        return self

    @staticmethod
    def _on_signal(_signum, _frame) -> None:
        """Nothing: the signal's number is on the pipe already (the wakeup fd).
        A Python handler must be installed all the same: without one (the
        default), SIGINT raises :class:`KeyboardInterrupt` and SIGTERM ends
        the process before anything is recorded."""

    def _watch(self, readable: int) -> None:
        import os

        announced = False
        stopping = set(self.SIGNALS)
        while numbers := os.read(readable, 64):
            if stopping.isdisjoint(numbers):
                continue  # another signal with a Python handler (a terminal's resize, say)
            if not announced:
                announced = True
                try:
                    print("\nstopping: killing running agents and recording them as interrupted...", file=sys.stderr)
                except (OSError, ValueError):
                    pass  # stderr gone (its reader killed, as a CI job's with SIGTERM): the stop must still happen
            self.cancel.set()

    def remove(self) -> None:
        """The previous handlers back, and the watcher ended."""
        import os

        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        if self._pipe is not None:
            signal.set_wakeup_fd(self._previous_wakeup)
            os.close(self._pipe[1])  # the watcher reads the end of the pipe and returns
            self._watcher.join(timeout=5)
            os.close(self._pipe[0])
            self._pipe = None


# -- report -----------------------------------------------------------------------------


def report_main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="skill-eval report", description=(
        "Calibration zones and the evidence of separation per probe version, content, agent and model, from the run "
        "records: grouped text tables (or the report model as JSON) on stdout, and on request an offline HTML viewer "
        "and JUnit XML."))
    _common(parser)
    parser.add_argument("--agent", help="only records of this agent")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="stdout: text tables (default) or the report model as JSON (docs/report.md)")
    parser.add_argument("--html", type=Path, metavar="FILE",
                        help="also write one self-contained offline HTML page: zones, calibration plot, table, every "
                             "start's answer and grading")
    parser.add_argument("--junit", type=Path, metavar="FILE",
                        help="also write JUnit XML, a test case per probe version, agent and model: failing when the "
                             "zone is adverse, on an isolation failure or unsealed starts, erroring when reps have no "
                             "outcome or a start was contaminated (docs/report.md); the exit status is then 1 when a "
                             "test case failed or errored")
    args = parser.parse_intermixed_args(argv)
    from .probes import ProbeError
    from .report import render_json, render_text
    from .viewer_build import build_model

    detail = args.format == "json" or args.html is not None
    try:
        workspace = _open(args)
        if args.paths or args.probe:
            _select_with_suites(workspace, args)
        model = build_model(workspace, args.paths, args.probe, args.agent, lint=detail, answers=detail)
    except ProbeError as error:  # RunError too: a symbolic link in the way of the records
        return _fail(str(error))
    from .suites import render_suite_text, suite_records, suite_report

    from .triggers import render_trigger_text, trigger_report

    suite_runs = suite_records(workspace, args.agent)
    evals = suite_report(suite_runs)  # skill-creator suites (evals/suites.py, evals/triggers.py)
    triggers = trigger_report(suite_runs)
    if evals:
        model["suite_evals"] = evals
    if triggers:
        model["trigger_tests"] = triggers
    if args.format == "json":
        text = render_json(model)
    else:
        text = render_text(model)
        if (evals or triggers) and not model["groups"]:  # runs of skill-creator suites only
            text = text.replace("no runs on record (run `skill-eval run` first)", "no probe runs on record", 1)
        text += render_suite_text(evals) + render_trigger_text(triggers)
    sys.stdout.write(text)
    sys.stdout.flush()
    status = EXIT_OK
    if args.html is not None:
        from .viewer import write_html

        try:
            size = write_html(model, args.html)
        except OSError as error:
            return _fail(f"{args.html}: cannot write the HTML report ({error.strerror or error}); choose a writable path")
        print(f"HTML report written to {args.html} ({size / 1e6:.2f} MB, works offline)", file=sys.stderr)
    if args.junit is not None:
        from .junit import case_outcomes, write_junit

        try:
            write_junit(model, args.junit)
        except OSError as error:
            return _fail(f"{args.junit}: cannot write the JUnit report ({error.strerror or error}); choose a writable path")
        results = case_outcomes(model)
        failed = sum(1 for r in results if r is not None and r[0] == "failure")
        errored = sum(1 for r in results if r is not None and r[0] == "error")
        print(f"JUnit XML written to {args.junit}: {len(results)} test case(s), {failed} failed (adverse, isolation "
              f"failure or unsealed starts), {errored} errored (reps whose every start failed, contaminated starts, "
              "or answers with no field the output spec names)", file=sys.stderr)
        if failed or errored:
            status = EXIT_FINDINGS
    return status


# -- check ------------------------------------------------------------------------------


def check_main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="skill-eval check", description=f"Grade known transcripts: {CHECK_MOTTO}.")
    _common(parser)
    args = parser.parse_intermixed_args(argv)
    from skill_eval.linter.output import display_path

    from .probes import ProbeError
    from .transcripts import check_probe

    try:
        workspace = _open(args)
        probe_paths, suite_paths = _select_with_suites(workspace, args)
        probes, errors = workspace.load_all(probe_paths, need_skill=False, need_spec=False)
        if suite_paths:  # skill-creator evals: transcripts/<eval-id>/ beside the suite (docs/format.md)
            from .suites import load_suites

            suite_probes, suite_errors = load_suites(workspace, suite_paths)
            probes, errors = probes + suite_probes, errors + suite_errors
    except ProbeError as error:
        return _fail(str(error))
    for error in errors:
        print(f"skill-eval: {error}", file=sys.stderr)
    checked = mismatched = 0
    without = []
    for probe in probes:
        results = check_probe(probe, workspace.root)
        if not results:
            without.append(f"{probe.probe_id} v{probe.version}")
            continue
        for result in results:
            checked += 1
            if result.error:
                mismatched += 1
                print(f"ERROR {_relative_paths(result.error, result.path, probe.json_path)}")
                continue
            mismatched += int(not result.ok)
            print(f"{'ok   ' if result.ok else 'FAIL '} {display_path(result.path)}")
            for line in result.lines:
                print(f"        {line}")
    if without:
        print(f"no known transcripts for {len(without)} probe(s): {', '.join(without)} "
              "(add transcripts/*.md with an `expect:` header)")
    print(f"{checked} transcript(s) checked, {mismatched} mismatched")
    if mismatched or errors:
        print(f"the discriminator disagrees with known transcripts: fix caught_when or the labels; {CHECK_MOTTO}")
        return EXIT_FINDINGS
    if not checked:
        print(f"nothing checked: {CHECK_MOTTO}")
        return EXIT_FINDINGS
    return EXIT_OK


def _shown_path(path: Path) -> str:
    """``path`` as the linter prints paths: relative to the current folder when inside it."""
    from skill_eval.linter.output import display_path

    return display_path(path)


def _relative_paths(text: str, *paths: Path) -> str:
    """``text`` with each of ``paths`` (absolute, as messages name files)
    written as the linter writes paths: relative to the current folder when
    inside it."""
    from skill_eval.linter.output import display_path

    for path in sorted(paths, key=lambda p: -len(str(p))):
        text = text.replace(str(path), display_path(path))
    return text


# -- freeze -----------------------------------------------------------------------------


def freeze_main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="skill-eval freeze", description="Record the hashes of chosen probes in evals/frozen.json.")
    _common(parser)
    args = parser.parse_intermixed_args(argv)
    if not args.paths and not args.probe:
        return _fail("name the probes to freeze (folders, probe.json files or --probe ID); nothing is frozen implicitly")
    from .freeze import freeze
    from .probes import ProbeError

    try:
        workspace = _open(args)
        probes, errors = workspace.load_all(_select(workspace, args), need_skill=False, need_spec=False)
        if errors:
            return _fail("\n".join(errors + ["nothing was frozen; fix the probes above"]))
        results = freeze(probes)
    except ProbeError as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(f"cannot write frozen.json ({error.strerror or error}); check the folder's permissions")
    for result in results:
        if result.added:
            print(f"{_shown_path(result.path)}: froze {', '.join(result.added)}")
        if result.unchanged:
            print(f"{_shown_path(result.path)}: already frozen, unchanged: {', '.join(result.unchanged)}")
    return EXIT_OK


# -- calibrate --------------------------------------------------------------------------


def calibrate_main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="skill-eval calibrate",
                     description="The seed's live development calibration per probe version: the control sample "
                                 "first, the treatment only when the control did not catch the defect in every rep, "
                                 "each probe stopped under the predeclared [calibration] rule (docs/calibrate.md).")
    _common(parser)
    parser.add_argument("--agent", help="an [agents.NAME] of the config (default: the only one)")
    parser.add_argument("-j", "--jobs", type=int, default=4, help="agents running at once (default: 4)")
    parser.add_argument("--model", help="override the agent's model ({model})")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run each start unsealed: the agent can read what your user can (the workspace, evals/, "
                             "the runs); recorded as sandbox \"off\" and flagged in the report")
    parser.add_argument("--dry-run", action="store_true",
                        help="print each probe's next step, the expected starts and the worst case; run nothing")
    parser.add_argument("--retry-errors", action="store_true",
                        help="also re-run reps whose start failed (error/timeout) when the rule needs them graded")
    parser.add_argument("--skip-check", action="store_true", help="do not grade the probes' known transcripts first")
    parser.add_argument("--allow-lint-errors", action="store_true",
                        help="also calibrate probes whose lint has errors (by default they are listed and not run)")
    parser.add_argument("--max-output", type=int, metavar="BYTES",
                        help="bytes of stdout and of stderr kept per start (default: the agent's max-output, 10 MiB)")
    parser.add_argument("--freeze", action="store_true",
                        help="at the end, freeze the decided cases in evals/frozen.json (as `skill-eval freeze`)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress on stderr (by default: a bar on a terminal, else one line per finished "
                             "start)")
    args = parser.parse_intermixed_args(argv)
    if args.jobs < 1:
        return _fail("-j must be at least 1")
    if args.max_output is not None and args.max_output < 1:
        return _fail("--max-output must be at least 1 byte")
    from .calibrate import Calibration, describe_rule, hint_text
    from .probes import ProbeError
    from .runner import BudgetRefused, Cancel, RunError, select_agent, suite_budget
    from .transcripts import check_probe

    try:
        workspace = _open(args)
        agent = select_agent(workspace.config, args.agent, workspace.root)
        if args.no_sandbox:
            agent = agent._replace(sandbox="off")
        probes, errors = workspace.load_all(_select(workspace, args), need_skill=True)
        if errors:
            return _fail("\n".join(errors + ["no start was made; fix the probes above or name other probes"]))
        cancel = Cancel()
        calibration = Calibration(workspace, agent, model=args.model, jobs=args.jobs, retry_errors=args.retry_errors,
                                  cancel=cancel, max_output=args.max_output)
        preflight = calibration.preflight(probes, allow_lint_errors=args.allow_lint_errors)
        for withheld in preflight.withheld:
            print(f"skill-eval: not calibrated: {withheld.probe.probe_id} v{withheld.probe.version} "
                  f"({withheld.probe.json_path}) has lint errors:", file=sys.stderr)
            for finding in withheld.findings:
                print(f"    {finding}", file=sys.stderr)
        if preflight.withheld:
            print(f"skill-eval: {len(preflight.withheld)} probe(s) not calibrated because of lint errors; fix them "
                  "(`skill-eval lint`) or pass --allow-lint-errors", file=sys.stderr)
        probes = preflight.probes
        if not args.skip_check:
            checked = [(probe, check_probe(probe, workspace.root)) for probe in probes]
            _warn_unchecked([probe for probe, results in checked if not results])
            mismatched = [r for _probe, results in checked for r in results if not r.ok]
            if mismatched:
                for result in mismatched:
                    print(result.error or f"{result.path}: " + "; ".join(l for l in result.lines if "MISMATCH" in l),
                          file=sys.stderr)
                print(f"skill-eval: known transcripts disagree with the discriminator; {CHECK_MOTTO} "
                      "(see `skill-eval check`); no start was made", file=sys.stderr)
                return EXIT_FINDINGS
        plan = calibration.plan(probes)
    except (ProbeError, RunError) as error:
        return _fail(str(error))
    where = str(workspace.config.source) if workspace.config.source else "defaults, no config file"
    rule_line = (f"rule: {describe_rule(calibration.rule)} ([calibration] of {where}; "
                 f"calibration_rule_sha256 {calibration.rule_sha256[:12]})")

    def envelope(plan) -> str:
        now, later = len(plan.starts), len(plan.held)
        return (f"expected: {now} start(s) now (control samples, and treatment samples already needed)"
                + (f", and up to {later} more (treatment samples, if those controls miss a rep)" if later else "")
                + f"; worst case: {plan.worst_case} start(s)")

    if args.dry_run:
        print(f"agent {agent.name}, model {calibration.model or '(agent default)'}; {rule_line}")
        for observation in calibration.observations.values():
            print("  " + _step_text(observation))
        print(envelope(plan))
        print(f"budget: {plan.budget.describe()}")
        if not plan.fits:
            print(f"refused: the worst case needs {plan.worst_case} start(s) but only {plan.budget.remaining} remain")
            return EXIT_FINDINGS
        return EXIT_FINDINGS if preflight.withheld else EXIT_OK

    stop = _StopOnSignals(cancel).install()
    try:
        calibration.runner.on_wait = lambda: print("waiting for another skill-eval run to finish planning...",
                                                   file=sys.stderr)
        print(rule_line, file=sys.stderr)
        try:
            result = _calibrate_with_progress(calibration, plan, envelope, show=not args.no_progress)
        except BudgetRefused as error:
            print(f"skill-eval: {error}", file=sys.stderr)
            return EXIT_FINDINGS
        except RunError as error:
            return _fail(str(error))
    except (ProbeError, OSError) as error:
        return _fail(f"{error}")
    finally:
        stop.remove()
    _print_observations(result, hint_text, workspace.root)
    skill_use = skill_use_line(result.summary.records)
    if skill_use:
        print(skill_use)
    unreadable = unreadable_by_arm(result.summary.records)
    if unreadable:
        print(_unreadable_warning(unreadable, result.summary.tally()), file=sys.stderr)
    _print_contaminated(result.summary.records)
    if result.summary.files:
        print(f"records appended to {', '.join(_shown_path(p) for p in sorted(result.summary.files))}", file=sys.stderr)
    try:
        print(f"budget: {suite_budget(workspace).describe()}", file=sys.stderr)
    except RunError as error:
        print(f"skill-eval: {error}", file=sys.stderr)
    failed = [r for r in result.summary.records if r.get("status") in ("error", "timeout")]
    if failed:
        print(f"{len(failed)} start(s) failed; see their records' `error`, and re-run them with --retry-errors",
              file=sys.stderr)
        _print_failures(failed)
    if result.interrupted:
        print(f"interrupted: {len(result.summary.records)} start(s) recorded, {result.summary.skipped} never "
              "started; run the same command again to resume (nothing recorded is run again)", file=sys.stderr)
        return EXIT_INTERRUPTED
    undecided = [o for o in result.observations if not o.decided or o.zone == "undecided"]
    if args.freeze:
        code = _freeze_decided(result)
        if code != EXIT_OK:
            return code
    if undecided or preflight.withheld:
        return EXIT_FINDINGS
    return EXIT_OK


def _step_text(observation) -> str:
    """A probe's next step in the procedure, for --dry-run."""
    probe = observation.probe
    name = f"{probe.probe_id} v{probe.version}"
    if observation.refused:
        return f"{name}: not calibrated: {observation.reason}"
    if observation.decided:
        if observation.zone == "undecided":
            return f"{name}: {observation.reason}"
        return (f"{name}: decided on record: {observation.zone} (control {observation.control.text()}, "
                f"treatment {observation.treatment.text()}; {observation.row_starts} start(s))")
    if not observation.now:
        return f"{name}: waits: {observation.reason}"

    def reps(starts) -> str:
        by_arm: dict[str, list[str]] = {}
        for start in starts:
            note = " (resume)" if start.resume_of else " (retry)" if start.retry_of else ""
            by_arm.setdefault(start.arm, []).append(f"{start.rep}{note}")
        return "; ".join(f"{arm} rep {', '.join(items)}" for arm, items in by_arm.items())

    text = f"{name}: now {reps(observation.now)}"
    if observation.later:
        text += f"; then {reps(observation.later)} if the control misses a rep"
    return text


def _calibrate_with_progress(calibration, plan, envelope, show: bool):
    """Run the procedure with its progress on stderr (:class:`~skill_eval.evals.progress.Display`):
    on a terminal one bar whose total is the worst case (it ends early when the
    controls catch their defects), anywhere else one line per finished start;
    the stages are lines of their own either way."""
    from .progress import Display

    runner = calibration.runner
    state = {"done": 0, "caught": 0, "failed": 0}

    def describe() -> str:
        return f"{state['caught']} caught, {state['failed']} failed" if state["done"] else "planning"

    with Display("calibrate", plan.worst_case, show=show, describe=describe) as display:

        def on_stage(number: int, starts) -> None:
            arms: dict[str, int] = {}
            for start in starts:
                arms[start.arm] = arms.get(start.arm, 0) + 1
            if number == 1:
                display.note(envelope(plan))
            display.note(f"stage {number}: {len(starts)} start(s) ("
                         + ", ".join(f"{arm} {count}" for arm, count in arms.items()) + ")")

        def on_record(record) -> None:
            state["done"] += 1
            if record["status"] == "ok":
                state["caught"] += int(bool(record.get("passed")))
            else:
                state["failed"] += 1
            display.record(record)

        runner.on_record = on_record
        result = calibration.run(plan, on_stage=on_stage)
        display.finish(state["done"])
    return result


def _print_observations(result, hint_text, root: Path) -> None:
    header = ("probe", "v", "control", "treatment", "zone", "starts", "decided")
    table = [header]
    hints = []
    for observation in result.observations:
        probe = observation.probe
        if observation.refused:
            zone, decided = "-", "not calibrated: " + observation.reason
        elif observation.zone == "undecided" or not observation.decided:
            zone, decided = "undecided", observation.reason or "the procedure did not finish"
        else:
            zone = observation.zone
            decided = ("after the control: keep it as a regression/cost control" if zone == "ceiling"
                       else "after the treatment")
            if zone == "floor":
                hints.append(f"{probe.probe_id} v{probe.version}: floor: "
                             + hint_text(_hint(observation, result, root)))
            elif zone == "unreadable":
                hints.append(f"{probe.probe_id} v{probe.version}: unreadable: most answers had no field "
                             "output-spec.md names, so each was graded a miss; this is no floor: make the agent "
                             "answer in the output spec's fields, under a new [agents.NAME] (a new sample)")
        treatment = observation.treatment.text() if observation.treatment.started else "-"
        table.append((probe.probe_id, str(probe.version), observation.control.text(), treatment, zone,
                      str(observation.row_starts), decided))
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
    for hint in hints:
        print(hint)


def _hint(observation, result, root: Path) -> dict:
    from .calibrate import discriminator_hint

    for record in result.decisions:
        if record.get("probe") == observation.probe.probe_id and record.get("version") == observation.probe.version:
            return record.get("discriminator") or {}
    return discriminator_hint(observation.probe, root)


def _freeze_decided(result) -> int:
    from .freeze import freeze
    from .probes import ProbeError

    decided = [o.probe for o in result.observations if o.decided and o.zone != "undecided" and not o.refused]
    left = [o.probe for o in result.observations if o.probe not in decided]
    if left:
        print(f"not frozen (not decided): {', '.join(f'{p.probe_id} v{p.version}' for p in left)}", file=sys.stderr)
    if not decided:
        return EXIT_OK
    try:
        results = freeze(decided)
    except ProbeError as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(f"cannot write frozen.json ({error.strerror or error}); check the folder's permissions")
    for frozen in results:
        if frozen.added:
            print(f"{_shown_path(frozen.path)}: froze {', '.join(frozen.added)}")
        if frozen.unchanged:
            print(f"{_shown_path(frozen.path)}: already frozen, unchanged: {', '.join(frozen.unchanged)}")
    return EXIT_OK


# -- init -------------------------------------------------------------------------------


def init_main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="skill-eval init", description=(
        "Scaffold a skill in DIR: SKILL.md (front matter, a step heading), output-spec.md and one probe "
        "(evals/probes/unbacked-claim: probe.json, question.md and two known transcripts), all of which lint "
        "and check clean, and skill-eval.toml with an agent section per harness preset and a command agent, "
        "commented out (none when DIR lies in a workspace that has a config). "
        "DIR's name is the skill's name. Existing files are never overwritten."))
    parser.add_argument("dir", nargs="?", type=Path, default=Path("."), metavar="DIR",
                        help="the skill's folder, made if missing (default: the current folder)")
    args = parser.parse_args(argv)
    from .scaffold import InitError, enclosing_config, init_skill

    try:
        config = enclosing_config(args.dir)
        written = init_skill(args.dir)
    except InitError as error:
        return _fail(str(error))
    except OSError as error:
        return _fail(f"{error.filename or args.dir}: cannot write ({error.strerror or error}); choose a writable folder")
    for path in written:
        print(f"created {path}")
    where = config if config is not None else args.dir / "skill-eval.toml"
    print(f"next: edit them, then `skill-eval lint {args.dir}` and `skill-eval check {args.dir}`; to run them, "
          f"uncomment an agent in {where} (or add one there) and try `skill-eval run {args.dir} --dry-run`")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:  # pragma: no cover - convenience
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"run": run_main, "report": report_main, "check": check_main, "freeze": freeze_main,
                "calibrate": calibrate_main, "init": init_main}
    if not argv or argv[0] not in commands:
        print("usage: python -m skill_eval.evals.cli {run|report|check|freeze|calibrate|init} ...", file=sys.stderr)
        return EXIT_ERROR
    return commands[argv[0]](argv[1:])
