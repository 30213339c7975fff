"""Run records with a field of the wrong JSON type: set aside, never half-read.

The records are real: ``skill-eval run`` and ``skill-eval calibrate`` with the
examples' scripted agent (a real subprocess, no network) write a plan, starts,
outcomes and decisions once per module. Each case changes one field of one
line (parsed with ``json``, the field replaced, dumped back) to another JSON
type than docs/format.md ("Run records") gives it, then runs the readers in
process: ``skill-eval report`` (text with JUnit, JSON with HTML),
``skill-eval run --dry-run``, ``skill-eval calibrate --dry-run`` and
``skill-eval lint``. None may crash (no traceback, no internal error, no
SE000), and each must say what it says of the same workspace with that line
deleted: the line is set aside whole. docs/report.md counts torn lines
(``torn_lines``) among the starts on record (``starts_on_record``); a start
line set aside is counted there (both one higher than with the line deleted),
an outcome, plan or decision line is not a start (docs/format.md: never
starts), so those counts stay as they are.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNS = Path("skills", "closeout-review", "evals", "runs")
CRASH_MARKS = ("Traceback", "internal error", "SE000")

WRONG_VALUES: dict[str, Any] = {
    "string": "1", "int": 3, "list": ["x"], "object": {"x": 1}, "bool": True, "null": None, "float": 1.5,
}
"""One value of each JSON type a field may wrongly hold."""

WRONG_FOR: dict[str, tuple[str, ...]] = {
    "string": ("int", "list", "object", "bool", "null", "float"),
    "int": ("string", "list", "object", "bool", "null", "float"),
    "number": ("string", "list", "object", "bool", "null"),
    "bool": ("string", "int", "list", "object", "null", "float"),
    "object": ("string", "int", "list", "bool", "null", "float"),
    "list": ("string", "int", "object", "bool", "null", "float"),
    "ids": ("string", "int", "object", "bool", "null", "float", "list of numbers"),
}
"""The wrong JSON types of each documented type (a list of ids also: a list
holding a number; its string is a defect id, ``"D1"``, not a list of one)."""

REPRESENTATIVE: dict[str, tuple[str, ...]] = {
    "string": ("list", "int"), "int": ("string", "bool"), "number": ("string", "object"),
    "bool": ("string", "int"), "object": ("list", "string"), "list": ("object", "int"),
    "ids": ("string", "int"),
}
"""The wrong types tried on a field the defect report did not name: one that
cannot be hashed or compared, one scalar mix-up."""

NAMED = {"rep", "caught", "probe_sha256", "artifact_sha256", "skill_sha256", "skill_tree_sha256", "agent", "model",
         "defects", "started"}
"""The fields the defect report named: every wrong type is tried on them."""

DOCUMENTED: dict[str, dict[str, str]] = {
    "start": {
        "start_id": "string", "probe": "string", "version": "int", "probe_sha256": "string",
        "artifact_sha256": "string", "skill_sha256": "string?", "skill_tree_sha256": "string?",
        "probe_path": "string", "kind": "string?", "band": "object?", "defects": "ids", "arm": "string",
        "rep": "int", "agent": "string", "model": "string?", "started": "string", "plan_id": "string",
        "runner": "object", "resume_of": "string", "retry_of": "string", "calibration_rule": "object",
        "calibration_rule_sha256": "string", "preset": "string", "treatment": "string",
        "installed_skill": "string", "installed_skill_sha256": "string",
    },
    "outcome": {
        "start_id": "string", "probe": "string", "version": "int", "arm": "string", "rep": "int",
        "ended": "string", "duration_s": "number", "status": "string", "exit_code": "int?",
        "answer_file": "string", "answer_source": "string", "caught": "ids", "passed": "bool",
        "error": "string?", "stderr_tail": "string", "truncated": "object", "output_file": "string",
        "tokens_in": "int", "tokens_out": "int", "tokens_cached": "int", "cost_usd": "number",
        "agent_duration_s": "number", "turns": "int", "grading_errors": "object",
    },
    "plan": {
        "plan_id": "string", "created": "string", "agent": "string", "model": "string?", "runner": "object",
        "starts": "list", "lint": "list",
    },
    "decision": {
        "probe": "string", "version": "int", "probe_sha256": "string", "artifact_sha256": "string",
        "skill_sha256": "string?", "skill_tree_sha256": "string?", "probe_path": "string", "kind": "string?",
        "agent": "string", "model": "string?", "zone": "string", "decided_after": "string?", "control": "object",
        "treatment": "object?", "starts": "int", "version_starts": "int", "decided": "string",
        "plan_id": "string", "calibration_rule": "object", "calibration_rule_sha256": "string",
        "discriminator": "object",
    },
}
"""The JSON type of each field of each record type, as docs/format.md ("Run
records") gives it and the runner writes it (``?``: ``null`` is written too:
no skill, no model, no kind, no exit status, no treatment sample)."""


def _wrong_value(documented: str, wrong: str) -> Any:
    if wrong == "list of numbers":
        return [1]
    if documented == "ids" and wrong == "string":
        return "D1"
    return WRONG_VALUES[wrong]


def _set_field(field: str, value: Any) -> Callable[[dict], None]:
    def change(record: dict) -> None:
        record[field] = value
    return change


def _set_planned(index: int, value: Any) -> Callable[[dict], None]:
    def change(record: dict) -> None:
        record["starts"][0][index] = value
    return change


def _set_planned_lint(field: str, value: Any) -> Callable[[dict], None]:
    def change(record: dict) -> None:
        record["lint"][0][field] = value
    return change


def _cases() -> list:
    cases = []
    for record_type, fields in DOCUMENTED.items():
        for field, documented in fields.items():
            nullable = documented.endswith("?")
            kind = documented.rstrip("?")
            wrong_types = WRONG_FOR[kind] if field in NAMED else REPRESENTATIVE[kind]
            for wrong in wrong_types:
                if wrong == "null" and nullable:
                    continue
                cases.append(pytest.param(record_type, _set_field(field, _wrong_value(kind, wrong)),
                                          id=f"{record_type}-{field}-{wrong.replace(' ', '-')}"))
    nested = [
        ("plan", _set_planned(6, "1"), "plan-starts-entry-rep-string"),
        ("plan", _set_planned(2, ["x"]), "plan-starts-entry-probe_sha256-list"),
        ("plan", _set_planned(5, {"x": 1}), "plan-starts-entry-arm-object"),
        ("plan", _set_planned(7, ["x"]), "plan-starts-entry-skill_tree_sha256-list"),
        ("plan", _set_planned_lint("version", "1"), "plan-lint-entry-version-string"),
        ("plan", _set_planned_lint("probe_sha256", ["x"]), "plan-lint-entry-probe_sha256-list"),
        ("plan", _set_planned_lint("findings", 3), "plan-lint-entry-findings-int"),
    ]
    cases += [pytest.param(record_type, change, id=name) for record_type, change, name in nested]
    return cases


# -- the records, and the faces of the workspace ------------------------------------------


def _skill_eval(*args: str, cwd: Path, scratch: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skill_eval", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "SKILL_EVAL_SCRATCH": str(scratch)})


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A copy of the examples with real records: a run of both arms (2 reps,
    the probes with lint errors withheld), then a calibration (their reps too,
    and a decision per probe version)."""
    base = tmp_path_factory.mktemp("recorded")
    workspace, scratch = base / "examples", base / "scratch"
    scratch.mkdir()
    shutil.copytree(ROOT / "examples", workspace, ignore=shutil.ignore_patterns(".skill-eval-cache", "runs"))
    ran = _skill_eval("run", "--agent", "scripted", "--reps", "2", "--no-progress", cwd=workspace, scratch=scratch)
    assert ran.returncode == 1 and "not run because of lint errors" in ran.stderr, ran.stdout + ran.stderr
    calibrated = _skill_eval("calibrate", "--agent", "scripted", "--allow-lint-errors", "--no-progress",
                             cwd=workspace, scratch=scratch)
    assert calibrated.returncode == 0, calibrated.stdout + calibrated.stderr
    types = [json.loads(line)["type"] for path in sorted((workspace / RUNS).glob("*.jsonl"))
             for line in path.read_text(encoding="utf-8").splitlines()]
    assert {kind: types.count(kind) for kind in DOCUMENTED} == {"start": 28, "outcome": 28, "plan": 2, "decision": 7}
    return workspace


