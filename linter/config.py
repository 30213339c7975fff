"""Typed configuration, resolved in the README's order ("Configuration", later wins,
:func:`resolve_config`): defaults (:class:`Config`), the config file, then the caller's
layers (:func:`apply_layer`: the command line, or the editor's settings). An unknown key
or a wrong type is a :class:`ConfigError` naming the file and the key.

The runner reads its own settings from the same file (:attr:`Config.source`): its
``[agents.NAME]`` tables and ``[suites]`` keys are checked here, not stored, so that
editing them changes no :class:`Config` (nor the lint cache keyed by it).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from .textfile import DEFAULT_MAX_FILE_SIZE


def _toml():
    """The TOML reader, imported only when a config file is read (docs/performance.md)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


class ConfigError(Exception):
    """A config file or override that cannot be used; the message names the fix."""


EMPTY_MAPPING: Mapping = MappingProxyType({})
"""The default of the mapping fields: empty, and read-only like the rest."""


def reduce_with_mappings(record: tuple) -> tuple:
    """How a record with read-only mappings pickles (a ``MappingProxyType``
    does not): as plain dicts, made read-only again once loaded."""
    return _with_read_only_mappings, (type(record), tuple(dict(value) if isinstance(value, MappingProxyType) else value
                                                          for value in record))


def _with_read_only_mappings(kind: type, values: tuple) -> tuple:
    return kind(*(MappingProxyType(value) if isinstance(value, dict) else value for value in values))


class PhraseConfig(NamedTuple):
    """Extra phrases to flag and phrases to allow, for one phrase rule."""

    extra: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()


class CalibrationRule(NamedTuple):
    """The predeclared stop of ``skill-eval calibrate`` (``[calibration]``),
    written into every start it governs (docs/calibrate.md)."""

    reps: int = 2
    """Reps per arm: the bounded sample of the control, and of the treatment when it runs."""
    caught_in_every_rep: str = "all-reps"
    """When a start failed: ``all-reps``, every rep must be graded (else the arm is undecided);
    ``graded-reps``, the graded ones (at least one) are taken."""
    max_starts_per_probe: int | None = None
    """The most starts one probe version may cost one agent and model (``None``: no cap)."""


class Config(NamedTuple):
    """Everything that changes what skill-eval reports or runs (immutable; the lint cache is keyed by it)."""

    select: tuple[str, ...] = ()
    """Codes or code prefixes to enable (empty: all rules)."""
    ignore: tuple[str, ...] = ()
    """Codes or code prefixes to disable; wins over ``select``."""
    per_file_ignores: Mapping[str, tuple[str, ...]] = EMPTY_MAPPING
    """Glob (relative to the workspace root) -> codes ignored in matching files."""
    exclude: tuple[str, ...] = ()
    """Globs of folders and fixture files that folder walks leave out (``workspace.Exclusion``)."""
    extend_exclude: tuple[str, ...] = ()
    """More globs, added to ``exclude`` (a later layer's add to an earlier one's)."""
    signposting: PhraseConfig = PhraseConfig()
    quiz_framing: PhraseConfig = PhraseConfig()
    max_artifact_lines: int = 40
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    near_duplicate_threshold: float = 0.8
    """SE501: Jaccard similarity of word 5-grams at or above which two artifacts are near-duplicates."""
    frontmatter_allowed_keys: tuple[str, ...] = ()
    """SKILL.md front-matter keys accepted besides the Agent Skills spec's."""
    calibration_max_starts: int | None = None
    calibration_rule: CalibrationRule = CalibrationRule()
    """``[calibration]`` reps, caught-in-every-rep, max-starts-per-probe: the stop of ``skill-eval calibrate``."""
    suite_globs: tuple[str, ...] = ()
    """``[suites] paths``: globs of more skill-creator suite files than discovery finds."""
    source: Path | None = None
    """The config file this came from, if any."""

    __reduce__ = reduce_with_mappings

    def is_enabled(self, code: str, path: Path | None = None, root: Path | None = None) -> bool:
        """Whether ``code`` is reported (in ``path``, for per-file ignores)."""
        if (self.select and not code.startswith(self.select)) or code.startswith(self.ignore):
            return False
        if path is None or not self.per_file_ignores:
            return True
        path = Path(path)
        try:
            relative = path.relative_to(root).as_posix() if root else path.as_posix()
        except ValueError:
            relative = path.as_posix()
        for glob, codes in self.per_file_ignores.items():
            if code.startswith(codes) and any(fnmatch.fnmatch(text, glob) for text in (relative, path.name)):
                return False
        return True


