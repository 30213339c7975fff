"""``skill-eval-lint``: the headless linter (CLI, pre-commit hook, CI).

Exit status: 0 when no diagnostic at or above ``--fail-level`` (default
``warning``) remains, 1 when one does, 2 on a usage, config or internal error
(one line on stderr, no traceback). Cheap to import: never pygls or lsprotocol.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path
from typing import NoReturn

from .output import FORMATS, UsageError, default_format

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

FAIL_LEVELS = ("error", "warning", "info")
"""``--fail-level`` choices, most severe first (:class:`~skill_eval.linter.diagnostics.Severity` values)."""

FIX_PASSES = 10
"""The most passes of ``--fix`` (fix, lint again): fixes that conflict go in turn."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse's default is also 2)
        self.exit(EXIT_ERROR, f"{self.prog}: {message} (see --help)\n")


def _codes(text: str) -> tuple[str, ...]:
    """Comma-separated codes or prefixes, at least one (``--select ''`` would enable every rule)."""
    codes = tuple(code.strip().upper() for code in text.split(",") if code.strip())
    if not codes:
        raise argparse.ArgumentTypeError("give at least one code or prefix, e.g. SE1,SE201")
    return codes


def _jobs(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (one per CPU) or a positive number")
    return value


def build_parser(prog: str = "skill-eval-lint") -> argparse.ArgumentParser:
    """The options of ``skill-eval-lint``, named ``prog`` in the help."""
    parser = _Parser(
        prog=prog,
        description="Lint skill-eval probes: probe.json, question.md, SKILL.md and output-spec.md. "
                    "`skill-eval-lint` and `skill-eval lint` are the same command.",
        epilog=f"Other commands: `{prog} rules` lists the rules; `{prog} rule SE101` shows one.",
    )
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders to lint (default: .)")
    parser.add_argument("--output-format", choices=FORMATS,
                        help="how to print diagnostics (default: full on a terminal, with source lines and colour; "
                             "text, one line each, otherwise); colour follows NO_COLOR and FORCE_COLOR")
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
    parser.add_argument("--diff", action="store_true",
                        help="with or without --fix: print the safe fixes as a unified diff instead of writing them "
                             "(exit 1 if there is something to fix)")
    parser.add_argument("--unsafe-fixes", action="store_true",
                        help="with --fix or --diff: also take unsafe fixes, each finding's first (e.g. SE101's "
                             "closest heading); review them with --diff first")
    parser.add_argument("--jobs", "-j", type=_jobs, default=0,
                        help="processes for large workspaces, this one included (default: one per CPU; 1 = this process only)")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when diagnostics remain")
    parser.add_argument("--fail-level", choices=FAIL_LEVELS, default="warning",
                        help="the lowest severity that makes the exit status 1 (default: warning; "
                             "info findings are reported but never fail unless this is info)")
    parser.add_argument("--statistics", action="store_true", help="print counts per rule instead of diagnostics (a table, or JSON with --output-format json)")
    parser.add_argument("--quiet", "-q", action="store_true", help="text format: print diagnostics only, no summary")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser


def _print_documentation(argv: list[str]) -> int:
    """``skill-eval-lint rule CODE`` and ``skill-eval-lint rules [--output-format json]``."""
    from .rules import REGISTRY, get_rule

    if argv[0] == "rule":
        if len(argv) != 2:
            print("skill-eval-lint: usage: skill-eval-lint rule CODE", file=sys.stderr)
            return EXIT_ERROR
        rule = get_rule(argv[1])
        if rule is None:
            print(f"skill-eval-lint: unknown rule {argv[1]!r}; `skill-eval-lint rules` lists them",
                  file=sys.stderr)
            return EXIT_ERROR
        _write_stdout(f"# {rule.code} {rule.name}\n\nDefault severity: {rule.severity.value}. "
                      f"Tags: {', '.join(rule.tags)}.\n\n{rule.documentation()}\n", "rule's documentation")
        return EXIT_CLEAN
    if "--output-format=json" in argv or argv[1:3] == ["--output-format", "json"]:
        import json

        listing = json.dumps([
            {"code": r.code, "name": r.name, "severity": r.severity.value, "tags": list(r.tags), "summary": r.summary()}
            for r in REGISTRY
        ], indent=2)
    else:
        listing = "\n".join(f"{rule.code}  {rule.name:<26} {rule.severity.value:<8} {rule.summary()}" for rule in REGISTRY)
    _write_stdout(listing + "\n", "list of rules")
    return EXIT_CLEAN


def main(argv: list[str] | None = None, prog: str = "skill-eval-lint") -> int:
    """Run ``skill-eval-lint`` with ``argv``; the exit status. stdout is flushed here, so that a
    reader that went away (``skill-eval-lint . | head -1``) ends the run quietly."""
    try:
        try:
            status = _main(argv, prog)
        except SystemExit as request:
            raise SystemExit(_flushed(request.code)) from None
        return _flushed(status)
    except BrokenPipeError:
        return reader_went_away()


def _flushed(status: int) -> int:
    """``status`` once stdout is flushed; a failure (a full disk) is one line on stderr and :data:`EXIT_ERROR`."""
    if sys.stdout is None:
        return status
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or error
        print(f"skill-eval-lint: cannot write to stdout: {reason}", file=sys.stderr)
        return EXIT_ERROR
    return status


EXIT_BROKEN_PIPE = 141
"""The exit status when stdout's reader went away: a shell's for SIGPIPE (128 + 13)."""


def reader_went_away() -> int:
    """Point stdout at ``/dev/null`` (no later flush fails again) and return :data:`EXIT_BROKEN_PIPE`."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass  # no stdout to redirect (closed, or replaced by an object without a descriptor)
    return EXIT_BROKEN_PIPE


def _main(argv: list[str] | None, prog: str) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("rule", "rules"):
        try:
            return _print_documentation(argv)
        except UsageError as error:  # stdout cannot be written (a full disk)
            print(f"skill-eval-lint: {error}", file=sys.stderr)
            return EXIT_ERROR
    args = build_parser(prog).parse_args(argv)
    if args.output_format is None:
        args.output_format = default_format(sys.stdout, args.output_file is not None)
    if args.version:
        from skill_eval import __version__

        print(f"skill-eval-lint {__version__}")
        return EXIT_CLEAN
    collecting = gc.isenabled()
    gc.disable()  # a run's objects live to its end, and few are cyclic (docs/performance.md)
    try:
        return _lint(args)
    except KeyboardInterrupt:
        print("skill-eval-lint: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        raise  # not an internal error: stdout's reader went away (main)
    except Exception as error:  # noqa: BLE001 - a one-line message, never a traceback
        from .config import ConfigError

        if isinstance(error, (ConfigError, FileNotFoundError, UsageError)):
            print(f"skill-eval-lint: {error}", file=sys.stderr)
        else:
            print(f"skill-eval-lint: internal error: {type(error).__name__}: {error} "
                  "(please report it with the command you ran)", file=sys.stderr)
        return EXIT_ERROR
    finally:
        if collecting:
            gc.enable()


def _lint(args: argparse.Namespace) -> int:
    from .engine import default_jobs, lint_paths

    overrides = _overrides(args)
    if args.config is not None and not args.config.is_file():
        raise FileNotFoundError(f"--config {args.config}: no such file")
    _check_report_destination(args)
    if args.statistics and args.output_format in ("sarif", "github"):
        raise UsageError(f"--statistics prints counts as text or json, not {args.output_format}")
    paths = args.paths or [Path(".")]
    options = {"config_path": args.config, "overrides": overrides, "jobs": args.jobs or default_jobs(),
               "cache": not args.no_cache}
    result = lint_paths(paths, **options)
    if args.diff:
        return _print_fix_diff(args, result)
    fixed = 0
    if args.fix:
        from .fixes import apply_fixes

        for _ in range(FIX_PASSES):  # a fix left out for a conflict is taken in a later pass
            applied = apply_fixes(result.diagnostics, result.sessions, args.unsafe_fixes).fixed
            if not applied:
                break
            fixed += applied
            result = lint_paths(paths, **options)
    diagnostics = result.diagnostics
    if not result.checked:
        names = ", ".join(str(p) for p in paths)
        print(f"skill-eval-lint: warning: no probe.json, SKILL.md or output-spec.md found in {names}", file=sys.stderr)
    report = _render(args, diagnostics, len(result.checked), fixed, [session.root for session in result.sessions])
    _write(args, report + "\n" if report else "", "report")
    if args.fix:
        _hint_unsafe(args, diagnostics)  # once the report is out: a failed write stays one line
    failing = FAIL_LEVELS[: FAIL_LEVELS.index(args.fail_level) + 1]
    if args.exit_zero or not any(d.severity.value in failing for d in diagnostics):
        return EXIT_CLEAN
    return EXIT_FINDINGS


def _check_report_destination(args: argparse.Namespace) -> None:
    """Refuse, before anything is linted, a report that could not be written (a :class:`UsageError`)."""
    path = args.output_file
    if path is None:
        if sys.stdout is None:
            raise UsageError("stdout is closed; pass --output-file FILE to write to a file instead")
        return
    if path.is_dir():
        raise UsageError(f"--output-file {path}: is a folder; name a file in it, e.g. {path / 'report.txt'}")
    folder = path.parent
    if not folder.is_dir():
        problem = "is not a folder" if folder.exists() else "does not exist"
        raise UsageError(f"--output-file {path}: {folder} {problem}; create the folder first or name a file "
                         "in an existing one")


def _write(args: argparse.Namespace, text: str, what: str) -> None:
    """Write ``text`` (the ``what``: report, patch) to ``--output-file`` (a failure: a
    :class:`UsageError` naming it), else, if any, to stdout."""
    if not args.output_file:
        if text:
            _write_stdout(text, what)
        return
    try:
        args.output_file.write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"--output-file {args.output_file}: cannot write the {what}: "
                         f"{error.strerror or error}") from None


def _write_stdout(text: str, what: str) -> None:
    """Write all of ``text`` to stdout and flush it; a failure other than :class:`BrokenPipeError`
    is a :class:`UsageError`. On a real stdout the bytes go to its descriptor until all are
    written (the text layer can lose what a partial or non-blocking write leaves)."""
    import io

    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    descriptor = getattr(buffer, "raw", buffer)
    try:
        if not isinstance(descriptor, io.RawIOBase):
            stream.write(text)
            stream.flush()
            return
        stream.flush()
        lines = text.replace("\n", os.linesep) if os.linesep != "\n" else text
        unwritten = memoryview(lines.encode(stream.encoding, stream.errors))
        while unwritten:
            written = descriptor.write(unwritten)
            if written is None:  # non-blocking and full: wait until the reader makes room
                import select

                select.select([], [descriptor], [])
            else:
                unwritten = unwritten[written:]
    except BrokenPipeError:
        raise
    except OSError as error:
        raise UsageError(f"cannot write the {what} to stdout: {error.strerror or error}") from None


def _print_fix_diff(args: argparse.Namespace, result) -> int:
    """``--diff``: what one pass of ``--fix`` would write, as a unified patch, and a count on stderr."""
    from .fixes import plan_fixes
    from .output.diff import render

    planned = plan_fixes(result.diagnostics, result.sessions, args.unsafe_fixes)
    changes = [(path, before, after) for path, (_real, _bom, before, after) in sorted(planned.changes.items())]
    patch = render(changes)
    _write(args, patch, "patch")
    files = sum(1 for _path, before, after in changes if before != after)
    if not files:
        print(f"skill-eval-lint: no {'' if args.unsafe_fixes else 'safe '}fix to apply", file=sys.stderr)
        _hint_unsafe(args, result.diagnostics)
        return EXIT_CLEAN
    print(f"skill-eval-lint: would fix {planned.fixed} problem{'s' if planned.fixed != 1 else ''} "
          f"in {files} file{'s' if files != 1 else ''}", file=sys.stderr)
    return EXIT_CLEAN if args.exit_zero else EXIT_FINDINGS


def _hint_unsafe(args: argparse.Namespace, diagnostics) -> None:
    """Say on stderr how many findings left have only unsafe fixes (as ruff does)."""
    if args.unsafe_fixes:
        return
    hidden = sum(1 for d in diagnostics if d.fixes and not any(fix.safe for fix in d.fixes))
    if hidden:
        print(f"skill-eval-lint: {hidden} finding{'s' if hidden != 1 else ''} more can be fixed with --unsafe-fixes "
              "(review them with --diff --unsafe-fixes first)", file=sys.stderr)


def _overrides(args: argparse.Namespace) -> dict:
    """The command line's layer of the config; an unknown code in a flag is a ``ConfigError``, as in the file."""
    from .config import check_rule_codes

    layer = {}
    for key in ("select", "ignore", "extend_select", "extend_ignore"):
        value = getattr(args, key)
        if value is not None:
            check_rule_codes(value, "--" + key.replace("_", "-"))
            layer[key.replace("_", "-")] = list(value)
    return layer


def _render(args: argparse.Namespace, diagnostics, checked: int, fixed: int, roots=()) -> str:
    """The report in ``--output-format`` (``--statistics``: counts per rule), importing only that format's module."""
    from importlib import import_module

    kind = args.output_format
    if args.statistics:
        module = import_module(f"{__package__}.output.{'jsonout' if kind == 'json' else 'text'}")
        return module.render_statistics(diagnostics)
    module = import_module(f"{__package__}.output.{'jsonout' if kind == 'json' else kind}")
    if kind not in ("text", "full"):
        return module.render(diagnostics)
    from .output.style import Style, colour_wanted

    style = Style(args.output_file is None and colour_wanted(sys.stdout))
    where = {"roots": roots} if kind == "full" else {}
    return module.render(diagnostics, checked, fixed, style, with_summary=not args.quiet, **where)


def entry() -> None:
    """The ``skill-eval-lint`` console script: :func:`main`, then :func:`hard_exit`, with no cyclic GC."""
    gc.disable()  # for the rest of the process: a last collection would walk every object the run made
    hard_exit(main())


def hard_exit(code: int) -> NoReturn:
    """Exit with ``code`` once stdout and stderr are flushed, without tearing the interpreter
    down (as mypy does: freeing a run's objects costs a small run); a reader gone: :data:`EXIT_BROKEN_PIPE`."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError) as error:
            if stream is sys.stdout and isinstance(error, BrokenPipeError):
                code = EXIT_BROKEN_PIPE
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
