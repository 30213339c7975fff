"""SE003-SE006 on workspaces built at runtime (symbolic links are made here,
never committed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _workspaces import ARTIFACT, floor_probe, lint, make_workspace, probe_folder

from skill_eval.linter.engine import lint_paths

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="needs POSIX symlinks")


@needs_symlinks
def test_artifact_symlink_loop_is_unreadable(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe()})
    question = probe_folder(root, "p") / "question.md"
    question.unlink()
    question.symlink_to("question.md")
    found = lint(root)
    unreadable = [d for d in found if d.code == "SE005"]
    assert len(unreadable) == 1
    assert "symbolic-link loop" in unreadable[0].message
    assert unreadable[0].path == probe_folder(root, "p") / "probe.json"
    assert unreadable[0].start.line == 1
    assert not [d for d in found if d.code in ("SE000", "SE003")]


@needs_symlinks
def test_named_artifact_loop_points_at_the_question_value(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe(question="a.md")})
    folder = probe_folder(root, "p")
    (folder / "a.md").symlink_to("b.md")
    (folder / "b.md").symlink_to("a.md")
    [diagnostic] = lint(root, code="SE005")
    text = (folder / "probe.json").read_text().splitlines()[diagnostic.start.line - 1]
    assert '"question": "a.md"' in text
    assert text[diagnostic.start.column - 1:diagnostic.end.column - 1] == '"a.md"'


@needs_symlinks
def test_skill_symlink_loop_linted_on_its_own(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {})
    skill = root / "looped" / "SKILL.md"
    skill.parent.mkdir()
    skill.symlink_to("SKILL.md")
    [diagnostic] = lint(root, code="SE005")
    assert diagnostic.path == skill
    assert "symbolic-link loop" in diagnostic.message


@needs_symlinks
def test_symlink_leaving_the_workspace(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe()})
    outside = tmp_path / "outside.md"
    outside.write_text("# elsewhere\n", encoding="utf-8")
    question = probe_folder(root, "p") / "question.md"
    question.unlink()
    question.symlink_to(outside)
    [diagnostic] = lint(root, code="SE004")
    assert "through a symbolic link" in diagnostic.message
    assert diagnostic.path == probe_folder(root, "p") / "probe.json"
    assert not lint(root, code="SE000")


@needs_symlinks
def test_symlink_inside_the_workspace_is_fine(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe()})
    shared = root / "shared.md"
    question = probe_folder(root, "p") / "question.md"
    shared.write_bytes(question.read_bytes())
    question.unlink()
    question.symlink_to(os.path.relpath(shared, question.parent))
    assert not [d for d in lint(root) if d.code.startswith("SE00")]


@needs_symlinks
@pytest.mark.parametrize("jobs", [1, 2])
def test_links_found_by_the_walk_are_resolved(tmp_path: Path, jobs: int) -> None:
    """A run over the whole workspace resolves the files its walk listed as
    no link without an lstat; every link it listed, a file behind a linked
    folder, and a path into a folder it never walked are still resolved in
    full (one probe each, in a workspace large enough to share)."""
    probes = {f"p{n:03}": floor_probe() for n in range(130)}
    probes["named"] = floor_probe(question="sub/question.md")
    probes["hidden"] = floor_probe(question="../../../../.hidden/question.md")
    root = make_workspace(tmp_path / "ws", probes)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "question.md").write_bytes((probe_folder(root, "p000") / "question.md").read_bytes())
    question = probe_folder(root, "p001") / "question.md"
    question.unlink()
    question.symlink_to(outside / "question.md")
    (probe_folder(root, "named") / "sub").symlink_to(outside)
    (root / ".hidden").symlink_to(outside)
    found = lint_paths([root], jobs=jobs).diagnostics
    outside_of = sorted(d.path.parent.name for d in found if d.code == "SE004")
    assert outside_of == ["hidden", "named", "p001"]
    assert not [d for d in found if d.code == "SE000"]


def test_outside_path_message_does_not_leak_the_checkout(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe(question="../../../../../etc/passwd")})
    [diagnostic] = lint(root, code="SE004")
    assert str(tmp_path) not in diagnostic.message
    assert "'../../../../../etc/passwd'" in diagnostic.message
    assert not lint(root, code="SE003")


def test_unreadable_skill_is_reported_once_for_its_probe_and_itself() -> None:
    case = FIXTURES / "se005-unreadable"
    found = lint(case, code="SE005")
    skill = [d for d in found if d.path == case / "broken-skill" / "SKILL.md"]
    assert len(skill) == 1
    only_probe = lint(case / "broken-skill" / "evals" / "probes" / "uses-broken" / "probe.json", code="SE005")
    assert {d.path.name for d in only_probe} == {"SKILL.md", "output-spec.md"}
    assert all(d.related and d.related[0].span.path.name == "probe.json" for d in only_probe)


def test_size_limit_comes_from_config(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe()}, artifact=ARTIFACT + "\nThe on-call rota is attached.\n" * 20)
    assert not lint(root, code="SE005")
    folder = probe_folder(root, "p")
    limit = (folder / "probe.json").stat().st_size
    files = [folder / "question.md", root / "skill" / "SKILL.md", root / "skill" / "output-spec.md"]
    (root / "skill-eval.toml").write_text(f"max-file-size = {limit}\n", encoding="utf-8")
    over = {path for path in files if path.stat().st_size > limit}
    assert folder / "question.md" in over
    assert {d.path for d in lint(root, code="SE005")} == over
    (root / "skill-eval.toml").write_text("max-file-size = 100\n", encoding="utf-8")
    # probe.json itself is over the limit: what it references is unknown, only it and SKILL.md are reported
    assert {d.path.name for d in lint(root, code="SE005")} == {"probe.json", "SKILL.md"}


def test_missing_file_at_the_key_value(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe(output_spec="spec.md")})
    [diagnostic] = lint(root, code="SE003")
    line = (probe_folder(root, "p") / "probe.json").read_text().splitlines()[diagnostic.start.line - 1]
    assert line[diagnostic.start.column - 1:diagnostic.end.column - 1] == '"spec.md"'
    assert "spec.md" in diagnostic.message


def test_folder_named_as_artifact_is_unreadable_not_missing(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe(question="sub")})
    (probe_folder(root, "p") / "sub").mkdir()
    assert [d.code for d in lint(root) if d.code.startswith("SE00")] == ["SE005"]


def test_duplicate_id_found_when_linting_one_probe(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a": floor_probe("same"), "b": floor_probe("same"), "c": floor_probe("other")})
    one = probe_folder(root, "a") / "probe.json"
    [diagnostic] = lint(one, code="SE006")
    assert diagnostic.path == one
    assert "skill/evals/probes/b/probe.json" in diagnostic.message
    [related] = diagnostic.related
    assert related.span.path == probe_folder(root, "b") / "probe.json"
    assert related.span.start.line == 2
    assert not lint(probe_folder(root, "c") / "probe.json", code="SE006")


def test_duplicate_id_suppressed_per_probe(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {
        "a": floor_probe("same", **{"x-skill-eval-disable": ["SE006"]}),
        "b": floor_probe("same"),
    })
    assert [d.path.parent.name for d in lint(root, code="SE006")] == ["b"]


def test_duplicate_id_ignores_unparsable_probes(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"a": floor_probe("same"), "b": "{not json", "c": b"\xff\xfe"})
    assert not lint(root, code="SE006")
    assert not lint(root, code="SE000")


def test_clean_fixture_is_clean() -> None:
    assert lint_paths([FIXTURES / "files-clean"]).diagnostics == []


def test_validation_does_not_add_schema_defaults(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe()})
    result = lint_paths([root])
    probe = result.sessions[0].probe(probe_folder(root, "p") / "probe.json")
    assert probe.probe.schema_problems() == []
    assert "question" not in probe.data and "version" not in probe.data
