"""SE301 signposting."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import judged_diagnostics


class Signposting(Rule):
    """## What it does
    Reports a sentence of the artifact (question.md) that points the agent at
    *where* the defect is or at the *fact* that one exists, in any position:
    a paragraph, a heading, a table cell, a list item, a block quote, a
    link's text.

    A sentence is judged by what it does and what it refers to:

    - **what it does**: it directs scrutiny ("take a second look at",
      "double-check", "the one to read twice", "pay attention to", "don't
      skim") or voices doubt about the material ("not as solid as it
      reads", "thinner than it looks", "there is a catch", "something here
      quietly eats failures", "one of these rows is incorrect");
    - **what it refers to**: the probe's defects are located by their
      quotes, and the artifact's parts are known (headings, table rows, list
      items, code lines). A noun phrase is resolved to the part it names: by
      an ordinal or number ("row 3", "the third criterion", "clause 4",
      "line 7", "the C row"), by the words it shares with a part (rare words
      weigh more, and they must cover the phrase), by a container noun of
      the block holding a defect ("the evidence column", "these rows", "the
      retry loop", a possessor as in "the test job's settings") or the
      heading of its section ("the action items"), by its place next to
      the sentence's own part ("see the row above" in a cell, "the
      controls above"), or by deixis ("one of these", "here", "somewhere
      in this report"), which refers to the artifact as a whole.

    Doubt that sets a part's appearance against its reality ("not as solid
    as it reads", "looks better than it probably is", "something smells
    off", "doesn't sit right") tells that a flaw exists whatever part it
    names, even one that holds no defect (the headline figure a flawed
    configuration produced): it is an error too. Doubt about a plan or a
    third party ("I doubt the partner will change their format") is not
    of that kind, nor is reassurance ("the rerun is not as bad as it
    sounds").

    A sentence the patterns of scrutiny and doubt do not read is also read
    by its words (the *stance* score): a linear model over the average of
    its words' static embeddings (WordLlama's, shipped in the `wordllama`
    wheel), trained on the labelled set's dev split and folded into one
    number per word for 20,000 common English words, so that a paraphrase
    no pattern lists ("Something about the metrics row bothers me", "The
    metrics row leans on faith rather than a test") reads as what it is.
    The linter ships the numbers, not the model: no dependency, nothing
    downloaded, a dictionary look-up per word
    (`benchmarks/train_judgement_scorer.py` trains it;
    `benchmarks/judgement_cv.py` checks it on domains it never saw). The
    score decides nothing alone: a sentence of five words or more scoring
    above the threshold is an error only when it relates to a defect as
    below; "Something about the invoice PDF bothers me" is not reported.
    A sentence that names a defect's own part, or the block or section
    holding it, is read with a second table of the same kind added (the
    *related* table, trained on the labelled sentences that name a
    defect's part, signposts against work), against a threshold of its
    own: attention aimed at that part points at the flaw ("Be careful with
    the metrics row"), while the same words aimed at anything else are work ("Keep an
    eye on the export's disk usage"), and a plain fact about the part is
    work too ("The refunds table was added to the schema in 2021",
    "Lee owns criterion 3 and is on call this week").
    One that names no part at all is an error only when it scores well
    above the threshold (`STANCE_EXISTS`) and speaks of the artifact's own
    material: it says that a flaw *exists* ("Something smells off in how
    the splits are set up", beside `train_split` and `eval_split` keys;
    "The headline accuracy is not as solid as it reads", beside a results
    table), and the finding says so ("says that a flaw exists without
    naming where ... the artifact holds D1's quote"). The invoice PDF
    sentence names nothing the artifact holds: it is about something else.

    A unit of two to four words (a cell, a heading, a comment at the end
    of a code line, a link's text) is too short for its words' average to
    be read alone. It is an error only when it relates to the defect
    precisely, by its place (a cell of the defect's row, a comment on its
    line) while naming nothing else, or by naming the defect's part
    ("double-check row 3", "see clause 4", "Negative control, again"), and
    what it says *beyond* the name reads as pointing at a flaw with
    confidence (the stance of its words that name nothing in the artifact,
    `STANCE_SURE` above the threshold). So `# double-check this one` on the
    defect's code line and `see the eval split` in a cell are errors; a
    heading that only names the defect's part ("Liability cap", "Negative
    control"), `# see RETRY.md` or `# added in PR 3102` on the defect's
    line (they name something else), `n/a` there, a cell "worth checking"
    in a row that holds no defect, and a label naming only the section
    ("Summary of the stages:") are not.
    The scorer is trained on signposts and quizzes alike (both tell that a
    flaw exists); a sentence it reads so that is put as a request or a
    question to the reader ("Track down the criterion whose evidence was
    never gathered") sends the agent to hunt for the flaw and is reported
    by SE302, not here: one sentence, one finding.
    It reads the sentences of an artifact the judgement opens at all (one
    with a cue of the patterns, a comment, an image, a titled link or a
    suspicious code comment); a plain artifact with none is not parsed.

    It is an **error** when scrutiny or doubt relates to a defect: aimed at
    the row, line, item, block or section holding its quote, or (doubt,
    deixis) at the artifact as a whole. Attention words aimed at anything
    else are work: "Pay attention to the `--dry-run` flag", "Watch out for
    the 02:00 deploy freeze", "Hint: the dashboard lives under Exports". A
    phrase of the shipped list (`linter/data/phrases.toml`, table
    `[signposting]`, plus `[signposting] extra`) with no relation to any
    defect is an **info** finding, never an error. A plain pointer ("see
    clause 4", "note the C row", "Hint: row 2") is an error only when it
    names the defect's part precisely. Each finding says what it related
    the sentence to ("it names row 3, the table row holding D1's quote").

    Without any defect quote found in the artifact nothing can be related,
    and the list's phrases are errors as they stand. `[signposting] allow`
    exempts occurrences inside an allowed phrase. Comments, link titles and
    alt text are judged by SE304 first: one that tells or marks the flaw is
    an answer key; one that only points at it (`# double-check this one`
    on the defect's code line, `<!-- reviewers: the fix block is where the
    retest should focus -->`) is an SE301 error, and one that points
    elsewhere is not reported (`# see RETRY.md` on the defect's line is a
    plain pointer to another file). How well this reads meaning is measured on
    a labelled set (benchmarks/judgement/, `python
    benchmarks/judgement_eval.py`); `skill-eval review` asks a configured
    model for a second opinion.

    ## Why is this bad?
    Seed rule 6: "Never signpost. No 'note the following' or 'one of these is
    incorrect.' Signposting converts a tier-2 probe back into a tier-1 quiz."
    An agent told where to look catches the defect without the discipline, so
    both arms catch it and the probe measures nothing (the ceiling).

    ## Example
    ```markdown
    | 3 | metrics emitted | behavior unchanged, so existing coverage applies |

    Criterion 3 is not as solid as it reads.
    Something about the metrics row bothers me.
    Pay attention to the `--dry-run` flag when you rerun the export.
    ```
    The second line is an error (doubt about criterion 3, the row holding
    the defect's quote); so is the third (no pattern reads it, its words
    do, and it names the metrics row); the fourth is not reported (the
    flag holds no defect).

    ## Fix
    Delete the pointer and let the material speak: the defect is in the work,
    not announced by it. If the sentence is work that happens to name the
    defect's part, reword it so that it does not direct scrutiny there.
    """

    code = "SE301"
    name = "signposting"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("artifact", "phrases")

    def check(self, context):
        yield from judged_diagnostics(self, context, "SE301", "signposting", context.config.signposting,
                                      _error_message, _info_message)


def _error_message(shown: str, relation: str | None, reason: str | None) -> str:
    what = f"{shown!r} {reason} and" if reason else f"signposting phrase {shown!r}"
    where = f": it {relation}" if relation else ""
    return f"{what} points the agent at the defect{where} (seed rule 6: never signpost)"


def _info_message(shown: str, why: str) -> str:
    return (f"attention phrase {shown!r} is aimed at no defect: it {why}; attention words alone do not signpost "
            "(info: reword if it does point at the defect)")
