"""What rules read: a context per probe, skill, output spec and workspace,
over one :class:`~skill_eval.linter.session.LintSession`.

Everything is computed lazily and at most once per session: a rule that
needs the window of a probe asks ``context.window``; the SKILL.md behind it is
read through the session's reader and parsed once however many probes use it.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TypeVar

from .config import Config
from .diagnostics import Diagnostic
from .records import ProbeFacts
from .markdown import Heading, MarkdownDocument, Window, markdown_of
from .outputspec import OutputSpec, output_spec_of
from .probejson import JsonPositions, ProbeJson, pointer
from .quotes import QuoteMatch, find_quote
from .session import RECORDS_MAX_SIZE, FileProblem, LintSession, _answer_of
from .textfile import Span, TextDocument
from .workspace import OUTPUT_SPEC_FILE, SKILL_FILE

Parsed = TypeVar("Parsed")

__all__ = [
    "RECORDS_MAX_SIZE", "FileProblem", "LintSession", "OutputSpecContext", "ProbeContext", "ProbeFacts",
    "SkillContext", "WorkspaceContext", "compute_probe_facts",
]


def _parsed(document: TextDocument | FileProblem | None, parse: Callable[[TextDocument], Parsed]) -> Parsed | None:
    """``parse(document)`` when ``document`` could be read, else ``None``."""
    return parse(document) if isinstance(document, TextDocument) else None


class ProbeContext:
    """One probe: its probe.json and, lazily, everything it references."""

    def __init__(self, session: LintSession, json_path: Path) -> None:
        self.session = session
        self.json_path = json_path
        self.folder = json_path.parent

    @property
    def config(self) -> Config:
        return self.session.config

    @cached_property
    def document(self) -> TextDocument | FileProblem:
        """probe.json's text, or why it cannot be read."""
        return self.session.load(self.json_path)

    @cached_property
    def probe(self) -> ProbeJson | None:
        """The parsed probe.json (``None`` if it cannot be read)."""
        return _parsed(self.document, ProbeJson.parse)

    @cached_property
    def data(self) -> dict[str, Any] | None:
        """probe.json's object, when it parses to one."""
        probe = self.probe
        return probe.data if probe is not None and isinstance(probe.data, dict) else None

    def get(self, key: str, kind: type | tuple[type, ...]) -> Any:
        """``data[key]`` when present and of ``kind`` (bools are not ints), else ``None``."""
        data = self.data
        if data is None:
            return None
        value = data.get(key)
        if isinstance(value, bool) and kind in (int, (int,)):
            return None
        return value if isinstance(value, kind) else None

    @property
    def probe_id(self) -> str | None:
        return self.get("id", str)

    @property
    def version(self) -> int:
        value = self.get("version", int)
        return value if value is not None else 1

    @cached_property
    def disabled_codes(self) -> frozenset[str]:
        """Codes in probe.json's ``x-skill-eval-disable``."""
        value = self.get("x-skill-eval-disable", list)
        return frozenset(v.strip().upper() for v in value or () if isinstance(v, str))

    @cached_property
    def positions(self) -> JsonPositions | None:
        """Where probe.json's keys and values are: its syntax tree, parsed when a
        rule first asks for a span and shared by every span asked of this context
        (``None`` if probe.json cannot be read). The tree takes ~8 KB for a
        450-byte probe and the session keeps its contexts: :meth:`release_unit`
        lets it go once the probe's unit is linted."""
        probe = self.probe
        return probe.positions() if probe is not None else None

    @cached_property
    def unit_memo(self) -> dict[str, Any]:
        """What the rules derive of this probe and share while its unit is
        linted (the artifact rules' reading of question.md, with its markdown
        blocks and structure: :func:`.rules.artifact._common.reading_of`).
        Too large to keep for a whole run: :meth:`release_unit` drops it once
        the unit is done."""
        return {}

    def release_unit(self) -> None:
        """Drop what only the probe's unit needed: :attr:`positions` and
        :attr:`unit_memo` (a later rule derives them again)."""
        self.__dict__.pop("positions", None)
        self.__dict__.pop("unit_memo", None)

    def value_span(self, *parts: str | int) -> Span:
        """The span of the value at ``parts`` (e.g. ``"defects", 0, "quote"``)."""
        positions = self.positions
        return Span.file_start(self.json_path) if positions is None else positions.value_span(pointer(*parts))

    def key_span(self, *parts: str | int) -> Span:
        positions = self.positions
        return Span.file_start(self.json_path) if positions is None else positions.key_span(pointer(*parts))

    def edit_span(self, *parts: str | int, key: bool = False) -> Span | None:
        """Where a fix may edit the value (with ``key``, the key) at ``parts``,
        or ``None`` (:meth:`~skill_eval.linter.probejson.JsonPositions.edit_span`)."""
        positions = self.positions
        return None if positions is None else positions.edit_span(pointer(*parts), key=key)

    def _reference(self, key: str, default_name: str | None, walk_name: str | None) -> Path | FileProblem | None:
        if self.data is None:
            return None
        value = self.data.get(key)
        if isinstance(value, str) and value.strip():
            return self.session.resolve(self.folder, value)
        if value is not None:
            return None  # a schema violation, reported by SE002
        if default_name is not None:
            return self.session.resolve(self.folder, default_name, remember=False)
        found = self.session.nearest(self.folder, walk_name, remember=False) if walk_name else None
        if found is None:
            return FileProblem(self.folder / walk_name, "missing",
                               f"no {walk_name} found in this probe's folder or above it (up to the workspace root)",
                               f"add a {walk_name} or set `{key}` in probe.json")
        return self.session.resolve(found.parent, found.name)

    @cached_property
    def artifact_ref(self) -> Path | FileProblem | None:
        """The artifact's path (``question``, default ``question.md``)."""
        return self._reference("question", "question.md", None)

    @cached_property
    def skill_ref(self) -> Path | FileProblem | None:
        return self._reference("skill", None, SKILL_FILE)

    @cached_property
    def output_spec_ref(self) -> Path | FileProblem | None:
        return self._reference("output_spec", None, OUTPUT_SPEC_FILE)

    def _loaded(self, ref: Path | FileProblem | None) -> TextDocument | FileProblem | None:
        if ref is None or isinstance(ref, FileProblem):
            return ref
        return self.session.load(ref, resolved=True)

    @cached_property
    def artifact_document(self) -> TextDocument | FileProblem | None:
        return self._loaded(self.artifact_ref)

    @property
    def artifact(self) -> TextDocument | None:
        """The artifact's text, when it can be read."""
        document = self.artifact_document
        return document if isinstance(document, TextDocument) else None

    @cached_property
    def skill_document(self) -> TextDocument | FileProblem | None:
        return self._loaded(self.skill_ref)

    @property
    def skill(self) -> MarkdownDocument | None:
        """The parsed SKILL.md, when it can be read."""
        return _parsed(self.skill_document, markdown_of)

    @cached_property
    def output_spec_document(self) -> TextDocument | FileProblem | None:
        return self._loaded(self.output_spec_ref)

    @property
    def output_spec(self) -> OutputSpec | None:
        return _parsed(self.output_spec_document, output_spec_of)

    @property
    def step_heading(self) -> str | None:
        return self.get("step_heading", str)

    @cached_property
    def heading_matches(self) -> list[Heading] | None:
        """Headings ``step_heading`` names (``None`` when there is no skill or heading)."""
        skill, step_heading = self.skill, self.step_heading
        if skill is None or step_heading is None or not step_heading.strip():
            return None
        return skill.find_headings(step_heading)

    @cached_property
    def window(self) -> Window | None:
        """The SKILL.md section the probe exercises, when it resolves to one."""
        matches = self.heading_matches
        if not matches or len(matches) != 1:
            return None
        return self.skill.window(matches[0])

    def heading_span(self, heading: Heading) -> Span:
        """The span of ``heading`` in SKILL.md."""
        return Span.at(self.skill_document.path, heading.line, heading.column, heading.line, heading.end_column)

    @cached_property
    def defects(self) -> list[tuple[int, dict[str, Any]]]:
        """``(index, defect)`` for every defect entry that is an object."""
        value = self.get("defects", list)
        return [(i, d) for i, d in enumerate(value or ()) if isinstance(d, dict)]

    @cached_property
    def quote_matches(self) -> dict[int, QuoteMatch]:
        """Defect index -> where its quote occurs in the artifact (string quotes only)."""
        artifact = self.artifact
        if artifact is None:
            return {}
        return {i: find_quote(artifact.text, d["quote"]) for i, d in self.defects if isinstance(d.get("quote"), str)}

    @property
    def present_count(self) -> int:
        """How many defects are present (their quote found exactly once)."""
        return sum(1 for match in self.quote_matches.values() if match.found)

    @cached_property
    def graded_fields(self) -> list[tuple[int, str]]:
        """``(defect index, field name)`` for every field a ``caught_when`` names."""
        fields = []
        for index, defect in self.defects:
            caught_when = defect.get("caught_when")
            if isinstance(caught_when, dict):
                fields.extend((index, name) for name in caught_when)
        return fields


