"""Running skill-creator eval suites (``evals.json``) with the probe runner,
and what the report makes of their records.

An eval maps onto a probe (docs/format.md, "skill-creator suites"):

- its id is ``eval-<id>``, version 1; its identity (``probe_sha256``) is
  the hash of the eval's own entry and the suite's ``skill_name``, so an
  edited eval is another row, as an edited probe.json is;
- the artifact is the eval's ``prompt`` (handed to the agent verbatim, as
  ``prompt.md`` in the scratch folder; there is no output spec);
- each expectation is a defect ``E1``, ``E2``... graded by the configured
  judge, which reads ``{"defect": {"id", "expectation", ...}, "answer", ...}``
  and prints ``{"caught": bool, "reason": "..."}``: ``caught`` is the
  expectation's ``passed``, ``reason`` its ``evidence``;
- the skill is the suite's (:class:`~skill_eval.linter.suites.SuiteContext`),
  and runs go to that skill's ``evals/runs/``.

So a run of a suite has the runner's every promise: the same budget, the
records, resume, the lint gate (SE8xx errors in the suite withhold its
evals) and sealed arms.

The runner's keys of ``[suites]`` (``judge``, ``judge-timeout``,
``distractors``: :class:`SuiteSettings`) are read here from the config file
a workspace's :class:`~skill_eval.linter.config.Config` came from, as
:mod:`skill_eval.evals.agents` reads the agents: the linter accepts them and
keeps only ``paths`` (which decides what it lints), so that editing them
leaves the lint cache as it was.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from skill_eval.linter.config import Config, ConfigError, config_error, read_config_table, string_list
from skill_eval.linter.run_records import suite_folder
from skill_eval.linter.suites import EVALS, SuiteContext

from .probes import Probe, ProbeError, Workspace, read_in_workspace
from .stats import wilson
from .timeouts import TIMEOUT_RULE, is_timeout

PROMPT_NAME = "prompt.md"


class SuiteSettings(NamedTuple):
    """The runner's keys of the config's ``[suites]`` table (docs/format.md)."""

    judge: tuple[str, ...] = ()
    """``judge``: the argv of the judge of skill-creator expectations (empty: none)."""
    judge_timeout: float = 60.0
    """``judge-timeout``: the judge's seconds per expectation."""
    distractors: tuple[str, ...] = ()
    """``distractors``: skill folders a trigger test installs beside the skill under test."""


def suite_settings_from_mapping(data: Mapping[str, Any], source: str = "<settings>",
                                below: SuiteSettings = SuiteSettings()) -> SuiteSettings:
    """The runner's ``[suites]`` settings of config-file keys ``data`` (as parsed
    TOML, or a layer), each key replacing only its own value of ``below``; a
    wrong value is a :class:`~skill_eval.linter.config.ConfigError` naming
    ``source`` and the key. The table's other key, ``paths``, and its unknown
    keys are the linter's (:func:`~skill_eval.linter.config.config_from_mapping`)."""
    table = data.get("suites", {})
    if not isinstance(table, dict):
        raise config_error(source, "suites", "`[suites]` must be a table")
    values: dict[str, Any] = {}
    if "judge" in table:
        judge = string_list(table["judge"], source, "suites.judge")
        if not judge or not all(judge):
            raise config_error(source, "suites.judge", "`suites.judge` must be a non-empty argv (a list of strings, no shell)")
        values["judge"] = judge
    if "distractors" in table:
        values["distractors"] = string_list(table["distractors"], source, "suites.distractors")
    if "judge-timeout" in table:
        if not is_timeout(table["judge-timeout"]):
            raise config_error(source, "suites.judge-timeout", f"`suites.judge-timeout` {TIMEOUT_RULE}")
        values["judge_timeout"] = float(table["judge-timeout"])
    return below._replace(**values)


def load_suite_settings(config: Config, root: Path | None = None,
                        layers: Sequence[tuple[str, Mapping[str, Any]]] = ()) -> SuiteSettings:
    """The runner's ``[suites]`` settings in the config's one order: defaults <
    the config file ``config`` was read from (the workspace's own, in ``root``,
    read below its folder only, as :func:`~skill_eval.linter.config.load_config`
    reads it) < each ``(source, settings)`` layer."""
    settings = SuiteSettings()
    path = config.source
    if path is not None:
        below = path.parent if root is not None and path.parent == root else None
        settings = suite_settings_from_mapping(read_config_table(path, below), str(path))
    for source, layer in layers:
        settings = suite_settings_from_mapping(layer, source, settings)
    return settings


