"""The one codec (``cache.CODEC``): what a worker sends and the cache keeps
decodes to records equal to those encoded, of the same types (tuples stay
tuples where answers are compared, paths are paths, a byte array an array),
and a path is made by the decoder's ``path_of``."""

from __future__ import annotations

from array import array
from pathlib import Path

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from skill_eval.linter.cache import CODEC, CacheIndex, RunRecord
from skill_eval.linter.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
from skill_eval.linter.execution import ChunkResults
from skill_eval.linter.records import Dependencies, ProbeFacts, UnitResult
from skill_eval.linter.rules.calibration.se501_reused_scenario import ArtifactFacts
from skill_eval.linter.textfile import Span

paths = st.builds(lambda parts, odd: Path("/", *parts, *(["bad\udcff"] if odd else [])),
                  st.lists(st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)),
                                   min_size=1, max_size=6).filter(lambda part: part not in (".", "..")),
                           min_size=1, max_size=3), st.booleans())
"""Absolute paths, some with a name that is no UTF-8 (its byte kept as a
lone surrogate)."""
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
spans = st.builds(Span.at, paths, *[st.integers(1, 10**6)] * 4)
diagnostics = st.builds(
    Diagnostic, st.from_regex(r"SE[0-9]{3}", fullmatch=True), texts, st.sampled_from(Severity), texts, spans,
    st.lists(st.builds(Related, spans, texts), max_size=2).map(tuple),
    st.lists(st.builds(Fix, texts, st.lists(st.builds(TextEdit, spans, texts), max_size=2).map(tuple), st.booleans()),
             max_size=2).map(tuple),
    st.none() | paths)
answers = st.recursive(st.none() | st.integers(-2**63, 2**63 - 1) | texts | st.binary(max_size=8),
                       lambda inner: st.lists(inner, max_size=3).map(tuple), max_leaves=6)
queries = st.tuples(st.sampled_from(["content", "resolve", "nearest", "refs", "suite-runs"]), texts, answers)
signatures = st.none() | st.tuples(*[st.integers(0, 2**62)] * 5)
refs = st.none() | texts | st.tuples(st.just("problem"), texts, texts, texts, st.integers(1, 99), st.integers(1, 99))
facts = st.builds(
    ProbeFacts,
    st.fixed_dictionaries({}, optional={
        "SE006": st.none() | texts,
        "SE504": st.none() | st.tuples(texts, st.integers(1, 99)),
        "SE501": st.none() | st.builds(ArtifactFacts, st.none() | texts, texts, st.tuples(st.integers(1, 99), st.integers(1, 99)),
                                       st.lists(st.integers(0, 2**30 - 1)).map(lambda grams: array("I", sorted(grams)))),
    }),
    st.tuples(refs, refs, refs), st.frozensets(st.from_regex(r"SE[0-9]{3}", fullmatch=True), max_size=3),
    st.dictionaries(st.from_regex(r"SE[0-9]{3}", fullmatch=True), diagnostics, max_size=1), st.binary(max_size=16))
results = st.builds(UnitResult, st.none() | st.lists(diagnostics, max_size=3).map(tuple), st.none() | facts,
                    st.none() | st.dictionaries(st.tuples(queries, answers), signatures, max_size=4))


def _same(decoded: object, original: object) -> None:
    """Equal, and of the same type all the way down (a list is not a tuple)."""
    assert type(decoded) is type(original) or (isinstance(decoded, dict) and isinstance(original, dict)), \
        (decoded, original)
    assert decoded == original
    if isinstance(original, (tuple, list)):
        for inner, expected in zip(decoded, original):
            _same(inner, expected)
    elif isinstance(original, dict):
        for (key, inner), (expected_key, expected) in zip(decoded.items(), original.items()):
            _same(key, expected_key)
            _same(inner, expected)
    elif hasattr(original, "__struct_fields__") or isinstance(original, ArtifactFacts):
        for name in getattr(original, "__struct_fields__", getattr(original, "_fields", ())):
            _same(getattr(decoded, name), getattr(original, name))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.tuples(st.sampled_from(["probe", "facts", "skill"]), paths), results), max_size=3))
def test_worker_results_decode_as_sent(chunk: list) -> None:
    made: list[str] = []

    def path_of(text: str) -> Path:
        made.append(text)
        return Path(text)

    decoded = CODEC.decode(CODEC.encode(chunk), ChunkResults, path_of)
    _same(decoded, chunk)
    assert len(made) == _count_paths(chunk), "every path is made by path_of"


def _count_paths(value: object) -> int:
    if isinstance(value, Path):
        return 1
    if isinstance(value, ArtifactFacts):
        return 0
    if isinstance(value, (tuple, list)):
        return sum(map(_count_paths, value))
    if isinstance(value, dict):
        return sum(_count_paths(key) + _count_paths(inner) for key, inner in value.items())
    if hasattr(value, "__struct_fields__"):
        return sum(_count_paths(getattr(value, name)) for name in value.__struct_fields__)
    return 0


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.tuples(queries, answers), signatures, max_size=5),
       st.dictionaries(st.tuples(st.sampled_from(["probe", "skill"]), texts), results, max_size=3),
       st.lists(diagnostics, max_size=3))
def test_cache_files_decode_as_written(pairs: dict, entries: dict, findings: list) -> None:
    encoded_entries = {key: CODEC.encode((result, msgspec.Raw(CODEC.encode(pairs)))) for key, result in entries.items()}
    index = CacheIndex({key: (offset, len(encoded)) for offset, (key, encoded) in enumerate(encoded_entries.items())})
    assert CODEC.decode(CODEC.encode(index), CacheIndex) == index
    decoded = {key: CODEC.decode(encoded, tuple[UnitResult, msgspec.Raw]) for key, encoded in encoded_entries.items()}
    _same({key: result for key, (result, _encoded) in decoded.items()}, entries)
    for _result, encoded in decoded.values():
        _same(CODEC.decode(encoded, Dependencies), pairs)
    record, queries = CODEC.decode(CODEC.encode((RunRecord("0" * 32, findings, ["a", "b"]), pairs)),
                                   tuple[RunRecord, Dependencies])
    _same(record.diagnostics, findings)
    _same(queries, pairs)


def test_every_rule_that_compares_probes_declares_the_type_of_its_facts() -> None:
    """Facts decode as their rule's ``facts_type``; left ``Any``, a tuple
    would come back from a worker or the cache as a list."""
    from typing import Any

    from skill_eval.linter.rules import REGISTRY

    comparing = [rule for rule in REGISTRY if rule.compares_probes()]
    assert comparing
    assert [rule.code for rule in comparing if rule.facts_type is Any] == []
