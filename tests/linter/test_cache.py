"""The on-disk cache (:mod:`skill_eval.linter.cache`): a lint with it reports
exactly what a lint without it reports, whatever changed in between; it is
used when nothing changed; it is safe in a hostile workspace and when several
lints run at once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skill_eval.linter import session as session_module
from skill_eval.linter.cache import CACHE_DIR, MAGIC, MAC_SIZE, Cache, secret_key
from skill_eval.linter.engine import lint_paths

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "lint"
EXAMPLES = ROOT / "examples"
CASES = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def full(diagnostics) -> list[tuple]:
    return [(d.code, d.path, d.span, d.message, d.severity, d.related, d.fixes, d.probe) for d in diagnostics]


class Lookups:
    """Counts the cache's hits and misses of units (probes, skills, specs),
    of the workspace-wide pass apart, and the whole runs replayed from a run
    record (:meth:`Cache.replay`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reset()
        original_replay = Cache.replay

        def replay(cache, targets):
            found = original_replay(cache, targets)
            self.replays += found is not None
            return found

        monkeypatch.setattr(Cache, "replay", replay)
        original = Cache.lookup

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
        self.hits = self.misses = self.replays = 0
        self.workspace: list[bool] = []


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
    lookups.reset()
    warm = full(lint_paths([root], cache=True).diagnostics)
    assert cold == without and warm == without
    assert lookups.replays == 1 and lookups.hits == lookups.misses == 0, "the whole run came from its run record"
    monkeypatch.setattr(Cache, "replay", lambda cache, targets: None)  # unit by unit, as without a run record
    lookups.reset()
    assert full(lint_paths([root], cache=True).diagnostics) == without
    assert lookups.misses == 0 and lookups.hits > 0, "every unit came from the cache"
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


def test_a_run_record_rewritten_after_a_touch_still_sees_later_edits(tmp_path: Path, lookups: Lookups,
                                                                     settled_at_once: None) -> None:
    """A replayed run that found a file rewritten with the same bytes writes
    its record again (the file's new ``stat`` spares the next run reading
    it), with every query it held: an edit after that is still seen (the
    rewritten record once held no queries, and served the old findings)."""
    root = _workspace(tmp_path)
    lint_paths([root], cache=True)
    touched = _probe(root, "drifted-count") / "probe.json"
    touched.write_bytes(touched.read_bytes())
    lookups.reset()
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)
    assert lookups.replays == 1
    edited = _probe(root, "band-quota-rollout") / "probe.json"
    data = json.loads(edited.read_text())
    data["seeded_defects"] = 12
    edited.write_text(json.dumps(data, indent=2) + "\n")
    lookups.reset()
    found = full(lint_paths([root], cache=True).diagnostics)
    assert found == full(lint_paths([root]).diagnostics)
    assert lookups.replays == 0 and lookups.misses == 1, "the edited probe alone was linted again"
    assert any(d[0] == "SE201" and d[1] == edited for d in found)


