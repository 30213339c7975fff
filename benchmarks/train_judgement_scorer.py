#!/usr/bin/env python3
"""Train the judgement's word scorer (SE301's reading by meaning) on dev.tsv
only, and write it to ``linter/rules/artifact/_stance_words.py``.

usage (in a separate venv: the linter never imports any of this):
    pip install wordllama wordfreq numpy
    python benchmarks/train_judgement_scorer.py [--check] [--cv]

What it is. A sentence's *stance* score is a linear model over the average
of its words' static embeddings:

    score(sentence) = bias + (1/n) * sum(table[w] for w in words(sentence))

where ``n`` counts every word and a word outside the table counts 0. The
embeddings are WordLlama's ``l2_supercat_256`` token embeddings, which ship
inside the ``wordllama`` PyPI wheel (nothing is downloaded: the wheel's own
weights and tokenizer file are opened by path). A word's vector is the mean
of its tokens' embeddings. Because the model is linear over the average,
it folds into one number per word (vectors are normalised to unit length
first, so a frequent word's long vector does not outweigh the rest), ``table[w] = coef . vector(w)``: the
linter ships those numbers (the ``wordfreq`` list's 20,000 most frequent
English words, rounded), not the embeddings, and scores a sentence with a
dictionary look-up per word, in pure Python, with no dependency.

The coefficients are an L2-regularised logistic regression of ``signpost``
(1) against ``work`` (0) over dev.tsv's sentences (quiz and key-leak items
are not used: SE302 and SE304 keep their own reading) and the tuning half
of the phrase benchmark's signposting and work lines (benchmarks/phrase_eval/;
its held-out half is never read). Words are never
taken from the labelled set: the vocabulary is wordfreq's, so a paraphrase
the set never saw is scored through its words' embeddings. The regulariser
is chosen by leave-one-domain-out cross-validation within dev (``--cv``
prints it): each of dev's eight domains is scored by a model trained on
the other seven. The threshold is where the training items' precision is
0.97, raised by a margin: how far above its fold's threshold dev's
highest-scoring work sentence scored when its domain was left out
(:func:`domain_margin`), so that no work sentence of dev would have been
flagged by a model that had not seen its domain. heldout.tsv is never read.

The linter uses the score only as a second opinion on a sentence the
structural reading relates to a defect (its row, block, section, or the
artifact as a whole by deixis): a high score there is a signpost the
phrase patterns missed; a sentence related to no defect is never an error,
whatever its score (linter/rules/artifact/_judgement.py).

Deterministic: the solver is Newton's method from zero, the vocabulary and
the data are sorted, and ``--check`` verifies the committed table is what
this script writes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
OUT = ROOT / "linter" / "rules" / "artifact" / "_stance_words.py"
VOCABULARY = 20000
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|\d+(?:[.:,]\d+)*")
"""The linter's word pattern (_judgement._WORD): training and use must split alike."""


