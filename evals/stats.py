"""The statistics of the eval report: Wilson intervals, Fisher's exact test,
and the samples of its rows.

:func:`wilson` gives the 95% score interval of a rate, :func:`fisher_greater`
the one-sided Fisher exact p-value of "treatment catches more often". A
report row (:func:`row_key`: one probe version, one content, one agent and
model) is a :class:`RowSample`: the zone counts of
:func:`skill_eval.linter.run_records.sample_by` with the row's p-values.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import msgspec

from skill_eval.linter.run_records import VersionSample, sample_by


def wilson(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval (95% by default) of ``successes``/``trials``."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def fisher_greater(treatment_caught: int, treatment_reps: int, control_caught: int, control_reps: int) -> float:
    """One-sided Fisher exact test of "the treatment arm catches more often than
    the control arm": the probability, with both margins of the 2x2 table
    fixed, of a treatment count at least as high as observed (the hypergeometric
    upper tail; scipy.stats.fisher_exact(..., alternative="greater") on
    ``[[treatment_caught, treatment_missed], [control_caught, control_missed]]``).
    Exact integer arithmetic, then one division."""
    t_missed, c_missed = treatment_reps - treatment_caught, control_reps - control_caught
    if min(treatment_caught, t_missed, control_caught, c_missed) < 0:
        raise ValueError("caught counts must lie within their reps")
    total = treatment_reps + control_reps
    caught = treatment_caught + control_caught
    if total == 0 or caught == 0 or caught == total:
        return 1.0
    comb = math.comb
    high = min(treatment_reps, caught)
    tail = sum(comb(caught, k) * comb(total - caught, treatment_reps - k) for k in range(treatment_caught, high + 1))
    return tail / comb(total, treatment_reps)


SEPARATION_ALPHA = 0.05
"""A sample separates the arms when :func:`fisher_greater` is at most this."""


class RowSample(VersionSample):
    """The graded sample of one report row, with the p-values of its arms, and
    the agents, models and last end of its starts (the probe's status line)."""

    agents: set[str] = msgspec.field(default_factory=set)
    models: set[str] = msgspec.field(default_factory=set)
    last_ended: str | None = None

    def count(self, record: dict[str, Any]) -> None:
        """Count the start, and note its agent, model and end time."""
        super().count(record)
        if isinstance(record.get("agent"), str):
            self.agents.add(record["agent"])
        if isinstance(record.get("model"), str):
            self.models.add(record["model"])
        ended = record.get("ended")
        if isinstance(ended, str) and (self.last_ended is None or ended > self.last_ended):
            self.last_ended = ended

    @property
    def p_value(self) -> float | None:
        """:func:`fisher_greater` of the sample; ``None`` while an arm has no graded rep."""
        control, treatment = self.arms["control"], self.arms["treatment"]
        if not control.reps or not treatment.reps:
            return None
        return fisher_greater(treatment.caught, treatment.reps, control.caught, control.reps)

    @property
    def separated(self) -> bool:
        p = self.p_value
        return p is not None and p <= SEPARATION_ALPHA


def row_key(record: dict[str, Any]) -> tuple:
    """A report row: ``(probe, version, probe_sha256, artifact_sha256,
    skill_sha256, agent, model, skill_tree_sha256)``. Records of different
    agents, models or contents (of the skill folder too) are never pooled."""
    return (record.get("probe"), record.get("version"), record.get("probe_sha256"), record.get("artifact_sha256"),
            record.get("skill_sha256"), record.get("agent"), record.get("model"), record.get("skill_tree_sha256"))


def sample_rows(records: Iterable[dict[str, Any]], agent: str | None = None) -> dict[tuple, RowSample]:
    """Samples per :func:`row_key`."""
    return sample_by(records, row_key, agent, RowSample)
