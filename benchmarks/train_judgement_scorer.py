#!/usr/bin/env python3
"""Train the judgement's word scorer (SE301's reading by meaning) on dev.tsv,
the training-only corpus and phrase_eval's tuning half, and write it to
``linter/rules/artifact/_stance_words.py``.

usage (in a separate venv: the linter never imports any of this):
    pip install wordllama wordfreq numpy
    python benchmarks/train_judgement_scorer.py [--check] [--cv]

What it is. A sentence's *stance* score is a linear model over its words:

    score(sentence) = bias + (1/n) * sum(table[w] for w in words(sentence))

where ``n`` counts every word and a word outside the table counts 0. Two
kinds of feature, both linear in the words' counts over ``n``, so the
model folds into one number per word:

- the average of the words' static embeddings: WordLlama's
  ``l2_supercat_256`` token embeddings, which ship inside the ``wordllama``
  PyPI wheel (nothing is downloaded: the wheel's own weights and tokenizer
  file are opened by path); a word's vector is the mean of its tokens'
  embeddings, normalised to unit length (so a frequent word's long vector
  does not outweigh the rest). This part generalises to words the training
  sentences never held;
- each word's share of the sentence, for every word that at least
  :data:`MIN_SENTENCES` training sentences hold: a word's own weight, on
  top of what its embedding says, penalised separately (:data:`L2_WORDS`).

For a sentence that names a defect's own part or its block (dev's items
the linter relates so in their artifact: :func:`related_rows`), the same
two kinds of feature come again with coefficients of their own, and a
constant: a second table, added to the first only for such a sentence
(``RELATED``, ``RELATED_BIAS``). Attention aimed at the defect's part
points at the flaw; the same words aimed elsewhere, or a plain fact about
the part, are work: the two tables learn that apart.

A third table of the same shape, ``QUIZ``, is trained apart on quizzes
(1) against work and signposts (0) (:data:`QUIZ_LABELS`, the phrase
benchmark's quiz-framing lines too): the linter reads a sentence above its
threshold as a quiz (SE302) whatever its form ("Mark the rows whose
evidence wouldn't get past the QA lead"); its margin counts work only.

``table[w] = coef . vector(w) + own[w]``: the linter ships those numbers
(the ``wordfreq`` list's 20,000 most frequent English words, rounded), not
the embeddings, and scores a sentence with a dictionary look-up per word,
in pure Python, with no dependency. Words outside wordfreq's list get no
weight, whatever the labelled sentences hold.

The coefficients are an L2-regularised logistic regression of ``signpost``
and ``quiz`` (1: both tell the reader that a flaw exists) against ``work``
(0) (:data:`LABELS`; key-leak items are not used, SE304 keeps its own
reading) over:

- dev.tsv's sentences;
- the tuning half of the phrase benchmark's signposting, quiz-framing and work lines
  (benchmarks/phrase_eval/; its held-out half is never read);
- benchmarks/judgement/train_sentences.tsv, a training-only corpus of
  sentences written for 46 work domains that are not dev's (never
  evaluated on, never left out of a fold).

The regularisers are chosen by leave-one-domain-out cross-validation
within dev (``--cv`` prints it; benchmarks/judgement_cv.py lints it): each
of dev's domains is scored by a model trained on everything but that
domain. Each threshold (sentences related to no defect's part, and
related ones) is where the training items of that kind of
:data:`MIN_WORDS` words or more reach a precision of 0.97, raised by a
margin: how far above its fold's threshold dev's highest-scoring work
sentence of that kind scored when its domain was left out
(:meth:`Trainer.margin`), so that no work sentence of dev would have been
flagged by a model that had not seen its domain. heldout.tsv is never read.

The linter uses the score only as a second opinion on a sentence the
phrase patterns did not read: put as a request or a question to the
reader, a high score is a quiz (SE302) unless the request names a part
that holds no defect; otherwise it is a signpost (SE301) only when the
structural reading relates the sentence to a defect (its row, block,
section, or the artifact as a whole by deixis): a statement related to no
defect is never an error, whatever its score
(linter/rules/artifact/_judgement.py, _judge_stance).

Deterministic: the solver is Newton's method from zero with conjugate
gradient steps and fixed limits, the vocabulary and the data are sorted,
and ``--check`` verifies the committed table is what this script writes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import NamedTuple

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


def load_dev(labels: dict[str, int | None] | None = None, prose_only: bool = False) -> list[tuple[str, str, int]]:
    """(domain, sentence, label) of dev's items that ``labels`` (default
    :data:`LABELS`) trains on, and of the phrase benchmark's *tuning* half
    (benchmarks/phrase_eval/: the lines whose CRC-32 is even of
    :data:`PHRASE_FILES`; domain ``phrase-eval``, never a held-out domain of
    the cross-validation). The phrase benchmark's held-out half is never read.
    ``prose_only``: none of dev's comments, titles, alt texts, link texts
    and table cells (the quiz table does not read them: _judgement.NAMING_KINDS)."""
    import zlib

    from judgement_eval import left_to_se304, load_items

    labels = LABELS if labels is None else labels
    items = load_items("dev")
    left = left_to_se304(items)
    rows = [(i.domain, i.sentence, labels[i.label]) for i in items
            if labels.get(i.label) is not None and not never_scored(i.position, i.sentence, i.name in left)
            and not (prose_only and (i.position in HIDDEN_POSITIONS or i.position in ("link", "cell")))]
    for name, label in PHRASE_FILES.items():
        if labels[label] is None:
            continue
        for line in (PHRASES / name).read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#") and zlib.crc32(line.encode("utf-8")) % 2 == 0:
                rows.append((PHRASE_DOMAIN, line.replace("\\n", "\n"), labels[label]))
    return rows


HIDDEN_POSITIONS = {"html": "html-comment", "code": "code-comment", "eol": "code-comment", "title": "title", "alt": "alt"}
"""dev's positions whose text a reader of the rendered artifact does not
see as prose, and the linter's kind of unit for each."""


