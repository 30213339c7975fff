"""The on-disk cache (:mod:`skill_eval.linter.cache`): a lint with it reports
exactly what a lint without it reports, whatever changed in between; it is
used when nothing changed; it is safe in a hostile workspace and when several
lints run at once."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _cache_watch import RuleRuns, cache_files, stored_keys
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skill_eval.linter import session as session_module
from skill_eval.linter.cache import CACHE_DIR, Cache
from skill_eval.linter.engine import lint_paths

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "lint"
EXAMPLES = ROOT / "examples"
CASES = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def full(diagnostics) -> list[tuple]:
    return [(d.code, d.path, d.span, d.message, d.severity, d.related, d.fixes, d.probe) for d in diagnostics]


class Lookups:
    """Counts the cache's hits and misses of units (probes, skills, specs),
    and of the workspace-wide pass apart, and whether each run record was
    replayed (``replays``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reset()
        original = Cache.lookup
        original_replay = Cache.replay

        def replay(cache, targets):
            found = original_replay(cache, targets)
            self.replays.append(found is not None)
            return found

        monkeypatch.setattr(Cache, "replay", replay)

        def lookup(cache, unit):
            found = original(cache, unit)
            if unit[0] == "workspace":
                self.workspace.append(found is not None)
            elif found is None:
                self.misses += 1
            else:
                self.hits += 1
            return found

        monkeypatch.setattr(Cache, "lookup", lookup)

    def reset(self) -> None:
        self.hits = self.misses = 0
        self.workspace: list[bool] = []
        self.replays: list[bool] = []


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> Lookups:
    return Lookups(monkeypatch)


@pytest.fixture
def settled_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust a file's ``stat`` however recently it changed (the test's files
    are all fresh; the racy-timestamp guard is tested on its own)."""
    monkeypatch.setattr(session_module, "RACY_SECONDS", 0)


@pytest.mark.parametrize("case", CASES + [EXAMPLES], ids=[case.name for case in CASES] + ["examples"])
def test_cache_on_is_cache_off_on_every_fixture(case: Path, tmp_path: Path, lookups: Lookups, settled_at_once: None,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / case.name
    shutil.copytree(case, root, symlinks=True, ignore=shutil.ignore_patterns(CACHE_DIR))
    without = full(lint_paths([root]).diagnostics)
    cold = full(lint_paths([root], cache=True).diagnostics)
    assert lookups.hits == 0
    assert lookups.replays == [False]
    lookups.reset()
    warm = full(lint_paths([root], cache=True).diagnostics)
    assert cold == without and warm == without
    assert lookups.replays == [True] and lookups.hits == lookups.misses == 0, "the run record was replayed"
    monkeypatch.setattr(Cache, "replay", lambda cache, targets: None)
    lookups.reset()
    assert full(lint_paths([root], cache=True).diagnostics) == without
    assert lookups.misses == 0 and lookups.hits > 0, "without it, every unit came from the cache"
    assert lookups.workspace in ([], [True]), "and the workspace-wide findings"
    for jobs in (1, 2):
        assert full(lint_paths([root], cache=True, jobs=jobs).diagnostics) == without


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(CACHE_DIR))
    return root


def _probe(root: Path, name: str = "drifted-count") -> Path:
    return root / "skills" / "closeout-review" / "evals" / "probes" / name


def test_an_edit_keeping_size_and_mtime_is_seen(tmp_path: Path, lookups: Lookups, settled_at_once: None) -> None:
    """The ``stat`` fast path compares the ctime too, which restoring the
    mtime (``touch -d``, ``os.utime``) moves."""
    root = _workspace(tmp_path)
    probe = _probe(root, "renamed-step") / "probe.json"
    lint_paths([root], cache=True)
    before = os.stat(probe)
    text = probe.read_text()
    data = json.loads(text)
    edited = text.replace(json.dumps(data["seeded_defects"]), str(data["seeded_defects"] + 1), 1)
    assert len(edited) == len(text) and edited != text
    probe.write_text(edited)
    os.utime(probe, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(probe)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    lookups.reset()
    found = full(lint_paths([root], cache=True).diagnostics)
    assert found == full(lint_paths([root]).diagnostics)
    assert any(d[0] == "SE201" and d[1] == probe for d in found), "the new count drifted"
    assert lookups.misses == 1, "only the edited probe was linted again"


def test_a_file_changed_just_before_it_was_read_is_compared_by_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The racy case: on a file system whose clock did not tick between two
    writes, a file keeps every ``stat`` field. Here every signature is the
    same (a clock that never ticks): the first run, reading files changed
    "now", records no signature, so the next run compares their contents."""
    root = _workspace(tmp_path)
    frozen_clock = time.time_ns()

    from skill_eval.linter.reader import FileSystemReader

    def signature(self, path):
        try:
            status = os.lstat(path)
        except OSError:
            return None
        return (status.st_dev, status.st_ino, status.st_size, frozen_clock, frozen_clock)

    monkeypatch.setattr(FileSystemReader, "signature", signature)
    lint_paths([root], cache=True)
    probe = _probe(root, "renamed-step") / "probe.json"
    text = probe.read_text()
    count = json.loads(text)["seeded_defects"]
    probe.write_text(text.replace(f'"seeded_defects": {count}', f'"seeded_defects": {count % 9 + 1}', 1))  # same size, same fake times
    found = full(lint_paths([root], cache=True).diagnostics)
    assert found == full(lint_paths([root]).diagnostics)
    assert any(d[0] == "SE201" and d[1] == probe for d in found)


