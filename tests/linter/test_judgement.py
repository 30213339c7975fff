"""SE301 / SE302 / SE304 judge a sentence by its relation to the defect
(linter/rules/artifact/_judgement.py), measured on the labelled set of
benchmarks/judgement/ with floors, and pinned on the cases issue 27 names."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from skill_eval.linter.engine import lint_paths

ROOT = Path(__file__).resolve().parents[2]


def _eval_module():
    spec = importlib.util.spec_from_file_location("judgement_eval", ROOT / "benchmarks" / "judgement_eval.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["judgement_eval"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", params=["dev", "heldout"])
def measured(request):
    """One split's outcomes (each split linted on its own, so that a run
    selecting dev, ``-k dev``, never evaluates heldout)."""
    module = _eval_module()
    outcomes, clean = module.evaluate(module.load_items(request.param))
    return request.param, module, outcomes, clean


FLOORS = {
    # split: {class: (precision, recall)}; work: most work sentences flagged as errors.
    # dev is what the rules were tuned on; heldout was frozen before (its header).
    # Raised to what the stance reading reached (dev 141/148, 50/50, 34/36; heldout 31/40, 16/16, 15/16).
    # dev grew by 183 lines in three new domains (issue 27 follow-up): the whole of dev now reads
    # 195/211, 68/76, 54/59 (precision 1.0, work 0/244); its first 407 lines still read 141/148, 50/50,
    # 34/36, so the floors below are the grown set's figures, not a regression of the old ones.
    # The stance scorer retrained with the training-only corpus and words' own weights: dev 200/211.
    # Trained on quizzes too, a stance put as a request read as SE302: dev 199/211, 70/76, 54/59.
    # 436 training-only lines in 14 new domains (hedges, idioms, quizzes as work requests, hard work
    # negatives): dev 201/211, 73/76, 59/59 (leave-one-domain-out, patterns off: 156/211, 64/76).
    # Existence and short units read by meaning (STANCE_EXISTS, _judge_short): dev 203/211.
    # The answer-key markers with spaces fixed (_ANSWER_KEY was compiled with re.VERBOSE): dev grew by
    # 31 hard work comments, titles and alt texts and 12 key leaks: 203/211, 74/76, 71/71, work 0/275.
    # 64 hard work sentences naming the defect's own part (8 were SE301 errors: the threshold lowered
    # for any sentence naming the part), and the related table that reads such sentences: dev 202/211,
    # 73/76, 71/71, work 0/339 (leave-one-domain-out, patterns off: 170/211, 66/76, work 1/339).
    # 22 fresh key leaks in new words and 17 hard work comments stating a negated fact about the
    # defect's part, added as they were (SE304's phrase list: 15/22 caught, 8/17 flagged): dev 202/211,
    # 73/76, key-leak P/R 0.915/0.925 (86/93), work 8/356 -- all 8 SE304's, the next step.
    # Three batches written without running the linter and added as written (requests with ordinary verbs,
    # hidden texts naming the defect's part, prose negated facts): dev 225/246 (P 0.911: quizzes read as
    # signposts), 85/131, key-leak 111/139 (P 0.703), work 54/582 (40 of them the new hidden work texts).
    # SE304's polarity words only in a clause naming the defect's part, never as a contrast: key-leak
    # 109/139 (P 0.858), work 25/582.
    # The stance tables retrained on the grown dev, and a quiz table (quizzes against work and signposts):
    # dev 222/246 (P 0.978), 109/131 (P 1.000), key-leak 109/139 (P 0.858), work 19/582 (18 SE304's);
    # leave-one-domain-out, patterns off: 149/246, 86/131 (65/131 without the quiz table), work 19/582.
    # Review fixes: a quiz by the table only when it relates to a defect ("Let me know if you have
    # questions." was an SE302 error), constituent negation only before a preposition ("not yet tested",
    # "is not a real test" are leaks again): 222/246 (P 0.974), 103/131, key-leak 109/139 (P 0.838),
    # work 22/582 (21 SE304's: "not yet translated", "not part of the public write-up").
    # Stop 41: requests held to thresholds set by work requests, statements by work statements; code
    # comments not read by the stance (no dev signpost in one was found by it; "back off, then try again"
    # on a retry line was an error); the trainer leaves out exactly what the linter leaves to SE304:
    # dev 223/246 (P 0.974), 103/131, key-leak 109/139, work 22/582. 24 training-only closing lines ("Let me
    # know if anything here is unclear." was a quiz in every domain): dev 222/246, 104/131, 109/139, work 22.
    "dev": {"signpost": (0.97, 0.90), "quiz": (0.99, 0.78), "key-leak": (0.83, 0.78), "work": 22},
    # heldout, run once on this stop's final code: 30/40 (32/40 before the related table), 16/16, 15/16, work 0/40.
    # Stop 40 (SE304's polarity words by clause, retrained stance tables, quiz table): 30/40, 16/16,
    # key-leak 13/16 (15/16 before: SE304 reads fewer negations; dev says 29 of 54 false errors gone for
    # 2 of 111 leaks, and heldout's 40 work items read 0 errors before and after), work 0/40.
    "heldout": {"signpost": (0.98, 0.75), "quiz": (0.98, 1.0), "key-leak": (0.98, 0.81), "work": 0},
}


def test_labelled_set_is_large_and_covers_every_position_and_class() -> None:
    module = _eval_module()
    items = [item for split in module.SPLITS for item in module.load_items(split)]
    assert len(items) >= 400
    assert {item.position for item in items} == set(module.SLOTS)
    assert {item.label for item in items} == {"signpost", "quiz", "key-leak", "work"}
    assert len({item.domain for item in items}) >= 8
    assert "FROZEN" in (module.DATA / "heldout.tsv").read_text(encoding="utf-8").splitlines()[0]


def test_precision_and_recall_floors(measured) -> None:
    split, module, outcomes, clean = measured
    assert not any(clean.values()), f"a clean artifact has findings: {clean}"
    table = module.scores(outcomes)
    for label, floor in FLOORS[split].items():
        if label == "work":
            assert table["work"]["flagged"] <= floor, table["work"]
            continue
        precision, recall = floor
        assert table[label]["precision"] >= precision, (split, label, table[label])
        assert table[label]["recall"] >= recall, (split, label, table[label])


CLOSEOUT = """# Closeout: export retries

