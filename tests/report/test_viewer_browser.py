"""The HTML report in real headless Chromium: a 500-probe report (plus a second
agent and model), checked the way a person would look at it.

Ground truth is the synthetic model the page was made from, never the page's
own data: the groups a mark stands for are found from the mark's position on
screen and the rates in the model; what a detail view shows is compared with
the model's starts. Screenshots are written for a person to look at (see
conftest.py for the folder).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest

from cdp_browser import screenshot_element, wait_for
from skill_eval.evals.viewer import domain_pad, write_html
from synthetic_report import SERIES, synthetic_model

TOLERANCE = 0.5
"""Pixels two boxes may share before they count as overlapping (antialiasing)."""


@pytest.fixture(scope="module")
def model() -> dict:
    return synthetic_model(500)


@pytest.fixture(scope="module")
def report_file(model, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    write_html(model, path)
    return path


@pytest.fixture(scope="module")
def page(browser, report_file):
    page = browser.page(1400, 1000)
    page.open(report_file.as_uri())
    assert page.evaluate("window.skillEvalReport.ready.then(() => true)", timeout=120)
    return page


@pytest.fixture(autouse=True)
def fresh_view(request):
    """Each test starts with the detail closed, no filter, the first series."""
    if "page" not in request.fixturenames:
        yield
        return
    page = request.getfixturevalue("page")
    page.evaluate("(() => { if (location.hash) history.pushState(null, '', location.pathname);"
                  " window.dispatchEvent(new HashChangeEvent('hashchange'));"
                  " document.getElementById('filter-reset').click(); window.scrollTo(0, 0); })()")
    select_series(page, series_names()[0])
    yield


def series_names() -> list[str]:
    return sorted(f"{agent} · {model}" for agent, model in SERIES)


def select_series(page, name: str) -> None:
    page.evaluate(f"(() => {{ const s = document.getElementById('series'); s.value = {json.dumps(name)};"
                  " s.dispatchEvent(new Event('change')); return window.skillEvalReport.state.view.runAsync().then(() => true); })()")


def set_filter(page, field: str, value: str) -> None:
    page.evaluate(f"(() => {{ const s = document.getElementById('filter-{field}'); s.value = {json.dumps(value)};"
                  " s.dispatchEvent(new Event('change')); })()")


def plot_geometry(page) -> dict:
    """Boxes of the plot's frame, points and visible labels, in page pixels, as the DOM lays them out."""
    return page.evaluate("""(() => {
      const box = e => { const b = e.getBoundingClientRect(); return {x: b.left, y: b.top, w: b.width, h: b.height}; };
      const svg = document.querySelector('#plot svg');
      return {
        frame: box(svg.querySelector('g.frame path')),
        points: Array.from(svg.querySelectorAll('g.points path')).map(p => Object.assign(box(p), {label: p.getAttribute('aria-label')})),
        labels: Array.from(svg.querySelectorAll('g.labels text'))
          .filter(t => t.getAttribute('opacity') !== '0' && t.textContent.trim())
          .map(t => Object.assign(box(t), {text: t.textContent})),
      };
    })()""")


