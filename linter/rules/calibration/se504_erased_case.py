"""SE504 erased-case."""

from __future__ import annotations

from typing import Optional

from ...diagnostics import Severity
from ...textfile import Span
from ..base import Rule, Scope
from ._records import read_runs, suite_runs_files


class ErasedCase(Rule):
    """## What it does
    Reports run records of a probe version that no longer exists in the
    workspace and was not superseded: no probe has that id any more, or the
    probe with that id is at a lower version than the one on record.

    ## Why is this bad?
    The seed: "A new development variant is a separate version, not
    permission to erase an unfavorable case", and "Report the observed
    results whether positive, null or adverse." Deleting a probe after an
    unfavorable run (or rolling its version back) removes the evidence from
    the suite while its starts still count; the case was erased rather than
    reported.

    ## Example
    `evals/runs/stale-migration.jsonl` holds four starts of
    `stale-migration` v1 (floor), and no probe.json has the id
    `stale-migration` any more.

    ## Fix
    Restore the probe from version control and keep it (as an easy
    regression/cost control, or a recorded floor). If it was replaced by a
    reseeded variant, give the variant the same id with a higher `version`.
    """

    code = "SE504"
    name = "erased-case"
    severity = Severity.WARNING
    scope = Scope.WORKSPACE
    tags = ("calibration",)
    facts_type = Optional[tuple[str, int]]

    def probe_facts(self, probe):
        """The probe's ``(id, version)``."""
        probe_id = probe.probe_id
        return None if probe_id is None else (probe_id, probe.version)

    def check(self, context):
        files = suite_runs_files(context.session)
        if not files:
            return
        on_disk: dict[str, int] = {}
        for _path, (probe_id, version) in context.probe_facts(self):
            on_disk[probe_id] = max(on_disk.get(probe_id, 0), version)
        first: dict[tuple[str, int], tuple] = {}
        counts: dict[tuple[str, int], int] = {}
        for path, line, record in ((path, line, record) for path in files
                                   for line, record in read_runs(context.session, path).records):
            version = record.get("version")
            if not isinstance(version, int) or isinstance(version, bool):
                continue
            key = (record["probe"], version)
            counts[key] = counts.get(key, 0) + 1
            first.setdefault(key, (path, line))
        for (probe_id, version), (path, line) in sorted(first.items()):
            current = on_disk.get(probe_id)
            if current is not None and current >= version:
                continue
            where = ("no probe has this id any more" if current is None
                     else f"the probe with this id is at version {current}, below the recorded one")
            yield self.diagnostic(
                Span.at(path, line, 1, line, 2),
                f"{counts[(probe_id, version)]} start(s) are on record for {probe_id!r} v{version} but {where}; "
                "restore the case, or give a reseeded variant a higher version",
            )