def _first_line_of(workspace: Path, record_type: str) -> tuple[Path, int]:
    """The runs file and 0-based index of the first line of ``record_type``."""
    for path in sorted((workspace / RUNS).glob("*.jsonl")):
        for index, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if json.loads(line)["type"] == record_type:
                return path.relative_to(workspace), index
    raise AssertionError(f"no {record_type} line on record")


def _rewrite_line(workspace: Path, record_type: str, change: Callable[[dict], None] | None) -> None:
    """Change the first ``record_type`` line with ``change``, or delete it (``None``)."""
    relative, index = _first_line_of(workspace, record_type)
    path = workspace / relative
    lines = path.read_text(encoding="utf-8").splitlines()
    if change is None:
        del lines[index]
    else:
        record = json.loads(lines[index])
        change(record)
        lines[index] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


FACES = {
    "report": ["report", ".", "--junit", "report.xml"],
    "report json": ["report", ".", "--format", "json", "--html", "report.html"],
    "run --dry-run": ["run", "--agent", "scripted", "--dry-run", "--no-progress"],
    "calibrate --dry-run": ["calibrate", "--agent", "scripted", "--dry-run", "--allow-lint-errors", "--no-progress"],
    "lint": ["lint", ".", "--no-cache", "--output-format", "json"],
}
"""Each face of the workspace: a ``skill-eval`` command line, run in process
(:func:`skill_eval.cli.main`) from the workspace's folder."""


