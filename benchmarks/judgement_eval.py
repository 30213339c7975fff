#!/usr/bin/env python3
"""Precision and recall of the judgement rules (SE301 signposting, SE302
quiz framing, SE304 answer-key leaks) on the labelled set in
benchmarks/judgement/.

usage: python benchmarks/judgement_eval.py [--split dev|heldout|both] [--show]

Each line of ``dev.tsv`` / ``heldout.tsv`` is a sentence, its label
(``signpost``, ``quiz``, ``key-leak`` or ``work``) and a position (heading,
table cell, list item, block quote, code comment, comment on the defect's
code line, HTML comment, link text, link title, image alt text, paragraph).
The sentence is inserted at that position of its domain's artifact
(``artifacts.toml``), every labelled artifact becomes a probe of one
workspace, and the workspace is linted once, as a user would lint it.

An item is flagged with a rule when the rule reports an **error** on the
lines the sentence was inserted into (info findings never count). For each
class, precision is how many of the items the class's rule flagged carry the
class's label, recall how many of the items with the label it flagged; a
``work`` item flagged by any of the three rules is a false positive of that
rule. The artifacts without any sentence are linted too: they must stay
clean.

``heldout.tsv`` was frozen before any rule was tuned (its header and its
commit say so): tune on ``dev`` (``--show`` lists dev's misses and false
positives), quote ``heldout``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).resolve().parent / "judgement"
CLASSES = {"signpost": "SE301", "quiz": "SE302", "key-leak": "SE304"}
SPLITS = ("dev", "heldout")
SLOTS = ("para", "heading", "item", "quote", "cell", "code", "eol", "html", "link", "title", "alt")
_UNUSED = {"link": "details", "alt": "chart"}
"""What an inline slot holds when the item goes elsewhere (a link keeps its text)."""
_SLOT = re.compile(r"\{\{(" + "|".join(SLOTS) + r")\}\}")

SKILL_MD = """---
name: skill
description: Use when reviewing work before it is signed off.
---

# Review work

## Step 1: Read the material