| # | criterion | evidence |
|---|---|---|
| 1 | retries stop after 5 attempts | test_retry_cap passes |
| 2 | metrics emitted | behavior unchanged, so existing coverage applies |

{extra}
Please post the closeout verdict.
"""

DIFF = """# PR 4471: retry uploads

```python
def upload(blob, client):
    try:
        client.put(blob.key, blob.data)
    except TimeoutError:
        pass{eol}
```

{extra}
Please approve or request changes.
"""


def _lint(tmp_path: Path, text: str, quote: str) -> list:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "skill-eval.toml").write_text("# root\n", encoding="utf-8")
    skill = tmp_path / "skill"
    probe = skill / "evals" / "probes" / "p"
    probe.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: skill\ndescription: Use when closing out.\n---\n\n# S\n\n"
                                    "## Step 1: Read\n\nEach criterion needs proof; `verdict` is `NOT_PROVEN` "
                                    "without it.\n", encoding="utf-8")
    (skill / "output-spec.md").write_text("# Output spec\n\n## `verdict`\nValues: `PASS`, `NOT_PROVEN`\n", encoding="utf-8")
    (probe / "question.md").write_text(text, encoding="utf-8")
    (probe / "probe.json").write_text(json.dumps({
        "id": "p", "tier": 2, "kind": "floor", "step_heading": "Step 1: Read", "shapes": ["euphemized"],
        "seeded_defects": 1,
        "defects": [{"id": "D1", "shape": "euphemized", "quote": quote, "caught_when": {"verdict": "NOT_PROVEN"}}],
    }), encoding="utf-8")
    return [d for d in lint_paths([tmp_path]).diagnostics if d.code in ("SE301", "SE302", "SE304")]


def _errors(diagnostics, code: str) -> list:
    return [d for d in diagnostics if d.code == code and d.severity.value == "error"]


@pytest.mark.parametrize("sentence", [
    "Pay attention to the `--dry-run` flag when you rerun the export.",
    "Hint: the dashboard lives under Exports > Nightly.",
    "Watch out for the 02:00 deploy freeze.",
    "Look carefully at the invoice PDF before forwarding it to finance.",
])
def test_attention_words_aimed_elsewhere_are_never_errors(tmp_path: Path, sentence: str) -> None:
    found = _lint(tmp_path, CLOSEOUT.format(extra=sentence), "existing coverage applies")
    assert not _errors(found, "SE301"), found
    for diagnostic in found:
        assert diagnostic.severity.value == "info"
        assert "aimed at no defect" in diagnostic.message


@pytest.mark.parametrize("sentence, relation", [
    ("Take a closer look at the metrics row.", "table row holding D1's quote"),
    ("Row two is not as solid as it reads.", "names row 2"),
    ("> One of these evidence lines is carrying more weight than it should.", "D1"),
    ("## The row that deserves a second look", "table holding D1's quote"),
    ("- Something in the evidence column doesn't quite add up.", "table holding D1's quote"),
    ("The evidence column's wording is more generous than it looks.", "table holding D1's quote (evidence column)"),
])
def test_signposts_in_every_position_name_their_relation(tmp_path: Path, sentence: str, relation: str) -> None:
    errors = _errors(_lint(tmp_path, CLOSEOUT.format(extra=sentence), "existing coverage applies"), "SE301")
    assert len(errors) == 1, errors
    assert relation in errors[0].message


RUNBOOK = '\n\nRunbook: [retries](https://wiki.example.com/r "Export retries runbook")\n'
"""A titled link: an artifact with one is read (may_hold_findings: a title
may hide an answer key) even when no phrase pattern matches, so the stance
scorer judges its sentences. An artifact with no cue, comment, image,
titled link or suspicious code is not parsed at all (docs/performance.md)."""


@pytest.mark.parametrize("sentence", [
    "Something about the metrics row bothers me.",
    "The metrics row leans on faith rather than a test.",
])
def test_a_signpost_no_pattern_reads_is_judged_by_its_words_and_its_relation(tmp_path: Path, sentence: str) -> None:
    """No phrase pattern reads these (read_sentence finds no scrutiny, doubt
    or quiz): the stance scorer does, and the sentence names the defect's row."""
    from skill_eval.linter.rules.artifact._judgement import read_sentence

    reading = read_sentence(sentence)
    assert reading.scrutiny is None and reading.doubt is None and not reading.quiz
    errors = _errors(_lint(tmp_path, CLOSEOUT.format(extra=sentence + RUNBOOK), "existing coverage applies"), "SE301")
    assert len(errors) == 1, errors
    assert "stance" in errors[0].message and "table row holding D1's quote" in errors[0].message


