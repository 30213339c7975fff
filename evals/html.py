"""``skill-eval report --html FILE``: one self-contained HTML page.

No script, no stylesheet or font from the network: inline CSS and inline SVG
only. The calibration plot puts each probe version at (control catch rate,
treatment catch rate), with Wilson 95% intervals as whiskers, over the zones of
the seed's diagram:

* floor — the corner where neither arm catches it ("too obscure");
* usable window — the left edge: control misses, treatment catches;
* ceiling — the corner where both arms catch it ("too obvious");
* adverse — below the diagonal: control catches more often than treatment.

Versions whose treatment arm has not run sit on a rail under the plot.
"""

from __future__ import annotations

import math
from html import escape

from .report import REPS_NOTE, Report, _arm_cell

ZONE_COLOURS = {
    "ceiling": "#f4b183",
    "window": "#a9d18e",
    "floor": "#bfbfbf",
    "adverse": "#f8a5a5",
    "mixed": "#ffe699",
    "pending": "#dae3f3",
}

SIZE = 440
MARGIN = 60
EDGE = 0.08  # the width of the shaded edge and corner zones, in rate units


def _x(rate: float) -> float:
    return MARGIN + rate * SIZE


def _y(rate: float) -> float:
    return MARGIN + (1 - rate) * SIZE


def _plot(report: Report) -> str:
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{SIZE + 2 * MARGIN + 170}" height="{SIZE + 2 * MARGIN + 50}" '
             f'role="img" aria-label="calibration plot: control vs treatment catch rate per probe version">']
    x0, y0, x1, y1 = _x(0), _y(0), _x(1), _y(1)
    parts.append(f'<rect x="{x0}" y="{y1}" width="{SIZE}" height="{SIZE}" fill="#fffbe8" stroke="#888"/>')
    # adverse: below the diagonal
    parts.append(f'<polygon points="{x0},{y0} {x1},{y0} {x1},{y1}" fill="{ZONE_COLOURS["adverse"]}" opacity="0.55">'
                 '<title>adverse: control catches more often than treatment</title></polygon>')
    # usable window: control 0, treatment > 0
    parts.append(f'<rect x="{x0}" y="{y1}" width="{EDGE * SIZE}" height="{(1 - EDGE) * SIZE}" '
                 f'fill="{ZONE_COLOURS["window"]}"><title>usable window: control misses, treatment catches</title></rect>')
    parts.append(f'<rect x="{x0}" y="{_y(EDGE)}" width="{EDGE * SIZE}" height="{EDGE * SIZE}" '
                 f'fill="{ZONE_COLOURS["floor"]}"><title>floor: neither arm catches it (too obscure)</title></rect>')
    parts.append(f'<rect x="{_x(1 - EDGE)}" y="{y1}" width="{EDGE * SIZE}" height="{EDGE * SIZE}" '
                 f'fill="{ZONE_COLOURS["ceiling"]}"><title>ceiling: both arms catch it (too obvious)</title></rect>')
    parts.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="#888" stroke-dasharray="4 4"/>')
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<text x="{_x(tick)}" y="{y0 + 18}" font-size="11" text-anchor="middle">{tick:g}</text>')
        parts.append(f'<text x="{x0 - 8}" y="{_y(tick) + 4}" font-size="11" text-anchor="end">{tick:g}</text>')
    parts.append(f'<text x="{x0 + SIZE / 2}" y="{y0 + 38}" font-size="13" text-anchor="middle">control catch rate</text>')
    parts.append(f'<text x="{x0 - 42}" y="{y1 + SIZE / 2}" font-size="13" text-anchor="middle" '
                 f'transform="rotate(-90 {x0 - 42} {y1 + SIZE / 2})">treatment catch rate</text>')
    parts.append(f'<text x="{x0 + 6}" y="{y1 + SIZE * 0.5}" font-size="11" transform="rotate(-90 {x0 + 12} {y1 + SIZE * 0.5})" '
                 f'text-anchor="middle">USABLE WINDOW</text>')
    parts.append(f'<text x="{x0 + 4}" y="{y0 - 6}" font-size="10">floor</text>')
    parts.append(f'<text x="{x1 - 4}" y="{y1 + 14}" font-size="10" text-anchor="end">ceiling</text>')
    parts.append(f'<text x="{_x(0.72)}" y="{_y(0.2)}" font-size="11" text-anchor="middle">adverse</text>')
    rail = y0 + 58
    parts.append(f'<line x1="{x0}" y1="{rail}" x2="{x1}" y2="{rail}" stroke="#aaa"/>')
    parts.append(f'<text x="{x1 + 8}" y="{rail + 4}" font-size="10">treatment not run</text>')
    seen: dict[tuple[float, float], int] = {}
    for number, row in enumerate(report.rows, 1):
        control, treatment = row.sample.arms["control"], row.sample.arms["treatment"]
        if not control.reps and not treatment.reps:
            continue
        cx = _x(control.rate if control.reps else 0.0)
        cy = _y(treatment.rate) if treatment.reps else rail
        count = seen.get((cx, cy), 0)
        seen[(cx, cy)] = count + 1
        if count:  # spread coincident points on a small spiral
            angle = count * 2.4
            cx += 7 * math.sqrt(count) * math.cos(angle)
            cy += 7 * math.sqrt(count) * math.sin(angle)
        colour = ZONE_COLOURS.get(row.sample.zone, "#999")
        label = escape(f"#{number} {row.sample.probe} v{row.sample.version}: {row.sample.zone}; "
                       f"control {_arm_cell(row, 'control')}; treatment {_arm_cell(row, 'treatment')}")
        if control.reps:
            low, high = control.interval
            parts.append(f'<line x1="{_x(low)}" y1="{cy}" x2="{_x(high)}" y2="{cy}" stroke="#555" stroke-width="1" opacity="0.6"/>')
        if treatment.reps:
            low, high = treatment.interval
            parts.append(f'<line x1="{cx}" y1="{_y(low)}" x2="{cx}" y2="{_y(high)}" stroke="#555" stroke-width="1" opacity="0.6"/>')
        parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="6" fill="{colour}" stroke="#222"><title>{label}</title></circle>')
        parts.append(f'<text x="{cx + 8:.1f}" y="{cy - 6:.1f}" font-size="10">{number}</text>')
    legend_x = x1 + 24
    for index, (zone, colour) in enumerate(ZONE_COLOURS.items()):
        y = y1 + 10 + index * 20
        parts.append(f'<rect x="{legend_x}" y="{y}" width="14" height="14" fill="{colour}" stroke="#666"/>')
        parts.append(f'<text x="{legend_x + 20}" y="{y + 11}" font-size="12">{zone}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _diagram(report: Report) -> str:
    """The seed's ceiling / usable window / floor diagram, with this report's counts."""
    counts = {zone: 0 for zone in ZONE_COLOURS}
    for row in report.rows:
        counts[row.sample.zone] = counts.get(row.sample.zone, 0) + 1
    cells = [
        ("ceiling", "too obvious", "both arms catch it"),
        ("window", "USABLE WINDOW", "control misses, treatment catches"),
        ("floor", "too obscure", "neither arm catches it"),
    ]
    width = 240
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * 3 + 20}" height="96" role="img" '
             'aria-label="ceiling, usable window and floor, with counts of probe versions">']
    for index, (zone, title, text) in enumerate(cells):
        x = 10 + index * width
        parts.append(f'<rect x="{x}" y="10" width="{width - 6}" height="70" rx="6" fill="{ZONE_COLOURS[zone]}" stroke="#666"/>')
        parts.append(f'<text x="{x + width / 2 - 3}" y="32" font-size="14" font-weight="bold" text-anchor="middle">{title}</text>')
        parts.append(f'<text x="{x + width / 2 - 3}" y="52" font-size="12" text-anchor="middle">{text}</text>')
        parts.append(f'<text x="{x + width / 2 - 3}" y="72" font-size="12" text-anchor="middle">'
                     f'{counts[zone]} probe version{"s" if counts[zone] != 1 else ""} ({zone})</text>')
    parts.append("</svg>")
    others = ", ".join(f"{counts[z]} {z}" for z in ("adverse", "mixed", "pending"))
    return "\n".join(parts) + f"<p>Outside the diagram: {escape(others)}.</p>"


