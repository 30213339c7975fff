"""Contamination: an answer or transcript holding text only the answer key has.

The answer key of a probe is what no agent should ever see: its probe.json
(defects, quotes, ``caught_when``, judges' rubrics), its known transcripts
and every other file of its folder but the artifact, and the other files
under its suite's ``evals/`` (other probes, frozen.json; not ``runs/``,
which holds agents' own answers). An agent that read any of it — an
unsealed run, a command agent handed the workspace's path — can no longer
show what the skill does: such a start is recorded ``contaminated``, counts
against the budget like any start, and is never graded as a catch.

:class:`AnswerKey` holds the **distinctive strings** of answer-key files:
their lines, and each string value of probe.json, long enough not to be said
by chance (at least :data:`MIN_WORDS` words and :data:`MIN_CHARS`
characters) and shown to the agent nowhere (:class:`Shown`): neither the
artifact, nor the prompt's answer instructions (the output spec), nor any
file of the skill folder holds them, and at least :data:`MIN_OWN_WORDS` of
their words are their own (not inside a three-word run of that shown text:
a probe.json line that merely wraps an artifact quote in a key is not
distinctive). Text is compared as words (NFC, case-folded, ``\\w+`` runs),
so markup, JSON quoting and line breaks do not matter; a string must occur
whole, on word boundaries. A transcript's JSON lines are also read for their
string values (a file read by a tool comes back JSON-escaped).

Two keys are searched per start, each in one pass over the text's words
(one dictionary look-up per word, of the :data:`MIN_WORDS` words starting
there: linear in the text, whatever the number of strings): the probe's own
(:meth:`AnswerKey.for_probe`: its folder, filtered by what its start was
shown when built, once per probe), and its suite's
(:meth:`AnswerKey.for_suite`: every file under ``evals/`` but ``runs/``,
read and built once per suite, its hits filtered by the start's
:class:`Shown`), so the work stays linear in the suite's files however many
probes it holds. Each key holds at most :data:`MAX_NEEDLES` strings (the
longest kept) from at most :data:`MAX_KEY_BYTES` of files.
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

from skill_eval.linter.reader import TOOL_FOLDERS

__all__ = ["AnswerKey", "Shown", "Leak", "answer_key_files", "suite_key_files", "MIN_CHARS", "MIN_WORDS"]

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
MAX_NEEDLES = 20000
"""Strings one key looks for at most (the longest kept)."""
MAX_KEY_BYTES = 16 * 1024 * 1024
MAX_FILE_BYTES = 1024 * 1024
MAX_LEAKS = 5
"""Leaks kept on a record (the first found)."""
SKIPPED_FOLDERS = frozenset({"runs"}) | TOOL_FOLDERS
"""Folders never read for the answer key: ``runs/`` (agents' own answers) and
the VCS and tool folders the linter's walk skips."""
MAX_DEPTH = 32
_WORD = re.compile(r"\w+")


def _tokens(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFC", text).casefold())


def words(text: str) -> str:
    """``text`` as its words: NFC, case-folded, ``\\w+`` runs joined by one space."""
    return " ".join(_tokens(text))


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
    """Regular files below ``folder``, in name order: no link followed, no
    FIFO or device opened, :data:`SKIPPED_FOLDERS` left out, at most
    :data:`MAX_DEPTH` folders deep (a walk, not a recursion)."""
    pending = [(folder, 0)]
    while pending:
        current, depth = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda entry: entry.name, reverse=True)
        except OSError:
            continue
        files = []
        for entry in entries:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            path = Path(entry.path)
            if stat.S_ISDIR(mode) and entry.name not in SKIPPED_FOLDERS and depth < MAX_DEPTH:
                pending.append((path, depth + 1))
            elif stat.S_ISREG(mode) and path != skip:
                files.append(path)
        yield from reversed(files)


def _read_files(paths: Iterable[Path], budget: int) -> list[tuple[Path, bytes]]:
    """The bytes of each of ``paths`` (regular files), at most
    :data:`MAX_FILE_BYTES` each and ``budget`` in all; unreadable ones left out."""
    from skill_eval.linter.reader import read_regular_file

    found: list[tuple[Path, bytes]] = []
    for path in paths:
        if budget <= 0:
            break
        try:
            data = read_regular_file(path, MAX_FILE_BYTES)
        except (OSError, ValueError):
            continue  # too large, unreadable, not a regular file after all: not read
        found.append((path, data))
        budget -= len(data)
    return found


def answer_key_files(probe: Any) -> list[tuple[Path, bytes]]:
    """The answer key of ``probe`` (a :class:`~skill_eval.evals.probes.Probe`)
    in its own folder: its probe.json and every other file there but the
    artifact (known transcripts...)."""
    others = [path for path in _regular_files(probe.folder, probe.artifact_path) if path != probe.json_path]
    return [(probe.json_path, probe.probe_bytes), *_read_files(others, MAX_KEY_BYTES - len(probe.probe_bytes))]


def suite_key_files(suite: Path) -> list[tuple[Path, bytes]]:
    """Every file under the suite's ``evals/`` but ``runs/`` (every probe's
    answer key, frozen.json...), each read once for the whole suite."""
    return _read_files(_regular_files(Path(suite) / "evals", None), MAX_KEY_BYTES)


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


def _named(files: Iterable[tuple[Path, bytes]], root: Path) -> list[tuple[str, str]]:
    """``(path relative to root, text)`` of each file."""
    named = []
    for path, data in files:
        try:
            source = path.relative_to(root).as_posix()
        except ValueError:
            source = str(path)
        named.append((source, data.decode("utf-8", "replace")))
    return named


class Shown:
    """What a start's agent was legitimately handed, as words: a string of
    the answer key that this holds, or that has fewer than
    :data:`MIN_OWN_WORDS` words outside its three-word runs, is no leak."""

    def __init__(self, texts: Iterable[str]) -> None:
        shown = [words(text) for text in texts]
        self.text = "\n".join(shown)
        self.grams = {gram for text in shown for gram in _grams(text.split(" "))}

    def holds(self, needle: str) -> bool:
        return needle in self.text or _own_words(needle.split(" "), self.grams) < MIN_OWN_WORDS

    @classmethod
    def for_probe(cls, probe: Any) -> "Shown":
        """A probe's artifact, its prompt (the output spec's answer
        instructions), its output-spec file and every file of its skill
        folder's copy."""
        from .prompt import build_prompt

        texts = [probe.artifact_bytes.decode("utf-8", "replace"),
                 build_prompt(probe.artifact_bytes, probe.output_spec).decode("utf-8", "replace")]
        if probe.skill_bytes is not None:
            texts.append(probe.skill_bytes.decode("utf-8", "replace"))
        tree = getattr(probe, "skill_tree", None)
        for _name, data, _mode in (tree.files if tree is not None else ()):
            texts.append(data.decode("utf-8", "replace"))
        for _name, data in getattr(probe, "input_files", ()):  # a skill-creator eval's files: handed to the agent
            texts.append(data.decode("utf-8", "replace"))
        if probe.output_spec_path is not None:
            texts += [data.decode("utf-8", "replace") for _path, data in _read_files([probe.output_spec_path],
                                                                                       MAX_FILE_BYTES)]
        return cls(texts)


class AnswerKey:
    """The distinctive strings of one probe's answer key (see the module
    docstring), and a search for them. Build with :meth:`for_probe` (or
    :meth:`build`), once per probe; :meth:`find` per start."""

    def __init__(self, needles: dict[str, Leak]) -> None:
        self.needles = needles
        """Normalized words -> the leak it reports."""
        self._by_prefix: dict[tuple[str, ...], list[tuple[list[str], str]]] = {}
        """Each needle under its first :data:`MIN_WORDS` words: a text is
        scanned once, one dictionary look-up per word."""
        for needle in needles:
            tokens = needle.split(" ")
            self._by_prefix.setdefault(tuple(tokens[:MIN_WORDS]), []).append((tokens, needle))
        self._firsts = frozenset(prefix[0] for prefix in self._by_prefix)
        """The first words of the needles: only where one stands is a prefix looked up."""

    @classmethod
    def build(cls, key_files: Iterable[tuple[str, str]], shown: "Shown | None" = None) -> "AnswerKey":
        """From ``(source name, text)`` answer-key files, leaving out what
        ``shown`` (the texts the agent was handed) holds; without ``shown``,
        every long enough string is kept (filter hits with :meth:`find`'s)."""
        needles: dict[str, Leak] = {}
        for source, text in key_files:
            for piece in _key_pieces(source, text):
                needle = words(piece)
                if needle in needles or len(needle) < MIN_CHARS or needle.count(" ") + 1 < MIN_WORDS:
                    continue
                if shown is not None and shown.holds(needle):
                    continue
                needles[needle] = Leak(source, piece.strip()[:500])
        if len(needles) > MAX_NEEDLES:
            kept = sorted(needles, key=len, reverse=True)[:MAX_NEEDLES]
            needles = {needle: needles[needle] for needle in kept}
        return cls(needles)

    @classmethod
    def for_probe(cls, probe: Any, root: Path, shown: "Shown | None" = None) -> "AnswerKey":
        """The answer key in a :class:`~skill_eval.evals.probes.Probe`'s own
        folder (:func:`answer_key_files`), less what :meth:`Shown.for_probe` holds."""
        return cls.build(_named(answer_key_files(probe), root), shown or Shown.for_probe(probe))

    @classmethod
    def for_suite(cls, suite: Path, root: Path) -> "AnswerKey":
        """Every probe's answer key of a suite (:func:`suite_key_files`), not
        yet filtered: built once per suite, its hits are filtered per start
        by :meth:`find`'s ``shown``. Linear in the suite's files, however many
        probes it holds."""
        return cls.build(_named(suite_key_files(suite), root), None)

    def find(self, answer: str, transcript: str = "", shown: "Shown | None" = None) -> list[Leak]:
        """The distinctive strings found in ``answer`` or ``transcript`` (the
        first :data:`MAX_LEAKS`, each once); with ``shown``, only those it
        does not hold."""
        return self.find_in(list(self.haystacks(answer, transcript)), shown)

    def find_in(self, haystacks: Sequence[list[str]], shown: "Shown | None" = None) -> list[Leak]:
        """:meth:`find` in texts already made :meth:`haystacks` (several keys, one tokenizing)."""
        if not self.needles:
            return []
        found: list[Leak] = []
        seen: set[str] = set()
        by_prefix, firsts = self._by_prefix, self._firsts
        for tokens in haystacks:
            for position in [index for index, token in enumerate(tokens) if token in firsts]:
                for needle_tokens, needle in by_prefix.get(tuple(tokens[position:position + MIN_WORDS]), ()):
                    if needle in seen or tokens[position:position + len(needle_tokens)] != needle_tokens:
                        continue
                    seen.add(needle)
                    if shown is None or not shown.holds(needle):
                        found.append(self.needles[needle])
                        if len(found) >= MAX_LEAKS:
                            return found
        return found

    @staticmethod
    def haystacks(answer: str, transcript: str) -> Iterator[list[str]]:
        """The texts searched, as lists of words: the answer, the transcript,
        and each string value of the transcript's JSON (whole: a file a tool
        read comes back as one JSON string, escaped in the raw line)."""
        if answer:
            yield _tokens(answer)
        if transcript:
            yield _tokens(transcript)
            for document in _json_documents(transcript):
                for value in _json_strings(document):
                    if len(value) >= MIN_CHARS:
                        yield _tokens(value)


def describe(leaks: Sequence[Leak]) -> str:
    """One line for a record's ``error``."""
    first = leaks[0]
    more = f" and {len(leaks) - 1} more" if len(leaks) > 1 else ""
    shown = first.text if len(first.text) <= 120 else first.text[:117] + "..."
    return (f"contaminated: the output holds text only the answer key has ({first.source}: {shown!r}{more}); "
            "never graded")
