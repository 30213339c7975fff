"""The artifact rules share one reading per probe (issue 29): SE301, SE302 and
SE304 read question.md through one markdown parse and one structure, and the
reading goes when the probe's unit is done (it is not kept for the run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skill_eval.linter import context as context_module
from skill_eval.linter import markdown
from skill_eval.linter.engine import lint_paths

ARTIFACT = """# PR 812: nightly backup of the media volume

The backup job copies the media volume to the archive host every night at 02:00.

```python
def backup(src, dest):
    try:
        copy_tree(src, dest)
    except OSError:
        pass
    log.info("backup done")
```

- Design notes: [notes](https://wiki.example.com/backup "copy errors are discarded here")

Please note the following before you approve.
Review this and tell us what's wrong.
"""
QUOTE = "except OSError:"


def _probe(root: Path, name: str, text: str) -> None:
    skill = root / "skill"
    folder = skill / "evals" / "probes" / name
    folder.mkdir(parents=True)
    (folder / "question.md").write_text(text)
    (folder / "probe.json").write_text(json.dumps({
        "id": name, "tier": 2, "kind": "floor", "step_heading": "Step", "shapes": ["euphemized"], "seeded_defects": 1,
        "defects": [{"id": "D1", "shape": "euphemized", "quote": QUOTE, "caught_when": {"verdict": "NOT_PROVEN"}}],
    }))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "skill-eval.toml").write_text("")
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: skill\ndescription: Use when reviewing.\n---\n\n# S\n\n## Step\n\n"
                                    "The `verdict` is `PASS`.\n")
    (skill / "output-spec.md").write_text("# O\n\n## `verdict`\nValues: `PASS`, `NOT_PROVEN`\n")
    for index in range(3):
        _probe(tmp_path, f"p{index}", ARTIFACT.replace("02:00", f"0{index}:00"))
    return tmp_path


def test_each_artifact_is_parsed_once_for_the_three_rules(workspace: Path, monkeypatch) -> None:
    parsed: list[str] = []
    parse = markdown.block_tokens

    def counting(text: str):
        parsed.append(text)
        return parse(text)

    monkeypatch.setattr(markdown, "block_tokens", counting)
    found = lint_paths([workspace], jobs=1).diagnostics
    artifacts = [p for p in parsed if p.startswith("# PR 812")]
    assert len(artifacts) == 3 and len(set(artifacts)) == 3, [p[:100] for p in parsed]
    for index in range(3):
        codes = {d.code for d in found if f"p{index}" in str(d.path)}
        assert {"SE301", "SE302", "SE304"} <= codes, found


def test_no_probe_keeps_its_reading_after_the_lint(workspace: Path, monkeypatch) -> None:
    made: list[context_module.ProbeContext] = []
    init = context_module.ProbeContext.__init__

    def recording(self, *args, **kwargs) -> None:
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(context_module.ProbeContext, "__init__", recording)
    found = lint_paths([workspace], jobs=1).diagnostics
    assert any(d.code == "SE301" for d in found)
    assert len(made) >= 3
    assert not [c for c in made if "unit_memo" in c.__dict__]
