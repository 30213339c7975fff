"""The one fix applier (:mod:`skill_eval.linter.fixes`): each fix whole or not
at all, never a corrupted text, honest counts, and after ``--fix`` none of
the findings it claims to have fixed is reported again."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _workspaces import SKILL, defect, floor_probe, make_workspace, probe_folder

from skill_eval.linter.diagnostics import Diagnostic, Fix, Severity, TextEdit
from skill_eval.linter.engine import lint_paths
from skill_eval.linter.fixes import apply_edits, apply_fixes, edits_conflict, select_fixes
from skill_eval.linter.textfile import Span

FILE = Path("/w/f.md")


def _offsets(text: str) -> list[tuple[int, int]]:
    """A reference: ``(start, end)`` of each line's content, lines split by a regex."""
    spans, start = [], 0
    for match in re.finditer(r"\r\n|\r|\n", text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def _reference_offset(text: str, line: int, column: int) -> int:
    lines = _offsets(text)
    start, end = lines[min(max(line, 1), len(lines)) - 1]
    return min(start + max(column, 1) - 1, end)


lines_st = st.lists(st.text(alphabet="ab é\u2028\t", max_size=6), min_size=1, max_size=6)
breaks_st = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def texts_and_fixes(draw):
    drawn = draw(lines_st)
    breaks = [draw(breaks_st) for _ in drawn[:-1]]
    text = "".join(line + brk for line, brk in zip(drawn, breaks)) + drawn[-1]
    lines = re.split(r"\r\n|\r|\n", text)  # a CR then an empty line then LF is one CRLF

    def position():
        line = draw(st.integers(1, len(lines)))
        return line, draw(st.integers(1, len(lines[line - 1]) + 1))

    diagnostics = []
    for number in range(draw(st.integers(0, 6))):
        edits = []
        for _ in range(draw(st.integers(1, 3))):
            start, end = sorted([position(), position()])
            edits.append(TextEdit(Span.at(FILE, *start, *end), draw(st.text(alphabet="XY\n", max_size=4))))
        fixes = (Fix(f"fix {number}", tuple(edits), safe=draw(st.booleans())),)
        diagnostics.append(Diagnostic(f"SE9{number:02d}", "x", Severity.ERROR, "m", Span.at(FILE, 1, 1, 1, 1), fixes=fixes))
    return text, diagnostics


@settings(max_examples=3000, deadline=None)
@given(texts_and_fixes())
def test_fixes_are_taken_whole_and_applied_exactly(case) -> None:
    """Against a reference: the fixes taken never conflict, each fix left out
    conflicts with one taken before it (or with itself), and the text is the
    original with exactly the taken edits made (a line break written as the
    file's own), everything else kept byte for byte."""
    text, diagnostics = case
    selected = select_fixes(diagnostics)
    taken = [fix for fix, _found in selected.fixes]
    taken_edits = {fix.edits for fix in taken}
    chosen = [edit for fix in taken for edit in fix.edits]
    for number, edit in enumerate(chosen):
        assert not any(edits_conflict(edit, other) for other in chosen[number + 1:])
    before: list[TextEdit] = []
    for diagnostic in diagnostics:
        fix = diagnostic.fixes[0]
        if not fix.safe:
            continue
        if fix.edits in taken_edits:  # taken, or the same edits as one taken
            before.extend(fix.edits)
            continue
        own = list(fix.edits)
        assert (any(edits_conflict(a, b) for i, a in enumerate(own) for b in own[i + 1:])
                or any(edits_conflict(edit, other) for edit in own for other in before)), "a fix left out for nothing"
    newline = next((m.group() for m in re.finditer(r"\r\n|\r|\n", text)), "\n")
    expected = text
    placed = sorted(((_reference_offset(text, e.span.start.line, e.span.start.column),
                      _reference_offset(text, e.span.end.line, e.span.end.column), e.new_text) for e in chosen),
                    key=lambda item: (item[0], item[1]), reverse=True)
    for start, end, new_text in placed:
        expected = expected[:start] + new_text.replace("\n", newline) + expected[end:]
    assert apply_edits(text, chosen) == expected
    resolved = sum(len(found) for _fix, found in selected.fixes)
    assert resolved == len([d for d in diagnostics if d.fixes[0].safe and d.fixes[0].edits in taken_edits])


def test_a_fix_pointing_past_the_text_is_not_applied(tmp_path: Path) -> None:
    """Positions past a line's end or the last line (a stale finding) are
    not clamped into some other edit's place: the fix is left out whole."""
    from skill_eval.linter.config import Config
    from skill_eval.linter.reader import FileSystemReader
    from skill_eval.linter.session import LintSession

    target = tmp_path / "f.md"
    target.write_text("one\ntwo\n")
    good = Fix("good", (TextEdit(Span.at(target, 1, 1, 1, 4), "ONE"),), safe=True)
    stale = Fix("stale", (TextEdit(Span.at(target, 2, 1, 2, 4), "TWO"), TextEdit(Span.at(target, 7, 1, 7, 3), "X")), safe=True)
    diagnostics = [Diagnostic(code, "x", Severity.ERROR, "m", Span.at(target, 1, 1, 1, 1), fixes=(fix,))
                   for code, fix in (("SE901", good), ("SE902", stale))]
    applied = apply_fixes(diagnostics, [LintSession(tmp_path, Config(), FileSystemReader())])
    assert applied.fixed == 1
    assert target.read_text() == "ONE\ntwo\n"


def test_overlapping_fixes_one_whole_the_other_left_for_later() -> None:
    """The CLI used to skip one overlapping edit of a two-edit fix (half a
    fix applied, counted whole); the editor dropped whole fixes. Now both
    take the first fix whole and leave the second whole."""
    first = Fix("two edits", (TextEdit(Span.at(FILE, 1, 1, 1, 3), "AB"), TextEdit(Span.at(FILE, 2, 1, 2, 2), "C")), safe=True)
    second = Fix("overlaps the first's second edit", (TextEdit(Span.at(FILE, 2, 1, 2, 3), "ZZ"),), safe=True)
    diagnostics = [Diagnostic(code, "x", Severity.ERROR, "m", Span.at(FILE, 1, 1, 1, 1), fixes=(fix,))
                   for code, fix in (("SE901", first), ("SE902", second))]
    selected = select_fixes(diagnostics)
    assert [fix for fix, _found in selected.fixes] == [first]
    assert apply_edits("ab\ncd\n", selected.edits[FILE]) == "AB\nCd\n"
    reversed_order = select_fixes(diagnostics[::-1])
    assert [fix for fix, _found in reversed_order.fixes] == [second]


def test_the_same_fix_of_two_findings_is_made_once_and_resolves_both() -> None:
    fix = Fix("same", (TextEdit(Span.at(FILE, 1, 1, 1, 2), "Z"),), safe=True)
    diagnostics = [Diagnostic(code, "x", Severity.ERROR, "m", Span.at(FILE, 1, 1, 1, 1), fixes=(fix,)) for code in ("SE901", "SE902")]
    selected = select_fixes(diagnostics)
    assert sum(len(found) for _fix, found in selected.fixes) == 2 and selected.edits[FILE] == [fix.edits[0]]


# -- on disk, end to end ----------------------------------------------------------------------


def _drifted(probe_id: str, seeded: int) -> dict:
    return floor_probe(probe_id, seeded_defects=seeded)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=5),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
    st.lists(st.sampled_from(["1.10", "2", "true", "null", "x"]), max_size=3),
)
def test_after_fix_no_finding_it_claimed_to_fix_is_reported(tmp_path_factory, counts, newline, bom, metadata) -> None:
    """Workspaces with drifted counts (SE201, safe when the count is clear)
    and unquoted metadata (SE712), CRLF or LF, with or without a byte-order
    mark: after ``apply_fixes`` the files still decode, keep their line
    endings and mark, and a new lint reports none of the findings counted as
    fixed, and as many fewer of them as counted."""
    root = tmp_path_factory.mktemp("fix") / "ws"
    probes = {f"p{n}": _drifted(f"p{n}", seeded) for n, seeded in enumerate(counts)}
    make_workspace(root, probes)
    skill = root / "skill" / "SKILL.md"
    text = SKILL
    if metadata:
        text = text.replace("---\n\n", "metadata:\n" + "".join(f"  k{n}: {value}\n" for n, value in enumerate(metadata)) + "---\n\n", 1)
    for path in [skill, *root.rglob("probe.json")]:
        content = path.read_text(encoding="utf-8") if path != skill else text
        data = content.replace("\n", newline).encode("utf-8")
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    before = lint_paths([root])
    fixable = [d for d in before.diagnostics if any(f.safe for f in d.fixes)]
    applied = apply_fixes(before.diagnostics, before.sessions)
    after = lint_paths([root]).diagnostics
    claimed = [d for fix, found in select_fixes(before.diagnostics).fixes for d in found]
    keys = {(d.code, d.path, d.message) for d in after}
    assert not [d for d in claimed if (d.code, d.path, d.message) in keys]
    assert applied.fixed == len(claimed) <= len(fixable)
    assert len(before.diagnostics) - applied.fixed <= len(after) or not applied.fixed
    for path in applied.files:
        raw = path.read_bytes()
        assert raw.startswith(b"\xef\xbb\xbf") == bom
        body = raw.decode("utf-8-sig")
        assert ("\r\n" in body) == (newline == "\r\n") and body.count("\n") == body.count(newline)