Each claim needs its own evidence. A claim without direct proof makes the
`verdict` `NOT_PROVEN`.
"""
OUTPUT_SPEC = "# Output spec\n\n## `verdict`\nValues: `PASS`, `NOT_PROVEN`\n"


@dataclass(frozen=True)
class Item:
    split: str
    number: int
    domain: str
    label: str
    position: str
    sentence: str

    @property
    def name(self) -> str:
        return f"{self.split}-{self.number:03d}"


def load_artifacts() -> dict[str, dict]:
    with open(DATA / "artifacts.toml", "rb") as handle:
        return tomllib.load(handle)


def load_items(split: str) -> list[Item]:
    items = []
    for line in (DATA / f"{split}.tsv").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        domain, label, position, sentence = line.split("\t")
        if label not in (*CLASSES, "work") or position not in SLOTS:
            raise ValueError(f"{split}.tsv: bad label or position in {line!r}")
        items.append(Item(split, len(items) + 1, domain, label, position, sentence))
    return items


def render(artifact: dict, position: str | None, sentence: str = "") -> tuple[str, tuple[int, int]]:
    """The artifact's markdown with ``sentence`` at ``position`` (``None``:
    no sentence), and the 1-based lines the sentence lies on."""
    prefix = artifact.get("comment", "#")
    forms = {
        "para": f"\n{sentence}\n", "heading": f"## {sentence}\n", "item": f"- {sentence}",
        "quote": f"> {sentence}\n", "cell": sentence, "code": f"{prefix} {sentence}",
        "eol": f"{prefix} {sentence}", "html": f"<!-- {sentence} -->\n", "link": sentence,
        "title": sentence.replace('"', "'"), "alt": sentence.replace("]", ")"),
    }
    lines_out: list[str] = []
    where = (0, 0)
    for line in artifact["text"].strip("\n").split("\n"):
        slots = _SLOT.findall(line)
        if not slots:
            lines_out.append(line)
            continue
        if line.strip() == "{{" + slots[0] + "}}" and len(slots) == 1:
            if slots[0] == position:
                block = forms[position].rstrip("\n")
                lines_out.extend(block.split("\n"))
                where = (len(lines_out) - block.lstrip("\n").count("\n"), len(lines_out))
            continue
        filled = _SLOT.sub(lambda m: forms[m.group(1)] if m.group(1) == position else _UNUSED.get(m.group(1), ""), line)
        if position in slots:
            where = (len(lines_out) + 1, len(lines_out) + 1)
        lines_out.append(filled.rstrip() if position != "cell" else filled)
    return "\n".join(lines_out) + "\n", where


def placed(artifact: dict, item: Item):
    """``item``'s sentence rendered into ``artifact`` as the linter reads it:
    the artifact's structure (_judgement.structure_of), its defects' anchors
    (each quote on the line that holds it) and the lines the sentence lies on."""
    from skill_eval.linter.rules.artifact import _judgement

    text, where = render(artifact, item.position, item.sentence)
    lines = text.split("\n")
    anchors = [_judgement.Anchor(f"D{number}", quote, line, line)
               for number, quote in enumerate(artifact["quotes"], 1)
               for line in [next(n for n, held in enumerate(lines, 1) if quote in held)]]
    return _judgement.structure_of(text), anchors, where


def related_items(items: list[Item]) -> set[str]:
    """Names of the items the linter relates to a defect's own part or its
    block (_judgement.resolve: ``defect`` or ``block``) in their artifact:
    any unit of the inserted sentence does. The stance scorer's trainer
    reads sentences that name a defect's part apart from the rest
    (train_judgement_scorer.py)."""
    from skill_eval.linter.rules.artifact import _judgement

    artifacts = load_artifacts()
    related = set()
    for item in items:
        structure, anchors, (first, last) = placed(artifacts[item.domain], item)
        for unit in structure.units:
            if unit.end_line < first or unit.line > last or not unit.text.strip():
                continue
            located = unit.part if unit.kind == "cell" or (
                unit.kind == "code-comment" and not _judgement.read_sentence(unit.text).weak) else None  # as _judge_unit
            kind = _judgement.resolve(unit.text, structure, anchors, exclude=unit.part, located=located).kind
            if kind in _judgement.RELATED_KINDS:
                related.add(item.name)
                break
    return related


def left_to_se304(items: list[Item]) -> set[str]:
    """Names of the items whose inserted comment, title or alt text the
    linter leaves to SE304 and never scores (_judgement._judge_stance): it
    names a defect's part or block and tells a flaw of it
    (_judgement._flaw_told). A hidden text with a flaw word that does not
    ("queue_depth here is the same metric the alert item names, not a
    derived one") is scored like any other."""
    from skill_eval.linter.rules.artifact import _judgement

    artifacts = load_artifacts()
    left = set()
    for item in items:
        if item.position not in ("html", "code", "eol", "title", "alt"):
            continue
        structure, anchors, (first, last) = placed(artifacts[item.domain], item)
        kind = {"html": "html-comment", "code": "code-comment", "eol": "code-comment"}.get(item.position, item.position)
        for unit in structure.units:
            if unit.end_line < first or unit.line > last or unit.kind != kind:
                continue  # another hidden unit on the line (a link title's line holds an image's alt text too)
            located = unit.part if unit.kind == "code-comment" and not _judgement.read_sentence(unit.text).weak else None
            relation = _judgement.resolve(unit.text, structure, anchors, exclude=unit.part, located=located)
            if relation.kind in _judgement.RELATED_KINDS and _judgement._flaw_told(
                    unit.text.rstrip(), structure, anchors, unit.part, located) is not None:
                left.add(item.name)
            break
    return left


def write_workspace(root: Path, items: list[Item], artifacts: dict[str, dict]) -> dict[str, tuple[Item | None, tuple[int, int]]]:
    """Write one probe per item (and one clean probe per domain) under
    ``root``; return probe name -> (item, inserted lines)."""
    (root / "skill-eval.toml").write_text("# workspace root marker\n", encoding="utf-8")
    skill = root / "skill"
    (skill / "evals" / "probes").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (skill / "output-spec.md").write_text(OUTPUT_SPEC, encoding="utf-8")
    probes: dict[str, tuple[Item | None, tuple[int, int]]] = {}
    entries: list[tuple[str, str, Item | None, str | None, str]] = [
        (f"clean-{domain}", domain, None, None, "") for domain in artifacts
    ]
    entries += [(item.name, item.domain, item, item.position, item.sentence) for item in items]
    for name, domain, item, position, sentence in entries:
        artifact = artifacts[domain]
        text, where = render(artifact, position, sentence)
        folder = skill / "evals" / "probes" / name
        folder.mkdir()
        (folder / "question.md").write_text(text, encoding="utf-8")
        defects = [{"id": f"D{i + 1}", "shape": "euphemized", "quote": quote, "caught_when": {"verdict": "NOT_PROVEN"}}
                   for i, quote in enumerate(artifact["quotes"])]
        probe = {"id": name, "tier": 2, "kind": "floor" if len(defects) == 1 else "band",
                 "step_heading": "Step 1: Read the material", "shapes": ["euphemized"],
                 "seeded_defects": len(defects), "defects": defects}
        (folder / "probe.json").write_text(json.dumps(probe, indent=2), encoding="utf-8")
        probes[name] = (item, where)
    return probes


def lint_workspace(root: Path) -> dict[str, list]:
    """Diagnostics of the three rules by probe name."""
    from skill_eval.linter.engine import lint_paths

    result = lint_paths([root])
    found: dict[str, list] = {}
    for diagnostic in result.diagnostics:
        if diagnostic.code not in CLASSES.values():
            continue
        path = Path(diagnostic.span.path)
        found.setdefault(path.parent.name, []).append(diagnostic)
    return found


@dataclass
class Outcome:
    item: Item
    errors: set[str]
    infos: set[str]
    messages: list[str]


def evaluate(items: list[Item]) -> tuple[list[Outcome], dict[str, list]]:
    """Lint every item's artifact; the outcomes, and the clean artifacts' findings."""
    artifacts = load_artifacts()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        probes = write_workspace(root, items, artifacts)
        found = lint_workspace(root)
    outcomes = []
    clean = {name: found.get(name, []) for name, (item, _) in probes.items() if item is None}
    for name, (item, (first, last)) in probes.items():
        if item is None:
            continue
        errors, infos, messages = set(), set(), []
        for diagnostic in found.get(name, []):
            span = diagnostic.span
            if span.end.line < first or span.start.line > last:
                continue
            (errors if diagnostic.severity.value == "error" else infos).add(diagnostic.code)
            messages.append(f"{diagnostic.code} [{diagnostic.severity.value}] {diagnostic.message}")
        outcomes.append(Outcome(item, errors, infos, messages))
    return outcomes, clean


def scores(outcomes: list[Outcome]) -> dict[str, dict[str, float]]:
    """Per class: tp, fp, fn, precision, recall; and work items flagged as errors."""
    table: dict[str, dict[str, float]] = {}
    for label, code in CLASSES.items():
        tp = sum(1 for o in outcomes if o.item.label == label and code in o.errors)
        fp = sum(1 for o in outcomes if o.item.label != label and code in o.errors)
        fn = sum(1 for o in outcomes if o.item.label == label and code not in o.errors)
        table[label] = {
            "tp": tp, "fp": fp, "fn": fn,
            "precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": tp / (tp + fn) if tp + fn else 1.0,
        }
    work = [o for o in outcomes if o.item.label == "work"]
    table["work"] = {"flagged": sum(1 for o in work if o.errors), "total": len(work),
                     "info": sum(1 for o in work if o.infos and not o.errors)}
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=(*SPLITS, "both"), default="both")
    parser.add_argument("--show", action="store_true", help="list dev's misses and false positives (never held-out's)")
    args = parser.parse_args()
    splits = SPLITS if args.split == "both" else (args.split,)
    items = [item for split in splits for item in load_items(split)]
    outcomes, clean = evaluate(items)
    dirty = {name: [d.message for d in found] for name, found in clean.items() if found}
    for name, messages in dirty.items():
        print(f"clean artifact {name} has findings: {messages}")
    for split in splits:
        table = scores([o for o in outcomes if o.item.split == split])
        print(f"split: {split}")
        for label, code in CLASSES.items():
            row = table[label]
            print(f"  {label:9} {code}: precision {row['precision']:.3f} ({row['tp']}/{row['tp'] + row['fp']})"
                  f"  recall {row['recall']:.3f} ({row['tp']}/{row['tp'] + row['fn']})")
        work = table["work"]
        print(f"  work      flagged as an error: {work['flagged']}/{work['total']}; info only: {work['info']}")
    if args.show:
        for outcome in outcomes:
            item = outcome.item
            if item.split != "dev":
                continue
            wanted = CLASSES.get(item.label)
            if (wanted and wanted not in outcome.errors) or (outcome.errors - {wanted}):
                print(f"  {item.name} {item.label:8} {item.position:7} [{item.domain}] {item.sentence}")
                for message in outcome.messages:
                    print(f"      {message}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
