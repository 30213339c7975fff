"""Hover, completion, navigation, code lens, rename and code actions.

Each function takes the server and the request's params and answers from the
engine's own model (``ProbeContext``, ``MarkdownDocument``, ``OutputSpec``,
``find_quote``, rule docs and fixes); nothing here re-implements a rule. The
cursor's place in probe.json is found by :mod:`.jsoncursor`, which copes with
half-typed JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from lsprotocol import types

from ..linter.diagnostics import Diagnostic, TextEdit
from ..linter.markdown import Heading, MarkdownDocument, markdown_of, normalize_heading_text
from ..linter.outputspec import OutputSpec, output_spec_of
from ..linter.probejson import pointer, probe_schema
from ..linter.quotes import find_quote
from ..linter.rules import get_rule
from ..linter.textfile import Span, TextDocument
from ..linter.workspace import OUTPUT_SPEC_FILE, PROBE_FILE, SKILL_FILE
from .convert import contains, overlaps, path_of, uri_of
from .jsoncursor import JsonCursor, locate
from .textsync import engine_text

if TYPE_CHECKING:  # pragma: no cover
    from .server import SkillEvalLanguageServer
    from .state import WorkspaceState

DISABLE_KEY = "x-skill-eval-disable"
FIX_ALL_KIND = "source.fixAll.skill-eval"


# -- the document under the cursor ---------------------------------------------------------


@dataclass
class Place:
    """A request's document: its path, engine state, text and cursor offset."""

    ls: "SkillEvalLanguageServer"
    path: Path
    state: "WorkspaceState"
    document: TextDocument
    offset: int
    position: types.Position

    @property
    def uri(self) -> str:
        return uri_of(self.path)

    def lsp_range(self, start: int, end: int) -> types.Range:
        return self.ls.converter.range(self.document.span(start, end))

    def cursor(self) -> JsonCursor | None:
        return locate(self.document.text, self.offset) if self.path.name == PROBE_FILE else None


def place(ls: "SkillEvalLanguageServer", uri: str, position: types.Position) -> Place | None:
    path = path_of(uri)
    if path is None:
        return None
    state = ls.state_for(path)
    text = ls.buffers.get(path)
    if text is not None:
        document = TextDocument(path, engine_text(text))
    else:
        document = state.document(path)
        if document is None:
            return None
    engine = ls.converter.engine_position(path, position)
    return Place(ls, path, state, document, document.offset(engine), position)


# -- what a probe reads -----------------------------------------------------------------------


def probe_files(place: Place) -> tuple[Path | None, Path | None, Path | None]:
    """(artifact, SKILL.md, output-spec.md) of the probe at ``place`` — from the
    engine when probe.json parses, else the defaults (the user is typing)."""
    session = place.state.session
    context = session.probe(place.path)
    folder = place.path.parent

    def pick(ref, fallback):
        return ref if isinstance(ref, Path) else fallback

    try:
        artifact, skill, spec = context.artifact_ref, context.skill_ref, context.output_spec_ref
    except Exception:  # noqa: BLE001 - a half-written probe.json: fall back to defaults
        artifact = skill = spec = None
    return (
        pick(artifact, folder / "question.md"),
        pick(skill, session.nearest(folder, SKILL_FILE)),
        pick(spec, session.nearest(folder, OUTPUT_SPEC_FILE)),
    )


def load_text(ls: "SkillEvalLanguageServer", state: "WorkspaceState", path: Path | None) -> TextDocument | None:
    if path is None:
        return None
    text = ls.buffers.get(path)
    if text is not None:
        return TextDocument(path, engine_text(text))
    return state.document(path)


def skill_markdown(place: Place) -> tuple[Path, TextDocument, MarkdownDocument] | None:
    _artifact, skill, _spec = probe_files(place)
    document = load_text(place.ls, place.state, skill)
    if document is None:
        return None
    return skill, document, markdown_of(document)


def output_spec(place: Place) -> tuple[Path, TextDocument, OutputSpec] | None:
    _artifact, _skill, spec = probe_files(place)
    document = load_text(place.ls, place.state, spec)
    if document is None:
        return None
    return spec, document, output_spec_of(document)


