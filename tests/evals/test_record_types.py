"""The runner's typed records (:mod:`skill_eval.evals.records`): their
published JSON Schema is the one generated from the types, and the records a
real run and a real calibration write are admitted by it, keep ``schema`` and
``type`` first, and have only the fields, of the types, that the reader
(:mod:`skill_eval.linter.run_records`, older than the types) knows."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema

from skill_eval.evals.records import SCHEMA_PATH, schema_text
from skill_eval.linter.run_records import _RECORD_FIELDS, odd_field, parse_runs

ROOT = Path(__file__).resolve().parents[2]

START_KEYS = {"schema", "type", "start_id", "probe", "version", "probe_sha256", "artifact_sha256", "skill_sha256",
              "skill_tree_sha256", "probe_path", "kind", "band", "defects", "arm", "rep", "agent", "model", "started",
              "plan_id", "runner", "sandbox", "calibration_rule", "calibration_rule_sha256"}
"""The keys the dict-built start record of ``skill-eval calibrate`` had, for a
command agent's first start (docs/format.md, "Run records")."""


def test_the_published_schema_is_the_generated_one() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), (
        "run `python -m skill_eval.evals.records` to regenerate evals/viewer_assets/run-records.schema.json")


def test_records_of_a_real_calibration_are_admitted_by_the_schema(tmp_path: Path) -> None:
    workspace = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", workspace)
    ran = subprocess.run([sys.executable, "-m", "skill_eval", "calibrate", "--agent", "scripted", "--no-progress"],
                         cwd=workspace, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in ran.stderr, ran.stderr
    (path,) = (workspace / "skills" / "closeout-review" / "evals" / "runs").glob("*.jsonl")
    raw = path.read_bytes()
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    by_type: dict[str, list[dict]] = {}
    for line in raw.splitlines():
        record = json.loads(line)
        errors = [error.message for error in validator.iter_errors(record)]
        assert not errors, (line, errors)
        assert line.startswith(b'{"schema":2,"type":"%s",' % record["type"].encode())
        assert odd_field(record) is None, line
        assert set(record) - {"schema", "type"} <= set(_RECORD_FIELDS[record["type"]]), line
        by_type.setdefault(record["type"], []).append(record)
    assert set(by_type) == {"plan", "start", "outcome", "decision"}
    assert {frozenset(record) for record in by_type["start"]} == {frozenset(START_KEYS)}
    assert all(record["status"] == "ok" and isinstance(record["caught"], list) for record in by_type["outcome"])
    parsed = parse_runs(path, raw)
    assert not parsed.torn and not parsed.torn_other and not parsed.unfinished
    assert len(parsed.records) == len(by_type["start"]) == len(by_type["outcome"])
    assert len(parsed.decisions) == len(by_type["decision"]) == 3

    # the schema is no rubber stamp: a start with its rep as a string, or without its start_id, is refused
    start = by_type["start"][0]
    assert not validator.is_valid({**start, "rep": "1"})
    assert not validator.is_valid({key: value for key, value in start.items() if key != "start_id"})


def test_a_start_line_of_the_dict_writer_still_reads_and_validates(tmp_path: Path) -> None:
    """A start and its outcome as the dict-built writer wrote them (``start_id``
    before the probe's identity) read as one record, and are admitted."""
    start = {"schema": 2, "type": "start", "start_id": "s1", "probe": "p", "version": 1, "probe_sha256": "a" * 64,
             "artifact_sha256": "b" * 64, "skill_sha256": None, "skill_tree_sha256": None, "probe_path": "p/probe.json",
             "kind": "floor", "band": None, "defects": ["D1"], "arm": "control", "rep": 1, "agent": "x", "model": None,
             "started": "2026-01-01T00:00:00Z", "plan_id": "p1", "runner": {"version": "0.1.0"}, "sandbox": "off"}
    outcome = {"schema": 2, "type": "outcome", "start_id": "s1", "probe": "p", "version": 1, "arm": "control",
               "rep": 1, "ended": "2026-01-01T00:00:01Z", "duration_s": 1.0, "status": "ok", "exit_code": 0,
               "answer_file": "answers/p/v1/control-r1-s1.txt", "answer_source": "json", "caught": ["D1"],
               "passed": True}
    raw = (json.dumps(start, separators=(",", ":")) + "\n" + json.dumps(outcome, separators=(",", ":")) + "\n").encode()
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    assert validator.is_valid(start) and validator.is_valid(outcome)
    (record,) = [record for _line, record in parse_runs(tmp_path / "old.jsonl", raw).records]
    assert record["start_id"] == "s1" and record["caught"] == ["D1"] and record["passed"] is True
