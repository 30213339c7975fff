"""skill-creator suites (evals.json, trigger sets) in the linter and the
language server's state: real suites copied from public repositories
(tests/fixtures/lint/suites-*; their expected findings are in each
expected.txt), planted mistakes at their lines, and bad input that gives a
finding naming the file, never a traceback."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from skill_eval.linter.config import Config
from skill_eval.linter.engine import lint_paths
from skill_eval.linter.suites import parse_suite
from skill_eval.linter.textfile import TextDocument

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"
ONDATA = FIXTURES / "suites-ondata"
UIPATH = FIXTURES / "suites-uipath"
PLANTED = FIXTURES / "se8xx-suites"


def _suite_findings(result) -> list:
    return [d for d in result.diagnostics if d.code.startswith("SE8")]


def test_real_suites_parse_whole() -> None:
    """Every eval and every CSV row of the real files is read: counted
    against Python's own json and csv modules, not the linter's parser."""
    for path in (ONDATA / "evals/openalex/evals.json", ONDATA / "evals/ipa/evals.json",
                 UIPATH / "skills/uipath-maestro-case/references/evals/evals.json"):
        raw = json.loads(path.read_text(encoding="utf-8"))
        suite = parse_suite(TextDocument(path, path.read_text(encoding="utf-8")))
        assert not suite.problems
        assert [case.id for case in suite.evals] == [entry["id"] for entry in raw["evals"]]
        for case, entry in zip(suite.evals, raw["evals"]):
            key = "expectations" if "expectations" in entry else "assertions"
            assert len(case.expectations) == len(entry[key])
    uipath = json.loads((UIPATH / "skills/uipath-maestro-case/references/evals/evals.json").read_text(encoding="utf-8"))
    assert len(uipath["evals"]) == 14
    path = ONDATA / "evals/openalex/prompts.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    suite = parse_suite(TextDocument(path, path.read_text(encoding="utf-8")))
    assert [(q.id, q.query, q.should_trigger) for q in suite.triggers] == [
        (row["id"], row["prompt"], row["should_trigger"] == "true") for row in rows]
    assert sum(not q.should_trigger for q in suite.triggers) == 3


def test_real_suites_findings_only_where_wrong() -> None:
    """ondata's suites are well formed (its SKILL.md front matter has its own
    SE712): no suite finding. UiPath's names its skill 'case-management' in a
    skill named 'uipath-maestro-case' (a real mismatch, at line 2), and its
    "the skill was triggered" expectations need a transcript (info)."""
    assert _suite_findings(lint_paths([ONDATA])) == []
    found = _suite_findings(lint_paths([UIPATH]))
    errors = [d for d in found if d.severity.value == "error"]
    assert [(d.code, d.start.line) for d in errors] == [("SE804", 2)]
    text = (UIPATH / "skills/uipath-maestro-case/references/evals/evals.json").read_text(encoding="utf-8").splitlines()
    infos = [d for d in found if d.code == "SE809"]
    assert infos and all(d.severity.value == "info" for d in infos)
    triggered = [n for n, line in enumerate(text, 1) if "skill was triggered" in line]
    assert set(triggered) <= {d.start.line for d in infos}


def test_planted_mistakes_at_their_lines() -> None:
    found = {(d.code, d.path.name, d.start.line) for d in _suite_findings(lint_paths([PLANTED]))}
    lines = (PLANTED / "skills/pdf-forms/evals/evals.json").read_text(encoding="utf-8").splitlines()

    def line_of(text: str, nth: int = 0) -> int:
        return [n for n, line in enumerate(lines, 1) if text in line][nth]

    assert ("SE803", "evals.json", line_of('"id": 1', 1)) in found
    assert ("SE805", "evals.json", line_of("missing.pdf")) in found
    assert ("SE806", "evals.json", line_of("etc/passwd")) in found
    assert ("SE804", "evals.json", line_of('"skill_name"')) in found
    assert ("SE807", "evals.json", line_of('"prompt": "  "')) in found
    assert ("SE809", "evals.json", line_of("used script")) in found
    assert ("SE801", "evals.json", 4) in found  # broken-json's trailing comma
    assert ("SE804", "evals.json", 2) in found  # evals/ghost names no skill
    assert ("SE811", "prompts.csv", 6) in found
    assert ("SE812", "prompts.csv", 4) in found  # "Write a fibonacci function"
    assert ("SE812", "prompts.csv", 5) not in found  # "Convert this PDF report": a near miss
    assert ("SE802", "prompts.csv", 7) in found
    assert ("SE810", "trigger-evals.json", 1) in found


def test_a_suite_named_on_the_command_line(tmp_path: Path) -> None:
    """A `<skill>.prompts.csv` (OpenAI's blog's name) is no walked name: named
    on the command line it is linted, and its skill is the one its name implies."""
    shutil.copytree(PLANTED, tmp_path / "ws")
    named = tmp_path / "ws/evals/pdf-forms.prompts.csv"
    named.write_text("id,should_trigger,prompt\na,true,Fill the PDF form\nb,true,Fill the PDF form\n", encoding="utf-8")
    found = {(d.code, d.path.name) for d in lint_paths([named]).diagnostics}
    assert found == {("SE810", named.name), ("SE811", named.name)}


@pytest.mark.parametrize("cut", range(0, 400, 7))
def test_truncated_suite_gives_a_finding_not_a_traceback(tmp_path: Path, cut: int) -> None:
    """Every prefix of a real evals.json (and of a CSV) lints without SE000,
    and an unparsable one gives SE801 naming the file."""
    root = tmp_path / "ws"
    shutil.copytree(ONDATA, root)
    for name in ("evals/openalex/evals.json", "evals/openalex/prompts.csv"):
        path = root / name
        path.write_bytes(path.read_bytes()[:cut])
    result = lint_paths([root])
    assert not [d for d in result.diagnostics if d.code == "SE000"]
    evals = root / "evals/openalex/evals.json"
    if cut and not _parses(evals):
        assert any(d.code == "SE801" and d.path == evals for d in result.diagnostics)


def _parses(path: Path) -> bool:
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("content", [b"\xff\xfe\x00bad", b"[1, 2, 3]", b"null", b'{"evals": {"id": 1}}',
                                     b'{"evals": [{"id": true, "prompt": 3, "files": "x", "expectations": [null]}]}',
                                     b"[" * 5000 + b"]" * 5000])
def test_wrong_content_is_a_finding(tmp_path: Path, content: bytes) -> None:
    root = tmp_path / "ws"
    shutil.copytree(PLANTED, root)
    path = root / "skills/pdf-forms/evals/evals.json"
    path.write_bytes(content)
    found = [d for d in lint_paths([root]).diagnostics if d.path == path]
    assert found and {d.code for d in found} <= {"SE801", "SE802"}, found


def test_cache_sees_an_edited_suite(tmp_path: Path) -> None:
    """With the on-disk cache, a fixed `skill_name` clears SE804 on the next
    run, and a new suite in a walked workspace is linted (the run record
    and the walk record both know suites)."""
    import os
    import time

    root = tmp_path / "ws"
    shutil.copytree(UIPATH, root)
    old = time.time() - 60
    for folder, _dirs, files in os.walk(root):
        for name in files + [""]:
            os.utime(os.path.join(folder, name) if name else folder, (old, old))
    first = {d.code for d in lint_paths([root], cache=True).diagnostics}
    assert "SE804" in first
    assert {d.code for d in lint_paths([root], cache=True).diagnostics} == first
    suite = root / "skills/uipath-maestro-case/references/evals/evals.json"
    suite.write_text(suite.read_text(encoding="utf-8").replace('"case-management"', '"uipath-maestro-case"', 1), encoding="utf-8")
    assert "SE804" not in {d.code for d in lint_paths([root], cache=True).diagnostics}
    extra = root / "skills/uipath-maestro-case/evals/evals.json"
    extra.parent.mkdir()
    extra.write_text('{"skill_name": "uipath-maestro-case", "evals": [{"id": 1, "prompt": "", "expectations": ["x"]}]}',
                     encoding="utf-8")
    assert ("SE807", extra) in {(d.code, d.path) for d in lint_paths([root], cache=True).diagnostics}


def test_language_server_state_lints_suites(tmp_path: Path) -> None:
    """The language server's scan finds the suite; an unsaved edit that fixes
    `skill_name` clears the finding, one that breaks the JSON gives SE801."""
    pytest.importorskip("pygls")
    from skill_eval.server.state import WorkspaceState

    root = tmp_path / "ws"
    shutil.copytree(UIPATH, root)
    suite = root / "skills/uipath-maestro-case/references/evals/evals.json"
    buffers: dict[Path, str] = {}
    state = WorkspaceState(root, Config(), buffers, jobs=1, cache=False)
    for _step in state.scan():
        pass
    assert "SE804" in {d.code for d in state.diagnostics_for(suite)}
    buffers[suite] = suite.read_text(encoding="utf-8").replace('"case-management"', '"uipath-maestro-case"', 1)
    state.changed({suite})
    assert "SE804" not in {d.code for d in state.diagnostics_for(suite)}
    buffers[suite] = buffers[suite].replace('"evals": [', '"evals": [,', 1)
    state.changed({suite})
    assert "SE801" in {d.code for d in state.diagnostics_for(suite)}


def test_config_globs_name_more_suites(tmp_path: Path) -> None:
    """`[suites] paths` globs (relative to the root) name suites discovery
    would not find by name and place: linted in a walk (with and without the
    cache), named alone, and not linted without the config."""
    root = tmp_path / "ws"
    shutil.copytree(ONDATA, root)
    cases = root / "qa/openalex/cases.json"
    cases.parent.mkdir(parents=True)
    cases.write_text('{"skill_name": "openalex", "evals": [{"id": 1, "prompt": "a", "expectations": ["x"]},\n'
                     ' {"id": 1, "prompt": "b", "expectations": ["y"]}]}\n', encoding="utf-8")
    assert not [d for d in lint_paths([root]).diagnostics if d.path == cases]
    (root / "skill-eval.toml").write_text('[suites]\npaths = ["qa/*/cases.json"]\n', encoding="utf-8")
    for run in (lambda: lint_paths([root]), lambda: lint_paths([root], cache=True), lambda: lint_paths([cases])):
        found = [(d.code, d.start.line) for d in run().diagnostics if d.path == cases]
        assert found == [("SE803", 2)], found