def suite_settings(workspace: Workspace) -> SuiteSettings:
    """:func:`load_suite_settings` of ``workspace``; a config error is a :class:`ProbeError`."""
    try:
        return load_suite_settings(workspace.config, workspace.root)
    except ConfigError as error:
        raise ProbeError(str(error)) from None


def eval_probe_id(eval_id: int) -> str:
    return f"eval-{eval_id}"


def runnable_suite(workspace: Workspace, path: Path, kind: str) -> SuiteContext:
    """The suite file at ``path``, of ``kind`` (:data:`~skill_eval.linter.suites.EVALS`
    or :data:`~skill_eval.linter.suites.TRIGGERS`), read and parsed for a run:
    :class:`ProbeError` naming the file when it cannot be read, is of the
    other kind, or does not parse (SE801)."""
    what = "suite" if kind == EVALS else "trigger set"
    context = SuiteContext(workspace.session, path)
    suite = context.suite
    if suite is None:
        problem = context.document
        raise ProbeError(f"{path}: cannot read the {what}: {getattr(problem, 'message', problem)}")
    if suite.kind != kind:
        raise ProbeError(f"{path}: a trigger set, not an eval suite: run it as trigger tests" if kind == EVALS
                         else f"{path}: an eval suite, not a trigger set: run it without --triggers")
    broken = [p for p in suite.problems if p.code == "SE801"]
    if broken:
        raise ProbeError(f"{path}:{broken[0].span.start.line}: {broken[0].message}; run `skill-eval lint` and fix it")
    return context


def load_suite(workspace: Workspace, path: Path, judge: Mapping[str, Any]) -> list[Probe]:
    """The evals of the suite at ``path`` as probes whose expectations
    ``judge`` (``{"command": [...], "timeout": s}``, a probe.json judge)
    grades; :class:`ProbeError` naming the file when the suite cannot be run."""
    context = runnable_suite(workspace, path, EVALS)
    suite = context.suite
    skill_path = context.skill_path
    skill_bytes = tree = None
    if skill_path is not None:
        skill_bytes = read_in_workspace(workspace.session, skill_path, "the skill")
        tree = workspace.skill_tree(skill_path.parent)
    raw = suite.json.data if suite.json is not None else {}
    probes = []
    for case in suite.evals:
        if case.id is None or case.prompt is None:
            continue  # SE802: the lint gate names it
        entry = raw["evals"][case.index]
        files = _input_files(workspace, context, path, case)
        identity = json.dumps({"skill_name": suite.skill_name, "eval": entry,
                               "files": {name: hashlib.sha256(data).hexdigest() for name, data in files}},
                              sort_keys=True, ensure_ascii=False)
        defects = tuple({"id": f"E{number}", "expectation": text, "judge": dict(judge)}
                        for number, (_position, text) in enumerate(case.expectations, 1))
        probes.append(Probe(
            json_path=path,
            probe_id=eval_probe_id(case.id),
            version=1,
            kind=None,
            band=None,
            defects=defects,
            probe_bytes=identity.encode("utf-8"),
            artifact_path=path.parent / PROMPT_NAME,
            artifact_bytes=case.prompt.encode("utf-8"),
            skill_path=skill_path,
            skill_bytes=skill_bytes,
            output_spec_path=None,
            output_spec=None,
            suite=suite_folder(skill_path, path.parent),
            skill_tree=tree,
            input_files=files,
            session=workspace.session,
        ))
    return probes


def _input_files(workspace: Workspace, context: SuiteContext, path: Path, case: Any) -> tuple[tuple[str, bytes], ...]:
    """The eval's ``files``, read through the engine's one safe read (inside
    the workspace, regular files, bounded): ``(path as the suite names it,
    bytes)``; :class:`ProbeError` naming the suite, the eval and the file."""
    from skill_eval.linter.session import FileProblem

    files = []
    base = context.skill_root
    for _position, text in case.files:
        found = workspace.session.resolve(base, text)
        if isinstance(found, FileProblem):
            raise ProbeError(f"{path}: eval {case.id}: file {text!r}: {found.message}; {found.fix} "
                             "(run `skill-eval lint`)")
        data = read_in_workspace(workspace.session, found, f"eval {case.id}'s file {text!r}", resolved=True)
        files.append((text, data))
    return tuple(files)


def is_suite_probe(probe: Probe) -> bool:
    return probe.json_path.name != "probe.json"


def expectation_results(probe: Probe, grades: Sequence[Any]) -> list[dict[str, Any]]:
    """skill-creator's grading: ``{text, passed, evidence}`` per expectation."""
    by_id = {grade.defect_id: grade for grade in grades}
    results = []
    for defect in probe.defects:
        grade = by_id.get(str(defect.get("id")))
        if grade is None:
            continue
        results.append({"text": defect.get("expectation"), "passed": bool(grade.caught),
                        "evidence": "; ".join(reason for reason in grade.reasons if reason)})
    return results


