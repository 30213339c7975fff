"""Fixtures of the eval-runner tests: a copy of tests/fixtures/evals/suite per
test, with agents (real subprocesses: the scripts in agents/) configured."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evals_helpers import SUITE, Suite


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    root = tmp_path / "ws"
    shutil.copytree(SUITE, root)
    return Suite(root)
