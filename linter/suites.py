"""skill-creator eval suites (``evals.json`` and trigger sets), read as docs/format.md
("skill-creator suites") says. Parsing never raises: every problem is a :class:`SuiteProblem`.
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from .textfile import Span, TextDocument

# probejson and csv are imported where a suite is parsed: discovery imports
# this module at every start (docs/performance.md).

EVALS_FILE = "evals.json"
TRIGGER_JSON_FILES = frozenset({
    "trigger-evals.json", "trigger_evals.json", "trigger-eval.json", "trigger_eval.json",
    "trigger-eval-set.json", "trigger_eval_set.json", "eval_set.json",
})
"""Names a JSON trigger set goes by (skill-creator names none: its viewer
exports ``eval_set.json``, its script takes ``--eval-set <trigger-eval.json>``)."""
SUITE_NAMES = frozenset({EVALS_FILE, "prompts.csv", *TRIGGER_JSON_FILES})
"""The file names a folder walk picks up as suites (in an ``evals`` folder)."""

EVALS, TRIGGERS = "evals", "triggers"
TRUE_WORDS = frozenset({"true", "yes", "1", "y"})
FALSE_WORDS = frozenset({"false", "no", "0", "n"})


def is_named_suite(path: Path) -> bool:
    """Whether ``path``, named on the command line, is read as a suite."""
    return path.name in SUITE_NAMES or path.name.endswith(".prompts.csv")


def is_walked_suite(path: Path) -> bool:
    """Whether a folder walk reads ``path`` as a suite: named one of :data:`SUITE_NAMES`, in
    a folder named ``evals`` or one level below one."""
    return path.name in SUITE_NAMES and "evals" in (path.parent.name, path.parent.parent.name)


class SuiteProblem(NamedTuple):
    """A problem of the file's shape: where, and what (SE801 or SE802)."""

    code: str
    span: Span
    message: str


class EvalCase(NamedTuple):
    """One entry of ``evals``, as far as it could be read."""

    index: int
    id: int | None
    prompt: str | None
    expected_output: str | None
    files: tuple[tuple[int, str], ...]
    """``(index in files, path)`` for each string entry."""
    expectations: tuple[tuple[int, str], ...]
    """``(index, text)`` of each expectation."""
    expectations_key: str | None
    """``expectations`` or ``assertions``: the key they were read from (``None``: neither)."""


class TriggerQuery(NamedTuple):
    """One query of a trigger set."""

    index: int
    id: str
    query: str
    should_trigger: bool
    span: Span
    """Where the query's text is."""
    flag_span: Span


class Suite:
    """A parsed suite file: :attr:`kind`, its cases, and its problems."""

    def __init__(self, document: TextDocument) -> None:
        self.document = document
        self.path = document.path
        self.kind = EVALS
        self.json: ProbeJson | None = None
        self.skill_name: str | None = None
        self.skill_name_span: Span | None = None
        self.evals: list[EvalCase] = []
        self.triggers: list[TriggerQuery] = []
        self.problems: list[SuiteProblem] = []

    def value_span(self, *parts: str | int) -> Span:
        """The span of the JSON value at ``parts`` (the first line when the file is no JSON)."""
        from .probejson import pointer

        return self.first_line_span() if self.json is None else self.json.positions().value_span(pointer(*parts))

    def key_span(self, *parts: str | int) -> Span:
        """The span of the key of the JSON value at ``parts`` (the first line when the file is no JSON)."""
        from .probejson import pointer

        return self.first_line_span() if self.json is None else self.json.positions().key_span(pointer(*parts))

    def first_line_span(self) -> Span:
        """The span of the file's first line (at least one column)."""
        first = self.document.lines[0] if self.document.lines else ""
        return Span.at(self.path, 1, 1, 1, max(len(first), 1) + 1)

    def _problem(self, code: str, span: Span, message: str) -> None:
        self.problems.append(SuiteProblem(code, span, message))

    def _wrong_type(self, value: Any, wanted: str, *parts: str | int) -> None:
        """An SE802 at the value at ``parts``: "<its path> is <its type>: ``wanted``"."""
        label = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts).lstrip(".")
        self._problem("SE802", self.value_span(*parts), f"{label} is {_type_name(value)}: {wanted}")


