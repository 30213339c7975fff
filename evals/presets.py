"""Agent harness presets: Claude Code, Codex, Gemini CLI and OpenCode, headless.

A preset is what it takes to run one real agent harness once, headless, on
one probe, the way its users run it: the argv (with ``{model}``), the standard
input (``/dev/null``: ``codex exec``, ``gemini -p`` and ``opencode run`` read
an open stdin and wait on a pipe), the environment that makes a failing
endpoint fail fast and turns off telemetry and self-updates, the files the
harness needs in a fresh home, the folder where the harness discovers
project skills, and a parser of what the harness prints.

Nothing here spawns a process. :func:`prepare_project` lays out a fresh
scratch project for one start and returns a :class:`Launch` (argv, env,
stdin, cwd) for the runner's executor; :func:`parse_output` turns what the
harness printed into a :class:`HarnessOutput` (final answer, tokens, cost,
duration, turns, the harness's own error message).

A scratch project is three folders under one scratch folder, outside any
repository: ``project/`` (the working directory: the artifact as a file, and
for the treatment a copy of the skill in the harness's discovery folder),
``home/`` (``HOME``, with the XDG folders and the harness's config under it)
and ``tmp/`` (``TMPDIR``). Claude Code and OpenCode look for skills in every
parent folder of the working directory and in the home folder, and Codex up to
the git root: a control start in a project below a folder with skills, or with
the user's home, would see skills. So every start gets its own home, git's
discovery stops at the scratch folder (``GIT_CEILING_DIRECTORIES``), and a
scratch folder below a repository or below a skills folder is refused.

The runner's environment passes through (API keys, ``*_BASE_URL``, provider
settings), minus what the isolation replaces (:data:`ISOLATION_VARIABLES`):
the home, temporary and XDG folders, the harnesses' own config-folder
variables (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``GEMINI_CLI_HOME``,
``OPENCODE_CONFIG_DIR``: they would bring the user's own skills), and git's
repository-locating variables. Then the preset's environment, then the
agent's configured ``env``; an agent's ``env`` may not set an isolation
variable. See docs/harnesses/ for each harness.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Mapping, Protocol, Sequence

PRESET_NAMES = ("claude-code", "codex", "gemini-cli", "opencode")

SKILL_FOLDERS = (".claude/skills", ".agents/skills", ".gemini/skills", ".opencode/skills", ".opencode/skill")
"""Project skill folders some harness reads (OpenCode also reads ``.claude`` and
``.agents``; Gemini CLI reads ``.agents`` as an alias). A scratch folder below a
folder holding one of them is refused: the control arm would see its skills."""

ISOLATION_VARIABLES = frozenset({
    "HOME", "TMPDIR", "TMP", "TEMP", "PWD", "OLDPWD",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
    "CLAUDE_CONFIG_DIR", "CODEX_HOME", "CODEX_SQLITE_HOME", "GEMINI_CLI_HOME", "OPENCODE_CONFIG_DIR",
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_CEILING_DIRECTORIES",
})
"""Variables the isolation replaces or drops: never taken from the runner's
environment, and an agent's ``env`` may not set them."""

SKIPPED_SKILL_FOLDERS = ("evals",)
"""Never installed with a skill: its probes (the answer key) and runs."""


class SkillFiles(Protocol):
    """A skill folder as data (the runner's :class:`~skill_eval.evals.executor.SkillBundle`):
    installed as ``name/`` with each ``(relative path, bytes, mode)`` of ``files``."""

    name: str
    files: Sequence[tuple[str, bytes, int]]


class PresetError(ValueError):
    """A preset that cannot be used as asked; the message names the fix."""