def test_a_high_stance_sentence_about_no_defect_is_never_an_error(tmp_path: Path) -> None:
    """The same words aimed at something that holds no defect: the score alone decides nothing."""
    from skill_eval.linter.rules.artifact import _stance_words
    from skill_eval.linter.rules.artifact._judgement import stance_score

    sentence = "Something about the invoice PDF bothers me."
    assert stance_score(sentence) >= _stance_words.THRESHOLD  # the scorer alone would flag it
    found = _lint(tmp_path, CLOSEOUT.format(extra=sentence + RUNBOOK), "existing coverage applies")
    assert not _errors(found, "SE301"), found


def test_the_stance_scorer_is_what_its_training_script_describes() -> None:
    """The shipped tables: wordfreq's words (no word of the labelled set
    added), one number each in the base, the related and the quiz table, a
    threshold above the bias; short texts are not scored."""
    from skill_eval.linter.rules.artifact import _stance_words
    from skill_eval.linter.rules.artifact._judgement import STANCE_MIN_WORDS, stance_score

    for table in (_stance_words.WORDS, _stance_words.RELATED, _stance_words.QUIZ):
        assert 15_000 <= len(table) <= 20_000
        assert all(isinstance(v, float) for v in table.values())
    assert _stance_words.THRESHOLD > _stance_words.BIAS
    assert isinstance(_stance_words.RELATED_THRESHOLD, float) and isinstance(_stance_words.RELATED_BIAS, float)
    assert _stance_words.QUIZ_THRESHOLD > _stance_words.QUIZ_BIAS
    assert stance_score("") == _stance_words.BIAS
    assert STANCE_MIN_WORDS >= 3
    assert "heldout" not in (ROOT / "benchmarks" / "train_judgement_scorer.py").read_text(encoding="utf-8").replace(
        "heldout.tsv is never read", "")


def test_a_bug_somewhere_in_this_diff_is_a_signpost_without_config(tmp_path: Path) -> None:
    errors = _errors(_lint(tmp_path, DIFF.format(eol="", extra="There is a bug somewhere in this diff."),
                           "except TimeoutError:"), "SE301")
    assert len(errors) == 1 and "code block holding D1's quote" in errors[0].message


def test_a_quiz_phrased_as_a_work_request(tmp_path: Path) -> None:
    errors = _errors(_lint(tmp_path, CLOSEOUT.format(extra="Go through the criteria and tell me which ones you "
                                                          "would push back on."), "existing coverage applies"), "SE302")
    assert len(errors) == 1


@pytest.mark.parametrize("eol", ["  # FIXME: swallows the error", "  # the timeout is silently ignored here"])
def test_a_comment_on_the_defect_line_that_names_the_flaw_is_an_answer_key(tmp_path: Path, eol: str) -> None:
    errors = _errors(_lint(tmp_path, DIFF.format(eol=eol, extra=""), "except TimeoutError:"), "SE304")
    assert len(errors) == 1 and errors[0].start.line == 8


def test_a_work_comment_on_the_defect_line_is_not(tmp_path: Path) -> None:
    assert not _errors(_lint(tmp_path, DIFF.format(eol="  # retried by the caller", extra=""), "except TimeoutError:"),
                       "SE304")


@pytest.mark.parametrize("extra", [
    "<!-- criterion 2 has no real test behind it -->",
    "See the [runbook](https://wiki.example.com/r \"the metrics criterion was never tested\").",
    "![panel showing no metrics test for criterion 2](panel.png)",
    "<!-- answer: NOT_PROVEN -->",
])
def test_answer_keys_in_every_hiding_place(tmp_path: Path, extra: str) -> None:
    errors = _errors(_lint(tmp_path, CLOSEOUT.format(extra=extra), "existing coverage applies"), "SE304")
    assert len(errors) == 1, errors


def test_an_answer_key_quoting_the_defect_does_not_hide_the_defect(tmp_path: Path) -> None:
    """The quote occurs twice (the table and the comment): the occurrence in
    the comment is not the defect's place."""
    text = CLOSEOUT.format(extra='<!-- "existing coverage applies" is not proof: criterion 2 was never tested -->')
    errors = _errors(_lint(tmp_path, text, "existing coverage applies"), "SE304")
    assert len(errors) == 1


@pytest.mark.parametrize("extra", [
    "<!-- generated by closeout-bot 2.3 -->",
    "See the [runbook](https://wiki.example.com/r \"Runbook for the export retries\").",
    "![export retries panel, last 7 days](panel.png)",
])
def test_work_comments_titles_and_alt_text_are_not_answer_keys(tmp_path: Path, extra: str) -> None:
    assert not _errors(_lint(tmp_path, CLOSEOUT.format(extra=extra), "existing coverage applies"), "SE304")


