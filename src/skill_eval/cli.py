"""The umbrella command ``skill-eval``: ``lint``, ``serve``, ``run``, ...

Each subcommand's module is imported only when it is chosen, so ``skill-eval
lint`` costs no more than ``skill-eval-lint``.
"""

from __future__ import annotations

import sys

SUBCOMMANDS = {
    "lint": ("skill_eval.linter.cli", "main", "lint probes, skills and output specs"),
    "serve": ("skill_eval.server.__main__", "main", "start the language server"),
    "run": ("skill_eval.evals.cli", "run_main", "run probes: control vs treatment arms, reps, grading"),
    "report": ("skill_eval.evals.cli", "report_main", "calibration zones per probe version (text, JSON, HTML)"),
    "check": ("skill_eval.evals.cli", "check_main", "grade known transcripts: calibrate the discriminator offline"),
    "freeze": ("skill_eval.evals.cli", "freeze_main", "record content hashes of chosen probes in evals/frozen.json"),
    "calibrate": ("skill_eval.evals.cli", "calibrate_main", "the seed's live calibration: control first, a predeclared stop"),
    "schema": ("skill_eval.linter.probejson", "schema_main", "print the JSON Schema of probe.json"),
    "init": ("skill_eval.evals.cli", "init_main", "scaffold a skill, its output spec and one probe that lint clean"),
    "review": ("skill_eval.evals.review", "review_main", "opt-in model review of artifacts: signposts, quizzes, answer keys"),
}


STANDALONE = {"lint": "skill-eval-lint", "serve": "skill-eval-ls"}
"""Subcommands that are also installed as commands of their own: the same
program, told its name (``prog``) so that its help and messages say
``skill-eval lint`` when called so."""


def usage() -> str:
    lines = ["usage: skill-eval COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<10} {help_}" + (f" (also: {STANDALONE[name]})" if name in STANDALONE else "")
              for name, (_m, _f, help_) in SUBCOMMANDS.items()]
    lines += ["", "`skill-eval COMMAND --help` describes a command."]
    return "\n".join(lines)


def _unknown_command(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(SUBCOMMANDS) + list(STANDALONE.values()), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"skill-eval: unknown command {name!r}{hint}\n{usage()}"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    if argv[0] == "--version":
        from skill_eval import __version__

        print(f"skill-eval {__version__}")
        return 0
    command = SUBCOMMANDS.get(argv[0])
    if command is None:
        print(_unknown_command(argv[0]), file=sys.stderr)
        return 2
    import importlib

    function = getattr(importlib.import_module(command[0]), command[1])
    if argv[0] in STANDALONE:
        return function(argv[1:], prog=f"skill-eval {argv[0]}")
    return function(argv[1:])


def entry() -> None:
    """The ``skill-eval`` console script (and ``python -m skill_eval``): a lint
    run ends as ``skill-eval-lint`` does (:func:`~skill_eval.linter.cli.hard_exit`);
    the other commands exit normally (the runner and the server have files and
    processes to close)."""
    if sys.argv[1:2] == ["lint"]:
        import gc

        from skill_eval.linter.cli import hard_exit

        gc.disable()  # for the rest of the process: a last collection would walk every object the run made
        hard_exit(main())
    try:
        code = main()
        sys.stdout.flush()  # inside the try: a reader that went away fails here, not at exit
    except BrokenPipeError:
        from skill_eval.linter.cli import reader_went_away

        code = reader_went_away()
    sys.exit(code)
