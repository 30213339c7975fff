"""``skill-eval report``: one row per probe version, content, agent and model.

A **row** is every start of one probe id and version, with one content (the
SHA-256 of probe.json, of the artifact and of the skill), by one agent and
model. Rows are never pooled: two agents (or models) on the same probe are two
rows, and a probe.json or artifact edited without a version bump is a row of
its own, flagged, beside the row of the content on disk.

Zones (seed, "Diagnostic calibration"), an observation of the row's sample:

* **ceiling** — the control arm caught it in every sampled rep ("too obvious");
* **window** — control missed every rep and treatment caught it ("usable window");
* **floor** — neither arm caught it ("too obscure");
* **adverse** — control caught it more often than treatment;
* **mixed** — anything else (e.g. control 1/2, treatment 2/2);
* **pending** — an arm the call needs has no graded rep yet.

Beside the zone, each row shows the evidence for separation: the one-sided
Fisher exact test of "the treatment arm catches more often than the control
arm" (one-sided because the question is directional, and an arm doing worse
is already its own zone, adverse), with its p-value, and "not separated at
this sample" when p > 0.05 — which, at two reps per arm, is always: even a
perfect split (control 0/2, treatment 2/2) gives p = 1/6.

A rep "catches" when a floor probe's defect is caught, or when a band probe's
caught count lies within ``band`` (min..max). Errors, timeouts and interrupted
starts are counted as starts but are not graded reps. Intervals are Wilson 95%
intervals.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from skill_eval.linter.runs import (
    ARMS, SEPARATION_ALPHA, VersionSample, count_starts, iter_records, sample_rows,
)

from .calibrate import decision_note, decision_summary, latest_decisions
from .probes import Workspace

REPS_NOTE = ("Reps diagnose a scenario; they do not prove a rate (two reps per arm never can: even control 0/2 "
             "against treatment 2/2 has a one-sided Fisher p of 1/6). The intervals are Wilson 95% intervals and "
             "are wide on purpose: read the zone as an observation of this sample, not as a measured rate.")


def reps_note(rows: Sequence["Row"]) -> str:
    """:data:`REPS_NOTE` with the real numbers of graded reps per arm."""
    counts = sorted({row.sample.arms[arm].reps for row in rows for arm in ARMS if row.sample.arms[arm].reps})
    if not counts:
        return REPS_NOTE
    span = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    return f"This report's rows hold {span} graded rep(s) per arm. " + REPS_NOTE


def separation_text(sample: VersionSample) -> str:
    p = sample.p_value
    if p is None:
        return "-"
    if p <= SEPARATION_ALPHA:
        return f"separated (p={p:.3g})"
    return f"not separated at this sample (p={p:.2g})"


@dataclass
class Row:
    sample: VersionSample
    on_disk: str
    """``current`` (this version is on disk), ``superseded`` (a higher version is),
    ``older`` (the disk holds a lower version), ``missing`` (no probe has this id)."""
    content: str = "current"
    """``current`` (probe.json, artifact and skill hashes match the disk),
    ``edited`` (this version's files were edited without a version bump: this
    row is an earlier content), ``skill-edited`` (only SKILL.md differs), or
    ``unknown`` (the version is not on disk)."""
    calibration: dict[str, Any] | None = None
    """The latest ``skill-eval calibrate`` decision of this row, if any."""

    @property
    def agent(self) -> str:
        return str(self.sample.key[5]) if len(self.sample.key) > 5 else ""

    @property
    def model(self) -> str:
        return str(self.sample.key[6] or "") if len(self.sample.key) > 6 else ""

    @property
    def edited(self) -> bool:
        return self.content == "edited"

    def to_json(self) -> dict[str, Any]:
        sample = self.sample
        arms = {}
        for arm in ARMS:
            arm_sample = sample.arms[arm]
            interval = arm_sample.interval
            arms[arm] = {
                "reps": arm_sample.reps,
                "caught": arm_sample.caught,
                "rate": arm_sample.rate,
                "wilson95": list(interval) if interval else None,
                "errors": arm_sample.errors,
                "timeouts": arm_sample.timeouts,
                "interrupted": arm_sample.interrupted,
            }
        key = sample.key
        return {
            "probe": sample.probe,
            "version": sample.version,
            "agent": self.agent,
            "model": self.model,
            "probe_sha256": key[2] if len(key) > 2 else None,
            "artifact_sha256": key[3] if len(key) > 3 else None,
            "skill_sha256": key[4] if len(key) > 4 else None,
            "kind": sample.kind,
            "zone": sample.zone,
            "separation": {
                "test": "Fisher exact, one-sided (treatment catches more often than control)",
                "p_value": sample.p_value,
                "best_p_value": sample.best_p_value,
                "alpha": SEPARATION_ALPHA,
                "separated": sample.separated,
            },
            "arms": arms,
            "starts": sample.starts,
            "agents": sorted(sample.agents),
            "edited": self.edited,
            "content": self.content,
            "on_disk": self.on_disk,
            "last_run": sample.last_ended,
            "calibration": None if self.calibration is None else decision_summary(self.calibration),
        }


@dataclass
class Report:
    root: Path
    rows: list[Row]
    starts: int
    cap: int | None

    def to_json(self) -> dict[str, Any]:
        zones: dict[str, int] = {}
        for row in self.rows:
            zones[row.sample.zone] = zones.get(row.sample.zone, 0) + 1
        return {
            "workspace": str(self.root),
            "starts": self.starts,
            "max_starts": self.cap,
            "note": reps_note(self.rows),
            "zones": zones,
            "probes": [row.to_json() for row in self.rows],
        }


def build_report(workspace: Workspace, paths: Sequence[Path] = (), ids: Sequence[str] = (), agent: str | None = None) -> Report:
    from .runner import workspace_runs_files

    files = workspace_runs_files(workspace.root)
    decisions = latest_decisions(files)
    versions_on_disk: dict[str, int] = {}
    content_on_disk: dict[tuple[str, int], tuple] = {}
    for path in workspace.session.all_probe_paths:
        context = workspace.session.probe(path)
        if context.probe_id is not None:
            versions_on_disk[context.probe_id] = max(versions_on_disk.get(context.probe_id, 0), context.version)
            try:
                probe = workspace.load(path, need_skill=False, need_spec=False)
            except Exception:  # noqa: BLE001 - an unloadable probe has no content to compare
                continue
            content_on_disk[(probe.probe_id, probe.version)] = (probe.probe_sha256, probe.artifact_sha256,
                                                                probe.skill_sha256)
    wanted: set[str] | None = None
    if paths or ids:
        wanted = set(ids)
        for path in (workspace.probe_paths(paths, ()) if paths else ()):
            probe_id = workspace.session.probe(path).probe_id
            if probe_id:
                wanted.add(probe_id)
    records = (record for _path, _line, record in iter_records(files) if wanted is None or record["probe"] in wanted)
    samples = sample_rows(records, agent)
    rows = []
    for key in sorted(samples, key=lambda k: tuple("" if part is None else str(part) for part in k)):
        sample = samples[key]
        current = versions_on_disk.get(sample.probe)
        if current is None:
            on_disk = "missing"
        elif current == sample.version:
            on_disk = "current"
        elif current > sample.version:
            on_disk = "superseded"
        else:
            on_disk = "older"
        disk = content_on_disk.get((sample.probe, sample.version))
        if disk is None:
            content = "unknown"
        elif tuple(key[2:4]) != disk[:2]:
            content = "edited"
        elif key[4] is not None and key[4] != disk[2]:
            content = "skill-edited"
        else:
            content = "current"
        rows.append(Row(sample, on_disk, content, decisions.get(key)))
    # a version whose files changed without a bump: every content of it is flagged
    contents: dict[tuple, set] = {}
    for row in rows:
        contents.setdefault((row.sample.probe, row.sample.version), set()).add(tuple(row.sample.key[2:4]))
    for row in rows:
        if row.content == "unknown" and len(contents[(row.sample.probe, row.sample.version)]) > 1:
            row.content = "edited"
    return Report(workspace.root, rows, count_starts(files), workspace.config.calibration_max_starts)


def _arm_cell(row: Row, arm: str) -> str:
    sample = row.sample.arms[arm]
    if not sample.reps:
        cell = "-"
    else:
        low, high = sample.interval
        cell = f"{sample.caught}/{sample.reps} [{low:.2f}-{high:.2f}]"
    failures = sample.failed
    return cell + (f" +{failures} failed" if failures else "")


def _notes(row: Row) -> str:
    notes = []
    if row.calibration is not None:
        notes.append(decision_note(row.calibration))
    if (row.calibration or {}).get("zone", row.sample.zone) == "ceiling":
        notes.append("keep as a regression/cost control")
    if row.on_disk != "current":
        notes.append({"missing": "probe not on disk", "superseded": "superseded by a newer version",
                      "older": "disk holds an older version"}[row.on_disk])
    if row.content == "edited":
        notes.append("EDITED WITHOUT A VERSION BUMP: an earlier content of this version, not pooled")
    elif row.content == "skill-edited":
        notes.append("an earlier SKILL.md")
    return "; ".join(notes)


def render_text(report: Report) -> str:
    header = ("probe", "v", "agent/model", "control", "treatment", "zone", "separation", "starts", "note")
    table = [header]
    for row in report.rows:
        who = row.agent + (f"/{row.model}" if row.model else "")
        table.append((row.sample.probe, str(row.sample.version), who, _arm_cell(row, "control"),
                      _arm_cell(row, "treatment"), row.sample.zone, separation_text(row.sample),
                      str(row.sample.starts), _notes(row)))
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    out = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in table]
    if not report.rows:
        out = ["no runs on record (run `skill-eval run` first)"]
    cap = f" of max-starts {report.cap}" if report.cap is not None else " (no [calibration] max-starts cap)"
    out += ["", f"starts on record: {report.starts}{cap} (failed, timed-out and interrupted starts included)",
            "control/treatment: caught/reps [Wilson 95% interval]; failed starts are counted, not graded.",
            f"separation: one-sided Fisher exact test, treatment > control, separated when p <= {SEPARATION_ALPHA:g}.",
            reps_note(report.rows)]
    return "\n".join(out) + "\n"


def render_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2) + "\n"
