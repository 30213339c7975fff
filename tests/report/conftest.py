"""Fixtures of the report tests: a headless Chromium (Debian's ``chromium``),
and the folder screenshots go to.

The browser tests skip when no Chromium is installed, unless
``SKILL_EVAL_REQUIRE_BROWSER=1`` (CI sets it, after ``.ci/install-chromium``):
then a missing browser fails them. Screenshots go to
``$SKILL_EVAL_SCREENSHOTS`` when set, else to the test session's temporary
folder; the path is printed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cdp_browser import Browser, find_chromium


@pytest.fixture(scope="session")
def chromium() -> str:
    executable = find_chromium()
    if executable is None:
        if os.environ.get("SKILL_EVAL_REQUIRE_BROWSER") == "1":
            pytest.fail("SKILL_EVAL_REQUIRE_BROWSER=1 but no chromium is installed; run .ci/install-chromium")
        pytest.skip("no chromium installed (apt-get install chromium, or .ci/install-chromium)")
    return executable


@pytest.fixture(scope="module")
def browser(chromium: str):
    instance = Browser(chromium)
    try:
        yield instance
    finally:
        instance.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    chosen = os.environ.get("SKILL_EVAL_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots of the HTML report: {folder}")
    return folder
