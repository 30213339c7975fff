"""Contamination: an answer or transcript holding text only the answer key has.

The answer key of a probe is what no agent should ever see: its probe.json
(defects, quotes, ``caught_when``, judges' rubrics), its known transcripts
and every other file of its folder but the artifact, and the other files
under its suite's ``evals/`` (other probes, frozen.json; not ``runs/``,
which holds agents' own answers). An agent that read any of it — an
unsealed run, a command agent handed the workspace's path — can no longer
show what the skill does: such a start is recorded ``contaminated``, counts
against the budget like any start, and is never graded as a catch.

:class:`AnswerKey` is built once per probe. Its **distinctive strings** are
the lines of each answer-key file, and each string value of probe.json,
that are long enough not to be said by chance (at least
:data:`MIN_WORDS` words and :data:`MIN_CHARS` characters) and that the
agent was legitimately shown nowhere: neither the artifact, nor the prompt's
answer instructions (the output spec), nor any file of the skill folder holds
them, and at least :data:`MIN_OWN_WORDS` of their words are their own (not
inside a three-word run of that shown text: a probe.json line that merely
wraps an artifact quote in a key is not distinctive). Text is compared as words (NFC, case-folded, ``\\w+`` runs, one space
between), so markup, JSON quoting and line breaks do not matter; a string
must occur whole, on word boundaries. A transcript's JSON lines are also read
for their string values (a file read by a tool comes back JSON-escaped).

Searching is one pass of one RE2 automaton over the text (linear in its
length, whatever the number of strings); the strings are capped at
:data:`MAX_NEEDLES` (the longest kept) and the key's files at
:data:`MAX_KEY_BYTES`.
"""

from __future__ import annotations

import json
import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

__all__ = ["AnswerKey", "Leak", "answer_key_files", "MIN_CHARS", "MIN_WORDS"]