@dataclass(frozen=True)
class Preset:
    """One harness, as data. ``argv`` is built as: ``executable``,
    ``headless_args``, ``model_args`` (when a model is given), the agent's
    ``args``, then ``prompt_args`` (with ``{prompt}``)."""

    name: str
    executable: str
    """The command looked up on ``PATH`` (an agent may name another file)."""
    npm_package: str
    tested_version: str
    """The version the real-harness tests run (tests/agents_real/agent_clis.json)."""
    headless_args: tuple[str, ...]
    model_args: tuple[str, ...]
    prompt_args: tuple[str, ...]
    env: Mapping[str, str]
    """Set for every start: fail fast, no telemetry, no self-update."""
    skills_folder: str
    """Where a project's skills are discovered, relative to the project."""
    home_files: Callable[[str | None, Mapping[str, str]], dict[str, str]]
    """``(model, env) -> {path under home: text}``: the harness's config in the fresh home."""
    parse: Callable[[str, str], "HarnessOutput"]
    docs: str
    """The page in docs/harnesses/."""
    needs_on_path: tuple[str, ...] = ()
    """Programs the harness needs on ``PATH`` besides itself (OpenCode's skill
    tool runs ``rg``; without one it downloads ripgrep into its cache, which
    every fresh home loses)."""


@dataclass(frozen=True)
class Launch:
    """What the executor runs for one start: ``argv`` in ``cwd`` with ``env``,
    standard input from the file ``stdin`` (``/dev/null``).

    ``env`` is the whole environment, not additions: merging it over the
    runner's own would bring back what the isolation dropped
    (``CLAUDE_CONFIG_DIR``, ``GIT_DIR``...)."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    stdin: str
    home: Path
    tmp: Path
    skill_dir: Path | None = None
    """The installed copy of the skill (treatment), or ``None`` (control)."""
    skill_hash: str | None = None
    """:func:`skill_tree_hash` of the installed copy, for the record."""


@dataclass(frozen=True)
class HarnessOutput:
    """What a harness printed, parsed. A field the harness does not report is
    ``None``. ``tokens_in`` counts every input token of every model request
    (cache reads and writes included); ``tokens_cached`` is the part read from
    a cache; ``tokens_out`` counts output tokens, reasoning included."""

    answer: str | None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_cached: int | None = None
    cost_usd: float | None = None
    duration_s: float | None = None
    turns: int | None = None
    error: str | None = None
    """The harness's own error message (an API error, a refused auth), if any."""

    def usage(self) -> dict:
        """The usage fields, for a run record."""
        return {key: value for key, value in (
            ("tokens_in", self.tokens_in), ("tokens_out", self.tokens_out), ("tokens_cached", self.tokens_cached),
            ("cost_usd", self.cost_usd), ("duration_s", self.duration_s), ("turns", self.turns),
        ) if value is not None}


# --- output parsers -----------------------------------------------------------

def json_lines(text: str) -> list[dict]:
    """The JSON objects among ``text``'s lines (other lines are skipped)."""
    objects = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            objects.append(value)
    return objects


def _json_document(text: str) -> dict | None:
    """The JSON object ``text`` holds, whole or as its last ``{``-started block."""
    text = text.strip()
    if not text:
        return None
    try:
        value = json.loads(text)
        return value if isinstance(value, dict) else None
    except ValueError:
        pass
    for match in reversed([m.start() for m in re.finditer(r"(?m)^\{", text)]):
        try:
            value = json.loads(text[match:])
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def parse_claude(stdout: str, stderr: str) -> HarnessOutput:
    """``claude -p --output-format stream-json --verbose``: JSON lines (the
    session's messages, its tool calls included), the last of them one
    ``result`` object with ``result``, ``is_error``, ``usage``,
    ``total_cost_usd``, ``duration_ms``, ``num_turns``. The single object of
    ``--output-format json`` is read too."""
    result = None
    for value in json_lines(stdout) or [_json_document(stdout) or {}]:
        if value.get("type") == "result":
            result = value
    if result is None:
        return HarnessOutput(None, error=_last_line(stderr) or _last_line(stdout) or "no result in the output")
    usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
    cached = _int(usage.get("cache_read_input_tokens"))
    tokens_in = _int(usage.get("input_tokens")) + _int(usage.get("cache_creation_input_tokens")) + cached
    text = result.get("result") if isinstance(result.get("result"), str) else None
    failed = bool(result.get("is_error")) or result.get("subtype") not in (None, "success")
    duration = _number(result.get("duration_ms"))
    return HarnessOutput(
        answer=None if failed else text,
        tokens_in=tokens_in, tokens_out=_int(usage.get("output_tokens")), tokens_cached=cached,
        cost_usd=_number(result.get("total_cost_usd")),
        duration_s=None if duration is None else duration / 1000,
        turns=result.get("num_turns") if isinstance(result.get("num_turns"), int) else None,
        error=(text or str(result.get("subtype"))) if failed else None,
    )


