"""Trigger tests with the real Claude Code: `skill-eval run --triggers` on a
skill-creator trigger set (a prompts.csv), inside a loopback-only network
namespace (netns_driver.py), against the stand-in model scripted to invoke
the skill only for queries holding a word of its choosing. Ground truth is
the stand-in's own log (which requests it answered with a Skill tool call),
never what the runner says about itself; the report's precision and recall
are then checked against the confusion counts worked out from that log and
the set's labels.

Skipped when the CLI is not installed; failed instead under
``SKILL_EVAL_REQUIRE_AGENT_CLIS=1``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from agents_real_helpers import API_KEYS, MODELS, base_env, endpoint_settings, read_log, require_cli, run_phases
from skill_eval.evals.triggers import trigger_report
from skill_eval.linter.run_records import parse_runs

PRESET = "claude-code"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "suites-ondata"
WORD = "zebracorn"
"""The stand-in invokes the skill only for a request holding this word (in no skill, prompt or harness text)."""
QUERIES = [  # (id, should_trigger, query): the stand-in triggers on those holding WORD
    ("t-01", True, f"Find scholarly papers on {WORD} habitat data published after 2020"),
    ("t-02", True, f"List the most cited works about {WORD} migration, with their DOIs"),
    ("t-03", True, "Search OpenAlex for articles on open government data since 2019"),
    ("n-01", False, "Write a haiku about autumn leaves"),
    ("n-02", False, f"Tell me a joke about a {WORD}"),
    ("n-03", False, "Convert 30 degrees Celsius to Fahrenheit"),
]
REPS = 1
TIMEOUT = 120.0


def toml_value(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


@pytest.fixture(scope="module")
def trigger_run(tmp_path_factory):
    executable = require_cli(PRESET)
    work = tmp_path_factory.mktemp("triggers")
    root = work / "ws"
    for skill in ("openalex", "ipa"):  # ipa: a distractor, installed beside the skill under test
        (root / "skills" / skill).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / "skills" / skill / "SKILL.md", root / "skills" / skill / "SKILL.md")
    (root / "evals" / "openalex").mkdir(parents=True)
    rows = ["id,should_trigger,prompt"] + [f'{id_},{str(should).lower()},"{query}"' for id_, should, query in QUERIES]
    (root / "evals" / "openalex" / "prompts.csv").write_text("\n".join(rows) + "\n", "utf-8")
    env, args = endpoint_settings(PRESET, "{standin}", with_key=False)
    (root / "skill-eval.toml").write_text("\n".join([
        "[agents.claude]", f"preset = {json.dumps(PRESET)}", f"executable = {json.dumps(str(executable))}",
        f"model = {json.dumps(MODELS[PRESET])}", f"timeout = {TIMEOUT}", f"args = {json.dumps(args)}",
        f"env = {toml_value(env)}", "", "[suites]", 'distractors = ["skills/ipa"]', ""]), "utf-8")
    scratch = work / "scratch"
    scratch.mkdir()
    variable, key = API_KEYS[PRESET]
    runner = [sys.executable, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())", "run",
              "--no-progress", "--triggers", "--reps", str(REPS), "-j", "1", str(root)]
    spec = {
        "endpoints": {"standin": {"log": str(work / "standin.jsonl"),
                                  "script": {"answer": "Done.", "skill_name": "openalex", "trigger_words": [WORD]}}},
        "fill_files": [str(root / "skill-eval.toml")],
        "phases": [[{"name": "triggers", "argv": runner, "env": dict(base_env(), SKILL_EVAL_SCRATCH=str(scratch),
                                                                        **{variable: key}),
                     "cwd": str(root), "timeout": 600}]],
    }
    result = run_phases(work, spec, outer_timeout=660)
    runs = root / "skills" / "openalex" / "evals" / "runs"
    merged: dict[str, dict] = {}
    for path in sorted(runs.glob("*.jsonl")):
        for _line, record in parse_runs(path, path.read_bytes()).records:
            if record.get("type") in ("start", "outcome"):
                merged.setdefault(record["start_id"], {}).update(record)
    return result, list(merged.values()), read_log(work / "standin.jsonl")


def test_recorded_trigger_outcomes_equal_the_stand_in_log(trigger_run):
    result, records, log = trigger_run
    command = result["commands"]["triggers"]
    assert command["exit_code"] == 0, command["stderr"][-3000:]
    assert len(records) == len(QUERIES) * REPS  # one treatment start per query and rep, no control
    assert {record["arm"] for record in records} == {"treatment"}
    by_query = {query: id_ for id_, _should, query in QUERIES}
    for record in records:
        assert record["status"] == "ok", record
        (query,) = [query for query in by_query if record["probe"] == f"trigger-{by_query[query]}"]
        # what the stand-in did for this query, from its own log: a Skill tool call or not
        asked = [entry for entry in log if query in json.dumps(entry["body"], ensure_ascii=False)
                 and entry["api"] == "anthropic-messages"]
        assert asked, query
        invoked = any(entry["reply"].startswith("tool:") for entry in asked)
        assert invoked == (WORD in query)  # the script did as told
        assert record["skill_loaded"] is invoked, (query, record.get("skill_evidence"))
        expected_kind = "should-trigger" if dict((q, s) for _i, s, q in QUERIES)[query] else "should-not-trigger"
        assert record["kind"] == expected_kind
    assert result["names"] == []  # no host name was looked up


def test_precision_and_recall_from_the_log(trigger_run):
    _result, records, log = trigger_run
    counts = {"tp": 0, "fn": 0, "fp": 0, "tn": 0}
    for _id, should, query in QUERIES:
        invoked = any(entry["reply"].startswith("tool:") for entry in log
                      if query in json.dumps(entry["body"], ensure_ascii=False))
        counts[("tp" if invoked else "fn") if should else ("fp" if invoked else "tn")] += REPS
    (row,) = trigger_report(records)
    assert {key: row[key] for key in counts} == counts == {"tp": 2, "fn": 1, "fp": 1, "tn": 2}
    assert row["precision"]["rate"] == pytest.approx(2 / 3) and row["recall"]["rate"] == pytest.approx(2 / 3)
    low, high = row["precision"]["interval"]
    assert low < 2 / 3 < high


def test_the_distractor_skill_was_listed_to_the_model(trigger_run):
    """`[suites] distractors`: Claude Code listed the distractor's own
    description to the model beside the tested skill's in every start (the
    stand-in's log of what it was sent), and no start loaded the distractor."""
    _result, records, log = trigger_run
    import re

    import yaml

    def description(skill: str) -> str:
        text = (FIXTURES / "skills" / skill / "SKILL.md").read_text("utf-8")
        front = yaml.safe_load(re.match(r"---\n(.*?)\n---\n", text, re.S).group(1))
        words = " ".join(front["description"].split())[:60]
        assert len(words) >= 40
        return words

    requests = [json.dumps(entry["body"], ensure_ascii=False) for entry in log if entry["api"] == "anthropic-messages"]
    for _id, _should, query in QUERIES:
        sent = [text for text in requests if query in text]
        assert sent and all(description("ipa") in text and description("openalex") in text for text in sent), query
    assert not any('"skill": "ipa"' in text for text in requests)
