"""SE712 invalid-metadata."""

from __future__ import annotations

import json

from ...diagnostics import Fix, Severity, TextEdit
from ..base import Rule, Scope
from ._parse import STR_TAG, Entry, key_of

_SCALAR_KINDS = {"str": "a string", "int": "a number", "float": "a number", "bool": "a boolean", "null": "empty",
                 "timestamp": "a date", "binary": "binary data"}


def _kind(node) -> str:
    if node.id == "mapping":
        return "a mapping"
    if node.id == "sequence":
        return "a list"
    tag = node.tag.rsplit(":", 1)[-1]
    return _SCALAR_KINDS.get(tag, f"a YAML {tag}")


class InvalidMetadata(Rule):
    """## What it does
    Reports a front-matter `metadata` that is not a mapping of string keys
    to string values, as the Agent Skills specification defines it: a
    `metadata` that is a list, a lone value or empty, a key that YAML reads
    as a number or a boolean, and a value that is a number, a boolean, a
    date, empty, a list or a nested mapping. A number, boolean or date value
    gets a quick fix that quotes it as written.

    ## Why is this bad?
    Clients store `metadata` as strings, and each converts what is not one
    its own way: `version: 1.10` is the float 1.1 to a YAML loader, so one
    agent shows version `1.1` and another rejects the skill's metadata. A
    skill that loads differently per agent can leave the treatment arm of a
    probe without the discipline, and the seed's window — "control misses,
    treatment catches" — then measures the agent, not the skill.

    ## Example
    ```yaml
    metadata:
      version: 1.10
      reviewed: 2025-01-31
      tags: [closeout, evidence]
    ```

    ## Fix
    Quote scalar values (`version: "1.10"`); write a list or nested mapping
    as one string (`tags: "closeout evidence"`).
    """

    code = "SE712"
    name = "invalid-metadata"
    severity = Severity.WARNING
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed, entry = key_of(context, "metadata")
        if entry is None:
            return  # no usable front matter (SE701-SE704) or no `metadata`
        node = entry.value_node
        if node.id != "mapping":
            what = "empty" if entry.is_null else _kind(node)
            yield self.diagnostic(
                parsed.value_span(context.path, entry),
                f"`metadata` is {what}; the Agent Skills specification makes it a mapping of string keys to string "
                "values, such as `author: example-org` on an indented line below it",
            )
            return
        for key_node, value_node in node.value:
            if key_node.id != "scalar" or key_node.tag != STR_TAG:
                yield self.diagnostic(
                    parsed.node_span(context.path, key_node),
                    f"`metadata` key {_shown(key_node)} is {_kind(key_node)}; keys must be strings (quote it)",
                    fixes=_quote_fix(parsed, context.path, key_node),
                )
            if value_node.id == "scalar" and value_node.tag == STR_TAG:
                continue
            key = key_node.value if key_node.id == "scalar" else "?"
            item = Entry(str(key), key_node, value_node)
            if item.is_null:
                message = f"`metadata.{key}` is empty; values must be strings: give it one or remove the key"
            elif value_node.id == "scalar":
                message = (f"`metadata.{key}` is {_kind(value_node)} ({value_node.value}); values must be strings: "
                           f"quote it, or clients may read it differently")
            else:
                message = f"`metadata.{key}` is {_kind(value_node)}; values must be strings: write it as one string"
            yield self.diagnostic(
                parsed.value_span(context.path, item),
                message,
                fixes=_quote_fix(parsed, context.path, value_node) if not item.is_null else (),
            )


def _shown(node) -> str:
    return f"`{node.value}`" if node.id == "scalar" else "(a collection)"


def _quote_fix(parsed, path, node) -> tuple[Fix, ...]:
    """Quote a plain scalar exactly as written (``1.10`` stays ``"1.10"``).

    Only a scalar whose text is its value alone: one with an anchor (``&v
    2``, which an alias elsewhere names: the alias's node is the same
    node), a tag (``!!float 3``) or folded lines is left as it is, since
    replacing its text would drop the anchor or change what loads; so is a
    merge key (``<<``), which quoting would make a plain key."""
    if node.id != "scalar" or node.style is not None or not node.value or node.tag.endswith(":merge"):
        return ()
    if _written_as(node) != node.value:
        return ()
    quoted = json.dumps(node.value, ensure_ascii=False)
    return (Fix(f"Quote {node.value} as {quoted}", (TextEdit(parsed.node_span(path, node), quoted),), safe=True),)


def _written_as(node) -> str | None:
    """The front matter's text of ``node`` (its anchor and tag included),
    or ``None`` when the parser kept no text (a stream, not a string)."""
    start = node.start_mark
    if getattr(start, "buffer", None) is None:
        return None
    return start.buffer[start.index:node.end_mark.index]
