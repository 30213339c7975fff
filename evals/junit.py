"""``skill-eval report --junit FILE``: the report model as JUnit XML for CI.

One ``<testsuite>`` per agent and model, one ``<testcase>`` per group (probe
version, content hashes, agent and model): ``classname`` is the skill,
``name`` is ``PROBE vN`` (plus the artifact hash's start when the version was
edited without a version bump, so that names stay unique).

What a test case reports (docs/report.md, "JUnit"):

* ``<error>`` — the group has reps **without an outcome**: every start of the
  rep errored, timed out or was interrupted, so the sample is incomplete
  (``type="unresolved-reps"``; a rep being run now is not counted). The plain
  ``skill-eval run`` resumes interrupted reps, ``--retry-errors`` re-runs the rest.
* ``<error>`` — a start is **contaminated**: its answer or transcript held
  answer-key text (``type="contaminated"``): the sample is compromised.
* ``<error>`` — the zone is **unreadable**: most graded answers had no
  field the output spec names (``type="unreadable-answers"``): the agent's
  answers could not be graded, whatever the probe is.
* ``<failure>`` — the zone is **adverse**: the control arm caught the defect
  more often than the treatment (``type="adverse"``): the skill hurt here.
* ``<failure>`` — an **isolation failure**: a control start loaded the skill
  (``type="isolation-failure"``), so the control measured the treatment's
  condition.
* ``<failure>`` — **unsealed** starts: some ran without the sandbox
  (``sandbox: "off"``), able to read the answer keys (``type="unsealed"``).
* ``<skipped>`` — the zone is **pending**: an arm the call needs has no graded
  rep yet.
* passed — anything else: ceiling, window, floor and mixed are calibration
  observations, not regressions; the zone and the evidence are in the test
  case's ``system-out``.

A test case holds one result: an error takes precedence over a failure, in
the order above, and its message names every other problem found too.

The rows of skill-creator suites (``suite_evals``) are test cases of a
``<testsuite>`` per agent and model named ``skill-creator evals · AGENT ·
MODEL`` (``classname`` the suite, ``name`` ``eval EVAL``): failing when the
zone is adverse, skipped when pending. Trigger tests (``trigger_tests``) are
one test case per agent and model in a ``<testsuite>`` named ``trigger
tests``, erroring when a trigger start failed (``type="failed-starts"``) or
when no start's transcript could tell whether the skill was loaded
(``type="unknown"``); precision and recall are in its ``system-out``.

``time`` is the sum of the group's starts' durations. The XML is built
with :mod:`xml.etree.ElementTree`: the format is a dozen elements and
attributes, and ElementTree escapes text and attributes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

from .viewer_model import Group, ReportModel


def _arm(arm: dict[str, Any]) -> str:
    if not arm["reps"]:
        return "no graded rep"
    low, high = arm["wilson95"]
    return f"{arm['caught']}/{arm['reps']} [{low:.2f}-{high:.2f}]"


def _clean(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold."""
    return "".join(c for c in text if c in "\t\n\r" or (" " <= c <= "\ud7ff") or ("\ue000" <= c <= "\ufffd")
                   or ("\U00010000" <= c <= "\U0010ffff"))


def problems(group: Group) -> list[tuple[str, str, str]]:
    """Every problem of a group's test case, as ``(element, type, message)``,
    most serious first (errors, then failures; docs/report.md "JUnit")."""
    control, treatment = group["arms"]["control"], group["arms"]["treatment"]
    found: list[tuple[str, str, str]] = []
    unresolved = control["unresolved"] + treatment["unresolved"]
    if unresolved:
        failed = [s for s in group["starts"] if s["status"] != "ok"]
        last = failed[-1] if failed else None
        message = (f"{unresolved} rep(s) without an outcome (every start of them failed); failed starts of this "
                   f"probe version: {sum(s['status'] == 'error' for s in failed)} error, "
                   f"{sum(s['status'] == 'timeout' for s in failed)} timeout, "
                   f"{sum(s['status'] == 'interrupted' for s in failed)} interrupted")
        if last is not None and last["error"]:
            message += f"; last: {last['error']}"
        found.append(("error", "unresolved-reps", message))
    contaminated = [s for s in group["starts"] if s.get("contaminated")]
    if contaminated:
        sources = sorted({leak["source"] for s in contaminated for leak in s["contaminated"]})
        found.append(("error", "contaminated", f"contaminated: {len(contaminated)} start(s) saw the answer key "
                      f"({', '.join(sources)}); they are errors, never graded, and the agent can read what it must not"))
    if group["zone"] == "unreadable":
        unreadable = control.get("unreadable", 0) + treatment.get("unreadable", 0)
        found.append(("error", "unreadable-answers",
                      f"unreadable: {unreadable} of {control['reps'] + treatment['reps']} graded answers had no field "
                      "the output spec names, so each was graded a miss; make the agent answer in the output spec's fields"))
    if group["zone"] == "adverse":
        found.append(("failure", "adverse", f"adverse: control caught it more often than treatment "
                      f"(control {_arm(control)}, treatment {_arm(treatment)}; {group['evidence']['text']})"))
    leaked = sum(1 for s in group["starts"] if s.get("skill_flag") == "isolation-failure")
    if leaked:
        found.append(("failure", "isolation-failure", f"isolation failure: {leaked} control start(s) loaded the "
                      "skill, so the control arm measured the treatment's condition"))
    if group.get("unsealed"):
        found.append(("failure", "unsealed", f"unsealed: {group['unsealed']} of {len(group['starts'])} start(s) ran "
                      "without the sandbox (sandbox: off), able to read the answer keys"))
    return found


