#!/usr/bin/env python3
"""Time of the phrase rules' matching (SE301 + SE302) per artifact (nothing is kept
between two texts: each is read anew).

usage: python benchmarks/phrase_timings.py [TREE ...] [--repeat 5]

Every question.md under the TREEs (default: a 1,000-probe corpus written by
benchmarks/make_bench_corpus.py into a temporary folder) and, when
given with --text, every markdown file under those folders cut into 30-line
pieces (realistic prose: real SKILL.md files say "note", "review" and
"check" a lot). Prints the best of --repeat runs, in microseconds per text,
and how many texts had a match.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skill_eval.linter.rules.artifact import _phrases
from skill_eval.linter.rules.artifact._phrases import find_phrases, load_phrase_lists

CORPUS_SCRIPT = Path(__file__).resolve().with_name("make_bench_corpus.py")


def texts_of(trees: list[Path], prose: list[Path]) -> list[str]:
    texts = [p.read_text(encoding="utf-8", errors="replace") for tree in trees for p in sorted(tree.rglob("question.md"))]
    for folder in prose:
        for path in sorted(folder.rglob("*.md")):
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            texts.extend("\n".join(lines[i:i + 30]) + "\n" for i in range(0, len(lines), 30))
    return texts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", type=Path)
    parser.add_argument("--text", action="append", type=Path, default=[], help="folder of markdown prose to add")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    trees = list(args.trees)
    temporary = None
    if not trees and not args.text:
        temporary = tempfile.TemporaryDirectory()
        subprocess.run([sys.executable, str(CORPUS_SCRIPT), temporary.name, "--probes", "1000", "--skills", "10"],
                       check=True, stdout=subprocess.DEVNULL)
        trees = [Path(temporary.name)]
    texts = texts_of(trees, args.text)
    lists = load_phrase_lists()
    signposting, quiz = lists["signposting"], lists["quiz-framing"]
    find_phrases("warm up: note the following", signposting)  # compile the matchers once, as a process does
    find_phrases("warm up: find the bug", quiz)
    best = None
    matched = 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        matched = 0
        for text in texts:
            if find_phrases(text, signposting) or find_phrases(text, quiz):
                matched += 1
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    print(f"{len(texts)} texts, {matched} with a match: {best / len(texts) * 1e6:.1f} us per text "
          f"({best * 1000:.1f} ms in all, best of {args.repeat})")
    if temporary is not None:
        temporary.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