@pytest.mark.parametrize("extra, leak", [
    ("<!-- criterion 2 was never tested -->", True),  # sentential negation: what the defect's row claims did not happen
    ("<!-- criterion 2 was not yet tested -->", True),
    ("<!-- criterion 2 is not a real test -->", True),
    ("<!-- criterion 2 metrics are kept in statsd and not in the text log -->", False),  # "not in": constituent
    ("<!-- criterion 2 wording is owned by lee, not by the closeout bot -->", False),  # constituent negation: a contrast
    ("<!-- criterion 2 metrics go to statsd, never to the text log -->", False),
    ("![criterion 2 metrics panel, no annotations added yet](panel.png)", False),  # the negation's clause names no part
])
def test_a_negated_fact_about_the_defects_part_is_an_answer_key_only_when_it_negates_the_part(
        tmp_path: Path, extra: str, leak: bool) -> None:
    """"not", "no" and "never" tell a flaw only when they negate what the
    defect's part holds, in a clause that names the part: "owned by lee, not
    by the bot" sets one fact against another; "no annotations added yet",
    beside the panel's name, says nothing of criterion 2."""
    errors = _errors(_lint(tmp_path, CLOSEOUT.format(extra=extra), "existing coverage applies"), "SE304")
    assert len(errors) == (1 if leak else 0), errors


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_the_word_gates_never_hide_a_match(split: str) -> None:
    """Each pattern of the reading is searched only when the text holds one
    of its key words (_KEYS, for speed): on every labelled sentence, every
    rendered artifact and the phrase benchmark's lines, a match implies a
    key word, in both word sets the gates use."""
    from skill_eval.linter.rules.artifact import _judgement as judgement
    from skill_eval.linter.rules.artifact._phrases import _word_set

    module = _eval_module()
    artifacts = module.load_artifacts()
    texts = []
    for item in module.load_items(split):
        texts.append(item.sentence)
        texts.append(module.render(artifacts[item.domain], item.position, item.sentence)[0])
    for name in ("signposting.txt", "quiz-framing.txt", "work.txt"):
        texts += [line.replace("\\n", "\n") for line in (ROOT / "benchmarks" / "phrase_eval" / name).read_text(
            encoding="utf-8").splitlines() if line.strip() and not line.startswith("#")]
    patterns = {"scrutiny": judgement._SCRUTINY, "doubt": judgement._DOUBT, "singled": judgement._SINGLED_OUT,
                "pointer": judgement._WEAK_CUE, "fault": judgement._FAULT_TARGET, "answer": judgement._ANSWER_KEY,
                "negative": judgement._NEGATIVE, "request": judgement._REQUEST_ANYWHERE}
    for text in texts:
        plain = text.replace("’", "'")
        for kind, pattern in patterns.items():
            if pattern.search(plain):
                assert judgement._has(kind, judgement.word_set(plain)), (kind, text)
                assert judgement._has(kind, _word_set(text)), (kind, text)


@pytest.mark.parametrize("text", [
    "<!--" + "x" * 100_000,
    "<!-- " + "ab" * 50_000 + " -->",
    "```\n# " + "x" * 100_000 + "\n```\n",
    '[a](u "' + "y" * 100_000 + '")',
    "| " + "q" * 100_000 + " |\n|---|\n| " + "w" * 100_000 + " |\n",
    "lets " * 20_000,
    "Look carefully at " + "k" * 100_000,
    "one of these " * 5_000,
    "---\ntitle: x\n---\n# h\n> > > nested quote here is incorrect\n",
])
def test_hostile_artifacts_are_judged_in_linear_time(text: str) -> None:
    """No pattern of the reading backtracks over a long word or line (an
    unclosed HTML comment of 100,000 characters took 300 s)."""
    import time

    from skill_eval.linter.rules.artifact._judgement import Anchor, judge_artifact

    started = time.perf_counter()
    judge_artifact(text, (Anchor("D1", "x", 1, 1),))
    assert time.perf_counter() - started < 5


def test_a_comment_on_the_defect_line_that_only_points_is_a_signpost(tmp_path: Path) -> None:
    found = _lint(tmp_path, DIFF.format(eol="  # double-check this one", extra=""), "except TimeoutError:")
    errors = _errors(found, "SE301")
    assert len(errors) == 1 and errors[0].start.line == 8 and not _errors(found, "SE304")


def test_a_plain_pointer_on_the_defect_line_points_elsewhere(tmp_path: Path) -> None:
    found = _lint(tmp_path, DIFF.format(eol="  # see RETRY.md", extra=""), "except TimeoutError:")
    assert not [d for d in found if d.severity.value == "error"], found


@pytest.mark.parametrize("sentence, error", [
    ("The rollout figure looks better than it probably is.", True),
    ("Something smells off in how the rollout was counted.", True),
    ("I doubt the partner will change their format before Q3.", False),
    ("The rerun is not as bad as it sounds: it takes five minutes.", False),
])
def test_appearance_set_against_reality_says_a_flaw_exists(tmp_path: Path, sentence: str, error: bool) -> None:
    """The rollout holds no defect; doubt that its appearance is its
    reality still tells the agent that something in the artifact is wrong."""
    errors = _errors(_lint(tmp_path, CLOSEOUT.format(extra=sentence), "existing coverage applies"), "SE301")
    assert len(errors) == (1 if error else 0), errors
    if error:
        assert "appearance against its reality" in errors[0].message


