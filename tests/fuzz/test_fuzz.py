"""The fuzz harness in CI: at least 20,000 inputs over raw bytes, structured
probe.json, markdown and odd file types (see ``_fuzzing.py``), none of which
may raise out of the engine, make a rule crash (SE000), open a file outside
the workspace, produce an invalid report or stop the neighbouring probe from
being linted.

``SKILL_EVAL_FUZZ_INPUTS`` sets the total (default 20,000); the inputs are
derandomized, so CI sees the same ones each run. For a long run with fresh
inputs, ``python tests/fuzz/run_fuzz.py --inputs 1000000``.
"""

from __future__ import annotations

import os

import pytest
from _fuzzing import (FuzzWorkspace, Figures, apply_layout, file_layouts, lint_input, markdown_texts, probe_json_texts,
                      raw_bytes)
from hypothesis import HealthCheck, given, settings

TOTAL = int(os.environ.get("SKILL_EVAL_FUZZ_INPUTS", "20000"))
SHARES = {"probe_json": 0.3, "raw_bytes": 0.4, "markdown": 0.18, "files": 0.12}


def _settings(target: str):
    return settings(max_examples=max(1, int(TOTAL * SHARES[target])), derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck), print_blob=False)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    made = FuzzWorkspace(tmp_path_factory.mktemp("fuzz"))
    yield made
    made.close()


def _check(figures: Figures, target: str) -> None:
    print(f"fuzz {target}: {figures.summary()}")
    assert figures.inputs >= int(TOTAL * SHARES[target])
    assert not figures.problems(), "\n\n".join(f"{described}\n{detail}" for described, detail in figures.problems()[:5])


def test_fuzz_probe_json(workspace: FuzzWorkspace) -> None:
    figures = Figures()

    @_settings("probe_json")
    @given(probe_json_texts())
    def run(case):
        raw, described = case
        workspace.put("probe.json", "regular", raw)
        lint_input(workspace, figures, described, render=figures.inputs % 4 == 0)

    run()
    workspace.reset(["probe.json"])
    _check(figures, "probe_json")


def test_fuzz_raw_bytes(workspace: FuzzWorkspace) -> None:
    figures = Figures()

    @_settings("raw_bytes")
    @given(raw_bytes())
    def run(case):
        role, raw, described = case
        workspace.put(role, "regular", raw)
        lint_input(workspace, figures, described, render=figures.inputs % 4 == 0)
        workspace.reset([role])

    run()
    _check(figures, "raw_bytes")


def test_fuzz_markdown(workspace: FuzzWorkspace) -> None:
    figures = Figures()

    @_settings("markdown")
    @given(markdown_texts())
    def run(case):
        role, raw, described = case
        workspace.put(role, "regular", raw)
        lint_input(workspace, figures, described, render=figures.inputs % 4 == 0)
        workspace.reset([role])

    run()
    _check(figures, "markdown")


def test_fuzz_odd_files(workspace: FuzzWorkspace) -> None:
    figures = Figures()

    @_settings("files")
    @given(file_layouts())
    def run(case):
        kinds, refs, described = case
        apply_layout(workspace, kinds, refs)
        lint_input(workspace, figures, described)
        workspace.reset(list(kinds) + (["probe.json"] if refs else []))

    run()
    _check(figures, "files")
