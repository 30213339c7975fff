"""The linter never opens a file outside its workspace root, even under a race.

Files are opened relative to folder descriptors of the root, one component at
a time without following links (:class:`skill_eval.linter.reader.SealedRoot`),
so a file or folder swapped for a link between the walk (or the check of its
real path) and the read cannot lead the open outside. The ground truth is the
kernel's: ``inotify`` watches the "secret" files outside the workspace and
reports any open of them by any process (tests/_opens.py); an audit hook
would see only this interpreter, and only the last component of a path
opened relative to a descriptor.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

import _opens
from _races import SECRET, Swapper, outside_secrets as _outside
from _workspaces import floor_probe, make_workspace, probe_folder
from skill_eval.linter.reader import read_regular_file

pytestmark = pytest.mark.skipif(not _opens.available(), reason="needs inotify (Linux)")

def _secret_opens(watch: _opens.OpenWatch) -> list[tuple[str, str]]:
    return watch.events()


def _assert_watch_works(watch: _opens.OpenWatch, outside: Path) -> None:
    """The watch itself reports an open (so that its silence means something)."""
    read_regular_file(outside / "question.md")
    assert any(path == str(outside / "question.md") for path, _what in watch.events()), watch.events()


# -- the opener itself ----------------------------------------------------------------


@pytest.fixture(params=["openat2", "by components"])
def opener(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each way :class:`SealedRoot` opens: Linux's ``openat2`` in one call, or
    one component at a time (elsewhere, and after a link is met)."""
    from skill_eval.linter import reader

    if request.param != "openat2":
        monkeypatch.setattr(reader, "_openat2", None)
    elif reader._openat2 is None:
        pytest.skip("no openat2 here")
    return request.param


def test_links_inside_are_followed_and_links_out_never_opened(tmp_path: Path, opener: str) -> None:
    from skill_eval.linter.reader import OutsideRoot, SealedRoot

    outside, folders = _outside(tmp_path)
    root = tmp_path / "ws"
    (root / "a" / "b").mkdir(parents=True)
    (root / "shared").mkdir()
    (root / "shared" / "file.md").write_text("inside\n", encoding="utf-8")
    (root / "a" / "rel.md").symlink_to(Path("..") / "shared" / "file.md")
    (root / "a" / "abs.md").symlink_to(root / "shared" / "file.md")
    (root / "a" / "b" / "up").symlink_to(Path("..") / ".." / "shared")  # a folder link, relative
    (root / "a" / "around").symlink_to(Path("..") / ".." / "ws" / "shared")  # leaves the root's descriptor and comes back
    (root / "a" / "chain.md").symlink_to("rel.md")
    (root / "out.md").symlink_to(outside / "question.md")
    (root / "out-folder").symlink_to(outside)
    (root / "a" / "dotdot.md").symlink_to(Path("..") / ".." / "outside" / "question.md")
    (root / "a" / "via-folder.md").symlink_to(Path("..") / "out-folder" / "question.md")
    (root / "loop").symlink_to("loop")
    sealed = SealedRoot(str(root))
    with _opens.OpenWatch(folders) as watch:
        for inside in ("a/rel.md", "a/abs.md", "a/b/up/file.md", "a/around/file.md", "a/chain.md", "shared/file.md"):
            fd = sealed.open(str(root / inside))
            try:
                assert os.read(fd, 100) == b"inside\n", inside
            finally:
                os.close(fd)
        for out in ("out.md", "out-folder/question.md", "a/dotdot.md", "a/via-folder.md", "out-folder/runs/run.jsonl"):
            with pytest.raises(OutsideRoot):
                sealed.open(str(root / out))
        with pytest.raises(OutsideRoot):
            sealed.open(str(outside / "question.md"))  # named outside to begin with
        with pytest.raises(OSError) as looped:
            sealed.open(str(root / "loop"))
        assert looped.value.errno == errno.ELOOP
        with pytest.raises(FileNotFoundError):
            sealed.open(str(root / "a" / "missing.md"))
        assert _secret_opens(watch) == []
        _assert_watch_works(watch, outside)
    sealed.close()


