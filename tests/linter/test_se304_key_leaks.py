"""SE304's answer keys told in ordinary words (issue 27, item 4): a link
title, alt text, link text or comment that states what is wrong with what a
defect's quote holds is reported, and says which defect it relates to; a
descriptive title, alt text or comment (hard work negatives: the defect's
own vocabulary, flaw words used as descriptions) stays silent.

The artifacts here are not those of benchmarks/judgement/ (whose dev split
the rule was tuned on): a backup script and a churn model's data split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skill_eval.linter.engine import lint_paths

BACKUP = """# PR 812: nightly backup of the media volume

The backup job copies the media volume to the archive host every night at 02:00.

```python
{code}
def backup(src, dest):
    try:
        copy_tree(src, dest)
    except OSError:
        pass  {eol}
    log.info("backup done")
```

| check | status |
|---|---|
| unit tests | passed |

- Design notes: [{link}](https://wiki.example.com/backup "{title}")
- Duration: ![{alt}](backup.png)

{html}
Please approve so the job can run tonight.
"""
BACKUP_QUOTE = "except OSError:"

CHURN = """# Churn model v2: evaluation report

The churn model was retrained on the March customer export.

```yaml
{code}
train: customers[:100%]
holdout: customers[:10%]  {eol}
epochs: 12
```

| metric | v1 | v2 |
|---|---|---|
| holdout AUC | 0.81 | 0.97 |

- Curves: ![{alt}](roc.png)
- Tracking: [{link}](https://mlflow.example.com/churn-v2 "{title}")

{html}
Please decide whether v2 replaces v1.
"""
CHURN_QUOTE = "holdout: customers[:10%]"

SLOTS = ("code", "eol", "link", "title", "alt", "html")


def render(template: str, position: str, sentence: str) -> str:
    """``template`` with ``sentence`` at ``position``, the other slots filled
    with neutral text (a link keeps a text, an image an alt text)."""
    forms = {"code": f"# {sentence}", "eol": f"# {sentence}", "link": sentence, "title": sentence,
             "alt": sentence, "html": f"<!-- {sentence} -->"}
    neutral = {"code": "", "eol": "", "link": "notes", "title": "", "alt": "chart", "html": ""}
    filled = template.format(**{slot: forms[slot] if slot == position else neutral[slot] for slot in SLOTS})
    return filled.replace(' "")', ")").replace("  \n", "\n")


def lint(tmp_path: Path, text: str, quote: str):
    """SE304's findings (line, message) on a probe whose artifact is ``text``
    and whose one defect D1 has ``quote``."""
    (tmp_path / "skill-eval.toml").write_text("")
    skill = tmp_path / "skill"
    folder = skill / "evals" / "probes" / "p"
    folder.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: skill\ndescription: Use when reviewing.\n---\n\n# S\n\n## Step\n\n"
                                    "The `verdict` is `PASS`.\n")
    (skill / "output-spec.md").write_text("# O\n\n## `verdict`\nValues: `PASS`, `NOT_PROVEN`\n")
    (folder / "question.md").write_text(text)
    (folder / "probe.json").write_text(json.dumps({
        "id": "p", "tier": 2, "kind": "floor", "step_heading": "Step", "shapes": ["euphemized"], "seeded_defects": 1,
        "defects": [{"id": "D1", "shape": "euphemized", "quote": quote, "caught_when": {"verdict": "NOT_PROVEN"}}],
    }))
    result = lint_paths([tmp_path])
    assert all(d.code != "SE203" for d in result.diagnostics), "the quote must be found exactly once"
    return [(d.code, d.start.line, d.message) for d in result.diagnostics if d.code in ("SE301", "SE302", "SE304")]


def line_of(text: str, sentence: str) -> int:
    return next(number for number, line in enumerate(text.split("\n"), 1) if sentence in line)


LEAKS = [
    (BACKUP, BACKUP_QUOTE, "title", "copy errors are discarded here"),
    (BACKUP, BACKUP_QUOTE, "alt", "duration chart; backup failures are ignored now"),
    (BACKUP, BACKUP_QUOTE, "link", "why catching OSError loses backups"),
    (BACKUP, BACKUP_QUOTE, "title", "a failed copy no longer stops the job"),  # "copy": the defect's lines
    (BACKUP, BACKUP_QUOTE, "title", "the function swallows everything"),  # a flaw word said of the block
    (BACKUP, BACKUP_QUOTE, "html", "the pass makes every OSError vanish, so failed copies are dropped"),
    (CHURN, CHURN_QUOTE, "title", "holdout customers are also training customers"),
    (CHURN, CHURN_QUOTE, "alt", "ROC curve; holdout customers are 10% of the training customers"),
]


@pytest.mark.parametrize("template, quote, position, sentence", LEAKS)
def test_a_flaw_told_in_ordinary_words_is_an_answer_key(tmp_path: Path, template, quote, position, sentence) -> None:
    text = render(template, position, sentence)
    found = lint(tmp_path, text, quote)
    line = line_of(text, sentence)
    leaks = [message for code, at, message in found if code == "SE304" and at == line]
    assert leaks, found
    assert "D1's quote" in leaks[0], leaks[0]


WORK = [
    # descriptive titles and alt text: they name, they state no flaw
    (BACKUP, BACKUP_QUOTE, "title", "deploy timeline"),
    (BACKUP, BACKUP_QUOTE, "alt", "architecture diagram"),
    (BACKUP, BACKUP_QUOTE, "title", "Backup design, rev 3"),
    (BACKUP, BACKUP_QUOTE, "alt", "backup duration per night, last 30 days"),
    # the defect's own vocabulary, innocently
    (BACKUP, BACKUP_QUOTE, "link", "OSError handling guide"),
    (BACKUP, BACKUP_QUOTE, "link", "errors dashboard"),
    (BACKUP, BACKUP_QUOTE, "code", "OSError is raised by copy_tree when the host is down"),
    (BACKUP, BACKUP_QUOTE, "title", "how failing copies are retried by the scheduler"),
    # a flaw word that describes (before its noun, a gerund) and says nothing of the quote
    (BACKUP, BACKUP_QUOTE, "alt", "dropped connections per hour"),
    (BACKUP, BACKUP_QUOTE, "alt", "count of skipped files per night"),
    (BACKUP, BACKUP_QUOTE, "title", "runbook for dropped archive connections"),
    (BACKUP, BACKUP_QUOTE, "eol", "retried by the scheduler"),
    (BACKUP, BACKUP_QUOTE, "html", "generated by backup-bot 1.2"),
    # a flaw said of something that is not the defect
    # ... named by a container noun the defect's block also fits ("job", "script", "log", "function",
    # "block"), with a mere "no", "not", "still": no flaw word said of the defect, no word of its lines
    (BACKUP, BACKUP_QUOTE, "title", "the old cron job is no longer used"),
    (BACKUP, BACKUP_QUOTE, "title", "the legacy rsync script is not used any more"),
    (BACKUP, BACKUP_QUOTE, "html", "this log is no longer shipped to the archive host"),
    (BACKUP, BACKUP_QUOTE, "code", "the function no longer takes a lock"),
    (CHURN, CHURN_QUOTE, "code", "this block is still read by the v1 notebook"),
    pytest.param(CHURN, CHURN_QUOTE, "title", "the v1 export script is not run any more", marks=pytest.mark.xfail(
        strict=True, reason="no longer SE304, but a hidden text _judge_hidden lets go is read again as a signpost: "
                            "_DOUBT reads 'not run' as doubt and resolve relates 'script' to the code block (SE301)")),
    (CHURN, CHURN_QUOTE, "title", "holdout customers, 10% sample"),
    (CHURN, CHURN_QUOTE, "alt", "training and holdout AUC per epoch"),
    (CHURN, CHURN_QUOTE, "code", "the split is described in data/README.md"),
    (CHURN, CHURN_QUOTE, "link", "run page in MLflow"),
]


@pytest.mark.parametrize("template, quote, position, sentence", WORK)
def test_a_descriptive_title_alt_text_or_comment_stays_silent(tmp_path: Path, template, quote, position,
                                                              sentence) -> None:
    text = render(template, position, sentence)
    found = lint(tmp_path, text, quote)
    line = line_of(text, sentence)
    assert [f for f in found if f[1] == line and f[0] == "SE304"] == []
    assert [f for f in found if f[1] == line] == [], "a work title is no error of any judgement rule"


@pytest.mark.parametrize("position, sentence", [
    ("title", "the except branch is worth a second look"),
    ("link", "why the except branch worries me"),
])
def test_a_pointer_at_the_flaw_is_no_answer_key(tmp_path: Path, position: str, sentence: str) -> None:
    """It says where to look, not what is wrong: SE301's, never SE304's."""
    text = render(BACKUP, position, sentence)
    found = lint(tmp_path, text, BACKUP_QUOTE)
    assert [f for f in found if f[0] == "SE304"] == []


def test_clean_artifacts_have_no_finding(tmp_path: Path) -> None:
    for index, (template, quote) in enumerate(((BACKUP, BACKUP_QUOTE), (CHURN, CHURN_QUOTE))):
        root = tmp_path / str(index)
        root.mkdir()
        assert lint(root, render(template, "none", ""), quote) == []


def test_the_finding_names_the_defect_and_the_words_that_relate_to_it(tmp_path: Path) -> None:
    sentence = "duration chart; backup failures are ignored now"
    text = render(BACKUP, "alt", sentence)
    [message] = [m for code, line, m in lint(tmp_path, text, BACKUP_QUOTE) if code == "SE304"]
    assert "'failures'" in message and "D1's quote 'except OSError:'" in message and "'ignored'" in message, message


# Answer-key markers (issue 27): "the agent", "reviewers should", "must
# catch" and "expected ...:" hold spaces, and the marker pattern was compiled
# with re.VERBOSE, which drops them: these never matched. Markers that are
# also work language mark the answer only when the text relates to a defect.
MARKED = [
    (BACKUP, BACKUP_QUOTE, "html", "the agent must flag the except branch"),
    (BACKUP, BACKUP_QUOTE, "eol", "the reviewer must catch this"),
    (BACKUP, BACKUP_QUOTE, "title", "reviewers should notice that OSError is never reported"),
    (CHURN, CHURN_QUOTE, "code", "the agent should spot that the holdout overlaps the train split"),
    (CHURN, CHURN_QUOTE, "alt", "expected finding: holdout customers were trained on"),
]


@pytest.mark.parametrize("template, quote, position, sentence", MARKED)
def test_a_marker_with_spaces_marks_the_answer(tmp_path: Path, template, quote, position, sentence) -> None:
    text = render(template, position, sentence)
    found = lint(tmp_path, text, quote)
    line = line_of(text, sentence)
    assert [f for f in found if f[1] == line and f[0] == "SE304"], found


MARKER_WORK = [
    (BACKUP, BACKUP_QUOTE, "html", "the agent on the archive host rotates logs at 03:00"),
    (BACKUP, BACKUP_QUOTE, "code", "expected: one tarball per night"),
    (BACKUP, BACKUP_QUOTE, "eol", "expected: OSError when the host is down"),
    (BACKUP, BACKUP_QUOTE, "title", "reviewers should read the retention section first"),
    (BACKUP, BACKUP_QUOTE, "code", "trap SIGTERM so a half-written tarball is removed"),
    (CHURN, CHURN_QUOTE, "html", "the answer to Priya's question about epochs is in the tracking run"),
    (CHURN, CHURN_QUOTE, "eol", "the agent that schedules runs reads this file"),
    (CHURN, CHURN_QUOTE, "alt", "ROC curves the reviewers will get by email"),
]


@pytest.mark.parametrize("template, quote, position, sentence", MARKER_WORK)
def test_a_marker_word_about_the_work_is_no_answer_key(tmp_path: Path, template, quote, position, sentence) -> None:
    """"expected:", "the agent", "reviewers should", "trap" and "answer" are
    work language in a comment, title or alt text about anything but the
    defect, even on the defect's own line."""
    text = render(template, position, sentence)
    found = lint(tmp_path, text, quote)
    line = line_of(text, sentence)
    assert [f for f in found if f[1] == line] == [], found
