"""Anchoring (SE101/SE102) over random heading trees: every path the engine
offers names exactly one heading, and applying any offered fix resolves the
probe (no SE101, no SE102 after it).

The ground truth is :meth:`MarkdownDocument.find_headings`, the resolver the
probes are linted with, applied to the text the fix writes into probe.json.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skill_eval.linter.engine import lint_paths
from skill_eval.linter.fixes import apply_edits
from skill_eval.linter.markdown import AmbiguousHeading, extract_skill_section, normalize_heading_text, parse_markdown

HEADING_TEXTS = [
    "Step 1", "Step 2", "Check", "Review", "Closeout",
    "Configure `<details>` blocks", "The `__init__` file", "Q `&amp;` A", "Use `a > b` paths",
    "Input > Output", "Step 1 > Check", r"\#1 priority", "*Step* 1", "Step `1`", "Check <br> twice",
]

headings = st.lists(st.tuples(st.integers(1, 4), st.sampled_from(HEADING_TEXTS)), min_size=1, max_size=9)


def skill_text(tree: list[tuple[int, str]]) -> str:
    body = "".join(f"{'#' * level} {text}\n\nRule {index} says `verdict`.\n\n" for index, (level, text) in enumerate(tree))
    return "---\nname: skill\ndescription: d\n---\n\n" + body + "```markdown\n## Hidden in a fence\n```\n"


@settings(max_examples=300, deadline=None)
@given(headings)
def test_every_path_names_exactly_its_heading(tree) -> None:
    doc = parse_markdown(skill_text(tree))
    for heading in doc.headings:
        path = doc.path_of(heading)
        if path is not None:
            assert doc.find_headings(path) == [heading], (heading, path)
        else:  # no form names it alone: neither its text nor its whole chain of ancestors does
            chain = [doc.reference_of(h) for h in reversed([heading, *doc.ancestors(heading)])]
            assert doc.find_headings(doc.reference_of(heading)) != [heading]
            assert doc.find_headings(" > ".join(chain)) != [heading]
    for suggestion in doc.suggest_headings("Configure details"):
        assert len(doc.find_headings(suggestion)) == 1


@settings(max_examples=300, deadline=None)
@given(headings, st.sampled_from(HEADING_TEXTS))
def test_ambiguous_heading_paths_each_name_one_heading(tree, wanted) -> None:
    text = skill_text(tree)
    try:
        extract_skill_section(text, wanted)
    except AmbiguousHeading as error:
        doc = parse_markdown(text)
        named = [doc.find_headings(path) for path in error.paths]
        assert all(len(found) == 1 for found in named)
        assert {found[0] for found in named} <= set(error.headings)
        assert len({found[0] for found in named}) == len(error.paths)
    except LookupError:
        pass


def _probe(step_heading: str) -> str:
    return json.dumps({
        "id": "p", "tier": 2, "kind": "floor", "step_heading": step_heading, "shapes": ["euphemized"],
        "seeded_defects": 1,
        "defects": [{"id": "D1", "shape": "euphemized", "quote": "coverage applies", "caught_when": {"verdict": "PASS"}}],
    }, indent=2)


def _anchoring(root: Path) -> list:
    return [d for d in lint_paths([root], jobs=1).diagnostics if d.code in ("SE101", "SE102")]


step_headings = st.one_of(
    st.sampled_from(HEADING_TEXTS),
    st.sampled_from(HEADING_TEXTS).map(lambda t: normalize_heading_text(t)),  # the plain text a person copies
    st.sampled_from(HEADING_TEXTS).map(lambda t: normalize_heading_text(t).lower()),
    st.sampled_from(HEADING_TEXTS).map(lambda t: normalize_heading_text(t)[:-1] or "x"),
    st.tuples(st.sampled_from(HEADING_TEXTS), st.sampled_from(HEADING_TEXTS)).map(" > ".join),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(headings, step_headings)
def test_applying_any_offered_fix_resolves_the_step(tree, step_heading) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "skill-eval.toml").write_text("# root\n")
        skill = root / "skill"
        probe = skill / "evals" / "probes" / "p"
        probe.mkdir(parents=True)
        (skill / "SKILL.md").write_text(skill_text(tree), encoding="utf-8")
        (skill / "output-spec.md").write_text("## `verdict`\nValues: `PASS`\n")
        (probe / "question.md").write_text("The existing coverage applies.\n")
        original = _probe(step_heading)
        (probe / "probe.json").write_text(original, encoding="utf-8")
        for diagnostic in _anchoring(root):
            for fix in diagnostic.fixes:
                fixed = apply_edits(original, fix.edits)
                (probe / "probe.json").write_text(fixed, encoding="utf-8")
                assert _anchoring(root) == [], (step_heading, fix.title)
                chosen = json.loads(fixed)["step_heading"]
                assert fix.title.endswith(repr(chosen))
            (probe / "probe.json").write_text(original, encoding="utf-8")


def test_code_span_headings_round_trip_in_the_message_and_the_fix(tmp_path: Path) -> None:
    """The did-you-mean of a heading whose code span holds `<details>` is a
    form that resolves, not the rejected plain text again."""
    (tmp_path / "skill-eval.toml").write_text("# root\n")
    skill = tmp_path / "skill"
    probe = skill / "evals" / "probes" / "p"
    probe.mkdir(parents=True)
    (skill / "SKILL.md").write_text(skill_text([(2, "Configure `<details>` blocks"), (2, "The `__init__` file")]))
    (skill / "output-spec.md").write_text("## `verdict`\nValues: `PASS`\n")
    (probe / "question.md").write_text("The existing coverage applies.\n")
    for typed, offered in (("Configure <details> blocks", "Configure `<details>` blocks"),
                           ("The __init__ file", "The `__init__` file")):
        (probe / "probe.json").write_text(_probe(typed))
        (found,) = _anchoring(tmp_path)
        assert found.code == "SE101" and f"did you mean {offered!r}" in found.message
        assert json.loads(found.fixes[0].edits[0].new_text) == offered


def test_se101_says_when_the_heading_sits_in_a_code_block(tmp_path: Path) -> None:
    (tmp_path / "skill-eval.toml").write_text("# root\n")
    skill = tmp_path / "skill"
    probe = skill / "evals" / "probes" / "p"
    probe.mkdir(parents=True)
    (skill / "SKILL.md").write_text(skill_text([(2, "Step 1")]))
    (skill / "output-spec.md").write_text("## `verdict`\nValues: `PASS`\n")
    (probe / "question.md").write_text("The existing coverage applies.\n")
    (probe / "probe.json").write_text(_probe("## Hidden in a fence"))
    (found,) = _anchoring(tmp_path)
    fence_line = (skill / "SKILL.md").read_text().splitlines().index("## Hidden in a fence") + 1
    assert f"line {fence_line} reads like that heading but sits inside a code block" in found.message
    assert any(r.span.start.line == fence_line for r in found.related)