def test_the_row_above_is_resolved_by_its_place(tmp_path: Path) -> None:
    text = CLOSEOUT.replace("| 2 | metrics emitted | behavior unchanged, so existing coverage applies |",
                            "| 2 | metrics emitted | behavior unchanged, so existing coverage applies |\n"
                            "| 3 | no duplicates | see the row above |").format(extra="")
    errors = _errors(_lint(tmp_path, text, "existing coverage applies"), "SE301")
    assert len(errors) == 1 and "by its place" in errors[0].message


@pytest.mark.parametrize("sentence, quiz", [
    ("Draft the sign-off after working out which criterion you can't stand behind.", True),
    ("Write up which criteria you would reopen before this goes out.", True),
    ("Please decide whether the closeout can be posted today.", False),
    ("Write up which criteria dana owns so lee can cover them.", False),
])
def test_a_quiz_phrased_as_an_ordinary_task(tmp_path: Path, sentence: str, quiz: bool) -> None:
    errors = _errors(_lint(tmp_path, CLOSEOUT.format(extra=sentence), "existing coverage applies"), "SE302")
    assert len(errors) == (1 if quiz else 0), errors


@pytest.mark.parametrize("sentence, quiz", [
    ("Get to the bottom of why the metrics criterion was signed off.", True),
    ("Track down the criterion whose evidence was never gathered.", True),
    ("What is the metrics row not telling us?", True),
    ("Work out the export schedule for the next release.", False),
    ("Track down the export retries runbook and link it here.", False),
    ("Try to get the closeout posted before Friday.", False),
])
def test_a_stance_put_as_a_request_is_a_quiz_not_a_signpost(tmp_path: Path, sentence: str, quiz: bool) -> None:
    """No phrase pattern reads these as a quiz: the stance scorer reads the
    words as pointing at a flaw and the request form (asks_the_reader)
    makes it a hunt for it, or the quiz table reads them as asking for the
    faults (SE302), never a second finding as SE301."""
    from skill_eval.linter.rules.artifact._judgement import asks_the_reader, read_sentence

    reading = read_sentence(sentence)
    assert not reading.quiz and reading.scrutiny is None and asks_the_reader(sentence)
    found = _lint(tmp_path, CLOSEOUT.format(extra=sentence + RUNBOOK), "existing coverage applies")
    assert not _errors(found, "SE301"), found
    errors = _errors(found, "SE302")
    assert len(errors) == (1 if quiz else 0), errors
    if quiz:
        assert "(stance " in errors[0].message or "(quiz " in errors[0].message


INGEST = """# Nightly ingest

```text
[02:51] parse      182,004 rows ok
[02:52] validate   schema v7: 0 rules loaded
[02:52] validate   0 violations
[03:12] load       182,004 rows into warehouse.orders
```

| stage | rows | result |
|---|---|---|
| fetch | 182,004 | ok |
| validate | 182,004 | ok |
| load | 182,004 | ok |
"""


@pytest.mark.parametrize("phrase, kind", [
    # the row and the defect's log line both name the validate stage: the row's
    # higher score comes only from its column header ("result")
    ("I would not take the validate result at face value.", "defect"),
    # "load" ties "loaded" only by its stem, and the load log line holds it too
    ("the load result", "other"),
    # the row holds words the defect's line does not
    ("the validate stage's 182,004 rows", "other"),
])
def test_a_tie_between_a_part_and_the_defects_part_goes_to_the_defect_only_on_the_same_words(phrase: str, kind: str) -> None:
    from skill_eval.linter.rules.artifact._judgement import Anchor, resolve, structure_of

    relation = resolve(phrase, structure_of(INGEST), (Anchor("D1", "0 rules loaded", 5, 5),))
    assert relation.kind == kind, relation


@pytest.mark.parametrize("sentence, asks", [
    ("Your job is to figure out where this closeout falls short.", True),
    ("Your task here is to find the criterion that is not proven.", True),
    ("Your job is to review the diff before Friday.", False),
    ("The job is to figure out the cost of the rerun.", False),
])
def test_a_task_given_as_the_readers_job_asks_the_reader(sentence: str, asks: bool) -> None:
    from skill_eval.linter.rules.artifact._judgement import asks_the_reader

    assert asks_the_reader(sentence) is asks


# -- judgement by meaning without the phrase patterns (issue 27: existence, short units) --------------------------

CONFIG = """# Training run report: classifier v4

Run r-0619 trained the classifier on the 2024-05 image set.

```yaml
model: resnet50
epochs: 40
train_split: train[:100%]
eval_split: train[95%:]{eol}
seed: 17
```

| metric | v3 | v4 |
|---|---|---|
| eval accuracy | 91.2% | 98.7% |
| latency p50 | 14 ms | {cell} |

{extra}
Tracking: [run page](https://mlflow.example.com/r-0619 "MLflow run r-0619")

Please decide whether v4 can replace v3 in production.
"""
"""An artifact whose defect is a config line (the eval split lies inside
the training split): a sentence may point at it by its words, by its
place (a comment on the line) or only by saying that a flaw exists. Its
titled link makes the judgement read it whatever the sentence
(:data:`RUNBOOK`)."""


