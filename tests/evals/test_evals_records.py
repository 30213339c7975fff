"""The run-record file format: whole appends, torn lines, samples and zones."""

from __future__ import annotations

import json
import threading

import pytest

from skill_eval.evals.records import append_record, count_starts, read_runs_file
from skill_eval.evals.stats import wilson
from skill_eval.linter.run_records import ArmSample, record_passed, sample_versions, zone_of


def rec(arm: str, rep: int, caught: bool, *, status: str = "ok", version: int = 1, probe: str = "p", **extra):
    record = {"probe": probe, "version": version, "probe_sha256": f"h{version}", "artifact_sha256": "a",
              "arm": arm, "rep": rep, "agent": "x", "model": "m", "status": status, "kind": "floor",
              "defects": ["D1"], "caught": ["D1"] if caught and status == "ok" else [], "ended": f"2025-01-0{rep}"}
    record.update(extra)
    return record


def test_append_and_read(tmp_path):
    path = tmp_path / "evals" / "runs" / "p.jsonl"
    append_record(path, rec("control", 1, True))
    append_record(path, rec("control", 2, False))
    runs = read_runs_file(path)
    assert [r["rep"] for _line, r in runs.records] == [1, 2]
    assert runs.torn == [] and runs.starts == 2
    assert path.read_bytes().count(b"\n") == 2


def test_torn_last_line_is_ignored_counted_and_followed_by_a_fresh_line(tmp_path):
    path = tmp_path / "p.jsonl"
    append_record(path, rec("control", 1, True))
    whole = path.read_bytes()
    with open(path, "ab") as handle:  # a writer killed mid-line
        handle.write(b'{"probe": "p", "version": 1, "arm": "treat')
    runs = read_runs_file(path)
    assert len(runs.records) == 1 and runs.torn == [2] and runs.starts == 2
    append_record(path, rec("treatment", 1, True))
    lines = path.read_bytes().split(b"\n")
    assert lines[0] + b"\n" == whole
    assert lines[1].startswith(b'{"probe": "p", "version": 1, "arm": "treat') and not lines[1].endswith(b"}")
    assert json.loads(lines[2])["arm"] == "treatment"
    runs = read_runs_file(path)
    assert [r["arm"] for _l, r in runs.records] == ["control", "treatment"]
    assert runs.torn == [2] and runs.starts == 3


def test_concurrent_appends_stay_whole(tmp_path):
    path = tmp_path / "p.jsonl"
    padding = "x" * 5000  # longer than a pipe buffer: one write still lands whole

    def writer(n):
        for rep in range(25):
            append_record(path, rec("control", rep, True, note=f"{n}-{padding}"), fsync=False)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    runs = read_runs_file(path)
    assert len(runs.records) == 200 and runs.torn == []


def test_wilson_interval():
    low, high = wilson(0, 2)
    assert low == 0.0 and high == pytest.approx(0.6576, abs=1e-4)
    low, high = wilson(2, 2)
    assert low == pytest.approx(0.3424, abs=1e-4) and high == 1.0
    low, high = wilson(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)


@pytest.mark.parametrize("control, treatment, zone", [
    ((2, 2), (2, 2), "ceiling"),
    ((2, 2), (0, 0), "ceiling"),      # control alone records a ceiling
    ((0, 2), (2, 2), "window"),
    ((0, 2), (1, 2), "window"),
    ((0, 2), (0, 2), "floor"),
    ((2, 2), (1, 2), "adverse"),
    ((1, 2), (0, 2), "adverse"),
    ((1, 2), (2, 2), "mixed"),
    ((1, 2), (1, 2), "mixed"),
    ((0, 2), (0, 0), "pending"),
    ((0, 0), (2, 2), "pending"),
])
def test_zones(control, treatment, zone):
    assert zone_of(ArmSample(reps=control[1], caught=control[0]), ArmSample(reps=treatment[1], caught=treatment[0])) == zone