def parse_suite(document: TextDocument) -> Suite:
    """The suite in ``document``: a CSV file, or a JSON file read as a trigger set when its
    name says so or (named otherwise) it holds a list, else as an eval suite."""
    from .probejson import ProbeJson

    suite = Suite(document)
    name = document.path.name
    if name.lower().endswith(".csv"):
        suite.kind = TRIGGERS
        _parse_csv(suite)
        return suite
    parsed = ProbeJson.parse(document)
    if parsed.syntax_error is not None:
        error = parsed.syntax_error
        line, column = error.position.line, error.position.column
        suite._problem("SE801", Span.at(document.path, line, column, line, column + 1),
                       f"{name} is not valid JSON: {error.message} (line {line}, column {column})")
        return suite
    if parsed.too_deep is not None:
        suite._problem("SE801", parsed.problem_span(parsed.too_deep),
                       f"{name} nests too deeply to read; flatten it")
        return suite
    suite.json = parsed
    data = parsed.data
    if name == EVALS_FILE or not (name in TRIGGER_JSON_FILES or isinstance(data, list)):
        _read_evals(suite, data)
    else:
        suite.kind = TRIGGERS
        _read_trigger_json(suite, data)
    return suite


_TYPE_NAMES = {type(None): "null", bool: "a boolean", int: "an integer", float: "a number", str: "a string",
               list: "an array"}


def _type_name(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), "an object")


def _read_evals(suite: Suite, data: Any) -> None:
    name = suite.path.name
    if isinstance(data, list):
        suite._problem("SE802", suite.value_span(),
                       f"{name} is a JSON array: an eval suite is an object {{\"skill_name\": ..., \"evals\": [...]}} "
                       "(a list of {query, should_trigger} is a trigger set: name it trigger-evals.json)")
        return
    if not isinstance(data, dict):
        suite._problem("SE802", suite.value_span(), f"{name} holds {_type_name(data)}: an eval suite is an object "
                       "{\"skill_name\": ..., \"evals\": [...]}")
        return
    skill_name = data.get("skill_name")
    if isinstance(skill_name, str):
        suite.skill_name = skill_name
        suite.skill_name_span = suite.value_span("skill_name")
    elif skill_name is not None:
        suite._problem("SE802", suite.value_span("skill_name"),
                       f"`skill_name` is {_type_name(skill_name)}: it must be a string")
    evals = data.get("evals")
    if evals is None:
        suite._problem("SE802", suite.json.positions().object_span(""), "the suite has no `evals` array: nothing to run")
        return
    if not isinstance(evals, list):
        suite._problem("SE802", suite.value_span("evals"),
                       f"`evals` is {_type_name(evals)}: it must be an array of evals")
        return
    for index, entry in enumerate(evals):
        if isinstance(entry, dict):
            suite.evals.append(_read_eval(suite, index, entry))
        else:
            suite._wrong_type(entry, "each eval is an object with `id`, `prompt` and `expectations`",
                              "evals", index)


