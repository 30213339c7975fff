"""The probe.json JSON Schema: one source of truth, and it agrees with the examples.

linter/data/probe.schema.json is the stable path that `$schema` references
and editors use (docs/editors.md); `skill-eval schema` prints it, and the
VS Code extension ships a copy (checked by editors/vscode/test/schema.test.js).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator, FormatChecker

REPO = Path(__file__).resolve().parents[2]
SCHEMA_PATH = REPO / "linter" / "data" / "probe.schema.json"
EXAMPLES = REPO / "examples"
EXAMPLE_PROBES = sorted(EXAMPLES.rglob("probe.json")) if EXAMPLES.is_dir() else []


def load_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def validator() -> Draft202012Validator:
    return Draft202012Validator(load_schema(), format_checker=FormatChecker())


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = load_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_skill_eval_schema_prints_the_file() -> None:
    script = Path(sys.executable).parent / "skill-eval"
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "skill_eval"]
    completed = subprocess.run([*command, "schema"], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == load_schema()


def test_installed_package_ships_the_same_schema() -> None:
    from importlib.resources import files

    shipped = files("skill_eval.linter").joinpath("data/probe.schema.json").read_text(encoding="utf-8")
    assert json.loads(shipped) == load_schema()


def test_schema_rejects_what_it_should() -> None:
    check = validator()
    good = {
        "id": "p", "tier": 2, "kind": "floor", "step_heading": "Step 1", "shapes": ["euphemized"],
        "seeded_defects": 1,
        "defects": [{"id": "D1", "shape": "euphemized", "quote": "q", "caught_when": {"verdict": "NOT_PROVEN"}}],
    }
    assert not list(check.iter_errors(good))
    for broken in (
        {**good, "id": "Bad Id"},
        {**good, "tier": 4},
        {**good, "unknown": 1},
        {k: v for k, v in good.items() if k != "step_heading"},
        {k: v for k, v in good.items() if k != "defects"},  # tier 2 requires defects
        {**good, "kind": "band"},  # band requires band
        {**good, "defects": [{**good["defects"][0], "caught_when": {"verdict": {"matches": "("}}}]},
    ):
        assert list(check.iter_errors(broken)), broken
    assert not list(check.iter_errors({**good, "x-note": "extensions are fine"}))


def _linter_schema_codes(probe: Path) -> set[str]:
    """SE001/SE002 as skill-eval-lint reports them for ``probe``."""
    completed = subprocess.run(
        [sys.executable, "-m", "skill_eval.linter.cli", "--output-format", "json", "--select", "SE001,SE002",
         "--exit-zero", str(probe)],
        capture_output=True, text=True, timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout or "[]")
    return {item["code"] for item in report if Path(item["filename"]).resolve() == probe.resolve()}


def test_examples_exist() -> None:
    if not EXAMPLE_PROBES:
        pytest.skip("no examples/**/probe.json yet")
    assert all(p.is_file() for p in EXAMPLE_PROBES)


@pytest.mark.parametrize("probe", EXAMPLE_PROBES, ids=lambda p: p.parent.relative_to(EXAMPLES).as_posix())
def test_example_probe_against_schema(probe: Path) -> None:
    """Every example validates — unless it is a deliberate schema mistake, which the
    linter reports as SE001/SE002; then the schema must reject it too."""
    text = probe.read_text(encoding="utf-8-sig")
    linter_codes = _linter_schema_codes(probe)
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        assert "SE001" in linter_codes, f"{probe} is not JSON but the linter does not say SE001"
        return
    errors = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in validator().iter_errors(data)]
    if "SE002" in linter_codes:
        assert errors, f"the linter reports SE002 for {probe}, but the schema accepts it"
    else:
        assert not errors, f"{probe} does not validate:\n" + "\n".join(errors)
    reference = data.get("$schema") if isinstance(data, dict) else None
    if isinstance(reference, str) and not reference.startswith(("http://", "https://")):
        target = (probe.parent / reference).resolve()
        assert target == SCHEMA_PATH.resolve(), f"{probe}: $schema {reference!r} points at {target}, not the shipped schema"


PUBLISHED_URL = "https://raw.githubusercontent.com/skill-eval/skill-eval/main/linter/data/probe.schema.json"


@pytest.mark.parametrize("probe", EXAMPLE_PROBES, ids=lambda p: p.parent.name)
def test_examples_reference_the_published_schema_not_the_source_tree(probe: Path) -> None:
    """A user who copies an example has no source tree: its ``$schema`` is the
    published URL docs/editors.md gives, which names the file this repo ships."""
    declared = json.loads(probe.read_text(encoding="utf-8")).get("$schema")
    assert declared == PUBLISHED_URL
    assert PUBLISHED_URL in (REPO / "docs" / "editors.md").read_text(encoding="utf-8")
    assert (REPO / PUBLISHED_URL.split("/main/", 1)[1]) == SCHEMA_PATH