def outcome(group: Group) -> tuple[str, str, str] | None:
    """``(element, type, message)`` of a group's test case, or ``None`` when it
    passes: its most serious problem, the message naming the others too."""
    found = problems(group)
    if found:
        element, kind, message = found[0]
        if len(found) > 1:
            message += "".join(f"; also {other}" for _e, _k, other in found[1:])
        return element, kind, message
    if group["zone"] == "pending":
        return "skipped", "pending", "pending: an arm the call needs has no graded rep yet"
    return None


def _suite_arm(stats: dict[str, Any] | None) -> str:
    if not stats or not stats.get("total"):
        return "no graded rep"
    low, high = stats["interval"]
    at_k = ", ".join(f"{k}: {v:.2f}" for k, v in (stats.get("pass_at_k") or {}).items())
    return (f"{stats['passed']}/{stats['total']} expectations = {stats['pass_rate']:.2f} [{low:.2f}-{high:.2f}], "
            f"mean {stats['mean']:.2f}, {stats['all_passed']}/{stats['reps']} reps passed all"
            + (f", pass@k {at_k}" if at_k else ""))


def suite_eval_outcome(row: dict[str, Any]) -> tuple[str, str, str] | None:
    """The test case of a skill-creator eval row: failing when adverse, skipped when pending."""
    arms = row["arms"]
    if row["zone"] == "adverse":
        return ("failure", "adverse", f"adverse: the control passed every expectation more often than the treatment "
                f"(control {_suite_arm(arms.get('control'))}; treatment {_suite_arm(arms.get('treatment'))})")
    if row["zone"] == "pending":
        return "skipped", "pending", "pending: an arm the call needs has no graded rep yet"
    return None


def _suite_eval_out(row: dict[str, Any]) -> str:
    lines = [f"zone: {row['zone']}"]
    for arm in ("control", "treatment"):
        lines.append(f"{arm}: {_suite_arm(row['arms'].get(arm))}")
    if "effect" in row:
        low, high = row["effect_interval"]
        lines.append(f"effect (treatment - control): {row['effect']:+.2f} [{low:+.2f}, {high:+.2f}] (Newcombe 95%)")
    lines.append(f"agent: {row['agent']}; model: {row['model']}; probe_sha256: {row['probe_sha256']}")
    return "\n".join(lines)


def trigger_outcome(row: dict[str, Any]) -> tuple[str, str, str] | None:
    """The test case of a trigger-test row: erroring when starts failed, or
    when no start's transcript could tell whether the skill was loaded."""
    if row["failed"]:
        return ("error", "failed-starts", f"{row['failed']} trigger start(s) without a graded outcome (error, timeout "
                "or interrupted): precision and recall leave them out")
    if row["unknown"] and not (row["tp"] + row["fn"] + row["fp"] + row["tn"]):
        return ("error", "unknown", f"unknown: the transcripts of all {row['unknown']} trigger start(s) cannot tell "
                "whether the skill was loaded")
    return None


def _trigger_out(row: dict[str, Any]) -> str:
    def rate(name: str) -> str:
        part = row[name]
        if part["rate"] is None:
            return f"{name}: - (0 starts)"
        low, high = part["interval"]
        return f"{name}: {part['hits']}/{part['of']} = {part['rate']:.2f} [{low:.2f}-{high:.2f}] (Wilson 95%)"
    return "\n".join([rate("precision"), rate("recall"),
                      f"TP {row['tp']} FN {row['fn']} FP {row['fp']} TN {row['tn']}; unknown {row['unknown']}; "
                      f"failed {row['failed']}"])


def case_outcomes(model: ReportModel) -> list[tuple[str, str, str] | None]:
    """The result of every test case :func:`junit_tree` writes, in its order."""
    return ([outcome(g) for g in model["groups"]] + [suite_eval_outcome(r) for r in model.get("suite_evals") or ()]
            + [trigger_outcome(r) for r in model.get("trigger_tests") or ()])


