"""``skill-eval report --html FILE``: one self-contained, offline HTML viewer.

:func:`render_html` turns a report model (:mod:`skill_eval.evals.viewer_model`)
into one HTML file that loads nothing: the plotting library (Vega and
vega-embed, vendored in ``viewer_assets/``), the viewer's script and styles,
and the model itself are inlined. The model travels gzip-compressed and
base64-encoded (a large report's answers and gradings are several times
smaller so: docs/performance.md), and the browser inflates it with its built-in
``DecompressionStream``.

The page holds the zones per agent and model, the skill-creator evals and
trigger tests when the model has them (``suite_evals``, ``trigger_tests``:
rates with their intervals, pass@k, effects), the calibration plot (one agent
and model at a time), a full-text search over answers, errors and quotes, a
table of every group, sortable and filterable (a skill, agent or model every
row shown shares is named once above it instead of in a column), and a detail
view per group: the probe as it ran (the artifact with each defect's quote
marked, each ``caught_when``) beside the control and the treatment starts, in
three columns, each start with its answer, its grading per defect and
expectation, and the stderr tail of failures. The URL's hash holds the whole
view (filters, sort, search, series, the detail open), so a view can be
reloaded and shared; docs/report.md describes it.

The calibration plot
--------------------
Each point is a group's (control catch rate, treatment catch rate), with Wilson
95% intervals as error bars, over the zones of the seed's diagram. Rates are
fractions k/n of few reps, so hundreds of groups share a handful of
coordinates: :func:`plot_layout` draws **one mark per coordinate**, its area
growing with the number of groups there, rather than dodging the groups apart
(a dodge would move 500 points far from the rates they stand for). Marks keep
their exact coordinates; only marks of distinct coordinates closer than their
radii (rates of many reps, e.g. 12/23 beside 1/2) are merged into one, drawn
at their weighted mean, and their tooltip lists each member's exact counts.
The scales' domains extend :data:`PLOT_PAD` pixels beyond 0 and 1, more than
the largest radius, so no mark leaves the frame. Labels (a probe id, or how
many groups a mark holds) are placed by Vega's ``label`` transform, which
avoids the marks and the other labels and hides a label that has no free
place; hovering a mark always names its groups.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
from html import escape
from pathlib import Path
from typing import Any, Iterable

from .viewer_model import ZONES, ReportModel

ASSETS = Path(__file__).with_name("viewer_assets")

PLOT_SIZE = 460
"""Width and height of the plot area, in pixels."""
PLOT_PAD = 20
"""Pixels between rate 0 (or 1) and the plot's frame."""
RADIUS_MIN = 5.0
RADIUS_MAX = 17.0
MARK_GAP = 2.0
"""Pixels kept free between two marks."""
LABEL_CHARS = 24
LABEL_FONT = 11
"""Font size of the labels drawn, in pixels."""
LABEL_SLOT_FONT = 13.5
"""Font size the labels are placed with: a drawn line of text is ~1.2 em high."""

ZONE_COLOURS = {
    "ceiling": "#e08214",
    "window": "#1b9e47",
    "floor": "#8c8c8c",
    "adverse": "#d7301f",
    "mixed": "#dfb40a",
    "pending": "#6baed6",
    "several": "#7b5ea7",
    "undecided": "#bdbdbd",
    "unreadable": "#a6761d",
}
"""Point colours per zone (``several``: a merged mark whose groups differ;
``undecided``: only a calibration decision's, never a point's)."""

ZONE_TITLES = {
    "ceiling": "ceiling: control caught it every rep (too obvious)",
    "window": "usable window: control missed every rep, treatment caught it",
    "floor": "floor: neither arm caught it (too obscure)",
    "adverse": "adverse: control caught it more often than treatment",
    "mixed": "mixed: anything else",
    "pending": "pending: an arm has no graded rep",
    "several": "several zones in one merged mark",
    "undecided": "undecided: calibrate's max-starts-per-probe stopped it before a decision",
    "unreadable": "unreadable: most graded reps' answers had no field the output spec names",
}


def series_name(agent: str, model: str) -> str:
    return f"{agent} · {model}"


def radius(count: int) -> float:
    """A mark's radius in pixels for ``count`` groups: area grows with the count."""
    return min(RADIUS_MAX, RADIUS_MIN + 1.6 * math.sqrt(max(0, count - 1)))


