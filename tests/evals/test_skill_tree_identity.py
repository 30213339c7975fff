"""A rep's identity covers the whole skill folder (``skill_tree_sha256``), not
only SKILL.md: an edited reference makes earlier reps another identity for
resume, the report and ``probe_status`` alike. The expected hash is computed
here independently of the runner (tests/_skill_tree.py)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from skill_eval.evals.api import probe_status
from skill_eval.evals.cli import run_main
from skill_eval.evals.probes import Workspace
from skill_eval.evals.viewer_build import build_model
from skill_eval.evals.records import sha256_file

from _skill_tree import skill_tree_sha256
from evals_helpers import agent_command

PROBE = "euphemized-coverage"
RULE = {"command": agent_command("rule_agent.py"), "model": "m1", "timeout": 30}


def run(suite, *args: str) -> int:
    return run_main([str(suite.probe(PROBE)), "--no-progress", "--reps", "1", *args])


def ok_starts(suite) -> list[dict]:
    return [r for r in suite.records(PROBE) if r["status"] == "ok"]


def groups_of(suite) -> list[dict]:
    model = build_model(Workspace.open([suite.root]), lint=False, answers=False)
    return [g for g in model["groups"] if g["probe"] == PROBE]


def test_editing_a_reference_makes_earlier_reps_another_identity(suite, capsys):
    suite.configure({"rule": RULE})
    references = suite.skill / "references"
    references.mkdir()
    (references / "checklist.md").write_text("1. Name every criterion.\n")
    assert run(suite) == 0
    first = ok_starts(suite)
    assert len(first) == 2
    tree = skill_tree_sha256(suite.skill)
    assert {r["skill_tree_sha256"] for r in first} == {tree}
    assert {r["skill_sha256"] for r in first} == {sha256_file(suite.skill / "SKILL.md")}
    plan = next(line for line in suite.lines() if line.get("type") == "plan")
    assert {entry[7] for entry in plan["starts"]} == {tree}

    # unchanged skill: nothing to run again
    assert run(suite) == 0
    assert len(ok_starts(suite)) == 2
    # what the treatment never gets does not change the identity: the suite's
    # evals/ (runs, frozen.json, other probes), hidden and tool folders
    (suite.skill / "evals" / "notes.md").write_text("evals are not the skill\n")
    (suite.skill / ".ruff_cache").mkdir()
    (suite.skill / ".ruff_cache" / "CACHEDIR.TAG").write_text("Signature\n")
    (suite.skill / "node_modules").mkdir()
    (suite.skill / "node_modules" / "x.js").write_text("1")
    assert run(suite) == 0
    assert len(ok_starts(suite)) == 2

    # a reference edited, SKILL.md untouched: every rep runs again, as a new identity
    assert probe_status(suite.probe(PROBE) / "probe.json").starts == 2
    (references / "checklist.md").write_text("1. Name every criterion.\n2. Quote the evidence.\n")
    # probe_status shows the current content's row only: none yet
    assert probe_status(suite.probe(PROBE) / "probe.json").starts == 0
    capsys.readouterr()
    assert run(suite) == 0
    assert "2 start(s) to make, 0 already recorded ok" in capsys.readouterr().err
    second = [r for r in ok_starts(suite) if r not in first]
    assert len(second) == 2
    new_tree = skill_tree_sha256(suite.skill)
    assert new_tree != tree and {r["skill_tree_sha256"] for r in second} == {new_tree}
    assert {r["skill_sha256"] for r in second} == {r["skill_sha256"] for r in first}

    # the report keeps the two contents apart and flags the old one
    groups = groups_of(suite)
    by_tree = {g["hashes"]["skill_tree_sha256"]: g for g in groups}
    assert set(by_tree) == {tree, new_tree}
    assert by_tree[tree]["on_disk"] == "skill-edited" and by_tree[new_tree]["on_disk"] == "current"
    assert all(sum(a["starts"] for a in g["arms"].values()) == 2 for g in groups)
    assert probe_status(suite.probe(PROBE) / "probe.json").starts == 2

    # a new file (not only an edit) is another identity too, in a hidden folder as well
    (references / "extra.md").write_text("more\n")
    assert run(suite) == 0
    assert len(ok_starts(suite)) == 6
    (suite.skill / ".claude").mkdir()
    (suite.skill / ".claude" / "notes.md").write_text("hidden, but no tool folder: part of the skill\n")
    assert run(suite) == 0
    assert len(ok_starts(suite)) == 8
    assert {r["skill_tree_sha256"] for r in ok_starts(suite)[-2:]} == {skill_tree_sha256(suite.skill)}


def test_records_without_a_tree_hash_are_another_identity(suite):
    """Records of a runner that did not hash the tree cannot show the skill
    folder was the same: they are not counted as the current content's reps."""
    suite.configure({"rule": RULE})
    assert run(suite) == 0
    for path in suite.files():
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for line in lines:
            line.pop("skill_tree_sha256", None)
            for entry in line.get("starts") or ():
                del entry[7:]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert run(suite) == 0
    assert len(ok_starts(suite)) == 4
    assert {g["hashes"]["skill_tree_sha256"] is None for g in groups_of(suite)} == {True, False}


def test_the_tree_never_follows_links_nor_opens_fifos(suite, tmp_path):
    """A link in the skill folder to a file outside the workspace is neither
    read nor hashed (nor copied); a FIFO is never opened (no hang)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the workspace\n")
    suite.configure({"rule": RULE})
    (suite.skill / "leak.md").symlink_to(secret)
    os.mkfifo(suite.skill / "pipe.md")
    outcome: list[int] = []
    worker = threading.Thread(target=lambda: outcome.append(run(suite)), daemon=True)
    worker.start()
    worker.join(120)
    assert outcome == [0], "the run hung on the FIFO or failed"
    records = ok_starts(suite)
    assert {r["skill_tree_sha256"] for r in records} == {skill_tree_sha256(suite.skill)}
    secret.write_text("changed outside the workspace\n")
    assert run(suite) == 0
    assert len(ok_starts(suite)) == 2


def test_a_skill_folder_over_the_size_limit_is_refused_naming_it(suite, capsys):
    """A (sparse) file that takes the folder over the limit: refused before a
    byte of it is read, naming the folder and the file; nothing is started."""
    from skill_eval.evals.probes import MAX_SKILL_TREE

    suite.configure({"rule": RULE})
    (suite.skill / "assets").mkdir()
    with open(suite.skill / "assets" / "big.bin", "wb") as handle:
        handle.truncate(MAX_SKILL_TREE + 1)
    assert run(suite) != 0
    err = capsys.readouterr().err
    assert str(suite.skill) in err and "big.bin" in err and "move large files out" in err
    assert suite.records(PROBE) == []