def parse_codex(stdout: str, stderr: str) -> HarnessOutput:
    """``codex exec --json``: JSON lines. The answer is the last ``agent_message``
    item; tokens are summed over the ``turn.completed`` events; a
    ``turn.failed`` is the error (a top-level ``error`` event is a notice, such
    as "Reconnecting...", unless no answer came). Codex reports neither cost,
    nor duration, nor how many model requests a turn took."""
    answer = failed = notice = None
    tokens_in = tokens_out = cached = 0
    for event in json_lines(stdout):
        kind = event.get("type")
        item = event.get("item") if isinstance(event.get("item"), dict) else {}
        if kind == "item.completed" and item.get("type") == "agent_message" and isinstance(item.get("text"), str):
            answer = item["text"]
        elif kind == "turn.completed":
            usage = event.get("usage") if isinstance(event.get("usage"), dict) else {}
            tokens_in += _int(usage.get("input_tokens"))
            cached += _int(usage.get("cached_input_tokens"))
            tokens_out += _int(usage.get("output_tokens"))
        elif kind == "turn.failed":
            failure = event.get("error") if isinstance(event.get("error"), dict) else {}
            failed = str(failure.get("message") or "the turn failed")
        elif kind == "error":
            notice = str(event.get("message") or "error")
    if failed is None and answer is None:
        failed = notice or _last_line(stderr) or "no answer in the output"
    return HarnessOutput(
        answer=None if failed else answer,
        tokens_in=tokens_in, tokens_out=tokens_out, tokens_cached=cached, error=failed,
    )


GEMINI_STREAM_EVENTS = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})


def parse_gemini_stream(events: list[dict], stderr: str) -> HarnessOutput:
    """``gemini --output-format stream-json``: JSON lines (``init``, the
    user's and the model's ``message`` events, ``tool_use`` and
    ``tool_result``, then one ``result``). The answer is the model's text
    (its ``message`` events, concatenated as Gemini CLI's own JSON output
    does); tokens and duration from the ``result``'s ``stats``
    (``input_tokens`` includes ``cached``); ``turns`` counts the model's
    turns (each run of model text or tool calls between tool results); a
    ``result`` with ``status: "error"`` (or no ``result``) is the error."""
    text: list[str] = []
    turns = 0
    in_turn = False
    result = None
    for event in events:
        kind = event.get("type")
        if kind == "message" and event.get("role") == "assistant" or kind == "tool_use":
            if not in_turn:
                turns += 1
                in_turn = True
            if kind == "message" and isinstance(event.get("content"), str):
                text.append(event["content"])
        elif kind in ("tool_result", "message"):
            in_turn = False
        elif kind == "result":
            result = event
    if result is None:
        return HarnessOutput(None, turns=turns or None,
                             error=_last_line(stderr) or "no result in the Gemini CLI stream")
    stats = result.get("stats") if isinstance(result.get("stats"), dict) else {}
    failure = result.get("error") if isinstance(result.get("error"), dict) else {}
    error = None
    if result.get("status") != "success":
        error = str(failure.get("message") or result.get("status") or "error")
    duration = _number(stats.get("duration_ms"))
    return HarnessOutput(
        answer=None if error else "".join(text),
        tokens_in=_int(stats.get("input_tokens")), tokens_out=_int(stats.get("output_tokens")),
        tokens_cached=_int(stats.get("cached")),
        duration_s=None if duration is None or error else duration / 1000,
        turns=turns or None, error=error,
    )