def heading_span(path: Path, heading: Heading) -> Span:
    return Span.at(path, heading.line, heading.column, heading.line, heading.end_column)


def _fence(text: str, language: str = "markdown") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _is_defect_part(path: tuple, name: str) -> bool:
    return len(path) == 3 and path[0] == "defects" and isinstance(path[1], int) and path[2] == name


def _caught_when_field(path: tuple) -> str | None:
    if len(path) >= 4 and path[0] == "defects" and isinstance(path[1], int) and path[2] == "caught_when":
        return path[3] if isinstance(path[3], str) else None
    return None


# -- hover -------------------------------------------------------------------------------------


def hover(ls: "SkillEvalLanguageServer", params: types.HoverParams) -> types.Hover | None:
    here = place(ls, params.text_document.uri, params.position)
    if here is None:
        return None
    parts: list[str] = []
    hover_range = None
    cursor = here.cursor()
    if cursor is not None and cursor.in_string:
        hover_range = here.lsp_range(cursor.start, cursor.end)
        if cursor.path == ("step_heading",) and not cursor.in_key:
            parts.append(_window_preview(here, cursor.value or ""))
        elif _is_defect_part(cursor.path, "quote") and not cursor.in_key:
            parts.append(_quote_preview(here, cursor.value or ""))
        elif cursor.in_key and _caught_when_field(cursor.path) is not None and len(cursor.path) == 4:
            parts.append(_field_preview(here, cursor.path[3]))
        elif cursor.path == ("id",) and not cursor.in_key and ls.id_hover is not None:
            parts.append(ls.id_hover(here.path) or "")
    converter = ls.converter
    for diagnostic in here.state.diagnostics_for(here.path):
        rng = converter.range(diagnostic.span)
        if contains(rng, params.position):
            rule = get_rule(diagnostic.code)
            doc = rule.documentation() if rule is not None else ""
            parts.append(f"**{diagnostic.code} {diagnostic.name}** ({diagnostic.severity.value}): {diagnostic.message}\n\n{doc}")
            hover_range = hover_range or rng
    parts = [part for part in parts if part]
    if not parts:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)), range=hover_range
    )


def _window_preview(here: Place, step_heading: str) -> str:
    found = skill_markdown(here)
    if found is None:
        return "No SKILL.md found for this probe."
    skill_path, _document, markdown = found
    matches = markdown.find_headings(step_heading) if step_heading.strip() else []
    if not matches:
        return f"`{step_heading}` matches no heading of {skill_path.name}."
    if len(matches) > 1:
        paths = ", ".join(f"`{path}`" for path in map(markdown.path_of, matches) if path is not None) or "none (rename a heading)"
        return f"`{step_heading}` matches {len(matches)} headings of {skill_path.name}: use one of {paths}."
    window = markdown.window(matches[0])
    return f"**Window** — {skill_path.name} lines {window.start_line}–{window.end_line}\n\n{_fence(window.text)}"


def _quote_preview(here: Place, quote: str) -> str:
    artifact_path, _skill, _spec = probe_files(here)
    artifact = load_text(here.ls, here.state, artifact_path)
    if artifact is None:
        return "The artifact cannot be read."
    match = find_quote(artifact.text, quote)
    if not match.occurrences:
        return f"Not found in {artifact_path.name}."
    previews = []
    for start, end in match.occurrences:
        first, last = artifact.position(start).line, artifact.position(max(end - 1, start)).line
        lines = "\n".join(f"{n:>3}  {artifact.lines[n - 1]}" for n in range(first, last + 1))
        label = f"line {first}" if first == last else f"lines {first}–{last}"
        previews.append(f"**{artifact_path.name}** {label}\n\n{_fence(lines, 'text')}")
    if match.ambiguous:
        previews.insert(0, f"Ambiguous: found {len(match.occurrences)} times (it does not count as present).")
    return "\n\n".join(previews)