def never_scored(position: str, sentence: str, left_to_se304: bool) -> bool:
    """Whether the linter never asks the scorer about ``sentence`` at
    ``position``, so that it is neither trained on nor counted in the
    thresholds' margins: a comment, title or alt text of :data:`MIN_WORDS`
    words or more that SE304 judges (``left_to_se304``: it names a
    defect's part or block and tells a flaw of it,
    judgement_eval.left_to_se304; negated facts about the defect's part,
    "TimeoutError is not retried by the client library itself", read as
    flaws to the words and raised every fold's thresholds), or one holding
    an answer-key marker ("expected:", "the agent", "reviewers should":
    _judgement._marks_answer). A code comment, which the linter does not
    read by its stance, is trained on all the same: the tables learn from
    it that the code's words are work, and its score counts in the margins
    (left out, the related threshold fell 2.25 -> 1.35 and "The metrics
    criterion is the smallest one in the ticket." read as a signpost)."""
    kind = HIDDEN_POSITIONS.get(position)
    if kind is None:
        return False
    from skill_eval.linter.rules.artifact import _judgement

    words = _judgement.words_of(sentence)
    if len(words) >= MIN_WORDS and left_to_se304:
        return True
    return _judgement._marks_answer(_judgement.Unit(kind, sentence, 1, 1, 0), words)


LABELS: dict[str, int | None] = {"signpost": 1, "quiz": 1, "work": 0, "key-leak": None}
"""What each label of dev and the training-only corpus is to the scorer: a
signpost and a quiz both tell the reader that a flaw exists (1; the linter
tells them apart by the sentence's form, _judgement._judge_stance), work
does not (0); a key leak is SE304's and is not trained on."""


QUIZ_LABELS: dict[str, int | None] = {"signpost": 0, "quiz": 1, "work": 0, "key-leak": None}
"""The quiz table's labels: a quiz (1) against work and signposts (0). A
quiz asks the reader for the faults ("Mark the rows whose evidence wouldn't
get past the QA lead", "Send me what you'd want settled before the old
primary goes"), often with the verbs and shapes of an ordinary request; a
signpost points at a flaw without asking for it ("The controls table
doesn't tell the whole story"). Its threshold's margin counts work only
(:func:`quiz_trainer`): a signpost read as a quiz is still an error."""


PHRASE_FILES = {"signposting.txt": "signpost", "quiz-framing.txt": "quiz", "work.txt": "work"}
"""The phrase benchmark's files and the label of their lines (a table
trains on a file when its labels train on that label)."""

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