def test_recent_changes_get_no_signature() -> None:
    now = time.time_ns()
    assert session_module._settled((1, 2, 3, now - 10**10, now - 10**10)) is not None
    assert session_module._settled((1, 2, 3, now - 10**10, now)) is None  # ctime just now
    assert session_module._settled((1, 2, 3, now, now - 10**10)) is None  # mtime just now


def test_a_file_rewritten_with_the_same_bytes_then_edited_is_seen(tmp_path: Path, lookups: Lookups,
                                                                   settled_at_once: None) -> None:
    """A file rewritten with the same bytes serves its units (its content is
    compared, and its new ``stat`` kept for the next run); an edit after
    that is still seen."""
    root = _workspace(tmp_path)
    lint_paths([root], cache=True)
    touched = _probe(root, "drifted-count") / "probe.json"
    touched.write_bytes(touched.read_bytes())
    lookups.reset()
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)
    assert lookups.misses == 0
    edited = _probe(root, "band-quota-rollout") / "probe.json"
    data = json.loads(edited.read_text())
    data["seeded_defects"] = 12
    edited.write_text(json.dumps(data, indent=2) + "\n")
    lookups.reset()
    found = full(lint_paths([root], cache=True).diagnostics)
    assert found == full(lint_paths([root]).diagnostics)
    assert lookups.misses == 1, "the edited probe alone was linted again"
    assert any(d[0] == "SE201" and d[1] == edited for d in found)


def test_a_run_on_a_few_files_uses_the_whole_workspace_cache(tmp_path: Path, lookups: Lookups, settled_at_once: None) -> None:
    """A pre-commit run: the other probes' facts come from the cache."""
    root = _workspace(tmp_path)
    lint_paths([root], cache=True)
    target = _probe(root, "signposted-cache") / "question.md"
    target.write_text(target.read_text() + "\nOne more line of evidence.\n")
    lookups.reset()
    assert full(lint_paths([target], cache=True).diagnostics) == full(lint_paths([target]).diagnostics)
    assert lookups.misses == 1 and lookups.hits >= 6


def test_another_config_is_another_cache(tmp_path: Path, lookups: Lookups, settled_at_once: None) -> None:
    root = _workspace(tmp_path)
    lint_paths([root], cache=True)
    lookups.reset()
    narrow = lint_paths([root], cache=True, overrides={"select": ["SE1"]}).diagnostics
    assert lookups.hits == 0
    assert full(narrow) == full(lint_paths([root], overrides={"select": ["SE1"]}).diagnostics)
    config = root / "skill-eval.toml"
    config.write_text(config.read_text().replace("max-artifact-lines = 40", "max-artifact-lines = 3"))
    lookups.reset()
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)
    assert lookups.hits == 0






