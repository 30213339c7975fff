"""Benchmark: the eval runner's overhead per start, beyond spawning the agent.

Runs N starts (default 1,000: 25 probes x 2 arms x 20 reps) of a no-op agent
(``cat``: it reads the prompt on stdin and prints it back) with ``-j 8``
through the real runner — preflight (executable, lint of the probes), planning
and reservation under the run lock, a fresh scratch folder per start, the
start record fsync'd before each spawn (group commit), the subprocess in its
own process group with capped output and the watchdog, grading, answer file,
fsync'd outcome record — and compares with spawning the same ``cat`` N times
with the same parallelism and the same pipes (``Popen`` + ``communicate``),
nothing else.

    overhead per run = (runner wall time - spawn-only wall time) / N

Goal: <= 1 ms per run (unsealed starts; ``--sandbox on`` runs them sealed,
as a run does by default). Then times one start at a time of the same
``cat``, plain and sealed in bubblewrap as the runner seals a start: the
sandbox's latency per start; goal: under 50 ms. Then grades pathological answers of 1 MiB (the ones
tests/evals/test_grading_bounds.py guards against hanging) and prints the
slowest; goal: under 1 s each. Usage::

    python benchmarks/run_bench.py [--runs 1000] [--jobs 8] [--no-fsync] [--repeat 3] [--sandbox off|on] [--seal-runs 200]

Time a regular install (``pip install .`` into a separate venv). Prints the
figures (the median of ``--repeat`` runner runs) and exits 1 when a goal is
missed.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

GOAL_MS = 1.0
SEAL_GOAL_MS = 50.0
"""What sealing a start (evals/sandbox.py) may add to its latency."""
GRADE_GOAL_S = 1.0

SKILL = """---
name: bench-skill
description: Use when benchmarking the runner.
---

# Bench skill

## Step 1: Check the evidence

Evidence that argues from prior behavior is not proof: the `verdict` is `NOT_PROVEN`.
"""

SPEC = """# Output spec

## `verdict`
Values: `PASS`, `NOT_PROVEN`
"""

ARTIFACT = """# Closeout {n}

| # | criterion | evidence |
|---|---|---|
| 1 | retries stop after 5 attempts | test_retry_cap passes |
| 2 | metrics emitted | behavior unchanged from prior release, so existing coverage applies |