class _FileContext:
    """One markdown fixture file read through the session."""

    def __init__(self, session: LintSession, path: Path) -> None:
        self.session = session
        self.path = path

    @property
    def config(self) -> Config:
        return self.session.config

    @cached_property
    def document(self) -> TextDocument | FileProblem:
        return self.session.load(self.path)


class SkillContext(_FileContext):
    """One SKILL.md."""

    @property
    def markdown(self) -> MarkdownDocument | None:
        return _parsed(self.document, markdown_of)


class OutputSpecContext(_FileContext):
    """One output-spec.md and the skills that teach its fields."""

    @property
    def spec(self) -> OutputSpec | None:
        return _parsed(self.document, output_spec_of)

    @cached_property
    def skills(self) -> list[MarkdownDocument]:
        """The SKILL.md nearest above this spec, plus any a probe below names
        (the probes' references are read from their facts when the engine
        has them: no probe is loaded for this)."""
        session = self.session
        nearest = session.nearest(self.path.parent, SKILL_FILE)
        paths = [nearest] if nearest is not None else []
        named = {str(path) for path in paths}
        this = str(self.path)
        for probe_path in session.probe_paths_below(self.path.parent):
            _artifact, skill, spec = session.probe_refs(probe_path)
            if spec == this and isinstance(skill, str) and skill not in named:
                named.add(skill)
                paths.append(Path(skill))
        loaded = [session.load(path) for path in paths]
        return [markdown_of(document) for document in loaded if isinstance(document, TextDocument)]