def test_an_agent_edit_leaves_the_cache_warm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             settled_at_once: None) -> None:
    """The runner's ``[agents.NAME]`` tables are not the linter's config
    (:mod:`skill_eval.evals.agents`): editing one leaves the cache's files as
    they were and runs no rule, while a lint setting in the same file starts
    a new cache and runs the rules again. The findings are a lint's without
    the cache each time."""
    root = _workspace(tmp_path)
    config = root / "skill-eval.toml"
    runs = RuleRuns(monkeypatch)
    lint_paths([root], cache=True)
    assert runs.count > 0
    lint_paths([root], cache=True)
    warm = cache_files(root)
    text = config.read_text()
    assert "timeout = 30" in text
    config.write_text(text.replace("timeout = 30", "timeout = 45")
                      + '\n[agents.another]\npreset = "codex"\nmodel = "gpt-5"\n')
    runs.count = 0
    after_agent_edit = lint_paths([root], cache=True).diagnostics
    assert runs.count == 0
    assert cache_files(root) == warm
    runs.count = 0
    assert full(after_agent_edit) == full(lint_paths([root]).diagnostics)
    assert runs.count > 0  # the lint without the cache ran them: the counter counts

    config.write_text(config.read_text().replace("max-artifact-lines = 40", "max-artifact-lines = 3"))
    runs.count = 0
    after_lint_edit = lint_paths([root], cache=True).diagnostics
    assert runs.count > 0
    assert set(cache_files(root)) - set(warm)  # a new cache, keyed by the new config
    assert full(after_lint_edit) == full(lint_paths([root]).diagnostics)
    assert any(d.code == "SE303" for d in after_lint_edit) and not any(d.code == "SE303" for d in after_agent_edit)


# -- never stale, whatever happens between two runs -------------------------------------------


def _edit_question(root: Path, name: str, same_size: bool) -> None:
    question = _probe(root, name) / "question.md"
    if not question.exists():
        return
    text = question.read_text()
    if same_size:
        question.write_text(text.replace("e", "a", 1) if "e" in text else text)
    else:
        question.write_text(text + "\nPlease look carefully; one of these is wrong.\n")


def _edit_count(root: Path, name: str, same_size: bool) -> None:
    probe = _probe(root, name) / "probe.json"
    if not probe.exists():
        return
    data = json.loads(probe.read_text())
    data["seeded_defects"] = (data.get("seeded_defects", 1) % 9) + 1 if same_size else 12
    probe.write_text(json.dumps(data, indent=2) + "\n")


def _nearer_skill(root: Path, name: str, _flag: bool) -> None:
    folder = _probe(root, name)
    if folder.exists():
        (folder / "SKILL.md").write_text("---\nname: nearer\ndescription: Use when testing.\n---\n\n# Nearer\n\n## Only step\n\nText.\n")


def _drop_nearer_skills(root: Path, _name: str, _flag: bool) -> None:
    for path in root.glob("skills/*/evals/probes/*/SKILL.md"):
        path.unlink()


def _delete_question(root: Path, name: str, _flag: bool) -> None:
    question = _probe(root, name) / "question.md"
    if question.exists():
        question.unlink()


def _other_artifact(root: Path, name: str, copy: bool) -> None:
    folder = _probe(root, name)
    probe = folder / "probe.json"
    if not probe.exists():
        return
    data = json.loads(probe.read_text())
    data["question"] = "brief.md"
    probe.write_text(json.dumps(data, indent=2) + "\n")
    source = _probe(root, "signposted-cache") / "question.md"
    (folder / "brief.md").write_text(source.read_text() if copy and source.exists() else "# Brief\n\nShort.\n")


def _copy_probe(root: Path, name: str, same_id: bool) -> None:
    folder = _probe(root, name)
    if not (folder / "probe.json").exists():
        return
    copy = folder.parent / f"{name}-copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy)
    if not same_id:
        data = json.loads((copy / "probe.json").read_text())
        data["id"] = f"{data.get('id')}-copy"
        (copy / "probe.json").write_text(json.dumps(data, indent=2) + "\n")


def _delete_probe(root: Path, name: str, _flag: bool) -> None:
    shutil.rmtree(_probe(root, name), ignore_errors=True)


def _freeze(root: Path, name: str, _flag: bool) -> None:
    probe = _probe(root, name) / "probe.json"
    if not probe.exists():
        return
    data = json.loads(probe.read_text())
    frozen = root / "skills" / "closeout-review" / "evals" / "frozen.json"
    frozen.write_text(json.dumps({"cases": [{"id": data.get("id"), "version": data.get("version", 1),
                                             "probe_sha256": "0" * 64, "artifact_sha256": "0" * 64}]}) + "\n")