def _faces(workspace: Path, monkeypatch, capsys) -> dict[str, tuple[int, str, str]]:
    """Exit status, stdout and stderr of each of :data:`FACES`; an exception
    escaping a command is its traceback on stderr (and exit status -1)."""
    from skill_eval.cli import main

    monkeypatch.chdir(workspace)
    capsys.readouterr()
    found = {}
    for name, argv in FACES.items():
        try:
            status = main(list(argv))
        except SystemExit as request:
            status = request.code if isinstance(request.code, int) else 1
        except Exception:  # noqa: BLE001 - the crash is what is checked
            status = -1
            print(traceback.format_exc(), file=sys.stderr)
        out, err = capsys.readouterr()
        found[name] = (status, out.replace(str(workspace), "<workspace>"), err.replace(str(workspace), "<workspace>"))
    return found


@pytest.fixture(scope="module")
def deleted_faces() -> dict[str, dict[str, tuple[int, str, str]]]:
    """The faces of the recorded workspace with the first line of a record
    type deleted, by record type (filled by the first case of each type: the
    faces run in process, under a test's ``monkeypatch`` and ``capsys``)."""
    return {}


def _budget_used(text: str) -> list[int]:
    return [int(used) for used in re.findall(r"budget: (\d+) of", text)]


def _comparable_report(data: dict) -> tuple[dict, list]:
    meta = {key: value for key, value in data["meta"].items() if key not in ("workspace", "generated")}
    groups = [{key: value for key, value in group.items() if key != "key"} for group in data["groups"]]
    return meta, groups


@pytest.mark.parametrize("record_type, change", _cases())
def test_a_field_of_the_wrong_type_sets_its_line_aside(record_type, change, recorded, deleted_faces, tmp_path,
                                                       tmp_path_factory, monkeypatch, capsys):
    if record_type not in deleted_faces:
        deleted = tmp_path_factory.mktemp(f"deleted-{record_type}") / "examples"
        shutil.copytree(recorded, deleted)
        _rewrite_line(deleted, record_type, None)
        deleted_faces[record_type] = _faces(deleted, monkeypatch, capsys)
    expected = deleted_faces[record_type]
    altered = tmp_path / "altered"
    shutil.copytree(recorded, altered)
    _rewrite_line(altered, record_type, change)
    found = _faces(altered, monkeypatch, capsys)

    for name, (_status, out, err) in found.items():
        for mark in CRASH_MARKS:
            assert mark not in out + err, f"{name}: {mark!r} in its output:\n{out}\n{err}"
    assert {name: face[0] for name, face in found.items()} == {name: face[0] for name, face in expected.items()}

    a_start = record_type == "start"  # docs/format.md: a torn line is a start unless it is an outcome, plan or decision
    meta, groups = _comparable_report(json.loads(found["report json"][1]))
    expected_meta, expected_groups = _comparable_report(json.loads(expected["report json"][1]))
    assert meta["torn_lines"] == expected_meta["torn_lines"] + a_start
    assert meta["starts_on_record"] == expected_meta["starts_on_record"] + a_start
    assert {**meta, "torn_lines": 0, "starts_on_record": 0} == {**expected_meta, "torn_lines": 0, "starts_on_record": 0}
    assert groups == expected_groups

    def without_starts_on_record(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith("starts on record:")]

    assert without_starts_on_record(found["report"][1]) == without_starts_on_record(expected["report"][1])
    for name in ("run --dry-run", "calibrate --dry-run"):
        out, expected_out = found[name][1], expected[name][1]
        assert _budget_used(out) == [used + a_start for used in _budget_used(expected_out)], name
        assert re.sub(r"budget: .*", "", out) == re.sub(r"budget: .*", "", expected_out), name
    assert json.loads(found["lint"][1]) == json.loads(expected["lint"][1])
