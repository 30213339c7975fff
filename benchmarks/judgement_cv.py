#!/usr/bin/env python3
"""Leave-one-domain-out check, within dev.tsv, of SE301's stance scorer as
the linter uses it (benchmarks/train_judgement_scorer.py trains it).

usage (in the training venv, with skill-eval installed in it):
    python benchmarks/judgement_cv.py [--patterns] [--show] [--domains ci,lab]

For each of dev's domains, the scorer is trained on the others, the phrase
benchmark's tuning half and the training-only corpus (train_sentences.tsv,
never left out: it holds none of dev's domains); its threshold's margin
too, by leaving out each of the other dev domains in turn,
and the domain's items are linted with it, as judgement_eval.py lints them.
The scorer reads a sentence as pointing at a flaw; put as a request or a
question it is a quiz (SE302), otherwise a signpost (SE301), so both
classes' figures are printed; the quiz table (quizzes against work) is
trained for each fold the same way. By default the phrase patterns' reading is switched off (every sentence
reads as nothing to the patterns), so the figures are what the scorer and
the structural relation find on their own in a domain they never saw: the
part of a paraphrase the patterns would miss. ``--patterns`` keeps the
patterns on (the whole judgement; the patterns themselves were written
looking at all of dev, so that figure is not out-of-sample for them).
``--show`` lists each fold's misses with how far their stance scored from
the fold's threshold, and of the score with the related table from the
related threshold, which decides for a sentence that names a defect's part
("unscored": a fragment, one word, or a short unit
that says nothing beyond a name, _judgement._beyond_naming; a short unit's
score is that of its words beyond the name; a positive distance: the score
passed and the structural reading, not the scorer, let the sentence go). ``--domains`` evaluates only the named
folds (a quicker look while iterating; quote the full run). Each fit is
remembered (Trainer.fit_rows), so a full run fits 66 models, not 121.
heldout.tsv is never read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import judgement_eval  # noqa: E402
import train_judgement_scorer as train  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patterns", action="store_true", help="keep the phrase patterns' reading on")
    parser.add_argument("--l2", type=float, default=train.L2)
    parser.add_argument("--l2-words", type=float, default=train.L2_WORDS, help="penalty of a word's own weight (0: none)")
    parser.add_argument("--l2-related", type=float, default=train.L2_RELATED, help="penalty of the related table's coefficients")
    parser.add_argument("--l2-related-words", type=float, default=train.L2_RELATED_WORDS,
                        help="penalty of a word's own weight in the related table")
    parser.add_argument("--precision", type=float, default=0.97)
    parser.add_argument("--show", action="store_true", help="list each fold's misses with their stance's distance to the threshold")
    parser.add_argument("--domains", help="comma-separated dev domains to evaluate (default: all)")
    args = parser.parse_args()

    from skill_eval.linter.rules.artifact import _judgement, _stance_words

    train.L2_RELATED, train.L2_RELATED_WORDS = args.l2_related, args.l2_related_words
    data = train.load_training()
    words, vectors = train.word_vectors()
    trainer = train.Trainer(data, words, vectors, args.l2, args.l2_words or None, args.precision)  # relations with patterns on, as trained
    quiz_trainer = train.quiz_trainer(words, vectors, args.l2, args.l2_words or None, args.precision)
    if not args.patterns:
        nothing = _judgement.Reading(False, None, None, False, False, False)
        _judgement.read_sentence = lambda sentence: nothing
    scored: dict[str, float] = {}
    related_scored: dict[str, float] = {}
    stance_score, related_stance = _judgement.stance_score, _judgement.related_stance

    def recorded(sentence, words=None):
        scored[sentence] = score = stance_score(sentence, words)
        return score

    def recorded_related(words):
        related_scored[" ".join(words)] = added = related_stance(words)
        return added

    _judgement.stance_score, _judgement.related_stance = recorded, recorded_related
    items = judgement_eval.load_items("dev")
    outcomes = []
    chosen = set(args.domains.split(",")) if args.domains else {item.domain for item in items}
    for held in sorted(chosen):
        model = trainer.model(trainer.domains != held)  # the phrase and training-only lines stay in every fold
        _stance_words.BIAS, _stance_words.THRESHOLD = model.bias, model.threshold
        _stance_words.WORDS = {w: float(v) for w, v in zip(words, model.table)}
        _stance_words.RELATED_BIAS, _stance_words.RELATED_THRESHOLD = model.related_bias, model.related_threshold
        _stance_words.RELATED = {w: float(v) for w, v in zip(words, model.related_table)}
        _stance_words.REQUEST_THRESHOLD = model.request_threshold
        _stance_words.RELATED_REQUEST_THRESHOLD = model.related_request_threshold
        quiz = quiz_trainer.model(quiz_trainer.domains != held)
        _stance_words.QUIZ_BIAS, _stance_words.QUIZ_THRESHOLD = quiz.bias, quiz.threshold
        _stance_words.QUIZ = {w: float(v) for w, v in zip(words, quiz.table)}
        _judgement._STANCE = _judgement._RELATED = _judgement._QUIZ = None  # the models read the fold's numbers
        threshold, related_threshold = model.threshold, model.related_threshold
        scored.clear()
        related_scored.clear()
        fold, _clean = judgement_eval.evaluate([item for item in items if item.domain == held])
        table = judgement_eval.scores(fold)
        row, quiz = table["signpost"], table["quiz"]
        print(f"{held:11} signpost tp {row['tp']:2} fp {row['fp']} fn {row['fn']:2}; quiz tp {quiz['tp']:2} "
              f"fp {quiz['fp']} fn {quiz['fn']:2}; work flagged {table['work']['flagged']}/{table['work']['total']}")
        for outcome in fold:
            if outcome.item.label == "work" and outcome.errors:
                print(f"    work flagged: {outcome.item.sentence}")
            elif args.show and judgement_eval.CLASSES.get(outcome.item.label, "") not in outcome.errors | {""}:
                item = outcome.item
                distances = []
                for text, score in scored.items():
                    if text.strip() and (text.strip() in item.sentence or item.sentence in text):
                        added = related_scored.get(" ".join(_judgement.WORD.findall(text.rstrip().lower().replace("’", "'"))))
                        related = "" if added is None else f" / related {score + added - related_threshold:+.2f}"
                        distances.append(f"{score - threshold:+.2f}{related}")
                print(f"    missed {item.label} ({item.position}, stance {', '.join(distances) or 'unscored'}): "
                      f"{item.sentence}")
        outcomes += fold
    total = judgement_eval.scores(outcomes)
    for label in ("signpost", "quiz", "key-leak"):
        row = total[label]
        print(f"all {label:9} precision {row['precision']:.3f} ({row['tp']}/{row['tp'] + row['fp']})  "
              f"recall {row['recall']:.3f} ({row['tp']}/{row['tp'] + row['fn']})")
    print(f"all work flagged as an error: {total['work']['flagged']}/{total['work']['total']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
