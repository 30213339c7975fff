"""Property tests: the engine never raises, whatever the files hold.

Arbitrary JSON for probe.json, arbitrary bytes for question.md and arbitrary
markdown for SKILL.md: every outcome is a list of diagnostics, never an
exception, and never SE000 (a crashing rule).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skill_eval.linter.engine import lint_paths
from skill_eval.linter.markdown import extract_skill_section, parse_markdown

SKILL = "---\nname: s\ndescription: d\n---\n# S\n\n## Step 1\n\nThe `verdict` is `PASS` or `NOT_PROVEN`.\n"
SPEC = "# Spec\n\n## `verdict`\nValues: `PASS`, `NOT_PROVEN`\n"
PROBE = {
    "id": "p", "tier": 2, "kind": "floor", "step_heading": "Step 1", "shapes": ["euphemized"], "seeded_defects": 1,
    "defects": [{"id": "D1", "shape": "euphemized", "quote": "covered", "caught_when": {"verdict": "NOT_PROVEN"}}],
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=20,
)
probe_like = st.fixed_dictionaries(
    {},
    optional={key: json_values for key in PROBE} | {
        "defects": st.lists(st.dictionaries(st.sampled_from(["id", "shape", "quote", "caught_when", "x"]), json_values, max_size=5), max_size=3),
        "step_heading": st.text(max_size=30),
        "band": st.dictionaries(st.sampled_from(["min_caught", "max_caught"]), json_values),
    },
)

markdown_text = st.lists(
    st.sampled_from(["# H", "## Step 1", "### Step 1", "Setext", "---", "===", "```", "    code", "<div>", "</div>",
                     "- item `verdict`", "> quote", "| a | b |", "|---|---|", "", "---\nname: x\n---", "text", "## `f`",
                     "Values: `A`", "<!-- skill-eval: disable SE107 -->", "\t", "\u00e9\u0301", "[link](x)", "*em*"])
    | st.text(max_size=40),
    max_size=25,
).map("\n".join)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _workspace(root: Path, probe: bytes, question: bytes, skill: bytes, spec: bytes = SPEC.encode()) -> Path:
    (root / "skill-eval.toml").write_text("")
    skill_dir = root / "s"
    probe_dir = skill_dir / "evals" / "probes" / "p"
    probe_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_bytes(skill)
    (skill_dir / "output-spec.md").write_bytes(spec)
    (probe_dir / "probe.json").write_bytes(probe)
    (probe_dir / "question.md").write_bytes(question)
    return root


def _lint(probe: bytes, question: bytes, skill: bytes, spec: bytes = SPEC.encode()):
    with tempfile.TemporaryDirectory() as folder:
        root = _workspace(Path(folder), probe, question, skill, spec)
        result = lint_paths([root])
        crashes = [d for d in result.diagnostics if d.code == "SE000"]
        assert not crashes, crashes
        for d in result.diagnostics:
            assert d.start.line >= 1 and d.start.column >= 1
            assert (d.end.line, d.end.column) >= (d.start.line, d.start.column)
        return result


@SETTINGS
@given(probe_like)
def test_arbitrary_probe_json(data) -> None:
    _lint(json.dumps(data).encode(), b"covered by tests\n", SKILL.encode())


@SETTINGS
@given(json_values)
def test_arbitrary_json_document(data) -> None:
    _lint(json.dumps(data).encode(), b"covered\n", SKILL.encode())


@SETTINGS
@given(st.binary(max_size=300))
def test_arbitrary_bytes_in_question_and_probe(data) -> None:
    _lint(json.dumps(PROBE).encode(), data, SKILL.encode())
    _lint(data, b"covered\n", SKILL.encode())


@SETTINGS
@given(markdown_text)
def test_arbitrary_markdown_skill_and_spec(text) -> None:
    _lint(json.dumps(PROBE).encode(), b"covered\n", text.encode("utf-8", "surrogatepass"), text.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(markdown_text, st.text(max_size=30))
def test_extract_skill_section_raises_only_lookup_errors(text, heading) -> None:
    document = parse_markdown(text)
    try:
        window = extract_skill_section(document, heading)
    except LookupError:
        return
    assert 1 <= window.start_line <= window.end_line <= document.line_count


path_parts = st.lists(st.sampled_from(["a", "b", "ab", "a b", ".x", "é", "..", "."]), max_size=5)


@given(path_parts, path_parts)
def test_display_path_is_relpath_below_the_base(base_parts: list[str], path_parts_: list[str]) -> None:
    """display_path gives what ``os.path.relpath`` gives, for paths below the
    base, beside it, above it and equal to it."""
    import os

    from skill_eval.linter.output import display_path

    base = os.path.normpath("/" + "/".join(base_parts))
    path = os.path.normpath("/" + "/".join(path_parts_))
    assert display_path(Path(path), Path(base)) == os.path.relpath(path, base)
