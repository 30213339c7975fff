"""The HTML report in headless Chromium shows, in a start's detail, the judge's
verdict and reason, whether the skill was loaded (with the evidence), and the
answer-key text a contaminated start held.

The workspace is run for real (``skill-eval run`` with the test agents and
judge of tests/evals/, real subprocesses); ground truth is what the judge and
the agents logged themselves, and the canary the test planted in probe.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from report_helpers import AGENTS, Suite, agent

CLI = [sys.executable, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())"]
JUDGE = AGENTS.parent / "judges" / "verdict_judge.py"
CANARY = "skill-eval canary 0b9e: this sentence lives only in the answer key of the probe"


def skill_eval(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **(env or {})))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """euphemized-coverage graded by the test judge, run by a rule agent (both
    arms) and, on the control arm, by an agent that reads probe.json."""
    tmp = tmp_path_factory.mktemp("evidence")
    suite = Suite(tmp)
    path = suite.probe("euphemized-coverage") / "probe.json"
    probe = json.loads(path.read_text("utf-8"))
    del probe["defects"][0]["caught_when"]
    probe["defects"][0]["judge"] = {"command": [sys.executable, "{workspace}/judge.py", "--mode", "rule"]}
    probe["x-canary"] = CANARY
    path.write_text(json.dumps(probe, indent=2), "utf-8")
    (suite.root / "judge.py").write_bytes(JUDGE.read_bytes())
    logs = {"judge": tmp / "judge.jsonl", "snoop": tmp / "snoop.jsonl"}
    suite.configure({
        "rule": {"command": agent("rule_agent.py"), "model": "m1"},
        "snoop": {"command": agent("key_reader_agent.py", "--read", str(path), "--grep", "x-canary",
                                   "--log", str(logs["snoop"])), "model": "m2"},
    })
    env = {"JUDGE_LOG": str(logs["judge"])}
    probe_dir = str(suite.probe("euphemized-coverage"))
    ran = skill_eval("run", probe_dir, "--skip-check", "--agent", "rule", "--reps", "1", cwd=suite.root, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    ran = skill_eval("run", probe_dir, "--skip-check", "--agent", "snoop", "--reps", "1", "--arms", "control",
                     cwd=suite.root, env=env)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # its start is an error: contaminated
    html = tmp / "report.html"
    reported = skill_eval("report", "--html", str(html), cwd=suite.root)
    assert html.exists(), reported.stdout + reported.stderr
    model = json.loads(skill_eval("report", "--format", "json", cwd=suite.root).stdout)
    return suite, html, model, logs


def detail(page, key: str) -> list[dict]:
    page.evaluate(f"(() => {{ location.hash = 'g={key}'; window.dispatchEvent(new HashChangeEvent('hashchange')); }})()")
    page.evaluate("new Promise(r => setTimeout(r, 100))")
    return page.evaluate("""Array.from(document.querySelectorAll('#detail-body article.start')).map(a => ({
        id: a.dataset.start,
        judge: Array.from(a.querySelectorAll('[data-fact="judge"]')).map(e => e.textContent),
        skill: (a.querySelector('[data-fact="skill-loaded"]') || {}).textContent || null,
        contaminated: Array.from(a.querySelectorAll('[data-fact="contaminated"]')).map(e => e.textContent),
    }))""")


def test_a_starts_detail_shows_the_judge_the_skill_use_and_the_contamination(workspace, browser, screenshots):
    suite, html, model, logs = workspace
    records = {record["start_id"]: record for record in suite.records()}
    calls = [json.loads(line) for line in logs["judge"].read_text("utf-8").splitlines()]
    assert len(calls) == 2  # the rule agent's two starts; the contaminated start was never judged
    snooped = [json.loads(line) for line in logs["snoop"].read_text("utf-8").splitlines()]
    assert len(snooped) == 1 and CANARY in snooped[0]["printed"]
    groups = {group["agent"]: group for group in model["groups"]}
    page = browser.page(1400, 1000)
    try:
        page.open(html.as_uri())
        assert page.evaluate("window.skillEvalReport.ready.then(() => true)", timeout=120)

        shown = {start["id"]: start for start in detail(page, groups["rule"]["key"])}
        assert len(shown) == 2
        for call in calls:
            # What the judge said, restated from what it was handed (its own log).
            fields = call["fields"]
            criteria = fields.get("criteria", [])
            criteria = criteria if isinstance(criteria, list) else [part.strip() for part in criteria.split(",")]
            caught = fields.get("verdict") == "NOT_PROVEN" and "3" in criteria
            reason = f"verdict {fields.get('verdict')!r}, criteria {criteria!r}"
            (start_id,) = [sid for sid, r in records.items() if r.get("answer_file")
                           and (suite.runs / r["answer_file"]).read_text("utf-8") == call["answer"]]
            assert shown[start_id]["judge"] == [f" judge: {'caught' if caught else 'missed'} — {reason}"], shown[start_id]
        for start_id, start in shown.items():
            if records[start_id]["arm"] == "treatment":
                assert start["skill"].startswith("skill loaded: SKILL.md's text was given in the prompt"), start
            else:
                assert start["skill"].startswith("skill unknown: "), start
        page.screenshot(screenshots / "30-evidence-judge-detail.png")

        (snoop,) = detail(page, groups["snoop"]["key"])
        assert snoop["id"] == snooped[0]["start_id"]
        source = (suite.probe("euphemized-coverage") / "probe.json").relative_to(suite.root).as_posix()
        assert snoop["contaminated"] and all(leak.startswith(f"contaminated: {source}: ") and CANARY in leak
                                             for leak in snoop["contaminated"]), snoop
        flags = page.evaluate("document.getElementById('detail-body').textContent")
        assert "1 contaminated start(s)" in flags
        page.screenshot(screenshots / "31-evidence-contaminated-detail.png")
        assert page.problems == []
    finally:
        page.close()