def parse_gemini(stdout: str, stderr: str) -> HarnessOutput:
    """``gemini -p --output-format stream-json`` (:func:`parse_gemini_stream`),
    or ``--output-format json``: one object with ``response``,
    ``stats.models.*`` (requests and tokens per model) and, on failure,
    ``error`` (printed on stdout or stderr). Gemini CLI reports no cost."""
    events = [event for event in json_lines(stdout) if event.get("type") in GEMINI_STREAM_EVENTS]
    if any(event.get("type") in ("init", "result") for event in events):
        return parse_gemini_stream(events, stderr)
    document = _json_document(stdout)
    failure = None
    if document is None or "error" in document:
        failure = (document or {}).get("error") or (_json_document(stderr) or {}).get("error")
    if document is None:
        message = failure.get("message") if isinstance(failure, dict) else None
        return HarnessOutput(None, error=message or _last_line(stderr) or "no JSON in the output")
    tokens_in = tokens_out = cached = requests = 0
    latency = 0.0
    models = (document.get("stats") or {}).get("models") or {}
    for model in models.values() if isinstance(models, dict) else ():
        tokens = model.get("tokens") or {}
        api = model.get("api") or {}
        tokens_in += _int(tokens.get("prompt"))
        cached += _int(tokens.get("cached"))
        tokens_out += _int(tokens.get("candidates")) + _int(tokens.get("thoughts"))
        requests += _int(api.get("totalRequests"))
        latency += _number(api.get("totalLatencyMs")) or 0.0
    response = document.get("response") if isinstance(document.get("response"), str) else None
    message = failure.get("message") if isinstance(failure, dict) else (str(failure) if failure else None)
    return HarnessOutput(
        answer=None if message else response,
        tokens_in=tokens_in, tokens_out=tokens_out, tokens_cached=cached,
        turns=requests or None, error=message,
    )


def parse_opencode(stdout: str, stderr: str) -> HarnessOutput:
    """``opencode run --format json``: an event stream. Each model request is a
    step (``step_start`` .. ``step_finish``, which carries its tokens and
    cost); the answer is the text of the last step; an ``error`` event is the
    error. Duration: from the first event to the last."""
    events = [event for event in json_lines(stdout) if "type" in event]
    tokens_in = tokens_out = cached = steps = 0
    cost = 0.0
    last_step_text: list[str] = []
    error = None
    stamps = [event["timestamp"] for event in events if isinstance(event.get("timestamp"), (int, float))]
    for event in events:
        part = event.get("part") if isinstance(event.get("part"), dict) else {}
        kind = event["type"]
        if kind == "step_start":
            last_step_text = []
        elif kind == "text" and isinstance(part.get("text"), str):
            last_step_text.append(part["text"])
        elif kind == "step_finish":
            steps += 1
            tokens = part.get("tokens") if isinstance(part.get("tokens"), dict) else {}
            cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
            cached += _int(cache.get("read"))
            tokens_in += _int(tokens.get("input")) + _int(cache.get("read")) + _int(cache.get("write"))
            tokens_out += _int(tokens.get("output")) + _int(tokens.get("reasoning"))
            cost += _number(part.get("cost")) or 0.0
        elif kind == "error":
            failure = event.get("error") if isinstance(event.get("error"), dict) else {}
            data = failure.get("data") if isinstance(failure.get("data"), dict) else {}
            error = str(data.get("message") or failure.get("name") or "error")
    if not events:
        return HarnessOutput(None, error=_last_line(stderr) or "no events in the output")
    answer = "".join(last_step_text) if last_step_text else None
    return HarnessOutput(
        answer=None if error else answer,
        tokens_in=tokens_in, tokens_out=tokens_out, tokens_cached=cached,
        cost_usd=cost if steps else None,
        duration_s=(max(stamps) - min(stamps)) / 1000 if len(stamps) > 1 else None,
        turns=steps or None, error=error,
    )