# -- statistics ------------------------------------------------------------------------------


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass@k (Chen et al. 2021): the chance that at
    least one of ``k`` samples drawn without replacement from ``n`` samples,
    ``c`` of them correct, is correct: ``1 - C(n-c, k) / C(n, k)``."""
    if not 0 <= c <= n or k < 1:
        raise ValueError(f"pass@k needs 0 <= c <= n and k >= 1 (n={n}, c={c}, k={k})")
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, not {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def difference_interval(a: tuple[int, int], b: tuple[int, int]) -> tuple[float, float]:
    """Newcombe's interval (method 10, from two Wilson intervals) of the
    difference of proportions ``a`` minus ``b``, each ``(passed, total)``."""
    (pa, na), (pb, nb) = a, b
    p1, p2 = pa / na, pb / nb
    l1, u1 = wilson(pa, na)
    l2, u2 = wilson(pb, nb)
    d = p1 - p2
    lower = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    upper = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(-1.0, lower), min(1.0, upper)


def arm_stats(outcomes: Iterable[Mapping[str, Any]], k: int = 1) -> dict[str, Any]:
    """Of one arm's graded outcomes of one eval: the expectations passed of
    those graded (with a Wilson interval), the mean per-rep pass rate, and
    pass@k of a rep passing every expectation."""
    graded = [o for o in outcomes if o.get("status") == "ok" and isinstance(o.get("expectations"), list)]
    passed = sum(1 for o in graded for e in o["expectations"] if e.get("passed") is True)
    total = sum(len(o["expectations"]) for o in graded)
    reps = len(graded)
    whole = sum(1 for o in graded if o["expectations"] and all(e.get("passed") is True for e in o["expectations"]))
    rates = [sum(e.get("passed") is True for e in o["expectations"]) / len(o["expectations"])
             for o in graded if o["expectations"]]
    stats: dict[str, Any] = {"reps": reps, "passed": passed, "total": total,
                             "pass_rate": passed / total if total else None,
                             "interval": list(wilson(passed, total)) if total else None,
                             "mean": sum(rates) / len(rates) if rates else None,
                             "all_passed": whole}
    stats[f"pass@{k}"] = pass_at_k(reps, whole, k) if reps >= k else None
    stats["pass_at_k"] = {str(n): pass_at_k(reps, whole, n) for n in range(1, min(reps, 5) + 1)}
    return stats


def suite_report(records: Iterable[Mapping[str, Any]], k: int = 1) -> list[dict[str, Any]]:
    """One row per eval version, agent and model (never pooled): each arm's
    :func:`arm_stats` and the skill's effect, treatment minus control, with
    Newcombe's interval. ``records`` are merged start+outcome records."""
    rows: dict[tuple, dict[str, list]] = {}
    for record in records:
        if "status" not in record or "arm" not in record or str(record.get("kind", "")).endswith("trigger"):
            continue  # a plan, a start without its outcome (an interrupted start: no sample), a trigger test
        key = (record.get("probe_path"), record.get("probe"), record.get("probe_sha256"), record.get("agent"),
               record.get("model"))
        rows.setdefault(key, {}).setdefault(str(record.get("arm")), []).append(record)
    report = []
    from skill_eval.linter.run_records import ArmSample, zone_of

    for (suite, probe, digest, agent, model), arms in sorted(rows.items(), key=lambda item: tuple(map(str, item[0]))):
        row: dict[str, Any] = {"suite": suite, "eval": probe, "probe_sha256": digest, "agent": agent, "model": model,
                               "arms": {arm: arm_stats(outcomes, k) for arm, outcomes in sorted(arms.items())}}
        control, treatment = row["arms"].get("control"), row["arms"].get("treatment")
        # the zone of "a rep passes every expectation", as a probe's zone is of "a rep catches the defect"
        samples = [ArmSample(stats["reps"], stats["all_passed"]) if stats else ArmSample() for stats in (control, treatment)]
        row["zone"] = zone_of(*samples)
        if control and treatment and control["total"] and treatment["total"]:
            row["effect"] = treatment["pass_rate"] - control["pass_rate"]
            row["effect_interval"] = list(difference_interval((treatment["passed"], treatment["total"]),
                                                              (control["passed"], control["total"])))
        report.append(row)
    return report


def identity_hash(probe: Probe) -> str:
    return hashlib.sha256(probe.probe_bytes).hexdigest()


__all__ = ["SuiteSettings", "suite_settings_from_mapping", "load_suite_settings", "suite_settings", "load_suite",
           "load_suites", "suite_paths", "pass_at_k", "suite_report", "difference_interval", "expectation_results"]