def test_fix_on_the_command_line_takes_conflicting_fixes_in_turn(tmp_path: Path) -> None:
    """``--fix`` lints again after applying and applies what was left out,
    and counts each finding fixed once."""
    root = make_workspace(tmp_path / "ws", {"a": _drifted("a", 3), "b": _drifted("b", 2)})
    done = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", "--fix", "--no-cache", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert "SE201" not in done.stdout, done.stdout
    for name in ("a", "b"):
        assert json.loads((probe_folder(root, name) / "probe.json").read_text())["seeded_defects"] == 1
    assert "Fixed 2" in done.stdout or "2 fixed" in done.stdout, done.stdout


def test_a_fix_into_a_link_out_of_the_workspace_is_not_written(tmp_path: Path) -> None:
    """Fixes are read and written as the engine reads: a probe.json that
    became a link out of the workspace between the lint and the fix is left
    alone."""
    root = make_workspace(tmp_path / "ws", {"a": _drifted("a", 3)})
    before = lint_paths([root])
    probe = probe_folder(root, "a") / "probe.json"
    outside = tmp_path / "outside.json"
    outside.write_bytes(probe.read_bytes())
    probe.unlink()
    probe.symlink_to(outside)
    applied = apply_fixes(before.diagnostics, before.sessions)
    assert applied.fixed == 0 and applied.skipped == [probe]
    assert json.loads(outside.read_text())["seeded_defects"] == 3


