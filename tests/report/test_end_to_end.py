"""End to end, as a user runs it: ``skill-eval run`` (a real process) with real
subprocess agents on a small workspace, then ``skill-eval report --html
--junit`` (a real process), the page opened in headless Chromium and the
JUnit XML read back by junitparser.

Ground truth is what the agents did, from their own logs
(tests/report/agents/verdict_agent.py logs each start it answered and whether
it caught the gaps; its answer names the start), the reference grader and
linter, and the configuration the test chose (which agent is adverse, which
crashes) — never the report's own data.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cdp_browser import wait_for
from report_helpers import AGENTS as TEST_AGENTS, Suite
from skill_eval.evals.grading import grade_answer
from skill_eval.evals.probes import Workspace

junitparser = pytest.importorskip("junitparser", reason="junitparser is not installed (pip install -e '.[test]')")

VERDICT_AGENT = Path(__file__).resolve().parent / "agents" / "verdict_agent.py"
CLI = [sys.executable, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())"]
PROBES = ("euphemized-coverage", "two-gaps")


def skill_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def expected_answer(start_id: str, decision: str) -> str:
    """What verdict_agent.py prints for a start (its own code, restated)."""
    body = "verdict: NOT_PROVEN\ncriteria: 2, 3, 4" if decision == "hit" else "verdict: PASS\ncriteria: none"
    return f"Closeout review (start {start_id}).\n\n{body}\n"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """Three agents on the two probes of the fixture suite: one the skill helps
    (window), one it hurts (adverse), one that crashes (errored)."""
    tmp = tmp_path_factory.mktemp("e2e")
    suite = Suite(tmp)
    logs = {"helped": tmp / "helped.log", "hurt": tmp / "hurt.log"}
    suite.configure({
        "helped": {"command": [sys.executable, str(VERDICT_AGENT), "--log", str(logs["helped"])], "model": "m1"},
        "hurt": {"command": [sys.executable, str(VERDICT_AGENT), "--log", str(logs["hurt"]), "--invert"], "model": "m2"},
        "crash": {"command": [sys.executable, str(TEST_AGENTS / "crash_agent.py")]},
    })
    for args, status in ((("--agent", "helped"), 0), (("--agent", "hurt"), 0),
                         (("--agent", "crash", "--arms", "control", "--reps", "1"), 1)):
        ran = skill_eval("run", str(suite.root), "--skip-check", *args, cwd=suite.root)
        assert ran.returncode == status, ran.stdout + ran.stderr
    html, xml = tmp / "report.html", tmp / "report.xml"
    reported = skill_eval("report", "--html", str(html), "--junit", str(xml), cwd=suite.root)
    decisions = {agent: dict(line.split() for line in log.read_text().splitlines()) for agent, log in logs.items()}
    return suite, html, xml, reported, decisions


def test_report_exits_1_on_adverse_and_errored_probes(workspace):
    _suite, html, xml, reported, _decisions = workspace
    assert reported.returncode == 1, reported.stderr
    assert ("6 test case(s), 4 failed (adverse, isolation failure or unsealed starts), 2 errored (reps whose every "
            "start failed, contaminated starts, or answers with no field the output spec names)") in reported.stderr
    assert html.is_file() and xml.is_file()
    # the text tables are still the command's output
    assert "agent hurt · model m2: 2 probe version(s): adverse 2" in reported.stdout


def test_junit_read_back(workspace):
    _suite, _html, xml, _reported, _decisions = workspace
    suites = {suite.name: suite for suite in junitparser.JUnitXml.fromfile(str(xml))}
    assert set(suites) == {"helped · m1", "hurt · m2", "crash · (agent default)"}
    # Every agent here ran unsealed (they log outside their scratch folder): the
    # helped agent's window fails as unsealed; adverse and unresolved reps come first.
    expected = {"helped · m1": ("Failure", "unsealed"), "hurt · m2": ("Failure", "adverse"),
                "crash · (agent default)": ("Error", "unresolved-reps")}
    for name, (kind, kind_type) in expected.items():
        cases = {case.name: case for case in suites[name]}
        assert set(cases) == {f"{probe} v1" for probe in PROBES}
        for case in cases.values():
            assert case.classname == "verify-closeout"
            results = list(case.result)
            (result,) = results
            assert type(result).__name__ == kind and result.type == kind_type
            assert "ran without the sandbox" in result.message
            if name == "helped · m1":
                assert "zone: window" in case.system_out
        totals = (suites[name].tests, suites[name].failures, suites[name].errors)
        assert totals == (2, 2 if kind == "Failure" else 0, 2 if kind == "Error" else 0)
    assert all(record["sandbox"] == "off" for record in _suite.records())


def shown_starts(page) -> list[dict]:
    return page.evaluate("""Array.from(document.querySelectorAll('#detail-body article.start')).map(a => ({
        id: a.dataset.start,
        head: a.querySelector('.start-head').textContent,
        answer: a.querySelector('pre.answer') ? a.querySelector('pre.answer').textContent : null,
        stderr: a.querySelector('pre.stderr') ? a.querySelector('pre.stderr').textContent : null,
        grading: Array.from(a.querySelectorAll('ul.grading > li')).map(li => li.textContent),
    }))""")


def test_every_answer_and_its_grading_in_the_browser(workspace, browser, screenshots):
    from skill_eval.linter.engine import lint_paths

    suite, html, _xml, _reported, decisions = workspace
    probes = {}
    loaded = Workspace.open([suite.root])
    for path in loaded.probe_paths():
        probe = loaded.load(path)
        probes[probe.probe_id] = probe
    page = browser.page(1400, 1000)
    try:
        page.open(html.as_uri())
        assert page.evaluate("window.skillEvalReport.ready.then(() => true)", timeout=120)
        rows = page.evaluate("Array.from(document.querySelectorAll('#groups tbody tr')).map(r => "
                             "[r.dataset.key, Array.from(r.cells).map(c => c.textContent)])")
        assert len(rows) == 6
        seen: dict[str, set[str]] = {"helped": set(), "hurt": set()}
        crashed = 0
        for key, cells in rows:
            # open the detail from the table, as a person would
            page.evaluate(f"document.querySelector('#groups tbody tr[data-key=\"{key}\"]').scrollIntoView({{block: 'center'}})")
            box = page.evaluate(f"(() => {{ const b = document.querySelector('#groups tbody tr[data-key=\"{key}\"] td:nth-child(2)')"
                                ".getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; })()")
            page.click(*box)
            assert wait_for(page, f"document.getElementById('detail').dataset.id === {json.dumps(key)} && "
                                  "!document.getElementById('detail').hidden")
            title = page.evaluate("document.getElementById('detail-title').textContent")
            probe_id = next(p for p in PROBES if title.startswith(f"{p} v1"))
            agent = title.split(" — ")[1].split(" · ")[0]
            body = page.evaluate("document.getElementById('detail-body').textContent")
            # the lint findings at run time: the reference linter's findings on this probe
            assert "Lint findings at run time" in body
            folder = probes[probe_id].folder
            for diagnostic in lint_paths([folder / "probe.json"]).diagnostics:
                if diagnostic.probe == folder:
                    assert f"{diagnostic.code} {diagnostic.severity.value}" in body and diagnostic.message in body
            for start in shown_starts(page):
                if agent == "crash":
                    crashed += 1
                    assert "control · rep 1 · error" in start["head"] and "exit 3" in start["head"]
                    assert "boom" in start["stderr"]
                    assert start["answer"] == "partial output before the crash\n"
                    continue
                decision = decisions[agent].pop(start["id"])  # each start the agent answered, shown once
                seen[agent].add(start["id"])
                text = expected_answer(start["id"], decision)
                assert start["answer"] == text
                caught = decision == "hit"
                assert ("caught" if caught else "missed") in start["head"].split(" · ")[2]
                _answer, grades = grade_answer(text, list(probes[probe_id].defects), probes[probe_id].output_spec)
                assert len(start["grading"]) == len(grades)
                for grade, shown in zip(grades, start["grading"]):
                    assert grade.caught == caught
                    assert shown.startswith(f"{grade.defect_id} {'caught ✓' if caught else 'missed ✗'}")
                    for reason in grade.reasons:
                        assert reason.split(": ", 1)[1] in shown
            if agent == "hurt" and probe_id == "two-gaps":
                page.screenshot(screenshots / "20-end-to-end-adverse-detail.png")
            page.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape'}))")
            if agent == "hurt":
                assert "adverse" in cells
        # every start the agents logged was shown, and nothing else
        assert decisions == {"helped": {}, "hurt": {}} and len(seen["helped"]) == len(seen["hurt"]) == 8
        assert crashed == 2
        page.screenshot(screenshots / "21-end-to-end-page.png", full_page=True)
        assert page.problems == [] and page.requests == [html.as_uri()]
    finally:
        page.close()