class Listings:
    """Counts the folders listed (:func:`skill_eval.linter.reader.list_folder`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from skill_eval.linter import reader

        self.count = 0
        original = reader.list_folder

        def list_folder(folder, links=None, fd=None):
            self.count += 1
            return original(folder, links, fd)

        monkeypatch.setattr(reader, "list_folder", list_folder)


def test_a_walk_record_spares_listing_folders_and_sees_what_changes(tmp_path: Path, settled_at_once: None,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeat run lists no folder while the walk record holds, and finds
    the same; a probe added in a new folder, a probe.json added to a folder
    that had none, a probe deleted and a link whose target turned from a
    file into a folder are each seen (compared with a lint without the
    cache, which walks)."""
    root = _workspace(tmp_path)
    listings = Listings(monkeypatch)
    lint_paths([root], cache=True)  # no record yet: walked, then recorded
    assert listings.count > 0
    listings.count = 0
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)
    listings.count = 0
    lint_paths([root], cache=True)
    assert listings.count == 0, "the walk came from its record"

    def same_as_a_fresh_walk(what: str) -> None:
        listings.count = 0
        found = full(lint_paths([root], cache=True).diagnostics)
        assert listings.count > 0, f"{what}: walked again"
        assert found == full(lint_paths([root]).diagnostics), what

    copy = _probe(root).parent / "copied-probe"
    shutil.copytree(_probe(root), copy)
    same_as_a_fresh_walk("a probe in a new folder")
    lone = _probe(root).parent / "lone"
    lone.mkdir()
    lint_paths([root], cache=True)
    (lone / "question.md").write_text((_probe(root) / "question.md").read_text())
    lint_paths([root], cache=True)
    shutil.copy(_probe(root) / "probe.json", lone / "probe.json")
    same_as_a_fresh_walk("a probe.json added to a folder without one")
    shutil.rmtree(copy)
    same_as_a_fresh_walk("a probe deleted")
    outside = tmp_path / "elsewhere"  # no folder the walk looks into: only the link shows the change
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\nname: shared\ndescription: Use when testing.\n---\n\n# Shared\n")
    (lone / "SKILL.md").symlink_to(outside / "SKILL.md")
    lint_paths([root], cache=True)
    lint_paths([root], cache=True)
    (outside / "SKILL.md").unlink()
    (outside / "SKILL.md").mkdir()  # the link in lone/ now leads to a folder; lone/ itself is unchanged
    same_as_a_fresh_walk("a link whose target became a folder")


def test_a_walk_is_recorded_only_once_its_folders_settled(tmp_path: Path) -> None:
    """Folders changed within RACY_SECONDS of the walk could change again
    within one tick of the clock without a new signature: no record then."""
    root = _workspace(tmp_path)
    lint_paths([root], cache=True)
    assert not [p for p in (root / CACHE_DIR).iterdir() if p.name.endswith("-walk")]


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
    assert lookups.hits == 0 and lookups.replays == 0
    assert full(narrow) == full(lint_paths([root], overrides={"select": ["SE1"]}).diagnostics)
    config = root / "skill-eval.toml"
    config.write_text(config.read_text().replace("max-artifact-lines = 40", "max-artifact-lines = 3"))
    lookups.reset()
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)
    assert lookups.hits == 0 and lookups.replays == 0


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


MUTATIONS = [_edit_question, _edit_count, _nearer_skill, _drop_nearer_skills, _delete_question, _other_artifact,
             _copy_probe, _delete_probe, _freeze, _record_runs, _cap, _rename_step, _edit_spec, _link_out, _touch,
             _nearer_spec, _disable, _directive]
NAMES = ["band-quota-rollout", "drifted-count", "graded-confidence", "renamed-step", "self-graded-latency",
         "signposted-cache", "skipped-retry-test"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(MUTATIONS), st.sampled_from(NAMES), st.booleans()), min_size=1, max_size=6),
       st.sampled_from([1, 2]))
def test_whatever_changes_between_two_runs_the_cache_serves_nothing_stale(
    tmp_path_factory: pytest.TempPathFactory, settled_at_once: None, monkeypatch: pytest.MonkeyPatch, steps, jobs: int
) -> None:
    from skill_eval.linter import cache as cache_module
    from skill_eval.linter import execution

    monkeypatch.setattr(execution, "PARALLEL_MIN_WORK", 1)
    monkeypatch.setattr(execution, "SMALLEST_CHUNK", 2)
    monkeypatch.setattr(cache_module, "BACKGROUND_SAVE_MIN_ENTRIES", 0 if jobs == 2 else 10**9)  # shards written by a child
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
    assert lookups.hits == 0 and lookups.replays == 0


