"""The cache file's layout (:mod:`skill_eval.linter.cache`): entries, then
their index and its offset. Writing it back copies the entries a run did not
change byte for byte; a damaged file or entry is no cache; forgetting the
answers remembered (:data:`~skill_eval.linter.cache.ANSWERS_KEPT`) changes
no finding."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest

from skill_eval.linter import cache as cache_module
from skill_eval.linter import session as session_module
from skill_eval.linter.cache import CACHE_DIR, CODEC, Cache, CacheIndex
from skill_eval.linter.config import load_config
from skill_eval.linter.engine import lint_paths
from skill_eval.linter.records import Dependencies
from skill_eval.linter.reader import FileSystemReader
from skill_eval.linter.session import LintSession

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def full(diagnostics) -> list[tuple]:
    return [(d.code, d.path, d.span, d.message, d.severity, d.related, d.fixes, d.probe) for d in diagnostics]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(session_module, "RACY_SECONDS", 0)
    root = tmp_path / "ws"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(CACHE_DIR))
    return root


def cache_file(root: Path) -> Path:
    [found] = [path for path in (root / CACHE_DIR).iterdir() if path.name.startswith("cache-") and "." not in path.name]
    return found


def entries(root: Path) -> dict[tuple[str, str], bytes]:
    """Each unit key -> its entry's bytes, read by the layout (not by the cache)."""
    data = cache_file(root).read_bytes()
    index_at = int.from_bytes(data[-8:], "little")
    index = CODEC.decode(data[index_at:-8], CacheIndex)
    return {key: data[offset:offset + length] for key, (offset, length) in index.entries.items()}


def probes(root: Path) -> list[Path]:
    return sorted(root.glob("skills/*/evals/probes/*/probe.json"))


def test_the_file_holds_an_entry_per_unit_decoding_to_its_result(root: Path) -> None:
    without = full(lint_paths([root]).diagnostics)
    assert full(lint_paths([root], cache=True).diagnostics) == without
    found = entries(root)
    assert {key for key in found if key[0] == "probe"} == {("probe", str(path)) for path in probes(root)}
    run, deps = CODEC.decode(found.pop(cache_module.RUN_KEY), tuple[cache_module.RunRecord, msgspec.Raw])
    assert full(run.diagnostics) == without and CODEC.decode(deps, Dependencies), "the run record: its findings and queries"
    for key, data in found.items():
        result, deps = CODEC.decode(data, tuple[cache_module.UnitResult, msgspec.Raw])
        queries = CODEC.decode(deps, Dependencies)
        if key[0] == "probe":
            assert ("content", key[1], load_config(root).max_file_size) in {query for query, _answer in queries}
            assert result.facts is not None and result.diagnostics is not None


def test_writing_back_copies_unchanged_entries_and_replaces_the_changed(root: Path) -> None:
    """A run on one edited probe writes the file back: every other entry's
    bytes are the same, the edited probe's entry is new, and the findings of
    a run using the file are a run's without the cache."""
    lint_paths([root], cache=True)
    before = entries(root)
    target = probes(root)[0]
    question = target.parent / "question.md"
    question.write_text(question.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    assert full(lint_paths([target], cache=True).diagnostics) == full(lint_paths([target]).diagnostics)
    after = entries(root)
    # the workspace pass's key names the probes linted; the run record goes (the next test)
    units = {key for key in before if key[0] not in ("workspace", "run")}
    assert units <= after.keys()
    key = ("probe", str(target))
    assert after[key] != before[key]
    assert {other for other in units if before[other] != after[other]} == {key}
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)


