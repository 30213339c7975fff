"""SE506 calibration-rule-changed."""

from __future__ import annotations

from pathlib import Path

from ...diagnostics import Related, Severity
from ...run_records import calibration_rule_record, calibration_rule_sha256
from ...textfile import Span
from ..base import Rule, Scope
from ._records import line_span_of, probe_runs


class CalibrationRuleChanged(Rule):
    """## What it does
    Reports a probe version whose calibration starts were governed by more
    than one `[calibration]` rule, or by a rule other than the one the config
    declares now: the `calibration_rule_sha256` that `skill-eval calibrate`
    writes into every start and decision record it governs differs between
    records of the same probe version (for one agent and model), or from the
    hash of the config's `reps`, `caught-in-every-rep` and
    `max-starts-per-probe`.

    ## Why is this bad?
    The seed: "Predeclare its stop; do not keep reseeding until treatment
    wins." A stop changed after starts were spent is no longer predeclared:
    raising `reps` after a floor, or loosening what counts as "caught in
    every rep" after a ceiling, keeps drawing until the observation is the
    wanted one, and the result is selected, not observed. The records keep
    the rule each start was spent under, so the change is visible; `skill-eval
    calibrate` refuses to spend more on such a probe version.

    ## Example
    `floor-case` v1 was calibrated with `reps = 2` (control 0/2, treatment
    0/2: a floor); `skill-eval.toml` now says
    ```toml
    [calibration]
    reps = 4
    ```

    ## Fix
    Restore the `[calibration]` rule the starts were spent under, and report
    the observation as it stands (`skill-eval report`). To calibrate under a
    new rule, make a new variant (bump `"version"` in probe.json): the earlier
    version's result stays on record and is reported with it.
    """

    code = "SE506"
    name = "calibration-rule-changed"
    severity = Severity.WARNING
    scope = Scope.PROBE
    tags = ("calibration",)

    def check(self, context):
        runs = probe_runs(context)
        if not runs:
            return
        probe_id, version = context.probe_id, context.version
        rules = _rules_on_record(runs, probe_id, version)
        if not rules:
            return
        config = context.config
        declared = calibration_rule_record(config.calibration_rule)
        declared_sha256 = calibration_rule_sha256(declared)
        problems, related = [], []
        for (agent, model), seen in sorted(rules.items(), key=lambda item: tuple(str(part) for part in item[0])):
            who = f"agent {agent}" + (f", model {model}" if model else "")
            if len(seen) > 1:
                problems.append(f"{who}: its records were governed by {len(seen)} rules ("
                                + "; ".join(f"{_describe(rule)}: {count} record(s)"
                                            for rule, _p, _l, count in seen.values()) + ")")
            elif declared_sha256 not in seen:
                (rule, _path, _line, count), = seen.values()
                problems.append(f"{who}: {count} record(s) were governed by {_describe(rule)}, and the config now "
                                f"declares {_describe(declared)}")
            else:
                continue
            for digest, (rule, path, line, _count) in seen.items():
                related.append(Related(Span.at(path, line, 1, line, 2), f"first record under {_describe(rule)}"))
        if not problems:
            return
        source = config.source
        raw = context.session.read_raw(source) if isinstance(source, Path) else None
        if raw is not None:
            related.append(Related(line_span_of(source, raw, "[calibration]"), f"the declared rule: {_describe(declared)}"))
        has_version = context.data is not None and context.get("version", int) is not None
        span = context.value_span("version") if has_version else context.value_span("id")
        yield self.diagnostic(
            span,
            f"{probe_id!r} v{version}: the calibration stop changed after starts were spent ({'; '.join(problems)}); "
            "restore the rule the starts were spent under, or calibrate a new variant (bump \"version\")",
            related=related[:20],
        )


def _rules_on_record(runs, probe_id: str, version: int) -> dict[tuple, dict[str, tuple[dict, Path, int, int]]]:
    """Per ``(agent, model)``, the rules the probe version's start and decision
    records carry: rule hash -> (rule, file and line of its first record, records)."""
    rules: dict[tuple, dict[str, tuple[dict, Path, int, int]]] = {}
    for path, parsed in runs:
        for line, record in [*parsed.records, *parsed.decisions]:
            if record.get("probe") != probe_id or record.get("version") != version:
                continue
            digest = record.get("calibration_rule_sha256")
            if not isinstance(digest, str):
                continue
            seen = rules.setdefault((record.get("agent"), record.get("model")), {})
            found = seen.get(digest)
            if found is None:
                rule = record.get("calibration_rule")
                seen[digest] = (rule if isinstance(rule, dict) else {}, path, line, 1)
            else:
                seen[digest] = (*found[:3], found[3] + 1)
    return rules


def _describe(rule: dict) -> str:
    """``reps 2, all-reps, no per-probe cap``."""
    if not rule:
        return "an unreadable rule"
    cap = rule.get("max-starts-per-probe")
    return (f"reps {rule.get('reps')}, {rule.get('caught-in-every-rep')}, "
            + ("no per-probe cap" if cap is None else f"max-starts-per-probe {cap}"))