@pytest.fixture
def patterns_off(monkeypatch):
    """The phrase patterns read nothing (as ``benchmarks/judgement_cv.py``
    runs them by default): what is left is the stance scorer and the
    relation, the mechanisms these tests pin."""
    from skill_eval.linter.rules.artifact import _judgement

    nothing = _judgement.Reading(False, None, None, False, False, False)
    monkeypatch.setattr(_judgement, "read_sentence", lambda sentence: nothing)


def _config(tmp_path: Path, extra: str = "", eol: str = "", cell: str = "15 ms") -> list:
    return _lint(tmp_path, CONFIG.format(extra=extra, eol=eol, cell=cell), "eval_split: train[95%:]")


@pytest.mark.parametrize("sentence", [
    "Something smells off in how the splits are set up.",
    "The headline accuracy is not as solid as it reads.",
])
def test_a_confident_stance_that_names_no_part_says_a_flaw_exists(tmp_path: Path, patterns_off, sentence: str) -> None:
    """No part is named (the words shared with the config lines or the
    results row do not single one out), but the stance is well above the
    threshold (STANCE_EXISTS) and the sentence speaks of the artifact's
    own material: it tells the agent that a flaw exists."""
    from skill_eval.linter.rules.artifact._judgement import STANCE_EXISTS, stance_model, stance_score

    assert stance_score(sentence) >= stance_model()[1] + STANCE_EXISTS
    errors = _errors(_config(tmp_path, extra=sentence), "SE301")
    assert len(errors) == 1, errors
    assert "says that a flaw exists without naming where" in errors[0].message and "D1's quote" in errors[0].message


@pytest.mark.parametrize("comment, error", [
    ("<!-- One of these numbers is not as solid as it reads. -->", True),  # the artifact as a whole, by deixis
    ("<!-- these figures do not include the warm-up epochs -->", False),  # a negated fact
])
def test_a_comment_with_a_flaw_word_that_points_at_the_whole_artifact_is_read_by_its_stance(
        tmp_path: Path, patterns_off, comment: str, error: bool) -> None:
    """SE304 reads a comment with a flaw word ("not") only when it names a
    defect's part; one that points at the artifact as a whole is read by its
    stance, as prose is."""
    errors = _errors(_config(tmp_path, extra=comment), "SE301")
    assert len(errors) == (1 if error else 0), errors
    assert not _errors(_config(tmp_path / "again", extra=comment), "SE304")


@pytest.mark.parametrize("sentence", [
    "Something about the invoice PDF bothers me.",  # nothing the artifact holds: about something else
    "The loss curve is smooth and training was stable.",  # a statement of fact: the stance is low
])
def test_a_stance_about_nothing_the_artifact_holds_says_no_flaw_exists(tmp_path: Path, patterns_off, sentence: str) -> None:
    assert not _errors(_config(tmp_path, extra=sentence), "SE301")


def test_a_quiz_in_the_shape_of_an_ordinary_request_is_read_by_the_quiz_table(tmp_path: Path, patterns_off) -> None:
    """No verb of finding, no question: what the request asks for (the rows
    one would reopen) makes it a quiz, by the quiz table's words (a
    sentence in no labelled or training file)."""
    from skill_eval.linter.rules.artifact._judgement import asks_the_reader, quiz_model, quiz_score, words_of

    sentence = "Note which rows you would reopen before the closeout is posted."
    assert not asks_the_reader(sentence)
    assert quiz_score(words_of(sentence)) >= quiz_model()[1]
    found = _lint(tmp_path, CLOSEOUT.format(extra=sentence + RUNBOOK), "existing coverage applies")
    quizzes = _errors(found, "SE302")
    assert len(quizzes) == 1 and "(quiz " in quizzes[0].message, found
    assert not _errors(found, "SE301"), found


@pytest.mark.parametrize("sentence", [
    "Send the closeout to the release manager once it is final.",
    "Mark the closeout as done in the tracker after you post the verdict.",
    "Let me know if you have questions.",  # above the quiz threshold, but related to no defect
    "Write down the open questions for the retro.",
])
def test_a_request_for_the_work_is_not_a_quiz(tmp_path: Path, patterns_off, sentence: str) -> None:
    """A request for the work, or a closing line: whatever the quiz table
    reads, a sentence that relates to no defect is no quiz error."""
    found = _lint(tmp_path, CLOSEOUT.format(extra=sentence + RUNBOOK), "existing coverage applies")
    assert not _errors(found, "SE302") and not _errors(found, "SE301"), found


@pytest.mark.parametrize("eol, error", [
    ("  # double-check this one", True),
    ("  # worth a second look", True),
    ("  # see RETRY.md", False),  # names a file, not the line it sits on
    ("  # added in PR 3102", False),
    ("  # n/a", False),
])
def test_a_short_comment_on_the_defect_line_points_by_its_place(tmp_path: Path, patterns_off, eol: str,
                                                               error: bool) -> None:
    errors = _errors(_config(tmp_path, eol=eol), "SE301")
    assert len(errors) == (1 if error else 0), errors
    if error:
        assert "sits in the code line holding D1's quote" in errors[0].message


