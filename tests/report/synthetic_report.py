"""A deterministic generator of report models, for the viewer's tests.

``synthetic_model(500)`` is a report of 500 probe versions for one agent and
model (plus a fifth as many for a second agent and model), shaped like real
runs: mostly 2 reps per arm and sometimes 1 to 8, so that catch rates take few
discrete values k/n and many probes share a point; failed starts (errors,
timeouts, interrupted) with stderr tails, some retried; answers of realistic
length, a few longer than the cap, and some holding HTML and URLs that a page
must show as text and never load; per-defect grading with reasons; lint
findings; frozen probes, and probes edited without a version bump; a
``skill-eval calibrate`` decision on every eighth group (an undecided one
among them).

The zone and the evidence come from the project's own functions
(:func:`skill_eval.linter.run_records.zone_of`, :func:`~skill_eval.evals.viewer_model.evidence_of`),
so the model is what :func:`~skill_eval.evals.viewer_build.build_model` would
make of such records.
"""

from __future__ import annotations

from math import comb

import hashlib
import random
from typing import Any

from skill_eval.evals.viewer_build import probe_content
from skill_eval.evals.viewer_model import ANSWER_CAP, ALPHA, SCHEMA_ID, evidence_of
from skill_eval.evals.stats import wilson
from skill_eval.linter.run_records import ArmSample, calibration_rule_sha256, zone_of

SERIES = (("claude-code", "claude-sonnet-4-5"), ("codex", "gpt-5-codex"))
SKILLS = ("verify-closeout", "review-migrations", "triage-incidents", "audit-licences", "check-dosage-tables",
          "release-notes")
WORDS = ("euphemized", "coverage", "buried", "green", "skipped", "flaky", "rollback", "drift", "orphan", "stale",
         "quota", "overflow", "silent", "retry", "window", "unit", "dose", "lease", "ledger", "shadow")
HOSTILE = '</script><script>window.__pwned = 1</script><img src="https://example.invalid/x.png" onerror="window.__pwned=2">'
REPS_WEIGHTS = ((2, 60), (3, 12), (1, 5), (4, 10), (5, 6), (8, 7))
# (control rate, treatment rate) the scenario of a probe is drawn around
SCENARIOS = (((0.0, 0.9), 40), ((0.0, 0.05), 20), ((0.95, 0.95), 15), ((0.6, 0.2), 8), ((0.4, 0.7), 12), ((0.5, 0.5), 5))


def _sha(*parts: Any) -> str:
    return hashlib.sha256("\x00".join(map(str, parts)).encode()).hexdigest()


def _pick(rng: random.Random, weighted):
    values, weights = zip(*weighted)
    return rng.choices(values, weights)[0]


QUOTES = ("behavior unchanged from prior release, so existing coverage applies",
          "skipped on CI because the runner was flaky", "green on the last rerun", "the dashboard shows no drift",
          "rollback tested in a previous quarter")


def _artifact(rng: random.Random, probe_id: str, quotes: list[str]) -> str:
    """A closeout whose evidence column holds each defect's quote, among plain evidence."""
    rows = [f"| {n} | {' '.join(rng.choice(WORDS) for _ in range(4))} | test_{rng.choice(WORDS)} passes |"
            for n in range(1, 5)]
    for number, quote in enumerate(quotes):
        rows.insert(1 + 2 * number, f"| {5 + number} | {' '.join(rng.choice(WORDS) for _ in range(3))} | {quote} |")
    return "\n".join([f"# Closeout: {probe_id.replace('-', ' ')}", "", "| # | criterion | evidence |", "|---|---|---|",
                      *rows, "", "Please post the closeout verdict."])


def _answer(rng: random.Random, caught: bool, index: int, readable: bool = True) -> str:
    verdict = "NOT_PROVEN" if caught else "PASS"
    lines = ["Here is my closeout review.", ""]
    if readable:
        lines += [f"verdict: {verdict}", f"criteria: {'2, 4' if caught else ''}"]
    else:  # no field of the output spec: graded as read from nothing
        lines += ["I would rather not give a verdict in the requested format."]
    lines += [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))) for _ in range(rng.randint(3, 14))]
    if index % 37 == 0:
        lines.append(HOSTILE)
    if index % 53 == 0:
        lines += ["x" * 120] * 50  # longer than the cap
    return "\n".join(lines)