TRAINING_ONLY = ROOT / "benchmarks" / "judgement" / "train_sentences.tsv"
TRAINING_PREFIX = "train:"
"""Domains of train_sentences.tsv: always trained on, never left out, never evaluated."""


def load_training_corpus(labels: dict[str, int | None] | None = None) -> list[tuple[str, str, int]]:
    """(domain, sentence, label) of train_sentences.tsv, the training-only
    corpus written in work domains that are not dev's; its domains are
    prefixed :data:`TRAINING_PREFIX` so that no fold ever leaves them out."""
    labels = LABELS if labels is None else labels
    rows = []
    for line in TRAINING_ONLY.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            label, domain, sentence = line.split("\t")
            if labels[label] is not None:
                rows.append((TRAINING_PREFIX + domain, sentence, labels[label]))
    return rows


def load_training(labels: dict[str, int | None] | None = None, prose_only: bool = False) -> list[tuple[str, str, int]]:
    """Everything a table trains on: dev, phrase_eval's tuning half and the
    training-only corpus, labelled by ``labels`` (default :data:`LABELS`;
    :data:`QUIZ_LABELS` for the quiz table)."""
    return load_dev(labels, prose_only) + load_training_corpus(labels)


def related_rows(data) -> np.ndarray:
    """Which rows name a defect's own part or its block: dev's items that
    the linter relates so in their artifact (judgement_eval.related_items).
    Phrase-eval and training-only sentences have no artifact: never
    related (their signposts teach the base table, as before)."""
    from judgement_eval import load_items, related_items

    items = load_items("dev")
    named = related_items(items)
    related = {(item.domain, item.sentence) for item in items if item.name in named}
    return np.array([(domain, sentence) in related for domain, sentence, _ in data])


def held_out_domains(data) -> list[str]:
    """The domains a cross-validation fold may leave out: dev's own."""
    return sorted({d for d, _, _ in data if d != PHRASE_DOMAIN and not d.startswith(TRAINING_PREFIX)})


def features(sentences: list[str], index: dict[str, int], vectors: np.ndarray) -> np.ndarray:
    x = np.zeros((len(sentences), vectors.shape[1]))
    for row, sentence in enumerate(sentences):
        words = words_of(sentence)
        for word in words:
            if word in index:
                x[row] += vectors[index[word]]
        x[row] /= max(len(words), 1)
    return x


def shares(sentences: list[str], vocabulary: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each sentence's share of each word of ``vocabulary`` (count / all its
    words), sparse: row indices, column indices, values."""
    rows, cols, values = [], [], []
    for row, sentence in enumerate(sentences):
        words = words_of(sentence)
        held: dict[int, float] = {}
        for word in words:
            if word in vocabulary:
                held[vocabulary[word]] = held.get(vocabulary[word], 0.0) + 1.0
        for col in sorted(held):
            rows.append(row)
            cols.append(col)
            values.append(held[col] / len(words))
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(values)


class Design:
    """Dense embedding features, sparse word shares and a constant column, as one linear map."""

    def __init__(self, dense: np.ndarray, sparse: tuple[np.ndarray, np.ndarray, np.ndarray], width: int):
        self.dense, (self.rows, self.cols, self.values), self.width = dense, sparse, width
        self.size = dense.shape[1] + width + 1

    def times(self, w: np.ndarray) -> np.ndarray:
        d = self.dense.shape[1]
        out = self.dense @ w[:d] + w[-1]
        if self.width:
            out += np.bincount(self.rows, self.values * w[d:-1][self.cols], minlength=len(self.dense))
        return out

    def transposed_times(self, u: np.ndarray) -> np.ndarray:
        sparse = np.bincount(self.cols, self.values * u[self.rows], minlength=self.width) if self.width else np.zeros(0)
        return np.concatenate([self.dense.T @ u, sparse, [u.sum()]])


def fit(design: Design, y: np.ndarray, penalty: np.ndarray) -> np.ndarray:
    """L2-penalised logistic regression (``penalty`` per column; the constant
    column, last, is not penalised) by Newton's method, each step solved by
    conjugate gradients on Hessian-vector products (the word shares are
    sparse). Deterministic: from zero, fixed iteration limits."""
    weights = np.zeros(design.size)
    penalty = np.append(penalty, 1e-6)
    for _ in range(30):
        p = 1.0 / (1.0 + np.exp(-design.times(weights)))
        gradient = design.transposed_times(p - y) + penalty * weights
        curvature = p * (1 - p)
        step = np.zeros_like(weights)
        residual = gradient.copy()
        direction = residual.copy()
        norm = residual @ residual
        for _ in range(500):
            product = design.transposed_times(curvature * design.times(direction)) + penalty * direction
            alpha = norm / (direction @ product)
            step += alpha * direction
            residual -= alpha * product
            new_norm = residual @ residual
            if new_norm < 1e-20:
                break
            direction = residual + (new_norm / norm) * direction
            norm = new_norm
        weights -= step
        if np.max(np.abs(step)) < 1e-7:
            break
    return weights


def threshold_for(scores: np.ndarray, y: np.ndarray, precision: float) -> float:
    """The lowest score above which the training items' precision is at least ``precision``."""
    if not scores.size:
        return 0.0  # no row of this kind: the margin alone sets the threshold
    order = np.argsort(-scores)
    best = float(scores.max()) + 1.0
    tp = fp = 0
    for i in order:
        tp += y[i] == 1
        fp += y[i] == 0
        if tp / (tp + fp) >= precision:
            best = float(scores[i])
    return best


