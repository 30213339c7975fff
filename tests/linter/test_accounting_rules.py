"""SE201-SE207: fixes, related locations, the CLI's --fix, and robustness."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from _workspaces import QUOTE, defect, floor_probe, lint, make_workspace, probe_folder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skill_eval.linter.cli import main
from skill_eval.linter.fixes import apply_edits
from skill_eval.linter.rules.accounting.se205_dependent_defects import sentence_starts

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"
SE201_CASE = FIXTURES / "se201-drifted-defect-count"


def _probe_path(case: Path, name: str) -> Path:
    return case / "verify-closeout" / "evals" / "probes" / name / "probe.json"


def _text_at(path: Path, span) -> str:
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    assert span.start.line == span.end.line
    return lines[span.start.line - 1][span.start.column - 1:span.end.column - 1]


# -- SE201 ---------------------------------------------------------------------------------


def test_drifted_count_fix_is_safe_when_counts_agree() -> None:
    path = _probe_path(SE201_CASE, "count-too-high")
    [diagnostic] = lint(path, code="SE201")
    [fix] = diagnostic.fixes
    assert fix.safe and fix.title == "Set seeded_defects to 2"
    [edit] = fix.edits
    assert _text_at(path, edit.span) == "3"
    fixed = json.loads(apply_edits(path.read_text(encoding="utf-8"), fix.edits))
    assert fixed["seeded_defects"] == 2


def test_drifted_count_fix_is_unsafe_when_a_quote_is_missing() -> None:
    path = _probe_path(SE201_CASE, "quote-edited-out")
    [diagnostic] = lint(path, code="SE201")
    assert [(f.title, f.safe) for f in diagnostic.fixes] == [("Set seeded_defects to 1", False)]
    [related] = diagnostic.related
    assert _text_at(path, related.span) == '"covered by the regression suite"'


def test_drifted_count_with_unreadable_artifact_compares_the_list_only(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe(seeded_defects=2)}, artifact=b"caf\xe9")
    [diagnostic] = lint(root, code="SE201")
    assert "lists 1 defect" in diagnostic.message and "present" not in diagnostic.message
    assert [(f.title, f.safe) for f in diagnostic.fixes] == [("Set seeded_defects to 1", False)]
    assert not lint(root, code="SE202")


def test_tier_1_probes_are_not_counted(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe(tier=1, seeded_defects=5)})
    assert not lint(root, code="SE201")
    root = make_workspace(tmp_path / "ws2", {"p": floor_probe(seeded_defects=5)})
    assert len(lint(root, code="SE201")) == 1


def _copy_case(tmp_path: Path, probe: str, crlf: bool, bom: bool = False) -> Path:
    target = tmp_path / "ws"
    shutil.copytree(SE201_CASE, target)
    (target / "expected.txt").unlink()
    path = _probe_path(target, probe)
    data = path.read_bytes()
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    if bom:
        data = b"\xef\xbb\xbf" + data
    path.write_bytes(data)
    return target


def test_cli_fix_rewrites_the_count_and_keeps_crlf(tmp_path: Path, capsys) -> None:
    workspace = _copy_case(tmp_path, "count-too-high", crlf=True, bom=True)
    path = _probe_path(workspace, "count-too-high")
    before = path.read_bytes()
    unsafe = _probe_path(workspace, "quote-edited-out")
    unsafe_before = unsafe.read_bytes()
    main([str(workspace), "--fix", "--select", "SE201"])
    after = path.read_bytes()
    assert after == before.replace(b'"seeded_defects": 3,', b'"seeded_defects": 2,')
    assert after.startswith(b"\xef\xbb\xbf")
    assert after.count(b"\r\n") == after.count(b"\n") > 10
    assert unsafe.read_bytes() == unsafe_before
    remaining = [d for d in lint(workspace, code="SE201") if d.path == path]
    assert remaining == []
    assert "quote-edited-out" in capsys.readouterr().out


def test_cli_fix_keeps_lf_files_lf(tmp_path: Path) -> None:
    workspace = _copy_case(tmp_path, "count-zero", crlf=False)
    path = _probe_path(workspace, "count-zero")
    main([str(workspace), "--fix", "--select", "SE201"])
    after = path.read_bytes()
    assert b'"seeded_defects": 1,' in after and b"\r" not in after


# -- SE202 -----------------------------------------------------------------------------------


def test_quote_not_found_names_the_nearest_line() -> None:
    path = _probe_path(SE201_CASE, "quote-edited-out")
    [diagnostic] = lint(path, code="SE202")
    assert _text_at(path, diagnostic.span) == '"covered by the regression suite"'
    [related] = diagnostic.related
    assert related.span.path == path.parent / "question.md"
    assert related.span.start.line == 6
    assert "replayed events are rejected" in diagnostic.message


def test_ambiguous_quote_lists_every_occurrence() -> None:
    case = FIXTURES / "se202-quote-not-found"
    [diagnostic] = lint(_probe_path(case, "ambiguous"), code="SE202")
    question = _probe_path(case, "ambiguous").parent / "question.md"
    assert [(r.span.path, r.span.start.line) for r in diagnostic.related] == [(question, 5), (question, 6)]
    assert all(_text_at(question, r.span) == "indexer lane | indexer lane" for r in diagnostic.related)


def test_quote_found_across_crlf_and_nfd(tmp_path: Path) -> None:
    artifact = "\ufeffWe shipped the cafe\u0301\r\nmenu   sync.\r\n".encode("utf-8")
    root = make_workspace(tmp_path / "ws", {"p": floor_probe(defects=[defect(quote="the caf\u00e9 menu sync")])}, artifact=artifact)
    assert not lint(root, code="SE202")
    assert not lint(root, code="SE201")


# -- SE203 / SE204 / SE205 / SE206 / SE207 -------------------------------------------------------


def test_floor_and_band_bounds(tmp_path: Path) -> None:
    two = [defect("D1", "test_backoff passes"), defect("D2")]
    root = make_workspace(tmp_path / "ws", {
        "floor-two": floor_probe("floor-two", seeded_defects=2, defects=two),
        "band-ok": floor_probe("band-ok", kind="band", seeded_defects=2, defects=two, band={"min_caught": 2, "max_caught": 2}),
        "band-high": floor_probe("band-high", kind="band", seeded_defects=2, defects=two, band={"min_caught": 3, "max_caught": 3}),
    })
    assert [d.path.parent.name for d in lint(root, code="SE203")] == ["floor-two"]
    found = lint(root, code="SE204")
    assert sorted((d.path.parent.name, d.message.split(" ")[1]) for d in found) == [("band-high", "max_caught"), ("band-high", "min_caught")]


def test_dependent_defects_related_locations() -> None:
    case = FIXTURES / "se205-dependent-defects"
    path = _probe_path(case, "same-sentence")
    [diagnostic] = lint(path, code="SE205")
    first, sentence = diagnostic.related
    assert _text_at(path, first.span) == '"admins can raise a quota"'
    assert sentence.span.path.name == "question.md"
    assert sentence.span.start.line == 5 and sentence.span.end.line == 6


def test_sentences_split_at_punctuation_cells_and_blocks() -> None:
    text = "Intro line one\ncontinues here. Second one!\n- item a\n- item b\n| x | y |\n\nLast"
    pieces = [text[a:b].strip(" \n|") for a, b in zip(sentence_starts(text), sentence_starts(text)[1:] + [len(text)])]
    pieces = [p for p in pieces if p]
    assert pieces == ["Intro line one\ncontinues here.", "Second one!", "- item a", "- item b", "x", "y", "Last"]


def test_duplicate_defect_id_points_at_both(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"p": floor_probe(kind="band", seeded_defects=2, band={"min_caught": 1, "max_caught": 2},
                                                              defects=[defect("D1", "test_backoff passes"), defect("D1")])})
    [diagnostic] = lint(root, code="SE206")
    path = probe_folder(root, "p") / "probe.json"
    assert _text_at(path, diagnostic.span) == '"D1"'
    [related] = diagnostic.related
    assert related.span.start.line < diagnostic.span.start.line


def test_empty_caught_when_only(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {
        "empty": floor_probe("empty", defects=[defect(caught_when={})]),
        "graded": floor_probe("graded", defects=[defect(caught_when={"verdict": {"not": "PASS"}})]),
        "judged": floor_probe("judged", defects=[dict(defect(caught_when={}), judge={"command": ["python3", "j.py"]})]),
    })
    assert [d.path.parent.name for d in lint(root, code="SE207")] == ["empty"]


# -- robustness ---------------------------------------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 5) | st.text(max_size=8)
    | st.sampled_from(["floor", "band", "euphemized", "time-pressure", "D1", QUOTE]),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["id", "shape", "quote", "caught_when", "min_caught", "max_caught", "verdict"]), children, max_size=4),
    max_leaves=12,
)
_paths = st.sampled_from([
    ("tier",), ("kind",), ("shapes",), ("shapes", 0), ("seeded_defects",), ("defects",), ("defects", 0), ("defects", 1),
    ("defects", 0, "id"), ("defects", 1, "shape"), ("defects", 0, "quote"), ("defects", 1, "caught_when"),
    ("band",), ("band", "min_caught"), ("band", "max_caught"), ("question",), ("skill",), ("output_spec",), ("id",),
])


def _band_probe() -> dict:
    return floor_probe(kind="band", shapes=["euphemized", "time-pressure"], seeded_defects=2,
                       defects=[defect("D1", "test_backoff passes"), defect("D2")], band={"min_caught": 1, "max_caught": 2})


def _set(data, path, value) -> None:
    for part in path[:-1]:
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and part < len(data):
            data = data[part]
        else:
            return
    if isinstance(data, dict) or (isinstance(data, list) and isinstance(path[-1], int) and path[-1] < len(data)):
        data[path[-1]] = value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.tuples(_paths, _json), min_size=1, max_size=3))
def test_rules_never_crash_on_malformed_probes(tmp_path: Path, changes: list) -> None:
    data = _band_probe()
    for path, value in changes:
        _set(data, path, value)
    root = tmp_path / "ws"
    if not root.exists():
        make_workspace(root, {"p": data})
    (probe_folder(root, "p") / "probe.json").write_text(json.dumps(data), encoding="utf-8")
    assert not lint(root, code="SE000")