def _arm(starts: list[dict]) -> dict:
    by_rep: dict[int, dict] = {}
    for start in starts:
        if start["status"] == "ok":
            by_rep[start["rep"]] = start
    reps = len(by_rep)
    caught = sum(1 for s in by_rep.values() if s["passed"])
    unresolved = len({s["rep"] for s in starts} - set(by_rep))
    return {
        "starts": len(starts), "reps": reps, "caught": caught, "rate": caught / reps if reps else None,
        "wilson95": list(wilson(caught, reps)) if reps else None,
        "errors": sum(s["status"] == "error" for s in starts), "timeouts": sum(s["status"] == "timeout" for s in starts),
        "interrupted": sum(s["status"] == "interrupted" for s in starts), "running": 0, "unresolved": unresolved,
        "mean": caught / reps if reps else None,
        "pass_at_k": {str(k): 1 - comb(reps - caught, k) / comb(reps, k) for k in range(1, min(reps, 5) + 1)},
        "skill_loaded": sum(s["skill_loaded"] is True for s in starts),
        "skill_not_loaded": sum(s["skill_loaded"] is False for s in starts),
        "contaminated": sum(bool(s["contaminated"]) for s in starts),
    }


def _unseal(starts: list[dict]) -> int:
    """Mark ``starts`` as run unsealed (``sandbox: "off"``) and count them."""
    for start in starts:
        start["sandbox"] = "off"
    return len(starts)


def _starts(rng: random.Random, arm: str, reps: int, rate: float, defects: list[str], index: int,
            unreadable: float = 0.0) -> list[dict]:
    starts = []
    for rep in range(1, reps + 1):
        tries = 1 + (rng.random() < 0.08) + (rng.random() < 0.02)
        for attempt in range(tries):
            last = attempt == tries - 1
            failed = (not last) or rng.random() < 0.03
            status = _pick(rng, (("error", 5), ("timeout", 3), ("interrupted", 2))) if failed else "ok"
            readable = not unreadable or rng.random() >= unreadable
            caught = status == "ok" and readable and rng.random() < rate
            start_id = _sha("start", index, arm, rep, attempt)[:32]
            duration = round(rng.uniform(4, 90), 2)
            start: dict[str, Any] = {
                "start_id": start_id, "arm": arm, "rep": rep, "status": status,
                "started": f"2025-06-{1 + index % 28:02d}T{rep % 24:02d}:{attempt * 7 % 60:02d}:00.000Z",
                "ended": f"2025-06-{1 + index % 28:02d}T{rep % 24:02d}:{(attempt * 7 + 1) % 60:02d}:30.000Z",
                "duration_s": duration, "tokens_in": rng.randint(2000, 40000), "tokens_out": rng.randint(80, 3000),
                "cost_usd": round(rng.uniform(0.001, 0.4), 4), "turns": rng.randint(1, 12),
                "exit_code": 0 if status == "ok" else (None if status != "error" else 1),
                "retry_of": starts[-1]["start_id"] if attempt else None, "resume_of": None,
                "passed": caught if status == "ok" else None,
                "caught": list(defects) if caught else [], "answer": None, "grading": [], "grading_note": None,
                "error": None, "stderr_tail": None,
                "skill_loaded": (arm == "treatment") if status == "ok" else None,
                "skill_evidence": ('Skill tool call {"skill": "closeout-review"}' if arm == "treatment"
                                   else "no tool call: the skill was never loaded") if status == "ok" else None,
                "skill_flag": None, "contaminated": [], "sandbox": "bwrap",
            }
            if status == "ok":
                text = _answer(rng, caught, index * 10 + rep, readable)
                start["answer"] = {"text": text[:ANSWER_CAP], "chars": len(text), "truncated": len(text) > ANSWER_CAP,
                                   "output_truncated": False, "source": "lines" if readable else "none",
                                   "file": f"skill/evals/runs/answers/p{index}/{arm}-r{rep}-{start_id[:12]}.txt"}
                for defect in defects:
                    held = caught
                    if not readable:
                        start["grading"].append({"defect": defect, "caught": False, "judge": None, "expectations": [
                            {"field": name, "expected": expected, "held": False, "reason": "missing from the answer"}
                            for name, expected in (("verdict", "NOT_PROVEN"), ("criteria", {"contains": "2"}))]})
                        continue
                    start["grading"].append({"defect": defect, "caught": caught, "judge": None, "expectations": [
                        {"field": "verdict", "expected": "NOT_PROVEN", "held": held,
                         "reason": f"{'NOT_PROVEN' if caught else 'PASS'!r} {'equals' if held else 'does not equal'} 'NOT_PROVEN'"},
                        {"field": "criteria", "expected": {"contains": "2"}, "held": held,
                         "reason": f"{'2, 4' if caught else ''!r} {'contains' if held else 'does not contain'} '2'"},
                    ]})
            else:
                start["error"] = {"error": "the agent exited with status 1", "timeout": "no answer within 120 s; killed",
                                  "interrupted": "interrupted: the run was cancelled while the agent ran"}[status]
                start["stderr_tail"] = "Traceback (most recent call last):\n  File \"agent.py\", line 3\nRuntimeError: rate limited" \
                    if status == "error" else ""
            starts.append(start)
    return starts