def _field_preview(here: Place, name: str) -> str:
    found = output_spec(here)
    if found is None:
        return "No output-spec.md found for this probe."
    spec_path, document, spec = found
    field = spec.lookup(name)
    if field is None:
        return f"`{name}` is not a field of {spec_path.name}."
    text = "\n".join(document.lines[field.start_line - 1 : field.end_line]).strip("\n")
    return f"**Field `{field.name}`** — {spec_path.name} lines {field.start_line}–{field.end_line}\n\n{_fence(text)}"


# -- completion --------------------------------------------------------------------------------


def _schema_enum(*parts: str) -> list[str]:
    node: Any = probe_schema()
    for part in parts:
        node = node.get(part, {}) if isinstance(node, dict) else {}
    if isinstance(node, dict) and "$ref" in node:
        node = probe_schema().get("$defs", {}).get(node["$ref"].rsplit("/", 1)[-1], {})
    return list(node.get("enum", [])) if isinstance(node, dict) else []


def completion(ls: "SkillEvalLanguageServer", params: types.CompletionParams) -> types.CompletionList | None:
    here = place(ls, params.text_document.uri, params.position)
    if here is None or here.path.name != PROBE_FILE:
        return None
    cursor = here.cursor()
    if cursor is None:
        return None
    path = cursor.path
    items: list[tuple[str, str, types.CompletionItemKind]] = []  # (value, detail, kind)
    if cursor.in_key:
        field_of = path[:-1]
        if field_of == ():
            properties = probe_schema().get("properties", {})
            items = [(k, v.get("description", ""), types.CompletionItemKind.Property) for k, v in properties.items()
                     if k not in cursor.present_keys or k == path[-1]]
        elif len(field_of) == 2 and field_of[0] == "defects" and isinstance(field_of[1], int):
            properties = probe_schema()["$defs"]["defect"].get("properties", {})
            items = [(k, v.get("description", ""), types.CompletionItemKind.Property) for k, v in properties.items()
                     if k not in cursor.present_keys or k == path[-1]]
        elif len(field_of) == 3 and field_of[0] == "defects" and field_of[2] == "caught_when":
            found = output_spec(here)
            if found is not None:
                items = [(name, f"output-spec field ({', '.join(f.values) or 'free text'})", types.CompletionItemKind.Field)
                         for name, f in found[2].fields.items() if name not in cursor.present_keys or name == path[-1]]
    else:
        if path == ("step_heading",):
            found = skill_markdown(here)
            if found is not None:
                markdown = found[2]
                items = [(path, f"{'#' * h.level} line {h.line}", types.CompletionItemKind.Reference)
                         for h, path in zip(markdown.headings, markdown.heading_paths) if path is not None]
                items = list({value: (value, d, k) for value, d, k in items}.values())
        elif len(path) == 2 and path[0] == "shapes" and isinstance(path[1], int):
            items = [(s, "shape", types.CompletionItemKind.EnumMember) for s in _schema_enum("$defs", "shape")]
        elif path == ("kind",):
            items = [(s, "probe kind", types.CompletionItemKind.EnumMember) for s in _schema_enum("properties", "kind")]
        elif _is_defect_part(path, "shape"):
            context = here.state.session.probe(here.path)
            declared = context.get("shapes", list) or _schema_enum("$defs", "shape")
            items = [(s, "shape", types.CompletionItemKind.EnumMember) for s in declared if isinstance(s, str)]
        elif _caught_when_field(path) is not None:
            found = output_spec(here)
            field = found[2].lookup(_caught_when_field(path)) if found is not None else None
            if field is not None:
                items = [(v, f"a value of `{field.name}`", types.CompletionItemKind.Value) for v in field.values]
    if not items:
        return None
    completions = []
    for value, detail, kind in items:
        if cursor.in_string:
            start, end = cursor.content_start, cursor.content_end
            end = max(end, here.offset) if end is not None else here.offset
            new_text = json.dumps(value, ensure_ascii=False)[1:-1]
        else:
            start = end = here.offset
            new_text = json.dumps(value, ensure_ascii=False)
        completions.append(
            types.CompletionItem(
                label=value,
                kind=kind,
                detail=detail or None,
                filter_text=value,
                text_edit=types.TextEdit(range=here.lsp_range(start, end), new_text=new_text),
            )
        )
    return types.CompletionList(is_incomplete=False, items=completions)