def overlap(a: dict, b: dict) -> bool:
    return (min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"]) > TOLERANCE
            and min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"]) > TOLERANCE)


def inside(inner: dict, outer: dict) -> bool:
    return (inner["x"] >= outer["x"] - TOLERANCE and inner["y"] >= outer["y"] - TOLERANCE
            and inner["x"] + inner["w"] <= outer["x"] + outer["w"] + TOLERANCE
            and inner["y"] + inner["h"] <= outer["y"] + outer["h"] + TOLERANCE)


def circle(point: dict) -> tuple[float, float, float]:
    return point["x"] + point["w"] / 2, point["y"] + point["h"] / 2, point["w"] / 2


def rates_at(frame: dict, x: float, y: float) -> tuple[float, float]:
    pad = domain_pad()
    span = 1 + 2 * pad
    return (x - frame["x"]) / frame["w"] * span - pad, (frame["y"] + frame["h"] - y) / frame["h"] * span - pad


def groups_at(model: dict, series: str, frame: dict, point: dict) -> list[dict]:
    """The model's groups of ``series`` whose rates put them under ``point`` (an
    unmerged mark sits exactly at its groups' rates)."""
    cx, cy, _r = circle(point)
    pixel = frame["w"] / (1 + 2 * domain_pad())  # pixels per rate unit
    found = []
    for group in model["groups"]:
        control, treatment = group["arms"]["control"], group["arms"]["treatment"]
        if f"{group['agent']} · {group['model']}" != series or not control["reps"] or not treatment["reps"]:
            continue
        x, y = rates_at(frame, cx, cy)
        if abs(control["rate"] - x) * pixel < 1 and abs(treatment["rate"] - y) * pixel < 1:
            found.append(group)
    return found


def detail_state(page) -> dict:
    return page.evaluate("(() => { const d = document.getElementById('detail');"
                         " return {hidden: d.hidden, kind: d.dataset.kind, id: d.dataset.id,"
                         " title: document.getElementById('detail-title').textContent}; })()")


def center_of(page, selector_js: str) -> tuple[float, float]:
    box = page.evaluate(f"(() => {{ const e = {selector_js}; e.scrollIntoView({{block: 'center'}});"
                        " const b = e.getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; })()")
    return box[0], box[1]


# -- loading: offline, no errors --------------------------------------------------------


def test_page_loads_offline_without_errors(page, report_file, model, screenshots):
    assert page.requests == [report_file.as_uri()], "the page fetched something besides itself"
    assert page.problems == []
    assert page.evaluate("window.__pwned === undefined")
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed, link[href], script[src]').length") == 0
    assert page.evaluate("document.getElementById('load-error').hidden")
    assert page.evaluate("[vega.version, vegaEmbed.version]") == ["6.4.0", "7.3.0"]  # the vendored builds, unmodified
    page.screenshot(screenshots / "01-overview.png")
    page.screenshot(screenshots / "02-full-page.png", full_page=True)


def test_the_page_has_no_remote_reference(report_file):
    """Nothing in the file points at a network location (the vendored libraries included)."""
    text = report_file.read_text(encoding="utf-8")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", text)
    assert "<link" not in text


def test_a_page_that_fetches_is_caught(browser, report_file, tmp_path):
    """The offline check can fail: the same page with one remote image is caught."""
    html = report_file.read_text(encoding="utf-8").replace("<body>", '<body><img src="https://example.invalid/x.png">', 1)
    tainted = tmp_path / "tainted.html"
    tainted.write_text(html, encoding="utf-8")
    page = browser.page()
    try:
        page.open(tainted.as_uri())
        page.evaluate("window.skillEvalReport.ready.then(() => true)", timeout=120)
        assert page.requests != [tainted.as_uri()] or page.problems, "a remote image went unnoticed"
    finally:
        page.close()


# -- the zones ------------------------------------------------------------------------------


def test_zones_per_agent_and_model(page, model):
    shown = page.evaluate("""Array.from(document.querySelectorAll('#zones tbody tr')).map(r => [r.dataset.series,
        Object.fromEntries(Array.from(r.querySelectorAll('button.count')).map(b => [b.dataset.zone, Number(b.textContent)]))])""")
    expected: dict[str, Counter] = {}
    for group in model["groups"]:
        expected.setdefault(f"{group['agent']} · {group['model']}", Counter())[group["zone"]] += 1
    assert {series: {z: n for z, n in counts.items() if n} for series, counts in shown} == \
        {series: dict(counts) for series, counts in expected.items()}
    # a count filters the table to exactly those groups
    x, y = center_of(page, "document.querySelector('#zones tbody tr:nth-child(2) button[data-zone=\"window\"]')")
    page.click(x, y)
    keys = page.evaluate("Array.from(document.querySelectorAll('#groups tbody tr')).map(r => r.dataset.key)")
    agent, model_name = SERIES[1]
    assert sorted(keys) == sorted(g["key"] for g in model["groups"]
                                  if g["agent"] == agent and g["model"] == model_name and g["zone"] == "window")


# -- the calibration plot ---------------------------------------------------------------------


@pytest.mark.parametrize("series_index", [0, 1])
def test_points_and_labels_stay_in_the_frame_and_apart(page, model, screenshots, series_index):
    check_plot_geometry(page, model, series_names()[series_index], screenshots / f"03-plot-series-{series_index + 1}.png")


def test_many_distinct_rates_stay_apart(browser, screenshots, tmp_path):
    """Reps from 1 to 30 per arm: ~150 distinct rate pairs, some closer than a
    mark's diameter (merged into one mark)."""
    model = synthetic_model(500, seed=5, reps_weights=[(n, 1) for n in range(1, 31)])
    path = tmp_path / "stress.html"
    write_html(model, path)
    page = browser.page(1400, 1000)
    try:
        page.open(path.as_uri())
        assert page.evaluate("window.skillEvalReport.ready.then(() => true)", timeout=120)
        merged = page.evaluate("Array.from(window.skillEvalReport.state.marks.values()).filter(m => m.zone === 'several').length")
        assert merged > 0, "this model was meant to hold marks merged across zones"
        for index, series in enumerate(series_names()):
            select_series(page, series)
            check_plot_geometry(page, model, series, screenshots / f"09-plot-many-rates-{index + 1}.png", exact=False)
        assert page.problems == []
    finally:
        page.close()


def check_plot_geometry(page, model: dict, series: str, screenshot: Path, exact: bool = True) -> None:
    """Points and visible labels inside the frame and apart; every plotted group
    under one point; with ``exact``, each single-group point at its group's rates."""
    select_series(page, series)
    geometry = plot_geometry(page)
    frame, points, labels = geometry["frame"], geometry["points"], geometry["labels"]
    plotted = [g for g in model["groups"] if f"{g['agent']} · {g['model']}" == series
               and g["arms"]["control"]["reps"] and g["arms"]["treatment"]["reps"]]
    assert points, "no point drawn"
    assert len(labels) >= min(10, len(points)), f"only {len(labels)} labels shown for {len(points)} points"
    for point in points:
        assert inside(point, frame), f"point {point['label']!r} leaves the plot frame: {point} vs {frame}"
    for a, b in itertools.combinations(points, 2):
        (ax, ay, ar), (bx, by, br) = circle(a), circle(b)
        assert math.hypot(ax - bx, ay - by) >= ar + br - TOLERANCE, f"points {a['label']!r} and {b['label']!r} overlap"
    for label in labels:
        assert inside(label, frame), f"label {label['text']!r} leaves the plot frame"
        for point in points:
            x, y, r = circle(point)
            nearest_x = min(max(x, label["x"]), label["x"] + label["w"])
            nearest_y = min(max(y, label["y"]), label["y"] + label["h"])
            assert math.hypot(x - nearest_x, y - nearest_y) >= r - 1.5, \
                f"label {label['text']!r} covers point {point['label']!r}"
    for a, b in itertools.combinations(labels, 2):
        assert not overlap(a, b), f"labels {a['text']!r} and {b['text']!r} overlap"
    # every plotted group is under exactly one point; a point's groups are the model's groups at its rates
    counted = 0
    for point in points:
        counted += int(re.match(r"(\d+) probe versions|.*", point["label"]).group(1) or 1)
    assert counted == len(plotted)
    if exact:
        for point in (p for p in points if " probe versions" not in p["label"]):
            under = groups_at(model, series, frame, point)
            assert [f"{g['probe']} v{g['version']}" for g in under] == [point["label"].split(": control")[0]]
    screenshot_element(page, "#plot", screenshot)


def test_hover_names_the_probes(page, model, screenshots):
    series = series_names()[0]
    page.evaluate("document.getElementById('plot').scrollIntoView({block: 'center'})")
    geometry = plot_geometry(page)
    crowded = max(geometry["points"], key=lambda p: p["w"])
    members = groups_at(model, series, geometry["frame"], crowded)
    assert len(members) > 1
    x, y, _r = circle(crowded)
    page.mouse("mouseMoved", x, y)
    assert wait_for(page, "document.querySelector('#vg-tooltip-element.visible')")
    text = page.evaluate("document.getElementById('vg-tooltip-element').textContent")
    assert f"{len(members)} probe versions" in text
    first = sorted(members, key=lambda g: (g["probe"], g["version"], g["key"]))[0]
    assert f"{first['probe']} v{first['version']}" in text
    page.screenshot(screenshots / "04-plot-hover.png")
    # a point of one probe names it
    single = next(p for p in geometry["points"] if " probe versions" not in p["label"])
    x, y, _r = circle(single)
    page.mouse("mouseMoved", x, y)
    probe = single["label"].split(": control")[0]
    assert wait_for(page, f"document.getElementById('vg-tooltip-element').textContent.includes({json.dumps(probe)})")
    page.mouse("mouseMoved", 5, 5)


def test_clicking_a_point_opens_its_detail(page, model, screenshots):
    series = series_names()[0]
    geometry = plot_geometry(page)
    single = next(p for p in geometry["points"] if " probe versions" not in p["label"])
    (group,) = groups_at(model, series, geometry["frame"], single)
    x, y, _r = circle(single)
    page.click(x, y)
    assert wait_for(page, "!document.getElementById('detail').hidden")
    state = detail_state(page)
    assert (state["kind"], state["id"]) == ("group", group["key"])
    assert state["title"].startswith(f"{group['probe']} v{group['version']}")
    page.screenshot(screenshots / "05-detail-from-plot.png")


def test_clicking_a_crowded_point_lists_its_probes(page, model, screenshots):
    series = series_names()[0]
    geometry = plot_geometry(page)
    crowded = max(geometry["points"], key=lambda p: p["w"])
    members = groups_at(model, series, geometry["frame"], crowded)
    x, y, _r = circle(crowded)
    page.click(x, y)
    assert wait_for(page, "!document.getElementById('detail').hidden")
    assert detail_state(page)["kind"] == "mark"
    listed = page.evaluate("Array.from(document.querySelectorAll('#detail-body tbody tr')).map(r => r.dataset.key)")
    assert sorted(listed) == sorted(g["key"] for g in members)
    page.screenshot(screenshots / "06-list-from-plot.png")
    # and one of them opens from the list
    x, y = center_of(page, "document.querySelector('#detail-body tbody tr:nth-child(3) a')")
    page.click(x, y)
    assert wait_for(page, "document.getElementById('detail').dataset.kind === 'group'")
    assert detail_state(page)["id"] == listed[2]


# -- the table --------------------------------------------------------------------------------


def table_keys(page) -> list[str]:
    return page.evaluate("Array.from(document.querySelectorAll('#groups tbody tr')).map(r => r.dataset.key)")


def test_table_sorts_by_a_column(page, model):
    by_key = {g["key"]: g for g in model["groups"]}
    assert len(table_keys(page)) == len(model["groups"])
    x, y = center_of(page, "document.querySelector('#groups th[data-column=\"control\"] button')")
    page.click(x, y)
    rates = [by_key[k]["arms"]["control"]["rate"] for k in table_keys(page)]
    rates = [-1 if r is None else r for r in rates]
    assert rates == sorted(rates)
    x, y = center_of(page, "document.querySelector('#groups th[data-column=\"control\"] button')")
    page.click(x, y)
    rates = [by_key[k]["arms"]["control"]["rate"] for k in table_keys(page)]
    assert [-1 if r is None else r for r in rates] == sorted((-1 if r is None else r for r in rates), reverse=True)
    assert page.evaluate("document.querySelector('#groups th[data-column=\"control\"]').getAttribute('aria-sort')") == "descending"


def test_table_filters(page, model, screenshots):
    groups = model["groups"]
    set_filter(page, "zone", "adverse")
    assert sorted(table_keys(page)) == sorted(g["key"] for g in groups if g["zone"] == "adverse")
    set_filter(page, "skill", "verify-closeout")
    set_filter(page, "agent", "codex")
    assert sorted(table_keys(page)) == sorted(g["key"] for g in groups if g["zone"] == "adverse"
                                              and g["skill"] == "verify-closeout" and g["agent"] == "codex")
    page.evaluate("document.getElementById('filter-reset').click()")
    set_filter(page, "model", SERIES[0][1])
    set_filter(page, "flag", "edited")
    assert sorted(table_keys(page)) == sorted(g["key"] for g in groups if g["edited_without_bump"] and g["model"] == SERIES[0][1])
    set_filter(page, "flag", "frozen")
    assert sorted(table_keys(page)) == sorted(g["key"] for g in groups if g["frozen"] and g["model"] == SERIES[0][1])
    set_filter(page, "flag", "unfrozen")
    assert sorted(table_keys(page)) == sorted(g["key"] for g in groups if not g["frozen"] and g["model"] == SERIES[0][1])
    page.evaluate("(() => { const t = document.getElementById('filter-text'); t.value = 'LEDGER';"
                  " t.dispatchEvent(new Event('input')); })()")
    assert sorted(table_keys(page)) == sorted(g["key"] for g in groups if not g["frozen"] and g["model"] == SERIES[0][1]
                                              and "ledger" in g["probe"])
    screenshot_element(page, "#table-section", screenshots / "07-table-filtered.png")


def test_clicking_a_row_opens_its_detail(page, model):
    set_filter(page, "zone", "floor")
    key = table_keys(page)[4]
    x, y = center_of(page, f"document.querySelector('#groups tbody tr[data-key=\"{key}\"] td:nth-child(7)')")
    page.click(x, y)
    assert wait_for(page, "!document.getElementById('detail').hidden")
    assert detail_state(page)["id"] == key
    page.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape'}))")
    assert detail_state(page)["hidden"]


# -- the detail view --------------------------------------------------------------------------


def open_detail(page, key: str) -> list[dict]:
    page.evaluate(f"location.hash = 'g={key}'")
    assert wait_for(page, f"document.getElementById('detail').dataset.id === {json.dumps(key)} && !document.getElementById('detail').hidden")
    return page.evaluate("""Array.from(document.querySelectorAll('#detail-body article.start')).map(a => ({
        head: a.querySelector('.start-head').textContent,
        answer: a.querySelector('pre.answer') ? a.querySelector('pre.answer').textContent : null,
        stderr: a.querySelector('pre.stderr') ? a.querySelector('pre.stderr').textContent : null,
        error: a.querySelector('p.failed') ? a.querySelector('p.failed').textContent : null,
        grading: Array.from(a.querySelectorAll('ul.grading > li')).map(li => li.textContent),
    }))""")


def test_detail_shows_every_start(page, model, screenshots):
    # a group with failed starts, an answer holding HTML, two defects and lint findings
    group = next(g for g in model["groups"] if any(s["status"] != "ok" for s in g["starts"])
                 and any(s["answer"] and "</script>" in s["answer"]["text"] for s in g["starts"]))
    shown = open_detail(page, group["key"])
    assert len(shown) == len(group["starts"])
    for start, view in zip(group["starts"], shown):
        assert f"{start['arm']} · rep {start['rep']}" in view["head"]
        assert f"duration {start['duration_s']:.1f} s" in view["head"]
        assert f"tokens {start['tokens_in']:,} in / {start['tokens_out']:,} out" in view["head"]
        assert f"cost ${start['cost_usd']:.4f}" in view["head"]
        if start["status"] == "ok":
            assert view["answer"] == start["answer"]["text"]
            assert ("caught" if start["passed"] else "missed") in view["head"]
            assert len(view["grading"]) == len(start["grading"])
            for defect, text in zip(start["grading"], view["grading"]):
                assert text.startswith(defect["defect"])
                for expectation in defect["expectations"]:
                    assert expectation["reason"] in text
        else:
            assert start["status"] in view["head"]
            assert start["error"] in view["error"]
            assert view["stderr"] == (start["stderr_tail"] or None)
    assert page.evaluate("window.__pwned === undefined && document.querySelectorAll('#detail img, #detail script').length === 0")
    findings = page.evaluate("Array.from(document.querySelectorAll('#detail-body ul.findings li')).map(li => li.textContent)")
    expected = group["lint"]["findings"] if group["lint"] else []
    assert len(findings) == len(expected)
    for finding, text in zip(expected, findings):
        assert finding["code"] in text and finding["message"] in text
    page.screenshot(screenshots / "08-detail-failed-and-hostile.png")
    # a long answer is shown capped, and says so
    long = next(g for g in model["groups"] if any(s["answer"] and s["answer"]["truncated"] for s in g["starts"]))
    open_detail(page, long["key"])
    assert page.evaluate("Array.from(document.querySelectorAll('#detail summary')).some(s => s.textContent.includes('first 4,000 shown'))")
    # lint not available is said so
    no_lint = next(g for g in model["groups"] if g["lint"] is None)
    open_detail(page, no_lint["key"])
    assert page.evaluate("document.getElementById('detail-body').textContent.includes('Not available')")
    assert page.problems == []


def calibration_shown(page) -> dict | None:
    """The detail's calibration section as the page shows it (null when there is none)."""
    return page.evaluate("""(() => {
      const section = document.querySelector('#detail-body section.calibration');
      if (!section) return null;
      const fact = name => { const e = section.querySelector(`[data-fact="${name}"]`); return e ? e.textContent : null; };
      return {zone: fact('zone'), starts: fact('starts'), rule: fact('rule'), control: fact('control'),
              reason: fact('reason'), discriminator: fact('discriminator'),
              hash: section.querySelector('[data-fact="rule"] code').textContent, text: section.textContent,
              facts: document.querySelector('#detail-body dl.facts').textContent};
    })()""")


def rule_text(rule: dict) -> str:
    cap = rule["max-starts-per-probe"]
    return (f"reps {rule['reps']}, {rule['caught-in-every-rep']}, "
            + ("no per-probe cap" if cap is None else f"max-starts-per-probe {cap}"))


def check_calibration_shown(page, group: dict) -> dict:
    """The detail of ``group`` (open) shows its decision: zone, after which arm,
    the starts it cost, the rule and its full hash, and what its zone asks for."""
    decision = group["calibration"]
    shown = calibration_shown(page)
    assert shown is not None, f"{group['probe']}: no calibration section"
    assert shown["zone"] == decision["zone"] + (f" after the {decision['decided_after']}" if decision["decided_after"] else "")
    assert shown["starts"].startswith(f"{decision['starts']} start(s)")
    if decision["version_starts"] != decision["starts"]:
        assert f"{decision['version_starts']} for the probe version" in shown["starts"]
    assert shown["rule"] == f"{rule_text(decision['calibration_rule'])} · sha256 {decision['calibration_rule_sha256']}"
    assert shown["hash"] == decision["calibration_rule_sha256"]
    assert (shown["control"] is not None) == (decision["zone"] == "ceiling")
    assert ("keep as a regression/cost control" in shown["facts"]) == (decision["zone"] == "ceiling")
    assert shown["reason"] == decision["reason"]
    if decision["discriminator"]:
        for defect, paths in decision["discriminator"]["transcripts_catching"].items():
            expected = (f"known transcripts catching {defect}: {', '.join(paths)}" if paths
                        else f"no known transcript covers {defect}")
            assert expected in shown["discriminator"]
    else:
        assert shown["discriminator"] is None
    return shown


def test_detail_shows_the_calibration_decision(page, model, screenshots):
    calibrated = [g for g in model["groups"] if g["calibration"]]
    picks = {
        "ceiling": next(g for g in calibrated if g["calibration"]["zone"] == "ceiling"),
        "floor-covered": next(g for g in calibrated if g["calibration"]["discriminator"]
                              and all(g["calibration"]["discriminator"]["transcripts_catching"].values())),
        "floor-uncovered": next(g for g in calibrated if g["calibration"]["discriminator"]
                                and not any(g["calibration"]["discriminator"]["transcripts_catching"].values())),
        "undecided": next(g for g in calibrated if g["calibration"]["zone"] == "undecided"),
        "window": next(g for g in calibrated if g["calibration"]["zone"] == "window"
                       and g["calibration"]["version_starts"] != g["calibration"]["starts"]),
    }
    for name, group in picks.items():
        open_detail(page, group["key"])
        check_calibration_shown(page, group)
        if name in ("ceiling", "floor-covered"):
            screenshot_element(page, "#detail", screenshots / f"11-detail-calibration-{name}.png")
    # a ceiling without a decision is still noted as a regression/cost control; no calibration section
    plain = next(g for g in model["groups"] if not g["calibration"] and g["zone"] == "ceiling")
    open_detail(page, plain["key"])
    assert calibration_shown(page) is None
    assert "keep as a regression/cost control" in page.evaluate("document.querySelector('#detail-body dl.facts').textContent")
    plain = next(g for g in model["groups"] if not g["calibration"] and g["zone"] == "window")
    open_detail(page, plain["key"])
    assert calibration_shown(page) is None
    assert "regression/cost control" not in page.evaluate("document.getElementById('detail-body').textContent")
    assert page.problems == []


def test_table_filters_calibrated_groups_and_regression_controls(page, model):
    groups = model["groups"]
    set_filter(page, "flag", "calibrated")
    assert sorted(table_keys(page)) == sorted(g["key"] for g in groups if g["calibration"])
    chips = page.evaluate("Array.from(document.querySelectorAll('#groups tbody tr')).map(r => "
                          "[r.dataset.key, r.querySelector('.flag.calibrated').textContent])")
    by_key = {g["key"]: g for g in groups}
    assert all(text == f"calibrated: {by_key[key]['calibration']['zone']}" for key, text in chips)
    set_filter(page, "flag", "control")
    assert sorted(table_keys(page)) == sorted(
        g["key"] for g in groups if (g["calibration"]["zone"] if g["calibration"] else g["zone"]) == "ceiling")


# -- from real runs, and from none ---------------------------------------------------------------


def test_a_report_of_real_runs(browser, tmp_path, screenshots):
    """The real runner with real subprocess agents, build_model, the page: every
    start's answer as the agent wrote it."""
    from report_helpers import Suite, agent
    from skill_eval.evals.cli import run_main
    from skill_eval.evals.probes import Workspace
    from skill_eval.evals.viewer_build import build_model

    suite = Suite(tmp_path)
    suite.configure({"rule": {"command": agent("rule_agent.py"), "model": "m1"},
                     "crash": {"command": agent("crash_agent.py")}})
    assert run_main([str(suite.root), "--no-progress", "--skip-check", "--agent", "rule"]) == 0
    assert run_main([str(suite.root), "--no-progress", "--skip-check", "--agent", "crash", "--arms", "control",
                     "--reps", "1"]) == 1
    model = build_model(Workspace.open([suite.root]))
    path = tmp_path / "real.html"
    write_html(model, path)
    page = browser.page(1400, 1000)
    try:
        page.open(path.as_uri())
        assert page.evaluate("window.skillEvalReport.ready.then(() => true)", timeout=120)
        # the plot first shows the agent and model with most versions drawn (crash has none)
        assert page.evaluate("document.getElementById('series').value") == "rule · m1"
        assert page.evaluate("document.querySelectorAll('#plot g.points path').length") == 2
        assert {g["model"] for g in model["groups"] if g["agent"] == "crash"} == {"(agent default)"}
        records = {r["start_id"]: r for r in suite.records()}
        for group in model["groups"]:
            shown = open_detail(page, group["key"])
            assert len(shown) == len(group["starts"])
            for start, view in zip(group["starts"], shown):
                record = records[start["start_id"]]
                if record.get("answer_file"):
                    assert view["answer"] == (suite.runs / record["answer_file"]).read_text(encoding="utf-8")
                if record["status"] == "error":
                    assert "boom" in view["stderr"]
            # beside the starts, the probe as it is on disk: its artifact, each quote marked, each caught_when
            folder = suite.probe(group["probe"])
            written = json.loads((folder / "probe.json").read_text(encoding="utf-8"))
            pane = page.evaluate("""(() => { const pane = document.querySelector('#detail-body .probe-pane');
              return {artifact: pane.querySelector('pre.artifact').textContent,
                      marked: Array.from(pane.querySelectorAll('mark.quote')).map(m => [m.dataset.defect, m.textContent]),
                      caught_when: Array.from(pane.querySelectorAll('[data-fact="caught_when"]')).map(c => JSON.parse(c.textContent))}; })()""")
            assert pane["artifact"] == (folder / "question.md").read_text(encoding="utf-8")
            assert pane["marked"] == [[d["id"], d["quote"]] for d in written["defects"]]
            assert pane["caught_when"] == [d["caught_when"] for d in written["defects"]]
        page.screenshot(screenshots / "10-real-run-detail.png")
        # a line the agent wrote, searched for, opens the detail of its start
        page.press("Escape", key_code=27)
        assert wait_for(page, "document.getElementById('detail').hidden")
        record = next(r for r in records.values() if r.get("answer_file") and r["arm"] == "treatment")
        line = next(text for text in (suite.runs / record["answer_file"]).read_text(encoding="utf-8").splitlines() if text.strip())
        page.evaluate(f"(() => {{ const box = document.getElementById('filter-search'); box.value = {json.dumps(line.swapcase())};"
                      " box.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'})); })()")
        link = f"#search-hits li[data-start=\"{record['start_id']}\"] a"
        x, y = center_of(page, f"document.querySelector({json.dumps(link)})")
        page.click(x, y)
        assert wait_for(page, "document.querySelector('#detail-body article.start.focused') !== null")
        assert page.evaluate("document.querySelector('#detail-body article.start.focused').dataset.start") == record["start_id"]
        assert page.problems == [] and page.requests == [path.as_uri()]
    finally:
        page.close()


def test_a_report_of_a_calibration(browser, tmp_path, screenshots):
    """``skill-eval calibrate`` with real subprocess agents on a ceiling, a
    floor and a window case, then the page: each group's detail shows the
    decision record of the runs file (read here from its lines), and the
    starts it cost are the starts the agent itself logged."""
    import shutil

    from report_helpers import Suite, agent
    from skill_eval.evals.cli import calibrate_main
    from skill_eval.evals.probes import Workspace
    from skill_eval.evals.viewer_build import build_model

    suite = Suite(tmp_path)
    markers = {"ceiling": "ceiling export", "floor": "floor export", "window": "window export"}
    source = suite.probe("euphemized-coverage")
    for name, marker in markers.items():  # copies of one probe, told apart by a marker in their artifacts
        target = suite.probe(f"{name}-case")
        shutil.copytree(source, target)
        (target / "probe.json").write_text((target / "probe.json").read_text().replace("euphemized-coverage", f"{name}-case"))
        (target / "question.md").write_text((target / "question.md").read_text().replace("export job", f"{marker} job"))
    shutil.rmtree(source)
    shutil.rmtree(suite.probe("two-gaps"))
    log = tmp_path / "agent.log"
    suite.configure({"calib": {"command": agent("calib_agent.py", "--log", str(log), "--markers", ",".join(markers.values()),
                                               "--control", markers["ceiling"], "--treatment", markers["ceiling"],
                                               "--treatment", markers["window"]), "model": "m1"}})
    assert calibrate_main([str(suite.root), "--no-progress"]) == 0
    decided = {line["probe"]: line for line in suite.lines() if line.get("type") == "decision"}
    assert {probe: d["zone"] for probe, d in decided.items()} == {
        "ceiling-case": "ceiling", "floor-case": "floor", "window-case": "window"}
    logged = Counter(line.split()[3] for line in log.read_text().splitlines())  # starts per case, the agent's count
    model = build_model(Workspace.open([suite.root]))
    path = tmp_path / "calibration.html"
    write_html(model, path)
    page = browser.page(1400, 1000)
    try:
        page.open(path.as_uri())
        assert page.evaluate("window.skillEvalReport.ready.then(() => true)", timeout=120)
        assert len(model["groups"]) == 3
        for group in model["groups"]:
            decision = decided[group["probe"]]
            shown = open_detail(page, group["key"])
            assert len(shown) == logged[group["probe"].split("-")[0]] == decision["starts"]
            view = calibration_shown(page)
            after = f" after the {decision['decided_after']}"
            assert view["zone"] == decision["zone"] + after
            assert view["starts"].startswith(f"{decision['starts']} start(s)")
            assert view["rule"] == (f"{rule_text(decision['calibration_rule'])} · sha256 "
                                    f"{decision['calibration_rule_sha256']}")
            assert decision["calibration_rule"] == {"reps": 2, "caught-in-every-rep": "all-reps", "max-starts-per-probe": None}
            assert ("keep as a regression/cost control" in view["facts"]) == (decision["zone"] == "ceiling")
            if decision["zone"] == "floor":
                paths = decision["discriminator"]["transcripts_catching"]["D1"]
                assert paths and f"known transcripts catching D1: {', '.join(paths)}" in view["discriminator"]
                page.screenshot(screenshots / "12-real-calibration-floor.png")
        assert page.problems == [] and page.requests == [path.as_uri()]
    finally:
        page.close()


def test_a_report_without_runs(browser, tmp_path):
    from skill_eval.evals.viewer_model import ANSWER_CAP, SCHEMA_ID

    model = {"schema": SCHEMA_ID, "groups": [], "meta": {
        "workspace": str(tmp_path), "generated": "2025-01-01T00:00:00.000Z", "tool": "skill-eval", "note": "No graded reps yet.",
        "starts_on_record": 0, "torn_lines": 0, "max_starts": None, "alpha": 0.05, "answer_cap": ANSWER_CAP,
        "filters": {"paths": [], "probes": [], "agent": None}}}
    path = tmp_path / "empty.html"
    write_html(model, path)
    page = browser.page()
    try:
        page.open(path.as_uri())
        assert page.evaluate("window.skillEvalReport.ready.then(() => true)", timeout=120)
        assert "No runs on record" in page.evaluate("document.getElementById('plot-caption').textContent")
        assert page.evaluate("document.getElementById('filter-count').textContent") == "showing 0 of 0"
        assert page.problems == []
    finally:
        page.close()
