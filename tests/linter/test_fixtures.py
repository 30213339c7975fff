"""Functional tests (pylint-style): one workspace per folder of tests/fixtures/lint/,
each with an ``expected.txt`` listing the diagnostics the linter must report.

A fixture may name the rules it is about in ``rules.txt`` (one code or
prefix a line, as ruff's ``for_rule``): it is then linted with that
selection alone, so a new rule elsewhere leaves its ``expected.txt`` alone.
Without it, every rule the fixture's config enables runs.

Run ``pytest tests/linter/test_fixtures.py --update-fixtures`` to rewrite the
expected files after an intended change, then review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.linter.engine import lint_paths

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"
CASES = sorted(p for p in FIXTURES.iterdir() if p.is_dir()) if FIXTURES.is_dir() else []


def selection(case: Path) -> dict | None:
    """The overrides of the rules ``case`` names in its ``rules.txt``, if any."""
    named = case / "rules.txt"
    if not named.is_file():
        return None
    return {"select": [line.strip() for line in named.read_text(encoding="utf-8").splitlines() if line.strip()]}


def render(case: Path) -> str:
    """One line per diagnostic: ``path:line:col-endline:endcol: CODE [severity] message``."""
    result = lint_paths([case], overrides=selection(case))
    lines = []
    for d in result.diagnostics:
        rel = d.path.relative_to(case).as_posix() if case in d.path.parents else d.path.as_posix()
        lines.append(f"{rel}:{d.start.line}:{d.start.column}-{d.end.line}:{d.end.column}: {d.code} [{d.severity.value}] {d.message}")
    return "\n".join(lines) + ("\n" if lines else "")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fixture(case: Path, request: pytest.FixtureRequest) -> None:
    expected_file = case / "expected.txt"
    actual = render(case)
    if request.config.getoption("--update-fixtures"):
        expected_file.write_text(actual, encoding="utf-8")
        return
    assert expected_file.is_file(), f"{expected_file} is missing: run with --update-fixtures and review it"
    assert actual == expected_file.read_text(encoding="utf-8")


ROOT = Path(__file__).resolve().parents[2]
PARALLEL_CASES = CASES + [ROOT / "examples"]


def _full(diagnostics) -> list[tuple]:
    return [(d.code, d.path, d.span, d.message, d.severity, d.related, d.fixes) for d in diagnostics]


@pytest.fixture
def workers_always(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Workers for any amount of work, one unit per chunk; the list counts
    the chunks the pool linted (their results are loaded here)."""
    from skill_eval.linter import execution
    from skill_eval.linter.cache import CODEC

    monkeypatch.setattr(execution, "PARALLEL_MIN_WORK", 1)
    monkeypatch.setattr(execution, "SMALLEST_CHUNK", 1)
    from_pool: list[int] = []
    original = CODEC.decode
    monkeypatch.setattr(CODEC, "decode", lambda data, *rest: from_pool.append(1) or original(data, *rest))
    return from_pool


@pytest.mark.parametrize("case", PARALLEL_CASES, ids=[c.name for c in PARALLEL_CASES])
def test_workers_lint_each_fixture_alike(case: Path, workers_always: list[int]) -> None:
    """A lint shared with worker processes (probe and SKILL.md units in the
    workers; output specs and the workspace-wide rules over every
    probe's facts here) reports exactly what one process does, related
    locations and fixes included: every fixture is linted both ways."""
    serial = lint_paths([case], jobs=1).diagnostics
    assert not workers_always
    parallel = lint_paths([case], jobs=2).diagnostics
    assert workers_always, "the worker linted nothing"
    assert _full(parallel) == _full(serial)


@pytest.mark.parametrize("case", [FIXTURES / "se006-duplicate-probe-id", FIXTURES / "se501-reused-scenario", ROOT / "examples"],
                         ids=lambda case: case.name)
def test_workers_lint_one_file_of_a_workspace_alike(case: Path, workers_always: list[int]) -> None:
    """A run on one probe.json (a pre-commit run): the other probes' facts
    are computed (here and in the worker), the file's probe is compared with
    all of them, and the result is what one process reports."""
    for probe in sorted(case.rglob("probe.json"))[:4]:
        serial = lint_paths([probe], jobs=1).diagnostics
        del workers_always[:]
        parallel = lint_paths([probe], jobs=2).diagnostics
        assert workers_always, "the worker linted nothing"
        assert _full(parallel) == _full(serial), probe


def test_a_crash_computing_probe_facts_is_se000_for_that_probe(monkeypatch: pytest.MonkeyPatch, workers_always: list[int]) -> None:
    """A workspace-wide rule whose probe_facts raises on one probe: SE000 on
    that probe.json, the probe is left out of the comparison, every other
    finding stays; one process and a worker agree."""
    from skill_eval.linter.rules.files.se006_duplicate_probe_id import DuplicateProbeId

    case = FIXTURES / "se006-duplicate-probe-id"
    victim = next(case.rglob("scanner/probe.json"))  # not one of the two sharing an id
    original = DuplicateProbeId.probe_facts

    def crashes_on_victim(self, probe):
        if probe.json_path == victim:
            raise ZeroDivisionError("boom")
        return original(self, probe)

    monkeypatch.setattr(DuplicateProbeId, "probe_facts", crashes_on_victim)
    serial = lint_paths([case], jobs=1).diagnostics
    crashes = [d for d in serial if d.code == "SE000"]
    assert [(d.path, "SE006" in d.message) for d in crashes] == [(victim, True)]
    assert any(d.code == "SE006" for d in serial)
    assert _full(lint_paths([case], jobs=2).diagnostics) == _full(serial)
    assert workers_always


def test_there_are_fixtures() -> None:
    assert len(CASES) >= 1
