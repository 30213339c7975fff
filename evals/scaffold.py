"""``skill-eval init [DIR]``: a new skill with an output spec, one probe,
its known transcripts and a config naming the agents it could run with.

What it writes lints clean (a test lints it) and follows
docs/spec/fixture-format.md: SKILL.md with the Agent Skills front matter
(``name`` is the folder's name) and a step heading, output-spec.md with one
graded field, and a tier-2 floor probe whose one defect's quote occurs once
in its artifact and whose ``caught_when`` grades that field. Beside the
probe, two known transcripts (one answer that catches the defect, one that
misses it), so that ``skill-eval check`` passes on the scaffold and shows
what a transcript is. At DIR's top, ``skill-eval.toml`` with every harness
preset and a command agent as commented-out sections: uncommenting one is
all ``skill-eval run`` needs. When DIR already lies in a workspace with its
own config (a ``skill-eval.toml`` or ``[tool.skill-eval]`` above it), no
second config is written: agents belong in that one.

Each is a template: the text says what to replace. Nothing is overwritten.
"""

from __future__ import annotations

from pathlib import Path

PROBE_ID = "unbacked-claim"
STEP_HEADING = "Step 1: Check each claim against its own evidence"

SKILL_MD = """\
---
name: {name}
description: Use when asked to sign off a document that makes claims, such as a release note or a closeout report. Replace this with when an agent should use {name} and what it checks.
---

# {title}

Replace this with the discipline your skill teaches. An answer returns a
`verdict` on the document it was handed.

## {step}

Every claim in the document needs evidence of its own: a test that ran and
passed, a measurement, a log line. Evidence that argues from earlier
behaviour ("same as before", "unchanged") proves nothing about the claim.

- Every claim has its own evidence: the `verdict` is `PASS`.
- Any claim lacks it: the `verdict` is `FAIL`.
"""

OUTPUT_SPEC_MD = """\
# Answer fields

The agent's answer carries these fields, as a JSON object or as
`field: value` lines. Each `##` heading is one field; `Values:` lists what it
may hold.

## `verdict` — the call on the document
Values: `PASS`, `FAIL`
"""

PROBE_JSON = """\
{{
  "id": "{probe_id}",
  "tier": 2,
  "kind": "floor",
  "step_heading": "{step}",
  "shapes": ["buried-in-green"],
  "seeded_defects": 1,
  "defects": [
    {{
      "id": "D1",
      "shape": "buried-in-green",
      "quote": "same behaviour as in 2.3",
      "caught_when": {{"verdict": "FAIL"}}
    }}
  ]
}}
"""

QUESTION_MD = """\
# Release 2.4.0: sign-off request

Ready to tag once this is approved.

## Changes

| change | evidence |
|---|---|
| Upload size limit raised to 50 MB | test_upload_limit passed in CI run 5121 |
| Login redirects keep the query string | test_login_redirect passed in CI run 5121 |
| Password reset mails go out within a minute | same behaviour as in 2.3 |
| Audit log records the acting user | test_audit_actor passed in CI run 5121 |

All 212 tests passed in CI run 5121.
"""


TRANSCRIPT_CATCHES = """\
---
expect: {D1: caught}
note: an answer that acts on the claim without evidence of its own (replace with a real one)
---
verdict: FAIL

"Password reset mails go out within a minute" cites "same behaviour as in 2.3",
which argues from earlier behaviour: nothing in this release proves it.
"""

TRANSCRIPT_MISSES = """\
---
expect: {D1: missed}
note: an answer that trusts the green summary and signs off (replace with a real one)
---
verdict: PASS

Every change lists its evidence and all 212 tests passed in CI run 5121.
"""

