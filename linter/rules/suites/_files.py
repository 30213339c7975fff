"""Where an eval's ``files`` lead (SE805, SE806)."""

from __future__ import annotations

from ...session import FileProblem
from ._common import eval_suite


def eval_files(context):
    """``(eval, index in files, path text, problem or None)`` for every file
    entry of every eval: the problem is where it leads when it cannot be
    used (``missing``, ``outside`` the workspace, a ``loop``)."""
    suite = eval_suite(context)
    if suite is None:
        return
    session = context.session
    base = context.skill_root
    for case in suite.evals:
        for position, text in case.files:
            if not text.strip():
                yield case, position, text, FileProblem(base, "missing", "an empty path names no file", "give the path")
                continue
            found = session.resolve(base, text)
            if isinstance(found, FileProblem):
                yield case, position, text, found
                continue
            loaded = session.load(found, resolved=True)
            if isinstance(loaded, FileProblem) and loaded.kind in ("missing", "outside", "loop"):
                yield case, position, text, loaded
            else:
                yield case, position, text, None
