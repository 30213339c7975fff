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
* ``<error>`` — the zone is **unreadable**: most graded answers had no
  field the output spec names (``type="unreadable-answers"``): the agent's
  answers could not be graded, whatever the probe is.
* ``<failure>`` — the zone is **adverse**: the control arm caught the defect
  more often than the treatment (``type="adverse"``): the skill hurt here.
* ``<skipped>`` — the zone is **pending**: an arm the call needs has no graded
  rep yet.
* passed — anything else: ceiling, window, floor and mixed are calibration
  observations, not regressions; the zone and the evidence are in the test
  case's ``system-out``.

An error takes precedence over a failure (its message names the adverse zone
too). ``time`` is the sum of the group's starts' durations. The XML is built
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


def outcome(group: Group) -> tuple[str, str, str] | None:
    """``(element, type, message)`` of a group's test case, or ``None`` when it passes."""
    control, treatment = group["arms"]["control"], group["arms"]["treatment"]
    unresolved = control["unresolved"] + treatment["unresolved"]
    adverse = group["zone"] == "adverse"
    if unresolved:
        failed = [s for s in group["starts"] if s["status"] != "ok"]
        last = failed[-1] if failed else None
        message = (f"{unresolved} rep(s) without an outcome (every start of them failed); failed starts of this "
                   f"probe version: {sum(s['status'] == 'error' for s in failed)} error, "
                   f"{sum(s['status'] == 'timeout' for s in failed)} timeout, "
                   f"{sum(s['status'] == 'interrupted' for s in failed)} interrupted")
        if last is not None and last["error"]:
            message += f"; last: {last['error']}"
        if adverse:
            message += f"; the graded reps are adverse (control {_arm(control)}, treatment {_arm(treatment)})"
        return "error", "unresolved-reps", message
    if adverse:
        return ("failure", "adverse", f"adverse: control caught it more often than treatment "
                f"(control {_arm(control)}, treatment {_arm(treatment)}; {group['evidence']['text']})")
    if group["zone"] == "unreadable":
        unreadable = control.get("unreadable", 0) + treatment.get("unreadable", 0)
        return ("error", "unreadable-answers",
                f"unreadable: {unreadable} of {control['reps'] + treatment['reps']} graded answers had no field the "
                "output spec names, so each was graded a miss; make the agent answer in the output spec's fields")
    if group["zone"] == "pending":
        return "skipped", "pending", "pending: an arm the call needs has no graded rep yet"
    return None


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
    for (agent, model_name), groups in sorted(by_series.items()):
        suite = ElementTree.SubElement(root, "testsuite", name=_clean(f"{agent} · {model_name}"),
                                       timestamp=model["meta"]["generated"].rstrip("Z"), hostname="skill-eval")
        properties = ElementTree.SubElement(suite, "properties")
        for key, value in (("agent", agent), ("model", model_name), ("workspace", model["meta"]["workspace"])):
            ElementTree.SubElement(properties, "property", name=key, value=_clean(value))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        suite_time = 0.0
        for group in groups:
            seconds = sum(s["duration_s"] or 0.0 for s in group["starts"])
            suite_time += seconds
            case = ElementTree.SubElement(suite, "testcase", classname=_clean(group["skill"] or "."),
                                          name=_clean(_case_name(group)), time=f"{seconds:.3f}")
            counts["tests"] += 1
            result = outcome(group)
            if result is not None:
                element, kind, message = result
                ElementTree.SubElement(case, element, type=kind, message=_clean(message)).text = _clean(message)
                counts[{"error": "errors", "failure": "failures", "skipped": "skipped"}[element]] += 1
            ElementTree.SubElement(case, "system-out").text = _clean(_system_out(group))
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
