"""``skill-eval report``: the report model as text tables or JSON.

The rows are the groups of :func:`~skill_eval.evals.viewer_build.build_model`,
the one implementation that turns run records into groups for every face of
the report (this text, its JSON, the HTML viewer, JUnit): one row per probe
version, content (the SHA-256 of probe.json, of the artifact and of the
skill), agent and model, never pooled. A probe.json or artifact edited
without a version bump is a row of its own, flagged.

The text groups the rows into one table per agent and model, each headed by
its zone counts. Zones (seed, "Diagnostic calibration") are observations of
a row's sample:

* **ceiling** — the control arm caught it in every sampled rep ("too obvious");
* **window** — control missed every rep and treatment caught it ("usable window");
* **floor** — neither arm caught it ("too obscure");
* **adverse** — control caught it more often than treatment;
* **mixed** — anything else (e.g. control 1/2, treatment 2/2);
* **pending** — an arm the call needs has no graded rep yet;
* **unreadable** — most graded answers had no field the output spec names
  (``answer_source: "none"``): each was graded a miss, so the sample would
  read as a floor; the row says how many, per arm.

A row's notes start with its latest ``skill-eval calibrate`` decision, when
one is on record (``calibrated: floor after the treatment (4 starts; rule
9d212e30054f: reps 2, all-reps, no per-probe cap)``), and a ceiling (the
decision's, else the sample's) is noted "keep as a regression/cost control",
as the seed keeps such cases rather than erasing them.

Beside the zone, ``pass@k c/t``: pass@k of each arm (the chance that at
least one of k graded reps drawn from the sample caught it) at the largest k
both arms' reps allow, at most 5; then the evidence column gives the one-sided Fisher exact test of
"the treatment arm catches more often than the control arm" (one-sided
because the question is directional; an arm doing worse is its own zone,
adverse): its p-value, and "not separated at this sample" when p is above
0.05 — which, at two reps per arm, it always is: even a perfect split
(control 0/2, treatment 2/2) gives p = 1/6.

Each arm's cell also says how often its starts loaded the skill (``skill
1/2``: of the starts whose transcript tells, docs/format.md "Skill use"),
and the notes flag a treatment start that never loaded it, a control start
that did (an isolation failure) and starts that saw the answer key
(contaminated: errors, never graded).

Under each table, when its agent reported usage (a harness preset does:
docs/harnesses/), what the agent and model cost per arm: starts, tokens in
and out, cost and turns, summed over every start (failed ones included).

``--format json`` prints the report model itself (docs/report.md, JSON Schema
``viewer_assets/report-model.schema.json``).
"""

from __future__ import annotations

import json
from typing import Sequence

from skill_eval.linter.run_records import ZONES

from .calibrate import decision_note
from .viewer_model import ARM_NAMES, Group, ReportModel

ON_DISK_NOTES = {
    "skill-edited": "the skill (SKILL.md or another file of its folder) changed since",
    "edited": "files changed since (same version)",
    "superseded": "superseded by a newer version",
    "older": "disk holds an older version",
    "missing": "probe not on disk",
}


def evidence_cell(group: Group) -> str:
    """The evidence column: the p-value, and whether this sample separates the arms."""
    evidence = group["evidence"]
    p = evidence["p"]
    if p is None:
        return "not tested (an arm has no graded rep)"
    if evidence["separated"]:
        return f"separated (p={p:.3g})"
    return f"not separated at this sample (p={p:.2g})"


def pass_at_k_cell(group: Group) -> str:
    """pass@k beside the zone, for the largest k both arms' graded reps allow
    (at most 5, at least 2: pass@1 is the rate already shown): ``pass@2
    0.00/1.00`` (control/treatment). An arm without graded reps shows ``-``
    and the other arm's largest k is used; ``-`` when no arm has 2 reps."""
    at = [group["arms"][arm].get("pass_at_k") or {} for arm in ARM_NAMES]
    ks = [max(map(int, values)) for values in at if values]
    k = min(ks) if ks else 0
    if k < 2:
        return "-"
    return f"pass@{k} " + "/".join(f"{values[str(k)]:.2f}" if str(k) in values else "-" for values in at)


def arm_cell(group: Group, arm: str) -> str:
    """``caught/reps [Wilson 95%]``, and the failed starts by what ended them
    (``+2 error``, ``+1 timeout``, ``+1 interrupted``) and the running ones."""
    sample = group["arms"][arm]
    if not sample["reps"]:
        cell = "-"
    else:
        low, high = sample["wilson95"]
        cell = f"{sample['caught']}/{sample['reps']} [{low:.2f}-{high:.2f}]"
    if sample.get("unreadable"):
        cell += f" ({sample['unreadable']} unreadable)"
    for key, word in (("errors", "error"), ("timeouts", "timeout"), ("interrupted", "interrupted")):
        if sample[key]:
            cell += f" +{sample[key]} {word}"
    if sample["running"]:
        cell += f" +{sample['running']} running"
    loaded = skill_loaded_text(sample)
    if loaded:
        cell += f" {loaded}"
    return cell


