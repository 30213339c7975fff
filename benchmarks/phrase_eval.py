#!/usr/bin/env python3
"""Recall and false positives of the phrase rules (SE301, SE302) on the
hand-written lists in benchmarks/phrase_eval/.

usage: python benchmarks/phrase_eval.py [--half tune|held-out|both] [--show]

signposting.txt and quiz-framing.txt hold paraphrases each rule should flag;
work.txt holds work-like near misses that neither may flag. Each line goes to
the tuning half or the held-out half by a CRC-32 of its text (even: tune,
odd: held-out), so adding a line never moves another. The phrase lists were
tuned looking at the tuning half only; the held-out half is the figure to
quote. A literal "\\n" in a line stands for a line break, and a line that
starts with "\\#" stands for one that starts with "#" (a markdown heading;
a line starting with "#" is a comment).
"""

from __future__ import annotations

import argparse
import zlib
from pathlib import Path

from skill_eval.linter.rules.artifact._phrases import find_phrases, load_phrase_lists

DATA = Path(__file__).resolve().parent / "phrase_eval"
RULES = {"signposting": "SE301", "quiz-framing": "SE302"}


def lines(name: str) -> list[str]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def text_of(line: str) -> str:
    """The artifact text a line of the data stands for."""
    text = line.replace("\\n", "\n")
    return text[1:] if text.startswith("\\#") else text


def half_of(line: str) -> str:
    return "tune" if zlib.crc32(line.encode("utf-8")) % 2 == 0 else "held-out"


def flagged(text: str) -> dict[str, list[str]]:
    lists = load_phrase_lists()
    return {table: [m.text for m in find_phrases(text, lists[table])] for table in RULES}


def evaluate(half: str, show: bool) -> dict[str, tuple[int, int]]:
    figures: dict[str, tuple[int, int]] = {}
    for table, code in RULES.items():
        cases = [line for line in lines(f"{table}.txt") if half in ("both", half_of(line))]
        caught = 0
        for line in cases:
            found = flagged(text_of(line))
            if found[table]:
                caught += 1
            elif show:
                print(f"  miss {code}: {line}")
        figures[code] = (caught, len(cases))
    work = [line for line in lines("work.txt") if half in ("both", half_of(line))]
    false_positives = 0
    for line in work:
        found = flagged(text_of(line))
        if any(found.values()):
            false_positives += 1
            if show:
                print(f"  false positive: {line}  <- {found}")
    figures["work"] = (false_positives, len(work))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("tune", "held-out", "both"), default="held-out")
    parser.add_argument("--show", action="store_true", help="print the misses and false positives")
    args = parser.parse_args()
    figures = evaluate(args.half, args.show)
    print(f"half: {args.half}")
    for code in RULES.values():
        caught, total = figures[code]
        print(f"  {code} recall: {caught}/{total} = {caught / total:.0%}")
    wrong, total = figures["work"]
    print(f"  false positives on work text: {wrong}/{total} = {wrong / total:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
