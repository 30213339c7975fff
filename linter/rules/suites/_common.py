"""What the suite rules (SE8xx) share."""

from __future__ import annotations

from ...session import FileProblem
from ...suites import EVALS, TRIGGERS, Suite


def readable_suite(context) -> Suite | None:
    """The parsed suite when the file reads and parses (SE801 says why not)."""
    suite = context.suite
    if suite is None:
        return None
    if any(problem.code == "SE801" for problem in suite.problems):
        return None
    return suite


def eval_suite(context) -> Suite | None:
    suite = readable_suite(context)
    return suite if suite is not None and suite.kind == EVALS else None


def trigger_suite(context) -> Suite | None:
    suite = readable_suite(context)
    return suite if suite is not None and suite.kind == TRIGGERS else None


def file_problem(context) -> FileProblem | None:
    document = context.document
    return document if isinstance(document, FileProblem) else None


def normalized(text: str) -> str:
    """A query compared with another: case and whitespace runs ignored."""
    return " ".join(text.split()).casefold()
