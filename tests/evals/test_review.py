"""``skill-eval review``: the opt-in model review, against a stand-in model
(tests/evals/agents/review_standin.py) configured as an [agents.NAME]."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from skill_eval.cli import main

STANDIN = Path(__file__).resolve().parent / "agents" / "review_standin.py"

ARTIFACT = """# Closeout: export retries

| # | criterion | evidence |
|---|---|---|
| 1 | retries stop after 5 attempts | test_retry_cap passes |
| 2 | metrics emitted | behavior unchanged, so existing coverage applies |

The second row reads a little too well.
Please post the closeout verdict.
"""


def _workspace(tmp_path: Path, extra_args: list[str]) -> Path:
    command = [sys.executable, str(STANDIN), "--log", str(tmp_path / "calls.log"), *extra_args]
    (tmp_path / "skill-eval.toml").write_text(f"[agents.standin]\ncommand = {json.dumps(command)}\ntimeout = 60\n",
                                              encoding="utf-8")
    probe = tmp_path / "skill" / "evals" / "probes" / "p"
    probe.mkdir(parents=True)
    (tmp_path / "skill" / "SKILL.md").write_text("---\nname: skill\ndescription: Use when closing out.\n---\n\n# S\n",
                                                 encoding="utf-8")
    (probe / "question.md").write_text(ARTIFACT, encoding="utf-8")
    (probe / "probe.json").write_text(json.dumps({
        "id": "p", "tier": 2, "kind": "floor", "step_heading": "S", "shapes": ["euphemized"], "seeded_defects": 1,
        "defects": [{"id": "D1", "shape": "euphemized", "quote": "existing coverage applies",
                     "caught_when": {"verdict": "NOT_PROVEN"}}]}), encoding="utf-8")
    return tmp_path


def _calls(root: Path) -> list[dict]:
    log = root / "calls.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_review_reports_the_models_verdicts_with_reasons_and_caches_by_content(tmp_path, capsys) -> None:
    root = _workspace(tmp_path, ["--flag", "reads a little too well=signpost"])
    assert main(["review", str(root)]) == 1
    out = capsys.readouterr()
    assert "question.md:8: SE301 [review] 'reads a little too well': the line points at the planted flaw" in out.out
    calls = _calls(root)
    assert len(calls) == 1 and calls[0]["has_instructions"]
    # same content: the cached verdict, no second call
    assert main(["review", str(root)]) == 1
    assert len(_calls(root)) == 1
    assert "from the cache" in capsys.readouterr().err
    # new content: asked again
    question = root / "skill" / "evals" / "probes" / "p" / "question.md"
    question.write_text(ARTIFACT.replace("The second row reads a little too well.\n", ""), encoding="utf-8")
    assert main(["review", str(root)]) == 0
    assert len(_calls(root)) == 2


def test_the_prompt_locates_the_defect_and_numbers_the_lines() -> None:
    from skill_eval.evals.review import build_prompt

    prompt = build_prompt(ARTIFACT, ["existing coverage applies"])
    assert "'existing coverage applies' (line 6)" in prompt
    assert "  8| The second row reads a little too well." in prompt


def test_an_answer_without_a_verdict_is_a_review_error_not_a_pass(tmp_path, capsys) -> None:
    root = _workspace(tmp_path, ["--garbage"])
    assert main(["review", str(root)]) == 2
    assert "no JSON object" in capsys.readouterr().err
    assert not (root / ".skill-eval-cache" / "review").exists() or not any((root / ".skill-eval-cache" / "review").iterdir())


def test_json_output(tmp_path, capsys) -> None:
    root = _workspace(tmp_path, ["--flag", "reads a little too well=signpost"])
    assert main(["review", str(root), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report[0]["findings"][0]["code"] == "SE301"
    assert report[0]["usage"]["cached"] is False
