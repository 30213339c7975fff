"""The regular install ships every package of the source tree.

``pyproject.toml`` lists its packages by hand (the design card's folders map
onto ``skill_eval.*`` through ``package-dir``), so a new package folder left
out of the list is missing from a regular install (``pip install .``) while
an editable one still finds it: the README's first command then fails with an
ImportError no editable test run sees. The ground truth here is the tree
itself: every folder holding an ``__init__.py`` under a mapped folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_every_package_folder_is_listed():
    """Each folder with an ``__init__.py`` under a ``package-dir`` folder is a listed package."""
    table = _setuptools()
    found = set()
    for name, folder in table["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            relative = init.parent.relative_to(base)
            if any(part.startswith(".") or part == "__pycache__" for part in relative.parts):
                continue
            found.add(".".join((name, *relative.parts)))
    missing = sorted(found - set(table["packages"]))
    assert not missing, f"pyproject.toml [tool.setuptools] packages lacks {missing}: a regular install would not ship them"
