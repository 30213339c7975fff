"""Did the harness load the skill? Evidence from its own transcript.

A start record shows that the treatment's copy of the skill was *installed*
(``installed_skill_sha256``), not that the harness *loaded* it: the harness
lists a skill's name and description to the model, and the body reaches the
model only when the model asks for it. This module reads what the harness
printed and says whether the skill was loaded, with the evidence:

- **Claude Code** (``--output-format stream-json --verbose``): a ``Skill``
  tool call for the skill whose result is no error, or a ``Read`` (any tool
  call) of the skill's ``SKILL.md``.
- **Codex** (``codex exec --json``): a ``command_execution`` item that
  names the skill's ``SKILL.md`` (Codex has no skill tool: the model reads
  the listed file with its shell) and exited 0.
- **OpenCode** (``opencode run --format json``): a completed ``skill`` tool
  call for the skill, or a completed tool call that names its ``SKILL.md``.
- **Gemini CLI** (``--output-format stream-json``): a successful
  ``activate_skill`` call for the skill, or a successful tool call that
  names its ``SKILL.md``. From ``--output-format json`` (the preset's output
  before stream-json), which holds per-tool counts, not arguments: no
  successful tool call at all means the body cannot have reached the model
  (``False``); a successful ``activate_skill`` or any other successful tool
  (a shell, a file read) leaves it ``unknown``: that JSON does not say which
  skill was activated, and Gemini CLI lists its built-in skills to both arms.

Any other agent (a command) gives ``unknown`` unless its output is one of
the transcripts above and shows the load. Reading never raises: an output
that is not a transcript gives ``unknown`` with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from .presets import json_lines

__all__ = ["SkillUse", "detect_skill_use", "HARNESSES"]

HARNESSES = ("claude-code", "codex", "gemini-cli", "opencode")
"""The harnesses whose transcript :func:`detect_skill_use` reads."""
MAX_EVIDENCE = 300
"""Characters of a tool call kept as evidence."""


@dataclass(frozen=True)
class SkillUse:
    """Whether a start loaded the skill: ``loaded`` is ``True``, ``False`` or
    ``None`` (unknown), and ``evidence`` says what in the transcript shows it
    (the tool call, the file read) or why it cannot be told."""

    loaded: bool | None
    evidence: str


def detect_skill_use(harness: str, transcript: str, skill_name: str, skill_dir: str | None) -> SkillUse:
    """Whether the harness loaded the skill ``skill_name`` in ``transcript``
    (what it printed: the stream or JSON of its headless mode).

    ``skill_dir`` is where the skill was installed (absolute, or relative to
    the project, e.g. ``.claude/skills/closeout-review``), ``None`` when it
    was not (a control): a read of ``skill_dir/SKILL.md`` or of any
    ``.../<skill_name>/SKILL.md`` counts as a load. ``harness`` is a preset's
    name; any other name (a command agent) is read with each harness's reader
    and gives ``unknown`` unless one of them finds the load."""
    if not isinstance(transcript, str) or not transcript.strip():
        return SkillUse(None, "no transcript: the agent printed nothing to read")
    target = _Target(skill_name, skill_dir)
    reader = _READERS.get(harness)
    try:
        if reader is not None:
            return reader(transcript, target)
        for name in HARNESSES if "{" in transcript else ():  # every transcript read here is JSON
            found = _READERS[name](transcript, target)
            if found.loaded:
                return SkillUse(True, f"{found.evidence} (read as a {name} transcript)")
    except (RecursionError, ValueError, TypeError, AttributeError, KeyError) as error:
        return SkillUse(None, f"unreadable {harness} transcript: {type(error).__name__}: {error}")
    return SkillUse(None, f"a command agent ({harness}): its output is no harness transcript that shows the skill "
                          "loaded, so whether it read the skill is unknown")


@dataclass(frozen=True)
class _Target:
    name: str
    folder: str | None

    def skill_files(self) -> tuple[str, ...]:
        """Path endings that name the skill's SKILL.md."""
        endings = [f"/{self.name}/SKILL.md"]
        if self.folder:
            endings.append(self.folder.rstrip("/") + "/SKILL.md")
        return tuple(endings)

    def names_skill_file(self, text: str) -> bool:
        return any(ending in text or text == ending.lstrip("/") for ending in self.skill_files()) \
            or text.rstrip("/").endswith(f"{self.name}/SKILL.md")

    def is_skill(self, value: Any) -> bool:
        """A skill tool's argument naming this skill (``closeout-review``,
        ``/closeout-review``, ``plugin:closeout-review``)."""
        if not isinstance(value, str):
            return False
        value = value.strip().lstrip("/")
        return value == self.name or value.rsplit(":", 1)[-1] == self.name



