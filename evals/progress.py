"""What ``skill-eval run`` shows while it runs: progress on stderr.

Two forms, chosen by where stderr goes:

* **a terminal**: a live progress bar from ``rich`` (a dependency of the
  base install) with starts done of planned, elapsed time, an ETA and the
  catches so far per arm; a start that fails is printed above the bar as a
  line.
* **anything else** (a CI log, a pipe, a file), or a terminal rich cannot
  draw on (``TERM=dumb``, or rich missing from a broken install): **one line
  per finished start**, written and flushed as soon as the start's outcome is
  on record::

      [3/8 ETA 0:00:04] two-gaps v1 treatment rep 2: caught (D1, D2) in 1.4 s

``skill-eval run`` and ``skill-eval calibrate`` both show their starts this
way (:class:`Display`). The run's results (what was recorded, per arm, and
the budget) are the command's output and go to stdout; nothing here writes
there. Nothing here is imported by the runner or the language server.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, TextIO

ARMS = ("control", "treatment")


def clock(seconds: float | None) -> str:
    """``H:MM:SS`` (as rich prints times), ``-:--:--`` when unknown."""
    if seconds is None:
        return "-:--:--"
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def describe_start(record: dict[str, Any]) -> str:
    """One finished start in words: which start, how it ended, how long it took."""
    what = f"{record.get('probe')} v{record.get('version')} {record.get('arm')} rep {record.get('rep')}"
    duration = record.get("duration_s")
    took = f" in {duration:.1f} s" if isinstance(duration, (int, float)) else ""
    status = record.get("status")
    if status == "ok":
        caught = [str(d) for d in record.get("caught") or []]
        defects = [str(d) for d in record.get("defects") or []]
        if record.get("passed"):
            verdict = "caught" + (f" ({', '.join(caught)})" if caught else "")
        else:
            verdict = "missed" + (f" (caught {', '.join(caught) or 'none'} of {', '.join(defects)})" if defects else "")
        if record.get("answer_source") == "none":
            verdict += ", answer unreadable (no field output-spec.md names)"
        return f"{what}: {verdict}{took}"
    error = str(record.get("error") or "").splitlines()
    said = stderr_said(record)
    return (f"{what}: {status}{took}" + (f": {error[0]}" if error and error[0] else "")
            + (f"; its stderr ends: {said}" if said else ""))


STDERR_SHOWN_LINES = 3
"""The last lines of a failed start's stderr shown in its progress line and the summary."""
STDERR_SHOWN_CHARS = 300
"""At most this many characters of them (the record keeps the whole tail)."""


def stderr_said(record: dict[str, Any]) -> str:
    """The last non-blank lines of a failed start's stderr (``stderr_tail`` of
    its record), joined with `` | ``, at most :data:`STDERR_SHOWN_CHARS`
    characters (the end kept: a traceback's last line names the error), each
    unprintable character (an escape sequence's ESC) shown as ``?``; empty
    when it said nothing."""
    tail = record.get("stderr_tail")
    if not isinstance(tail, str):
        return ""
    lines = [line.strip() for line in tail.splitlines() if line.strip()][-STDERR_SHOWN_LINES:]
    text = "".join(c if c.isprintable() else "?" for c in " | ".join(lines))  # no agent writes escapes to our terminal
    return text if len(text) <= STDERR_SHOWN_CHARS else "..." + text[-(STDERR_SHOWN_CHARS - 3):]


class Tally:
    """Starts, graded answers and catches per arm, as outcomes come in."""

    def __init__(self) -> None:
        self.arms = {arm: {"starts": 0, "ok": 0, "caught": 0, "failed": 0} for arm in ARMS}

    def count(self, record: dict[str, Any]) -> None:
        tally = self.arms.get(record.get("arm"))
        if tally is None:
            return
        tally["starts"] += 1
        if record.get("status") == "ok":
            tally["ok"] += 1
            tally["caught"] += int(bool(record.get("passed")))
        else:
            tally["failed"] += 1

    def describe(self) -> str:
        return "  ".join(f"{arm} {t['caught']}/{t['ok']} caught" + (f" ({t['failed']} failed)" if t["failed"] else "")
                         for arm, t in self.arms.items() if t["starts"]) or "starting"