Please post the closeout verdict.
"""


def make_workspace(root: Path, probes: int, command: list[str], sandbox: str = "off") -> None:
    (root / "skill-eval.toml").write_text(
        "[agents.noop]\n" f"command = {json.dumps(command)}\n" "timeout = 60\n" f"sandbox = {json.dumps(sandbox)}\n",
        encoding="utf-8")
    skill = root / "bench-skill"
    (skill / "evals" / "probes").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (skill / "output-spec.md").write_text(SPEC, encoding="utf-8")
    for n in range(probes):
        folder = skill / "evals" / "probes" / f"p{n:03d}"
        folder.mkdir()
        (folder / "question.md").write_text(ARTIFACT.format(n=n), encoding="utf-8")
        (folder / "probe.json").write_text(json.dumps({
            "id": f"p{n:03d}", "version": 1, "tier": 2, "kind": "floor", "step_heading": "Step 1: Check the evidence",
            "shapes": ["euphemized"], "seeded_defects": 1,
            "defects": [{"id": "D1", "shape": "euphemized",
                         "quote": "behavior unchanged from prior release, so existing coverage applies",
                         "caught_when": {"verdict": "NOT_PROVEN"}}],
        }, indent=2), encoding="utf-8")


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def spawn_only(command: list[str], prompt: bytes, runs: int, jobs: int) -> float:
    def one(_index: int) -> None:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True)
        process.communicate(prompt, timeout=60)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(one, range(runs)))
    return time.perf_counter() - started


def runner_run(root: Path, runs_per_arm: int, jobs: int, fsync: bool) -> tuple[float, float, int]:
    from skill_eval.evals.probes import Workspace
    from skill_eval.evals.runner import Runner, select_agent

    started = time.perf_counter()
    workspace = Workspace.open([root])
    agent = select_agent(workspace.config, "noop")
    probes, errors = workspace.load_all(workspace.probe_paths())
    assert not errors, errors
    runner = Runner(workspace, agent, jobs=jobs, fsync=fsync)
    if hasattr(runner, "preflight"):
        preflight = runner.preflight(probes, ("control", "treatment"))
        assert not preflight.withheld, [w.findings for w in preflight.withheld]
    plan = runner.plan(probes, ("control", "treatment"), runs_per_arm)
    planned = time.perf_counter()
    summary = runner.run(plan)
    ended = time.perf_counter()
    assert len(summary.records) == len(plan.starts), "every start must be recorded"
    assert all(r["status"] == "ok" for r in summary.records), [r for r in summary.records if r["status"] != "ok"][:1]
    return ended - started, planned - started, len(summary.records)


def sealed_spawn(command: list[str], prompt: bytes, runs: int) -> tuple[float, float]:
    """Seconds per start, one at a time, of ``command`` run plain and run
    sealed exactly as a start is (:func:`~skill_eval.evals.sandbox.bwrap_argv`
    over a fresh scratch folder): the latency a start pays for its sandbox."""
    from skill_eval.evals.sandbox import bwrap_argv, require_sandbox, seal_view

    bwrap = require_sandbox()
    with tempfile.TemporaryDirectory(prefix="skill-eval-bench-seal-") as folder:
        (Path(folder) / "work").mkdir()
        env = {b"PATH": b"/usr/bin:/bin"}
        view = seal_view(folder, f"{folder}/work", command, env, hidden=())
        sealed = bwrap_argv(bwrap, view, command)
        timings = {}
        for name, argv in (("plain", command), ("sealed", sealed)):
            started = time.perf_counter()
            for _ in range(runs):
                process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           start_new_session=True, env={"PATH": "/usr/bin:/bin"})
                out, _err = process.communicate(prompt, timeout=60)
                assert process.returncode == 0 and out == prompt, (name, process.returncode)
            timings[name] = (time.perf_counter() - started) / runs
    return timings["plain"], timings["sealed"]


def pathological_answers() -> list[tuple[str, str]]:
    mib = 1 << 20
    return [
        ("field line, spaces then a letter", "verdict: a" + " " * mib + "b"),
        ("an opening brace, 1 Mi times", "{" * mib),
        ('{"verdict":  nested', '{"verdict": ' * (mib // 12)),
        ('{"a": nested', '{"a":' * (mib // 5)),
        ('{"x":" unterminated, repeated', '{"x":"' * (mib // 6)),
        ("list item, spaces then a letter", "criteria:\n- " + " " * mib + "3"),
        ("matches on a 1 MiB value", "verdict: " + "criterion 3 " * (mib // 12)),
    ]


def grading_times() -> list[tuple[str, float]]:
    from skill_eval.evals.grading import grade_answer
    from skill_eval.linter.outputspec import parse_output_spec

    spec = parse_output_spec("## `verdict`\nValues: `PASS`, `NOT_PROVEN`\n\n## `criteria`\n")
    defects = [{"id": "D1", "caught_when": {"verdict": {"matches": "(a+)+$"}, "criteria": {"contains": "3"}}},
               {"id": "D2", "caught_when": {"verdict": {"matches": "criterion.*3.*x"}}}]
    times = []
    for name, answer in pathological_answers():
        started = time.perf_counter()
        grade_answer(answer, defects, spec)
        times.append((name, time.perf_counter() - started))
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--probes", type=int, default=25)
    parser.add_argument("--repeat", type=int, default=3, help="runner runs (each against its own spawn-only run); the median is reported")
    parser.add_argument("--no-fsync", action="store_true", help="skip fsync of records (not how the runner runs)")
    parser.add_argument("--no-grading", action="store_true", help="skip the pathological grading figures")
    parser.add_argument("--sandbox", choices=("off", "on"), default="off",
                        help="the runner's starts unsealed (the 1 ms goal's figure, the default) or sealed")
    parser.add_argument("--seal-runs", type=int, default=200,
                        help="starts of the sealed-spawn latency figure, one at a time (0: skip it)")
    args = parser.parse_args(argv)
    cat = shutil.which("cat")
    if cat is None:
        print("run_bench: no `cat` on PATH; install coreutils", file=sys.stderr)
        return 2
    command = [cat]
    reps = max(1, args.runs // (2 * args.probes))
    runs = reps * 2 * args.probes
    overheads = []
    from skill_eval.evals.prompt import build_prompt
    from skill_eval.linter.outputspec import parse_output_spec

    prompt = build_prompt(ARTIFACT.format(n=0).encode(), parse_output_spec(SPEC))
    spawn_only(command, prompt, min(50, runs), args.jobs)  # warm-up
    print(f"runs: {runs} ({args.probes} probes x 2 arms x {reps} reps), -j {args.jobs}, agent: {cat} (no-op), "
          f"sandbox {args.sandbox}")
    for attempt in range(max(1, args.repeat)):
        with tempfile.TemporaryDirectory(prefix="skill-eval-bench-") as folder:
            root = Path(folder)
            make_workspace(root, args.probes, command, args.sandbox)
            cpu0 = cpu()
            baseline = spawn_only(command, prompt, runs, args.jobs)
            cpu1 = cpu()
            wall, planning, recorded = runner_run(root, reps, args.jobs, fsync=not args.no_fsync)
            cpu2 = cpu()
        overhead_ms = (wall - baseline) / runs * 1000
        overheads.append(overhead_ms)
        print(f"[{attempt + 1}] spawn only : {baseline:7.3f} s wall  {baseline / runs * 1000:6.2f} ms/run   "
              f"parent CPU {(cpu1 - cpu0) / runs * 1000:6.2f} ms/run")
        print(f"[{attempt + 1}] runner     : {wall:7.3f} s wall  {wall / runs * 1000:6.2f} ms/run   "
              f"parent CPU {(cpu2 - cpu1) / runs * 1000:6.2f} ms/run   (of which preflight and planning "
              f"{planning * 1000:.0f} ms; records fsync'ed: {not args.no_fsync}; {recorded} recorded)")
        print(f"[{attempt + 1}] overhead   : {overhead_ms:6.2f} ms/run beyond process spawn")
    median = sorted(overheads)[len(overheads) // 2]
    print(f"overhead (median of {len(overheads)}): {median:.2f} ms/run beyond process spawn (goal <= {GOAL_MS:g} ms)")
    ok = median <= GOAL_MS or args.sandbox == "on"
    if args.seal_runs > 0:
        plain, sealed = sealed_spawn(command, prompt, args.seal_runs)
        cost_ms = (sealed - plain) * 1000
        print(f"sandbox: one start at a time, {args.seal_runs} each: plain {plain * 1000:.2f} ms, sealed "
              f"{sealed * 1000:.2f} ms: {cost_ms:.2f} ms per start for the sandbox (goal < {SEAL_GOAL_MS:g} ms)")
        ok = ok and cost_ms < SEAL_GOAL_MS
    if not args.no_grading:
        times = grading_times()
        for name, seconds in times:
            print(f"grading 1 MiB answer: {name:<34} {seconds * 1000:8.1f} ms")
        slowest = max(seconds for _name, seconds in times)
        print(f"grading: slowest pathological 1 MiB answer {slowest:.3f} s (goal < {GRADE_GOAL_S:g} s)")
        ok = ok and slowest < GRADE_GOAL_S
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