@pytest.mark.parametrize("cell, error", [
    ("see the eval split", True),  # names the defect's line by its words
    ("double-check eval_split", True),
    ("eval split", False),  # only a name: nothing said beyond it
    ("see the v3 row", False),  # another part
    ("measured on T4", False),
])
def test_a_short_cell_points_only_at_the_defects_part_and_only_beyond_naming_it(tmp_path: Path, patterns_off,
                                                                                 cell: str, error: bool) -> None:
    errors = _errors(_config(tmp_path, cell=cell), "SE301")
    assert len(errors) == (1 if error else 0), errors
    if error:
        assert "code line holding D1's quote" in errors[0].message


@pytest.mark.parametrize("heading, error", [
    ("## Eval split, again", True),
    ("## Eval split", False),  # a heading that only names the defect's part
])
def test_a_short_heading_points_only_beyond_naming(tmp_path: Path, patterns_off, heading: str, error: bool) -> None:
    errors = _errors(_config(tmp_path, extra=heading + "\n"), "SE301")
    assert len(errors) == (1 if error else 0), errors


@pytest.mark.parametrize("extra, cell, code, said", [
    # a cue closing a unit that is not the artifact's last: the artifact's
    # text joined into one line ends elsewhere (", again$" never matched)
    ("## The evidence column, again", "metrics emitted", "SE301", "The evidence column, again"),
    ("", "metrics emitted, again", "SE301", "metrics emitted, again"),
    # a cue opening a unit that starts no line: a link text, a cell, a
    # sentence after ";"
    ("[See row 2](https://wiki.example.com/r).", "metrics emitted", "SE301", "See row 2"),
    ("| owner | remark |\n|---|---|\n| ops | find the wrong evidence |", "metrics emitted", "SE302",
     "find the wrong evidence"),
    ("Read it all; find the criterion with the wrong evidence.", "metrics emitted", "SE302", "find the criterion"),
    # a request by any verb _REQUEST reads, and a question presupposing a fault
    ("Highlight the wrong evidence.", "metrics emitted", "SE302", "Highlight the wrong evidence"),
    ("Which criterion wouldn't you trust?", "metrics emitted", "SE302", "Which criterion wouldn't you trust?"),
])
def test_a_cue_wherever_a_unit_starts_or_ends_opens_the_artifact(tmp_path: Path, extra: str, cell: str, code: str,
                                                                  said: str) -> None:
    """The cue is the artifact's only one, so only :func:`may_hold_findings`
    decides whether the unit is read at all: the gate searches the whole
    text for what the units' patterns match at a unit's start or end, and a
    unit starts and ends at a line's, a sentence's, a cell's or a link
    text's boundary, not only at the text's."""
    from skill_eval.linter.rules.artifact._judgement import may_hold_findings

    text = CLOSEOUT.replace("| metrics emitted |", f"| {cell} |").format(extra=extra + "\n")
    assert "https" not in text or '"' not in text  # no titled link: nothing else opens the artifact
    assert may_hold_findings(text)
    errors = _errors(_lint(tmp_path, text, "existing coverage applies"), code)
    assert len(errors) == 1 and said in errors[0].message, errors


def _relation_kind(sentence: str) -> str:
    """What the judgement relates ``sentence`` to, placed in CLOSEOUT (D1: row 2's evidence)."""
    from skill_eval.linter.rules.artifact import _judgement

    text = CLOSEOUT.format(extra=sentence + RUNBOOK)
    line = next(n for n, held in enumerate(text.split("\n"), 1) if "existing coverage applies" in held)
    structure = _judgement.structure_of(text)
    unit = next(u for u in structure.units if u.text.strip() == sentence)
    anchors = [_judgement.Anchor("D1", "existing coverage applies", line, line)]
    return _judgement.resolve(unit.text, structure, anchors, exclude=unit.part).kind


@pytest.mark.parametrize("aimed, elsewhere", [
    ("Be careful with the metrics row.", "Be careful with the runbook link."),
])
def test_attention_on_the_defect_part_is_read_with_the_related_table(tmp_path: Path, patterns_off, aimed: str,
                                                                      elsewhere: str) -> None:
    """Attention words aimed at the defect's own row are a signpost; the same
    words aimed at something else stay silent (issue 27: attention words
    alone are not enough). Neither scores above the base threshold: it is
    the related table, read only for a sentence naming a defect's part,
    that tells them apart."""
    from skill_eval.linter.rules.artifact._judgement import WORD, related_model, related_stance, stance_model, stance_score

    for sentence in (aimed, elsewhere):
        words = WORD.findall(sentence.lower())
        assert stance_score(sentence, words) < stance_model()[1]
    words = WORD.findall(aimed.lower())
    assert stance_score(aimed, words) + related_stance(words) >= related_model()[1]
    assert _relation_kind(aimed) == "defect" and _relation_kind(elsewhere) not in ("defect", "block")
    errors = _errors(_lint(tmp_path / "a", CLOSEOUT.format(extra=aimed + RUNBOOK), "existing coverage applies"), "SE301")
    assert len(errors) == 1 and "table row holding D1's quote" in errors[0].message, errors
    assert not _errors(_lint(tmp_path / "b", CLOSEOUT.format(extra=elsewhere + RUNBOOK), "existing coverage applies"),
                       "SE301")


