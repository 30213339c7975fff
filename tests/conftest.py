"""Shared pytest options and fixtures."""

from __future__ import annotations


def pytest_addoption(parser):
    parser.addoption(
        "--update-fixtures",
        action="store_true",
        default=False,
        help="rewrite the expected-diagnostics files of tests/fixtures/lint/ from the current output",
    )


SLOW = (
    "agents_real/test_agents_real.py",         # the real agent CLIs, each in a network namespace
    "agents_real/test_agents_real_runner.py",  # the same, through skill-eval run
    "agents_real/test_netns_guard.py",         # network namespaces
    "editors/test_vscode.py",          # npm installs and a VS Code extension host
    "editors/test_neovim.py",          # a headless Neovim per test
    "editors/test_precommit.py",       # pre-commit builds its hook environment
    "evals/test_ray_executor.py",      # a Ray cluster in a network namespace
    "evals/test_ray_driver_sigterm.py",  # the same, its driver stopped with SIGTERM
    "fuzz/",                           # thousands of generated inputs
    "linter/test_properties.py",       # hypothesis properties over whole workspaces
    "linter/test_precommit_floor.py",  # a benchmark run end to end
    "report/test_viewer_browser.py",   # headless Chromium
    "report/test_end_to_end.py",       # run, report and the HTML page in Chromium
    "server/test_large_workspace.py",  # the language server over thousands of probes
    "server/test_parallel_scan.py",    # the same, scanned by several processes
    "test_fresh_install.py",           # a fresh venv with `pip install .`
)
"""Test files (relative to tests/) marked ``slow``: they start real programs
(agent CLIs, browsers, editors, clusters, a fresh install) or search large
input spaces. ``python -m pytest -m "not slow"`` is the quick first check."""


def pytest_collection_modifyitems(config, items):
    """Mark the tests of :data:`SLOW` with ``@pytest.mark.slow``."""
    import pytest
    from pathlib import Path

    tests = Path(__file__).resolve().parent
    for item in items:
        try:
            relative = Path(str(item.fspath)).resolve().relative_to(tests).as_posix()
        except ValueError:
            continue
        if relative.startswith(SLOW):
            item.add_marker(pytest.mark.slow)