class LineProgress:
    """One flushed line per finished start (see the module docstring)."""

    def __init__(self, total: int, stream: TextIO, now: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.done = 0
        self.stream = stream
        self._now = now
        self._began = now()

    def eta(self) -> float | None:
        """Seconds left at the pace so far (None before the first start ends)."""
        if not self.done:
            return None
        return (self._now() - self._began) / self.done * (self.total - self.done)

    def __call__(self, record: dict[str, Any]) -> None:
        self.done += 1
        where = f"[{self.done}/{self.total}" + (f" ETA {clock(self.eta())}" if self.done < self.total else "") + "]"
        print(f"{where} {describe_start(record)}", file=self.stream, flush=True)


def rich_console(stream: TextIO):
    """A rich console for ``stream`` when rich is installed and ``stream`` is a
    terminal rich can draw on (not ``TERM=dumb``); else ``None``. A pipe stays
    a pipe even when ``FORCE_COLOR`` asks rich to treat it as a terminal: a live
    bar redrawn into a CI log is noise."""
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError, OSError):
        return None
    try:
        from rich.console import Console
    except ImportError:
        return None
    console = Console(file=stream)
    if not console.is_terminal or console.is_dumb_terminal:
        return None
    return console


class Display:
    """Progress of one command's starts on a stream: a rich bar on a terminal
    (:func:`rich_console`), else one flushed line per finished start
    (:class:`LineProgress`), else nothing (``show`` false). Used as a context
    manager; ``record`` is called once per finished start, ``note`` prints a
    line of its own (above the bar on a terminal), ``total`` changes the
    number of starts the progress counts towards."""

    def __init__(self, label: str, total: int | None, *, show: bool = True, stream: TextIO | None = None,
                 describe: Callable[[], str] | None = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.label = label
        self.show = show
        self.describe = describe or (lambda: "")
        self._total = total
        self._lines: LineProgress | None = None
        self._progress = None
        self._task = None
        self._console = rich_console(self.stream) if show else None

    def __enter__(self) -> "Display":
        if not self.show:
            return self
        if self._console is None:
            self._lines = LineProgress(self._total or 0, self.stream)
            return self
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)

        self._progress = Progress(TextColumn(f"[bold]{self.label}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                  TextColumn("{task.description}"), console=self._console, transient=False)
        self._progress.__enter__()
        self._task = self._progress.add_task(self.describe() or "starting", total=self._total)
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def total(self, total: int) -> None:
        self._total = total
        if self._lines is not None:
            self._lines.total = total
        if self._progress is not None:
            self._progress.update(self._task, total=total)

    def note(self, text: str) -> None:
        """A line of its own (the bar, when shown, stays below it)."""
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self.stream, flush=True)

    def record(self, record: dict[str, Any]) -> None:
        if self._lines is not None:
            self._lines(record)
        elif self._progress is not None:
            if record.get("status") != "ok":
                self._progress.console.print(describe_start(record), markup=False, highlight=False)
            self._progress.update(self._task, advance=1, description=self.describe())

    def finish(self, done: int) -> None:
        """The bar at ``done`` of ``done`` (a run that ended before its worst case)."""
        if self._progress is not None:
            self._progress.update(self._task, total=done, completed=done)


def run_with_progress(runner, plan, *, show: bool = True, stream: TextIO | None = None):
    """``runner.run(plan)`` with its progress on ``stream`` (stderr): a bar on a
    terminal with rich, lines otherwise, nothing when ``show`` is false
    (:class:`Display`). Returns the run's summary."""
    tally = Tally()
    with Display("runs", len(plan.starts), show=show and bool(plan.starts), stream=stream,
                 describe=tally.describe) as display:

        def on_record(record: dict[str, Any]) -> None:
            tally.count(record)
            display.record(record)

        runner.on_record = on_record
        return runner.run(plan)