MIN_WORDS = 5
"""The linter scores no sentence of fewer words (_judgement.STANCE_MIN_WORDS)."""
L2 = 0.1
"""Penalty of the embedding coefficients (chosen by leave-one-domain-out on dev, ``--cv``)."""
L2_WORDS: float | None = 0.03
"""Penalty of a word's own weight (``--cv``); ``None``: embeddings only."""
L2_RELATED = 0.1
"""Penalty of the related table's embedding coefficients."""
L2_RELATED_WORDS = 0.03
"""Penalty of a word's own weight in the related table."""
MIN_SENTENCES = 2
"""A word gets a weight of its own (beyond its embedding's) only when at
least this many training sentences hold it."""


class Model(NamedTuple):
    """A fitted scorer: the base table and bias, read for every sentence,
    and the related table and bias, added for a sentence that names a
    defect's part or block; each with its threshold."""

    table: np.ndarray
    bias: float
    threshold: float
    related_table: np.ndarray
    related_bias: float
    related_threshold: float
    request_threshold: float = 0.0
    """A request's or question's threshold (_judgement.asks_the_reader), and a related one's below."""
    related_request_threshold: float = 0.0


class Trainer:
    """Fits the word tables on a subset of the training rows.

    A sentence's features are the average of its words' embeddings and its
    words' shares (a word's own weight, for every word of the vocabulary
    that :data:`MIN_SENTENCES` training sentences hold, penalised by
    ``l2_words``), and, for a sentence that names a defect's part or block
    (``related``), the same features again with coefficients of their own
    and a constant: what the words say about the part they name ("keep an
    eye on", "ask yourself whether") is learned apart from what they say
    about anything else (the same words aimed elsewhere are work). Both
    parts are linear in the words' counts over the sentence's length, so
    each folds into one number per word:
    ``table[w] = coef . vector(w) + own[w]``."""

    def __init__(self, data, words: list[str], vectors: np.ndarray, l2: float, l2_words: float | None,
                 precision: float, related: np.ndarray | None = None, work: np.ndarray | None = None):
        self.data, self.words, self.vectors = data, words, vectors
        self.index = {w: i for i, w in enumerate(words)}
        self.l2, self.l2_words, self.precision = l2, l2_words, precision
        sentences = [s for _, s, _ in data]
        self.embedded = features(sentences, self.index, vectors)
        self.labels = np.array([y for _, _, y in data], dtype=float)
        self.domains = np.array([d for d, _, _ in data])
        self.lengths = np.array([len(words_of(s)) for s in sentences])
        self.related = related_rows(data) if related is None else related
        self.work = stance_work(data) if work is None else work
        """The rows whose scores set the thresholds' margins (:meth:`margin`):
        work (by default :func:`stance_work`'s: no request to the reader)."""
        self.requests = (self.labels == 0) & ~stance_work(data)
        """The work rows that are requests or questions to the reader: they set the request thresholds' margins."""
        self.fitted: dict[bytes, Model] = {}

    def _own(self, sentences: list[str]) -> list[str]:
        """The words :data:`MIN_SENTENCES` of ``sentences`` hold (empty without ``l2_words``)."""
        if self.l2_words is None:
            return []
        holders: dict[str, int] = {}
        for sentence in sentences:
            for word in set(words_of(sentence)):
                if word in self.index:
                    holders[word] = holders.get(word, 0) + 1
        return sorted(w for w, n in holders.items() if n >= MIN_SENTENCES)

    def fit_rows(self, rows: np.ndarray) -> Model:
        """The model fitted on ``rows`` (a mask), with its training
        thresholds. Remembered by ``rows``: a cross-validation fits each
        pair of left-out domains twice (one left out for its margin while
        the other is evaluated, and the other way round), and the fit is
        deterministic, so the second is the first."""
        key = np.packbits(rows).tobytes()
        if key not in self.fitted:
            self.fitted[key] = self._fit(rows)
        return self.fitted[key]

    def _fit(self, rows: np.ndarray) -> Model:
        kept = [s for (_, s, _), keep in zip(self.data, rows) if keep]
        related = self.related[rows].astype(float)
        own = self._own(kept)
        own_related = self._own([s for s, r in zip(kept, related) if r])
        base_rows, base_cols, base_values = shares(kept, {w: i for i, w in enumerate(own)})
        rel_rows, rel_cols, rel_values = shares(kept, {w: i for i, w in enumerate(own_related)})
        on = related[rel_rows] > 0
        dense = np.hstack([self.embedded[rows], self.embedded[rows] * related[:, None], related[:, None]])
        design = Design(dense, (np.concatenate([base_rows, rel_rows[on]]),
                                np.concatenate([base_cols, rel_cols[on] + len(own)]),
                                np.concatenate([base_values, rel_values[on]])), len(own) + len(own_related))
        y = self.labels[rows]
        dims = self.vectors.shape[1]
        penalty = np.concatenate([np.full(dims, self.l2), np.full(dims, L2_RELATED), [1e-3],
                                  np.full(len(own), self.l2_words or 0.0), np.full(len(own_related), L2_RELATED_WORDS)])
        weights = fit(design, y, penalty)
        table = self.vectors @ weights[:dims]
        related_table = self.vectors @ weights[dims:2 * dims]
        for word, weight in zip(own, weights[2 * dims + 1:2 * dims + 1 + len(own)]):
            table[self.index[word]] += weight
        for word, weight in zip(own_related, weights[2 * dims + 1 + len(own):-1]):
            related_table[self.index[word]] += weight
        scores = design.times(weights)
        scored = self.lengths[rows] >= MIN_WORDS
        cut = threshold_for(scores[scored & (related == 0)], y[scored & (related == 0)], self.precision)
        related_cut = threshold_for(scores[scored & (related > 0)], y[scored & (related > 0)], self.precision)
        return Model(table, float(weights[-1]), cut, related_table, float(weights[2 * dims]), related_cut)

    def score(self, model: Model, sentences: list[str], related: np.ndarray) -> np.ndarray:
        """The linter's score: bias + sum of the words' numbers / number of
        words, plus the related bias and table's for a related sentence."""
        def part(table: np.ndarray, bias: float, words: list[str]) -> float:
            return bias + sum(float(table[self.index[w]]) for w in words if w in self.index) / max(len(words), 1)

        return np.array([part(model.table, model.bias, ws)
                         + (part(model.related_table, model.related_bias, ws) if r else 0.0)
                         for ws, r in zip(map(words_of, sentences), related)])

    def margin(self, rows: np.ndarray, work: np.ndarray | None = None) -> tuple[float, float]:
        """How far above its fold's threshold the highest-scoring ``work``
        sentence of dev (of at least :data:`MIN_WORDS` words) scores when the
        model never saw its domain (each dev domain of ``rows`` left out in
        turn; the phrase and training-only lines stay in every fold): for
        the sentences related to no defect's part, and for the related ones.
        The shipped thresholds are the full model's plus these margins, so
        that no work sentence of dev would have been flagged by a model that
        had not seen its domain: the precision the rule needs on a domain
        nobody tuned. ``work``: the work rows counted (default :attr:`work`)."""
        work_rows = self.work if work is None else work
        margins = [0.0, 0.0]
        for held in held_out_domains([row for row, keep in zip(self.data, rows) if keep]):
            model = self.fit_rows(rows & (self.domains != held))
            work = rows & (self.domains == held) & work_rows & (self.lengths >= MIN_WORDS)
            if not work.any():
                continue
            picked = np.flatnonzero(work)
            related = self.related[picked]
            scores = self.score(model, [self.data[i][1] for i in picked], related)
            for kind, cut in ((0, model.threshold), (1, model.related_threshold)):
                chosen = scores[related == kind]
                if chosen.size:
                    margins[kind] = max(margins[kind], float(chosen.max()) - cut)
        return margins[0], margins[1]

    def model(self, rows: np.ndarray) -> Model:
        """The model fitted on ``rows`` with its shipped thresholds (training
        cut + margin + 0.01): a statement's by the work statements' margin,
        a request's by the work requests' (:attr:`requests`)."""
        model = self.fit_rows(rows)
        margin, related_margin = self.margin(rows)
        request, related_request = self.margin(rows, self.requests)
        return model._replace(threshold=model.threshold + margin + 0.01,
                              related_threshold=model.related_threshold + related_margin + 0.01,
                              request_threshold=model.threshold + request + 0.01,
                              related_request_threshold=model.related_threshold + related_request + 0.01)


