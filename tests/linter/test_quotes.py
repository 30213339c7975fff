"""Quote finding: whitespace runs equal one space, NFC comparison, ambiguity,
and offsets that point back into the original artifact."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from skill_eval.linter.quotes import find_quote, normalize_for_quotes, normalize_quote


def test_whitespace_and_line_breaks_compare_equal() -> None:
    text = "| 3 | metrics | behavior unchanged,\r\n  so existing\tcoverage applies |"
    match = find_quote(text.replace("\r\n", "\n"), "behavior unchanged, so existing coverage applies")
    assert match.found
    start, end = match.occurrences[0]
    assert normalize_quote(text.replace("\r\n", "\n")[start:end]) == "behavior unchanged, so existing coverage applies"


def test_nfd_artifact_matches_nfc_quote_and_span_covers_combining_marks() -> None:
    text = "The cafe\u0301 report is final."
    match = find_quote(text, "caf\u00e9 report")
    assert match.found
    start, end = match.occurrences[0]
    assert text[start:end] == "cafe\u0301 report"


def test_ambiguous_quote_is_not_found() -> None:
    match = find_quote("ok ok ok", "ok")
    assert match.ambiguous and not match.found
    assert len(match.occurrences) == 3


def test_blank_quote_is_never_found() -> None:
    assert not find_quote("text", "   ").occurrences


words = st.lists(st.sampled_from(["a", "bb", "c\u0301", "\u00e9", "d.", "|", "x"]), min_size=1, max_size=12)
gaps = st.sampled_from([" ", "  ", "\n", "\t", " \n "])


@settings(max_examples=300, deadline=None)
@given(words, st.lists(gaps, min_size=12, max_size=12), st.integers(0, 11), st.integers(1, 12), st.booleans())
def test_every_slice_of_words_is_located_exactly(parts, spaces, first, count, decompose) -> None:
    text = "".join(word + spaces[i] for i, word in enumerate(parts))
    if decompose:
        text = unicodedata.normalize("NFD", text)
    chosen = parts[first % len(parts):][:count]
    quote = " ".join(chosen)
    match = find_quote(text, quote)
    assert match.occurrences, (text, quote)
    for start, end in match.occurrences:
        assert normalize_quote(text[start:end]) == normalize_quote(quote)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=8))
def test_fast_and_slow_paths_agree(text, quote) -> None:
    nfc = unicodedata.normalize("NFC", text)
    fast = find_quote(nfc, quote).occurrences
    normalized = normalize_for_quotes(nfc)
    wanted = normalize_quote(quote)
    slow = []
    if wanted:
        index = normalized.text.find(wanted)
        while index != -1:
            slow.append((normalized.origin[index], normalized.ends[index + len(wanted) - 1]))
            index = normalized.text.find(wanted, index + 1)
    assert list(fast) == slow


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "ab", "a b", "\u00e9"]), min_size=1, max_size=10),
    st.lists(gaps, min_size=10, max_size=10),
    st.lists(st.sampled_from(["a", "b", "ab"]), min_size=1, max_size=3),
)
def test_repeated_words_across_gaps_are_located_like_the_slow_path(parts, spaces, quote_words) -> None:
    """Quotes that occur several times, some spelt verbatim and some across
    line breaks or runs of spaces: the fast path (verbatim occurrences when
    they are all of them, else mapped back) equals the character-by-character
    normalization."""
    text = "".join(word + spaces[i] for i, word in enumerate(parts))
    quote = " ".join(quote_words)
    normalized = normalize_for_quotes(text)
    slow = []
    index = normalized.text.find(quote)
    while index != -1:
        slow.append((normalized.origin[index], normalized.ends[index + len(quote) - 1]))
        index = normalized.text.find(quote, index + 1)
    assert list(find_quote(text, quote).occurrences) == slow
