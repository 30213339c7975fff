"""Hover, completion, definition, references, code lens, rename, code actions."""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from _lsp_helpers import uri, wait_until

PROBES = Path("skills/verify/evals/probes")


def position_of(text: str, needle: str, delta: int = 1) -> types.Position:
    """The position ``delta`` characters into the first ``needle`` (ASCII lines)."""
    offset = text.index(needle) + delta
    line = text.count("\n", 0, offset)
    return types.Position(line=line, character=offset - (text.rfind("\n", 0, offset) + 1))


def open_doc(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    text = path.read_text(encoding="utf-8") if text is None else text
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri(path), language_id="json", version=version, text=text)))
    return text


def apply(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    def at(p: types.Position) -> int:
        return offsets[p.line] + p.character
    for edit in sorted(edits, key=lambda e: at(e.range.start), reverse=True):
        text = text[: at(edit.range.start)] + edit.new_text + text[at(edit.range.end):]
    return text


async def test_hover_window_quote_field_and_rule(client: LanguageClient):
    probe = client.root / PROBES / "good" / "probe.json"
    text = open_doc(client, probe)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri(probe)), position=position_of(text, "Step 2: Check the")))
    assert "lines 13–20" in hover.contents.value and "Evidence that argues" in hover.contents.value
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri(probe)), position=position_of(text, "existing coverage")))
    assert "line 7" in hover.contents.value and "metrics emitted" in hover.contents.value
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri(probe)), position=position_of(text, '"verdict"')))
    assert "Field `verdict`" in hover.contents.value and "NOT_PROVEN" in hover.contents.value
    renamed = client.root / PROBES / "renamed" / "probe.json"
    text = open_doc(client, renamed)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri(renamed)), position=position_of(text, "Step 2: Check ev")))
    assert "SE101 misanchored-step" in hover.contents.value and "## What it does" in hover.contents.value


async def test_completion_in_partial_json(client: LanguageClient):
    probe = client.root / PROBES / "good" / "probe.json"
    typing = '{\n  "id": "x",\n  "step_heading": "Ste'
    open_doc(client, probe, typing)
    result = await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri(probe)), position=types.Position(line=2, character=21)))
    labels = [item.label for item in result.items]
    assert "Step 2: Check the evidence lines" in labels and "Details" in labels
    item = next(i for i in result.items if i.label == "Step 1: Read the acceptance criteria")
    assert apply(typing, [item.text_edit]).endswith('"step_heading": "Step 1: Read the acceptance criteria')
    typing = '{"kind": "", "shapes": ["eu"], "defects": [{"shape": "", "caught_when": {"verdict": "", "": 1}}]}'
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(probe), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=typing)]))

    async def labels_at(needle: str, delta: int) -> list[str]:
        result = await client.text_document_completion_async(types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(probe)), position=position_of(typing, needle, delta)))
        return sorted(item.label for item in result.items) if result else []

    assert await labels_at('"kind": "', 9) == ["band", "floor"]
    assert "euphemized" in await labels_at('["eu', 2)
    assert await labels_at('"verdict": "', 12) == ["NOT_PROVEN", "PASS"]
    assert await labels_at('"": 1', 1) == ["unproven"]  # verdict is already present


async def test_definition_targets(client: LanguageClient):
    probe = client.root / PROBES / "good" / "probe.json"
    text = open_doc(client, probe)

    async def target(needle: str):
        result = await client.text_document_definition_async(types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(probe)), position=position_of(text, needle)))
        assert result, needle
        return result[0]

    heading = await target("Step 2: Check the")
    assert heading.uri.endswith("SKILL.md") and heading.range.start.line == 12
    quote = await target("existing coverage")
    assert quote.uri.endswith("question.md") and quote.range.start.line == 6
    field = await target('"verdict"')
    assert field.uri.endswith("output-spec.md") and field.range.start.line == 2


async def test_references_lens_and_rename(client: LanguageClient):
    skill = client.root / "skills/verify/SKILL.md"
    text = open_doc(client, skill)
    at_heading = position_of(text, "Step 2: Check the", 4)
    refs = await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri=uri(skill)), position=at_heading,
        context=types.ReferenceContext(include_declaration=False)))
    assert sorted(Path(r.uri).parent.name for r in refs) == ["drifted", "good"]
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri(skill))))
    titles = {lens.range.start.line: lens.command.title for lens in lenses}
    assert titles[12] == "2 probes" and titles[7] == "no probes"
    shown = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="skill-eval.showProbes", arguments=[uri(skill), 12]))
    assert len(shown) == 2
    prepared = await client.text_document_prepare_rename_async(types.PrepareRenameParams(
        text_document=types.TextDocumentIdentifier(uri=uri(skill)), position=at_heading))
    assert prepared.placeholder == "Step 2: Check the evidence lines"
    edit = await client.text_document_rename_async(types.RenameParams(
        text_document=types.TextDocumentIdentifier(uri=uri(skill)), position=at_heading, new_name="Step 2: Weigh proof"))
    assert apply(text, edit.changes[uri(skill)]).count("## Step 2: Weigh proof") == 1
    good = client.root / PROBES / "good" / "probe.json"
    renamed_probe = apply(good.read_text(encoding="utf-8"), edit.changes[uri(good)])
    assert json.loads(renamed_probe)["step_heading"] == "Step 2: Weigh proof"
    assert len(edit.changes) == 3  # SKILL.md and the two anchored probes


async def test_quick_fixes_disable_and_fix_all(client: LanguageClient):
    drifted = client.root / PROBES / "drifted" / "probe.json"
    text = open_doc(client, drifted)
    await wait_until(lambda: any(d.code == "SE201" for d in client.diagnostics.get(uri(drifted), [])), what="SE201")
    diagnostic = next(d for d in client.diagnostics[uri(drifted)] if d.code == "SE201")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri(drifted)), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    titles = [a.title for a in actions]
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and "SE201" not in a.title)
    assert json.loads(apply(text, fix.edit.changes[uri(drifted)]))["seeded_defects"] == 1
    disable = next(a for a in actions if a.title == "Disable SE201 for this probe")
    disabled = json.loads(apply(text, disable.edit.changes[uri(drifted)]))
    assert disabled["x-skill-eval-disable"] == ["SE201"] and disabled["id"] == "drifted"
    fix_all = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri(drifted)), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[], only=["source.fixAll.skill-eval"])))
    assert [a.kind for a in fix_all] == ["source.fixAll.skill-eval"], titles
    assert json.loads(apply(text, fix_all[0].edit.changes[uri(drifted)]))["seeded_defects"] == 1
    renamed = client.root / PROBES / "renamed" / "probe.json"
    text = open_doc(client, renamed)
    diagnostic = next(d for d in client.diagnostics[uri(renamed)] if d.code == "SE101")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri(renamed)), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    values = [json.loads(apply(text, a.edit.changes[uri(renamed)])).get("step_heading") for a in actions
              if a.title.startswith("Change step_heading")]
    assert "Step 2: Check the evidence lines" in values