def _pixel(rate: float) -> float:
    return PLOT_PAD + rate * (PLOT_SIZE - 2 * PLOT_PAD)


def domain_pad() -> float:
    """How far the scales' domains extend beyond [0, 1], in rate units."""
    return PLOT_PAD / (PLOT_SIZE - 2 * PLOT_PAD)


class _Cluster:
    __slots__ = ("members", "x", "y", "count")

    def __init__(self, members: list[dict[str, Any]], x: float, y: float) -> None:
        self.members = members
        self.x, self.y = x, y
        self.count = len(members)

    @property
    def r(self) -> float:
        return radius(self.count)


def _merge_overlapping(clusters: list[_Cluster]) -> list[_Cluster]:
    """Merge marks closer than their radii plus :data:`MARK_GAP`, closest pair
    first, until no two overlap. Positions are in pixels; a merged mark sits at
    its members' count-weighted mean."""
    cell = 2 * RADIUS_MAX + MARK_GAP
    while True:
        grid: dict[tuple[int, int], list[int]] = {}
        for index, cluster in enumerate(clusters):
            grid.setdefault((int(cluster.x // cell), int(cluster.y // cell)), []).append(index)
        pairs = []
        for (gx, gy), indices in grid.items():
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    for j in grid.get((gx + dx, gy + dy), ()):
                        for i in indices:
                            if i < j:
                                a, b = clusters[i], clusters[j]
                                distance = math.hypot(a.x - b.x, a.y - b.y)
                                if distance < a.r + b.r + MARK_GAP:
                                    pairs.append((distance, i, j))
        if not pairs:
            return clusters
        pairs.sort()
        merged: set[int] = set()
        result = []
        for _distance, i, j in pairs:
            if i in merged or j in merged:
                continue
            merged.update((i, j))
            a, b = clusters[i], clusters[j]
            weight = a.count + b.count
            result.append(_Cluster(a.members + b.members, (a.x * a.count + b.x * b.count) / weight,
                                   (a.y * a.count + b.y * b.count) / weight))
        result.extend(c for k, c in enumerate(clusters) if k not in merged)
        result.sort(key=lambda c: (c.x, c.y))
        clusters = result


def _counts(arm: dict[str, Any]) -> str:
    return f"{arm['caught']}/{arm['reps']}"


def _tooltip(members: list[dict[str, Any]]) -> dict[str, str]:
    first = members[0]
    zones = sorted({g["zone"] for g in members})
    if len(members) == 1:
        tip = {"title": f"{first['probe']} v{first['version']}", "skill": first.get("skill") or "-"}
    else:
        tip = {"title": f"{len(members)} probe versions"}
    shapes = sorted({(_counts(g["arms"]["control"]), _counts(g["arms"]["treatment"])) for g in members})
    tip["control, treatment caught/reps"] = "; ".join(f"{c}, {t}" for c, t in shapes[:6]) + (
        f"; … ({len(shapes) - 6} more)" if len(shapes) > 6 else "")
    tip["zone"] = ", ".join(zones)
    if len(members) > 1:
        names = [f"{g['probe']} v{g['version']}" for g in members]
        tip["probes"] = ", ".join(names[:12]) + (f", … and {len(names) - 12} more" if len(names) > 12 else "")
        tip["click"] = "list them"
    else:
        tip["evidence"] = first["evidence"]["text"]
        tip["click"] = "open its detail"
    return tip


def _description(members: list[dict[str, Any]]) -> str:
    """What a screen reader says of a mark (its ``aria-label``)."""
    zones = ", ".join(sorted({g["zone"] for g in members}))
    if len(members) == 1:
        group = members[0]
        return (f"{group['probe']} v{group['version']}: control {_counts(group['arms']['control'])}, "
                f"treatment {_counts(group['arms']['treatment'])}, {zones}")
    return f"{len(members)} probe versions: {zones}"


def _label(members: list[dict[str, Any]]) -> str:
    if len(members) > 1:
        return f"{len(members)} probes"
    text = members[0]["probe"]
    return text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS - 1] + "…"


def plot_layout(groups: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The calibration plot's data: marks, error bars and what is not plotted,
    per agent and model (``series``; the one with most plotted groups is
    ``shown_first``). Deterministic for a given model."""
    by_series: dict[str, list[dict[str, Any]]] = {}
    unplotted: dict[str, int] = {}
    for group in groups:
        series = series_name(group["agent"], group["model"])
        by_series.setdefault(series, [])
        unplotted.setdefault(series, 0)
        control, treatment = group["arms"]["control"], group["arms"]["treatment"]
        if not control["reps"] or not treatment["reps"]:
            unplotted[series] += 1
            continue
        by_series[series].append(group)
    marks: list[dict[str, Any]] = []
    bars: list[dict[str, Any]] = []
    for series in sorted(by_series):
        at: dict[tuple[float, float], list[dict[str, Any]]] = {}
        for group in by_series[series]:
            at.setdefault((group["arms"]["control"]["rate"], group["arms"]["treatment"]["rate"]), []).append(group)
        clusters = [_Cluster(sorted(members, key=lambda g: (g["probe"], g["version"], g["key"])), _pixel(x), _pixel(y))
                    for (x, y), members in sorted(at.items())]
        for number, cluster in enumerate(_merge_overlapping(clusters)):
            span = PLOT_SIZE - 2 * PLOT_PAD
            cx, cy = (cluster.x - PLOT_PAD) / span, (cluster.y - PLOT_PAD) / span
            zones = {g["zone"] for g in cluster.members}
            mark_id = f"{len(marks)}"
            r = cluster.r
            marks.append({
                "id": mark_id, "series": series, "cx": cx, "cy": cy, "r": r, "size": (2 * r) ** 2,
                "count": cluster.count, "zone": zones.pop() if len(zones) == 1 else "several",
                "label": _label(cluster.members), "tooltip": _tooltip(cluster.members),
                "description": _description(cluster.members),
                "groups": [g["key"] for g in cluster.members],
            })
            seen: set[tuple[str, float, float]] = set()
            for group in cluster.members:
                for arm, axis in (("control", "x"), ("treatment", "y")):
                    low, high = group["arms"][arm]["wilson95"]
                    if (arm, low, high) in seen:
                        continue
                    seen.add((arm, low, high))
                    if axis == "x":
                        bars.append({"series": series, "mark": mark_id, "x": low, "x2": high, "y": cy, "y2": cy})
                    else:
                        bars.append({"series": series, "mark": mark_id, "x": cx, "x2": cx, "y": low, "y2": high})
    plotted = {s: len(g) for s, g in by_series.items()}
    shown_first = min(plotted, key=lambda s: (-plotted[s], s)) if plotted else ""
    return {"series": sorted(by_series), "marks": marks, "bars": bars, "unplotted": unplotted, "plotted": plotted,
            "shown_first": shown_first}


def calibration_spec(layout: dict[str, Any]) -> dict[str, Any]:
    """The Vega specification of the calibration plot (data included)."""
    pad = domain_pad()
    low, high = -pad, 1 + pad
    x = {"scale": "x", "field": "x"}
    y = {"scale": "y", "field": "y"}
    regions = [
        {"zone": "window", "x": low, "x2": pad, "y": pad, "y2": high, "title": ZONE_TITLES["window"]},
        {"zone": "floor", "x": low, "x2": pad, "y": low, "y2": pad, "title": ZONE_TITLES["floor"]},
        {"zone": "ceiling", "x": 1 - pad, "x2": high, "y": 1 - pad, "y2": high, "title": ZONE_TITLES["ceiling"]},
    ]
    in_series = [{"type": "filter", "expr": "datum.series === series"}]
    # a plotted group has graded reps in both arms, so it is never pending
    drawn = {m["zone"] for m in layout["marks"]}
    zones = ([z for z in ZONES if z != "pending"] + sorted(drawn - set(ZONES) - {"several"})
             + (["several"] if "several" in drawn else []))  # a zone of a newer model is drawn too
    return {
        "description": "Calibration plot: control catch rate against treatment catch rate per probe version",
        "width": PLOT_SIZE, "height": PLOT_SIZE, "autosize": "none",
        "padding": {"left": 64, "right": 200, "top": 12, "bottom": 52},
        "signals": [
            {"name": "series", "value": layout["shown_first"]},
            {"name": "hovered", "value": None,
             "on": [{"events": "@points:mouseover", "update": "datum.id"}, {"events": "@points:mouseout", "update": "null"}]},
        ],
        "data": [
            {"name": "regions_data", "values": regions},
            {"name": "adverse_data", "values": [{"x": low, "y": low}, {"x": high, "y": high}]},
            {"name": "bars_data", "values": layout["bars"], "transform": in_series},
            {"name": "marks_data", "values": layout["marks"], "transform": in_series},
        ],
        "scales": [
            {"name": "x", "type": "linear", "domain": [low, high], "range": "width", "nice": False, "zero": False},
            {"name": "y", "type": "linear", "domain": [low, high], "range": "height", "nice": False, "zero": False},
            {"name": "zone", "type": "ordinal", "domain": zones, "range": [ZONE_COLOURS.get(z, "#999999") for z in zones]},
            {"name": "zone_title", "type": "ordinal", "domain": zones, "range": [ZONE_TITLES.get(z, z) for z in zones]},
        ],
        "axes": [
            {"orient": "bottom", "scale": "x", "values": [0, 0.25, 0.5, 0.75, 1], "format": ".2~f", "grid": True,
             "gridOpacity": 0.35, "domain": False, "title": "control catch rate", "zindex": 0},
            {"orient": "left", "scale": "y", "values": [0, 0.25, 0.5, 0.75, 1], "format": ".2~f", "grid": True,
             "gridOpacity": 0.35, "domain": False, "title": "treatment catch rate", "zindex": 0},
        ],
        "legends": [{"fill": "zone", "title": "zone", "orient": "right", "symbolType": "circle",
                     "symbolStrokeColor": "#222", "symbolStrokeWidth": 1,
                     "encode": {"labels": {"update": {"tooltip": {"signal": "scale('zone_title', datum.value)"}}}}}],
        "marks": [
            {"type": "area", "name": "adverse-region", "from": {"data": "adverse_data"}, "interactive": False,
             "encode": {"enter": {**{"x": x, "y": y}, "y2": {"scale": "y", "value": low},
                                  "fill": {"scale": "zone", "value": "adverse"}, "fillOpacity": {"value": 0.12}}}},
            {"type": "rect", "name": "regions", "from": {"data": "regions_data"},
             "encode": {"enter": {"x": x, "x2": {"scale": "x", "field": "x2"}, "y": y, "y2": {"scale": "y", "field": "y2"},
                                  "fill": {"scale": "zone", "field": "zone"}, "fillOpacity": {"value": 0.18},
                                  "tooltip": {"field": "title"}}}},
            {"type": "rule", "name": "diagonal", "interactive": False,
             "encode": {"enter": {"x": {"scale": "x", "value": low}, "y": {"scale": "y", "value": low},
                                  "x2": {"scale": "x", "value": high}, "y2": {"scale": "y", "value": high},
                                  "stroke": {"value": "#777"}, "strokeDash": {"value": [4, 4]}}}},
            {"type": "rule", "name": "bars", "from": {"data": "bars_data"}, "interactive": False,
             "encode": {"update": {"x": x, "x2": {"scale": "x", "field": "x2"}, "y": y, "y2": {"scale": "y", "field": "y2"},
                                   "stroke": {"value": "#333"},
                                   "strokeOpacity": {"signal": "datum.mark === hovered ? 0.95 : 0.12"},
                                   "strokeWidth": {"signal": "datum.mark === hovered ? 2.5 : 1"}}}},
            {"type": "symbol", "name": "points", "from": {"data": "marks_data"},
             "encode": {"update": {"x": {"scale": "x", "field": "cx"}, "y": {"scale": "y", "field": "cy"},
                                   "size": {"field": "size"}, "shape": {"value": "circle"},
                                   "fill": {"scale": "zone", "field": "zone"}, "fillOpacity": {"value": 0.9},
                                   "stroke": {"value": "#1a1a1a"}, "strokeWidth": {"value": 1},
                                   "tooltip": {"field": "tooltip"}, "cursor": {"value": "pointer"},
                                   "description": {"field": "description"}},
                        "hover": {"strokeWidth": {"value": 2.5}}}},
            # Vega's label transform reserves each label a box of its font size in height, while the DOM
            # draws a line of text ~1.2 em high: labels are placed with a larger font (this transparent
            # mark) and drawn smaller from the same anchors, so that drawn labels keep clear of each other.
            {"type": "text", "name": "label-slots", "from": {"data": "points"}, "interactive": False,
             "encode": {"enter": {"text": {"field": "datum.label"}, "fontSize": {"value": LABEL_SLOT_FONT},
                                  "fill": {"value": "transparent"}}},
             "transform": [{"type": "label", "size": [PLOT_SIZE, PLOT_SIZE], "padding": 0,
                            "anchor": ["right", "left", "top", "bottom", "top-right", "top-left", "bottom-right", "bottom-left"],
                            "offset": [3, 3, 2, 2, 1, 1, 1, 1]}]},
            {"type": "text", "name": "labels", "from": {"data": "label-slots"},
             "encode": {"update": {"text": {"field": "text"}, "x": {"field": "x"}, "y": {"field": "y"},
                                   "align": {"field": "align"}, "baseline": {"field": "baseline"},
                                   "opacity": {"field": "opacity"}, "fontSize": {"value": LABEL_FONT},
                                   "fill": {"value": "#111"}, "tooltip": {"field": "datum.datum.tooltip"},
                                   "cursor": {"value": "pointer"}}}},
            {"type": "rect", "name": "frame", "interactive": False,
             "encode": {"enter": {"x": {"value": 0}, "y": {"value": 0}, "x2": {"signal": "width"}, "y2": {"signal": "height"},
                                  "fill": {"value": "transparent"}, "stroke": {"value": "#555"}}}},
        ],
    }


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def _inline_script(source: str, name: str) -> str:
    if "</script" in source.lower() or "<!--" in source:
        raise ValueError(f"{name}: cannot be inlined in a <script> element (it holds </script or <!--)")
    return f"<script>/* {name} */\n{source}\n</script>"


def encode_payload(data: Any) -> str:
    """``data`` as gzip-compressed, base64-encoded JSON (deterministic bytes)."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def decode_payload(text: str) -> Any:
    """The inverse of :func:`encode_payload` (for tests and tools)."""
    return json.loads(gzip.decompress(base64.b64decode(text)).decode("utf-8"))


def page_payload(model: ReportModel) -> dict[str, Any]:
    """What the page's script reads: the model, the plot's layout and its Vega spec."""
    layout = plot_layout(model["groups"])
    return {"model": model, "plot": {"series": layout["series"], "shown_first": layout["shown_first"],
                                     "unplotted": layout["unplotted"],
                                     "plotted": layout["plotted"], "marks": len(layout["marks"]),
                                     "spec": calibration_spec(layout)},
            "zones": [*ZONES, *sorted({g["zone"] for g in model["groups"]} - set(ZONES))],
            "zone_titles": ZONE_TITLES, "zone_colours": ZONE_COLOURS}


def render_html(model: ReportModel) -> str:
    """The report as one self-contained HTML page (see the module docstring)."""
    meta = model["meta"]
    title = f"skill-eval report: {meta['workspace']}"
    payload = encode_payload(page_payload(model))
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # Nothing is fetched: no source of any kind but this document and inline code.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' "
        "'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; connect-src data: blob:\">",
        f"<title>{escape(title)}</title>",
        f"<style>\n{_asset('viewer.css')}\n</style>",
        "</head>",
        "<body>",
        _asset("viewer.html"),
        f'<script type="application/octet-stream" id="payload" data-encoding="gzip+base64">{payload}</script>',
        _inline_script(_asset("vega.min.js"), "vega 6.4.0, BSD-3-Clause (see THIRD_PARTY_LICENSES.txt)"),
        _inline_script(_asset("vega-embed.min.js"), "vega-embed 7.3.0, BSD-3-Clause (see THIRD_PARTY_LICENSES.txt)"),
        _inline_script(_asset("viewer.js"), "skill-eval report viewer"),
        "</body>",
        "</html>",
        "",
    ])


def write_html(model: ReportModel, path: Path) -> int:
    """Write :func:`render_html` of ``model`` to ``path``; the bytes written."""
    data = render_html(model).encode("utf-8")
    Path(path).write_bytes(data)
    return len(data)