def suite_paths(workspace: Workspace, paths: Sequence[Path | str] = ()) -> list[Path]:
    """The eval suites (``evals.json``, not trigger sets) below ``paths``
    (default: the whole workspace), as the linter discovers them."""
    from skill_eval.linter.workspace import Exclusion, absolute, discover

    found: set[Path] = set()
    exclude = Exclusion.of(workspace.config, workspace.root)
    from skill_eval.linter.suites import configured_suites

    for raw in paths or [workspace.root]:
        found |= discover(absolute(raw), workspace.session.reader, exclude=exclude).suites
        found |= configured_suites(absolute(raw), workspace.root, workspace.config.suite_globs, exclude or None)
    return sorted(path for path in found if path.suffix == ".json" and _is_eval_suite(workspace, path))


def _is_eval_suite(workspace: Workspace, path: Path) -> bool:
    suite = SuiteContext(workspace.session, path).suite
    return suite is not None and suite.kind == EVALS


def configured_judge(workspace: Workspace) -> dict[str, Any] | None:
    """``[suites] judge`` as a probe.json judge, or ``None``; :class:`ProbeError`
    when the config's ``[suites]`` settings are wrong."""
    settings = suite_settings(workspace)
    if not settings.judge:
        return None
    return {"command": list(settings.judge), "timeout": settings.judge_timeout}


def load_suites(workspace: Workspace, paths: Sequence[Path]) -> tuple[list[Probe], list[str]]:
    """The evals of every suite at ``paths`` as probes, graded by the
    configured judge; one error line per suite that cannot run."""
    if not paths:
        return [], []
    judge = configured_judge(workspace)
    source = workspace.config.source or (workspace.root / "skill-eval.toml")
    if judge is None:
        return [], [f"{source}: {len(paths)} skill-creator suite(s) to run ({', '.join(map(str, paths[:3]))}), and no "
                    "judge grades their expectations: set [suites] judge = [\"program\", \"args\"] (it reads the "
                    "expectation and the answer as JSON on stdin and prints {\"caught\": true|false, \"reason\": ...})"]
    probes, errors = [], []
    for path in paths:
        try:
            probes.extend(load_suite(workspace, path, judge))
        except ProbeError as error:
            errors.append(str(error))
    return probes, errors


def suite_records(workspace: Workspace, agent: str | None = None) -> list[dict[str, Any]]:
    """Every start of a skill-creator eval on record in the workspace, its
    start and outcome merged (``probe_path`` names no probe.json)."""
    from .records import read_runs_file

    from .runner import workspace_runs_files

    merged: dict[str, dict[str, Any]] = {}
    for path in workspace_runs_files(workspace.root):
        for _line, record in read_runs_file(path).records:
            start_id = record.get("start_id")
            if record.get("type") in ("start", "outcome") and isinstance(start_id, str):
                merged.setdefault(start_id, {}).update(record)
    return [record for record in merged.values()
            if isinstance(record.get("probe_path"), str) and not record["probe_path"].endswith("probe.json")
            and (agent is None or record.get("agent") == agent)]


def render_suite_text(rows: Sequence[Mapping[str, Any]], k: int = 1) -> str:
    """The report's section of skill-creator evals: per eval version, agent
    and model, each arm's expectation pass rate with its 95% interval, mean
    and pass@k, and the effect (treatment minus control) with its interval."""
    if not rows:
        return ""
    lines = ["", "skill-creator evals: expectations passed per arm (95% Wilson interval), the skill's effect "
             "(treatment - control, 95% Newcombe interval)"]
    for row in rows:
        cells = []
        for arm in ("control", "treatment"):
            stats = row["arms"].get(arm)
            if not stats or not stats["total"]:
                cells.append(f"{arm} -")
                continue
            low, high = stats["interval"]
            at_k = stats.get(f"pass@{k}")
            cells.append(f"{arm} {stats['passed']}/{stats['total']} = {stats['pass_rate']:.2f} [{low:.2f}, {high:.2f}] "
                         f"mean {stats['mean']:.2f}" + (f" pass@{k} {at_k:.2f}" if at_k is not None else "")
                         + f" ({stats['reps']} reps)")
        effect = ""
        if "effect" in row:
            low, high = row["effect_interval"]
            effect = f"  effect {row['effect']:+.2f} [{low:+.2f}, {high:+.2f}]"
        lines.append(f"  {row['suite']} {row['eval']} ({row['agent']}, {row['model']}): {row['zone']}; "
                     + "; ".join(cells) + effect)
    return "\n".join(lines) + "\n"
