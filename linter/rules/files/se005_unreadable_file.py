"""SE005 unreadable-file."""

from __future__ import annotations

from ...context import FileProblem, OutputSpecContext, ProbeContext, SkillContext, WorkspaceContext
from ...diagnostics import Related, Severity
from ...textfile import Span
from ..base import Rule, Scope
from ..calibration._records import frozen_problem, runs_file_problems
from ._references import REFERENCES, reference_span


class UnreadableFile(Rule):
    """## What it does
    Reports a file that cannot be read as text: not valid UTF-8, binary (it
    contains NUL bytes), over the size limit (`max-file-size`, 1 MiB by
    default), a folder where a file is expected, anything but a regular file
    (a FIFO, a device, a socket: never opened for reading) or a
    symbolic-link loop. It checks probe.json itself, every file a probe
    references (artifact, skill, output spec), any SKILL.md or output-spec.md
    linted on its own, and the calibration records (`evals/runs/*.jsonl`,
    `evals/frozen.json`: not regular files, or over 64 MiB and the size
    limit), and points at the first offending byte where there is one.

    ## Why is this bad?
    "Every file is UTF-8" is the fixture format's contract: the artifact is
    handed to the agent "byte for byte", and the linter, the language server
    and the eval runner must all read the same text. A file none of them can
    decode is a probe that silently does not run, or runs on mojibake — and a
    probe that cannot run looks like a clean one, the "looks green" reading the
    seed warns about. "Keep it short" (seed rule 5) also bounds the size: an
    artifact of megabytes "measures reading stamina", not the discipline.

    ## Example
    A `question.md` saved as Latin-1 (`café` as the byte `0xe9`), a
    `question.md` that is really a PDF, or a 3 MiB log pasted as the artifact.

    ## Fix
    Re-save the file as UTF-8 (a byte-order mark and CRLF line endings are
    fine), replace binary files with text, shorten the file or raise
    `max-file-size` in skill-eval.toml, and replace link loops with files.
    """

    code = "SE005"
    name = "unreadable-file"
    severity = Severity.ERROR
    scope = (Scope.PROBE, Scope.SKILL, Scope.OUTPUT_SPEC, Scope.WORKSPACE)
    tags = ("files",)

    def check(self, context):
        if isinstance(context, ProbeContext):
            yield from self._check_probe(context)
        elif isinstance(context, (SkillContext, OutputSpecContext)):
            problem = context.document
            if isinstance(problem, FileProblem) and problem.kind in ("unreadable", "loop"):
                yield self.diagnostic(*located(problem))
        elif isinstance(context, WorkspaceContext):
            for problem in runs_file_problems(context.session):
                if problem.kind in ("unreadable", "loop"):
                    yield self.diagnostic(*located(problem))

    def _check_probe(self, context: ProbeContext):
        own = context.document
        if isinstance(own, FileProblem):
            if own.kind in ("unreadable", "loop"):
                yield self.diagnostic(*located(own))
            return
        frozen = frozen_problem(context)
        if frozen is not None and frozen.kind in ("unreadable", "loop"):
            yield self.diagnostic(*located(frozen))
        for reference in REFERENCES:
            problem = reference.problem(context)
            if problem is None or problem.kind not in ("unreadable", "loop"):
                continue
            anchor = reference_span(context, reference)
            if problem.kind == "loop":
                yield self.diagnostic(
                    anchor,
                    f"the {reference.role} {problem.path.name} is a symbolic-link loop; replace the link with a file",
                )
                continue
            span, message = located(problem)
            yield self.diagnostic(span, message, related=[Related(anchor, f"this probe's {reference.role}")])


def located(problem: FileProblem) -> tuple[Span, str]:
    """The span (the offending character, else the file's start) and message of
    an unreadable file; the same for every probe that references the file, so
    the engine reports it once."""
    span = Span.at(problem.path, problem.line, problem.column, problem.line, problem.column + 1)
    return span, f"{problem.path.name} is unreadable: {problem.message}; {problem.fix}"