def test_a_run_on_a_few_files_that_writes_drops_the_run_record(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run on one edited probe writes the file without the run record; the
    next whole-workspace lint finds no record to replay, reports a run's
    findings without the cache, and leaves a record that the one after replays."""
    replays = []
    original = Cache.replay
    monkeypatch.setattr(Cache, "replay", lambda cache, targets: replays.append(found := original(cache, targets)) or found)
    lint_paths([root], cache=True)
    assert cache_module.RUN_KEY in entries(root)
    target = probes(root)[0]
    question = target.parent / "question.md"
    question.write_text(question.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    lint_paths([target], cache=True)
    assert cache_module.RUN_KEY not in entries(root)
    without = full(lint_paths([root]).diagnostics)
    assert full(lint_paths([root], cache=True).diagnostics) == without
    assert cache_module.RUN_KEY in entries(root)
    assert full(lint_paths([root], cache=True).diagnostics) == without
    assert [found is not None for found in replays] == [False, False, True]


@pytest.mark.parametrize("damage", ["truncated", "trailer", "index", "entry", "empty"])
def test_a_damaged_file_serves_nothing_wrong(root: Path, damage: str) -> None:
    lint_paths([root], cache=True)
    path = cache_file(root)
    data = bytearray(path.read_bytes())
    index_at = int.from_bytes(data[-8:], "little")
    if damage == "truncated":
        data = data[:len(data) // 2]
    elif damage == "trailer":
        data[-8:] = (len(data) * 4).to_bytes(8, "little")
    elif damage == "index":
        data[index_at:index_at + 4] = b"\xc1\xc1\xc1\xc1"
    elif damage == "entry":
        data[:index_at] = bytes(index_at)  # every entry zeroed: each decodes as no entry
    else:
        data = bytearray()
    path.write_bytes(bytes(data))
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)


def test_forgetting_remembered_answers_changes_no_finding(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With at most two answers remembered, a warm run serves every unit from
    the cache and reports a cold run's findings."""
    monkeypatch.setattr(cache_module, "ANSWERS_KEPT", 2)
    without = full(lint_paths([root]).diagnostics)
    lint_paths([root], cache=True)
    hits = []
    original = Cache.lookup
    monkeypatch.setattr(Cache, "lookup", lambda cache, unit: hits.append(found := original(cache, unit)) or found)
    monkeypatch.setattr(Cache, "replay", lambda cache, targets: None)
    assert full(lint_paths([root], cache=True).diagnostics) == without
    assert hits and all(found is not None for found in hits)
    cache = Cache.open(LintSession(root, load_config(root), FileSystemReader()))
    assert len(cache._current) == 0
    cache.close()


def test_a_run_killed_before_saving_leaves_no_file_behind(root: Path) -> None:
    """A new file left by a process that is gone is removed by the next run;
    one of a live process (this one) is left alone."""
    import subprocess
    import sys

    lint_paths([root], cache=True)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    folder = root / CACHE_DIR
    orphan = folder / f".{cache_file(root).name}.{int(gone.stdout)}.0badf00d.tmp"
    alive = folder / f".{cache_file(root).name}.{__import__('os').getpid()}.0badf00d.tmp"
    orphan.write_bytes(b"half a cache")
    alive.write_bytes(b"being written")
    assert full(lint_paths([root], cache=True).diagnostics) == full(lint_paths([root]).diagnostics)
    assert not orphan.exists() and alive.exists()


def test_a_full_disk_while_storing_serves_nothing_wrong_and_leaves_no_file(root: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes to the new file fail after the first: the run reports a run's
    findings without the cache, leaves no new file, and the next run too."""
    from skill_eval.linter import reader

    writes = []

    def failing(fd: int, data: bytes) -> None:
        writes.append(len(data))
        if len(writes) > 1:
            raise OSError(28, "No space left on device")
        reader.write_all(fd, data)

    monkeypatch.setattr(cache_module, "write_all", failing)
    without = full(lint_paths([root]).diagnostics)
    assert full(lint_paths([root], cache=True).diagnostics) == without
    assert len(writes) > 1
    assert not [path for path in (root / CACHE_DIR).iterdir() if path.name.endswith(".tmp")]
    monkeypatch.undo()
    monkeypatch.setattr(session_module, "RACY_SECONDS", 0)
    assert full(lint_paths([root], cache=True).diagnostics) == without
    assert full(lint_paths([root], cache=True).diagnostics) == without