def test_links_inside_the_cache_folder_are_neither_read_nor_written_through(tmp_path: Path, settled_at_once: None) -> None:
    root = _workspace(tmp_path)
    lint_paths([root], cache=True)
    folder = root / CACHE_DIR
    shards = sorted(path for path in folder.iterdir() if not path.name.startswith((".", "CACHEDIR")))
    outside = tmp_path / "target"
    outside.write_bytes(b"precious")
    for shard in shards:
        shard.unlink()
        shard.symlink_to(outside)
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)
    assert outside.read_bytes() == b"precious"


def test_a_planted_cache_is_never_unpickled(tmp_path: Path, settled_at_once: None) -> None:
    """A repository may ship a ``.skill-eval-cache``: its shards, pickles
    that would run code, fail the MAC under this user's key and are ignored."""
    root = _workspace(tmp_path)
    lint_paths([root], cache=True)
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    import pickle

    payload = pickle.dumps(Exploit())
    for shard in (root / CACHE_DIR).iterdir():
        if shard.name.startswith((".", "CACHEDIR")):
            continue
        shard.write_bytes(MAGIC + b"\0" * MAC_SIZE + payload)
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)
    assert not marker.exists()


def test_the_secret_key_is_the_users_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    key = secret_key()
    assert key is not None and len(key) == 32 and secret_key() == key
    path = tmp_path / "home-cache" / "skill-eval" / "cache-key"
    assert path.stat().st_mode & 0o077 == 0


def test_without_a_key_nothing_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _workspace(tmp_path)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)
    assert not (root / CACHE_DIR).exists()


