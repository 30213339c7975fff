"""``skill-eval-lint``: the headless linter (CLI, pre-commit hook, CI).

Exit status: 0 when no diagnostic remains, 1 when any does (SE000 included),
2 on a usage, config or internal error (one line on stderr, no traceback).

This module must stay cheap to import: it never imports pygls or lsprotocol,
and the engine imports markdown-it-py and jsonschema only when a file needs them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from .output import FORMATS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

FIX_PASSES = 10
"""``--fix`` applies the safe fixes and lints again, until none applies or
this many passes are done (fixes that conflict go in turn)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse's default is also 2)
        self.exit(EXIT_ERROR, f"skill-eval-lint: {message} (see --help)\n")


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, told the terminal's width up front: left to find
    it, argparse imports ``shutil`` (and with it ``bz2`` and ``lzma``), ~4 ms
    of every run, even one that prints no help."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width)


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else the terminal's, else 80."""
    import os

    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _codes(text: str) -> tuple[str, ...]:
    return tuple(code.strip().upper() for code in text.split(",") if code.strip())


def _jobs(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (one per CPU) or a positive number")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="skill-eval-lint",
        formatter_class=_HelpFormatter,
        description="Lint skill-eval probes: probe.json, question.md, SKILL.md and output-spec.md.",
        epilog="Other commands: `skill-eval-lint rules` lists the rules; `skill-eval-lint rule SE101` shows one.",
    )
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders to lint (default: .)")
    parser.add_argument("--output-format", choices=FORMATS, default="text", help="how to print diagnostics")
    parser.add_argument("--output-file", "-o", type=Path, help="write the report to this file instead of stdout")
    parser.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to enable (e.g. SE1,SE201), "
                                                      "instead of the config's `select`")
    parser.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes to disable, instead of the config's `ignore`")
    parser.add_argument("--extend-select", type=_codes, help="codes or prefixes to enable on top of the config's `select`")
    parser.add_argument("--extend-ignore", type=_codes, help="codes or prefixes to disable on top of the config's `ignore`")
    parser.add_argument("--config", type=Path, help="use this skill-eval.toml / pyproject.toml instead of discovery")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the cache (.skill-eval-cache/ at the workspace root)")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes (e.g. SE201's count) in place")
    parser.add_argument("--jobs", "-j", type=_jobs, default=0,
                        help="processes for large workspaces, this one included (default: one per CPU; 1 = this process only)")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when diagnostics remain")
    parser.add_argument("--statistics", action="store_true", help="print counts per rule instead of diagnostics")
    parser.add_argument("--quiet", "-q", action="store_true", help="text format: print diagnostics only, no summary")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser


def _print_rule(code: str) -> int:
    from .rules import get_rule

    rule = get_rule(code)
    if rule is None:
        print(f"skill-eval-lint: unknown rule {code!r}; `skill-eval-lint rules` lists them", file=sys.stderr)
        return EXIT_ERROR
    print(f"# {rule.code} {rule.name}\n\nDefault severity: {rule.severity.value}. Tags: {', '.join(rule.tags)}.\n")
    print(rule.documentation())
    return EXIT_CLEAN


def _print_rules(output_format: str) -> int:
    from .rules import REGISTRY

    if output_format == "json":
        import json

        print(json.dumps([
            {"code": r.code, "name": r.name, "severity": r.severity.value, "tags": list(r.tags), "summary": r.summary()}
            for r in REGISTRY
        ], indent=2))
    else:
        for rule in REGISTRY:
            print(f"{rule.code}  {rule.name:<26} {rule.severity.value:<8} {rule.summary()}")
    return EXIT_CLEAN


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "rule":
        if len(argv) != 2:
            print("skill-eval-lint: usage: skill-eval-lint rule CODE", file=sys.stderr)
            return EXIT_ERROR
        return _print_rule(argv[1])
    if argv and argv[0] == "rules":
        return _print_rules("json" if "--output-format=json" in argv or argv[1:3] == ["--output-format", "json"] else "text")
    args = build_parser().parse_args(argv)
    if args.version:
        from skill_eval import __version__

        print(f"skill-eval-lint {__version__}")
        return EXIT_CLEAN
    try:
        with _fewer_collections():
            return _lint(args)
    except KeyboardInterrupt:
        print("skill-eval-lint: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - a one-line message, never a traceback
        from .config import ConfigError

        if isinstance(error, (ConfigError, FileNotFoundError)):
            print(f"skill-eval-lint: {error}", file=sys.stderr)
        else:
            print(
                f"skill-eval-lint: internal error: {type(error).__name__}: {error} "
                "(please report it with the command you ran)",
                file=sys.stderr,
            )
        return EXIT_ERROR


class _fewer_collections:
    """Run without the cyclic garbage collector (reference counting still
    frees everything that is not in a cycle). A lint run allocates millions
    of small objects that all live to its end, and almost none of its garbage
    is cyclic: a collection among them found ~2,000-3,000 cyclic objects at
    1,000 probes and still cost 20-40 ms each (one landed on the serial tail
    of the parallel run), where the default thresholds cost ~5% of a run and
    a first threshold of 50,000 still ~4%. Peak memory at 10,000 probes is
    unchanged within 1%. Restored on exit, for callers of :func:`main`."""

    def __enter__(self) -> None:
        import gc

        self._enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info) -> None:
        import gc

        if self._enabled:
            gc.enable()