def test_a_name_with_a_nul_names_no_file_not_the_file_before_the_nul(tmp_path: Path, opener: str) -> None:
    (tmp_path / "SKILL.md").write_text("skill\n", encoding="utf-8")
    with pytest.raises(ValueError):
        read_regular_file(str(tmp_path / "SKILL.md") + "\0.md", 100, tmp_path)


def test_a_folder_swapped_for_a_link_after_it_was_read_is_not_followed(tmp_path: Path, opener: str) -> None:
    """A folder replaced by a link out after a first read (as a language
    server lives on) is not followed: each read opens its path afresh from
    the root's descriptor, and the link is refused."""
    from skill_eval.linter.reader import OutsideRoot

    outside, folders = _outside(tmp_path)
    root = tmp_path / "ws"
    folder = root / "skill" / "evals" / "probes" / "p"
    folder.mkdir(parents=True)
    (folder / "question.md").write_text("mine\n", encoding="utf-8")
    assert read_regular_file(folder / "question.md", 100, root) == b"mine\n"
    folder.rename(root / "parked")
    folder.symlink_to(outside)
    with _opens.OpenWatch(folders) as watch:
        with pytest.raises(OutsideRoot):
            read_regular_file(folder / "question.md", 100, root)
        folder.unlink()
        (root / "skill").rename(root / "skill-parked")
        (root / "skill").symlink_to(outside / "skill")  # an ancestor swapped instead
        with pytest.raises(OutsideRoot):
            read_regular_file(root / "skill" / "SKILL.md", 100, root)
        assert _secret_opens(watch) == []
        _assert_watch_works(watch, outside)


# -- the race -------------------------------------------------------------------------


def _race_workspace(tmp_path: Path) -> tuple[Path, Path, list[Path], list[str]]:
    outside, folders = _outside(tmp_path)
    names = [f"p{index:02d}" for index in range(24)]
    root = make_workspace(tmp_path / "ws", {name: floor_probe(name) for name in names})
    (root / "skill" / "evals" / "runs").mkdir()
    (root / "skill" / "evals" / "runs" / "run.jsonl").write_text("", encoding="utf-8")
    (root / "skill" / "evals" / "frozen.json").write_text("{}", encoding="utf-8")
    return root, outside, folders, names


def test_the_cli_never_opens_a_secret_while_files_and_folders_are_swapped_for_links(tmp_path: Path) -> None:
    """A thread swaps files and folders (probe folders, the skill's, its
    ``evals/runs``) for links to secrets outside the workspace while the CLI
    lints it, one process and with helpers, with and without the cache:
    the kernel reports no open of any secret, no report shows one, and each
    run ends with findings (exit 1 or 0), never an internal error."""
    root, outside, folders, names = _race_workspace(tmp_path)
    swapper = Swapper(root, outside, [probe_folder(root, name) for name in names[:6]], root / "skill")
    runs = []
    with _opens.OpenWatch(folders) as watch:
        swapper.start()
        try:
            for jobs, no_cache in (("1", True), ("2", True), ("1", False), ("2", False)) * 2:
                args = [sys.executable, "-m", "skill_eval.linter.cli", "-j", jobs, "--output-format", "full"]
                if no_cache:
                    args.append("--no-cache")
                completed = subprocess.run([*args, str(root)], capture_output=True, text=True, timeout=120)
                runs.append(completed)
        finally:
            swapper.stop.set()
            swapper.join(10)
        assert swapper.error is None, swapper.error
        assert swapper.swaps > 50, swapper.swaps
        assert _secret_opens(watch) == []
        _assert_watch_works(watch, outside)
    for completed in runs:
        assert completed.returncode in (0, 1), (completed.args, completed.stderr[-3000:])
        assert SECRET not in completed.stdout and SECRET not in completed.stderr, (
            completed.args, [line for line in (completed.stdout + completed.stderr).splitlines() if SECRET in line][:5])
        assert "Traceback" not in completed.stderr and "SE000" not in completed.stdout, (
            completed.args, completed.stderr[-3000:], [line for line in completed.stdout.splitlines() if "SE000" in line][:5])