def _read_eval(suite: Suite, index: int, entry: dict) -> EvalCase:
    where = ("evals", index)
    eval_id = _field(suite, entry, where, "id", "skill-creator's ids are integers", "give it a unique integer")
    prompt = _field(suite, entry, where, "prompt", "it must be a string", "nothing to give the agent")
    expected = _field(suite, entry, where, "expected_output", "it must be a string")
    files: list[tuple[int, str]] = []
    raw_files = entry.get("files")
    if raw_files is not None and not isinstance(raw_files, list):
        suite._wrong_type(raw_files, "it must be an array of paths", *where, "files")
    for position, item in enumerate(raw_files if isinstance(raw_files, list) else ()):
        if isinstance(item, str):
            files.append((position, item))
        else:
            suite._wrong_type(item, "it must be a path (a string)", *where, "files", position)
    expectations: list[tuple[int, str]] = []
    key = "expectations" if "expectations" in entry else "assertions" if "assertions" in entry else None
    raw = entry.get(key)
    if key is not None and not isinstance(raw, list):
        suite._wrong_type(raw, "it must be an array of statements", *where, key)
    for position, item in enumerate(raw if isinstance(raw, list) else ()):
        text = _expectation_text(item)
        if text is None:
            suite._wrong_type(item, "an expectation is a string (or an object with a `description`)",
                              *where, key, position)
        else:
            expectations.append((position, text))
    return EvalCase(index, eval_id, prompt, expected, tuple(files), tuple(expectations), key)


def _field(suite: Suite, entry: dict, where: tuple, key: str, wanted: str, missing: str = "") -> Any:
    """``entry[key]`` when it is an integer (``id``) or a string, else ``None`` and an SE802
    (a missing one too, when ``missing`` says why it is needed)."""
    value = entry.get(key)
    if value is None and missing:
        suite._problem("SE802", suite.key_span(*where), f"evals[{where[1]}] has no `{key}`: {missing}")
    elif value is not None and (isinstance(value, bool) or not isinstance(value, int if key == "id" else str)):
        suite._wrong_type(value, wanted, *where, key)
        return None
    return value


def _expectation_text(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in ("description", "text", "assertion"):
            if isinstance(item.get(key), str):
                return item[key]
    return None


def _read_trigger_json(suite: Suite, data: Any) -> None:
    if isinstance(data, dict) and isinstance(data.get("queries"), list):
        items, prefix = data["queries"], ("queries",)
    elif isinstance(data, list):
        items, prefix = data, ()
    else:
        suite._problem("SE802", suite.value_span(), f"{suite.path.name} holds {_type_name(data)}: "
                       "a trigger set is an array of {\"query\": ..., \"should_trigger\": ...}")
        return
    if isinstance(data, dict) and isinstance(data.get("skill_name"), str):
        suite.skill_name = data["skill_name"]
        suite.skill_name_span = suite.value_span("skill_name")
    for index, entry in enumerate(items):
        if not isinstance(entry, dict):
            suite._problem("SE802", suite.value_span(*prefix, index),
                           f"entry {index} is {_type_name(entry)}: "
                           "each is an object {\"query\": ..., \"should_trigger\": ...}")
            continue
        bad = False
        for key, kind, wanted in (("query", str, "it must be a string"),
                                  ("should_trigger", bool, "it must be true or false")):
            if not isinstance(entry.get(key), kind):
                found = key in entry
                what = _type_name(entry[key]) if found else "missing"
                suite._problem("SE802", suite.value_span(*prefix, index, *((key,) if found else ())),
                               f"entry {index}: `{key}` is {what}: {wanted}")
                bad = True
        if bad:
            continue
        entry_id = entry.get("id")
        if not isinstance(entry_id, (str, int)) or isinstance(entry_id, bool):
            entry_id = f"q{index + 1}"
        suite.triggers.append(TriggerQuery(
            index, str(entry_id), entry["query"], entry["should_trigger"],
            suite.value_span(*prefix, index, "query"), suite.value_span(*prefix, index, "should_trigger")))


def _parse_csv(suite: Suite) -> None:
    import csv

    document, name = suite.document, suite.path.name
    lines = document.lines
    reader = csv.reader(lines, strict=True)
    try:
        header = next(reader, None)
    except csv.Error as error:
        suite._problem("SE801", document.line_span(1), f"{name} is not valid CSV: {error}")
        return
    if header is None or not any(cell.strip() for cell in header):
        suite._problem("SE801", document.line_span(1),
                       f"{name} is empty: a trigger set needs the header id,should_trigger,prompt")
        return
    columns = [cell.strip().lower() for cell in header]
    query_column = next((columns.index(c) for c in ("prompt", "query") if c in columns), None)
    flag_column = columns.index("should_trigger") if "should_trigger" in columns else None
    id_column = columns.index("id") if "id" in columns else None
    if query_column is None or flag_column is None:
        missing = [c for c, found in (("should_trigger", flag_column), ("prompt", query_column)) if found is None]
        suite._problem("SE802", document.line_span(1), f"{name}'s header has no {' and no '.join(missing)} "
                       "column: a trigger set's header is id,should_trigger,prompt")
        return
    width = max(query_column, flag_column) + 1
    number = 0
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader, None)
        except csv.Error as error:
            suite._problem("SE801", document.line_span(min(reader.line_num, len(lines))),
                           f"{name} is not valid CSV: {error}")
            return
        if row is None:
            return
        if not any(cell.strip() for cell in row):
            continue
        number += 1
        if len(row) < width:
            suite._problem("SE802", document.line_span(line), f"row {number} has {len(row)} "
                           f"column{'s' if len(row) != 1 else ''}, fewer than the header's {len(columns)}")
            continue
        flag_text = row[flag_column].strip().lower()
        flag = True if flag_text in TRUE_WORDS else False if flag_text in FALSE_WORDS else None
        flag_span = _cell_span(document, line, row[flag_column])
        if flag is None:
            suite._problem("SE802", flag_span, f"should_trigger is {row[flag_column]!r}: it must be true or false")
            continue
        row_id = row[id_column].strip() if id_column is not None and id_column < len(row) else ""
        suite.triggers.append(TriggerQuery(number - 1, row_id or f"row{number}", row[query_column], flag,
                                           _cell_span(document, line, row[query_column]), flag_span))