def unreadable_note(group: Group) -> str | None:
    """How many graded answers had no field the output spec names, when any:
    ``2 of 4 graded answers unreadable (no field output-spec.md names)``, and
    what to do when they decided the zone."""
    unreadable = sum(group["arms"][arm].get("unreadable", 0) for arm in ARM_NAMES)
    if not unreadable:
        return None
    graded = sum(group["arms"][arm]["reps"] for arm in ARM_NAMES)
    note = f"{unreadable} of {graded} graded answers unreadable (no field output-spec.md names)"
    if group["zone"] == "unreadable":
        note += (": not a floor; make the agent answer in the output spec's fields, then run it under a new "
                 "[agents.NAME] (a new sample)")
    return note


def ungraded_note(group: Group) -> str | None:
    """The reps of ``group`` with no graded answer (every start of them
    failed, none running), named by how their latest start ended, with that
    start's error: ``2 rep(s) ungraded: their last start errored (the agent
    exited with status 2: ...)``. ``None`` when every rep has an outcome."""
    latest: dict[tuple, dict] = {}
    graded = {(s["arm"], s["rep"]) for s in group["starts"] if s["status"] in ("ok", "running")}
    for start in group["starts"]:  # in the model's order: by arm, rep, then time
        key = (start["arm"], start["rep"])
        if key not in graded:
            latest[key] = start
    if not latest:
        return None
    words = {"error": "errored", "timeout": "timed out", "interrupted": "was interrupted"}
    counts: dict[str, int] = {}
    for start in latest.values():
        counts[start["status"]] = counts.get(start["status"], 0) + 1
    how = ", ".join(f"{count} {words.get(status, status)}" for status, count in counts.items())
    last = next((s for s in reversed(list(latest.values())) if s["error"]), None)
    detail = f" (last error: {last['error'].splitlines()[0][:160]})" if last is not None else ""
    return f"{len(latest)} rep(s) ungraded, their last start: {how}{detail}"
def skill_loaded_text(sample: dict) -> str:
    """How often the arm's starts loaded the skill, from their records:
    ``skill 2/2`` (loaded in 2 of the 2 starts whose evidence is known), with
    ``, 1 unknown`` when some cannot tell; empty when no start tells."""
    loaded, not_loaded = sample.get("skill_loaded", 0), sample.get("skill_not_loaded", 0)
    if not loaded + not_loaded:
        return ""
    unknown = sample["starts"] - loaded - not_loaded
    return f"skill {loaded}/{loaded + not_loaded}" + (f", {unknown} unknown" if unknown > 0 else "")


def evidence_flags(group: Group) -> list[str]:
    """The flags of a group's starts: treatment starts that never loaded the
    skill, control starts that loaded it (isolation failures), contaminated starts."""
    found = []
    flags = [start.get("skill_flag") for start in group["starts"]]
    unused = flags.count("skill-not-loaded")
    if unused:
        found.append(f"TREATMENT DID NOT LOAD THE SKILL in {unused} start(s)")
    leaked = flags.count("isolation-failure")
    if leaked:
        found.append(f"ISOLATION FAILURE: the control loaded the skill in {leaked} start(s)")
    contaminated = sum(bool(start.get("contaminated")) for start in group["starts"])
    if contaminated:
        found.append(f"CONTAMINATED: {contaminated} start(s) saw the answer key (never graded)")
    return found


REGRESSION_CONTROL_NOTE = "keep as a regression/cost control"
"""The seed: ceiling cases are kept as regression or cost controls, never erased."""


