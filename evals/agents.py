"""The runner's agents: the ``[agents.NAME]`` tables of the config file.

They sit in the same file as the linter's settings (``skill-eval.toml``, or
``[tool.skill-eval.agents.NAME]`` in ``pyproject.toml``), but are read here,
not into :class:`~skill_eval.linter.config.Config`: nothing the linter
reports depends on them, so an agent edit leaves the lint cache (keyed by
that record) as it was. :func:`load_agents` reads them from the config file
a workspace's :class:`~skill_eval.linter.config.Config` came from; an
unknown key or a value of the wrong type is a
:class:`~skill_eval.linter.config.ConfigError` naming the file and the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from skill_eval.linter.config import (
    EMPTY_MAPPING, Config, config_error, integer_at_least, read_config_table, reduce_with_mappings, string_list,
)

from .presets import PRESET_NAMES
from .timeouts import TIMEOUT_RULE, is_timeout

class AgentConfig(NamedTuple):
    """An agent for the eval runner: a command (argv, never a shell), or a
    harness ``preset`` (docs/harnesses/) that knows the command, its flags,
    environment and output."""

    name: str
    command: tuple[str, ...]
    """The argv template of a plain command agent; empty for a preset."""
    env: Mapping[str, str] = EMPTY_MAPPING
    timeout: float = 600.0
    model: str = ""
    treatment: str = "prepend"
    """How the treatment arm gets the skill: ``prepend`` (SKILL.md's text before
    the prompt), ``args`` (``treatment-args`` are appended to the command) or,
    for presets (their default), ``install`` (a copy of the skill in the
    harness's skill folder of a fresh scratch project)."""
    treatment_args: tuple[str, ...] = ()
    max_output: int = 10 * 1024 * 1024
    """Bytes of stdout and of stderr kept per start (the rest is dropped and
    the record says how much there was)."""
    preset: str = ""
    """One of :data:`PRESET_NAMES`, or empty for a plain ``command``."""
    args: tuple[str, ...] = ()
    """A preset's extra arguments, after its own flags and before the prompt."""
    executable: str = ""
    """A preset's program, when not the one on ``PATH`` (a path; relative to the
    workspace root when it holds a slash)."""
    sandbox: str = "on"
    """``on`` (the default): each start runs sealed, seeing only what its arm
    is given (``skill_eval.evals.sandbox``); ``off``: unsealed, recorded so."""

    __reduce__ = reduce_with_mappings


_AGENT_KEYS = {"command", "preset", "args", "executable", "env", "timeout", "model", "treatment", "treatment-args",
               "max-output", "sandbox"}
_TREATMENTS = {False: ("prepend", "args"), True: ("install", "prepend")}
"""The treatments of a command agent and of a preset agent (the first is the default)."""


def _agent(name: str, table: Any, source: str) -> AgentConfig:
    where = f"agents.{name}"
    if not isinstance(table, dict):
        raise config_error(source, where, f"`[{where}]` must be a table")
    unknown = set(table) - _AGENT_KEYS
    if unknown:
        key = sorted(unknown)[0]
        raise config_error(source, f"{where}.{key}", f"unknown key `{where}.{key}`", _AGENT_KEYS)
    preset = table.get("preset")
    if preset is not None:
        if preset not in PRESET_NAMES:
            if not isinstance(preset, str):
                raise config_error(source, f"{where}.preset", f"`{where}.preset` must be one of {', '.join(PRESET_NAMES)}")
            raise config_error(source, preset, f"`{where}.preset` is {preset!r}, which is no preset; presets are "
                        f"{', '.join(PRESET_NAMES)}", set(PRESET_NAMES))
        if "command" in table:
            raise config_error(source, f"{where}.command", f"`[{where}]` has both `preset` and `command`; a preset knows its "
                        f"command: drop `command` (extra arguments go in `args`, another program in `executable`)")
        if "treatment-args" in table:
            raise config_error(source, f"{where}.treatment-args", f"`{where}.treatment-args` is for command agents; a preset "
                        "installs the skill (treatment = \"install\") or prepends it (treatment = \"prepend\")")
        command: tuple[str, ...] = ()
    else:
        command = table.get("command")
        if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
            raise config_error(source, f"{where}.command", f"`{where}.command` must be a non-empty list of strings (argv, "
                        f"no shell), or set `{where}.preset` to one of {', '.join(PRESET_NAMES)}")
        for key in ("args", "executable"):
            if key in table:
                raise config_error(source, f"{where}.{key}", f"`{where}.{key}` is for presets; a command agent takes its "
                            f"arguments and program in `command`")
        command = tuple(command)
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise config_error(source, f"{where}.env", f"`{where}.env` must be a table of strings")
    timeout = table.get("timeout", 600)
    if not is_timeout(timeout):
        raise config_error(source, f"{where}.timeout", f"`{where}.timeout` {TIMEOUT_RULE}")
    model = str(table.get("model", ""))
    treatments = _TREATMENTS[preset is not None]
    treatment = table.get("treatment", treatments[0])
    if treatment not in treatments:
        kind = f"a preset agent ({preset})" if preset is not None else "a command agent"
        raise config_error(source, f"{where}.treatment", f"`{where}.treatment` of {kind} must be "
                    + " or ".join(f'"{t}"' for t in treatments))
    sandbox = table.get("sandbox", "on")
    if sandbox not in ("on", "off"):
        raise config_error(source, f"{where}.sandbox", f'`{where}.sandbox` must be "on" (each start sealed, the default) or '
                    '"off" (unsealed: the agent can read what your user can, and its results are flagged)')
    executable = table.get("executable", "")
    if not isinstance(executable, str) or ("executable" in table and not executable.strip()):
        raise config_error(source, f"{where}.executable", f"`{where}.executable` must be a program's path or name")
    return AgentConfig(
        name=name,
        command=command,
        env=dict(env),
        timeout=float(timeout),
        model=model,
        treatment=treatment,
        treatment_args=string_list(table.get("treatment-args", []), source, f"{where}.treatment-args"),
        max_output=integer_at_least(table.get("max-output", 10 * 1024 * 1024), source, f"{where}.max-output", 1),
        preset=preset or "",
        args=string_list(table.get("args", []), source, f"{where}.args"),
        executable=executable,
        sandbox=sandbox,
    )


def agents_from_mapping(data: Mapping[str, Any], source: str = "<settings>") -> dict[str, AgentConfig]:
    """The agents of config-file keys (as parsed TOML): its ``agents`` table
    (none without one); the other keys are the linter's
    (:func:`~skill_eval.linter.config.config_from_mapping`)."""
    value = data.get("agents", {})
    if not isinstance(value, dict):
        raise config_error(source, "agents", "`[agents.NAME]` tables are expected")
    return {name: _agent(name, table, source) for name, table in value.items()}


def load_agents(config: Config, root: Path | None = None) -> dict[str, AgentConfig]:
    """The agents of the config file ``config`` was read from (none without
    one). The workspace's own file (in ``root``) is read below its folder
    only, as :func:`~skill_eval.linter.config.load_config` reads it."""
    source = config.source
    if source is None:
        return {}
    below = source.parent if root is not None and source.parent == root else None
    return agents_from_mapping(read_config_table(source, below), str(source))