def _cell_span(document: TextDocument, line: int, value: str) -> Span:
    """The span of a CSV cell's ``value`` on ``line`` (the whole line when not found as written)."""
    text = document.lines[line - 1] if 0 < line <= len(document.lines) else ""
    at = text.find(value) if value else -1
    if at < 0 or "\n" in value:
        return document.line_span(line)
    return Span.at(document.path, line, at + 1, line, at + len(value) + 1)


# -- the skill a suite is of ----------------------------------------------------------------


def implied_skill_name(path: Path) -> str | None:
    """The skill a suite's place names: ``evals/<skill>/prompts.csv``, ``evals/<skill>.prompts.csv``."""
    name = path.name
    if name.endswith(".prompts.csv") and len(name) > len(".prompts.csv"):
        return name[: -len(".prompts.csv")]
    if path.parent.parent.name == "evals" and path.parent.name != "evals":
        return path.parent.name
    return None


def relative_to_root(path: Path, root: Path) -> str:
    """``path`` relative to ``root``, with forward slashes (as it is when it has no relative form)."""
    try:
        return Path(os.path.relpath(path, root)).as_posix()
    except ValueError:
        return path.as_posix()


# -- the context rules read ----------------------------------------------------------------


class SuiteContext:
    """One suite file, read through a :class:`~skill_eval.linter.session.LintSession`, and its skill."""

    def __init__(self, session, path: Path) -> None:
        self.session = session
        self.path = path
        self.folder = path.parent

    @cached_property
    def document(self):
        """The file's text, or why it cannot be read (a ``FileProblem``)."""
        return self.session.load(self.path)

    @cached_property
    def suite(self) -> Suite | None:
        """The parsed suite (``None`` when the file cannot be read)."""
        document = self.document
        return parse_suite(document) if isinstance(document, TextDocument) else None

    @cached_property
    def _skill(self) -> tuple[Path | None, bool]:
        """The suite's SKILL.md, with whether the suite lies in its folder: the nearest above
        it, else the one whose folder or front-matter ``name`` is :attr:`wanted_name`."""
        from .session import FileProblem
        from .workspace import SKILL_FILE

        nearest = self.session.nearest(self.folder, SKILL_FILE)
        if nearest is not None:
            found = self.session.resolve(nearest.parent, nearest.name)
            return (None, False) if isinstance(found, FileProblem) else (found, True)
        name = self.wanted_name
        named = self.session.query("skill-named", name) if name else ()
        return (Path(named[0]) if len(named) == 1 else None), False

    @property
    def skill_path(self) -> Path | None:
        """The SKILL.md of the suite (see :attr:`_skill`)."""
        return self._skill[0]

    @property
    def inside_skill(self) -> bool:
        """Whether the suite lies in its skill's folder (found walking up)."""
        return self._skill[1]

    @property
    def wanted_name(self) -> str | None:
        """The skill this suite says it is of: ``skill_name``, or :func:`implied_skill_name`."""
        suite = self.suite
        if suite is not None and suite.skill_name:
            return suite.skill_name
        return implied_skill_name(self.path)

    @property
    def skill_root(self) -> Path:
        """What ``files`` are relative to: the skill's folder, else the one above the suite's ``evals`` folder."""
        skill = self.skill_path
        if skill is not None:
            return skill.parent
        folder = self.folder
        while folder.name != "evals" and folder != self.session.root and folder.parent != folder:
            folder = folder.parent
        return folder.parent if folder.name == "evals" else self.folder

    def skill_field(self, key: str) -> str | None:
        """A string field of the skill's front matter (``None`` when it has none or is unreadable)."""
        skill = self.skill_path
        return None if skill is None else _front_matter_string(self.session, skill, key, resolved=True)


