"""The HTML report in headless Chromium: the unsealed flag (a chip in the
table, a flag filter kept in the page's address, a line in the detail, each
unsealed start marked), pass@k beside the zone in the detail, and the
sections of skill-creator evals and trigger tests.

The probe runs are real (``skill-eval run``, the rule agent of tests/evals/,
real subprocesses): one agent sealed (bubblewrap), one unsealed. Ground truth
is the runs files as written, paired by the test (``Suite.records``): each
start's ``sandbox`` and ``passed``; pass@k is computed here from them with
``math.comb``. The suite and trigger rows are built by the report's own
functions from start records the test writes; the page must show the
model's numbers.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from cdp_browser import wait_for
from report_helpers import Suite, agent

from skill_eval.evals.sandbox import sandbox_problem
from skill_eval.evals.suites import suite_report
from skill_eval.evals.triggers import trigger_report
from skill_eval.evals.viewer import write_html

CLI = [sys.executable, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())"]
PROBE = "euphemized-coverage"


def skill_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """The rule agent twice: ``sealed`` (sandbox bwrap, when this machine has
    one) and ``open`` (sandbox off), 2 reps per arm each."""
    tmp = tmp_path_factory.mktemp("unsealed")
    suite = Suite(tmp)
    agents = {"open": {"command": agent("rule_agent.py"), "model": "m-open", "timeout": 60}}
    if sandbox_problem() is None:
        agents["sealed"] = {"command": agent("rule_agent.py"), "model": "m-sealed", "timeout": 60, "sandbox": "on"}
    suite.configure(agents)
    for name in agents:
        ran = skill_eval("run", str(suite.probe(PROBE)), "--no-progress", "--skip-check", "--agent", name,
                         "--reps", "2", cwd=suite.root)
        assert ran.returncode == 0, ran.stdout + ran.stderr
    html = tmp / "report.html"
    reported = skill_eval("report", "--html", str(html), cwd=suite.root)
    assert html.is_file(), reported.stdout + reported.stderr
    model = json.loads(skill_eval("report", "--format", "json", cwd=suite.root).stdout)
    return suite, html, model


def open_page(browser, url: str):
    page = browser.page(1400, 1000)
    page.open(url)
    assert page.evaluate("window.skillEvalReport.ready.then(() => true)", timeout=120)
    return page


def set_filter(page, field: str, value: str) -> None:
    page.evaluate(f"(() => {{ const s = document.getElementById('filter-{field}'); s.value = {json.dumps(value)};"
                  " s.dispatchEvent(new Event('change')); })()")


def table(page) -> dict[str, str | None]:
    """Each row's key and the text of its unsealed chip (null without one)."""
    return dict(page.evaluate("Array.from(document.querySelectorAll('#groups tbody tr')).map(r => [r.dataset.key,"
                              " (r.querySelector('[data-flag=\"unsealed\"]') || {}).textContent || null])"))


def pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k) / C(n, k), restated here (docs/report.md, "An arm sample")."""
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def test_unsealed_starts_are_flagged_filtered_through_the_url_and_marked(workspace, browser, screenshots):
    suite, html, model = workspace
    records = suite.records()
    unsealed_of = {}
    for group in model["groups"]:
        mine = [r for r in records if r["agent"] == group["agent"]]
        unsealed_of[group["key"]] = sum(r["sandbox"] == "off" for r in mine)
        assert len(mine) == len(group["starts"]) == 4
    by_agent = {group["agent"]: group for group in model["groups"]}
    assert unsealed_of[by_agent["open"]["key"]] == 4
    if "sealed" in by_agent:
        assert unsealed_of[by_agent["sealed"]["key"]] == 0
    page = open_page(browser, html.as_uri())
    try:
        assert page.evaluate("document.getElementById('suite-section').hidden && document.getElementById('trigger-section').hidden")
        shown = table(page)
        assert shown == {key: (f"{count} unsealed start(s)" if count else None) for key, count in unsealed_of.items()}

        set_filter(page, "flag", "unsealed")
        assert list(table(page)) == [key for key, count in unsealed_of.items() if count]
        address = page.evaluate("location.href")
        assert "flag=unsealed" in address.split("#", 1)[1].split("&")
        page.screenshot(screenshots / "40-unsealed-filter.png")
        again = open_page(browser, address)
        try:
            assert again.evaluate("document.getElementById('filter-flag').value") == "unsealed"
            assert list(table(again)) == [key for key, count in unsealed_of.items() if count]
            assert again.problems == []
        finally:
            again.close()

        for group in model["groups"]:
            page.evaluate(f"(() => {{ location.hash = 'flag=unsealed&g={group['key']}';"
                          " window.dispatchEvent(new HashChangeEvent('hashchange')); })()")
            assert wait_for(page, f"!document.getElementById('detail').hidden && "
                                  f"document.getElementById('detail').dataset.id === '{group['key']}'")
            detail = page.evaluate("""(() => ({
              line: (document.querySelector('#detail-body [data-fact="unsealed-starts"]') || {}).textContent || null,
              passAtK: (document.querySelector('#detail-body [data-fact="pass-at-k"]') || {}).textContent || null,
              starts: Array.from(document.querySelectorAll('#detail-body article.start')).map(a =>
                [a.dataset.start, !!a.querySelector('.start-head [data-fact="unsealed"]')]),
            }))()""")
            mine = {r["start_id"]: r for r in records if r["agent"] == group["agent"]}
            count = unsealed_of[group["key"]]
            if count:
                assert detail["line"] == (f"{count} of {len(mine)} start(s) ran without the sandbox (sandbox: off): "
                                          "their agent could read the answer keys")
            else:
                assert detail["line"] is None
            assert dict(detail["starts"]) == {sid: r["sandbox"] == "off" for sid, r in mine.items()}
            parts = []
            for arm in ("control", "treatment"):
                graded = [r for r in mine.values() if r["arm"] == arm and r["status"] == "ok"]
                assert all(isinstance(r["passed"], bool) for r in graded)
                caught = sum(r["passed"] for r in graded)
                parts.append(f"{arm} " + ", ".join(f"{k}: {pass_at_k(len(graded), caught, k):.2f}"
                                                   for k in range(1, min(len(graded), 5) + 1)))
            assert detail["passAtK"] == " · pass@k " + "; ".join(parts)
            page.screenshot(screenshots / f"41-unsealed-detail-{group['agent']}.png")
        assert page.problems == []
    finally:
        page.close()


def _eval_start(probe: str, arm: str, results: list[bool], status: str = "ok") -> dict:
    return {"probe_path": "verify-closeout/evals/evals.json", "probe": probe, "probe_sha256": "cd" * 32, "agent": "claude",
            "model": "sonnet", "arm": arm, "status": status,
            "expectations": [{"text": f"expectation {i}", "passed": passed} for i, passed in enumerate(results)]}


def test_suite_evals_and_trigger_tests_show_the_models_numbers(workspace, browser, screenshots, tmp_path):
    _suite, _html, model = workspace
    records = [_eval_start("summary-cites", "control", [True, False, False]),
               _eval_start("summary-cites", "control", [False, False, False]),
               _eval_start("summary-cites", "control", [True, True, False]),
               _eval_start("summary-cites", "treatment", [True, True, True]),
               _eval_start("summary-cites", "treatment", [True, True, False]),
               _eval_start("summary-cites", "treatment", [True, True, True]),
               _eval_start("only-control", "control", [True, False])]
    queries = [("should-trigger", True)] * 7 + [("should-trigger", False)] * 2 + [("should-not-trigger", True)] + \
              [("should-not-trigger", False)] * 5
    triggers = [{"kind": kind, "probe": f"q{i}", "probe_path": "verify-closeout/evals/triggers.json", "agent": "claude",
                 "model": "sonnet", "status": "ok", "skill_loaded": loaded} for i, (kind, loaded) in enumerate(queries)]
    model = dict(model, suite_evals=suite_report(records), trigger_tests=trigger_report(triggers))
    path = tmp_path / "suites.html"
    write_html(model, path)
    page = open_page(browser, path.as_uri())
    try:
        assert page.evaluate("!document.getElementById('suite-section').hidden && !document.getElementById('trigger-section').hidden")
        rows = page.evaluate("""Array.from(document.querySelectorAll('#suite-evals tbody tr')).map(r => ({
          eval: r.dataset.eval, cells: Array.from(r.children).map(td => td.textContent),
          rates: Array.from(r.querySelectorAll('[data-fact="rate"]')).map(e => e.textContent),
          passAtK: Array.from(r.querySelectorAll('[data-fact="pass-at-k"]')).map(e => e.textContent),
          effect: r.querySelector('[data-fact="effect"]').textContent }))""")
        assert [row["eval"] for row in rows] == [row["eval"] for row in model["suite_evals"]]
        for shown, row in zip(rows, model["suite_evals"]):
            assert shown["cells"][4] == row["zone"]
            expected_rates, expected_at_k = [], []
            for arm in ("control", "treatment"):
                stats = row["arms"].get(arm)
                if not stats:
                    continue
                low, high = stats["interval"]
                expected_rates.append(f"{stats['passed']}/{stats['total']} = {stats['pass_rate']:.2f} [{low:.2f}, {high:.2f}]")
                expected_at_k.append("pass@k " + ", ".join(f"{k}: {v:.2f}" for k, v in stats["pass_at_k"].items()))
            assert shown["rates"] == expected_rates
            assert shown["passAtK"] == expected_at_k
            if "effect" in row:
                low, high = row["effect_interval"]
                assert shown["effect"] == f"{row['effect']:+.2f} [{low:+.2f}, {high:+.2f}]"
            else:
                assert shown["effect"] == "-"
        cites = next(row for row in rows if row["eval"] == "summary-cites")
        assert cites["rates"][0].startswith("3/9 = 0.33 [") and cites["rates"][1].startswith("8/9 = 0.89 [")
        assert cites["effect"].startswith("+0.56 [")

        (trigger,) = page.evaluate("""Array.from(document.querySelectorAll('#trigger-tests tbody tr')).map(r =>
          Array.from(r.children).map(td => td.textContent))""")
        (row,) = model["trigger_tests"]
        assert (row["tp"], row["fn"], row["fp"], row["tn"]) == (7, 2, 1, 5)
        cells = []
        for name in ("precision", "recall"):
            low, high = row[name]["interval"]
            cells.append(f"{row[name]['hits']}/{row[name]['of']} = {row[name]['rate']:.2f} [{low:.2f}, {high:.2f}]")
        assert trigger == ["claude", "sonnet", *cells, "7", "2", "1", "5", "0", "0"]
        assert cells[0].startswith("7/8 = 0.88 [") and cells[1].startswith("7/9 = 0.78 [")
        page.screenshot(screenshots / "42-suite-and-trigger-sections.png", full_page=True)
        assert page.problems == []
    finally:
        page.close()
