"""Fixtures of the eval-runner tests: a copy of tests/fixtures/evals/suite per
test, with agents (real subprocesses: the scripts in agents/) configured, and
a scratch folder of each test's own."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from evals_helpers import SUITE, Suite

SCRATCH_WAIT = 15.0
"""Seconds a test's scratch folder may take to empty after the test (a killed
runner's watchdog removes its folders moments after the kill)."""


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    root = tmp_path / "ws"
    shutil.copytree(SUITE, root)
    return Suite(root)


@pytest.fixture(autouse=True)
def scratch(monkeypatch) -> Path:
    """``SKILL_EVAL_SCRATCH`` for this test (and the runners it starts): a
    folder of its own (on /dev/shm when writable, as the runner's default),
    removed after the test. The test fails when a scratch folder is left in it
    (the runner leaks nothing, killed or not); nothing of the suite's runs
    lands in the shared /dev/shm."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK) else None
    root = Path(tempfile.mkdtemp(prefix="se-test-scratch-", dir=base))
    monkeypatch.setenv("SKILL_EVAL_SCRATCH", str(root))
    try:
        yield root
        deadline = time.monotonic() + SCRATCH_WAIT
        while any(root.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = sorted(path.name for path in root.iterdir())
        assert left == [], f"scratch folders left behind in {root}: {left}"
    finally:
        shutil.rmtree(root, ignore_errors=True)
