"""The eval runner in the editor, through ``skill_eval.evals.api``.

* a code lens on probe.json: the calibration status of the probe's current
  version (read from its run records; nothing runs), and
  "Run: control + treatment × 2", which calls the command below;
* code actions (the design card's "running evals from an editor code
  action"; Neovim shows no code lenses by default): on probe.json "Run probe"
  (``source.skill-eval.run``) and "Calibrate probe"
  (``source.skill-eval.calibrate``); on a SKILL.md heading that probes anchor
  on, "Calibrate the N probes of this step". VS Code lists ``source.`` actions
  only in its Source Action menu (which asks with ``only: ["source"]``) and
  hides them from the lightbulb, so a request without ``only`` (the
  lightbulb's, and ``vim.lsp.buf.code_action()``'s) gets the same actions
  without a kind;
* ``workspace/executeCommand skill-eval.runProbe [uri, {agent, reps, arms}]``:
  runs the probe's missing starts in a worker thread with work-done progress
  (one report per record), honours ``$/cancelRequest`` and the progress's
  cancel button (running agents are killed and recorded as interrupted), asks
  the client to refresh code lenses as records land, and returns the new status;
* ``workspace/executeCommand skill-eval.calibrate [uri or [uris], {agent}]``:
  ``skill-eval calibrate`` on those probes (the predeclared ``[calibration]``
  rule of the workspace's config), with the same progress, cancellation and
  lens refreshes; returns each probe's observation;
* hover on probe.json's ``id`` value: the same status.

Agents run only on these explicit commands, never on open, save, hover or a
code-action request (an action only names the command). Workspace trust is
the client's: the VS Code extension registers both commands itself and
refuses them in an untrusted workspace, for the lens and the actions alike.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ..linter.markdown import markdown_of
from ..linter.workspace import PROBE_FILE, SKILL_FILE
from .convert import path_of, uri_of

if TYPE_CHECKING:  # pragma: no cover
    from .server import SkillEvalLanguageServer

RUN_COMMAND = "skill-eval.runProbe"
CALIBRATE_COMMAND = "skill-eval.calibrate"
RUN_KIND = "source.skill-eval.run"
CALIBRATE_KIND = "source.skill-eval.calibrate"
ACTION_KINDS = (RUN_KIND, CALIBRATE_KIND)
DEFAULT_ARMS = ("control", "treatment")
DEFAULT_REPS = 2


def _api():
    from ..evals import api

    return api


def status_line(path: Path) -> str | None:
    """``"window · control 1/2 · treatment 2/2 · 4 starts"`` (``None`` when unknown)."""
    api = _api()
    try:
        status = api.probe_status(path)
    except api.ApiError:
        return None
    arms = " · ".join(f"{name} {arm.caught}/{arm.reps}" for name, arm in status.arms.items())
    return f"v{status.version} {status.zone} · {arms} · {status.starts} starts"


def lenses(ls: "SkillEvalLanguageServer", uri: str) -> list[types.CodeLens]:
    path = path_of(uri)
    if path is None or path.name != PROBE_FILE:
        return []
    top = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=1))
    found = [types.CodeLens(range=top, command=types.Command(
        title=f"Run: {' + '.join(DEFAULT_ARMS)} × {DEFAULT_REPS}", command=RUN_COMMAND, arguments=[uri]))]
    line = status_line(path)
    if line is not None:
        found.append(types.CodeLens(range=top, command=types.Command(title=line, command="")))
    return found


def hover_status(path: Path) -> str | None:
    line = status_line(path)
    return f"**Calibration** — {line}" if line else None


def _kind(only: list[str] | None, kind: str) -> tuple[bool, str | None]:
    """Whether a request asking for ``only`` wants an action of ``kind``, and
    the kind to give it (none when ``only`` is absent: see the module docstring)."""
    if not only:
        return True, None
    return any(kind == wanted or kind.startswith(wanted + ".") for wanted in only), kind


def code_actions(ls: "SkillEvalLanguageServer", params: types.CodeActionParams) -> list[types.CodeAction]:
    """Run / calibrate actions for probe.json and SKILL.md headings."""
    from . import features

    uri = params.text_document.uri
    path = path_of(uri)
    if path is None:
        return []
    only = params.context.only
    actions = []
    if path.name == PROBE_FILE:
        for title, command, kind in (("Run probe", RUN_COMMAND, RUN_KIND),
                                     ("Calibrate probe", CALIBRATE_COMMAND, CALIBRATE_KIND)):
            wanted, given = _kind(only, kind)
            if wanted:
                actions.append(types.CodeAction(title=title, kind=given,
                                                command=types.Command(title=title, command=command, arguments=[uri])))
        return actions
    if path.name != SKILL_FILE:
        return []
    wanted, given = _kind(only, CALIBRATE_KIND)
    if not wanted:
        return []
    state = ls.state_for(path)
    document = features.load_text(ls, state, path)
    if document is None:
        return []
    heading = features._heading_at(markdown_of(document), params.range.start.line + 1)
    if heading is None:
        return []
    probes = features.anchored(state, path).get(heading.line, [])
    if not probes:
        return []
    title = f"Calibrate the {len(probes)} probe{'s' if len(probes) != 1 else ''} of this step"
    return [types.CodeAction(title=title, kind=given, command=types.Command(
        title=title, command=CALIBRATE_COMMAND, arguments=[[uri_of(probe) for probe in probes]]))]


def register(ls: "SkillEvalLanguageServer") -> None:
    ls.extra_lenses.append(lambda uri: lenses(ls, uri))
    ls.extra_actions.append(lambda params: code_actions(ls, params))
    ls.id_hover = hover_status

    @ls.command(RUN_COMMAND)
    async def run_probe(*arguments: Any):
        return await ls.guard(_run)(ls, list(arguments))

    @ls.command(CALIBRATE_COMMAND)
    async def calibrate(*arguments: Any):
        return await ls.guard(_calibrate)(ls, list(arguments))


def _path(argument: Any) -> Path | None:
    if not isinstance(argument, str) or not argument:
        return None
    return path_of(argument) if argument.startswith("file:") else Path(argument)


class _Progress:
    """Work-done progress for a command's worker (begin, a report per record,
    end), its cancel button and ``$/cancelRequest`` setting ``cancel``, and
    code-lens refreshes as records land: the rules the run lens set, shared by
    the run and calibrate commands and their code actions."""

    def __init__(self, ls: "SkillEvalLanguageServer", title: str, name_probes: bool = False) -> None:
        self.ls = ls
        self.title = title
        self.name_probes = name_probes
        """Whether a report names the record's probe (several probes run)."""
        from ..evals.runner import Cancel

        self.cancel = Cancel()
        """Set by the progress's cancel button or ``$/cancelRequest``: wakes the run at once."""
        self.token = str(uuid.uuid4())
        self.enabled = ls.progress_support
        self.refresh = ls.supports("workspace.code_lens.refresh_support")
        self.expected = 1
        self.landed = 0
        self.loop = asyncio.get_running_loop()

    async def begin(self) -> None:
        if not self.enabled:
            return
        ls = self.ls
        try:
            await asyncio.wait_for(ls.work_done_progress.create_async(self.token), 10)
            ls.work_done_progress.begin(self.token, types.WorkDoneProgressBegin(
                title=self.title, cancellable=True, percentage=0))
            ls.work_done_progress.tokens[self.token].add_done_callback(lambda _future: self.cancel.set())
        except Exception as error:  # noqa: BLE001 - progress is optional
            ls.log(f"no work-done progress for {self.title}: {error}")
            self.enabled = False

    def report(self, message: str) -> None:
        if self.enabled:
            self.ls.work_done_progress.report(self.token, types.WorkDoneProgressReport(
                message=message, percentage=min(100, int(100 * self.landed / max(self.expected, 1)))))

    def on_record(self, record: dict) -> None:
        """Called in the worker thread after each record."""

        def landed() -> None:
            self.landed += 1
            probe = f"{record.get('probe', '?')}: " if self.name_probes else ""
            self.report(f"{probe}{record.get('arm', '?')} rep {record.get('rep', '?')}: {record.get('status', '?')}")
            if self.refresh:
                self.ls.workspace_code_lens_refresh(None)

        self.loop.call_soon_threadsafe(landed)

    async def run(self, work, describe) -> dict | None:
        """``work()`` in a worker thread; ``describe(result)`` ends the progress."""
        api = _api()
        await self.begin()
        message = "done"
        try:
            result = await self.loop.run_in_executor(None, work)
            message = describe(result)
            return result.to_json()
        except asyncio.CancelledError:
            self.cancel.set()
            message = "cancelled"
            raise
        except api.ApiError as error:
            message = "failed"
            self.ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error,
                                                                message=f"skill-eval: {error}"))
            return None
        finally:
            if self.enabled:
                self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            if self.refresh:
                self.ls.workspace_code_lens_refresh(None)