def _strings(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string inside a JSON value (bounded depth)."""
    if depth > 32:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, depth + 1)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= MAX_EVIDENCE else text[:MAX_EVIDENCE] + "..."


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _none_loaded(calls: int, what: str, listed: str = "") -> SkillUse:
    if calls:
        return SkillUse(False, f"{calls} {what}{'s' if calls != 1 else ''}, none loaded the skill{listed}")
    return SkillUse(False, f"no {what}: the skill was never loaded{listed}")


def _read_claude(text: str, target: _Target) -> SkillUse:
    events = list(json_lines(text))
    if not any(event.get("type") in ("assistant", "user", "system") for event in events):
        if any(event.get("type") == "result" for event in events):
            return SkillUse(None, "the output holds only Claude Code's result object (--output-format json): "
                                  "no tool calls to read")
        return SkillUse(None, "no Claude Code stream-json events in the output")
    calls: dict[str, tuple[str, dict]] = {}
    failed: dict[str, str] = {}
    listed = ""
    for event in events:
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            skills = event.get("skills")
            if isinstance(skills, list) and any(target.is_skill(skill) for skill in skills):
                listed = " (Claude Code listed it to the model)"
        content = _dict(event.get("message")).get("content")
        for block in content if isinstance(content, list) else ():
            block = _dict(block)
            if kind == "assistant" and block.get("type") == "tool_use":
                calls[str(block.get("id"))] = (str(block.get("name")), _dict(block.get("input")))
            elif kind == "user" and block.get("type") == "tool_result" and block.get("is_error"):
                failed[str(block.get("tool_use_id"))] = _short(block.get("content"))
    for call_id, (name, arguments) in calls.items():
        loads = (name == "Skill" and target.is_skill(arguments.get("skill"))) or \
            any(target.names_skill_file(value) for value in _strings(arguments))
        if not loads:
            continue
        said = f"{name} tool call {_short(arguments)}"
        if call_id in failed:
            continue
        return SkillUse(True, said)
    refused = [f"{calls[call_id][0]} {_short(calls[call_id][1])}: {why}" for call_id, why in failed.items()
               if call_id in calls and (target.is_skill(calls[call_id][1].get("skill"))
                                        or any(target.names_skill_file(v) for v in _strings(calls[call_id][1])))]
    if refused:
        return SkillUse(False, f"the skill was asked for and not given: {refused[0]}")
    return _none_loaded(len(calls), "tool call", listed)


def _read_codex(text: str, target: _Target) -> SkillUse:
    events = list(json_lines(text))
    if not any(str(event.get("type", "")).startswith(("thread.", "turn.", "item.")) for event in events):
        return SkillUse(None, "no Codex JSON events in the output")
    commands = failed = 0
    for event in events:
        item = _dict(event.get("item"))
        if event.get("type") != "item.completed" or item.get("type") not in ("command_execution", "mcp_tool_call"):
            continue
        commands += 1
        command = item.get("command") if item.get("type") == "command_execution" else item.get("arguments")
        if not any(target.names_skill_file(value) for value in _strings(command)):
            continue
        if item.get("exit_code") not in (0, None) or item.get("status") == "failed":
            failed += 1
            continue
        return SkillUse(True, f"shell command {_short(command)} read the skill's SKILL.md")
    if failed:
        return SkillUse(False, f"{failed} command(s) tried to read the skill's SKILL.md and failed")
    return _none_loaded(commands, "command")


def _read_opencode(text: str, target: _Target) -> SkillUse:
    events = [event for event in json_lines(text) if "type" in event]
    if not any(event.get("type") in ("step_start", "step_finish", "text", "tool_use") for event in events):
        return SkillUse(None, "no OpenCode JSON events in the output")
    calls = failed = 0
    for event in events:
        part = _dict(event.get("part"))
        if event.get("type") != "tool_use":
            continue
        calls += 1
        tool, state = part.get("tool"), _dict(part.get("state"))
        arguments = _dict(state.get("input"))
        loads = (tool == "skill" and target.is_skill(arguments.get("name"))) or \
            any(target.names_skill_file(value) for value in _strings(arguments))
        if not loads:
            continue
        if state.get("status") != "completed":
            failed += 1
            continue
        return SkillUse(True, f"{tool} tool call {_short(arguments)}")
    if failed:
        return SkillUse(False, f"{failed} tool call(s) asked for the skill and did not complete")
    return _none_loaded(calls, "tool call")


def _read_gemini_stream(events: list[dict], target: _Target) -> SkillUse:
    calls: dict[str, tuple[str, dict]] = {}
    status: dict[str, str] = {}
    for event in events:
        if event.get("type") == "tool_use":
            calls[str(event.get("tool_id"))] = (str(event.get("tool_name")), _dict(event.get("parameters")))
        elif event.get("type") == "tool_result":
            status[str(event.get("tool_id"))] = str(event.get("status"))
    failed = 0
    for call_id, (name, arguments) in calls.items():
        loads = (name == "activate_skill" and target.is_skill(arguments.get("name"))) or \
            any(target.names_skill_file(value) for value in _strings(arguments))
        if not loads:
            continue
        if status.get(call_id) != "success":
            failed += 1
            continue
        return SkillUse(True, f"{name} tool call {_short(arguments)}")
    if failed:
        return SkillUse(False, f"{failed} tool call(s) asked for the skill and did not succeed")
    return _none_loaded(len(calls), "tool call")


def _read_gemini(text: str, target: _Target) -> SkillUse:
    from .presets import GEMINI_STREAM_EVENTS, _json_document

    events = [event for event in json_lines(text) if event.get("type") in GEMINI_STREAM_EVENTS]
    if any(event.get("type") in ("init", "result") for event in events):
        return _read_gemini_stream(events, target)

    document = _json_document(text)
    stats = _dict(_dict(document).get("stats"))
    if not stats:
        return SkillUse(None, "no Gemini CLI JSON with stats in the output")
    tools = _dict(stats.get("tools"))
    by_name = {str(name): _dict(counts) for name, counts in _dict(tools.get("byName")).items()}
    succeeded = {name: counts.get("success") for name, counts in by_name.items()
                 if isinstance(counts.get("success"), int) and counts.get("success") > 0}
    if not succeeded:
        calls = sum(counts.get("count", 0) for counts in by_name.values() if isinstance(counts.get("count"), int))
        return SkillUse(False, f"no tool call succeeded ({calls} made): the skill's body never reached the model")
    activated = succeeded.get("activate_skill")
    if activated:
        return SkillUse(None, f"activate_skill succeeded {activated} time(s); Gemini CLI's JSON counts tool calls "
                              f"without their arguments, and its built-in skills are listed too, so which skill "
                              f"was activated is unknown")
    return SkillUse(None, "tool calls succeeded (" + ", ".join(f"{n} x{c}" for n, c in sorted(succeeded.items()))
                          + "); Gemini CLI's JSON does not show their arguments")


_READERS: dict[str, Callable[[str, _Target], SkillUse]] = {
    "claude-code": _read_claude,
    "codex": _read_codex,
    "gemini-cli": _read_gemini,
    "opencode": _read_opencode,
}