# -- navigation ------------------------------------------------------------------------------------


def definition(ls: "SkillEvalLanguageServer", params: types.DefinitionParams) -> list[types.Location] | None:
    here = place(ls, params.text_document.uri, params.position)
    if here is None:
        return None
    cursor = here.cursor()
    if cursor is None or not cursor.in_string:
        return None
    converter = ls.converter
    path = cursor.path
    if path == ("step_heading",) and not cursor.in_key:
        found = skill_markdown(here)
        if found is None:
            return None
        skill_path, _document, markdown = found
        return [converter.location(heading_span(skill_path, h)) for h in markdown.find_headings(cursor.value or "")] or None
    if _is_defect_part(path, "quote") and not cursor.in_key:
        artifact_path, _skill, _spec = probe_files(here)
        artifact = load_text(ls, here.state, artifact_path)
        if artifact is None:
            return None
        match = find_quote(artifact.text, cursor.value or "")
        return [converter.location(artifact.span(s, e)) for s, e in match.occurrences] or None
    name = _caught_when_field(path)
    if name is not None and cursor.in_key and len(path) == 4:
        found = output_spec(here)
        field = found[2].lookup(name) if found is not None else None
        if field is None:
            return None
        return [converter.location(heading_span(found[0], field.heading))]
    if path in (("skill",), ("output_spec",), ("question",)) and not cursor.in_key and cursor.value:
        target = here.state.session.resolve(here.path.parent, cursor.value)
        if isinstance(target, Path) and target.is_file():
            zero = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
            return [types.Location(uri=uri_of(target), range=zero)]
    return None


def _heading_at(markdown: MarkdownDocument, line: int) -> Heading | None:
    """The heading whose lines include 1-based ``line``."""
    for heading in markdown.headings:
        if heading.line <= line <= heading.end_line:
            return heading
    return None


def anchored(state: "WorkspaceState", skill_path: Path) -> dict[int, list[Path]]:
    """Heading line -> probe.json of the probes whose step_heading resolves to it."""
    result: dict[int, list[Path]] = {}
    for probe_path in sorted(state.probes_reading(skill_path)):
        context = state.session.probe(probe_path)
        if context.skill_ref != skill_path:
            continue
        for heading in context.heading_matches or ():
            result.setdefault(heading.line, []).append(probe_path)
    return result


def _skill_heading(here: Place) -> tuple[Path, MarkdownDocument, Heading] | None:
    """The SKILL.md heading under the cursor: in SKILL.md itself, or named by
    probe.json's step_heading."""
    if here.path.name == PROBE_FILE:
        cursor = here.cursor()
        if cursor is None or cursor.path != ("step_heading",) or cursor.in_key or not cursor.in_string:
            return None
        found = skill_markdown(here)
        if found is None:
            return None
        matches = found[2].find_headings(cursor.value or "")
        return (found[0], found[2], matches[0]) if len(matches) == 1 else None
    markdown = markdown_of(here.document)
    heading = _heading_at(markdown, here.offset and here.document.position(here.offset).line or 1)
    if heading is None:
        return None
    return here.path, markdown, heading


def _heading_under_cursor(ls: "SkillEvalLanguageServer", params) -> tuple[Place, Path, MarkdownDocument, Heading] | None:
    """Where the cursor of a references / rename request is, and the SKILL.md
    heading it is on or names (``None`` when it is on no heading)."""
    here = place(ls, params.text_document.uri, params.position)
    if here is None:
        return None
    found = _skill_heading(here)
    return None if found is None else (here, *found)


def references(ls: "SkillEvalLanguageServer", params: types.ReferenceParams) -> list[types.Location] | None:
    found = _heading_under_cursor(ls, params)
    if found is None:
        return None
    here, skill_path, _markdown, heading = found
    converter = ls.converter
    locations = []
    if params.context.include_declaration:
        locations.append(converter.location(heading_span(skill_path, heading)))
    for probe_path in anchored(here.state, skill_path).get(heading.line, []):
        context = here.state.session.probe(probe_path)
        locations.append(converter.location(context.value_span("step_heading")))
    return locations


