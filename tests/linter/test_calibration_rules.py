"""The calibration rules' reading of frozen.json and the runs files: where
their findings point, counted as the engine counts lines."""

from __future__ import annotations

import json
from pathlib import Path

from _workspaces import floor_probe, make_workspace, probe_folder

from skill_eval.linter.engine import lint_paths


def test_a_frozen_json_holding_unicode_line_separators_points_at_the_right_line(tmp_path: Path) -> None:
    """frozen.json's notes may hold U+2028, U+2029, U+0085 and form feeds
    (JSON allows them raw in strings): they break no line for the engine, so
    SE502's "frozen here" is on the line holding the case's id as the file's
    ``\\n`` count it, not one line further per separator."""
    root = make_workspace(tmp_path / "ws", {"p": floor_probe("p")})
    note = "edited by hand\u2028second\u2029third\x85fourth\x0cfifth"
    frozen = {"note": note, "cases": [{"id": "p", "version": 1, "probe_sha256": "0" * 64, "artifact_sha256": "0" * 64}]}
    text = json.dumps(frozen, indent=2, ensure_ascii=False) + "\n"
    path = root / "skill" / "evals" / "frozen.json"
    path.write_bytes(text.encode("utf-8"))
    expected_line = next(number for number, line in enumerate(text.split("\n"), 1) if '"p"' in line)

    (finding,) = [d for d in lint_paths([root]).diagnostics if d.code == "SE502"]

    assert finding.path == probe_folder(root, "p") / "probe.json"
    (related,) = finding.related
    assert related.span.path == path
    assert related.span.start.line == expected_line
    line = text.split("\n")[expected_line - 1]
    assert related.span.start.column == len(line) - len(line.lstrip()) + 1
