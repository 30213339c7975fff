"""The runner's keys of ``[suites]`` (``judge``, ``judge-timeout``,
``distractors``), read by the runner from the config file
(:func:`skill_eval.evals.suites.load_suite_settings`), not kept in the
linter's config: a run uses what the file says now, and a wrong value stops
the run before any start with a message naming the file and the key."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

from skill_eval.evals.cli import run_main
from skill_eval.evals.probes import Workspace
from skill_eval.evals.suites import configured_judge
from skill_eval.evals.triggers import load_trigger_sets, trigger_paths

HERE = Path(__file__).resolve().parent
SUITES = HERE.parent / "fixtures" / "lint" / "suites-ondata"
QUERIES = [("q1", True, "list recent works on coral reefs from OpenAlex"), ("q2", False, "what is the capital of Peru")]


def _trigger_workspace(tmp_path: Path, suites: str) -> Path:
    """Two skills (openalex, tested; ipa, a possible distractor), a trigger set of
    openalex, a stand-in command agent that starts nothing here, and ``suites``."""
    root = tmp_path / "ws"
    for skill in ("openalex", "ipa"):
        (root / "skills" / skill).mkdir(parents=True)
        shutil.copyfile(SUITES / "skills" / skill / "SKILL.md", root / "skills" / skill / "SKILL.md")
    (root / "evals" / "openalex").mkdir(parents=True)
    rows = ["id,should_trigger,prompt"] + [f'{id_},{str(should).lower()},"{query}"' for id_, should, query in QUERIES]
    (root / "evals" / "openalex" / "prompts.csv").write_text("\n".join(rows) + "\n", "utf-8")
    starts = tmp_path / "starts.jsonl"
    command = json.dumps([sys.executable, str(HERE / "agents" / "suite_agent.py"), str(starts)])
    (root / "skill-eval.toml").write_text(f'[agents.standin]\ncommand = {command}\ntreatment = "args"\n'
                                          f'treatment-args = ["--skill"]\n\n[suites]\n{suites}\n', "utf-8")
    return root


def _loaded(root: Path) -> list:
    workspace = Workspace.open([root])
    probes, errors = load_trigger_sets(workspace, trigger_paths(workspace), ".claude/skills")
    assert not errors
    return probes


def test_distractors_are_read_from_the_file_as_it_is_now(tmp_path: Path) -> None:
    """Each trigger query installs the configured distractor's files beside the
    tested skill, and its identity holds their hashes; after the file drops the
    distractor, a fresh workspace installs none and the queries are other rows."""
    root = _trigger_workspace(tmp_path, 'distractors = ["skills/ipa"]')
    with_ipa = _loaded(root)
    ipa = (root / "skills" / "ipa" / "SKILL.md").read_bytes()
    assert [p.probe_id for p in with_ipa] == ["trigger-q1", "trigger-q2"]
    for probe in with_ipa:
        assert dict(probe.input_files) == {".claude/skills/ipa/SKILL.md": ipa}
        assert json.loads(probe.probe_bytes)["distractors"] == {
            ".claude/skills/ipa/SKILL.md": hashlib.sha256(ipa).hexdigest()}
    config = root / "skill-eval.toml"
    config.write_text(config.read_text("utf-8").replace('["skills/ipa"]', "[]"), "utf-8")
    without = _loaded(root)
    assert all(probe.input_files == () for probe in without)
    assert [p.probe_bytes for p in without] != [p.probe_bytes for p in with_ipa]


def test_a_command_agent_with_distractors_is_refused(tmp_path: Path, capsys) -> None:
    """`skill-eval run --triggers` reads ``distractors`` from the file: a command
    agent has no skills folder to install them in."""
    root = _trigger_workspace(tmp_path, 'distractors = ["skills/ipa"]')
    assert run_main([str(root), "--triggers", "--no-progress", "--agent", "standin"]) == 2
    assert "[suites] distractors are installed in a preset's skills folder" in capsys.readouterr().err
    assert not (tmp_path / "starts.jsonl").exists()


def test_a_wrong_distractors_value_names_the_file_and_key(tmp_path: Path, capsys) -> None:
    root = _trigger_workspace(tmp_path, 'distractors = "skills/ipa"')
    assert run_main([str(root), "--triggers", "--no-progress", "--agent", "standin"]) == 2
    assert f"{root / 'skill-eval.toml'}: `suites.distractors` must be a list of strings" in capsys.readouterr().err


def test_the_judge_and_its_timeout_come_from_the_file(tmp_path: Path, capsys) -> None:
    """``configured_judge`` is ``[suites] judge`` with ``judge-timeout`` (60 s
    unless set); a wrong timeout stops `skill-eval run` of a suite before any
    start, naming the file and the key."""
    root = tmp_path / "ws"
    shutil.copytree(SUITES, root)
    config = root / "skill-eval.toml"
    starts = tmp_path / "starts.jsonl"
    command = json.dumps([sys.executable, str(HERE / "agents" / "suite_agent.py"), str(starts)])
    config.write_text(f'[agents.standin]\ncommand = {command}\nsandbox = "off"\n\n[suites]\n'
                      'judge = ["python3", "judge.py"]\n', "utf-8")
    assert configured_judge(Workspace.open([root])) == {"command": ["python3", "judge.py"], "timeout": 60.0}
    config.write_text(config.read_text("utf-8") + "judge-timeout = 5\n", "utf-8")
    assert configured_judge(Workspace.open([root])) == {"command": ["python3", "judge.py"], "timeout": 5.0}
    config.write_text(config.read_text("utf-8").replace("judge-timeout = 5", "judge-timeout = -1"), "utf-8")
    assert run_main([str(root), "--no-progress", "--reps", "1", "--agent", "standin"]) == 2
    assert f"{config}: `suites.judge-timeout` must be a positive number of seconds" in capsys.readouterr().err
    assert not starts.exists()