MIN_WORDS = 7
"""Words a distinctive string has at least: fewer ("verdict: PASS", a
field list, a short wrapped line) an answer says by itself."""
MIN_CHARS = 32
"""Characters (of the normalized words) a distinctive string has at least."""
MIN_OWN_WORDS = 4
"""Words of a distinctive string that no three-word run of the shown text
covers: a probe.json line that is a key plus an artifact quote (``"quote":
"..."``) has one, and an answer that quotes the artifact may well say it."""
GRAM = 3
MAX_NEEDLES = 4000
MAX_KEY_BYTES = 16 * 1024 * 1024
MAX_FILE_BYTES = 1024 * 1024
MAX_LEAKS = 5
"""Leaks kept on a record (the first found)."""
_SKIPPED_FOLDERS = frozenset({"runs", ".git", ".hg", ".svn", ".jj", ".bzr", ".venv", "node_modules", "__pycache__",
                              ".skill-eval-cache", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
_WORD = re.compile(r"\w+")


def words(text: str) -> str:
    """``text`` as its words: NFC, case-folded, ``\\w+`` runs joined by one space."""
    return " ".join(_WORD.findall(unicodedata.normalize("NFC", text).casefold()))


@dataclass(frozen=True)
class Leak:
    """A distinctive string of the answer key found in a start's output:
    ``source`` is the answer-key file (relative to the workspace) and
    ``text`` the string as that file has it."""

    source: str
    text: str

    def record(self) -> dict[str, str]:
        return {"source": self.source, "text": self.text}


def _regular_files(folder: Path, skip: Path | None) -> Iterator[Path]:
    """Regular files below ``folder`` (no links followed, :data:`_SKIPPED_FOLDERS` left out), sorted."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        path = Path(entry.path)
        if stat.S_ISDIR(mode) and entry.name not in _SKIPPED_FOLDERS:
            yield from _regular_files(path, skip)
        elif stat.S_ISREG(mode) and (skip is None or path != skip):
            yield path


def answer_key_files(probe: Any) -> list[tuple[Path, bytes]]:
    """The answer key of ``probe`` (a :class:`~skill_eval.evals.probes.Probe`):
    its probe.json, the other files of its folder but the artifact, and the
    files under its suite's ``evals/`` but ``runs/`` and the artifact; each
    file once, at most :data:`MAX_FILE_BYTES` each and :data:`MAX_KEY_BYTES` in all."""
    from skill_eval.linter.reader import read_regular_file

    found: dict[Path, bytes] = {probe.json_path: probe.probe_bytes}
    total = len(probe.probe_bytes)
    folders = [probe.folder, Path(probe.suite) / "evals"]
    for folder in folders:
        for path in _regular_files(folder, probe.artifact_path):
            if path in found or total >= MAX_KEY_BYTES:
                continue
            try:
                data = read_regular_file(path, MAX_FILE_BYTES)
            except (OSError, ValueError):
                continue  # too large, unreadable, not a regular file after all: not read
            found[path] = data
            total += len(data)
    return list(found.items())


def _json_strings(value: Any, depth: int = 0) -> Iterator[str]:
    if depth > 64:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _json_strings(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _json_strings(item, depth + 1)


def _grams(tokens: list[str]) -> Iterator[tuple[str, ...]]:
    return (tuple(tokens[i:i + GRAM]) for i in range(len(tokens) - GRAM + 1))


def _own_words(tokens: list[str], shown_grams: set[tuple[str, ...]]) -> int:
    """How many of ``tokens`` lie in no ``GRAM``-word run that the shown text has."""
    covered = [False] * len(tokens)
    for i in range(len(tokens) - GRAM + 1):
        if tuple(tokens[i:i + GRAM]) in shown_grams:
            for j in range(i, i + GRAM):
                covered[j] = True
    return covered.count(False)


def _json_documents(text: str) -> list[Any]:
    """The JSON ``text`` holds: one document, or one per line."""
    try:
        return [json.loads(text)]
    except (ValueError, RecursionError):
        pass
    documents = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(("{", "[")):
            try:
                documents.append(json.loads(line))
            except (ValueError, RecursionError):
                continue
    return documents


def _key_pieces(source: str, text: str) -> Iterator[str]:
    """Candidate strings of an answer-key file: its lines, and for a JSON
    file each line of each of its string values."""
    yield from text.splitlines()
    if source.endswith(".json"):
        for document in _json_documents(text):
            for value in _json_strings(document):
                yield from value.splitlines()


class AnswerKey:
    """The distinctive strings of one probe's answer key (see the module
    docstring), and a search for them. Build with :meth:`for_probe` (or
    :meth:`build`), once per probe; :meth:`find` per start."""

    def __init__(self, needles: dict[str, Leak]) -> None:
        self.needles = needles
        """Normalized words -> the leak it reports."""
        self._pattern = None
        if needles:
            import re2

            options = re2.Options()
            options.log_errors = False
            options.max_mem = 256 << 20
            alternation = "|".join(re2.escape(needle) for needle in sorted(needles, key=len, reverse=True))
            self._pattern = re2.compile(r"(?:^| )(" + alternation + r")(?: |$)", options)

    @classmethod
    def build(cls, key_files: Iterable[tuple[str, str]], public: Iterable[str]) -> "AnswerKey":
        """From ``(source name, text)`` answer-key files and the texts the agent
        was shown (artifact, prompt, skill files)."""
        shown_texts = [words(text) for text in public]
        shown = "\n".join(shown_texts)
        shown_grams = {gram for text in shown_texts for gram in _grams(text.split(" "))}
        needles: dict[str, Leak] = {}
        for source, text in key_files:
            for piece in _key_pieces(source, text):
                needle = words(piece)
                if needle in needles or len(needle) < MIN_CHARS or needle.count(" ") + 1 < MIN_WORDS:
                    continue
                if needle in shown or _own_words(needle.split(" "), shown_grams) < MIN_OWN_WORDS:
                    continue
                needles[needle] = Leak(source, piece.strip()[:500])
        if len(needles) > MAX_NEEDLES:
            kept = sorted(needles, key=len, reverse=True)[:MAX_NEEDLES]
            needles = {needle: needles[needle] for needle in kept}
        return cls(needles)

    @classmethod
    def for_probe(cls, probe: Any, root: Path) -> "AnswerKey":
        """The answer key of a :class:`~skill_eval.evals.probes.Probe`, shown
        text being its artifact, its prompt (the output spec's answer
        instructions) and every file of its skill folder's copy."""
        from .prompt import build_prompt

        public = [probe.artifact_bytes.decode("utf-8", "replace"),
                  build_prompt(probe.artifact_bytes, probe.output_spec).decode("utf-8", "replace")]
        if probe.skill_bytes is not None:
            public.append(probe.skill_bytes.decode("utf-8", "replace"))
        tree = getattr(probe, "skill_tree", None)
        for _name, data, _mode in (tree.files if tree is not None else ()):
            public.append(data.decode("utf-8", "replace"))
        for _name, data in getattr(probe, "input_files", ()):  # a skill-creator eval's files: handed to the agent
            public.append(data.decode("utf-8", "replace"))
        if probe.output_spec_path is not None:
            try:
                from skill_eval.linter.reader import read_regular_file

                public.append(read_regular_file(probe.output_spec_path, MAX_FILE_BYTES).decode("utf-8", "replace"))
            except (OSError, ValueError):
                pass
        files = []
        for path, data in answer_key_files(probe):
            try:
                source = path.relative_to(root).as_posix()
            except ValueError:
                source = str(path)
            files.append((source, data.decode("utf-8", "replace")))
        return cls.build(files, public)

    def find(self, answer: str, transcript: str = "") -> list[Leak]:
        """The distinctive strings found in ``answer`` or ``transcript`` (the
        first :data:`MAX_LEAKS`, each once)."""
        if self._pattern is None:
            return []
        found: list[Leak] = []
        seen: set[str] = set()
        for haystack in self._haystacks(answer, transcript):
            for match in self._pattern.finditer(haystack):
                needle = match.group(1)
                if needle not in seen and needle in self.needles:
                    seen.add(needle)
                    found.append(self.needles[needle])
                    if len(found) >= MAX_LEAKS:
                        return found
        return found

    @staticmethod
    def _haystacks(answer: str, transcript: str) -> Iterator[str]:
        """The texts searched, as words: the answer, the transcript, and each
        string value of the transcript's JSON (whole: a file a tool read
        comes back as one JSON string, escaped in the raw line)."""
        if answer:
            yield words(answer)
        if transcript:
            yield words(transcript)
            for document in _json_documents(transcript):
                for value in _json_strings(document):
                    if len(value) >= MIN_CHARS:
                        yield words(value)


def describe(leaks: Sequence[Leak]) -> str:
    """One line for a record's ``error``."""
    first = leaks[0]
    more = f" and {len(leaks) - 1} more" if len(leaks) > 1 else ""
    shown = first.text if len(first.text) <= 120 else first.text[:117] + "..."
    return (f"contaminated: the output holds text only the answer key has ({first.source}: {shown!r}{more}); "
            "never graded")
