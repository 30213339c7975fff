"""Shared pytest options and fixtures."""

from __future__ import annotations


def pytest_addoption(parser):
    parser.addoption(
        "--update-fixtures",
        action="store_true",
        default=False,
        help="rewrite the expected-diagnostics files of tests/fixtures/lint/ from the current output",
    )
