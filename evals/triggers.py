"""Trigger tests: does the agent load the skill when it should, and only then?

A trigger set (a JSON list of ``{query, should_trigger}`` or a
``prompts.csv``: :mod:`skill_eval.linter.suites`) is run as a third kind of
start: each query is handed to the agent, as a user would type it, with the
skill installed (the treatment arm; no control: there is no skill to load
there). Whether the skill was loaded comes from the harness's own transcript
(:func:`skill_eval.evals.skill_use.detect_skill_use`, on the outcome record
as ``skill_loaded``), never from the answer.

A query maps onto a probe as an eval does (:mod:`.suites`): id
``trigger-<id>``, version 1, the query as the artifact, no defects; its
``kind`` is ``should-trigger`` or ``should-not-trigger``, so each record
says what was expected of it. The runner's budget, records, resume, lint
gate and sealed starts all hold. skill-creator runs each query 3 times:
``--reps 3``.

:func:`trigger_report` counts, per agent and model, the starts that loaded
the skill for should-trigger queries (true positives) and for
should-not-trigger ones (false positives), and those that did not (false
negatives, true negatives); starts whose transcript cannot tell are counted
apart, never guessed. Precision is TP / (TP + FP), recall TP / (TP + FN),
each with its Wilson 95% interval.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from skill_eval.linter.run_records import suite_folder
from skill_eval.linter.suites import TRIGGERS, SuiteContext

from .probes import Probe, ProbeError, Workspace, read_in_workspace
from .stats import wilson
from .suites import runnable_suite, suite_settings

SHOULD, SHOULD_NOT = "should-trigger", "should-not-trigger"
QUERY_NAME = "query.md"


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._")
    return slug[:60]


def distractor_files(workspace: Workspace, skills_folder: str, tested: Path) -> tuple[tuple[str, bytes], ...]:
    """The files of the config's ``[suites] distractors`` (skill folders
    relative to the workspace root), laid out as a preset installs a skill:
    ``<skills_folder>/<front-matter name>/<file>``; each read as the skill
    under test is (:meth:`Workspace.skill_tree`: no ``evals/``, no links).
    :class:`ProbeError` names a distractor that is no skill folder of the
    workspace, or the skill under test itself."""
    from skill_eval.linter.session import FileProblem

    from .presets import PresetError, skill_name

    files: list[tuple[str, bytes]] = []
    source = workspace.config.source or (workspace.root / "skill-eval.toml")
    for entry in suite_settings(workspace).distractors:
        found = workspace.session.resolve(workspace.root, entry)
        if isinstance(found, FileProblem) or not (found / "SKILL.md").is_file():
            raise ProbeError(f"{source}: [suites] distractors: {entry!r} is no skill folder inside the workspace "
                             "(a folder holding SKILL.md)")
        if found.resolve() == tested.parent.resolve():
            raise ProbeError(f"{source}: [suites] distractors: {entry!r} is the skill under test")
        try:
            name = skill_name(found)
        except PresetError as error:
            raise ProbeError(f"{source}: [suites] distractors: {error}") from None
        for relative, data, _mode in workspace.skill_tree(found).files:
            files.append((f"{skills_folder}/{name}/{relative}", data))
    return tuple(files)


def load_trigger_set(workspace: Workspace, path: Path, skills_folder: str | None = None) -> list[Probe]:
    """The queries of the trigger set at ``path`` as probes (see the module
    docstring); :class:`ProbeError` naming the file when it cannot be run.
    ``skills_folder`` (a preset's, relative to its project): where the
    config's distractor skills are installed beside the skill under test."""
    context = runnable_suite(workspace, path, TRIGGERS)
    suite = context.suite
    skill_path = context.skill_path
    if skill_path is None:
        raise ProbeError(f"{path}: no skill for this trigger set (SE804): a trigger test installs the skill; "
                         "run `skill-eval lint` and fix it")
    skill_bytes = read_in_workspace(workspace.session, skill_path, "the skill")
    tree = workspace.skill_tree(skill_path.parent)
    distractors = distractor_files(workspace, skills_folder, skill_path) if skills_folder else ()
    installed = {name: hashlib.sha256(data).hexdigest() for name, data in distractors}
    probes, used = [], set()
    for query in suite.triggers:
        if not query.query.strip():
            continue  # SE807
        probe_id = f"trigger-{_slug(query.id)}" if _slug(query.id) else f"trigger-{query.index + 1}"
        if probe_id in used:
            probe_id = f"{probe_id}-{query.index + 1}"
        used.add(probe_id)
        kind = SHOULD if query.should_trigger else SHOULD_NOT
        identity = json.dumps({"skill_name": context.wanted_name, "query": query.query, "should_trigger": query.should_trigger,
                               "distractors": installed}, sort_keys=True, ensure_ascii=False)
        probes.append(Probe(
            json_path=path, probe_id=probe_id, version=1, kind=kind, band=None, defects=(),
            probe_bytes=identity.encode("utf-8"), artifact_path=path.parent / QUERY_NAME,
            artifact_bytes=query.query.encode("utf-8"), skill_path=skill_path, skill_bytes=skill_bytes,
            output_spec_path=None, output_spec=None, suite=suite_folder(skill_path, path.parent), skill_tree=tree,
            input_files=distractors, session=workspace.session,
        ))
    return probes


def trigger_paths(workspace: Workspace, paths: Sequence[Path | str] = ()) -> list[Path]:
    """The trigger sets below ``paths`` (default: the whole workspace)."""
    from skill_eval.linter.workspace import Exclusion, absolute, discover

    found: set[Path] = set()
    exclude = Exclusion.of(workspace.config, workspace.root)
    from skill_eval.linter.suites import configured_suites

    for raw in paths or [workspace.root]:
        found |= discover(absolute(raw), workspace.session.reader, exclude=exclude).suites
        found |= configured_suites(absolute(raw), workspace.root, workspace.config.suite_globs, exclude or None)
    return sorted(path for path in found if _is_trigger_set(workspace, path))


def _is_trigger_set(workspace: Workspace, path: Path) -> bool:
    suite = SuiteContext(workspace.session, path).suite
    return suite is not None and suite.kind == TRIGGERS


def load_trigger_sets(workspace: Workspace, paths: Sequence[Path],
                      skills_folder: str | None = None) -> tuple[list[Probe], list[str]]:
    probes, errors = [], []
    for path in paths:
        try:
            probes.extend(load_trigger_set(workspace, path, skills_folder))
        except ProbeError as error:
            errors.append(str(error))
    return probes, errors


def trigger_outcomes(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The finished trigger starts of ``records`` (merged start+outcome
    records), each as ``{probe, agent, model, should_trigger, loaded, status}``."""
    found = []
    for record in records:
        kind = record.get("kind")
        if kind not in (SHOULD, SHOULD_NOT) or "status" not in record:
            continue
        loaded = record.get("skill_loaded")
        found.append({"probe": record.get("probe"), "probe_path": record.get("probe_path"), "agent": record.get("agent"),
                      "model": record.get("model"), "should_trigger": kind == SHOULD,
                      "loaded": loaded if isinstance(loaded, bool) else None, "status": record.get("status")})
    return found


def _rate(hits: int, total: int) -> dict[str, Any]:
    return {"hits": hits, "of": total, "rate": hits / total if total else None,
            "interval": list(wilson(hits, total)) if total else None}


def trigger_report(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per agent and model: the confusion counts of the trigger starts and
    precision and recall with Wilson 95% intervals (see the module docstring).
    A start that failed (error, timeout, interrupted) or whose transcript
    cannot tell (``skill_loaded`` null) is counted in ``failed`` or
    ``unknown``, in no cell."""
    rows: dict[tuple, dict[str, int]] = {}
    for outcome in trigger_outcomes(records):
        counts = rows.setdefault((outcome["agent"], outcome["model"]),
                                 {"tp": 0, "fn": 0, "fp": 0, "tn": 0, "unknown": 0, "failed": 0})
        if outcome["status"] != "ok":
            counts["failed"] += 1
        elif outcome["loaded"] is None:
            counts["unknown"] += 1
        elif outcome["should_trigger"]:
            counts["tp" if outcome["loaded"] else "fn"] += 1
        else:
            counts["fp" if outcome["loaded"] else "tn"] += 1
    report = []
    for (agent, model), counts in sorted(rows.items(), key=lambda item: tuple(map(str, item[0]))):
        report.append({"agent": agent, "model": model, **counts,
                       "precision": _rate(counts["tp"], counts["tp"] + counts["fp"]),
                       "recall": _rate(counts["tp"], counts["tp"] + counts["fn"])})
    return report


def render_trigger_text(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return ""
    lines = ["", "trigger tests: did the harness load the skill (from its transcript)? precision and recall with "
             "95% Wilson intervals"]
    for row in rows:
        def shown(name: str) -> str:
            part = row[name]
            if part["rate"] is None:
                return f"{name} - (0 starts)"
            low, high = part["interval"]
            return f"{name} {part['hits']}/{part['of']} = {part['rate']:.2f} [{low:.2f}, {high:.2f}]"
        lines.append(f"  {row['agent']}, {row['model']}: {shown('precision')}; {shown('recall')}; "
                     f"TP {row['tp']} FN {row['fn']} FP {row['fp']} TN {row['tn']}"
                     + (f"; {row['unknown']} unknown" if row["unknown"] else "")
                     + (f"; {row['failed']} failed" if row["failed"] else ""))
    return "\n".join(lines) + "\n"


__all__ = ["load_trigger_set", "load_trigger_sets", "trigger_paths", "trigger_report", "render_trigger_text"]
