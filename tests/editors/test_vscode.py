"""The VS Code extension builds, passes its node --test unit tests, and packages.

Runs the documented commands of editors/vscode — `npm ci`, `npm test` (which
builds: copies the schema, compiles TypeScript, then runs node --test, the
server integration test included, with this venv's skill-eval-ls) and
`npx @vscode/vsce package` — in a copy of the extension laid out like the repo
(editors/vscode + linter/data), so that a test run never touches the working
tree's node_modules (parallel runs, an editor's own build). Then checks what
the .vsix contains. Skipped only when node/npm are missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
NPM = shutil.which("npm")
NPX = shutil.which("npx")
pytestmark = pytest.mark.skipif(NPM is None or NPX is None, reason="node/npm are not installed: install Node.js 18+ with npm (e.g. apt-get install nodejs npm)")


def run(cwd: Path, *command: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "SKILL_EVAL_PYTHON": sys.executable}
    completed = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert completed.returncode == 0, f"{' '.join(command)} exited {completed.returncode}:\n{completed.stdout[-4000:]}\n{completed.stderr[-4000:]}"
    return completed


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of editors/vscode (sources only) beside a copy of linter/data, after `npm ci`."""
    base = tmp_path_factory.mktemp("vscode")
    extension = base / "editors" / "vscode"
    shutil.copytree(
        EXTENSION, extension,
        ignore=shutil.ignore_patterns("node_modules", "out", "schemas", "*.vsix"),
    )
    shutil.copytree(REPO / "linter" / "data", base / "linter" / "data")
    run(extension, NPM, "ci", "--no-audit", "--no-fund", "--prefer-offline")
    return extension


def test_unit_tests_pass(installed: Path) -> None:
    completed = run(installed, NPM, "test")
    assert "# fail 0" in completed.stdout, completed.stdout[-2000:]
    assert "# pass " in completed.stdout
    assert "# skipped 0" in completed.stdout, "the server integration test was skipped:\n" + completed.stdout[-2000:]


def test_vsix_packages_with_schema_and_client(installed: Path, tmp_path: Path) -> None:
    vsix = tmp_path / "skill-eval.vsix"
    run(installed, NPX, "--no-install", "@vscode/vsce", "package", "--out", str(vsix))
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        assert "extension/out/extension.js" in names
        assert "extension/out/settings.js" in names
        assert "extension/node_modules/vscode-languageclient/node.js" in names
        assert not any(name.startswith("extension/src/") for name in names)
        shipped = json.loads(archive.read("extension/schemas/probe.schema.json"))
        manifest = json.loads(archive.read("extension/package.json"))
    assert shipped == json.loads((REPO / "linter" / "data" / "probe.schema.json").read_text(encoding="utf-8"))
    assert manifest["contributes"]["jsonValidation"][0]["url"] == "./schemas/probe.schema.json"
