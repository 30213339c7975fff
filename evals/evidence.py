"""What an outcome record says beyond the grade: whether the skill was loaded,
whether the start saw the answer key, and what each judge decided.

The runner calls :class:`StartEvidence` once per outcome. It adds to the
outcome record (docs/format.md, run records):

- ``skill_loaded`` (``true``, ``false`` or ``null`` for unknown) and
  ``skill_evidence`` (:func:`~skill_eval.evals.skill_use.detect_skill_use`
  on the harness's transcript; a treatment with ``treatment = "prepend"``
  was handed SKILL.md in its prompt, so it loaded it by construction);
- ``contaminated``: the answer-key strings its answer or transcript holds
  (:mod:`~skill_eval.evals.contamination`), when any: such a start is an
  ``error``, never graded;
- ``judge_verdicts``: per judged defect, the judge's ``caught`` and ``reason``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Sequence

from .contamination import MAX_LEAKS, AnswerKey, Leak, Shown, describe
from .skill_use import SkillUse, detect_skill_use

__all__ = ["StartEvidence", "judge_verdicts", "contamination_error"]

PREPENDED = "SKILL.md's text was given in the prompt (treatment = \"prepend\")"


class StartEvidence:
    """Per runner: each probe's and each suite's :class:`AnswerKey` (built
    once, on first use, under a lock: outcomes are recorded from worker
    threads) and each skill's name."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._keys: dict[tuple, tuple[AnswerKey, AnswerKey, Shown]] = {}
        self._suites: dict[Path, AnswerKey] = {}
        self._names: dict[Path, str] = {}

    def _keys_of(self, probe: Any) -> tuple[AnswerKey, AnswerKey, Shown]:
        """The probe's own answer key, its suite's, and what its starts are
        shown; each built once (the suite's once for all its probes)."""
        probe_key = (probe.json_path, probe.probe_sha256, probe.artifact_sha256, probe.skill_tree_sha256)
        with self._lock:
            found = self._keys.get(probe_key)
            if found is None:
                suite = self._suites.get(probe.suite)
                if suite is None:
                    suite = self._suites[probe.suite] = AnswerKey.for_suite(probe.suite, self.root)
                shown = Shown.for_probe(probe)
                found = self._keys[probe_key] = (AnswerKey.for_probe(probe, self.root, shown), suite, shown)
            return found

    def leaks(self, probe: Any, answer: str, transcript: str) -> list[Leak]:
        """The answer-key strings ``answer`` or ``transcript`` hold: the
        probe's own, then other files of its suite's ``evals/``."""
        own, suite, shown = self._keys_of(probe)
        if not own.needles and not suite.needles:
            return []
        haystacks = list(AnswerKey.haystacks(answer, transcript))
        found = own.find_in(haystacks)
        seen = {leak.text for leak in found}
        found += [leak for leak in suite.find_in(haystacks, shown) if leak.text not in seen]
        return found[:MAX_LEAKS]

    def skill_name(self, probe: Any) -> str | None:
        """The skill's front-matter ``name`` (what a harness lists and loads),
        else its folder's name; ``None`` for a probe without a skill."""
        if probe.skill_path is None:
            return None
        folder = probe.skill_path.parent
        with self._lock:
            name = self._names.get(folder)
        if name is None:
            from .presets import PresetError, skill_name

            try:
                name = skill_name(folder)
            except PresetError:
                name = folder.name
            with self._lock:
                self._names[folder] = name
        return name

    def skill_use(self, probe: Any, agent: Any, arm: str, transcript: str,
                  installed: str | None) -> SkillUse | None:
        """Whether this start loaded the skill; ``None`` for a probe without
        one. ``installed`` is where the treatment's copy was installed
        (relative to the project), ``None`` when nothing was."""
        name = self.skill_name(probe)
        if name is None:
            return None
        if arm == "treatment" and agent.treatment == "prepend":
            return SkillUse(True, PREPENDED)
        harness = agent.preset or "command"
        return detect_skill_use(harness, transcript, name, installed)


def judge_verdicts(grades: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Per defect a judge gave a verdict on: ``{"caught": bool, "reason": str}``."""
    return {grade.defect_id: {"caught": grade.judge_verdict, "reason": grade.judge_reason or ""}
            for grade in grades if grade.judge_verdict is not None}


def contamination_error(leaks: Sequence[Leak]) -> tuple[list[dict[str, str]], str]:
    """The record's ``contaminated`` list and ``error`` line for ``leaks``."""
    return [leak.record() for leak in leaks], describe(leaks)
