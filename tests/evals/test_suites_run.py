"""Running a real skill-creator suite (ondata's openalex evals.json, copied
under tests/fixtures/lint/suites-ondata) through the probe runner, with a
stand-in agent that logs its own starts and a stand-in judge."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from skill_eval.evals.probes import Workspace
from skill_eval.evals.runner import Runner, select_agent
from skill_eval.evals.suites import load_suite, pass_at_k, suite_report
from skill_eval.evals.records import read_runs_file

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures" / "lint"


def _workspace(tmp_path: Path, source: str) -> tuple[Path, Path, Path]:
    """The suite ``source`` copied to ``tmp_path/ws`` with a stand-in agent that
    logs its own starts outside its scratch folder: it runs unsealed
    (``sandbox = "off"``), as a sealed start can write nothing there
    (tests/evals/test_sandbox.py runs agents sealed)."""
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / source, root)
    starts, verdicts = tmp_path / "starts.jsonl", tmp_path / "verdicts.jsonl"
    command = json.dumps([sys.executable, str(HERE / "agents" / "suite_agent.py"), str(starts)])
    (root / "skill-eval.toml").write_text(f"[agents.standin]\ncommand = {command}\nmodel = \"m\"\ntimeout = 60\n"
                                          "sandbox = \"off\"\n",
                                          encoding="utf-8")
    return root, starts, verdicts


def _judge(verdicts: Path) -> dict:
    return {"command": [sys.executable, str(HERE / "agents" / "suite_judge.py"), str(verdicts)], "timeout": 60}


def _records(root: Path) -> list[dict]:
    merged: dict[str, dict] = {}
    for path in sorted((root / "skills/openalex/evals/runs").glob("*.jsonl")):
        for _line, record in read_runs_file(path).records:
            if record.get("type") in ("start", "outcome"):
                merged.setdefault(record["start_id"], {}).update(record)
    return list(merged.values())


def test_run_a_real_suite_both_arms(tmp_path: Path) -> None:
    root, starts, verdicts = _workspace(tmp_path, "suites-ondata")
    suite = root / "evals/openalex/evals.json"
    raw = json.loads(suite.read_text(encoding="utf-8"))
    workspace = Workspace.open([root])
    probes = load_suite(workspace, suite, _judge(verdicts))
    assert [p.probe_id for p in probes] == [f"eval-{e['id']}" for e in raw["evals"]]
    runner = Runner(workspace, select_agent(workspace.config, "standin"), jobs=2)
    preflight = runner.preflight(probes, ("control", "treatment"))
    assert not preflight.withheld
    plan = runner.plan(preflight.probes, ("control", "treatment"), 2)
    runner.run(plan)

    logged = [json.loads(line) for line in starts.read_text(encoding="utf-8").splitlines()]
    assert len(logged) == len(raw["evals"]) * 2 * 2  # evals x arms x reps, from the agent's own log
    prompts = {e["prompt"].strip().splitlines()[-1] for e in raw["evals"]}
    assert {entry["prompt"] for entry in logged} == prompts
    assert sum(entry["skill"] for entry in logged) == len(raw["evals"]) * 2  # the treatment's starts only

    records = _records(root)
    assert len(records) == len(logged)
    for record in records:
        entry = raw["evals"][int(record["probe"].split("-")[1]) - 1]
        assert [e["text"] for e in record["expectations"]] == entry["expectations"]
        assert all(e["passed"] is (record["arm"] == "treatment") for e in record["expectations"])
        assert all(e["evidence"].startswith("judge:") and "answer:" in e["evidence"] for e in record["expectations"])
    judged = [json.loads(line) for line in verdicts.read_text(encoding="utf-8").splitlines()]
    assert len(judged) == sum(len(e["expectations"]) for e in raw["evals"]) * 2 * 2

    report = suite_report(records, k=1)
    assert len(report) == len(raw["evals"])
    for row in report:
        assert row["arms"]["treatment"]["pass_rate"] == 1.0 and row["arms"]["control"]["pass_rate"] == 0.0
        assert row["effect"] == 1.0
        low, high = row["effect_interval"]
        assert 0 < low < 1.0 and high == 1.0
        assert row["arms"]["treatment"]["pass@1"] == 1.0 and row["arms"]["control"]["pass@1"] == 0.0
        assert row["zone"] == "window"
        assert row["arms"]["treatment"]["pass_at_k"] == {"1": 1.0, "2": 1.0}
        assert row["arms"]["control"]["pass_at_k"] == {"1": 0.0, "2": 0.0}

    # resume: the same plan again has nothing left to start
    again = Runner(Workspace.open([root]), select_agent(workspace.config, "standin"))
    assert again.plan(load_suite(again.workspace, suite, _judge(verdicts)), ("control", "treatment"), 2).starts == []


def test_lint_gate_withholds_a_suite_with_errors(tmp_path: Path) -> None:
    """UiPath's suite names another skill (SE804, an error): none of its 14
    evals is run, and the agent logs no start."""
    root, starts, verdicts = _workspace(tmp_path, "suites-uipath")
    suite = root / "skills/uipath-maestro-case/references/evals/evals.json"
    workspace = Workspace.open([root])
    probes = load_suite(workspace, suite, _judge(verdicts))
    assert len(probes) == 14
    runner = Runner(workspace, select_agent(workspace.config, "standin"))
    preflight = runner.preflight(probes, ("control", "treatment"))
    assert preflight.probes == [] and len(preflight.withheld) == 14
    assert any("SE804" in line for line in preflight.withheld[0].findings)
    assert not starts.exists()


@pytest.mark.parametrize("n, c, k, expected", [
    (1, 1, 1, 1.0), (1, 0, 1, 0.0), (2, 1, 1, 1 / 2), (3, 1, 2, 2 / 3), (4, 1, 2, 1 / 2), (5, 2, 2, 7 / 10),
    (5, 0, 3, 0.0), (5, 3, 3, 1.0), (10, 3, 1, 3 / 10),
])
def test_pass_at_k_by_hand(n: int, c: int, k: int, expected: float) -> None:
    """1 - C(n-c, k)/C(n, k), worked by hand: with n=4, c=1, k=2 the failing
    pairs are C(3,2)=3 of C(4,2)=6, so pass@2 = 1/2; n=5, c=2, k=2: 1 - 3/10."""
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_refuses_impossible_counts() -> None:
    for n, c, k in ((2, 3, 1), (2, 1, 3), (2, 1, 0)):
        with pytest.raises(ValueError):
            pass_at_k(n, c, k)


def test_cli_runs_a_suite_where_it_is(tmp_path: Path, capsys) -> None:
    """`skill-eval run` on an unmodified repository of skill-creator suites:
    without a judge it refuses before any start; with `[suites] judge` it
    runs every eval in both arms, and `skill-eval report` shows the pass
    rates per arm and the effect."""
    from skill_eval.evals.cli import report_main, run_main

    root, starts, verdicts = _workspace(tmp_path, "suites-ondata")
    assert run_main([str(root), "--no-progress", "--reps", "1", "--agent", "standin"]) == 2
    assert "[suites] judge" in capsys.readouterr().err
    assert not starts.exists()
    config = root / "skill-eval.toml"
    judge = json.dumps(_judge(verdicts)["command"])
    config.write_text(config.read_text(encoding="utf-8") + f"\n[suites]\njudge = {judge}\n", encoding="utf-8")
    assert run_main([str(root), "--no-progress", "--reps", "1", "--agent", "standin"]) == 0
    evals = json.loads((root / "evals/openalex/evals.json").read_text(encoding="utf-8"))["evals"]
    ipa = json.loads((root / "evals/ipa/evals.json").read_text(encoding="utf-8"))["evals"]
    logged = starts.read_text(encoding="utf-8").splitlines()
    assert len(logged) == (len(evals) + len(ipa)) * 2  # both suites, both arms, one rep
    capsys.readouterr()
    assert report_main([str(root)]) in (0, 1)
    out = capsys.readouterr().out
    assert "skill-creator evals" in out and "evals/openalex/evals.json eval-1" in out and "+1.00" in out
    assert "no runs on record" not in out and "no probe runs on record" in out
    assert "evals/openalex/evals.json eval-1 (standin, m): window" in out  # control 0/1, treatment 1/1
    assert "evals/ipa/evals.json eval-1 (standin, m): floor" in out  # the stand-in passes only with the openalex skill


def test_eval_files_are_in_the_scratch_project(tmp_path: Path) -> None:
    """An eval's `files` (relative to the skill root) are laid out in each
    start's working folder at those paths, byte for byte (the agent hashes
    what it finds); an edited file makes the eval another identity, so its
    earlier starts do not count for it."""
    import hashlib

    root, starts, verdicts = _workspace(tmp_path, "suites-ondata")
    skill = root / "skills/openalex"
    (skill / "evals/files").mkdir(parents=True)
    data = b"title,year\nOpen data,2023\n"
    (skill / "evals/files/papers.csv").write_bytes(data)
    suite = skill / "evals/evals.json"
    suite.write_text(json.dumps({"skill_name": "openalex", "evals": [
        {"id": 1, "prompt": "Add citation counts to papers.csv", "files": ["evals/files/papers.csv"],
         "expectations": ["papers.csv gains a citations column"]}]}), encoding="utf-8")
    workspace = Workspace.open([root])
    runner = Runner(workspace, select_agent(workspace.config, "standin"))
    probes = load_suite(workspace, suite, _judge(verdicts))
    runner.run(runner.plan(runner.preflight(probes, ("control", "treatment")).probes, ("control", "treatment"), 1))
    logged = [json.loads(line) for line in starts.read_text(encoding="utf-8").splitlines()]
    assert len(logged) == 2
    for entry in logged:
        assert entry["files"]["evals/files/papers.csv"] == hashlib.sha256(data).hexdigest()
        assert entry["files"].keys() == {"prompt.md", "evals/files/papers.csv"}
    (skill / "evals/files/papers.csv").write_bytes(data + b"More,2024\n")
    again = Runner(Workspace.open([root]), select_agent(workspace.config, "standin"))
    assert len(again.plan(load_suite(again.workspace, suite, _judge(verdicts)), ("control", "treatment"), 1).starts) == 2


def test_report_model_gives_pass_at_k_and_mean_per_probe(tmp_path: Path) -> None:
    """Every arm sample of the report model carries `mean` and `pass_at_k`,
    equal to the hand formula on its own reps and caught counts."""
    from math import comb

    from skill_eval.evals.viewer_build import pass_at_ks

    assert pass_at_ks(4, 1) == {"1": 0.25, "2": 0.5, "3": 0.75, "4": 1.0}
    assert pass_at_ks(0, 0) == {}
    for reps in range(1, 8):
        for caught in range(reps + 1):
            for k, value in pass_at_ks(reps, caught).items():
                assert value == pytest.approx(1 - comb(reps - caught, int(k)) / comb(reps, int(k)))


def test_trigger_set_maps_onto_treatment_only_probes(tmp_path: Path, capsys) -> None:
    """ondata's prompts.csv: one probe per query, kind from should_trigger;
    `run --triggers` refuses an agent whose treatment prepends the skill
    (every start would "load" it) before any start."""
    import csv

    from skill_eval.evals.cli import run_main
    from skill_eval.evals.triggers import load_trigger_set

    root, starts, _verdicts = _workspace(tmp_path, "suites-ondata")
    path = root / "evals/openalex/prompts.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    probes = load_trigger_set(Workspace.open([root]), path)
    assert [(p.probe_id, p.kind, p.artifact_bytes.decode()) for p in probes] == [
        (f"trigger-{row['id']}", "should-trigger" if row["should_trigger"] == "true" else "should-not-trigger",
         row["prompt"]) for row in rows]
    assert all(p.skill_path == root / "skills/openalex/SKILL.md" for p in probes)
    assert run_main([str(root), "--no-progress", "--triggers", "--agent", "standin"]) == 2
    assert "prepend" in capsys.readouterr().err
    assert not starts.exists()


def test_known_transcripts_calibrate_the_judge_before_a_run(tmp_path: Path, capsys) -> None:
    """Known answers in transcripts/<eval-id>/ beside the suite, labelled per
    expectation (E1, E2...), are graded by the configured judge before any
    start: labels that agree let the run go on; one that disagrees stops it
    with no start (the agent's log stays empty)."""
    from skill_eval.evals.cli import check_main, run_main

    root, starts, verdicts = _workspace(tmp_path, "suites-ondata")
    config = root / "skill-eval.toml"
    judge = json.dumps(_judge(verdicts)["command"])
    config.write_text(config.read_text(encoding="utf-8") + f"\n[suites]\njudge = {judge}\n", encoding="utf-8")
    evals = json.loads((root / "evals/openalex/evals.json").read_text(encoding="utf-8"))["evals"]
    folder = root / "evals/openalex/transcripts/eval-2"
    folder.mkdir(parents=True)
    labels = len(evals[1]["expectations"])
    caught = "\n".join(f"  E{n}: caught" for n in range(1, labels + 1))
    missed = "\n".join(f"  E{n}: missed" for n in range(1, labels + 1))
    (folder / "with-skill.md").write_text(f"---\nexpect:\n{caught}\n---\nanswer: used the openalex skill\n", "utf-8")
    (folder / "without.md").write_text(f"---\nexpect:\n{missed}\n---\nanswer: no skill\n", "utf-8")
    assert check_main([str(root / "evals/openalex/evals.json")]) == 0
    out = capsys.readouterr().out
    assert out.count("ok   ") == 2
    (folder / "wrong.md").write_text(f"---\nexpect:\n{caught}\n---\nanswer: no skill\n", "utf-8")
    assert check_main([str(root / "evals/openalex/evals.json")]) == 1
    assert run_main([str(root / "evals/openalex/evals.json"), "--no-progress", "--reps", "1", "--agent", "standin"]) == 1
    assert not starts.exists()


def test_suite_report_by_hand() -> None:
    """Per-expectation rates, mean, pass@k, zone and effect on a small mixed
    case worked by hand; the intervals against published values: Wilson's
    for 5/6 is [0.436, 0.970], Newcombe's (1998, method 10) worked example
    56/70 - 48/80 gives [0.0524, 0.3339]."""
    from skill_eval.evals.stats import wilson
    from skill_eval.evals.suites import difference_interval

    def outcome(arm: str, rep: int, passed: list[bool]) -> dict:
        return {"type": "outcome", "status": "ok", "arm": arm, "rep": rep, "probe": "eval-1", "probe_sha256": "h",
                "probe_path": "s/evals/evals.json", "agent": "a", "model": "m",
                "expectations": [{"text": f"e{i}", "passed": p, "evidence": ""} for i, p in enumerate(passed)]}

    records = [outcome("treatment", 1, [True, True, False]), outcome("treatment", 2, [True, True, True]),
               outcome("control", 1, [False, False, False]), outcome("control", 2, [True, False, False]),
               {"type": "start", "arm": "control", "rep": 3, "probe": "eval-1"}]  # interrupted: no sample
    (row,) = suite_report(records)
    treatment, control = row["arms"]["treatment"], row["arms"]["control"]
    assert (treatment["passed"], treatment["total"], control["passed"], control["total"]) == (5, 6, 1, 6)
    assert treatment["mean"] == pytest.approx((2 / 3 + 1) / 2) and control["mean"] == pytest.approx(1 / 6)
    assert treatment["pass_at_k"] == {"1": 0.5, "2": 1.0} and control["pass_at_k"] == {"1": 0.0, "2": 0.0}
    assert row["zone"] == "window" and row["effect"] == pytest.approx(4 / 6)
    assert treatment["interval"] == pytest.approx([0.4365, 0.9699], abs=5e-4)
    assert wilson(5, 6) == pytest.approx((0.4365, 0.9699), abs=5e-4)
    assert difference_interval((56, 70), (48, 80)) == pytest.approx((0.0524, 0.3339), abs=5e-4)
