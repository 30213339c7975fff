"""The documentation's Python examples run as written, against the shipped examples."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _python_blocks(page: str) -> list[str]:
    return PYTHON_BLOCK.findall((ROOT / page).read_text(encoding="utf-8"))


def test_format_md_extract_skill_section_example_runs_from_the_project_root() -> None:
    (block,) = _python_blocks("docs/format.md")
    completed = subprocess.run([sys.executable, "-c", block], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    start, end = map(int, completed.stdout.splitlines()[0].split())
    assert 1 <= start < end
    assert "Step 2: Match each criterion to direct evidence" in completed.stdout


def test_the_exceptions_format_md_names_import_from_the_package_and_are_raised() -> None:
    """docs/format.md: ``extract_skill_section`` raises ``HeadingNotFound`` (with
    ``suggestions``) or ``AmbiguousHeading``, importable from ``skill_eval.linter``."""
    text = (ROOT / "docs/format.md").read_text(encoding="utf-8")
    assert "`HeadingNotFound`" in text and "`AmbiguousHeading`" in text
    from skill_eval.linter import AmbiguousHeading, HeadingNotFound, extract_skill_section

    skill = ROOT / "examples/skills/closeout-review/SKILL.md"
    with pytest.raises(HeadingNotFound) as raised:
        extract_skill_section(skill, "Step 2: Match each criterion to direct evidenc")
    assert "Step 2: Match each criterion to direct evidence" in raised.value.suggestions
    assert issubclass(AmbiguousHeading, LookupError)


def test_report_md_api_example_writes_the_report_and_junit(tmp_path: Path) -> None:
    (block,) = _python_blocks("docs/report.md")
    workspace = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", workspace)
    completed = subprocess.run([sys.executable, "-c", block], cwd=workspace, capture_output=True, text=True,
                               timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert (workspace / "report.html").read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    assert "<testsuite" in (workspace / "report.xml").read_text(encoding="utf-8")