def probes_at_heading(ls: "SkillEvalLanguageServer", uri: str, line: int) -> list[types.Location]:
    """The ``skill-eval.showProbes`` command: probes anchored at the heading on 0-based ``line``."""
    path = path_of(uri)
    if path is None:
        return []
    state = ls.state_for(path)
    converter = ls.converter
    return [
        converter.location(state.session.probe(p).value_span("step_heading"))
        for p in anchored(state, path).get(line + 1, [])
    ]


def code_lens(ls: "SkillEvalLanguageServer", params: types.CodeLensParams) -> list[types.CodeLens] | None:
    path = path_of(params.text_document.uri)
    if path is not None and path.name == PROBE_FILE:
        lenses = [lens for provider in ls.extra_lenses for lens in provider(params.text_document.uri)]
        return lenses or None
    if path is None or path.name != SKILL_FILE:
        return None
    state = ls.state_for(path)
    document = load_text(ls, state, path)
    if document is None:
        return None
    markdown = markdown_of(document)
    counts = anchored(state, path)
    converter = ls.converter
    lenses = []
    for heading in markdown.headings:
        count = len(counts.get(heading.line, []))
        title = "no probes" if count == 0 else ("1 probe" if count == 1 else f"{count} probes")
        rng = converter.range(heading_span(path, heading))
        lenses.append(
            types.CodeLens(
                range=rng,
                command=types.Command(
                    title=title, command="skill-eval.showProbes", arguments=[params.text_document.uri, heading.line - 1]
                ),
            )
        )
    return lenses


# -- rename -------------------------------------------------------------------------------------------


def prepare_rename(ls: "SkillEvalLanguageServer", params: types.PrepareRenameParams):
    found = _heading_under_cursor(ls, params)
    if found is None:
        return None
    here, skill_path, _markdown, heading = found
    if here.path == skill_path:
        rng = ls.converter.range(heading_span(skill_path, heading))
    else:
        cursor = here.cursor()
        rng = here.lsp_range(cursor.content_start, cursor.content_end)
    return types.PrepareRenamePlaceholder(range=rng, placeholder=heading.text)


def rename(ls: "SkillEvalLanguageServer", params: types.RenameParams) -> types.WorkspaceEdit | None:
    found = _heading_under_cursor(ls, params)
    if found is None:
        return None
    here, skill_path, markdown, heading = found
    new_name = " ".join(params.new_name.split())
    if not new_name:
        return None
    edits: list[TextEdit] = [TextEdit(heading_span(skill_path, heading), new_name)]
    state = here.state
    for probe_path in sorted(state.probes_reading(skill_path)):
        context = state.session.probe(probe_path)
        if context.skill_ref != skill_path or not context.heading_matches or len(context.heading_matches) != 1:
            continue
        match = context.heading_matches[0]
        if match.line != heading.line and heading.line not in {a.line for a in _ancestors(context.skill, match)}:
            continue
        old = context.step_heading or ""
        if normalize_heading_text(old) == heading.text:
            new = new_name
        else:
            new = " > ".join(new_name if normalize_heading_text(part) == heading.text else part.strip()
                             for part in old.split(" > "))
        if new != old:
            edits.append(TextEdit(context.value_span("step_heading"), json.dumps(new, ensure_ascii=False)))
    return _workspace_edit(ls, edits)


def _ancestors(markdown: MarkdownDocument | None, heading: Heading) -> list[Heading]:
    return markdown.ancestors(heading) if markdown is not None else []


def _workspace_edit(ls: "SkillEvalLanguageServer", edits: Iterable[TextEdit]) -> types.WorkspaceEdit:
    converter = ls.converter
    changes: dict[str, list[types.TextEdit]] = {}
    for edit in edits:
        changes.setdefault(uri_of(edit.span.path), []).append(converter.text_edit(edit))
    return types.WorkspaceEdit(changes=changes)


# -- code actions --------------------------------------------------------------------------------------


