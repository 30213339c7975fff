"""``--output-format json``: a list of objects with ruff's field names, written by msgspec."""

from __future__ import annotations

from typing import Any, Sequence

import msgspec

from .. import DOCS_BASE_URL
from ..diagnostics import Diagnostic
from . import display_path, encodable_json


def _place(span) -> dict:
    """A span's ``filename``, ``location`` and ``end_location``."""
    return {"filename": display_path(span.path), "location": {"row": span.start.line, "column": span.start.column},
            "end_location": {"row": span.end.line, "column": span.end.column}}


def as_dict(d: Diagnostic) -> dict:
    """The JSON object of one diagnostic."""
    fix = None
    if d.fixes:
        first = d.fixes[0]
        fix = {"message": first.title, "applicability": "safe" if first.safe else "unsafe",
               "edits": [{**_place(e.span), "content": e.new_text} for e in first.edits]}
    related = [{"filename": place["filename"], "location": place["location"], "message": r.message}
               for r in d.related for place in (_place(r.span),)]
    return {"code": d.code, "name": d.name, "message": d.message, "severity": d.severity.value, **_place(d.span),
            "fix": fix, "related": related, "url": f"{DOCS_BASE_URL}/{d.code}.md"}


def _json(value: Any) -> str:
    """``value`` as ``json.dumps(value, indent=2, ensure_ascii=False)`` writes it (a lone surrogate escaped)."""
    try:
        return msgspec.json.format(msgspec.json.encode(value), indent=2).decode("utf-8")
    except UnicodeEncodeError:
        import json

        return encodable_json(json.dumps(value, indent=2, ensure_ascii=False))


def render(diagnostics: Sequence[Diagnostic]) -> str:
    """The JSON list of ``diagnostics``."""
    return _json([as_dict(d) for d in diagnostics])


def render_statistics(diagnostics: Sequence[Diagnostic]) -> str:
    """``--statistics --output-format json``: ``[{"code", "name", "count"}, ...]``, the most frequent first."""
    from .text import statistics

    return _json([{"code": code, "name": name, "count": count} for code, name, count in statistics(diagnostics)])