def stance_work(data) -> np.ndarray:
    """The work rows whose scores set the stance thresholds' margins: all
    but requests and questions to the reader (_judgement.asks_the_reader:
    "Read through the retry loop and tell me whether it is ready to
    merge"), which the linter holds to thresholds of their own
    (:attr:`Trainer.requests`: REQUEST_THRESHOLD, RELATED_REQUEST_THRESHOLD)."""
    from skill_eval.linter.rules.artifact._judgement import asks_the_reader

    return np.array([y == 0 and not asks_the_reader(sentence) for _, sentence, y in data])


def quiz_trainer(words: list[str], vectors: np.ndarray, l2: float, l2_words: float | None, precision: float) -> Trainer:
    """The quiz table's trainer: quizzes against work and signposts (:data:`QUIZ_LABELS`)
    of prose (no comment, title, alt or link text, no table cell), the same features,
    penalties, threshold and leave-one-domain-out margin as the stance
    table's, with no related rows (a quiz is read by its words wherever it
    points)."""
    data = load_training(QUIZ_LABELS, prose_only=True)
    work = np.array([y == 0 for _, _, y in load_training(QUIZ_WORK, prose_only=True)])
    return Trainer(data, words, vectors, l2, l2_words, precision, np.zeros(len(data), dtype=bool), work)


