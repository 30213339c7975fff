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

from ..linter.config import Config, ConfigError, apply_layer, find_config_file, load_config

SECTION = "skill-eval"


def settings_mapping(value: Any) -> dict[str, Any]:
    """The config keys in a settings object: either the keys themselves or nested
    under ``skill-eval`` (as initializationOptions often are); ``None`` values dropped."""
    if not isinstance(value, Mapping):
        return {}
    if SECTION in value and isinstance(value[SECTION], Mapping):
        value = value[SECTION]
    return {str(key): item for key, item in value.items() if item is not None}


def layer(config: Config, settings: Mapping[str, Any], source: str) -> Config:
    """``config`` with the keys present in ``settings`` overriding it
    (:func:`~skill_eval.linter.config.apply_layer`, the engine's one order).

    Raises :class:`ConfigError` (naming ``source`` and the key) when invalid."""
    return apply_layer(config, settings, source)


def resolve(root: Path, layers: list[tuple[str, Mapping[str, Any]]]) -> tuple[Config, list[str]]:
    """The config for ``root``: its file, then each ``(source, settings)`` layer.

    Returns the config and the error messages of layers that were skipped."""
    errors: list[str] = []
    try:
        config = load_config(root)
    except ConfigError as error:
        errors.append(str(error))
        try:
            source = find_config_file(root)
        except ConfigError:  # the file itself is refused (a link out of the workspace): said above
            source = None
        config = Config(source=source)
    for source, settings in layers:
        try:
            config = layer(config, settings, source)
        except ConfigError as error:
            errors.append(str(error))
    return config, errors


def config_files(root: Path) -> list[Path]:
    """Files whose change changes the root's config."""
    return [root / "skill-eval.toml", root / "pyproject.toml"]