def notes(group: Group) -> str:
    """The notes column: the latest calibration decision (zone, after which
    arm, the starts it cost, the rule and its hash), the regression/cost-control
    note of a ceiling (the decision's zone, or the sample's when none is on
    record), then the flags."""
    found = []
    calibration = group["calibration"]
    if calibration is not None:
        found.append(decision_note(calibration))
    if (calibration["zone"] if calibration is not None else group["zone"]) == "ceiling":
        found.append(REGRESSION_CONTROL_NOTE)
    if group["edited_without_bump"]:
        found.append("EDITED WITHOUT A VERSION BUMP: one content of this version, not pooled")
    if group["on_disk"] != "current":
        found.append(ON_DISK_NOTES.get(group["on_disk"], group["on_disk"]))
    if group["frozen"] and not group["frozen_matches"]:
        found.append("frozen with other hashes")
    unreadable = unreadable_note(group)
    if unreadable:
        found.append(unreadable)
    ungraded = ungraded_note(group)
    if ungraded:
        found.append(ungraded)
    found += evidence_flags(group)
    if group.get("unsealed"):
        found.append(f"UNSEALED: {group['unsealed']} start(s) ran without the sandbox, able to read the answer keys")
    return "; ".join(found)


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def series_of(groups: Sequence[Group]) -> dict[tuple[str, str], list[Group]]:
    """The groups per agent and model, in the model's order."""
    found: dict[tuple[str, str], list[Group]] = {}
    for group in groups:
        found.setdefault((group["agent"], group["model"]), []).append(group)
    return found


def zone_counts(groups: Sequence[Group]) -> str:
    counts = {zone: sum(g["zone"] == zone for g in groups) for zone in ZONES}
    return ", ".join(f"{zone} {count}" for zone, count in counts.items() if count)


def usage_line(model: ReportModel, agent: str, model_name: str) -> str | None:
    """What the agent and model cost per arm, when any start reported usage:
    ``usage: control 2 start(s): 2,603 tokens in, 83 out, $0.0085, 2 turn(s); treatment ...``."""
    parts = []
    for usage in model.get("usage") or ():
        if (usage["agent"], usage["model"]) != (agent, model_name) or not usage["reporting"]:
            continue
        figures = [f"{usage['tokens_in']:,} tokens in" if usage["tokens_in"] is not None else None,
                   f"{usage['tokens_out']:,} out" if usage["tokens_out"] is not None else None,
                   f"${usage['cost_usd']:.4f}" if usage["cost_usd"] is not None else None,
                   f"{usage['turns']} turn(s)" if usage["turns"] is not None else None]
        unreported = usage["starts"] - usage["reporting"]
        tail = f" ({unreported} start(s) reported none)" if unreported else ""
        parts.append(f"{usage['arm']} {usage['starts']} start(s): "
                     + ", ".join(figure for figure in figures if figure) + tail)
    return "usage: " + "; ".join(parts) if parts else None


def render_text(model: ReportModel) -> str:
    """One table per agent and model (see the module docstring), then what the numbers can say."""
    meta = model["meta"]
    groups = model["groups"]
    out: list[str] = []
    skills = {g["skill"] for g in groups}
    for (agent, model_name), members in series_of(groups).items():
        separated = sum(g["evidence"]["separated"] for g in members)
        out.append(f"agent {agent} · model {model_name}: {len(members)} probe version(s): {zone_counts(members)}; "
                   f"{separated} separated")
        header = ("probe", "v", "control", "treatment", "zone", "pass@k c/t", "evidence", "starts", "notes")
        if len(skills) > 1:
            header = ("skill", *header)
        rows = [header]
        for group in members:
            row = (group["probe"], str(group["version"]), arm_cell(group, "control"), arm_cell(group, "treatment"),
                   group["zone"], pass_at_k_cell(group), evidence_cell(group), str(len(group["starts"])), notes(group))
            rows.append((group["skill"] or ".", *row) if len(skills) > 1 else row)
        out += ["  " + line for line in _table(rows)]
        usage = usage_line(model, agent, model_name)
        if usage:
            out.append("  " + usage)
        out.append("")
    if not groups:
        out = ["no runs on record (run `skill-eval run` first)", ""]
    cap = (f" of max-starts {meta['max_starts']}" if meta["max_starts"] is not None
           else " (no [calibration] max-starts cap)")
    torn = f", {meta['torn_lines']} of them torn lines" if meta["torn_lines"] else ""
    out.append(f"starts on record: {meta['starts_on_record']}{cap} (failed, timed-out and interrupted starts "
               f"included{torn})")
    if groups:  # the legend and the caveat explain rows: an empty report has none
        out += ["control/treatment: caught/reps [Wilson 95% interval]; failed starts are counted, not graded; "
                "skill L/K: starts that loaded the skill, of those whose transcript tells.",
                "pass@k c/t: the chance that at least one of k graded reps drawn from the sample caught it, control/"
                "treatment, at the largest k (at most 5) both arms' reps allow.",
                f"evidence: one-sided Fisher exact test, treatment > control; separated when p <= {meta['alpha']:g}.",
                meta["note"]]
    return "\n".join(out) + "\n"


def render_json(model: ReportModel) -> str:
    """The report model as JSON (docs/report.md)."""
    return json.dumps(model, indent=2, ensure_ascii=False) + "\n"
