"""What an agent is handed: the artifact verbatim, then how to answer.

The prompt is the artifact's bytes exactly as on disk (fixture-format.md,
"question.md": handed to the agent byte for byte), followed by the answer
instructions rendered from the output spec: every field's name, its allowed
values and its aliases. Nothing else: no probe metadata, no quotes, no defect
ids, no shape names, and none of the output spec's prose (prose may teach the
discipline, and the control arm must not be taught).

The treatment arm with ``treatment = "prepend"`` gets SKILL.md's text before
the prompt, separated by a rule line.
"""

from __future__ import annotations

from skill_eval.linter.outputspec import OutputSpec

SKILL_SEPARATOR = b"\n\n---\n\n"


def answer_instructions(spec: OutputSpec | None) -> str:
    """The answer format, from the output spec's fields."""
    if spec is None or not spec.fields:
        return ""
    lines = [
        "When you have finished the task, end your reply with these fields, one per line,",
        "written as `field: value` (or give one JSON object with these keys).",
        "For several values, separate them with commas.",
        "",
    ]
    for field in spec.fields.values():
        line = f"- {field.name}"
        if field.values:
            line += ": one of " + ", ".join(field.values)
        if field.aliases:
            line += " (also accepted as: " + ", ".join(field.aliases) + ")"
        lines.append(line)
    return "\n".join(lines) + "\n"


def build_prompt(artifact: bytes, spec: OutputSpec | None) -> bytes:
    """The control prompt: artifact bytes verbatim, then the answer instructions."""
    instructions = answer_instructions(spec)
    if not instructions:
        return artifact
    if artifact.endswith(b"\n\n"):
        separator = b""
    elif artifact.endswith(b"\n"):
        separator = b"\n"
    else:
        separator = b"\n\n"
    return artifact + separator + instructions.encode("utf-8")


def with_skill(skill: bytes, prompt: bytes) -> bytes:
    """The ``prepend`` treatment: SKILL.md's text, a rule line, the prompt."""
    return skill.rstrip(b"\n") + SKILL_SEPARATOR + prompt
