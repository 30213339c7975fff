"""``--output-format sarif`` names files by URI references (SARIF 2.1.0
§3.10.2, RFC 3986): whatever a folder is called, each ``uri`` read back the
way a SARIF viewer reads it (``urlsplit``, then ``unquote`` of its path,
resolved against ``originalUriBaseIds`` when the log has them, else against
the folder the lint ran in) is the very file the ``--output-format json``
report of the same run names by plain path."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

FOLDER_NAMES = ["c#-review", "50%-review", "why?-review", "my review", "révision-ü", "my probe%41", "a:b", "line\nbreak",
                "all #%? é%41"]
"""Folder names a raw path misreads as a URI: a fragment, a query, a stray or
valid-looking percent-escape, a space, non-ASCII letters, a scheme-like first
segment, a newline."""

URI_REFERENCE_CHARACTERS = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")
"""What RFC 3986 allows in a URI reference: unreserved and reserved characters
and percent-escapes of two hex digits, nothing else."""


def run_lint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skill_eval.linter.cli", "--no-cache", "-j", "1", *args],
        capture_output=True, text=True, cwd=cwd, timeout=120,
    )


def workspace_named(root: Path, name: str) -> Path:
    """A copy of ``examples/`` at ``root/name`` whose skill folder is ``name`` too."""
    target = root / name
    shutil.copytree(EXAMPLES, target)
    (target / "skills" / "closeout-review").rename(target / "skills" / name)
    return target


def uri_bearers(node, inside_base_ids: bool = False):
    """Every object of the SARIF document ``node`` that carries a ``uri``,
    but the bases of ``originalUriBaseIds`` (checked as bases)."""
    if isinstance(node, dict):
        if "uri" in node and not inside_base_ids:
            yield node
        for key, value in node.items():
            yield from uri_bearers(value, inside_base_ids or key == "originalUriBaseIds")
    elif isinstance(node, list):
        for value in node:
            yield from uri_bearers(value, inside_base_ids)


def path_of_file_uri(uri: str) -> Path:
    parts = urlsplit(uri)
    assert parts.scheme == "file" and parts.netloc in ("", "localhost"), uri
    return Path(unquote(parts.path, errors="strict"))


def file_named(artifact_location: dict, run: dict, cwd: Path) -> Path:
    """The file a SARIF viewer opens for ``artifact_location``."""
    uri = artifact_location["uri"]
    assert URI_REFERENCE_CHARACTERS.fullmatch(uri), f"not a URI reference: {uri!r}"
    parts = urlsplit(uri)
    assert (parts.query, parts.fragment) == ("", ""), f"{uri!r} reads as path {parts.path!r}"
    if parts.scheme:
        return path_of_file_uri(uri)
    base = cwd
    if "uriBaseId" in artifact_location:
        base = path_of_file_uri(run["originalUriBaseIds"][artifact_location["uriBaseId"]]["uri"])
    return base / unquote(parts.path, errors="strict")


@pytest.mark.parametrize("lint_from", ["parent", "beside"])
@pytest.mark.parametrize("name", FOLDER_NAMES)
def test_every_sarif_uri_names_the_file_of_its_finding(tmp_path: Path, name: str, lint_from: str) -> None:
    workspace = workspace_named(tmp_path / "runs", name)
    if lint_from == "parent":
        cwd, target = workspace.parent, name  # paths start with the workspace's own folder name
    else:
        cwd, target = tmp_path / "beside", str(workspace)  # paths climb out with ../
        cwd.mkdir()
    sarif_run = run_lint(target, "--output-format", "sarif", cwd=cwd)
    json_run = run_lint(target, "--output-format", "json", cwd=cwd)
    assert sarif_run.returncode == json_run.returncode == 1, sarif_run.stderr + json_run.stderr
    log, findings = json.loads(sarif_run.stdout), json.loads(json_run.stdout)
    (run,) = log["runs"]
    assert len(run["results"]) == len(findings) > 0

    checked = []
    for result, finding in zip(run["results"], findings):
        region = result["locations"][0]["physicalLocation"]["region"]
        assert (result["ruleId"], region["startLine"], region["startColumn"]) == (
            finding["code"], finding["location"]["row"], finding["location"]["column"])
        related = result.get("relatedLocations") or []
        assert len(related) == len(finding["related"])
        pairs = [(result["locations"][0], finding["filename"])]
        pairs += [(location, plain["filename"]) for location, plain in zip(related, finding["related"])]
        for location, filename in pairs:
            artifact_location = location["physicalLocation"]["artifactLocation"]
            named = file_named(artifact_location, run, cwd)
            assert named.is_file(), f"{artifact_location['uri']!r} names no file: {named}"
            assert named.resolve() == (cwd / filename).resolve(), artifact_location["uri"]
            checked.append(artifact_location)
    assert any(f"/{name}/" in filename.replace("\\", "/") for filename in (f["filename"] for f in findings))
    assert sorted(id(bearer) for bearer in uri_bearers(log)) == sorted(id(bearer) for bearer in checked)
    for base in (run.get("originalUriBaseIds") or {}).values():
        assert path_of_file_uri(base["uri"]).is_dir()