# -- a fix edits the value it names, or is not offered ----------------------------------------


def _escaped(text: str, key: str) -> str:
    """``text`` (JSON) with the key ``key`` written with a JSON escape for its
    first letter: the same data, another spelling."""
    return text.replace(f'"{key}"', '"\\u%04x%s"' % (ord(key[0]), key[1:]), 1)


def _probe_text(probe: dict) -> str:
    return json.dumps(probe, indent=2) + "\n"


FIXABLE_PROBES = {
    "seeded_defects (SE201)": (floor_probe("a", seeded_defects=3), "seeded_defects"),
    "step_heading (SE101)": (floor_probe("a", step_heading="Step 1: Match criteria to evidense"), "step_heading"),
    "a graded field (SE105)": (floor_probe("a", defects=[defect(caught_when={"verdcit": "NOT_PROVEN"})]), "verdcit"),
    "a graded value (SE106)": (floor_probe("a", defects=[defect(caught_when={"verdict": "NOT_PROVED"})]), "verdict"),
    "a shape (SE402)": (floor_probe("a", shapes=[]), "shapes"),
}
"""Probes each of which gets a fix of its probe.json, and the key the fix is about."""

LARGE_PADDING = {"x-history": [{"rep": number, "note": "a"} for number in range(5000)]}
"""Enough values that the probe.json was too large for json-source-map's
source map (its findings stood at its first line, and no fix was offered)."""


def _hostile_variants() -> list[tuple[str, str, str]]:
    """``(case, plain text, hostile text)``: each fixable probe as written,
    and the same data where positions were once not known exactly (its key
    escaped; the file too large for json-source-map)."""
    variants = []
    for case, (probe, key) in FIXABLE_PROBES.items():
        plain = _probe_text(probe)
        variants.append((f"{case}, key escaped", plain, _escaped(plain, key)))
        variants.append((f"{case}, too large", _probe_text({**probe, "x-history": []}), _probe_text({**probe, **LARGE_PADDING})))
    return variants