def disable_edit(state: "WorkspaceState", probe_path: Path, code: str) -> TextEdit | None:
    """The edit adding ``code`` to probe.json's ``x-skill-eval-disable`` (creating it)."""
    context = state.session.probe(probe_path)
    probe = context.probe
    if probe is None or not isinstance(probe.data, dict):
        return None
    document, positions = probe.document, probe.positions()
    value = probe.data.get(DISABLE_KEY)
    quoted = json.dumps(code)
    if isinstance(value, list):
        if code in value:
            return None
        if value:
            end = positions.value_span(pointer(DISABLE_KEY, len(value) - 1)).end
            return TextEdit(Span(probe_path, end, end), f", {quoted}")
        span = positions.value_span(pointer(DISABLE_KEY))
        inside = document.position(document.offset(span.start) + 1)
        return TextEdit(Span(probe_path, inside, inside), quoted)
    if value is not None:
        return None  # not a list: SE002 reports it
    root = positions.value_span("")
    after_brace = document.position(document.offset(root.start) + 1)
    entry = f'"{DISABLE_KEY}": [{quoted}]'
    if not probe.data:
        return TextEdit(Span(probe_path, after_brace, after_brace), entry)
    first = positions.key_span(pointer(next(iter(probe.data))))
    if first.start.line != root.start.line:
        indent = document.lines[first.start.line - 1][: first.start.column - 1]
        indent = indent if not indent.strip() else "  "
        return TextEdit(Span(probe_path, after_brace, after_brace), f"\n{indent}{entry},")
    return TextEdit(Span(probe_path, first.start, first.start), f"{entry}, ")


def _wanted(only: list[str] | None, kind: str) -> bool:
    return not only or any(kind == o or kind.startswith(o + ".") for o in only)


def code_actions(ls: "SkillEvalLanguageServer", params: types.CodeActionParams) -> list[types.CodeAction] | None:
    path = path_of(params.text_document.uri)
    if path is None:
        return None
    if ls.dirty:
        ls.flush()
    state = ls.state_for(path)
    converter = ls.converter
    related = ls.related_support
    only = params.context.only
    actions: list[types.CodeAction] = []
    found = state.diagnostics_for(path)
    if _wanted(only, types.CodeActionKind.QuickFix):
        for diagnostic in found:
            lsp = converter.diagnostic(diagnostic, related)
            if not overlaps(lsp.range, params.range):
                continue
            for fix in diagnostic.fixes:
                actions.append(
                    types.CodeAction(
                        title=fix.title,
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[lsp],
                        is_preferred=fix.safe or None,
                        edit=_workspace_edit(ls, fix.edits),
                    )
                )
            if diagnostic.probe is not None:
                edit = disable_edit(state, diagnostic.probe / PROBE_FILE, diagnostic.code)
                if edit is not None:
                    actions.append(
                        types.CodeAction(
                            title=f"Disable {diagnostic.code} for this probe",
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=[lsp],
                            edit=_workspace_edit(ls, [edit]),
                        )
                    )
    if _wanted(only, FIX_ALL_KIND) and (only or any(f.safe for d in found for f in d.fixes)):
        edits = _safe_edits(found)
        if edits:
            actions.append(types.CodeAction(title="Fix all safe skill-eval problems", kind=FIX_ALL_KIND,
                                            edit=_workspace_edit(ls, edits)))
    for provider in ls.extra_actions:
        actions.extend(provider(params))
    return actions


def _safe_edits(diagnostics: list[Diagnostic]) -> list[TextEdit]:
    """The edits of "fix all": the engine's one fix applier chooses them
    (:func:`~skill_eval.linter.fixes.safe_edits`: each fix whole or not at all)."""
    from ..linter.fixes import safe_edits

    return safe_edits(diagnostics)


def register_extensions(ls: "SkillEvalLanguageServer") -> None:
    """Hook for optional integrations (the eval runner, when installed)."""
    try:
        from ..evals import api  # noqa: F401 - only to know the runner is installed
    except ImportError:
        return
    from . import runner

    runner.register(ls)
