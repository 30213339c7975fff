#!/usr/bin/env python3
"""Peak memory of linting many distinct artifacts through the Python API.

usage: python benchmarks/api_memory.py [--probes 10000] [--mode calls|session|both] [--artifact-kb K] [--work DIR]

A tree of ``--probes`` probes (each with its own artifact) comes from
``benchmarks/make_bench_corpus.py``. ``calls``: each probe is copied into a
workspace of its own (its SKILL.md, output-spec.md, probe.json and artifact),
and one process lints them one after the other with one ``lint_paths`` call
each (an API user, a test harness, a pre-commit hook kept alive);
``session``: one long-lived ``LintSession`` over the tree lints every probe
in turn with ``lint_targets`` (what the language server does). After every tenth of
the probes the process's resident set (``VmRSS``) and its peak (``VmHWM``)
are printed, in MB, so growth per 1,000 artifacts shows.

``--artifact-kb K`` pads every artifact with distinct prose to ~K KB (the
corpus's are ~1.5 KB): caches bounded by a number of entries rather than by
what they hold grow with the artifacts' size.

Goal: 10,000 distinct artifacts under 150 MB peak in either mode.
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def corpus_script() -> Path:
    """The benchmark corpus generator shipped beside this script
    (``benchmarks/make_bench_corpus.py``)."""
    return Path(__file__).resolve().with_name("make_bench_corpus.py")


def memory_mb() -> tuple[float, float]:
    """(resident, peak resident) of this process, in MB."""
    values = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(("VmRSS:", "VmHWM:")):
                name, amount, _unit = line.split()
                values[name] = int(amount) / 1024
    return values["VmRSS:"], values["VmHWM:"]


FILLER = ("the export job retried each batch after the gateway reported a timeout while the ledger "
          "service kept its own count of pending invoices and the dashboard showed the queue depth").split()


def padded(tree: Path, kilobytes: int) -> Path:
    """A copy of ``tree`` (made once) whose artifacts each end with ~``kilobytes``
    KB of prose of their own (random sentences, seeded by the probe)."""
    import random
    import shutil

    out = tree.with_name(f"{tree.name}-{kilobytes}kb")
    if (out / ".done").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(tree, out)
    for number, artifact in enumerate(sorted(out.rglob("question.md"))):
        rng = random.Random(number)
        words = [f"{rng.choice(FILLER)}{rng.randrange(10_000)}" for _ in range(kilobytes * 1024 // 12)]
        lines = [" ".join(words[i:i + 12]) + "." for i in range(0, len(words), 12)]
        with open(artifact, "a", encoding="utf-8") as handle:
            handle.write("\n" + "\n\n".join(lines) + "\n")
    (out / ".done").write_text("", encoding="utf-8")
    return out


def separate_workspaces(tree: Path, probes: list[Path], out: Path) -> list[Path]:
    """One workspace per probe of ``tree`` under ``out`` (made once): the
    probe's skill files and its own folder. Returns the workspace roots."""
    import shutil

    roots = [out / f"ws{number:05d}" for number in range(len(probes))]
    if (out / "done").exists():
        return roots
    for root, probe in zip(roots, probes):
        skill = probe.parents[3]
        (root / "skill" / "evals" / "probes").mkdir(parents=True, exist_ok=True)
        (root / "skill-eval.toml").write_text("", encoding="utf-8")
        for name in ("SKILL.md", "output-spec.md"):
            shutil.copyfile(skill / name, root / "skill" / name)
        shutil.copytree(probe.parent, root / "skill" / "evals" / "probes" / probe.parent.name, dirs_exist_ok=True)
    (out / "done").write_text("", encoding="utf-8")
    return roots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=10_000)
    parser.add_argument("--mode", choices=("calls", "session", "both"), default="both")
    parser.add_argument("--artifact-kb", type=int, default=0, help="pad each artifact to about this many KB")
    parser.add_argument("--work", type=Path, help="where to build the tree (default: a temp folder)")
    args = parser.parse_args()
    if args.mode == "both":
        for mode in ("calls", "session"):
            subprocess.run([sys.executable, __file__, "--probes", str(args.probes), "--mode", mode,
                            "--artifact-kb", str(args.artifact_kb)]
                           + (["--work", str(args.work)] if args.work else []), check=True)
        return 0
    work = args.work or Path(tempfile.gettempdir()) / "skill-eval-api-memory"
    tree = work / f"bench-{args.probes}"
    if not tree.exists():
        skills = max(1, min(10, args.probes // 10))
        subprocess.run([sys.executable, str(corpus_script()), str(tree), "--probes", str(args.probes),
                        "--skills", str(skills)], check=True, stdout=subprocess.DEVNULL)
    if args.artifact_kb:
        tree = padded(tree, args.artifact_kb)

    from skill_eval.linter.config import load_config
    from skill_eval.linter.context import LintSession
    from skill_eval.linter.engine import lint_paths, lint_targets
    from skill_eval.linter.reader import FileSystemReader
    from skill_eval.linter.rules.base import Scope
    from skill_eval.linter.workspace import Targets, discover, find_workspace_root

    probes = sorted(discover(tree, FileSystemReader()).probes)
    if args.mode == "calls":
        probes = separate_workspaces(tree, probes, work / f"workspaces-{tree.name}")
    step = max(1, len(probes) // 10)
    print(f"mode {args.mode}: {len(probes)} probes of {tree}")
    print(f"{'probes':>7}  {'RSS MB':>7}  {'peak MB':>7}  {'s':>6}")
    session = None
    LOCAL = frozenset({Scope.PROBE})  # the server's per-edit pass; the workspace-wide one runs once, at the end
    if args.mode == "session":
        root = find_workspace_root(tree)
        session = LintSession(root, load_config(root), FileSystemReader())
    start = time.perf_counter()
    findings = 0
    for number, path in enumerate(probes, 1):
        if session is None:
            findings += len(lint_paths([path], jobs=1).diagnostics)
        else:
            findings += len(lint_targets(session, Targets(probes={path}), scopes=LOCAL)[0])
        if number % step == 0 or number == len(probes):
            gc.collect()
            rss, peak = memory_mb()
            print(f"{number:>7}  {rss:>7.1f}  {peak:>7.1f}  {time.perf_counter() - start:>6.1f}", flush=True)
    if session is not None:
        findings += len(lint_targets(session, Targets(probes=set(probes)), scopes=frozenset({Scope.WORKSPACE}))[0])
        rss, peak = memory_mb()
        print(f"workspace-wide pass: RSS {rss:.1f} MB  peak {peak:.1f} MB  {time.perf_counter() - start:.1f} s")
    print(f"{findings} findings; peak {memory_mb()[1]:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