QUIZ_WORK = {"signpost": 1, "quiz": 1, "work": 0, "key-leak": None}
"""The rows of :data:`QUIZ_LABELS`'s data, in the same order, with work 0:
the rows whose scores set the quiz threshold's margin."""


def cross_validate(trainer: Trainer) -> tuple[int, int, int, int]:
    """Leave one dev domain out (its own thresholds and margins from the rest): tp, fp, fn, tn over dev's
    signpost and work sentences, by score alone (judgement_cv.py lints them)."""
    tp = fp = fn = tn = 0
    for held in held_out_domains(trainer.data):
        model = trainer.model(trainer.domains != held)
        picked = np.flatnonzero(trainer.domains == held)
        related = trainer.related[picked]
        scores = trainer.score(model, [trainer.data[i][1] for i in picked], related)
        flagged = scores >= np.where(related, model.related_threshold, model.threshold)
        yt = trainer.labels[picked]
        tp += int(np.sum(flagged & (yt == 1)))
        fp += int(np.sum(flagged & (yt == 0)))
        fn += int(np.sum(~flagged & (yt == 1)))
        tn += int(np.sum(~flagged & (yt == 0)))
    return tp, fp, fn, tn


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cv", action="store_true", help="print leave-one-domain-out figures for each regulariser")
    parser.add_argument("--check", action="store_true", help="fail if the committed table differs from a fresh one")
    parser.add_argument("--l2", type=float, default=L2)
    parser.add_argument("--l2-words", type=float, default=L2_WORDS, help="penalty of a word's own weight (0: none)")
    parser.add_argument("--precision", type=float, default=0.97, help="training precision the threshold is set for")
    args = parser.parse_args()
    data = load_training()
    words, vectors = word_vectors()
    l2_words = args.l2_words or None
    related = related_rows(data)
    if args.cv:
        for l2, own in ((0.1, None), (0.1, 0.1), (0.1, 0.03), (0.1, 0.01), (0.3, 0.03)):
            tp, fp, fn, tn = cross_validate(Trainer(data, words, vectors, l2, own, args.precision, related))
            print(f"l2 {l2:5} words {own}: leave-one-domain-out signpost P {tp / max(tp + fp, 1):.3f} "
                  f"R {tp / (tp + fn):.3f} (tp {tp} fp {fp} fn {fn} tn {tn})", flush=True)
    trainer = Trainer(data, words, vectors, args.l2, l2_words, args.precision, related)
    model = trainer.model(np.ones(len(data), dtype=bool))
    quiz = quiz_trainer(words, vectors, args.l2, l2_words, args.precision)
    quiz_model = quiz.model(np.ones(len(quiz.data), dtype=bool))

    def rows(weights: np.ndarray) -> tuple[int, str]:
        table = {w: round(float(v), 3) for w, v in zip(words, weights) if round(float(v), 3) != 0.0}
        return len(table), ",\n".join(f"    {w!r}: {v!r}" for w, v in sorted(table.items()))

    size, body = rows(model.table)
    related_size, related_body = rows(model.related_table)
    quiz_size, quiz_body = rows(quiz_model.table)
    penalty = f"L2 {args.l2}" + (f", a word's own weight L2 {l2_words}" if l2_words else "")
    text = (f'"""SE301\'s stance scorer, generated by benchmarks/train_judgement_scorer.py from\n'
            f'benchmarks/judgement/dev.tsv, train_sentences.tsv and phrase_eval\'s tuning half (WordLlama\n'
            f'l2_supercat_256 embeddings of wordfreq\'s {VOCABULARY:,} most frequent English words, {penalty};\n'
            f'related table L2 {L2_RELATED}, a word\'s own weight L2 {L2_RELATED_WORDS}).\n'
            f'Do not edit.\n\n'
            f'Licence: this table is an adaptation of wordfreq\'s word list (wordfreq 3.1.1 by Robyn Speer,\n'
            f'data under CC BY-SA 4.0, https://creativecommons.org/licenses/by-sa/4.0/) and of WordLlama\'s\n'
            f'embeddings (wordllama 0.4.0, MIT). This file alone is distributed under CC BY-SA 4.0; see\n'
            f'docs/licences.md.\n\n'
            f'score(sentence) = BIAS + sum(WORDS.get(w, 0) for w in words) / len(words), against THRESHOLD;\n'
            f'for a sentence naming a defect\'s part or block, plus RELATED_BIAS +\n'
            f'sum(RELATED.get(w, 0) for w in words) / len(words), against RELATED_THRESHOLD.\n'
            f'A request or question to the reader is held to REQUEST_THRESHOLD (RELATED_REQUEST_THRESHOLD).\n'
            f'A quiz (SE302): QUIZ_BIAS + sum(QUIZ.get(w, 0) for w in words) / len(words), against\n'
            f'QUIZ_THRESHOLD (trained on quizzes against work)."""\n\n'
            f"BIAS = {round(model.bias, 4)!r}\nTHRESHOLD = {round(model.threshold, 4)!r}\n"
            f"RELATED_BIAS = {round(model.related_bias, 4)!r}\nRELATED_THRESHOLD = {round(model.related_threshold, 4)!r}\n"
            f"REQUEST_THRESHOLD = {round(model.request_threshold, 4)!r}\n"
            f"RELATED_REQUEST_THRESHOLD = {round(model.related_request_threshold, 4)!r}\n"
            f"QUIZ_BIAS = {round(quiz_model.bias, 4)!r}\nQUIZ_THRESHOLD = {round(quiz_model.threshold, 4)!r}\n"
            f"WORDS = {{\n{body},\n}}\n"
            f"RELATED = {{\n{related_body},\n}}\n"
            f"QUIZ = {{\n{quiz_body},\n}}\n")
    if args.check:
        same = OUT.read_text(encoding="utf-8") == text
        print("table is up to date" if same else "table differs from a fresh training run")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {size} + {related_size} + {quiz_size} words, thresholds {model.threshold:.3f}, "
          f"related {model.related_threshold:.3f}, requests {model.request_threshold:.3f} / "
          f"{model.related_request_threshold:.3f}, quiz {quiz_model.threshold:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
