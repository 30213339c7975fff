"""A least-recently-used cache of what is computed from a text, bounded by the
size of the texts it holds as well as by their number: the phrase rules'
(:mod:`._phrases`, :mod:`._judgement`) memo of an artifact's words,
segments and block structure, which they compute from texts of every kind
(artifacts, sentences, phrases) deep below the rule's context.

What is derived from one file for the rest of the linter (parsed markdown,
front matter, an artifact's 5-grams) is kept with its document instead
(:meth:`~skill_eval.linter.textfile.TextDocument.derived`), and goes with
it. ``functools.lru_cache`` bounds a cache by a number of entries only, so
what it held grew with the size of the texts: a process linting many
distinct large artifacts through the API kept a great deal of memory
(docs/performance.md). :func:`text_cache` also bounds the sum of the cached
texts' lengths, and never caches a text longer than that budget.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

Result = TypeVar("Result")


class TextCache:
    """``function(text, *rest)`` memoized by its arguments, the oldest entries
    evicted once more than ``max_entries`` are held or their texts hold more
    than ``max_chars`` characters in all. Safe to call from several threads
    (a race may compute a value twice, never return a wrong one)."""

    def __init__(self, function: Callable[..., Any], max_entries: int, max_chars: int) -> None:
        self.__wrapped__ = function
        self.__doc__ = function.__doc__
        self.__name__ = getattr(function, "__name__", "text_cache")
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._entries: OrderedDict[Any, Any] = OrderedDict()
        self._chars = 0

    def __call__(self, text: str, *rest: Any) -> Any:
        key = (text, *rest) if rest else text
        entries = self._entries
        try:
            result = entries[key]
        except KeyError:
            pass
        else:
            try:
                entries.move_to_end(key)  # the newest now
            except KeyError:
                pass  # another thread evicted it meanwhile
            return result
        result = self.__wrapped__(text, *rest)
        size = len(text)
        if size <= self.max_chars:  # a text that alone would fill the budget is never held
            self._chars += size
            self._evict()
            entries[key] = result
        return result

    def _evict(self) -> None:
        """Drop the oldest entries until one more (its characters already
        counted) fits. An ``OrderedDict``: taking the oldest is O(1), where a
        ``dict``'s first item is found past the slots its deletions left."""
        entries = self._entries
        while entries and (len(entries) >= self.max_entries or self._chars > self.max_chars):
            try:
                oldest, _result = entries.popitem(last=False)
            except KeyError:
                break  # another thread emptied it
            self._chars -= len(oldest[0] if isinstance(oldest, tuple) else oldest)

    def cache_clear(self) -> None:
        self._entries.clear()
        self._chars = 0

    def cache_size(self) -> tuple[int, int]:
        """``(entries, characters of their texts)``."""
        return len(self._entries), self._chars


def text_cache(max_entries: int, max_chars: int) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Decorate a function whose first argument is a text with a
    :class:`TextCache` of at most ``max_entries`` entries and ``max_chars``
    characters of text."""

    def decorate(function: Callable[..., Result]) -> Callable[..., Result]:
        return TextCache(function, max_entries, max_chars)  # type: ignore[return-value]

    return decorate
