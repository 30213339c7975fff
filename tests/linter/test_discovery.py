"""Discovery: which folders a walk enters, ``exclude``/``extend-exclude``, and
the workspace root when no marker file exists."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _workspaces import SKILL, SPEC, floor_probe

from skill_eval.linter.engine import lint_paths
from skill_eval.linter.workspace import find_workspace_root


def _skill(folder: Path, probes: dict[str, dict]) -> None:
    """A skill at ``folder`` with ``probes`` (name -> probe.json data); each
    probe's artifact is the standard one, so a probe's findings depend only on
    its probe.json and the skill."""
    from _workspaces import ARTIFACT

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (folder / "output-spec.md").write_text(SPEC, encoding="utf-8")
    for name, data in probes.items():
        probe = folder / "evals" / "probes" / name
        probe.mkdir(parents=True)
        (probe / "probe.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        (probe / "question.md").write_text(ARTIFACT, encoding="utf-8")


def _lint_json(*paths: Path, cwd: Path) -> list[dict]:
    """The CLI's JSON findings (a real ``skill-eval-lint`` process)."""
    completed = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", *map(str, paths), "--output-format", "json"],
                               cwd=cwd, capture_output=True, text=True, timeout=120)
    assert completed.returncode in (0, 1), completed.stderr
    return json.loads(completed.stdout)


def test_the_openai_skills_layout_is_found_and_vcs_and_tool_folders_are_not(tmp_path: Path) -> None:
    """openai/skills keeps skills in ``.curated/``, ``.experimental/`` and
    ``.system/``; Claude Code in ``.claude/skills/``. Each of these skills has
    a misanchored probe (SE101); the ones in ``.git``, ``node_modules`` and
    the cache folder must not be reported."""
    (tmp_path / "skill-eval.toml").write_text("", encoding="utf-8")
    wrong = floor_probe("p", step_heading="Step 9: Nowhere")
    found = [".curated/alpha", ".experimental/beta", ".system/gamma", ".claude/skills/delta"]
    hidden = [".git/modules/epsilon", "node_modules/pkg/zeta", ".skill-eval-cache/eta", ".venv/theta"]
    for number, where in enumerate(found + hidden):
        _skill(tmp_path / where, {f"p{number}": {**wrong, "id": f"p{number}"}})
    findings = _lint_json(tmp_path, cwd=tmp_path)
    reported = {(tmp_path / f["filename"]).resolve().relative_to(tmp_path.resolve()).parts[0] for f in findings if f["code"] == "SE101"}
    assert reported == {".curated", ".experimental", ".system", ".claude"}


def test_exclude_and_extend_exclude_leave_folders_and_probes_out(tmp_path: Path) -> None:
    (tmp_path / "skill-eval.toml").write_text(
        'exclude = ["drafts"]\nextend-exclude = ["skills/legacy", "skills/*/evals/probes/old-*"]\n', encoding="utf-8")
    wrong = floor_probe("p", step_heading="Step 9: Nowhere")
    _skill(tmp_path / "skills" / "kept", {"kept": {**wrong, "id": "kept"}, "old-one": {**wrong, "id": "old-one"}})
    _skill(tmp_path / "skills" / "legacy", {"legacy": {**wrong, "id": "legacy"}})
    _skill(tmp_path / "skills" / "kept" / "drafts", {"draft": {**wrong, "id": "draft"}})
    result = lint_paths([tmp_path], jobs=1)
    probes = {d.path.parent.name for d in result.diagnostics if d.code == "SE101"}
    assert probes == {"kept"}
    # an explicitly named probe is linted all the same (as ruff does without --force-exclude)
    explicit = lint_paths([tmp_path / "skills" / "legacy" / "evals" / "probes" / "legacy"], jobs=1)
    assert {d.code for d in explicit.diagnostics} >= {"SE101"}
    # the editor's (a caller's) extend-exclude adds to the file's; its exclude replaces the file's
    more = lint_paths([tmp_path], jobs=1, overrides={"extend-exclude": ["kept"]})
    assert not [d for d in more.diagnostics if d.code == "SE101"]
    replaced = lint_paths([tmp_path], jobs=1, overrides={"exclude": []})
    assert {d.path.parent.name for d in replaced.diagnostics if d.code == "SE101"} == {"kept", "draft"}


def test_a_bad_exclude_value_names_the_file_and_the_key(tmp_path: Path) -> None:
    (tmp_path / "skill-eval.toml").write_text('extend-exclude = "drafts"\n', encoding="utf-8")
    _skill(tmp_path / "skill", {})
    completed = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", str(tmp_path)], capture_output=True,
                               text=True, timeout=60)
    assert completed.returncode == 2
    assert "skill-eval.toml" in completed.stderr and "extend-exclude" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_without_a_marker_a_probe_linted_alone_finds_its_skill_as_the_whole_skill_does(tmp_path: Path) -> None:
    """No .git, no skill-eval.toml: the root falls back to the folder of the
    nearest SKILL.md, so one probe gets the same findings as its whole skill
    (it used to report that no SKILL.md exists above it)."""
    skill = tmp_path / "loose" / "verify"
    assert find_workspace_root(tmp_path) == tmp_path  # nothing marks tmp_path
    _skill(skill, {"good": floor_probe("good"), "wrong": floor_probe("wrong", step_heading="Step 9: Nowhere")})
    whole = lint_paths([skill], jobs=1).diagnostics
    for name in ("good", "wrong"):
        folder = skill / "evals" / "probes" / name
        alone = lint_paths([folder], jobs=1).diagnostics
        assert find_workspace_root(folder) == skill
        assert [(d.code, d.span, d.message) for d in alone] == \
            [(d.code, d.span, d.message) for d in whole if folder in d.path.parents], name
    assert "SE101" in {d.code for d in lint_paths([skill / "evals" / "probes" / "wrong"], jobs=1).diagnostics}


def test_a_probe_named_in_an_excluded_folder_reads_alike_whatever_else_is_linted(tmp_path: Path) -> None:
    """A probe named on the command line in an excluded folder finds its own
    SKILL.md and output spec, and is compared with every probe of the
    workspace, whether the workspace root, another probe or nothing else is
    linted with it: its findings are the same three times. (Linted with the
    root, the walk's table of SKILL.md files served its lookups and it found
    none, SE003; linted with another probe, it was compared with no one.)"""
    (tmp_path / "skill-eval.toml").write_text('exclude = ["hidden"]\n', encoding="utf-8")
    _skill(tmp_path / "skills" / "shown", {"same": floor_probe("same"), "other": floor_probe("other")})
    _skill(tmp_path / "skills" / "hidden", {"same": floor_probe("same")})
    named = tmp_path / "skills" / "hidden" / "evals" / "probes" / "same" / "probe.json"
    other = tmp_path / "skills" / "shown" / "evals" / "probes" / "other" / "probe.json"

    def findings(*paths: Path, cache: bool = False) -> list[tuple[str, int, str]]:
        return sorted((d.code, d.start.line, d.message) for d in lint_paths(list(paths), jobs=1, cache=cache).diagnostics
                      if d.path == named)

    with_root, with_other = findings(tmp_path, named), findings(other, named)
    assert ("SE006", 2, "probe id 'same' is also used by skills/shown/evals/probes/same/probe.json; ids must "
            "be unique in the workspace") in with_root, with_root
    assert not any(code == "SE003" for code, _line, _message in with_root), with_root
    assert with_root == with_other == findings(named)
    for _cold_then_warm in range(2):
        assert findings(tmp_path, named, cache=True) == findings(other, named, cache=True) == with_root
