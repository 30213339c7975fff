"""BLAKE2b and a constant-time comparison without loading OpenSSL.

``hashlib`` and ``hmac`` load OpenSSL's ``_hashlib`` on import (a cost on
every start of the linter and of each worker process: docs/performance.md),
though BLAKE2b is
CPython's own ``_blake2`` and needs none of it. These are the same functions
``hashlib.blake2b`` and ``hmac.compare_digest`` are (CPython builds always
have ``_blake2``; ``hashlib`` is the fallback elsewhere).
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python without CPython's own BLAKE2
    from hashlib import blake2b

try:
    from _operator import _compare_digest as compare_digest
except ImportError:  # pragma: no cover
    from hmac import compare_digest

__all__ = ["blake2b", "compare_digest"]