@pytest.mark.parametrize("case, plain, hostile", _hostile_variants(), ids=[v[0] for v in _hostile_variants()])
def test_every_fix_of_a_probe_json_leaves_the_same_json_but_the_value_it_names(tmp_path: Path, case, plain, hostile) -> None:
    """Each fix offered for a probe.json (``--fix`` applies the safe ones,
    an editor offers every one) leaves a file that a reference parser reads
    as the same object, with the same keys but the one the fix names, the
    probe written plainly and the hostile one alike (a key written with an
    escape, a large file: json-source-map did not place them, and no fix was
    offered; tree-sitter-json's tree does). Where a value's position is not
    known (it does not exist) no fix is offered rather than one replacing a
    parent (tests/linter/test_json_positions.py)."""
    for text, name in ((plain, "plain"), (hostile, "hostile")):
        root = make_workspace(tmp_path / name, {"a": text})
        path = probe_folder(root, "a") / "probe.json"
        original = json.loads(text)
        offered = 0
        for diagnostic in lint_paths([root]).diagnostics:
            for fix in diagnostic.fixes:
                edits = [edit for edit in fix.edits if edit.span.path == path]
                if not edits:
                    continue
                offered += 1
                fixed = json.loads(apply_edits(text, edits))
                assert isinstance(fixed, dict) and set(fixed) == set(original), (fix.title, fixed if not isinstance(fixed, dict) else set(fixed))
                changed = {key for key in original if fixed[key] != original[key]}
                assert len(changed) == 1, (fix.title, changed)
        assert offered, f"{case}: no fix offered for the {name} probe"


def test_fix_on_the_command_line_mends_a_probe_with_an_escaped_key_at_its_value(tmp_path: Path) -> None:
    """The reported case: ``--fix`` on a probe.json whose ``seeded_defects``
    key is written with an escape wrote ``1`` over the whole file. Positions
    now decode the key (tree-sitter-json's tree): the fix replaces the
    value alone, the key stays written as it was, the finding is gone."""
    probe = _escaped(_probe_text(floor_probe("a", seeded_defects=2)), "seeded_defects")
    root = make_workspace(tmp_path / "ws", {"a": probe})
    path = probe_folder(root, "a") / "probe.json"
    before = path.read_text(encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", "--fix", "--no-cache", str(root)],
                          capture_output=True, text=True, timeout=120)
    after = path.read_text(encoding="utf-8")
    assert json.loads(after) == {**json.loads(before), "seeded_defects": 1}
    assert after == before.replace('eded_defects": 2', 'eded_defects": 1') and '"\\u0073eeded_defects"' in after
    assert "Fixed 1 problem" in done.stdout and "SE201" not in done.stdout, done.stdout + done.stderr


FRONT_MATTER_METADATA = """metadata:
  version: &v 2
  schema-version: *v
  <<: {b: 1}
  retyped: !!float 3
  plain: 1.10
"""


def test_fix_quotes_only_plain_metadata_values_and_keeps_anchors_and_merges(tmp_path: Path) -> None:
    """SE712's safe quoting fix, through ``--fix``: the front matter still
    loads (a reference YAML loader) with the same keys, the alias still
    names the anchored value, and the plain value is quoted as written;
    an anchored, tagged or merge node is left as it is (quoting ``&v 2``
    dropped the anchor an alias uses: the front matter no longer loaded)."""
    import yaml

    root = make_workspace(tmp_path / "ws", {"a": floor_probe("a")})
    skill = root / "skill" / "SKILL.md"
    skill.write_text(SKILL.replace("---\n\n", FRONT_MATTER_METADATA + "---\n\n", 1), encoding="utf-8")

    def metadata() -> dict:
        return yaml.safe_load(skill.read_text(encoding="utf-8").split("---\n")[1])["metadata"]

    before = metadata()
    subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", "--fix", "--no-cache", str(root)],
                   capture_output=True, text=True, timeout=120)
    after = metadata()
    assert set(after) == set(before)
    assert after["version"] == after["schema-version"] == 2 and after["retyped"] == 3.0 and after["b"] == 1
    assert after["plain"] == "1.10"


def test_a_fix_whose_file_cannot_be_written_is_not_counted(tmp_path: Path, monkeypatch) -> None:
    """A probe.json that becomes a link out of the workspace after the fixes
    were planned, before they are written, is left alone, and its fix is not
    counted as made ("Fixed N" says what is on disk)."""
    from skill_eval.linter import fixes

    root = make_workspace(tmp_path / "ws", {"a": _drifted("a", 3), "b": _drifted("b", 2)})
    before = lint_paths([root])
    probe = probe_folder(root, "a") / "probe.json"
    outside = tmp_path / "outside.json"
    real_plan = fixes.plan_fixes

    def plan_then_swap(*args, **kwargs):
        planned = real_plan(*args, **kwargs)
        outside.write_bytes(probe.read_bytes())
        probe.unlink()
        probe.symlink_to(outside)
        return planned

    monkeypatch.setattr(fixes, "plan_fixes", plan_then_swap)
    applied = apply_fixes(before.diagnostics, before.sessions)
    assert applied.skipped == [probe]
    assert json.loads(outside.read_text())["seeded_defects"] == 3
    assert json.loads((probe_folder(root, "b") / "probe.json").read_text())["seeded_defects"] == 1
    assert applied.fixed == 1
