"""A copy of ``examples/`` with its probes duplicated until a workspace is
large enough for the engine's forked workers (shared by the linter and
server tests; pytest puts this folder on ``sys.path`` for ``tests/conftest.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def copy_examples_with_probes(target: Path, count: int) -> Path:
    """Copy ``examples/`` to ``target`` and add copies of its probes (each with
    its own ``id``) until there are at least ``count`` extra probes."""
    shutil.copytree(EXAMPLES, target)
    probes_dir = target / "skills" / "closeout-review" / "evals" / "probes"
    originals = sorted(p for p in probes_dir.iterdir() if p.is_dir())
    made = 0
    while made < count:
        for original in originals:
            copy = probes_dir / f"{original.name}-{made}"
            shutil.copytree(original, copy)
            probe = copy / "probe.json"
            data = json.loads(probe.read_text())
            data["id"] = f"{data['id']}-{made}"
            probe.write_text(json.dumps(data))
            made += 1
    return target
