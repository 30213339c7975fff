"""BLAKE2b from CPython's own ``_blake2``, as ``hashlib.blake2b`` is, without
the import of OpenSSL's ``_hashlib`` that ``hashlib`` costs every start
(docs/performance.md)."""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python without CPython's own BLAKE2
    from hashlib import blake2b

__all__ = ["blake2b"]