def _unreadable(starts: list[dict]) -> dict:
    """Graded reps (the latest ok start of each) read as ``none``, as ``build_model`` counts them."""
    graded = {(s["arm"], s["rep"]): s for s in starts if s["status"] == "ok"}
    unreadable = sum(s["answer"]["source"] == "none" for s in graded.values())
    return {"graded": len(graded), "unreadable": unreadable, "most": 2 * unreadable > len(graded)}


RULE = {"reps": 2, "caught-in-every-rep": "all-reps", "max-starts-per-probe": None}
CAPPED_RULE = {"reps": 2, "caught-in-every-rep": "graded-reps", "max-starts-per-probe": 6}


def _calibration(number: int, zone: str, starts: int, skill: str, probe_id: str, defects: list[str]) -> dict | None:
    """Every eighth group's calibration decision, as ``build_model`` shows one."""
    if number % 8:
        return None
    capped = number % 64 == 0
    zone = "undecided" if capped or zone == "pending" else zone
    rule = CAPPED_RULE if capped else RULE
    return {
        "zone": zone, "decided_after": None if zone == "undecided" else "control" if zone == "ceiling" else "treatment",
        "starts": starts, "version_starts": starts + (number % 3 == 0), "decided": f"2025-06-{1 + number % 28:02d}T23:00:00.000Z",
        "calibration_rule": rule, "calibration_rule_sha256": calibration_rule_sha256(rule),
        "regression_control": zone == "ceiling",
        "reason": "max-starts-per-probe (6) reached before the treatment's sample was graded" if zone == "undecided" else None,
        "discriminator": {"transcripts_catching": {d: ([f"{skill}/evals/probes/{probe_id}/transcripts/caught.md"]
                                                       if number % 16 else []) for d in defects}}
        if zone == "floor" else None,
    }