def config_error(source: str, key: str, problem: str, known: set[str] | None = None) -> ConfigError:
    """The :class:`ConfigError` of ``key`` in ``source``, suggesting the closest of ``known``."""
    hint = ""
    if known:
        import difflib  # only when a suggestion is made

        close = difflib.get_close_matches(key, sorted(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else f" (known keys: {', '.join(sorted(known))})"
    return ConfigError(f"{source}: {problem}{hint}")


def _codes(value: Any, source: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise config_error(source, key, f"`{key}` must be a list of rule codes such as [\"SE303\"]")
    codes = tuple(v.strip().upper() for v in value)
    check_rule_codes(codes, f"{source}: `{key}`")
    return codes


def check_rule_codes(codes: Sequence[str], where: str) -> None:
    """Raise :class:`ConfigError` (its message begun by ``where``) for the first of
    ``codes`` that is neither a rule's code nor its prefix, suggesting the closest code."""
    from .rules import BY_CODE

    for code in codes:
        if not code or not any(known.startswith(code) for known in BY_CODE):
            import difflib  # only when a code is unknown

            close = difflib.get_close_matches(code, sorted(BY_CODE), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{where}: unknown rule code {code!r}{hint} (`skill-eval-lint rules` lists them; "
                              f"a prefix such as 'SE2' selects a family)")


def string_list(value: Any, source: str, key: str) -> tuple[str, ...]:
    """``value`` of ``key``, which must be a list of strings."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise config_error(source, key, f"`{key}` must be a list of strings")
    return tuple(value)


def integer_at_least(value: Any, source: str, key: str, minimum: int = 0) -> int:
    """``value`` of ``key``, which must be an integer (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise config_error(source, key, f"`{key}` must be an integer >= {minimum}")
    return value


def _phrases(value: Any, source: str, key: str) -> PhraseConfig:
    table = _table(value, key, set(PhraseConfig._fields), source, "a table with `extra` and `allow`")
    return PhraseConfig(*(string_list(table.get(name, []), source, f"{key}.{name}") for name in PhraseConfig._fields))


def _table(value: Any, key: str, known: set[str], source: str, shape: str = "a table") -> Mapping[str, Any]:
    """``value`` of ``key``, which must be a table of ``known`` keys only."""
    if not isinstance(value, dict):
        raise config_error(source, key, f"`[{key}]` must be {shape}")
    if set(value) - known:
        name = sorted(set(value) - known)[0]
        raise config_error(source, name, f"unknown key `{key}.{name}`", known)
    return value


def _per_file_ignores(value: Any, source: str, key: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise config_error(source, key, "`[per-file-ignores]` maps globs to lists of codes")
    return {glob: _codes(codes, source, f"{key}.{glob}") for glob, codes in value.items()}


def _threshold(value: Any, source: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise config_error(source, key, f"`{key}` must be a number in (0, 1]")
    return float(value)


def _rule_choice(value: Any, source: str, key: str) -> str:
    if value not in ("all-reps", "graded-reps"):
        raise config_error(source, key, f"`{key}` must be \"all-reps\" or \"graded-reps\"")
    return value


def _cap(value: Any, source: str, key: str) -> int | None:
    return None if value is None else _positive(value, source, key)  # null (editor settings): no cap


_positive = functools.partial(integer_at_least, minimum=1)

_PLAIN_KEYS = {
    "select": _codes, "ignore": _codes, "per-file-ignores": _per_file_ignores, "exclude": string_list,
    "extend-exclude": string_list, "signposting": _phrases, "quiz-framing": _phrases,
    "max-artifact-lines": _positive, "max-file-size": _positive, "near-duplicate-threshold": _threshold,
}
"""The keys that set the :class:`Config` field of their name, each with its reader (in the order checked)."""
_KNOWN_KEYS = {*_PLAIN_KEYS, "frontmatter", "calibration", "agents", "suites"}
_RULE_KEYS = {"caught-in-every-rep": _rule_choice, "reps": _positive, "max-starts-per-probe": _cap}
"""The keys of ``[calibration]`` that set a :class:`CalibrationRule` field, each with its reader."""
SUITES_KEYS = frozenset({"paths", "judge", "judge-timeout", "distractors"})
"""The keys of ``[suites]`` (docs/format.md): ``paths`` sets :attr:`Config.suite_globs`;
the others are the runner's (:func:`skill_eval.evals.suites.suite_settings_from_mapping`)."""


def config_from_mapping(data: Mapping[str, Any], source: str = "<settings>", path: Path | None = None) -> Config:
    """Build a :class:`Config` from config-file keys (as parsed TOML or editor settings)."""
    return Config(source=path)._replace(**_fields_set(data, Config(), source))


def _fields_set(data: Mapping[str, Any], below: Config, source: str) -> dict[str, Any]:
    """The :class:`Config` fields the config-file keys ``data`` set over the config ``below``."""
    unknown = set(data) - _KNOWN_KEYS
    if unknown:
        key = sorted(unknown)[0]
        raise config_error(source, key, f"unknown key `{key}`", _KNOWN_KEYS)
    values: dict[str, Any] = {}
    for key, read in _PLAIN_KEYS.items():
        if key in data:
            values[key.replace("-", "_")] = read(data[key], source, key)
    if "extend_exclude" in values:
        values["extend_exclude"] = (*below.extend_exclude, *values["extend_exclude"])
    if "frontmatter" in data:
        table = data["frontmatter"]
        if not isinstance(table, dict) or set(table) - {"allowed-keys"}:
            raise config_error(source, "frontmatter", "`[frontmatter]` takes only `allowed-keys`")
        values["frontmatter_allowed_keys"] = string_list(table.get("allowed-keys", []), source, "frontmatter.allowed-keys")
    if "calibration" in data:
        table = _table(data["calibration"], "calibration", {"max-starts", *_RULE_KEYS}, source)
        if "max-starts" in table:
            values["calibration_max_starts"] = integer_at_least(table["max-starts"], source, "calibration.max-starts")
        rule = {key.replace("-", "_"): read(table[key], source, f"calibration.{key}")
                for key, read in _RULE_KEYS.items() if key in table}
        if rule:
            values["calibration_rule"] = below.calibration_rule._replace(**rule)
    if "agents" in data and not isinstance(data["agents"], dict):
        raise config_error(source, "agents", "`[agents.NAME]` tables are expected")
    if "suites" in data:
        table = _table(data["suites"], "suites", SUITES_KEYS, source)
        if "paths" in table:
            values["suite_globs"] = string_list(table["paths"], source, "suites.paths")
    return values


CONFIG_MAX_SIZE = 1024 * 1024
"""The largest config file read (a stranger's pyproject.toml above the linted folder is read too)."""


def _read_config_text(path: Path, below: Path | None = None) -> str:
    """A config file's text, read as every other file is (below the folder ``below`` if given)."""
    from .reader import read_regular_file

    return read_regular_file(path, CONFIG_MAX_SIZE, below).decode("utf-8-sig")


def read_config_table(path: Path, below: Path | None = None) -> dict[str, Any]:
    """The unchecked skill-eval table of a config file: all of ``skill-eval.toml``, or
    ``[tool.skill-eval]`` of a ``pyproject.toml`` (read only below the folder ``below`` if given)."""
    from .reader import OutsideRoot

    tomllib = _toml()
    try:
        data = tomllib.loads(_read_config_text(path, below))
    except OutsideRoot:
        raise ConfigError(f"{path}: a link out of the workspace; nothing outside it is read: copy the file here, "
                          "or name it with --config") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the config file ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: the config file is not UTF-8 text; re-save it as UTF-8") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(f"{path}: `tool` must be a table, as `[tool.skill-eval]` makes it")
        data = tool.get("skill-eval", {})
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: `[tool.skill-eval]` must be a table")
    return data


def has_pyproject_section(path: Path) -> bool:
    """Whether ``path`` (a pyproject.toml inside its folder) has a ``[tool.skill-eval]`` table
    (one that is no valid TOML counts if it names both: reading it says what is wrong)."""
    if not _inside_folder(path):
        return False
    try:
        text = _read_config_text(path, path.parent)
    except (OSError, UnicodeDecodeError):
        return False
    if "skill-eval" not in text or "tool" not in text:
        return False
    tomllib = _toml()
    try:
        tool = tomllib.loads(text).get("tool")
    except tomllib.TOMLDecodeError:
        return True
    return isinstance(tool, dict) and "skill-eval" in tool


def _inside_folder(path: Path) -> bool:
    """Whether ``path``'s real path lies in the real path of its folder (docs/format.md)."""
    folder = os.path.realpath(path.parent)
    return os.path.realpath(path).startswith(folder.rstrip(os.sep) + os.sep)


def find_config_file(root: Path) -> Path | None:
    """The workspace's config file (step 2 of the order), if any; a
    ``skill-eval.toml`` that links out of the workspace is a :class:`ConfigError`."""
    candidate = root / "skill-eval.toml"
    if candidate.is_file():
        if not _inside_folder(candidate):
            raise ConfigError(f"{candidate}: a link to {os.path.realpath(candidate)}, outside the workspace; nothing "
                              "outside it is read: copy the file here, or name it with --config")
        return candidate
    candidate = root / "pyproject.toml"
    if candidate.is_file() and has_pyproject_section(candidate):
        return candidate
    return None


def load_config(root: Path, explicit: Path | None = None) -> Config:
    """Defaults overlaid by ``explicit`` (read wherever it is) or else the workspace's config file."""
    path = explicit or find_config_file(root)
    if path is None:
        return Config()
    return config_from_mapping(read_config_table(path, None if explicit else path.parent), str(path), path)


LAYER_KEYS = frozenset({"extend-select", "extend-ignore"})
"""Keys a layer may set besides the config file's (:func:`apply_layer`)."""


def apply_layer(config: Config, settings: Mapping[str, Any], source: str) -> Config:
    """``config`` with the layer ``settings`` (config-file keys) on top: each key replaces the
    value below it, but ``extend-select``, ``extend-ignore`` and ``extend-exclude`` add to it
    (an empty ``select``, every rule, stays so) and the keys of ``[calibration]`` replace only
    themselves. A :class:`ConfigError` names ``source`` and the key."""
    if not settings:
        return config
    extend = {key: _codes(settings[key], source, key) for key in LAYER_KEYS if key in settings}
    plain = {key: value for key, value in settings.items() if key not in LAYER_KEYS}
    config = config._replace(**_fields_set(plain, config, source))
    if extend.get("extend-select") and config.select:
        config = config._replace(select=_union(config.select, extend["extend-select"]))
    if extend.get("extend-ignore"):
        config = config._replace(ignore=_union(config.ignore, extend["extend-ignore"]))
    return config


def _union(codes: tuple[str, ...], more: tuple[str, ...]) -> tuple[str, ...]:
    return codes + tuple(code for code in more if code not in codes)


def resolve_config(
    root: Path, explicit: Path | None = None, layers: Sequence[tuple[str, Mapping[str, Any]]] = ()
) -> Config:
    """Defaults < the config file (``explicit``, or the workspace's) < each ``(source, settings)`` layer."""
    config = load_config(root, explicit)
    for source, settings in layers:
        config = apply_layer(config, settings, source)
    return config