async def _run(ls: "SkillEvalLanguageServer", arguments: list[Any]) -> dict | None:
    api = _api()
    path = _path(arguments[0]) if arguments else None
    if path is None:
        ls.show_once(f"{RUN_COMMAND} needs the probe.json URI as its first argument")
        return None
    options = arguments[1] if len(arguments) > 1 and isinstance(arguments[1], dict) else {}
    progress = _Progress(ls, f"skill-eval: running {path.parent.name}")
    arms = tuple(options.get("arms") or DEFAULT_ARMS)
    reps = int(options.get("reps") or DEFAULT_REPS)
    progress.expected = max(len(arms) * reps, 1)

    def work():
        return api.run_probe(path, agent=options.get("agent"), arms=arms, reps=reps, on_record=progress.on_record,
                             cancel=progress.cancel)

    return await progress.run(work, lambda status: f"{status.zone}: {status.new_records} new record(s)"
                              + (" (interrupted)" if status.interrupted else ""))


async def _calibrate(ls: "SkillEvalLanguageServer", arguments: list[Any]) -> dict | None:
    api = _api()
    first = arguments[0] if arguments else None
    paths = [_path(item) for item in (first if isinstance(first, list) else [first])]
    if not paths or any(path is None for path in paths):
        ls.show_once(f"{CALIBRATE_COMMAND} needs a probe.json URI, or a list of them, as its first argument")
        return None
    options = arguments[1] if len(arguments) > 1 and isinstance(arguments[1], dict) else {}
    name = paths[0].parent.name if len(paths) == 1 else f"{len(paths)} probes"
    progress = _Progress(ls, f"skill-eval: calibrating {name}", name_probes=True)

    def on_stage(number: int, starts: int, worst_case: int) -> None:  # in the worker thread
        def staged() -> None:
            progress.expected = max(worst_case, 1)
            progress.report(f"stage {number}: {starts} start(s) ({worst_case} at most in all)")

        progress.loop.call_soon_threadsafe(staged)

    def work():
        return api.calibrate_probes(paths, agent=options.get("agent"), on_record=progress.on_record,
                                    on_stage=on_stage, cancel=progress.cancel)

    def describe(status) -> str:
        zones = ", ".join(f"{probe.probe} {probe.zone}" for probe in status.probes)
        return f"{zones}: {status.new_records} new record(s)" + (" (interrupted)" if status.interrupted else "")

    return await progress.run(work, describe)
