"""The command line as a layer of the config, in the one resolution order
(defaults < config file < command line): ``--select``, ``--ignore`` replace
the file's keys; ``--extend-select``, ``--extend-ignore`` add to them; the
cache is keyed by the result (a run with an override never serves, nor is
served, another run's findings). The runner's keys of ``[suites]`` are
resolved in the same order by the runner and are no part of that key."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from _cache_watch import RuleRuns, cache_files

from skill_eval.evals.suites import SuiteSettings, load_suite_settings
from skill_eval.linter.cli import main
from skill_eval.linter.config import Config, ConfigError, apply_layer, resolve_config

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

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
    """A layer's ``[suites]`` keys set what docs/format.md gives them and leave the file's
    other ``[suites]`` keys: ``paths`` in the linter's config, ``judge``, ``judge-timeout``
    and ``distractors`` in the runner's settings, resolved in the same order."""
    (tmp_path / "skill-eval.toml").write_text('[suites]\njudge = ["python3", "judge.py"]\npaths = ["qa/*.json"]\n')
    layers = [("editor", {"suites": {"judge-timeout": 5, "distractors": ["skills/other"]}}),
              ("command line", {"suites": {"paths": ["more/*.csv"]}})]
    config = resolve_config(tmp_path, None, layers)
    assert config.suite_globs == ("more/*.csv",)
    assert load_suite_settings(config, tmp_path, layers) == SuiteSettings(
        judge=("python3", "judge.py"), judge_timeout=5.0, distractors=("skills/other",))
    assert load_suite_settings(config, tmp_path, [("editor", {"suites": {"judge": ["j"]}})]).judge == ("j",)
    assert load_suite_settings(resolve_config(tmp_path), tmp_path) == SuiteSettings(judge=("python3", "judge.py"))
    assert load_suite_settings(resolve_config(tmp_path / "nowhere-else")) == SuiteSettings()  # the defaults


RUNNER_SUITES = '[suites]\njudge = ["python3", "judge.py"]\njudge-timeout = 30\ndistractors = ["skills/other"]\n'


def test_the_linter_accepts_the_runners_suites_keys_and_keeps_none(tmp_path: Path) -> None:
    """``[suites]`` judge, judge-timeout and distractors are no unknown keys to the
    linter, and its config (the lint cache's key) is the one without them."""
    (tmp_path / "skill-eval.toml").write_text(RUNNER_SUITES)
    assert resolve_config(tmp_path)._replace(source=None) == Config()
    assert apply_layer(Config(), {"suites": {"judge": ["j"], "judge-timeout": 1}}, "editor") == Config()
    (tmp_path / "skill-eval.toml").write_text('[suites]\njudges = ["j"]\n')
    with pytest.raises(ConfigError, match=r"skill-eval\.toml: unknown key `suites\.judges` \(did you mean 'judge'\?\)"):
        resolve_config(tmp_path)


@pytest.mark.parametrize("table, message", [
    ("judge = []", "`suites.judge` must be a non-empty argv (a list of strings, no shell)"),
    ('judge = ["python3", ""]', "`suites.judge` must be a non-empty argv (a list of strings, no shell)"),
    ('judge = "judge.py"', "`suites.judge` must be a list of strings"),
    ("judge-timeout = 0", "`suites.judge-timeout` must be a positive number of seconds"),
    ("judge-timeout = true", "`suites.judge-timeout` must be a positive number of seconds"),
    ("judge-timeout = 1e9", "`suites.judge-timeout` must be a positive number of seconds"),
    ('distractors = "skills/other"', "`suites.distractors` must be a list of strings"),
])
def test_the_runner_names_the_file_and_key_of_a_wrong_suites_value(tmp_path: Path, table: str, message: str) -> None:
    config_file = tmp_path / "skill-eval.toml"
    config_file.write_text(f"[suites]\n{table}\n")
    config = resolve_config(tmp_path)  # the linter's part of the file is fine
    with pytest.raises(ConfigError) as raised:
        load_suite_settings(config, tmp_path)
    assert str(raised.value).startswith(f"{config_file}: {message}")
    with pytest.raises(ConfigError) as raised:
        load_suite_settings(Config(), tmp_path, [("editor", {"suites": tomllib.loads(table)})])
    assert str(raised.value).startswith(f"editor: {message}")






def test_a_runner_suites_edit_leaves_the_lint_cache_warm(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Editing the runner's ``[suites]`` keys (judge, judge-timeout, distractors) runs no
    rule on a warm cache and leaves its files as they were, and the runner reads the edit;
    editing ``[suites] paths`` (which decides what is linted) starts a new cache. The
    findings are a lint's without the cache each time."""
    from skill_eval.linter import session as session_module
    from skill_eval.linter.engine import lint_paths

    monkeypatch.setattr(session_module, "RACY_SECONDS", 0)  # the copied files are all fresh
    config_file = workspace / "skill-eval.toml"
    config_file.write_text(config_file.read_text() + "\n" + RUNNER_SUITES)
    runs = RuleRuns(monkeypatch)
    lint_paths([workspace], cache=True)
    assert runs.count > 0
    lint_paths([workspace], cache=True)
    warm = cache_files(workspace)
    assert warm
    config_file.write_text(config_file.read_text().replace('"judge.py"', '"other-judge.py"')
                           .replace("judge-timeout = 30", "judge-timeout = 90")
                           .replace('["skills/other"]', '["skills/other", "skills/third"]'))
    assert load_suite_settings(resolve_config(workspace), workspace) == SuiteSettings(
        judge=("python3", "other-judge.py"), judge_timeout=90.0, distractors=("skills/other", "skills/third"))
    runs.count = 0
    after_runner_edit = lint_paths([workspace], cache=True).diagnostics
    assert runs.count == 0, "the runner's settings are no part of the lint cache's key"
    assert cache_files(workspace) == warm
    runs.count = 0
    uncached = lint_paths([workspace]).diagnostics
    assert runs.count > 0  # the lint without the cache ran them: the counter counts
    assert after_runner_edit == uncached

    config_file.write_text(config_file.read_text().replace("[suites]\n", '[suites]\npaths = ["qa/*.json"]\n'))
    runs.count = 0
    after_paths_edit = lint_paths([workspace], cache=True).diagnostics
    assert runs.count > 0
    assert set(cache_files(workspace)) - set(warm)  # a new cache, keyed by the new config
    assert after_paths_edit == lint_paths([workspace]).diagnostics