def words_of(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


PHRASES = ROOT / "benchmarks" / "phrase_eval"


def load_dev() -> list[tuple[str, str, int]]:
    """(domain, sentence, label) of dev's signpost and work items, and of
    the phrase benchmark's *tuning* half (benchmarks/phrase_eval/: its
    signposting.txt and work.txt lines whose CRC-32 is even; domain
    ``phrase-eval``, never a held-out domain of the cross-validation). The
    phrase benchmark's held-out half is never read."""
    import zlib

    from judgement_eval import load_items

    rows = [(i.domain, i.sentence, 1 if i.label == "signpost" else 0)
            for i in load_items("dev") if i.label in ("signpost", "work")]
    for name, label in (("signposting.txt", 1), ("work.txt", 0)):
        for line in (PHRASES / name).read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#") and zlib.crc32(line.encode("utf-8")) % 2 == 0:
                rows.append((PHRASE_DOMAIN, line.replace("\\n", "\n"), label))
    return rows


PHRASE_DOMAIN = "phrase-eval"
"""The phrase benchmark's tuning lines: always trained on, never left out."""


def word_vectors() -> tuple[list[str], np.ndarray]:
    """wordfreq's most frequent English words and their WordLlama vectors
    (the wheel's own weights and tokenizer, opened by path)."""
    import wordfreq
    import wordllama
    from safetensors import safe_open
    from wordllama.inference import WordLlamaInference
    from wordllama.wordllama import WordLlama

    package = Path(wordllama.__file__).parent
    tokenizer = WordLlama.load_tokenizer(package / "tokenizers" / "l2_supercat_tokenizer_config.json")
    with safe_open(package / "weights" / "l2_supercat_256.safetensors", framework="np", device="cpu") as handle:
        embedding = handle.get_tensor("embedding.weight")
    model = WordLlamaInference(embedding, tokenizer)
    words = sorted({w for raw in wordfreq.top_n_list("en", VOCABULARY) for w in words_of(raw)
                    if w.isalpha() or "'" in w})
    return words, model.embed(words, norm=True).astype(np.float64)


def features(sentences: list[str], index: dict[str, int], vectors: np.ndarray) -> np.ndarray:
    x = np.zeros((len(sentences), vectors.shape[1]))
    for row, sentence in enumerate(sentences):
        words = words_of(sentence)
        for word in words:
            if word in index:
                x[row] += vectors[index[word]]
        x[row] /= max(len(words), 1)
    return x


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method (deterministic); the bias is not penalised."""
    design = np.hstack([x, np.ones((len(x), 1))])
    weights = np.zeros(design.shape[1])
    penalty = np.full(design.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-design @ weights))
        gradient = design.T @ (p - y) + penalty * weights
        hessian = (design * (p * (1 - p))[:, None]).T @ design + np.diag(penalty) + 1e-9 * np.eye(len(weights))
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return weights[:-1], float(weights[-1])


def threshold_for(scores: np.ndarray, y: np.ndarray, precision: float) -> float:
    """The lowest score above which the training items' precision is at least ``precision``."""
    order = np.argsort(-scores)
    best = float(scores.max()) + 1.0
    tp = fp = 0
    for i in order:
        tp += y[i] == 1
        fp += y[i] == 0
        if tp / (tp + fp) >= precision:
            best = float(scores[i])
    return best


def cross_validate(data, index, vectors, l2: float, precision: float) -> tuple[int, int, int, int]:
    """Leave one domain out: tp, fp, fn, tn over dev."""
    domains = sorted({d for d, _, _ in data} - {PHRASE_DOMAIN})
    tp = fp = fn = tn = 0
    for held in domains:
        train = [(s, y) for d, s, y in data if d != held]
        test = [(s, y) for d, s, y in data if d == held]
        x = features([s for s, _ in train], index, vectors)
        y = np.array([y for _, y in train], dtype=float)
        coef, bias = fit(x, y, l2)
        cut = threshold_for(x @ coef + bias, y, precision)
        xt = features([s for s, _ in test], index, vectors)
        yt = np.array([y for _, y in test])
        flagged = (xt @ coef + bias) >= cut
        tp += int(np.sum(flagged & (yt == 1)))
        fp += int(np.sum(flagged & (yt == 0)))
        fn += int(np.sum(~flagged & (yt == 1)))
        tn += int(np.sum(~flagged & (yt == 0)))
    return tp, fp, fn, tn


MIN_WORDS = 5
"""The linter scores no sentence of fewer words (_judgement.STANCE_MIN_WORDS)."""


def domain_margin(data, index, vectors, l2: float, precision: float) -> float:
    """How far above its fold's threshold the highest-scoring ``work``
    sentence of dev (of at least :data:`MIN_WORDS` words) scores when the
    model never saw its domain (leave one domain out). The shipped
    threshold is the full model's plus this margin, so that no work
    sentence of dev would have been flagged by a model that had not seen
    its domain: the precision the rule needs on a domain nobody tuned."""
    margin = 0.0
    for held in sorted({d for d, _, _ in data} - {PHRASE_DOMAIN}):
        rows = [(s, y) for d, s, y in data if d != held]
        x = features([s for s, _ in rows], index, vectors)
        y = np.array([y for _, y in rows], dtype=float)
        coef, bias = fit(x, y, l2)
        cut = threshold_for(x @ coef + bias, y, precision)
        work = [s for d, s, label in data if d == held and label == 0 and len(words_of(s)) >= MIN_WORDS]
        if work:
            margin = max(margin, float(np.max(features(work, index, vectors) @ coef + bias)) - cut)
    return margin


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cv", action="store_true", help="print leave-one-domain-out figures for each regulariser")
    parser.add_argument("--check", action="store_true", help="fail if the committed table differs from a fresh one")
    parser.add_argument("--l2", type=float, default=0.1)
    parser.add_argument("--precision", type=float, default=0.97, help="training precision the threshold is set for")
    args = parser.parse_args()
    data = load_dev()
    words, vectors = word_vectors()
    index = {w: i for i, w in enumerate(words)}
    if args.cv:
        for l2 in (0.01, 0.03, 0.1, 0.3, 1.0):
            tp, fp, fn, tn = cross_validate(data, index, vectors, l2, args.precision)
            print(f"l2 {l2:6}: leave-one-domain-out signpost P {tp / max(tp + fp, 1):.3f} R {tp / (tp + fn):.3f} "
                  f"(tp {tp} fp {fp} fn {fn} tn {tn})")
    x = features([s for _, s, _ in data], index, vectors)
    y = np.array([y for _, _, y in data], dtype=float)
    coef, bias = fit(x, y, args.l2)
    margin = domain_margin(data, index, vectors, args.l2, args.precision)
    cut = threshold_for(x @ coef + bias, y, args.precision) + margin + 0.01
    table = {w: round(float(v), 3) for w, v in zip(words, vectors @ coef) if round(float(v), 3) != 0.0}
    body = ",\n".join(f"    {w!r}: {v!r}" for w, v in sorted(table.items()))
    text = (f'"""SE301\'s stance scorer, generated by benchmarks/train_judgement_scorer.py from\n'
            f'benchmarks/judgement/dev.tsv and phrase_eval\'s tuning half (WordLlama l2_supercat_256 embeddings of wordfreq\'s\n'
            f'{VOCABULARY:,} most frequent English words, L2 {args.l2}). Do not edit.\n\n'
            f'Licence: this table is an adaptation of wordfreq\'s word list (wordfreq 3.1.1 by Robyn Speer,\n'
            f'data under CC BY-SA 4.0, https://creativecommons.org/licenses/by-sa/4.0/) and of WordLlama\'s\n'
            f'embeddings (wordllama 0.4.0, MIT). This file alone is distributed under CC BY-SA 4.0; see\n'
            f'docs/licences.md.\n\n'
            f'score(sentence) = BIAS + sum(WORDS.get(w, 0) for w in words) / len(words)."""\n\n'
            f"BIAS = {round(bias, 4)!r}\nTHRESHOLD = {round(cut, 4)!r}\n"
            f"WORDS = {{\n{body},\n}}\n")
    if args.check:
        same = OUT.read_text(encoding="utf-8") == text
        print("table is up to date" if same else "table differs from a fresh training run")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(table)} words, bias {bias:.3f}, threshold {cut:.3f} "
          f"(margin {margin:.3f} over the training cut)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
