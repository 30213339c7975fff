"""Functional tests (pylint-style): one workspace per folder of tests/fixtures/lint/,
each with an ``expected.txt`` listing the diagnostics the linter must report.

Run ``pytest tests/linter/test_fixtures.py --update-fixtures`` to rewrite the
expected files after an intended change, then review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.linter.engine import lint_paths

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"
CASES = sorted(p for p in FIXTURES.iterdir() if p.is_dir()) if FIXTURES.is_dir() else []


def render(case: Path) -> str:
    """One line per diagnostic: ``path:line:col-endline:endcol: CODE [severity] message``."""
    result = lint_paths([case])
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


@pytest.mark.parametrize("case", PARALLEL_CASES, ids=[c.name for c in PARALLEL_CASES])
def test_forked_workers_lint_each_fixture_alike(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parallel CLI (probe, SKILL.md and output-spec checks in forked
    workers; workspace-wide rules over the workers' probe facts in this
    process) reports exactly what one process does, related locations and
    fixes included: every fixture is linted both ways, with workers forced."""
    from skill_eval.linter import engine

    if not engine._can_fork():
        pytest.skip("no fork on this platform")
    serial = lint_paths([case], jobs=1).diagnostics
    monkeypatch.setattr(engine, "PARALLEL_MIN_PROBES", 1)
    monkeypatch.setattr(engine, "SHARE_MIN_WORK", 1)
    parallel = lint_paths([case], jobs=2).diagnostics
    assert _full(parallel) == _full(serial)


@pytest.mark.parametrize("case", [FIXTURES / "se006-duplicate-probe-id", FIXTURES / "se501-reused-scenario", ROOT / "examples"],
                         ids=lambda case: case.name)
def test_forked_workers_lint_one_file_of_a_workspace_alike(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run on one probe.json (a pre-commit run) of a workspace large enough
    for workers: the workers compute every probe's facts, the file's probe is
    compared with all of them, and the result is what one process reports."""
    from skill_eval.linter import engine

    if not engine._can_fork():
        pytest.skip("no fork on this platform")
    for probe in sorted(case.rglob("probe.json"))[:4]:
        serial = lint_paths([probe], jobs=1).diagnostics
        with monkeypatch.context() as patched:
            patched.setattr(engine, "PARALLEL_MIN_PROBES", 1)
            patched.setattr(engine, "SHARE_MIN_WORK", 1)
            forked = []
            original = engine._lint_in_workers
            patched.setattr(engine, "_lint_in_workers", lambda *a, **k: forked.append(1) or original(*a, **k))
            parallel = lint_paths([probe], jobs=2).diagnostics
        assert forked, "the workers were not used"
        assert _full(parallel) == _full(serial), probe


def test_a_crash_computing_probe_facts_is_se000_for_that_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """A workspace-wide rule whose probe_facts raises on one probe: SE000 on
    that probe.json, the probe is left out of the comparison, every other
    finding stays; one process and forked workers agree."""
    from skill_eval.linter import engine
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
    if engine._can_fork():
        monkeypatch.setattr(engine, "PARALLEL_MIN_PROBES", 1)
        monkeypatch.setattr(engine, "SHARE_MIN_WORK", 1)
        assert _full(lint_paths([case], jobs=2).diagnostics) == _full(serial)


def test_there_are_fixtures() -> None:
    assert len(CASES) >= 1