def _front_matter_string(session, path: Path, key: str, resolved: bool = False) -> str | None:
    """The string ``key`` of the SKILL.md front matter at ``path`` (``None`` when none or unreadable)."""
    from .rules.frontmatter._parse import parsed_front_matter, usable

    loaded = session.load(path, resolved=resolved)
    parsed = loaded.derived(parsed_front_matter) if isinstance(loaded, TextDocument) else None
    entry = parsed.get(key) if parsed is not None and usable(parsed) else None
    return entry.string if entry is not None else None


def skills_named(session, name: str) -> tuple[str, ...]:
    """The workspace's SKILL.md files whose folder's or front-matter ``name`` is ``name``."""
    from .workspace import SKILL_FILE

    walked = session._walked_fixtures
    if walked is not None:
        candidates = sorted(str(p) for p in walked if p.name == SKILL_FILE)
    else:
        candidates = [str(p) for p in session.reader.walk_files(session.root, frozenset({SKILL_FILE}),
                                                                 exclude=session.exclusion or None)]
    return tuple(text for text in candidates if Path(text).parent.name == name
                 or _front_matter_string(session, Path(text), "name") == name)


def configured_suites(path: Path, root: Path, globs: tuple[str, ...], exclude=None) -> set[Path]:
    """The files below ``path`` (a folder, or one file) that the config's ``[suites] paths``
    globs (relative to the workspace ``root``, :mod:`fnmatch`) name, walked as discovery walks."""
    if not globs:
        return set()
    import fnmatch

    from .reader import SKIPPED_FOLDERS, walk_folders

    patterns = tuple(glob.strip().lstrip("/") for glob in globs if glob.strip().strip("/"))

    def named(candidate: str) -> bool:
        relative = os.path.relpath(candidate, root).replace(os.sep, "/")
        return not relative.startswith("../") and any(fnmatch.fnmatchcase(relative, p) for p in patterns)

    if not os.path.isdir(path):
        return {path} if named(str(path)) and os.path.isfile(path) else set()
    found = set()
    for folder, files, _subfolders in walk_folders(path, SKIPPED_FOLDERS, exclude=exclude):
        for name in files:
            candidate = os.path.join(folder, name)
            if named(candidate) and (exclude is None or not exclude(candidate)) and os.path.isfile(candidate):
                found.add(Path(candidate))
    return found
