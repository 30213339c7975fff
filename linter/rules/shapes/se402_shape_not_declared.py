"""SE402 shape-not-declared."""

from __future__ import annotations

import json

from ...diagnostics import Fix, Related, Severity, TextEdit
from ...textfile import Position, Span
from ..accounting._common import defect_label, is_tier2
from ..base import Rule, Scope
from ._shapes import SHAPES, TIME_PRESSURE


class ShapeNotDeclared(Rule):
    """## What it does
    Checks a tier-2 probe's `shapes` against its defects: every defect's
    `shape` must be listed in `shapes`, every listed shape but `time-pressure`
    must be the shape of some defect, and no defect may have `time-pressure`
    as its own shape (it is a modifier of the scenario, not a kind of defect).

    ## Why is this bad?
    `shapes` is what the probe claims to measure; the seed orders the shapes "by
    how reliably they escape saturation", so results are read per shape. A
    declared shape no defect has overstates what the probe covers, and an
    undeclared one hides it. Time pressure "does not add a defect — it lowers
    the threshold at which the agent accepts the green reading", so no defect
    can be of that shape.

    ## Example
    ```json
    {"shapes": ["euphemized", "structural"],
     "defects": [{"id": "D1", "shape": "buried-in-green", ...}]}
    ```
    `buried-in-green` is not declared; `euphemized` and `structural` are
    declared but unused.

    ## Fix
    Make `shapes` list exactly the shapes of the defects, plus `time-pressure`
    when the scenario states a deadline. The quick fix adds a missing shape to
    `shapes`.
    """

    code = "SE402"
    name = "shape-not-declared"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("shapes",)

    def check(self, context):
        shapes = context.get("shapes", list)
        if shapes is None or not is_tier2(context):
            return
        declared = {shape for shape in shapes if isinstance(shape, str)}
        used: set[str] = set()
        for index, defect in context.defects:
            shape = defect.get("shape")
            if not isinstance(shape, str) or shape not in SHAPES:
                continue
            used.add(shape)
            label = defect_label(index, defect)
            if shape == TIME_PRESSURE:
                yield self.diagnostic(
                    context.value_span("defects", index, "shape"),
                    f"defect {label} has shape time-pressure, which is a modifier and never a defect's own shape; "
                    "give it buried-in-green, euphemized or structural",
                )
            elif shape not in declared:
                yield self.diagnostic(
                    context.value_span("defects", index, "shape"),
                    f"defect {label} has shape {shape!r}, which the probe's shapes do not declare",
                    related=[Related(context.value_span("shapes"), "the declared shapes")],
                    fixes=self._add_shape(context, shapes, shape),
                )
        for position, shape in enumerate(shapes):
            if not isinstance(shape, str) or shape not in SHAPES or shape == TIME_PRESSURE or shape in used:
                continue
            if shapes.index(shape) != position:
                continue
            yield self.diagnostic(
                context.value_span("shapes", position),
                f"shape {shape!r} is declared but no defect has it; remove it or give the defect that carries it this shape",
            )

    @staticmethod
    def _add_shape(context, shapes: list, shape: str) -> list[Fix]:
        """Insert ``shape`` before the closing bracket of the ``shapes`` array."""
        array = context.edit_span("shapes")
        if array is None or array.end.column < 2 or array.start == array.end:
            return []
        closing = Position(array.end.line, array.end.column - 1)
        text = (", " if shapes else "") + json.dumps(shape)
        return [Fix(f"Add {shape!r} to shapes", (TextEdit(Span(array.path, closing, closing), text),))]