def compute_probe_facts(probe: ProbeContext, rules: Iterable, digest: bool = True) -> ProbeFacts:
    """The :class:`ProbeFacts` of ``probe`` for the workspace-wide ``rules``
    that compare probes (a rule that crashes: SE000 for probe.json). Without
    ``digest`` the digest is left empty (only the cache reads it: :func:`with_digest`).
    The facts are the last thing a unit computes of its probe: the probe's
    syntax tree and unit memo are released after them (:meth:`ProbeContext.release_unit`)."""
    values: dict[str, Any] = {}
    errors: dict[str, Diagnostic] = {}
    for rule in rules:
        try:
            values[rule.code] = rule.probe_facts(probe)
        except Exception as error:  # noqa: BLE001 - a crashing rule must not stop the run
            import traceback

            from .rules.files.se000_internal_error import InternalError

            errors[rule.code] = InternalError.from_exception(rule, error, probe.json_path, traceback.format_exc())
    refs = (_answer_of(probe.artifact_ref), _answer_of(probe.skill_ref), _answer_of(probe.output_spec_ref))
    disabled = probe.disabled_codes or _NO_CODES
    errors = errors or _NO_ERRORS
    probe.release_unit()
    facts = ProbeFacts(values, refs, disabled, errors)
    return with_digest(facts) if digest else facts


_NO_CODES: frozenset[str] = frozenset()
_NO_ERRORS: dict[str, Diagnostic] = {}
"""What most probes' facts hold, one object for all (never mutated), not one
empty set and dict per probe."""


def with_digest(facts: ProbeFacts) -> ProbeFacts:
    """``facts`` with their digest (computed now if they were made without)."""
    if facts.digest:
        return facts
    import pickle
    from ._hashing import blake2b

    data = pickle.dumps((facts.values, facts.refs, sorted(facts.disabled),
                         [(code, error.message) for code, error in facts.errors.items()]), protocol=5)
    return facts._replace(digest=blake2b(data, digest_size=16).digest())


class WorkspaceContext:
    """Every probe of the workspace, through the facts the engine computed of
    each (the reduce step of the workspace-wide rules), and the probes being
    linted, whose findings the rules report."""

    def __init__(self, session: LintSession, linted: Iterable[Path]) -> None:
        self.session = session
        self.linted: frozenset[Path] = frozenset(linted)
        """The probe.json paths being linted."""
        self.fact_errors: list[Diagnostic] = []
        """SE000 diagnostics of probes whose facts a rule failed to compute."""

    def probe_facts(self, rule) -> Iterator[tuple[Path, Any]]:
        """``(probe.json path, facts)`` for every probe whose ``rule.probe_facts``
        is not ``None``, in :attr:`~LintSession.all_probe_paths` order, computed
        here when the engine has not; a probe whose facts the rule failed to
        compute is left out, its SE000 in :attr:`fact_errors`."""
        from .engine import enabled_rules, fact_rules

        session = self.session
        known = session.probe_facts
        code = rule.code
        rules = None
        for path in session.all_probe_paths:
            facts = known.get(path)
            if facts is None or (code not in facts.values and code not in facts.errors):
                if rules is None:  # every rule that compares probes, so that the probe is visited once
                    rules = fact_rules(enabled_rules(session.config))
                    rules = rules if any(r.code == code for r in rules) else [*rules, rule]
                facts = known[path] = compute_probe_facts(session.probe(path), rules)
            error = facts.errors.get(code)
            if error is not None:
                self.fact_errors.append(error)
                continue
            value = facts.values[code]
            if value is not None:
                yield path, value

    @property
    def config(self) -> Config:
        return self.session.config
