"""Editor settings layered on top of the workspace's config file.

Settings come from ``initializationOptions`` and ``workspace/configuration``
(section ``skill-eval``); they use the config file's keys (``select``,
``ignore``, ``per-file-ignores``, ``max-artifact-lines``, ...) and are
validated by the engine's :func:`~skill_eval.linter.config.config_from_mapping`.
Order (later wins): defaults < config file < initializationOptions <
workspace/configuration. An invalid layer is skipped and reported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..linter.config import Config, ConfigError, config_from_mapping, find_config_file, load_config

SECTION = "skill-eval"


def settings_mapping(value: Any) -> dict[str, Any]:
    """The config keys in a settings object: either the keys themselves or nested
    under ``skill-eval`` (as initializationOptions often are); ``None`` values dropped."""
    if not isinstance(value, Mapping):
        return {}
    if SECTION in value and isinstance(value[SECTION], Mapping):
        value = value[SECTION]
    return {str(key): item for key, item in value.items() if item is not None}


def _fields_for(key: str) -> list[str]:
    """The :class:`Config` fields a config key sets (``max-artifact-lines`` ->
    ``max_artifact_lines``; ``calibration`` -> ``calibration_max_starts``)."""
    name = key.replace("-", "_")
    names = list(Config._fields)
    if name in names:
        return [name]
    return [field for field in names if field.startswith(name + "_")]


def layer(config: Config, settings: Mapping[str, Any], source: str) -> Config:
    """``config`` with the keys present in ``settings`` overriding it.

    Raises :class:`ConfigError` (naming ``source`` and the key) when invalid."""
    if not settings:
        return config
    parsed = config_from_mapping(dict(settings), source)
    overrides = {}
    for key in settings:
        if key == "calibration":
            overrides.update(_calibration_overrides(config, parsed, settings[key]))
            continue
        for name in _fields_for(key):
            overrides[name] = getattr(parsed, name)
    return config._replace(**overrides)


def _calibration_overrides(config: Config, parsed: Config, table: Mapping[str, Any]) -> dict[str, Any]:
    """The ``[calibration]`` keys a settings layer gives, and only those: a
    layer naming ``max-starts`` leaves the file's predeclared stop (``reps``,
    ``caught-in-every-rep``, ``max-starts-per-probe``) as it is."""
    overrides: dict[str, Any] = {}
    if "max-starts" in table:
        overrides["calibration_max_starts"] = parsed.calibration_max_starts
    rule = {key.replace("-", "_"): getattr(parsed.calibration_rule, key.replace("-", "_"))
            for key in table if key != "max-starts"}
    if rule:
        overrides["calibration_rule"] = config.calibration_rule._replace(**rule)
    return overrides


def resolve(root: Path, layers: list[tuple[str, Mapping[str, Any]]]) -> tuple[Config, list[str]]:
    """The config for ``root``: its file, then each ``(source, settings)`` layer.

    Returns the config and the error messages of layers that were skipped."""
    errors: list[str] = []
    try:
        config = load_config(root)
    except ConfigError as error:
        errors.append(str(error))
        config = Config(source=find_config_file(root))
    for source, settings in layers:
        try:
            config = layer(config, settings, source)
        except ConfigError as error:
            errors.append(str(error))
    return config, errors


def config_files(root: Path) -> list[Path]:
    """Files whose change changes the root's config."""
    return [root / "skill-eval.toml", root / "pyproject.toml"]