def test_samples_from_fixed_records_count_errors_and_retries_once():
    records = [
        rec("control", 1, False), rec("control", 2, False),
        rec("treatment", 1, True),
        rec("treatment", 2, False, status="error"),     # failed ...
        rec("treatment", 2, True),                       # ... and retried: one graded rep
        rec("treatment", 3, False, status="timeout"),    # never retried
        rec("control", 1, True, version=2), rec("control", 2, True, version=2),
    ]
    samples = sample_versions(records)
    v1 = samples[("p", 1)]
    assert (v1.arms["control"].reps, v1.arms["control"].caught) == (2, 0)
    assert (v1.arms["treatment"].reps, v1.arms["treatment"].caught) == (2, 2)
    assert v1.arms["treatment"].errors == 0 and v1.arms["treatment"].timeouts == 1
    assert v1.starts == 6 and v1.zone == "window"
    assert samples[("p", 2)].zone == "ceiling"


def test_band_records_score_against_the_band():
    band = {"kind": "band", "band": {"min_caught": 1, "max_caught": 2}, "defects": ["D1", "D2", "D3"]}
    assert record_passed({"status": "ok", "caught": ["D1"], **band}) is True
    assert record_passed({"status": "ok", "caught": ["D1", "D2", "D3"], **band}) is False
    assert record_passed({"status": "ok", "caught": [], **band}) is False
    assert record_passed({"status": "error", "caught": [], **band}) is None


def test_count_starts_includes_failures_and_torn_lines(tmp_path):
    one, two = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    append_record(one, rec("control", 1, True, status="error"))
    append_record(one, rec("control", 2, True, status="timeout"))
    append_record(two, rec("control", 1, True))
    with open(two, "ab") as handle:
        handle.write(b'{"probe":')
    assert count_starts([one, two]) == 4


def test_schema_2_starts_outcomes_plans_and_torn_lines(tmp_path):
    from skill_eval.evals.records import RunsLog, reserved_starts, writer_alive
    from skill_eval.linter.run_records import parse_runs

    path = tmp_path / "evals" / "runs" / "r.jsonl"
    path.parent.mkdir(parents=True)
    log = RunsLog(path)
    plan = {"schema": 2, "type": "plan", "plan_id": "P", "agent": "x", "model": "m",
            "starts": [["p", 1, "h1", "a", "s", "control", 1], ["p", 1, "h1", "a", "s", "control", 2]]}
    start = {"schema": 2, "type": "start", "start_id": "S1", "probe": "p", "version": 1, "probe_sha256": "h1",
             "artifact_sha256": "a", "skill_sha256": "s", "arm": "control", "rep": 1, "agent": "x", "model": "m",
             "kind": "floor", "defects": ["D1"], "started": "t0"}
    log.append([plan, start])
    runs = parse_runs(path, path.read_bytes())
    # a start without outcome: counted, interrupted unless its runner is alive (it is: the log holds the lock)
    assert runs.starts == 1 and runs.unfinished == ["S1"] and runs.records[0][1]["status"] == "interrupted"
    assert writer_alive(path) and [r[6] for r in reserved_starts(runs)] == [2]
    log.append([{"schema": 2, "type": "outcome", "start_id": "S1", "probe": "p", "version": 1, "arm": "control",
                 "rep": 1, "ended": "t1", "status": "ok", "caught": ["D1"], "passed": True}], durable=False)
    log.close()
    assert not writer_alive(path)
    with open(path, "ab") as handle:  # killed while writing an outcome, then while writing a start
        handle.write(b'{"schema":2,"type":"outcome","start_id":"S2","pro')
        handle.write(b'\n{"schema":2,"type":"start","start_id":"S3","pro')
    runs = parse_runs(path, path.read_bytes())
    [(line, record)] = runs.records
    assert line == 2 and record["status"] == "ok" and record["caught"] == ["D1"] and record["started"] == "t0"
    assert runs.torn == [5] and runs.torn_other == [4] and runs.starts == 2
    assert count_starts([path]) == 2