def _record_runs(root: Path, name: str, _flag: bool) -> None:
    runs = root / "skills" / "closeout-review" / "evals" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    record = {"type": "start", "probe": name, "version": 1, "arm": "control", "rep": 1, "agent": "a", "model": "m",
              "status": "ok", "kind": "floor", "defects": ["D1"], "caught": []}
    with open(runs / "r.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def _cap(root: Path, _name: str, low: bool) -> None:
    config = root / "skill-eval.toml"
    text = config.read_text()
    config.write_text(text.replace("max-starts = 200", "max-starts = 0") if low else text.replace("max-starts = 0", "max-starts = 200"))


def _rename_step(root: Path, _name: str, back: bool) -> None:
    skill = root / "skills" / "closeout-review" / "SKILL.md"
    text = skill.read_text()
    skill.write_text(text.replace("## Step 2", "## Stage 2") if not back else text.replace("## Stage 2", "## Step 2"))


def _edit_spec(root: Path, _name: str, add: bool) -> None:
    spec = root / "skills" / "closeout-review" / "output-spec.md"
    text = spec.read_text()
    spec.write_text(text + "\n## `severity`\nValues: `low`, `high`\n" if add else text.replace("`", "", 2))


def _link_out(root: Path, name: str, _flag: bool) -> None:
    question = _probe(root, name) / "question.md"
    if question.parent.exists():
        outside = root.parent / "outside.md"
        outside.write_text("# Outside\n\nNot to be read.\n")
        if question.exists() or question.is_symlink():
            question.unlink()
        question.symlink_to(outside)


def _nearer_spec(root: Path, name: str, _flag: bool) -> None:
    folder = _probe(root, name)
    if folder.exists():
        (folder / "output-spec.md").write_text("# Output spec\n\n## `verdict`\nValues: `YES`, `NO`\n")


def _disable(root: Path, name: str, on: bool) -> None:
    probe = _probe(root, name) / "probe.json"
    if not probe.exists():
        return
    data = json.loads(probe.read_text())
    data["x-skill-eval-disable"] = ["SE201", "SE301", "SE101"] if on else []
    probe.write_text(json.dumps(data, indent=2) + "\n")


def _directive(root: Path, _name: str, on: bool) -> None:
    for path in (root / "skills" / "closeout-review" / "SKILL.md", root / "skills" / "closeout-review" / "output-spec.md"):
        text = path.read_text()
        directive = "<!-- skill-eval: disable-file SE107 SE701 SE702 SE703 SE705 SE710 -->\n"
        path.write_text(directive + text if on else text.replace(directive, ""))


def _touch(root: Path, name: str, _flag: bool) -> None:
    for path in _probe(root, name).glob("*"):
        os.utime(path)


SUITE = Path("skills") / "closeout-review" / "evals" / "evals.json"


def _suite(root: Path, name: str, duplicate: bool) -> None:
    """A skill-creator suite beside the probes, written anew (a duplicate
    id when ``duplicate``: SE803), naming an input file of ``name``."""
    evals = [{"id": 1, "prompt": f"Review the closeout of {name}", "files": [f"evals/files/{name}.csv"],
              "expectations": ["Names the drifted count"]},
             {"id": 1 if duplicate else 2, "prompt": "Review it again", "expectations": ["Lists every defect"]}]
    (root / SUITE).write_text(json.dumps({"skill_name": "closeout-review", "evals": evals}, indent=2) + "\n")


def _drop_suite(root: Path, _name: str, _flag: bool) -> None:
    (root / SUITE).unlink(missing_ok=True)


def _suite_file(root: Path, name: str, present: bool) -> None:
    """The input file a suite of :func:`_suite` names for ``name``, added or removed."""
    path = root / SUITE.parent / "files" / f"{name}.csv"
    if present:
        path.parent.mkdir(exist_ok=True)
        path.write_text("rent,1200\n")
    else:
        path.unlink(missing_ok=True)


def _nothing(_root: Path, _name: str, _flag: bool) -> None:
    """No change: the next run replays its run record."""


MUTATIONS = [_suite, _drop_suite, _suite_file, _nothing, _edit_question, _edit_count, _nearer_skill, _drop_nearer_skills, _delete_question, _other_artifact,
             _copy_probe, _delete_probe, _freeze, _record_runs, _cap, _rename_step, _edit_spec, _link_out, _touch,
             _nearer_spec, _disable, _directive]
NAMES = ["band-quota-rollout", "drifted-count", "graded-confidence", "renamed-step", "self-graded-latency",
         "signposted-cache", "skipped-retry-test"]


REPLAY_CHANGES = {
    "probe.json edited": lambda root: _edit_count(root, "drifted-count", True),
    "question.md edited": lambda root: _edit_question(root, "renamed-step", False),
    "question.md removed": lambda root: _delete_question(root, "renamed-step", False),
    "SKILL.md edited": lambda root: _rename_step(root, "", False),
    "SKILL.md added": lambda root: _nearer_skill(root, "graded-confidence", False),
    "output-spec.md edited": lambda root: _edit_spec(root, "", True),
    "output-spec.md added": lambda root: _nearer_spec(root, "graded-confidence", False),
    "probe added": lambda root: _copy_probe(root, "drifted-count", False),
    "probe removed": lambda root: _delete_probe(root, "drifted-count", False),
    "suite edited": lambda root: _suite(root, "drifted-count", True),
    "suite removed": lambda root: _drop_suite(root, "", False),
    "suite's file added": lambda root: _suite_file(root, "signposted-cache", True),
    "runs file added": lambda root: [_record_runs(root, "drifted-count", False) for _start in range(201)],  # over SE503's cap
    "directive added": lambda root: _directive(root, "", True),
}


@pytest.mark.parametrize("change", list(REPLAY_CHANGES))
def test_the_run_record_replays_an_unchanged_workspace_and_nothing_stale(
    change: str, tmp_path: Path, lookups: Lookups, settled_at_once: None
) -> None:
    """A repeat whole-workspace lint replays the run record (no unit is
    looked up); after any change to a file the lint read, added or removed,
    it lints again and reports what a lint without the cache reports."""
    root = _workspace(tmp_path)
    _suite(root, "signposted-cache", False)
    first = full(lint_paths([root], cache=True).diagnostics)
    assert any(d[0].startswith("SE8") for d in first), "the suite is linted"
    lookups.reset()
    assert full(lint_paths([root], cache=True).diagnostics) == first
    assert lookups.replays == [True] and lookups.hits == lookups.misses == 0
    REPLAY_CHANGES[change](root)
    lookups.reset()
    found = full(lint_paths([root], cache=True).diagnostics)
    assert found == full(lint_paths([root]).diagnostics)
    assert found != first, "the change changes the findings (else this case tests nothing)"
    assert lookups.replays == [False]
    lookups.reset()
    assert full(lint_paths([root], cache=True).diagnostics) == found
    assert lookups.replays == [True], "the new run record"


def test_a_rewritten_file_is_compared_then_trusted_again(tmp_path: Path, lookups: Lookups, settled_at_once: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A file rewritten with the same bytes: the replay reads and hashes it
    once, records its new signature, and the next replay trusts its ``stat``."""
    from skill_eval.linter.session import LintSession

    root = _workspace(tmp_path)
    lint_paths([root], cache=True)
    touched = _probe(root, "drifted-count") / "probe.json"
    touched.write_bytes(touched.read_bytes())
    hashed: list[str] = []
    original = LintSession.content_answer

    def content_answer(session, path, *args):
        hashed.append(str(path))
        return original(session, path, *args)

    monkeypatch.setattr(LintSession, "content_answer", content_answer)
    lookups.reset()
    lint_paths([root], cache=True)
    assert lookups.replays == [True] and str(touched) in hashed
    hashed.clear()
    lookups.reset()
    lint_paths([root], cache=True)
    assert lookups.replays == [True] and str(touched) not in hashed
    assert not [path for path in hashed if os.path.isfile(path)], "only missing files are looked for again"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(MUTATIONS), st.sampled_from(NAMES), st.booleans()), min_size=1, max_size=6),
       st.sampled_from([1, 2]))
def test_whatever_changes_between_two_runs_the_cache_serves_nothing_stale(
    tmp_path_factory: pytest.TempPathFactory, settled_at_once: None, monkeypatch: pytest.MonkeyPatch, steps, jobs: int
) -> None:
    from skill_eval.linter import execution

    monkeypatch.setattr(execution, "PARALLEL_MIN_WORK", 1)
    monkeypatch.setattr(execution, "SMALLEST_CHUNK", 2)
    root = _workspace(tmp_path_factory.mktemp("mutations"))
    lint_paths([root], cache=True, jobs=jobs)
    for mutation, name, flag in steps:
        mutation(root, name, flag)
        target = [root] if mutation is not _edit_question else [_probe(root, name) / "probe.json"]
        if not target[0].exists():
            target = [root]
        assert full(lint_paths(target, cache=True, jobs=jobs).diagnostics) == full(lint_paths(target).diagnostics), (mutation, name, flag)
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(MUTATIONS), st.sampled_from(NAMES), st.booleans(),
                          st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(["probe.json", "question.md"])),
                                   min_size=1, max_size=3)),
                min_size=1, max_size=5),
       st.sampled_from([1, 2]), st.booleans())
def test_a_run_on_some_files_after_changes_elsewhere_serves_nothing_stale(
    tmp_path_factory: pytest.TempPathFactory, settled_at_once: None, monkeypatch: pytest.MonkeyPatch, steps, jobs: int,
    whole_first: bool
) -> None:
    """The pre-commit shape: after each change, a run on files of other
    probes than the changed one (their findings compare them with every
    probe: SE501, SE006 read the changed probe's facts from the cache or
    anew) reports what a run without the cache reports."""
    from skill_eval.linter import execution

    monkeypatch.setattr(execution, "PARALLEL_MIN_WORK", 1)
    monkeypatch.setattr(execution, "SMALLEST_CHUNK", 2)
    root = _workspace(tmp_path_factory.mktemp("elsewhere"))
    if whole_first:
        lint_paths([root], cache=True, jobs=jobs)
    for mutation, name, flag, targets in steps:
        mutation(root, name, flag)
        paths = [path for path in (_probe(root, probe) / file for probe, file in targets) if path.exists()] or [root]
        assert full(lint_paths(paths, cache=True, jobs=jobs).diagnostics) == full(lint_paths(paths).diagnostics), \
            (mutation.__name__, name, flag, targets)


# -- the language server's scan -------------------------------------------------------------


def test_the_server_scan_uses_the_cache_and_finds_the_same(tmp_path: Path, lookups: Lookups, settled_at_once: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from skill_eval.linter import engine
    from skill_eval.linter.config import load_config
    from skill_eval.server.state import WorkspaceState

    root = _workspace(tmp_path)

    def scanned(cache: bool) -> dict:
        state = WorkspaceState(root, load_config(root), {}, jobs=1, cache=cache)
        for _step in state.scan():
            pass
        return {path: full(found) for path, found in state.all_diagnostics().items()}

    expected = scanned(cache=False)
    assert scanned(cache=True) == expected
    linted = []
    original = engine.lint_units_here
    monkeypatch.setattr(engine, "lint_units_here", lambda session, units, *rest: linted.extend(units) or original(session, units, *rest))
    lookups.reset()
    assert scanned(cache=True) == expected
    assert lookups.hits and not lookups.misses
    assert lookups.workspace == [True], "the workspace-wide findings came from the cache too"
    assert linted == [], "nothing was linted again"
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)


# -- hostile workspaces and concurrent runs ---------------------------------------------------


def test_a_cache_folder_that_is_a_link_is_not_used(tmp_path: Path, lookups: Lookups) -> None:
    root = _workspace(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / CACHE_DIR).symlink_to(outside, target_is_directory=True)
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)
    lint_paths([root], cache=True)
    assert list(outside.iterdir()) == [], "nothing written through the link"
    assert lookups.hits == 0


def test_links_inside_the_cache_folder_are_neither_read_nor_written_through(tmp_path: Path, settled_at_once: None) -> None:
    root = _workspace(tmp_path)
    lint_paths([root], cache=True)
    folder = root / CACHE_DIR
    files = sorted(path for path in folder.iterdir() if not path.name.startswith((".", "CACHEDIR")))
    outside = tmp_path / "target"
    outside.write_bytes(b"precious")
    for file in files:
        file.unlink()
        file.symlink_to(outside)
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)
    assert outside.read_bytes() == b"precious"


def test_a_planted_cache_runs_nothing(tmp_path: Path, settled_at_once: None) -> None:
    """A repository may ship a ``.skill-eval-cache``: a pickle that would run
    code, in place of the cache file, is not MessagePack of the cache's
    layout and is ignored; so is MessagePack of that layout with an
    extension type (naming a callable) where a record stands."""
    root = _workspace(tmp_path)
    lint_paths([root], cache=True)
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    import pickle

    import msgspec

    [cache_file] = [path for path in (root / CACHE_DIR).iterdir() if path.name.startswith("cache-")]
    planted = [msgspec.msgpack.Ext(code, msgspec.msgpack.encode(["os.system", f"touch {marker}"])) for code in range(1, 8)]
    planted_entry = msgspec.msgpack.encode(((planted, None, None), {}))
    planted_run = msgspec.msgpack.encode((("0" * 32, planted, []), {}))
    index = {("probe", str(path)): (0, len(planted_entry)) for path in root.glob("skills/*/evals/probes/*/probe.json")}
    index[("run", "")] = (len(planted_entry), len(planted_run))
    entries = planted_entry + planted_run
    laid_out = entries + msgspec.msgpack.encode([index]) + len(entries).to_bytes(8, "little")
    for payload in (pickle.dumps(Exploit()), laid_out):
        cache_file.write_bytes(payload)
        assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)
        assert not marker.exists()


def test_lints_running_at_once_share_the_cache_safely(tmp_path: Path) -> None:
    """Four CLI runs at once, twice over, on a tree being edited: each reports
    what a run without the cache reports for the tree it saw, and the cache
    file left is whole (it loads, with an entry for every probe)."""
    root = _workspace(tmp_path)
    expected = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", "--no-cache", "--output-format", "json",
                               "--exit-zero", str(root)], capture_output=True, text=True, timeout=120).stdout
    for round_ in range(2):
        runs = [subprocess.Popen([sys.executable, "-m", "skill_eval.linter.cli", "--output-format", "json", "--exit-zero",
                                  str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(4)]
        try:
            outputs = [run.communicate(timeout=300) for run in runs]
        finally:
            for run in runs:  # none left writing the cache after a timeout
                if run.poll() is None:
                    run.kill()
                    run.communicate()
        differing = [(index, run.returncode, err, "".join(difflib.unified_diff(
            expected.splitlines(True), out.splitlines(True), "no cache", f"round {round_} run {index}", n=1))[:4000])
                     for index, (run, (out, err)) in enumerate(zip(runs, outputs)) if out != expected]
        assert differing == [], (differing, sorted(path.name for path in (root / CACHE_DIR).iterdir()))
    from skill_eval.linter.session import LintSession
    from skill_eval.linter.config import load_config
    from skill_eval.linter.reader import FileSystemReader

    cache = Cache.open(LintSession(root, load_config(root), FileSystemReader()))
    left = sorted(path.name for path in (root / CACHE_DIR).iterdir())
    assert {key for key in stored_keys(root) if key[0] == "probe"} == {
        ("probe", str(path)) for path in root.glob("skills/*/evals/probes/*/probe.json")}, (cache.file_name, left)
    assert not [name for name in left if name.endswith(".tmp")], left


def test_a_large_lint_from_the_command_line_leaves_an_entry_for_every_unit(tmp_path: Path) -> None:
    """The command line on a workspace of over 1,000 probes (linted in worker
    processes): the cache it leaves holds an entry for every probe the
    workspace has (ground truth: the files, globbed here), and a run on one
    of them reports what a run without the cache reports."""
    from _large_workspace import copy_examples_with_probes

    root = copy_examples_with_probes(tmp_path / "big", 1000)
    command = [sys.executable, "-m", "skill_eval.linter.cli", "--output-format", "json", "--exit-zero"]
    first = subprocess.run([*command, str(root)], capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    probes = sorted(root.glob("skills/*/evals/probes/*/probe.json"))
    assert len(probes) > 1000
    assert {key for key in stored_keys(root) if key[0] == "probe"} == {("probe", str(path)) for path in probes}
    target = probes[len(probes) // 2]
    with_cache = subprocess.run([*command, str(target)], capture_output=True, text=True, timeout=300)
    without = subprocess.run([*command, "--no-cache", str(target)], capture_output=True, text=True, timeout=300)
    assert with_cache.stdout == without.stdout and with_cache.stdout.strip(), with_cache.stderr


def test_no_cache_writes_nothing(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    done = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", "--no-cache", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert not (root / CACHE_DIR).exists()
    done = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", str(root)], capture_output=True, text=True, timeout=120)
    assert (root / CACHE_DIR / "CACHEDIR.TAG").is_file()
    assert (root / CACHE_DIR / ".gitignore").read_text().strip().endswith("*")