def synthetic_model(probes: int = 500, seed: int = 18, reps_weights=REPS_WEIGHTS) -> dict:
    """A report model of ``probes`` probe versions for the first agent and model,
    and ``probes // 5`` for the second; ``reps_weights`` are (reps, weight) pairs
    of the reps per arm."""
    rng = random.Random(seed)
    groups: list[dict] = []
    index = 0
    for series_index, (agent, model) in enumerate(SERIES):
        for number in range(probes if series_index == 0 else probes // 5):
            index += 1
            skill = SKILLS[number % len(SKILLS)]
            words = rng.sample(WORDS, 2 if number % 9 else 4)
            probe_id = f"{'-'.join(words)}-{number:03d}"
            version = 1 + (number % 7 == 0) + (number % 29 == 0)
            defects = ["D1"] if number % 4 else ["D1", "D2"]
            control_rate, treatment_rate = _pick(rng, SCENARIOS)
            control_reps, treatment_reps = _pick(rng, reps_weights), _pick(rng, reps_weights)
            if number % 41 == 0:
                treatment_reps = 0  # treatment not run yet: pending
            unreadable = 0.85 if number % 17 == 3 else 0.0
            control = _starts(rng, "control", control_reps, control_rate, defects, index, unreadable)
            treatment = _starts(rng, "treatment", treatment_reps, treatment_rate, defects, index, unreadable)
            own = random.Random(f"{seed}:{probe_id}")  # the probe's text draws from its own generator
            quotes = own.sample(QUOTES, len(defects))
            content = probe_content(_artifact(own, probe_id, quotes), f"{skill}/evals/probes/{probe_id}/question.md", [
                {"id": defect, "quote": quote, "caught_when": {"verdict": "NOT_PROVEN", "criteria": {"contains": "2"}}}
                for defect, quote in zip(defects, quotes)])
            arms = {"control": _arm(control), "treatment": _arm(treatment)}
            zone = zone_of(ArmSample(arms["control"]["reps"], arms["control"]["caught"]),
                           ArmSample(arms["treatment"]["reps"], arms["treatment"]["caught"]))
            edited = number % 47 == 5
            frozen = number % 13 == 0
            findings = []
            if number % 11 == 0:
                findings.append({"code": "SE101", "severity": "error", "message": "defect D1's quote is not in the artifact",
                                 "path": f"{skill}/evals/probes/{probe_id}/probe.json", "line": 12, "column": 17})
            if number % 6 == 0:
                findings.append({"code": "SE303", "severity": "warning", "message": "the step heading's window names the defect",
                                 "path": f"{skill}/SKILL.md", "line": 40, "column": 1})
            hashes = {"probe_sha256": _sha("probe", probe_id, version), "artifact_sha256": _sha("artifact", probe_id, version),
                      "skill_sha256": _sha("skill", skill)}
            ended = [s["ended"] for s in control + treatment if s["ended"]]
            groups.append({
                "key": _sha("group", agent, model, probe_id, version)[:16], "skill": skill, "probe": probe_id,
                "version": version, "probe_path": f"{skill}/evals/probes/{probe_id}/probe.json",
                "kind": "band" if len(defects) > 1 else "floor",
                "band": {"min_caught": 2, "max_caught": 2} if len(defects) > 1 else None,
                "defects": defects, "hashes": hashes, "agent": agent, "model": model, "zone": zone, "arms": arms,
                "evidence": evidence_of(arms["treatment"], arms["control"]),
                "edited_without_bump": edited, "on_disk": "edited" if edited else ("superseded" if number % 19 == 0 else "current"),
                "frozen": frozen, "frozen_matches": (not edited) if frozen else None,
                "unsealed": _unseal(control + treatment) if number % 29 == 0 else 0,
                "lint": {"when": "report", "findings": findings} if number % 23 else None,
                "calibration": _calibration(number, zone, len(control + treatment), skill, probe_id, defects),
                "last_run": max(ended) if ended else None, "starts": control + treatment,
                "probe_content": None if edited else content, "answers_unreadable": _unreadable(control + treatment),
            })
    return {
        "schema": SCHEMA_ID,
        "meta": {"workspace": "/home/someone/skills", "generated": "2025-06-30T12:00:00.000Z", "tool": "skill-eval 0.1.0",
                 "note": "Most probe versions have 2 reps per arm here. Two reps diagnose a scenario; they do not prove a rate.",
                 "starts_on_record": sum(len(g["starts"]) for g in groups) + 3, "torn_lines": 3, "max_starts": 20000,
                 "alpha": ALPHA, "answer_cap": ANSWER_CAP, "filters": {"paths": [], "probes": [], "agent": None}},
        "groups": groups,
    }


if __name__ == "__main__":  # python tests/report/synthetic_report.py [PROBES] [OUT.html]: the page's size and build time
    import sys
    import time
    from pathlib import Path

    from skill_eval.evals.viewer import write_html

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    out = Path(sys.argv[2] if len(sys.argv) > 2 else "report.html")
    began = time.perf_counter()
    model = synthetic_model(count)
    built = time.perf_counter()
    size = write_html(model, out)
    print(f"{out}: {size:,} bytes for {len(model['groups'])} groups ({count} probe versions for the first agent), "
          f"{sum(len(g['starts']) for g in model['groups']):,} starts; model {built - began:.2f} s, "
          f"render {time.perf_counter() - built:.2f} s")
