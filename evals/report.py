"""``skill-eval report``: per probe version, catches per arm, intervals, zones.

Zones (seed, "Diagnostic calibration"):

* **ceiling** — the control arm caught it in every sampled rep ("too obvious");
* **window** — control missed every rep and treatment caught it ("usable window");
* **floor** — neither arm caught it ("too obscure");
* **adverse** — control caught it more often than treatment;
* **mixed** — anything else (e.g. control 1/2, treatment 2/2);
* **pending** — an arm the call needs has no graded rep yet.

A rep "catches" when a floor probe's defect is caught, or when a band probe's
caught count lies within ``band`` (min..max). Errors and timeouts are counted
as starts but are not graded reps. Intervals are Wilson 95% intervals.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from skill_eval.linter.runs import ARMS, VersionSample, count_starts, find_runs_files, iter_records, sample_versions

from .probes import Workspace

REPS_NOTE = ("Two reps diagnose a scenario; they do not prove a rate. The intervals below are Wilson 95% intervals "
             "and are wide on purpose: read the zone as an observation of this sample, not as a measured rate.")


@dataclass
class Row:
    sample: VersionSample
    on_disk: str
    """``current`` (this version is on disk), ``superseded`` (a higher version is),
    ``older`` (the disk holds a lower version), ``missing`` (no probe has this id)."""

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
            }
        return {
            "probe": sample.probe,
            "version": sample.version,
            "kind": sample.kind,
            "zone": sample.zone,
            "arms": arms,
            "starts": sample.starts,
            "agents": sorted(sample.agents),
            "edited": len(sample.hashes) > 1,
            "on_disk": self.on_disk,
            "last_run": sample.last_ended,
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
            "note": REPS_NOTE,
            "zones": zones,
            "probes": [row.to_json() for row in self.rows],
        }


def build_report(workspace: Workspace, paths: Sequence[Path] = (), ids: Sequence[str] = (), agent: str | None = None) -> Report:
    files = find_runs_files(workspace.root)
    versions_on_disk: dict[str, int] = {}
    for path in workspace.session.all_probe_paths:
        context = workspace.session.probe(path)
        if context.probe_id is not None:
            versions_on_disk[context.probe_id] = max(versions_on_disk.get(context.probe_id, 0), context.version)
    wanted: set[str] | None = None
    if paths or ids:
        wanted = set(ids)
        for path in (workspace.probe_paths(paths, ()) if paths else ()):
            probe_id = workspace.session.probe(path).probe_id
            if probe_id:
                wanted.add(probe_id)
    records = (record for _path, _line, record in iter_records(files) if wanted is None or record["probe"] in wanted)
    samples = sample_versions(records, agent)
    rows = []
    for key in sorted(samples):
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
        rows.append(Row(sample, on_disk))
    return Report(workspace.root, rows, count_starts(files), workspace.config.calibration_max_starts)


def _arm_cell(row: Row, arm: str) -> str:
    sample = row.sample.arms[arm]
    if not sample.reps:
        cell = "-"
    else:
        low, high = sample.interval
        cell = f"{sample.caught}/{sample.reps} [{low:.2f}-{high:.2f}]"
    failures = sample.errors + sample.timeouts
    return cell + (f" +{failures} failed" if failures else "")


def render_text(report: Report) -> str:
    header = ("probe", "v", "kind", "control", "treatment", "zone", "starts", "note")
    table = [header]
    for row in report.rows:
        notes = []
        if row.on_disk != "current":
            notes.append({"missing": "probe not on disk", "superseded": "superseded by a newer version",
                          "older": "disk holds an older version"}[row.on_disk])
        if len(row.sample.hashes) > 1:
            notes.append("edited without a version bump")
        table.append((row.sample.probe, str(row.sample.version), row.sample.kind or "-", _arm_cell(row, "control"),
                      _arm_cell(row, "treatment"), row.sample.zone, str(row.sample.starts), "; ".join(notes)))
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    out = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in table]
    if not report.rows:
        out = ["no runs on record (run `skill-eval run` first)"]
    cap = f" of max-starts {report.cap}" if report.cap is not None else " (no [calibration] max-starts cap)"
    out += ["", f"starts on record: {report.starts}{cap} (failed and timed-out starts included)",
            "control/treatment: caught/reps [Wilson 95% interval]; failed starts are counted, not graded.", REPS_NOTE]
    return "\n".join(out) + "\n"


def render_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2) + "\n"