def _last_line(text: str) -> str | None:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:500] if lines else None


# --- the files each harness needs in a fresh home ---------------------------------

def _no_files(model: str | None, env: Mapping[str, str]) -> dict[str, str]:
    return {}


def _codex_files(model: str | None, env: Mapping[str, str]) -> dict[str, str]:
    return {".codex/config.toml": (
        "# skill-eval: a fresh Codex home for one start (docs/harnesses/codex.md)\n"
        "check_for_update_on_startup = false\n"
        "\n[analytics]\nenabled = false\n"
    )}


def _gemini_files(model: str | None, env: Mapping[str, str]) -> dict[str, str]:
    auth = "vertex-ai" if env.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() == "true" else "gemini-api-key"
    settings: dict = {
        "general": {"maxAttempts": 1, "retryFetchErrors": False,
                    "enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "security": {"auth": {"selectedType": auth}},
    }
    if model:
        settings["model"] = {"name": model}
    return {".gemini/settings.json": json.dumps(settings, indent=2) + "\n"}


OPENCODE_PLUGIN_PACKAGE = "@opencode-ai/plugin"


def _opencode_files(model: str | None, env: Mapping[str, str]) -> dict[str, str]:
    """The global config, and a config folder that reads as already holding
    ``@opencode-ai/plugin``: OpenCode otherwise installs that package from the
    npm registry into every config folder it finds, in the background, on
    every start with a fresh home (it checks for ``node_modules/`` and for the
    package in ``package-lock.json``, nothing more). A fresh home has no
    custom tools or plugins that would import it."""
    config = ".config/opencode/"
    dependencies = {OPENCODE_PLUGIN_PACKAGE: "*"}
    return {
        config + "opencode.json": json.dumps(
            {"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled"}, indent=2) + "\n",
        config + "package.json": json.dumps({"private": True, "dependencies": dependencies}, indent=2) + "\n",
        config + "package-lock.json": json.dumps(
            {"lockfileVersion": 3, "packages": {"": {"dependencies": dependencies}}}, indent=2) + "\n",
        config + "node_modules/.skill-eval": "OpenCode's plugin package is not installed in this fresh home.\n",
        config + ".gitignore": "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore\n",
    }


PRESETS: dict[str, Preset] = {
    "claude-code": Preset(
        name="claude-code", executable="claude",
        npm_package="@anthropic-ai/claude-code", tested_version="2.1.197",
        headless_args=("-p", "--output-format", "stream-json", "--verbose", "--allowedTools", "Skill,Read,Glob,Grep"),
        model_args=("--model", "{model}"),
        prompt_args=("--", "{prompt}"),
        env={"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
             "CLAUDE_CODE_MAX_RETRIES": "1"},
        skills_folder=".claude/skills", home_files=_no_files, parse=parse_claude,
        docs="docs/harnesses/claude-code.md",
    ),
    "codex": Preset(
        name="codex", executable="codex",
        npm_package="@openai/codex", tested_version="0.171.0",
        headless_args=("exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only",
                       "--disable", "unbounded_connection_retries", "--disable", "plugins"),
        model_args=("--model", "{model}"),
        prompt_args=("--", "{prompt}"),
        env={},
        skills_folder=".agents/skills", home_files=_codex_files, parse=parse_codex,
        docs="docs/harnesses/codex.md",
    ),
    "gemini-cli": Preset(
        name="gemini-cli", executable="gemini",
        npm_package="@google/gemini-cli", tested_version="0.61.0",
        headless_args=("--output-format", "stream-json", "--skip-trust", "--approval-mode", "yolo"),
        model_args=("--model", "{model}"),
        prompt_args=("--prompt={prompt}",),
        env={"GEMINI_CLI_NO_RELAUNCH": "true"},
        skills_folder=".gemini/skills", home_files=_gemini_files, parse=parse_gemini,
        docs="docs/harnesses/gemini-cli.md",
    ),
    "opencode": Preset(
        name="opencode", executable="opencode",
        npm_package="opencode-ai", tested_version="1.18.33",
        headless_args=("run", "--format", "json", "--title", "skill-eval"),
        model_args=("--model", "{model}"),
        prompt_args=("--", "{prompt}"),
        env={"OPENCODE_DISABLE_AUTOUPDATE": "true", "OPENCODE_DISABLE_MODELS_FETCH": "true",
             "OPENCODE_DISABLE_DEFAULT_PLUGINS": "true", "OPENCODE_DISABLE_SHARE": "true"},
        skills_folder=".agents/skills", home_files=_opencode_files, parse=parse_opencode,
        docs="docs/harnesses/opencode.md", needs_on_path=("rg",),
    ),
}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise PresetError(f"unknown preset {name!r}; presets are {', '.join(PRESET_NAMES)}") from None


def missing_programs(preset: Preset, env: Mapping[str, str], executable: str | None = None) -> list[str]:
    """The programs the preset runs that ``env``'s ``PATH`` does not hold: the
    harness's executable (unless given as a path that exists) and
    :attr:`Preset.needs_on_path`. For the runner's preflight."""
    path = env.get("PATH", os.defpath)
    missing = []
    command = executable or preset.executable
    if os.sep in command:
        if not os.access(command, os.X_OK):
            missing.append(command)
    elif shutil.which(command, path=path) is None:
        missing.append(command)
    missing += [program for program in preset.needs_on_path if shutil.which(program, path=path) is None]
    return missing


# --- the scratch project ---------------------------------------------------------

def skill_tree_hash(folder: Path) -> str:
    """sha256 over a folder's files: each relative path (``/``-separated,
    sorted) and its bytes, length-prefixed. Two installed copies hash alike
    exactly when they hold the same files with the same bytes."""
    files = sorted(path for path in folder.rglob("*") if path.is_file() and not path.is_symlink())
    return files_hash((path.relative_to(folder).as_posix(), path.read_bytes()) for path in files)


def files_hash(files: Iterable[tuple[str, bytes]]) -> str:
    """:func:`skill_tree_hash` of the folder that would hold ``files``
    (``(relative path, bytes)`` pairs, in any order): what the runner records
    for a skill before installing it."""
    from .probes import tree_sha256

    return tree_sha256(files)  # one definition: the records' skill_tree_sha256 too


def skill_name(skill: Path) -> str:
    """The skill's ``name`` from its SKILL.md front matter, else its folder's name.
    Harnesses key a skill by the folder it sits in (OpenCode requires the two
    to match), so the installed folder takes this name."""
    from skill_eval.linter.reader import read_regular_file
    from skill_eval.linter.rules.frontmatter._parse import parse_front_matter
    from skill_eval.linter.textfile import DEFAULT_MAX_FILE_SIZE

    try:  # as the engine reads: a FIFO or a huge file is refused, never waited on or held
        text = read_regular_file(skill / "SKILL.md", DEFAULT_MAX_FILE_SIZE).decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PresetError(f"{skill / 'SKILL.md'}: cannot read the skill to install ({error})") from None
    for entry in parse_front_matter(text.replace("\r\n", "\n")).entries:
        if entry.key == "name" and entry.string and _plain_name(entry.string.strip()):
            return entry.string.strip()
    return skill.name


def _plain_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and not any(sep in name for sep in ("/", "\\", "\0"))


def check_scratch_location(scratch: Path) -> None:
    """:class:`PresetError` when ``scratch`` lies inside a git repository or
    below a folder holding a skills folder (:data:`SKILL_FOLDERS`)."""
    for parent in scratch.parents:
        if (parent / ".git").exists():
            raise PresetError(f"{scratch}: the scratch folder lies inside the git repository {parent}; harnesses would "
                              f"read its files and skills. Use a folder outside any repository (e.g. under /tmp)")
        for folder in SKILL_FOLDERS:
            if (parent / folder).is_dir():
                raise PresetError(f"{scratch}: a parent folder holds skills ({parent / folder}); Claude Code and "
                                  f"OpenCode would list them to both arms. Use a scratch folder elsewhere")


def _install_skill(source: Path, target: Path) -> None:
    """Copy the skill folder without ``evals/`` and without any folder holding a
    probe.json (the answer key), symlinks copied as the files they point to
    only when those lie inside the skill."""
    source = source.resolve()

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = set()
        for name in names:
            path = Path(folder) / name
            if Path(folder).resolve() == source and name in SKIPPED_SKILL_FOLDERS:
                skipped.add(name)
            elif path.is_dir() and (path / "probe.json").exists():
                skipped.add(name)
            elif path.is_symlink() and not _inside(path.resolve(), source):
                skipped.add(name)
        return skipped

    shutil.copytree(source, target, ignore=ignore, symlinks=False)


def _write_files(files: Iterable[tuple[str, bytes, int]], target: Path) -> None:
    """Write a skill given as data into ``target`` (made here). Paths are
    ``/``-separated and relative; an empty, ``.`` or ``..`` part is refused."""
    target.mkdir(parents=True)
    for relative, data, mode in files:
        parts = relative.split("/")
        if not parts or any(part in ("", ".", "..") or "\0" in part for part in parts):
            raise PresetError(f"skill file {relative!r} is not a plain relative path")
        path = target.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.chmod(path, mode & 0o755)
    if not (target / "SKILL.md").is_file():
        raise PresetError(f"the skill to install as {target.name!r} holds no SKILL.md")


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


def _fill(arg: str, values: Mapping[str, str]) -> str:
    """Replace the placeholders named in ``values`` in one template argument,
    in one pass: a value that itself holds ``{model}`` is never expanded again."""
    return re.sub(r"\{(\w+)\}", lambda match: values.get(match.group(1), match.group(0)), arg)


def build_env(preset: Preset, scratch_home: Path, scratch_tmp: Path, project: Path,
              base_env: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The start's environment: the runner's (minus :data:`ISOLATION_VARIABLES`),
    the preset's, the agent's ``env``, then the fresh folders."""
    clashes = sorted(set(env or ()) & ISOLATION_VARIABLES)
    if clashes:
        raise PresetError(f"agent env sets {', '.join(clashes)}, which each start's isolation sets itself "
                          f"(a fresh home and temporary folder); remove {'it' if len(clashes) == 1 else 'them'}")
    result = {key: value for key, value in (os.environ if base_env is None else base_env).items()
              if key not in ISOLATION_VARIABLES}
    result.update(preset.env)
    result.update(env or {})
    result.update({
        "HOME": str(scratch_home), "TMPDIR": str(scratch_tmp), "TMP": str(scratch_tmp), "TEMP": str(scratch_tmp),
        "PWD": str(project),
        "XDG_CONFIG_HOME": str(scratch_home / ".config"), "XDG_DATA_HOME": str(scratch_home / ".local" / "share"),
        "XDG_CACHE_HOME": str(scratch_home / ".cache"), "XDG_STATE_HOME": str(scratch_home / ".local" / "state"),
        "GIT_CEILING_DIRECTORIES": str(project.parent),
    })
    if preset.name == "codex":
        result["CODEX_HOME"] = str(scratch_home / ".codex")
    return result


def build_argv(preset: Preset, prompt: str, model: str | None = None, args: Sequence[str] = (),
               executable: str | None = None) -> tuple[str, ...]:
    """The command: executable, headless flags, model, the agent's ``args``, prompt.
    The prompt is one argument (after ``--`` where the harness takes it
    positionally), so a prompt beginning with ``-`` is never read as a flag."""
    argv = [executable or preset.executable, *preset.headless_args]
    if model:
        argv += [_fill(arg, {"model": model}) for arg in preset.model_args]
    argv += [_fill(arg, {"model": model or ""}) for arg in args]
    argv += [_fill(arg, {"prompt": prompt}) for arg in preset.prompt_args]
    return tuple(argv)


def prepare_project(
    preset: Preset | str,
    scratch: Path,
    *,
    prompt: str,
    artifact_name: str,
    artifact: bytes,
    skill: Path | SkillFiles | None = None,
    model: str | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    base_env: Mapping[str, str] | None = None,
    executable: str | None = None,
) -> Launch:
    """Lay out one start's scratch project in ``scratch`` (made if missing; it
    must be empty) and return what to run.

    ``skill`` is the skill to install (the treatment): a skill folder (a copy
    lands in the harness's discovery folder, without ``evals/``), or the
    skill as data (:class:`SkillFiles`: the runner's copy, installed as it
    is); ``None`` is the control, the identical project without it. ``args`` and ``env`` are the
    agent's overrides; ``base_env`` defaults to this process's environment.
    """
    preset = get_preset(preset) if isinstance(preset, str) else preset
    if not _plain_name(artifact_name) or artifact_name.startswith("."):
        raise PresetError(f"artifact name {artifact_name!r} is not a plain file name")
    scratch = Path(scratch).absolute()
    check_scratch_location(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    if any(scratch.iterdir()):
        raise PresetError(f"{scratch}: the scratch folder is not empty; each start needs a fresh one")
    project, home, tmp = scratch / "project", scratch / "home", scratch / "tmp"
    for folder in (project, home, tmp, home / ".config", home / ".cache", home / ".local" / "share",
                   home / ".local" / "state"):
        folder.mkdir(parents=True)
    (project / artifact_name).write_bytes(artifact)
    skill_dir = skill_hash = None
    if isinstance(skill, (str, os.PathLike)):
        skill = Path(skill)
        if not (skill / "SKILL.md").is_file():
            raise PresetError(f"{skill}: no SKILL.md there; the treatment installs a skill folder")
        skill_dir = project / preset.skills_folder / skill_name(skill)
        _install_skill(skill, skill_dir)
        skill_hash = skill_tree_hash(skill_dir)
    elif skill is not None:
        if not _plain_name(skill.name) or skill.name.startswith("."):
            raise PresetError(f"skill name {skill.name!r} cannot name a folder; fix the skill's front-matter name")
        skill_dir = project / preset.skills_folder / skill.name
        _write_files(skill.files, skill_dir)
        skill_hash = skill_tree_hash(skill_dir)
    full_env = build_env(preset, home, tmp, project, base_env, env)
    for relative, text in preset.home_files(model, full_env).items():
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    argv = build_argv(preset, prompt, model, args, executable)
    return Launch(argv=argv, env=full_env, cwd=project, stdin=os.devnull, home=home, tmp=tmp,
                  skill_dir=skill_dir, skill_hash=skill_hash)


def parse_output(preset: Preset | str, stdout: bytes | str, stderr: bytes | str = "") -> HarnessOutput:
    """Parse what the harness printed; never raises on malformed output. An
    output without an answer always carries an ``error``."""
    preset = get_preset(preset) if isinstance(preset, str) else preset
    if isinstance(stdout, bytes):
        stdout = stdout.decode("utf-8", errors="replace")
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", errors="replace")
    try:
        parsed = preset.parse(stdout, stderr)
    except (RecursionError, ValueError, TypeError, AttributeError, KeyError) as error:
        return HarnessOutput(None, error=f"unreadable {preset.name} output: {type(error).__name__}: {error}")
    if parsed.answer is None and not parsed.error:
        parsed = replace(parsed, error=f"no answer in the {preset.name} output")
    return parsed
