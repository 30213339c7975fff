"""The command line as a layer of the config, in the one resolution order
(defaults < config file < command line): ``--select``, ``--ignore`` replace
the file's keys; ``--extend-select``, ``--extend-ignore`` add to them; the
cache is keyed by the result (a run with an override never serves, nor is
served, another run's findings)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skill_eval.linter.cli import main
from skill_eval.linter.config import resolve_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EVERY_CODE = {"SE101", "SE104", "SE107", "SE201", "SE301"}
"""What the examples workspace reports with its own config (a test holds it)."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    target = tmp_path / "examples"
    shutil.copytree(EXAMPLES, target, ignore=shutil.ignore_patterns(".skill-eval-cache"))
    return target


def reported(workspace: Path, capsys, *flags: str, config: str | None = None) -> set[str]:
    if config is not None:
        toml = workspace / "skill-eval.toml"
        toml.write_text(toml.read_text().replace("max-artifact-lines = 40\n", f"max-artifact-lines = 40\n{config}\n"))
    capsys.readouterr()
    main([str(workspace), "--output-format", "json", "--exit-zero", *flags])
    return {item["code"] for item in json.loads(capsys.readouterr().out)}


def test_the_examples_report_these_codes(workspace: Path, capsys) -> None:
    assert reported(workspace, capsys) == EVERY_CODE


@pytest.mark.parametrize("config, flags, expected", [
    # the command line's --ignore replaces the file's ignore
    ('ignore = ["SE201"]', ("--ignore", "SE301"), EVERY_CODE - {"SE301"}),
    # --extend-ignore adds to it
    ('ignore = ["SE201"]', ("--extend-ignore", "SE301"), EVERY_CODE - {"SE201", "SE301"}),
    # --select replaces the file's select
    ('select = ["SE1"]', ("--select", "SE2,SE3"), {"SE201", "SE301"}),
    # --extend-select adds to it
    ('select = ["SE101"]', ("--extend-select", "SE201"), {"SE101", "SE201"}),
    # an --extend-select of a file that selects every rule still selects every rule
    ("", ("--extend-select", "SE201"), EVERY_CODE),
    # the file's per-file-ignores still apply under a command-line select
    ('[per-file-ignores]\n"skills/**" = ["SE301"]', ("--select", "SE3,SE2"), {"SE201"}),
    # both kinds in one command line: the replacement first, then the addition
    ('ignore = ["SE101"]', ("--ignore", "SE104", "--extend-ignore", "SE107"), EVERY_CODE - {"SE104", "SE107"}),
])
@pytest.mark.parametrize("cache", [False, True])
def test_command_line_overrides_follow_the_config_file(workspace: Path, capsys, config: str, flags: tuple,
                                                       expected: set[str], cache: bool) -> None:
    cache_flags = () if cache else ("--no-cache",)
    assert reported(workspace, capsys, *flags, *cache_flags, config=config) == expected
    if cache:  # the same again from a warm cache
        assert reported(workspace, capsys, *flags) == expected


def test_an_override_is_part_of_the_cache_key(workspace: Path, capsys) -> None:
    """Runs with and without overrides, one after the other on one cache,
    each report what a run without the cache reports: a run of a few rules
    (which caches only their findings) serves no later run of more."""
    for flags, expected in [(("--select", "SE201"), {"SE201"}), ((), EVERY_CODE),
                            (("--extend-ignore", "SE2,SE3"), EVERY_CODE - {"SE201", "SE301"}),
                            (("--ignore", "SE1,SE2,SE3"), set()), ((), EVERY_CODE)]:
        assert reported(workspace, capsys, *flags) == expected, flags


def test_the_order_is_defaults_then_file_then_layers(tmp_path: Path) -> None:
    (tmp_path / "skill-eval.toml").write_text('select = ["SE1"]\nignore = ["SE101"]\nmax-artifact-lines = 30\n')
    config = resolve_config(tmp_path, None, [
        ("command line", {"extend-select": ["SE201"], "extend-ignore": ["SE104"]}),
        ("editor", {"max-artifact-lines": 50, "ignore": ["SE107"]}),
    ])
    assert config.select == ("SE1", "SE201")
    assert config.ignore == ("SE107",)  # a later layer's key replaces what was resolved below it
    assert config.max_artifact_lines == 50
    assert resolve_config(tmp_path).max_artifact_lines == 30
    assert resolve_config(tmp_path / "nowhere-else").max_artifact_lines == 40  # the default


def test_a_layer_sets_the_suites_keys_it_names(tmp_path: Path) -> None:
    """A layer's ``[suites]`` keys set the fields docs/format.md gives them (``judge``,
    ``judge-timeout``, ``paths``, ``distractors``) and leave the file's other ``[suites]`` keys."""
    (tmp_path / "skill-eval.toml").write_text('[suites]\njudge = ["python3", "judge.py"]\npaths = ["qa/*.json"]\n')
    config = resolve_config(tmp_path, None, [
        ("editor", {"suites": {"judge-timeout": 5, "distractors": ["skills/other"]}}),
        ("command line", {"suites": {"paths": ["more/*.csv"]}}),
    ])
    assert config.suite_judge == ("python3", "judge.py")
    assert config.suite_judge_timeout == 5.0
    assert config.suite_globs == ("more/*.csv",)
    assert config.suite_distractors == ("skills/other",)
    assert resolve_config(tmp_path, None, [("editor", {"suites": {"judge": ["j"]}})]).suite_judge == ("j",)