def test_a_fix_is_never_written_through_a_folder_swapped_for_a_link_after_it_was_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--fix`` reads a file, then writes it: a probe folder swapped for a
    link out in between (here exactly then) is not written through, and the
    file outside is neither opened nor changed; the fix is reported skipped."""
    from skill_eval.linter import fixes
    from skill_eval.linter.engine import lint_paths

    outside, folders = _outside(tmp_path)
    root = make_workspace(tmp_path / "ws", {"p": floor_probe("p", seeded_defects=3)})
    result = lint_paths([root], jobs=1)
    assert any(d.code == "SE201" and any(f.safe for f in d.fixes) for d in result.diagnostics)
    folder = probe_folder(root, "p")
    (outside / "probe" / "probe.json").write_bytes((folder / "probe.json").read_bytes())
    before = (outside / "probe" / "probe.json").read_bytes()
    planned = fixes.plan_fixes

    def plan_then_swap(*args, **kwargs):
        found = planned(*args, **kwargs)
        folder.rename(root / "node_modules-parked")
        folder.symlink_to(outside / "probe")
        return found

    monkeypatch.setattr(fixes, "plan_fixes", plan_then_swap)
    with _opens.OpenWatch(folders) as watch:
        applied = fixes.apply_fixes(result.diagnostics, result.sessions)
        assert watch.events() == []
    assert applied.files == [] and folder / "probe.json" in applied.skipped
    assert (outside / "probe" / "probe.json").read_bytes() == before


# -- run records behind a link out -------------------------------------------------------


@pytest.mark.parametrize("linked", ["evals/runs", "evals/runs/run.jsonl"])
def test_run_records_behind_a_link_out_are_reported_and_never_opened(tmp_path: Path, linked: str) -> None:
    """An ``evals/runs`` folder or a runs file that is a symbolic link out of the workspace is SE004 at the link (it was listed
    and said nothing before), on a cold run, on a warm run replayed from the
    cache and from the command line; its records are never opened, by the kernel's account; the finding goes
    when the link goes."""
    from skill_eval.linter.engine import lint_paths

    root = make_workspace(tmp_path / "ws", {"p": floor_probe("p")})
    outside = tmp_path / "outside"
    (outside / "evals" / "runs").mkdir(parents=True)
    secret_runs = outside / "evals" / "runs" / "run.jsonl"
    secret_runs.write_text('{"type": "start", "probe": "p", "note": "%s"}\n' % SECRET, encoding="utf-8")
    link = root / "skill" / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    target = {"evals/runs": outside / "evals" / "runs", "evals/runs/run.jsonl": secret_runs}[linked]
    link.symlink_to(target)

    def se004_at_links(**options) -> list[str]:
        return [str(d.span.path) for d in lint_paths([root], **options).diagnostics if d.code == "SE004"]

    with _opens.OpenWatch([outside / "evals", outside / "evals" / "runs"]) as watch:
        assert se004_at_links() == [str(link)]
        assert se004_at_links(cache=True) == [str(link)]
        assert se004_at_links(cache=True) == [str(link)], "a warm run replayed from the cache"
        result = subprocess.run([sys.executable, "-m", "skill_eval", "lint", str(root), "--output-format", "json"],
                                capture_output=True, text=True, cwd=tmp_path)
        assert '"SE004"' in result.stdout and SECRET not in result.stdout
        assert not [event for event in _secret_opens(watch) if event[0] == str(secret_runs)]
    link.unlink()
    assert se004_at_links(cache=True) == []
