"""``--output-format json``: a list of objects with ruff's field names."""

from __future__ import annotations

import json
from typing import Sequence

from ..diagnostics import Diagnostic
from . import display_path, encodable_json


def _location(span) -> dict:
    return {"row": span.start.line, "column": span.start.column}


def as_dict(d: Diagnostic) -> dict:
    fix = None
    if d.fixes:
        first = d.fixes[0]
        fix = {
            "message": first.title,
            "applicability": "safe" if first.safe else "unsafe",
            "edits": [
                {
                    "filename": display_path(e.span.path),
                    "location": {"row": e.span.start.line, "column": e.span.start.column},
                    "end_location": {"row": e.span.end.line, "column": e.span.end.column},
                    "content": e.new_text,
                }
                for e in first.edits
            ],
        }
    return {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "severity": d.severity.value,
        "filename": display_path(d.path),
        "location": {"row": d.start.line, "column": d.start.column},
        "end_location": {"row": d.end.line, "column": d.end.column},
        "fix": fix,
        "related": [
            {"filename": display_path(r.span.path), "location": _location(r.span), "message": r.message} for r in d.related
        ],
        "url": _url(d.code),
    }


def _url(code: str) -> str:
    from .. import DOCS_BASE_URL

    return f"{DOCS_BASE_URL}/{code}.md"


def render(diagnostics: Sequence[Diagnostic]) -> str:
    return encodable_json(json.dumps([as_dict(d) for d in diagnostics], indent=2, ensure_ascii=False))


def render_statistics(diagnostics: Sequence[Diagnostic]) -> str:
    """``--statistics --output-format json``: ``[{"code", "name", "count"}, ...]``,
    the most frequent first."""
    from .text import statistics

    return encodable_json(json.dumps([{"code": code, "name": name, "count": count}
                                      for code, name, count in statistics(diagnostics)], indent=2, ensure_ascii=False))
