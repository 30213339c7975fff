"""Secrets outside a workspace, and a thread that swaps the workspace's files
and folders for links to them while a linter reads it (the race tests of
tests/linter/test_sealed_reads.py and tests/server/test_sealed_server.py;
the kernel's record of opens is tests/_opens.py)."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from pathlib import Path

SECRET = "hunter2-secret-credentials"
"""What every file outside the workspace holds: never in a report."""


def outside_secrets(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A folder of secrets outside any workspace, shaped like the files and
    folders a workspace has (so that a link to it in any role would be read
    as a fixture); its folders, for the watch."""
    outside = tmp_path / "outside"
    folders = [outside, outside / "probe", outside / "skill", outside / "skill" / "evals", outside / "runs"]
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    stolen = json.dumps({"id": "stolen", "tier": 2, "kind": "floor", "question": "question.md", "notes": SECRET}) + "\n"
    for folder in (outside, outside / "probe"):
        (folder / "probe.json").write_text(stolen, encoding="utf-8")
        (folder / "question.md").write_text(f"# {SECRET}\n\n{SECRET}\n", encoding="utf-8")
    for folder in (outside, outside / "skill"):
        (folder / "SKILL.md").write_text(f"---\nname: {SECRET}\ndescription: {SECRET}\n---\n# {SECRET}\n", encoding="utf-8")
        (folder / "output-spec.md").write_text(f"# {SECRET}\n\n## `{SECRET}`\nValues: `A`\n", encoding="utf-8")
    for folder in (outside, outside / "runs"):
        (folder / "run.jsonl").write_text(json.dumps({"schema": 2, "type": "start", "probe": SECRET}) + "\n",
                                          encoding="utf-8")
    (outside / "frozen.json").write_text(json.dumps({SECRET: SECRET}), encoding="utf-8")
    (outside / "skill" / "evals" / "frozen.json").write_text(json.dumps({SECRET: SECRET}), encoding="utf-8")
    return outside, folders


class Swapper(threading.Thread):
    """Swaps files and folders of a workspace for links to the secrets
    outside and back, over and over, until stopped; each swap is a rename
    (what a hostile process sharing the machine would do). Folders are
    parked in ``node_modules/`` (never walked) while their link stands."""

    def __init__(self, root: Path, outside: Path, probe_folders: list[Path], skill: Path) -> None:
        super().__init__(daemon=True)
        self.root, self.outside = root, outside
        self.stop = threading.Event()
        self.swaps = 0
        self.error: BaseException | None = None
        self.files = [(skill / "SKILL.md", outside / "SKILL.md"), (skill / "output-spec.md", outside / "output-spec.md"),
                      (skill / "evals" / "frozen.json", outside / "frozen.json"),
                      (skill / "evals" / "runs" / "run.jsonl", outside / "run.jsonl")]
        for folder in probe_folders:
            self.files += [(folder / "probe.json", outside / "probe.json"), (folder / "question.md", outside / "question.md")]
        self.folders = [(folder, outside / "probe") for folder in probe_folders]
        self.folders += [(skill / "evals" / "runs", outside / "runs"), (skill, outside / "skill")]
        self.park = root / "node_modules"
        self.park.mkdir(exist_ok=True)

    def run(self) -> None:
        rng = random.Random(26)
        try:
            while not self.stop.is_set():
                if rng.random() < 0.7:
                    self._swap_file(*rng.choice(self.files), rng)
                else:
                    self._swap_folder(*rng.choice(self.folders), rng)
                self.swaps += 1
        except BaseException as error:  # reported by the test
            self.error = error

    def _swap_file(self, path: Path, target: Path, rng: random.Random) -> None:
        try:
            content = path.read_bytes() if not path.is_symlink() else None
        except OSError:
            return  # its folder is swapped out right now
        if content is None:
            return
        link = path.with_name(path.name + ".swap")
        try:
            os.symlink(target, link)
            os.rename(link, path)
        except OSError:
            return
        time.sleep(rng.random() * 0.002)
        real = path.with_name(path.name + ".back")
        real.write_bytes(content)
        os.rename(real, path)

    def _swap_folder(self, folder: Path, target: Path, rng: random.Random) -> None:
        parked = self.park / f"{folder.name}-{self.swaps}"
        try:
            os.rename(folder, parked)
        except OSError:
            return
        try:
            os.symlink(target, folder)
            time.sleep(rng.random() * 0.003)
            os.unlink(folder)
        finally:
            os.rename(parked, folder)


