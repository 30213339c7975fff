"""The viewer without a browser: the plot's layout in pixels, and the page's
make-up (everything inline, the model round-trips through the payload)."""

from __future__ import annotations

import itertools
import math
import random
import re

from hypothesis import given, settings, strategies as st

from skill_eval.evals.viewer import (PLOT_PAD, PLOT_SIZE, decode_payload, domain_pad, page_payload, plot_layout,
                                     render_html)
from skill_eval.evals.viewer_model import validate
from skill_eval.evals.stats import wilson
from synthetic_report import synthetic_model


def group(index: int, control: tuple[int, int], treatment: tuple[int, int], series: int = 0) -> dict:
    def arm(caught: int, reps: int) -> dict:
        return {"reps": reps, "caught": caught, "rate": caught / reps if reps else None,
                "wilson95": list(wilson(caught, reps)) if reps else None}
    return {"key": f"{index:016x}", "probe": f"p{index}", "version": 1, "skill": "s", "agent": f"a{series}", "model": "m",
            "zone": "mixed", "arms": {"control": arm(*control), "treatment": arm(*treatment)},
            "evidence": {"text": "-"}}


def pixels(mark: dict) -> tuple[float, float]:
    span = PLOT_SIZE - 2 * PLOT_PAD
    return PLOT_PAD + mark["cx"] * span, PLOT_PAD + mark["cy"] * span


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 400), st.integers(1, 40))
def test_marks_never_overlap_nor_leave_the_frame(seed, count, most_reps):
    """Random samples of up to 40 reps an arm: many distinct rates, some closer than a mark."""
    rng = random.Random(seed)

    def arm() -> tuple[int, int]:
        reps = rng.randint(1, most_reps)
        return rng.randint(0, reps), reps

    groups = [group(i, arm(), arm(), rng.randint(0, 1)) for i in range(count)]
    layout = plot_layout(groups)
    assert sum(m["count"] for m in layout["marks"]) == len(groups)
    assert sorted(k for m in layout["marks"] for k in m["groups"]) == sorted(g["key"] for g in groups)
    for mark in layout["marks"]:
        x, y = pixels(mark)
        r = mark["r"]
        assert r <= PLOT_PAD and r <= x <= PLOT_SIZE - r and r <= y <= PLOT_SIZE - r
        assert mark["size"] == (2 * r) ** 2
    by_series: dict[str, list[dict]] = {}
    for mark in layout["marks"]:
        by_series.setdefault(mark["series"], []).append(mark)
    for marks in by_series.values():
        for a, b in itertools.combinations(marks, 2):
            (ax, ay), (bx, by) = pixels(a), pixels(b)
            assert math.hypot(ax - bx, ay - by) >= a["r"] + b["r"], (a, b)


def test_a_lone_mark_sits_at_its_exact_rates():
    groups = [group(0, (1, 2), (2, 2)), group(1, (1, 2), (2, 2)), group(2, (0, 3), (1, 3))]
    layout = plot_layout(groups)
    assert {(m["cx"], m["cy"], m["count"]) for m in layout["marks"]} == {(0.5, 1.0, 2), (0.0, 1 / 3, 1)}
    # one bar per distinct interval and arm of a mark
    assert len([b for b in layout["bars"] if b["mark"] == layout["marks"][0]["id"]]) == 2


def test_groups_without_a_graded_arm_are_counted_not_drawn():
    groups = [group(0, (1, 2), (0, 0)), group(1, (0, 2), (1, 2))]
    layout = plot_layout(groups)
    assert layout["plotted"] == {"a0 · m": 1} and layout["unplotted"] == {"a0 · m": 1}


def test_the_domain_leaves_room_for_the_largest_mark():
    span = PLOT_SIZE - 2 * PLOT_PAD
    assert math.isclose(domain_pad() * span, PLOT_PAD)


def test_the_page_is_one_inline_document():
    model = synthetic_model(40)
    model["meta"]["workspace"] = "/tmp/<script>alert(1)</script>"
    html = render_html(model)
    assert validate(model) == []
    assert "<title>skill-eval report: /tmp/&lt;script&gt;alert(1)&lt;/script&gt;</title>" in html
    assert "default-src 'none'" in html
    markup = re.sub(r"(<script[^>]*>).*?</script>", r"\1</script>", html, flags=re.S)  # the markup, scripts emptied
    assert not re.search(r"<(?:script|link|img|iframe)[^>]*(?:src|href)=", markup)
    assert html.count("<script") == 4 and html.count("</script>") == 4  # the payload and three inline scripts
    payload = re.search(r'<script type="application/octet-stream" id="payload"[^>]*>([A-Za-z0-9+/=]+)</script>', html).group(1)
    assert decode_payload(payload) == page_payload(model)
    assert render_html(model) == html, "the same model makes the same page"