def render_html(report: Report) -> str:
    rows = []
    for number, row in enumerate(report.rows, 1):
        sample = row.sample
        rows.append(
            "<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in (
                number, sample.probe, sample.version, sample.kind or "-", _arm_cell(row, "control"),
                _arm_cell(row, "treatment"), sample.zone, sample.starts, row.on_disk,
                "yes" if row.edited else "", sample.last_ended or "",
            )) + "</tr>"
        )
    cap = f" of max-starts {report.cap}" if report.cap is not None else " (no max-starts cap set)"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>skill-eval calibration report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1100px; }}
table {{ border-collapse: collapse; margin-top: 1em; }}
td, th {{ border: 1px solid #ccc; padding: 3px 8px; font-size: 13px; text-align: left; }}
th {{ background: #f0f0f0; }}
.note {{ background: #fff4d6; border-left: 4px solid #e0a800; padding: 0.6em 1em; }}
</style>
</head>
<body>
<h1>Calibration report</h1>
<p>Workspace: <code>{escape(str(report.root))}</code>. Starts on record: {report.starts}{escape(cap)}, failed and timed-out starts included.</p>
<p class="note">{escape(REPS_NOTE)}</p>
{_diagram(report)}
<h2>Control vs treatment, per probe version</h2>
{_plot(report)}
<table>
<tr><th>#</th><th>probe</th><th>v</th><th>kind</th><th>control</th><th>treatment</th><th>zone</th><th>starts</th><th>on disk</th><th>edited</th><th>last run</th></tr>
{chr(10).join(rows)}
</table>
<p>control/treatment: caught/reps [Wilson 95% interval]; "+N failed" are errors or timeouts: counted as starts, not graded.</p>
</body>
</html>
"""