CONFIG_TOML = """\
# skill-eval configuration of this workspace (docs/format.md). The linter
# reads it as it is; `skill-eval run` and `skill-eval calibrate` need an
# agent: uncomment ONE of the sections below, then
#     skill-eval check                 # the known transcripts grade as labelled
#     skill-eval run --dry-run         # the plan and the starts it would spend
#     skill-eval run                   # control vs treatment, every start on record

[calibration]
max-starts = 200                     # every start counts, failures included

# A harness preset runs the real CLI headless, the way its users run it
# (docs/harnesses/: what each needs installed, and its keys).

# [agents.claude]
# preset = "claude-code"             # npm install -g @anthropic-ai/claude-code; ANTHROPIC_API_KEY
# model = "claude-sonnet-4-5"
# timeout = 600

# [agents.codex]
# preset = "codex"                   # npm install -g @openai/codex; CODEX_API_KEY
# model = "gpt-5-codex"
# timeout = 600

# [agents.gemini]
# preset = "gemini-cli"              # npm install -g @google/gemini-cli; GEMINI_API_KEY
# model = "gemini-2.5-pro"
# timeout = 600

# [agents.opencode]
# preset = "opencode"                # npm install -g opencode-ai; the provider's key
# model = "anthropic/claude-sonnet-4-5"
# timeout = 600

# Any other agent is a command (argv, never a shell): the prompt goes on
# stdin, and the treatment arm gets SKILL.md's text before it.

# [agents.mine]
# command = ["my-agent", "--print", "--model", "{model}"]
# model = "my-model"
# timeout = 600
# treatment = "prepend"
"""


class InitError(Exception):
    """Why nothing was written; the message names the file or folder and the fix."""


def skill_files(folder: Path) -> dict[Path, str]:
    """The files :func:`init_skill` writes into ``folder``, with their text."""
    from skill_eval.linter.rules.frontmatter.se706_invalid_skill_name import name_problem, slug

    name = folder.resolve().name
    problem = name_problem(name)
    if problem is not None:
        better = slug(name) or "my-skill"
        raise InitError(f"{folder}: the folder's name {name!r} is the skill's `name`, which {problem}; "
                        f"name the folder like {better!r} (lowercase letters, digits and hyphens)")
    probe = folder / "evals" / "probes" / PROBE_ID
    files = {
        folder / "SKILL.md": SKILL_MD.format(name=name, title=name.replace("-", " ").capitalize(), step=STEP_HEADING),
        folder / "output-spec.md": OUTPUT_SPEC_MD,
        probe / "probe.json": PROBE_JSON.format(probe_id=PROBE_ID, step=STEP_HEADING),
        probe / "question.md": QUESTION_MD,
        probe / "transcripts" / "catches-unbacked-claim.md": TRANSCRIPT_CATCHES,
        probe / "transcripts" / "misses-unbacked-claim.md": TRANSCRIPT_MISSES,
    }
    if enclosing_config(folder) is None:
        files[folder / "skill-eval.toml"] = CONFIG_TOML
    return files


def enclosing_config(folder: Path) -> Path | None:
    """The config of the workspace ``folder`` would belong to, when it or a
    folder above it has a config file (``skill-eval.toml``, or a ``pyproject.toml`` with
    ``[tool.skill-eval]``); else ``None``: the scaffold is a workspace of its
    own and gets its own ``skill-eval.toml``."""
    from skill_eval.linter.workspace import find_workspace_root, has_pyproject_section

    root = find_workspace_root(folder.resolve())  # the folder itself when it exists, else from its parent up
    if (root / "skill-eval.toml").is_file():
        return root / "skill-eval.toml"
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and has_pyproject_section(pyproject):
        return pyproject
    return None


def init_skill(folder: Path) -> list[Path]:
    """Write :func:`skill_files` into ``folder`` (made if missing); the files
    written. Raises :class:`InitError`, writing nothing, when one exists."""
    files = skill_files(folder)
    existing = [path for path in files if path.exists() or path.is_symlink()]
    if existing:
        raise InitError("not overwriting " + ", ".join(str(path) for path in existing)
                        + "; run skill-eval init in a new or empty folder")
    written: list[Path] = []
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8", newline="\n") as handle:  # "x": never over a file made meanwhile
            handle.write(text)
        written.append(path)
    return written