def _lint(args: argparse.Namespace) -> int:
    from .engine import default_jobs, lint_paths

    if args.config is not None and not args.config.is_file():
        raise FileNotFoundError(f"--config {args.config}: no such file")
    paths = args.paths or [Path(".")]
    options = {"config_path": args.config, "overrides": _overrides(args), "jobs": args.jobs or default_jobs(),
               "cache": not args.no_cache}
    result = lint_paths(paths, **options)
    fixed = 0
    if args.fix:
        from .fixes import apply_fixes

        for _ in range(FIX_PASSES):  # a fix left out for a conflict is taken in a later pass
            applied = apply_fixes(result.diagnostics, result.sessions).fixed
            if not applied:
                break
            fixed += applied
            result = lint_paths(paths, **options)
    diagnostics = result.diagnostics
    if not result.checked:
        names = ", ".join(str(p) for p in paths)
        print(f"skill-eval-lint: warning: no probe.json, SKILL.md or output-spec.md found in {names}", file=sys.stderr)
    report = _render(args, diagnostics, len(result.checked), fixed)
    if args.output_file:
        args.output_file.write_text(report + ("\n" if report else ""), encoding="utf-8")
    elif report:
        sys.stdout.write(report + "\n")
    if args.exit_zero or not diagnostics:
        return EXIT_CLEAN
    return EXIT_FINDINGS


def _overrides(args: argparse.Namespace) -> dict:
    """The command line's layer of the config (config-file keys, applied over
    the config file: :func:`~skill_eval.linter.config.resolve_config`)."""
    layer = {}
    for key in ("select", "ignore", "extend_select", "extend_ignore"):
        value = getattr(args, key)
        if value is not None:
            layer[key.replace("_", "-")] = list(value)
    return layer


def _render(args: argparse.Namespace, diagnostics, checked: int, fixed: int) -> str:
    if args.statistics:
        from .output.text import render_statistics

        return render_statistics(diagnostics)
    if args.output_format == "json":
        from .output.jsonout import render

        return render(diagnostics)
    if args.output_format == "sarif":
        from .output.sarif import render

        return render(diagnostics)
    if args.output_format == "github":
        from .output.github import render

        return render(diagnostics)
    from .output.text import render

    if args.quiet:
        return "\n".join(render(diagnostics, checked, fixed).splitlines()[:-1]) if diagnostics else ""
    return render(diagnostics, checked, fixed)


def entry() -> None:
    """The ``skill-eval-lint`` console script (and ``python -m``): :func:`main`,
    then :func:`hard_exit`, with the cyclic garbage collector off from the
    start (:func:`collector_off_until_exit`)."""
    collector_off_until_exit()
    hard_exit(main())


def collector_off_until_exit() -> None:
    """Turn the cyclic garbage collector off for the rest of a process that
    ends with :func:`hard_exit`. :func:`main` lints with it off anyway and
    turns it back on when it started on (for callers that live on); but the
    first collection after that walks every object the run made: ~13 ms at
    1,000 probes, spent just before exiting, when nothing is left to free."""
    import gc

    gc.disable()


def hard_exit(code: int) -> NoReturn:
    """Exit with ``code`` once stdout and stderr are flushed, without tearing
    the interpreter down. Freeing every object of a lint run one by one at
    exit cost ~40 ms of a 10-probe run (A/B, 21 runs), and nothing is left to
    clean up: worker pools are joined and report files closed by then. mypy
    exits the same way."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass  # a reader that went away (a closed pipe): nothing more can be written
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
