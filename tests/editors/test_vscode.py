"""The VS Code extension builds, passes its node --test unit tests, and packages.

Runs the documented commands in editors/vscode: `npm ci`, `npm test` (which
builds: copies the schema, compiles TypeScript) and `npx @vscode/vsce package`,
then checks what the .vsix contains. Skipped only when node/npm are missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
NPM = shutil.which("npm")
NPX = shutil.which("npx")
pytestmark = pytest.mark.skipif(NPM is None or NPX is None, reason="node/npm are not installed")


def run(*command: str, timeout: int = 600) -> subprocess.CompletedProcess:
    completed = subprocess.run(command, cwd=EXTENSION, capture_output=True, text=True, timeout=timeout)
    assert completed.returncode == 0, f"{' '.join(command)} exited {completed.returncode}:\n{completed.stdout[-4000:]}\n{completed.stderr[-4000:]}"
    return completed


@pytest.fixture(scope="module")
def installed() -> None:
    run(NPM, "ci", "--no-audit", "--no-fund")


def test_unit_tests_pass(installed: None) -> None:
    completed = run(NPM, "test")
    assert "# fail 0" in completed.stdout, completed.stdout[-2000:]
    assert "# pass " in completed.stdout


def test_vsix_packages_with_schema_and_client(installed: None, tmp_path: Path) -> None:
    vsix = tmp_path / "skill-eval.vsix"
    run(NPX, "--no-install", "@vscode/vsce", "package", "--out", str(vsix))
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