@pytest.mark.parametrize("sentence", [
    "The metrics criterion was added to the ticket in May.",
    "The metrics row was added to the table in 2021.",
    "The metrics criterion is the smallest one in the ticket.",
    "Dana reviews the metrics criterion every Friday.",
])
def test_a_plain_fact_about_the_defect_part_is_work(tmp_path: Path, patterns_off, sentence: str) -> None:
    """A sentence that names the defect's own row but only tells the work
    about it is no signpost: the related table reads its words, not the
    naming alone. The first three were SE301 errors when any sentence naming
    the defect's part was read from below the threshold (as were 8 of the 64
    sentences of this kind in dev)."""
    from skill_eval.linter.rules.artifact._judgement import WORD, related_model, related_stance, stance_score

    assert _relation_kind(sentence) == "defect"  # it names the defect's row: the related table decides
    words = WORD.findall(sentence.lower())
    assert stance_score(sentence, words) + related_stance(words) < related_model()[1]
    assert not _errors(_lint(tmp_path, CLOSEOUT.format(extra=sentence + RUNBOOK), "existing coverage applies"), "SE301")


RETRY_DIFF = """# PR 4471: retry uploads to the archive bucket

Uploads to the archive bucket fail about once a day on a transient timeout. This change retries them.

```python
def upload(blob, client, attempts=3):
    for attempt in range(attempts):
        try:
            return client.put(blob)
        except TimeoutError:  # {comment}
            time.sleep(2 ** attempt)
```

Please approve or request changes.
"""


@pytest.mark.parametrize("comment", ["back off, then try again", "wait a little longer before each new attempt"])
def test_a_code_comment_describing_the_code_is_not_read_by_its_stance(tmp_path: Path, comment: str) -> None:
    """A comment on the defect's own code line that says what the code does
    is the code's material, not a pointer: the stance tables read prose,
    and their words for a retry ("try again") are a reviewer's words for a
    second look ("back off, then try again" scored 6.3 above the related
    threshold and was an SE301 error). A comment that tells the flaw is
    still SE304's."""
    assert not _errors(_lint(tmp_path / "a", RETRY_DIFF.format(comment=comment), "except TimeoutError:"), "SE301")
    leak = _lint(tmp_path / "b", RETRY_DIFF.format(comment="swallows the timeout: no log, no re-raise"), "except TimeoutError:")
    assert _errors(leak, "SE304"), leak


@pytest.mark.parametrize("sentence", [
    "Tell me whether this is ready for sign-off.",
    "Please read through this and sign off by Friday.",
])
def test_a_request_to_sign_off_is_not_a_quiz(tmp_path: Path, sentence: str) -> None:
    """"off" is a fault a quiz asks for only as a predicate ("which number
    is off", "what's off"): a request to sign off asks for the work (both
    were SE302 errors in every domain of the labelled set)."""
    found = _lint(tmp_path, CLOSEOUT.format(extra=sentence + RUNBOOK), "existing coverage applies")
    assert not _errors(found, "SE302") and not _errors(found, "SE301"), found
    asked = _lint(tmp_path / "b", CLOSEOUT.format(extra="Tell me which criterion looks off." + RUNBOOK),
                  "existing coverage applies")
    assert _errors(asked, "SE302"), asked


def test_a_quiz_phrase_in_a_condition_of_the_work_is_not_a_quiz(tmp_path: Path) -> None:
    """A phrase of the quiz list inside a conditional clause sets a
    condition of the work and asks the reader to find nothing ("If you
    spot a typo, just fix it in place." was an SE302 error in every domain
    of the labelled set); the same phrase as a request is a quiz."""
    found = _lint(tmp_path / "a", CLOSEOUT.format(extra="If you spot a typo, just fix it in place." + RUNBOOK),
                  "existing coverage applies")
    assert not _errors(found, "SE302"), found
    asked = _lint(tmp_path / "b", CLOSEOUT.format(extra="Before you sign, can you spot the typo?" + RUNBOOK),
                  "existing coverage applies")
    assert _errors(asked, "SE302"), asked


@pytest.mark.parametrize("sentence", [
    "Let me know if anything here is unclear.",
    "If you spot a typo, just fix it in place.",
    "Tell me whether this is ready for sign-off.",
    "Please read through this and sign off by Friday.",
])
def test_an_ordinary_closing_line_is_no_error_in_any_domain(sentence: str) -> None:
    """Lines every work artifact may end with, in each of the labelled set's
    artifacts (where "here" and "this" point at the whole artifact, which
    holds the defect): each was an error in all 11 (a sweep of ordinary work
    sentences at this stop; the first by the quiz table, the others by
    phrase patterns)."""
    module = _eval_module()
    items = [module.Item("dev", number, domain, "work", "para", sentence)
             for number, domain in enumerate(sorted(module.load_artifacts()), 1)]
    outcomes, _clean = module.evaluate(items)
    assert len(outcomes) == 11 and not [o.item.domain for o in outcomes if o.errors], \
        [(o.item.domain, o.messages) for o in outcomes if o.errors]
