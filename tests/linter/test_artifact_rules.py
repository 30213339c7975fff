"""Unit tests of SE303 line counting, SE304 markers and SE501 similarity."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skill_eval.linter.engine import lint_paths
from skill_eval.linter.rules.artifact._common import artifact_lines
from skill_eval.linter.rules.calibration.se501_reused_scenario import shingles
from skill_eval.linter.textfile import TextDocument


@pytest.mark.parametrize("raw, lines", [
    (b"", 0), (b"a", 1), (b"a\n", 1), (b"a\r\n", 1), (b"a\r\nb", 2), (b"a\rb\r", 2), (b"\n", 1), (b"a\n\n", 2),
    (b"\xef\xbb\xbfa\r\nb\r\n", 2),
])
def test_lines_are_counted_per_the_spec(raw: bytes, lines: int) -> None:
    assert artifact_lines(TextDocument.from_bytes(Path("q.md"), raw)) == lines


def workspace(tmp_path: Path, artifacts: dict[str, str], config: str = "", ids: dict[str, str] | None = None) -> Path:
    (tmp_path / "skill-eval.toml").write_text(config)
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: skill\ndescription: Use when closing out.\n---\n\n# S\n\n## Step\n\nThe `verdict` is `PASS`.\n")
    (skill / "output-spec.md").write_text("# O\n\n## `verdict`\nValues: `PASS`\n")
    for name, text in artifacts.items():
        folder = skill / "evals" / "probes" / name
        folder.mkdir(parents=True)
        (folder / "question.md").write_text(text)
        (folder / "probe.json").write_text(json.dumps({
            "id": (ids or {}).get(name, name), "tier": 2, "kind": "floor", "step_heading": "Step",
            "shapes": ["euphemized"], "seeded_defects": 1,
            "defects": [{"id": "D1", "shape": "euphemized", "quote": "zz", "caught_when": {"verdict": "PASS"}}],
        }))
    return tmp_path


def codes(root: Path, select: str) -> list[tuple[str, str, int]]:
    result = lint_paths([root], overrides={"select": (select,)})
    return [(d.code, d.path.parent.name, d.start.line) for d in result.diagnostics]


def test_max_artifact_lines_is_configurable(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"p": "zz\n" * 6}, "max-artifact-lines = 5\n")
    assert codes(root, "SE303") == [("SE303", "p", 6)]


@pytest.mark.parametrize("text", [
    "We seeded the database.", "Trees were planted along the road.", "Defect tracking moved to Jira.",
    "<!-- layout: wide -->", "The seed value was 42 (seed 42).", "D1 is the data disk.",
])
def test_se304_ignores_ordinary_words(tmp_path: Path, text: str) -> None:
    assert codes(workspace(tmp_path, {"p": text + "\nzz\n"}), "SE304") == []


@pytest.mark.parametrize("text", [
    "row (defect)", "row [defect]", "Defect: row 3", "<!-- D1 -->", "<!-- d1 here -->", "<!-- the seeded row -->",
    "skill-eval: disable SE303", "a seeded defect", "a planted flaw", "the bug was deliberately planted",
    "{planted}", "(Seeded Defect #2)", "see defect D1",
])
def test_se304_reports_markers(tmp_path: Path, text: str) -> None:
    assert codes(workspace(tmp_path, {"p": "zz\n" + text + "\n"}), "SE304") == [("SE304", "p", 2)]


STORY = ("The rebuild of the product search index shipped on Thursday after the storage migration and every "
         "criterion lists the evidence the implementing team attached to the ticket before the review meeting. "
         "Queries return within two hundred milliseconds at the ninety fifth percentile on the staging cluster, "
         "stale documents are purged every night by the cleanup job, and synonyms apply to all locales as the "
         "implementing lane verified during its own review of the change.")


def test_shingles_ignore_case_markup_and_punctuation() -> None:
    assert shingles("**The** rebuild, of the index!") == shingles("the rebuild of the index")
    assert len(shingles("one two three four")) == 0
    assert len(shingles("one two three four five")) == 1


def test_se501_near_duplicates_and_versions(tmp_path: Path) -> None:
    root = workspace(tmp_path, {
        "a": STORY, "b": STORY.replace("The rebuild", "This rebuild"), "a2": STORY.replace("the change.", "the patch."),
        "other": "A completely different artifact about webhook signing keys rotated on Monday by the platform lane.",
    }, ids={"a2": "a"})
    found = codes(root, "SE501")
    assert ("SE501", "a", 1) in found and ("SE501", "b", 1) in found and ("SE501", "a2", 1) in found
    assert all(name != "other" for _, name, _ in found)
    result = lint_paths([root], overrides={"select": ("SE501",)})
    a_diag = next(d for d in result.diagnostics if d.path.parent.name == "a")
    assert [r.span.path.parent.name for r in a_diag.related] == ["b"]  # never its own version a2


@pytest.mark.parametrize("jobs", [1, 2])
def test_se501_on_a_few_probes_finds_what_the_whole_lint_finds(tmp_path: Path, jobs: int) -> None:
    """Linting a few probe files of a workspace compares their artifacts with
    every other one directly (no workspace-wide 5-gram index): the findings
    on them, related locations and all, are those of a lint of the whole
    workspace, for artifacts sharing a boilerplate paragraph with everyone,
    near-duplicates, and artifacts that differ only in their first words."""
    words = STORY.split()
    boilerplate = " This report follows the quarterly template agreed with the platform review board last spring."
    artifacts = {f"x{n:02}": " ".join(words[n % 7:] + [f"unique{n}-{k}" for k in range(40)]) + boilerplate
                 for n in range(40)}
    artifacts["dup-a"] = STORY + boilerplate
    artifacts["dup-b"] = STORY.replace("Thursday", "Friday") + boilerplate
    artifacts["dup-c"] = "Preface words here. " + STORY + boilerplate
    artifacts["lone"] = "A short note on webhook signing keys rotated by the platform lane on Monday morning."
    root = workspace(tmp_path, artifacts)

    def se501(*paths: Path) -> list[tuple]:
        found = lint_paths(list(paths), overrides={"select": ("SE501",)}, jobs=jobs).diagnostics
        return [(d.path, d.message, tuple((r.span, r.message) for r in d.related)) for d in found]

    whole = se501(root)
    assert {path.parent.name for path, _m, _r in whole} == {"dup-a", "dup-b", "dup-c"}
    probes = root / "skill" / "evals" / "probes"
    for names in (["dup-a"], ["dup-b", "lone"], ["dup-c", "x03", "x17", "dup-a"], ["x05"]):
        few = se501(*(probes / name / "probe.json" for name in names))
        assert few == [entry for entry in whole if entry[0].parent.name in names], names


CLOSEOUT = ("Closeout review for the payments gateway migration. The team moved every merchant account from the "
            "old gateway to the new one over three weekends and kept the old gateway running read only for refunds. "
            "Criterion one says settlement files reconcile to the cent for a full week, and the attached report "
            "shows seven days of matching totals. Criterion two asks for a rollback drill, which the on call lead "
            "ran on Tuesday and recorded in the runbook. Criterion three covers alerting on failed captures, "
            "tested against a staged outage last month.")
"""A ~90-word work artifact."""

UNRELATED = [
    ("Closeout review for the search index rebuild. Every criterion names the evidence attached to the ticket: "
     "query latency stays under two hundred milliseconds on staging, stale documents are purged nightly by the "
     "cleanup job, and synonyms work in all locales. The reviewer asked for the load test report, which the team "
     "attached on Friday, and for a rollback drill, which is still pending with the on call lead."),
    ("Incident summary for the payments gateway outage on Tuesday. Captures failed for forty minutes after a "
     "certificate expired on the new gateway; the on call lead rolled back to the old gateway, which kept "
     "refunds running. Settlement files for the day reconcile to the cent. Alerting on failed captures fired "
     "late because the threshold was set for the old traffic pattern, and the runbook now covers the check."),
]
"""Work text of the same domain and vocabulary as :data:`CLOSEOUT`, not copied from it."""


def _substituted(text: str, edits: dict[int, str]) -> str:
    words = text.split(" ")
    for index, word in edits.items():
        words[index] = word
    return " ".join(words)


@pytest.mark.parametrize("edits", [
    {4: "cutover.", 41: "fortnight,", 80: "refunds."},
    {0: "Final", 30: "month,", 60: "Wednesday"},
    {12: "shop", 45: "files", 75: "logged"},
])
def test_se501_finds_a_copy_edited_in_scattered_places(tmp_path: Path, edits: dict[int, str]) -> None:
    """Three one-word substitutions spread over a ~90-word artifact break
    ~15 of its ~85 word 5-grams (Jaccard ~0.7, under the threshold), but
    leave its words in order: the copy is a near-duplicate, in a whole lint
    (the index) as in a lint of the copy alone (the direct look)."""
    edited = _substituted(CLOSEOUT, edits)
    assert len(CLOSEOUT.split()) in range(85, 100) and edited != CLOSEOUT
    artifacts = {"original": CLOSEOUT, "copy": edited}
    artifacts.update({f"work{n}": text for n, text in enumerate(UNRELATED)})
    rng = random.Random(15)  # fillers (their words shuffled): enough probes that a lint of one looks directly
    artifacts.update({f"other{n}": " ".join(rng.sample(text.split(), len(text.split())))
                      for n, text in enumerate(UNRELATED * 6)})
    root = workspace(tmp_path, artifacts)
    found = lint_paths([root], overrides={"select": ("SE501",)}).diagnostics
    flagged = {d.path.parent.name: d for d in found}
    assert set(flagged) == {"original", "copy"}
    assert "of words alike, in order" in flagged["copy"].message
    assert [r.span.path.parent.name for r in flagged["copy"].related] == ["original"]
    alone = lint_paths([root / "skill/evals/probes/copy/probe.json"], overrides={"select": ("SE501",)}).diagnostics
    assert [(d.path, d.message) for d in alone] == [(flagged["copy"].path, flagged["copy"].message)]


def test_se501_leaves_unrelated_work_text_of_one_domain_alone(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"closeout": CLOSEOUT, **{f"work{n}": text for n, text in enumerate(UNRELATED)},
                                "story": STORY})
    assert codes(root, "SE501") == []


def test_se501_threshold_is_configurable(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"a": STORY, "b": STORY.replace("storage", "disk").replace("ticket", "issue")},
                     "near-duplicate-threshold = 0.99\n")
    assert codes(root, "SE501") == []


def test_se501_is_suppressed_per_probe(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"a": STORY, "b": STORY})
    data = json.loads((root / "skill/evals/probes/a/probe.json").read_text())
    data["x-skill-eval-disable"] = ["SE501"]
    (root / "skill/evals/probes/a/probe.json").write_text(json.dumps(data))
    assert codes(root, "SE501") == [("SE501", "b", 1)]


def test_se501_skill_example(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"p": "# Task\n\n" + STORY + "\n\nPlease post the verdict.\n"})
    skill = root / "skill" / "SKILL.md"
    skill.write_text(skill.read_text() + "\nFor example:\n\n> " + STORY + "\n\n```\nverdict: PASS\n```\n")
    result = lint_paths([root], overrides={"select": ("SE501",)})
    assert [(d.code, d.path.name) for d in result.diagnostics] == [("SE501", "question.md")]
    assert result.diagnostics[0].related[0].span.path == skill


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=60) | st.text(max_size=40))
def test_shingle_words_split_fast_as_the_regex_does(text: str) -> None:
    """SE501's translate-and-split path for ASCII text finds the regex's words."""
    from skill_eval.linter.rules.calibration.se501_reused_scenario import _WORD, _words

    assert list(_words(text)) == _WORD.findall(text.casefold())


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 2**30 - 1), min_size=20, max_size=60, unique=True),  # as shingles() hashes them
    st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12), st.booleans()), min_size=2, max_size=10),
    st.integers(1, 4),
)
def test_direct_and_indexed_candidates_find_the_same_near_duplicates(
    base: list[int], variants: list[tuple[int, int, bool]], linted_count: int
) -> None:
    """The near-duplicates of a few linted artifacts, looked for directly, are
    those the workspace-wide prefix index finds: artifacts made from one set
    of 5-grams, each dropping some (its first ones, or its last, since the
    direct look reads the first of each array) and adding others, so that
    pairs fall on both sides of the threshold."""
    from array import array
    from pathlib import Path

    from skill_eval.linter.rules.calibration.se501_reused_scenario import (
        ArtifactFacts, ReusedScenario, _direct_candidates, _indexed_candidates)

    entries = []
    for number, (dropped, added, drop_first) in enumerate(variants):
        kept = base[dropped:] if drop_first else base[: len(base) - dropped]
        grams = array("I", sorted(kept + [(2**29 + number * 64 + k) for k in range(added)]))  # as shingles() sorts them
        entries.append((Path(f"/w/p{number}/probe.json"), ArtifactFacts(f"p{number}", f"/w/p{number}/question.md", (1, 2), grams)))
    linted = {path for path, _facts in entries[:linted_count]}

    def matches(candidates_of: dict, shared: dict | None = None) -> list:
        return [(d.span.path, d.message)
                for d in ReusedScenario()._near_duplicates(entries, candidates_of, 0.8, Path("/w"), None, shared)]

    from skill_eval.linter.rules.calibration import se501_reused_scenario as se501

    for threshold in (0.8, se501.candidate_threshold(0.8)):  # the rule's, and the candidates' it looks for
        candidates_of, shared = _direct_candidates(entries, linted, threshold)
        # the direct look's counts of shared 5-grams are the pairs' own
        assert shared == {(number, other): len(set(entries[number][1].grams) & set(entries[other][1].grams))
                          for number, others in candidates_of.items() for other in others}
        direct = matches(candidates_of, shared)
        for margin in (16, 0, 3):  # how far past its prefix an artifact's 5-grams are counted: any order is exact
            se501.MARGIN, original = margin, se501.MARGIN
            try:
                assert matches(_indexed_candidates(entries, linted, threshold)) == direct, (threshold, margin)
            finally:
                se501.MARGIN = original
