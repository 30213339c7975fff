"""A lock-free ``cached_property``: Python 3.12's behaviour, on 3.10 and 3.11 too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class cached_property(Generic[T]):
    """:func:`functools.cached_property` without the class-wide ``RLock`` that
    Python 3.10 and 3.11 take on every first access. Every cached value here
    is a pure function of its instance: two threads computing one at once at
    worst compute it twice. The value lives in the instance's ``__dict__``."""

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    def __get__(self, instance: Any, owner: type | None = None) -> T:
        if instance is None:
            return self  # type: ignore[return-value]
        value = instance.__dict__[self.attrname] = self.func(instance)
        return value