def _case_name(group: Group) -> str:
    name = f"{group['probe']} v{group['version']}"
    if group["edited_without_bump"]:
        name += f" (artifact {str(group['hashes']['artifact_sha256'] or '?')[:12]}, probe.json {str(group['hashes']['probe_sha256'] or '?')[:12]})"
    return name


def _system_out(group: Group) -> str:
    control, treatment = group["arms"]["control"], group["arms"]["treatment"]
    lines = [
        f"zone: {group['zone']}",
        f"control: {_arm(control)}; {control['starts']} start(s), {control['errors']} error, {control['timeouts']} timeout, "
        f"{control['interrupted']} interrupted",
        f"treatment: {_arm(treatment)}; {treatment['starts']} start(s), {treatment['errors']} error, "
        f"{treatment['timeouts']} timeout, {treatment['interrupted']} interrupted",
        f"evidence: {group['evidence']['text']}",
        f"agent: {group['agent']}; model: {group['model']}",
    ]
    at_k = "; ".join(f"{arm} " + ", ".join(f"{k}: {v:.2f}" for k, v in group["arms"][arm]["pass_at_k"].items())
                     for arm in ("control", "treatment") if group["arms"][arm].get("pass_at_k"))
    if at_k:
        lines.insert(1, f"pass@k: {at_k}")
    if group["edited_without_bump"]:
        lines.append("edited without a version bump: another group has this id and version with other content")
    if group["frozen"]:
        lines.append("frozen" + ("" if group["frozen_matches"] else " (its hashes differ from frozen.json)"))
    if group["on_disk"] != "current":
        lines.append(f"on disk: {group['on_disk']}")
    return "\n".join(lines)


def junit_tree(model: ReportModel) -> ElementTree.ElementTree:
    """The JUnit XML document of ``model`` (see the module docstring)."""
    by_series: dict[tuple[str, str], list[Group]] = {}
    for group in model["groups"]:
        by_series.setdefault((group["agent"], group["model"]), []).append(group)
    root = ElementTree.Element("testsuites", name="skill-eval report")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    suites: list[tuple[str, dict[str, str], list[tuple[str, str, float, Any, str]]]] = []
    for (agent, model_name), groups in sorted(by_series.items()):
        cases = [(group["skill"] or ".", _case_name(group), sum(s["duration_s"] or 0.0 for s in group["starts"]),
                  outcome(group), _system_out(group)) for group in groups]
        suites.append((f"{agent} · {model_name}", {"agent": agent, "model": model_name}, cases))
    evals_by_series: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in model.get("suite_evals") or ():
        evals_by_series.setdefault((str(row["agent"]), str(row["model"])), []).append(row)
    for (agent, model_name), rows in sorted(evals_by_series.items()):
        names = [f"eval {row['eval']}" for row in rows]
        cases = [(str(row["suite"] or "."), name if names.count(name) == 1 else f"{name} ({str(row['probe_sha256'])[:12]})",
                  0.0, suite_eval_outcome(row), _suite_eval_out(row)) for name, row in zip(names, rows)]
        suites.append((f"skill-creator evals · {agent} · {model_name}", {"agent": agent, "model": model_name}, cases))
    triggers = model.get("trigger_tests") or []
    if triggers:
        suites.append(("trigger tests", {}, [("trigger tests", f"triggers {row['agent']} · {row['model']}", 0.0,
                                             trigger_outcome(row), _trigger_out(row)) for row in triggers]))
    for name, props, cases in suites:
        suite = ElementTree.SubElement(root, "testsuite", name=_clean(name),
                                       timestamp=model["meta"]["generated"].rstrip("Z"), hostname="skill-eval")
        properties = ElementTree.SubElement(suite, "properties")
        for key, value in (*props.items(), ("workspace", model["meta"]["workspace"])):
            ElementTree.SubElement(properties, "property", name=key, value=_clean(str(value)))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        suite_time = 0.0
        for classname, case_name, seconds, result, out in cases:
            suite_time += seconds
            case = ElementTree.SubElement(suite, "testcase", classname=_clean(classname),
                                          name=_clean(case_name), time=f"{seconds:.3f}")
            counts["tests"] += 1
            if result is not None:
                element, kind, message = result
                ElementTree.SubElement(case, element, type=kind, message=_clean(message)).text = _clean(message)
                counts[{"error": "errors", "failure": "failures", "skipped": "skipped"}[element]] += 1
            ElementTree.SubElement(case, "system-out").text = _clean(out)
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("time", f"{suite_time:.3f}")
        total_time += suite_time
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{total_time:.3f}")
    ElementTree.indent(root)
    return ElementTree.ElementTree(root)


def junit_xml(model: ReportModel) -> bytes:
    return ElementTree.tostring(junit_tree(model).getroot(), encoding="utf-8", xml_declaration=True)


def write_junit(model: ReportModel, path: Path) -> None:
    """Write the JUnit XML of ``model`` to ``path``."""
    Path(path).write_bytes(junit_xml(model))