def test_lints_running_at_once_share_the_cache_safely(tmp_path: Path) -> None:
    """Four CLI runs at once, twice over, on a tree being edited: each reports
    what a run without the cache reports for the tree it saw, and every shard
    left is whole (its MAC verifies)."""
    root = _workspace(tmp_path)
    expected = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", "--no-cache", "--output-format", "json",
                               "--exit-zero", str(root)], capture_output=True, text=True, timeout=120).stdout
    for _round in range(2):
        runs = [subprocess.Popen([sys.executable, "-m", "skill_eval.linter.cli", "--output-format", "json", "--exit-zero",
                                  str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(4)]
        outputs = [run.communicate(timeout=120) for run in runs]
        assert [out for out, _err in outputs] == [expected] * 4, [err for _out, err in outputs]
    from skill_eval.linter.session import LintSession
    from skill_eval.linter.config import load_config
    from skill_eval.linter.reader import FileSystemReader

    cache = Cache.open(LintSession(root, load_config(root), FileSystemReader()))
    shards = [path for path in (root / CACHE_DIR).iterdir() if path.name.startswith(cache.key)]
    assert shards
    for shard in shards:
        assert cache._verified(shard.read_bytes()) is not None, shard
    assert not [path for path in (root / CACHE_DIR).iterdir() if path.name.endswith(".tmp")]


# -- shards written in the background ----------------------------------------------------------


def _stored(root: Path) -> tuple[dict, dict]:
    """The entries and signatures the cache of ``root`` holds on disk."""
    from skill_eval.linter.config import load_config
    from skill_eval.linter.reader import FileSystemReader
    from skill_eval.linter.session import LintSession

    cache = Cache.open(LintSession(root, load_config(root), FileSystemReader(), observe=True))
    cache._load()
    return cache._entries, cache._signatures


def _assert_a_run_on_one_probe_is_served_from_the_shards(root: Path, lookups: Lookups) -> None:
    """A run on one probe.json of ``root`` (a whole lint cached it) reports
    what a run without the cache reports, every unit from the cache."""
    lookups.reset()
    target = _probe(root) / "probe.json"
    assert full(lint_paths([target], cache=True).diagnostics) == full(lint_paths([target]).diagnostics)
    assert lookups.misses == 0 and lookups.hits > 1


def test_shards_written_in_the_background_are_those_written_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                lookups: Lookups, settled_at_once: None) -> None:
    """A forked child writes the units' shards while the workspace-wide pass
    runs: what it leaves on disk is what this process writes itself, and a
    run on one file is then served from it."""
    from skill_eval.linter import cache as cache_module
    from skill_eval.linter import execution

    forked = []
    original = execution.run_forked

    def spy(call):
        future = original(call)
        forked.append(future)
        return future

    monkeypatch.setattr(execution, "run_forked", spy)
    monkeypatch.setattr(cache_module, "BACKGROUND_SAVE_MIN_ENTRIES", 0)
    root = _workspace(tmp_path)
    lint_paths([root], cache=True)
    assert forked and forked[0] is not None, f"no fork: {threading.active_count()} threads running in this process"
    assert forked[0].exception() is None, "written by the child"
    in_background = _stored(root)
    shutil.rmtree(root / CACHE_DIR)
    monkeypatch.setattr(cache_module, "BACKGROUND_SAVE_MIN_ENTRIES", 10**9)
    lint_paths([root], cache=True)
    assert len(forked) == 1, "no child below the threshold"
    assert in_background == _stored(root)
    assert in_background[0]
    monkeypatch.setattr(cache_module, "BACKGROUND_SAVE_MIN_ENTRIES", 0)
    shutil.rmtree(root / CACHE_DIR)
    lint_paths([root], cache=True)
    _assert_a_run_on_one_probe_is_served_from_the_shards(root, lookups)


def test_a_large_lint_from_the_command_line_leaves_an_entry_for_every_unit(tmp_path: Path) -> None:
    """The command line on a workspace of over 1,000 probes (its shards
    written by a forked child): the cache it leaves holds an entry for every
    probe the workspace has (ground truth: the files, globbed here), and a
    run on one of them reports what a run without the cache reports."""
    from _large_workspace import copy_examples_with_probes
    from skill_eval.linter.cache import BACKGROUND_SAVE_MIN_ENTRIES

    root = copy_examples_with_probes(tmp_path / "big", BACKGROUND_SAVE_MIN_ENTRIES)
    command = [sys.executable, "-m", "skill_eval.linter.cli", "--output-format", "json", "--exit-zero"]
    first = subprocess.run([*command, str(root)], capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    probes = sorted(root.glob("skills/*/evals/probes/*/probe.json"))
    assert len(probes) > BACKGROUND_SAVE_MIN_ENTRIES
    entries, _signatures = _stored(root)
    assert {key for key in entries if key[0] == "probe"} == {("probe", str(path)) for path in probes}
    target = probes[len(probes) // 2]
    with_cache = subprocess.run([*command, str(target)], capture_output=True, text=True, timeout=300)
    without = subprocess.run([*command, "--no-cache", str(target)], capture_output=True, text=True, timeout=300)
    assert with_cache.stdout == without.stdout and with_cache.stdout.strip(), with_cache.stderr


@pytest.mark.parametrize("how", ["raises", "dies"])
def test_shards_a_failed_child_left_are_written_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lookups: Lookups,
                                                     settled_at_once: None, how: str) -> None:
    """A child that raises or dies before writing loses nothing: this process
    writes its shards, and the next run is served from them."""
    from skill_eval.linter import cache as cache_module

    monkeypatch.setattr(cache_module, "BACKGROUND_SAVE_MIN_ENTRIES", 0)
    parent = os.getpid()
    original = Cache._write_shards

    def write_shards(cache, shards, numbers):
        if os.getpid() != parent:
            if how == "dies":
                os._exit(3)
            raise OSError(28, "No space left on device")
        original(cache, shards, numbers)

    monkeypatch.setattr(Cache, "_write_shards", write_shards)
    root = _workspace(tmp_path)
    lint_paths([root], cache=True)
    _assert_a_run_on_one_probe_is_served_from_the_shards(root, lookups)


def test_no_cache_writes_nothing(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    done = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", "--no-cache", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert not (root / CACHE_DIR).exists()
    done = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", str(root)], capture_output=True, text=True, timeout=120)
    assert (root / CACHE_DIR / "CACHEDIR.TAG").is_file()
    assert (root / CACHE_DIR / ".gitignore").read_text().strip().endswith("*")
