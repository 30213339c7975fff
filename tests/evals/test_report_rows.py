"""An honest report (issue 13, point 7): one row per probe version, content,
agent and model; edited content flagged; the evidence for separation."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from scipy.stats import fisher_exact

from skill_eval.evals.cli import report_main
from _skill_tree import skill_tree_sha256
from skill_eval.evals.records import append_record, sha256_file
from skill_eval.evals.stats import fisher_greater

PROBE = "euphemized-coverage"


@pytest.mark.parametrize("n_treatment, n_control", [(1, 1), (2, 2), (3, 2), (4, 4), (6, 6), (5, 3)])
def test_fisher_matches_scipy(n_treatment, n_control):
    for caught_t, caught_c in itertools.product(range(n_treatment + 1), range(n_control + 1)):
        table = [[caught_t, n_treatment - caught_t], [caught_c, n_control - caught_c]]
        expected = fisher_exact(table, alternative="greater").pvalue
        assert fisher_greater(caught_t, n_treatment, caught_c, n_control) == pytest.approx(expected, rel=1e-9), table


def _record(suite, arm, rep, caught, *, agent="a", model="m", artifact_sha=None, status="ok"):
    folder = suite.probe(PROBE)
    return {"schema": 2, "type": "start", "start_id": f"{agent}-{model}-{arm}-{rep}-{artifact_sha}", "probe": PROBE,
            "version": 1, "probe_sha256": sha256_file(folder / "probe.json"),
            "artifact_sha256": artifact_sha or sha256_file(folder / "question.md"),
            "skill_sha256": sha256_file(suite.skill / "SKILL.md"), "skill_tree_sha256": skill_tree_sha256(suite.skill),
            "kind": "floor", "defects": ["D1"], "arm": arm,
            "rep": rep, "agent": agent, "model": model, "started": f"2025-01-0{rep}T00:00:00Z"}


def _outcome(start, caught, status="ok"):
    return {"schema": 2, "type": "outcome", "start_id": start["start_id"], "probe": PROBE, "version": 1,
            "arm": start["arm"], "rep": start["rep"], "ended": start["started"], "status": status,
            "caught": ["D1"] if caught else [], "passed": caught}


def write(suite, *samples):
    """``(agent, model, artifact_sha, arm, rep, caught)`` each, as a start and its outcome."""
    for agent, model, artifact_sha, arm, rep, caught in samples:
        start = _record(suite, arm, rep, caught, agent=agent, model=model, artifact_sha=artifact_sha)
        append_record(suite.runs / "r.jsonl", start, fsync=False)
        append_record(suite.runs / "r.jsonl", _outcome(start, caught), fsync=False)


def tables_of(out: str) -> dict[str, str]:
    """The text report's tables by their heading's agent and model."""
    tables: dict[str, str] = {}
    current = None
    for line in out.splitlines():
        if line.startswith("agent "):
            current = line.split(":")[0]
            tables[current] = ""
        elif current is not None and line.startswith("  "):
            tables[current] += line + "\n"
        else:
            current = None
    return tables


def report_json(suite, capsys):
    assert report_main([str(suite.root), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_different_agents_are_never_pooled(suite, capsys):
    write(suite,
          ("a", "m", None, "control", 1, True), ("a", "m", None, "treatment", 1, True),      # ceiling
          ("b", "m", None, "control", 1, False), ("b", "m", None, "treatment", 1, True),     # window
          ("c", "m", None, "control", 1, False), ("c", "m", None, "treatment", 1, False),    # floor
          ("c", "m2", None, "control", 1, False), ("c", "m2", None, "treatment", 1, False))  # floor, another model
    data = report_json(suite, capsys)
    rows = {(row["agent"], row["model"]): row for row in data["groups"]}
    assert set(rows) == {("a", "m"), ("b", "m"), ("c", "m"), ("c", "m2")}
    assert {key: row["zone"] for key, row in rows.items()} == {
        ("a", "m"): "ceiling", ("b", "m"): "window", ("c", "m"): "floor", ("c", "m2"): "floor"}
    assert all(row["arms"]["control"]["reps"] == 1 for row in rows.values())
    assert report_main([str(suite.root)]) == 0
    out = capsys.readouterr().out
    # one table per agent and model, headed by its zone counts
    tables = tables_of(out)
    assert set(tables) == {"agent a · model m", "agent b · model m", "agent c · model m", "agent c · model m2"}
    assert "1/4" not in out and re.search(r"euphemized-coverage\s+1\s+0/1 .*window", tables["agent b · model m"])
    assert "window 1; 0 separated" in out.splitlines()[[l.startswith("agent b ") for l in out.splitlines()].index(True)]


def test_content_edited_without_a_version_bump_is_its_own_flagged_row(suite, capsys):
    write(suite, *[("a", "m", "0" * 64, arm, rep, arm == "treatment") for arm in ("control", "treatment")
                   for rep in (1, 2)])
    write(suite, *[("a", "m", None, arm, rep, True) for arm in ("control", "treatment") for rep in (1, 2)])
    data = report_json(suite, capsys)
    assert len(data["groups"]) == 2
    by_content = {row["on_disk"]: row for row in data["groups"]}
    assert by_content["edited"]["zone"] == "window" and by_content["edited"]["edited_without_bump"] is True
    assert by_content["current"]["zone"] == "ceiling" and by_content["current"]["edited_without_bump"] is True
    assert report_main([str(suite.root)]) == 0
    out = capsys.readouterr().out
    assert out.count("EDITED WITHOUT A VERSION BUMP") == 2


def test_every_row_shows_the_evidence_for_separation_and_the_real_rep_count(suite, capsys):
    write(suite, *[("two", "m", None, "control", rep, False) for rep in (1, 2)],
          *[("two", "m", None, "treatment", rep, True) for rep in (1, 2)],
          *[("four", "m", None, "control", rep, False) for rep in (1, 2, 3, 4)],
          *[("four", "m", None, "treatment", rep, True) for rep in (1, 2, 3, 4)])
    data = report_json(suite, capsys)
    rows = {row["agent"]: row for row in data["groups"]}
    assert rows["two"]["zone"] == rows["four"]["zone"] == "window"
    assert rows["two"]["evidence"]["p"] == pytest.approx(1 / 6)
    assert rows["two"]["evidence"]["separated"] is False
    assert rows["four"]["evidence"]["p"] == pytest.approx(1 / 70)
    assert rows["four"]["evidence"]["separated"] is True
    assert "(from 2 to 4)" in data["meta"]["note"] and "do not prove a rate" in data["meta"]["note"]
    assert report_main([str(suite.root)]) == 0
    tables = tables_of(capsys.readouterr().out)
    assert re.search(r"window\s+pass@2 0\.00/1\.00\s+not separated at this sample \(p=0\.17\)", tables["agent two · model m"])
    assert re.search(r"window\s+pass@4 0\.00/1\.00\s+separated \(p=0\.0143\)", tables["agent four · model m"])


def test_several_skills_get_a_skill_column_and_a_running_start_is_not_failed(suite, capsys):
    import fcntl
    import os
    import shutil

    write(suite, ("a", "m", None, "control", 1, False), ("a", "m", None, "treatment", 1, True))
    shutil.copytree(suite.skill, suite.root / "verify-copy")
    held = suite.runs / "live.jsonl"
    append_record(held, _record(suite, "treatment", 2, False, agent="a", model="m"), fsync=False)
    fd = os.open(held, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as the runner holds its file while it runs the start
        assert report_main([str(suite.root)]) == 0
    finally:
        os.close(fd)
    (table,) = tables_of(capsys.readouterr().out).values()
    rows = [line.split() for line in table.splitlines()[1:]]
    assert table.split()[0] == "skill" and sorted(row[0] for row in rows) == ["verify-closeout", "verify-copy"]
    live = next(line for line in table.splitlines() if line.lstrip().startswith("verify-closeout"))
    assert "1/1 [0.21-1.00] +1 running" in live and "interrupted" not in live and "ungraded" not in live
    # nobody holds it any more: the start was interrupted, its rep has no outcome
    assert report_main([str(suite.root)]) == 0
    (table,) = tables_of(capsys.readouterr().out).values()
    line = next(line for line in table.splitlines() if line.lstrip().startswith("verify-closeout"))
    assert "+1 interrupted" in line and "1 rep(s) ungraded, their last start: 1 was interrupted" in line


def test_a_symbolic_link_in_the_way_of_the_records_is_refused(suite, capsys, tmp_path):
    write(suite, ("a", "m", None, "control", 1, False))
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("")
    (suite.runs / "linked.jsonl").symlink_to(outside)
    assert report_main([str(suite.root)]) == 2
    err = capsys.readouterr().err
    assert "linked.jsonl: is a symbolic link" in err and "Traceback" not in err
