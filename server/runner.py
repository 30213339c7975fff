"""The eval runner in the editor, through ``skill_eval.evals.api``.

* a code lens on probe.json: the calibration status of the probe's current
  version (read from its run records; nothing runs), and
  "Run: control + treatment × 2", which calls the command below;
* ``workspace/executeCommand skill-eval.runProbe [uri, {agent, reps, arms}]``:
  runs the probe's missing starts in a worker thread with work-done progress
  (one report per record), honours ``$/cancelRequest`` and the progress's
  cancel button (running agents are killed and recorded as interrupted), asks
  the client to refresh code lenses as records land, and returns the new status;
* hover on probe.json's ``id`` value: the same status.

Agents run only on this explicit command, never on open, save or hover.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ..linter.workspace import PROBE_FILE
from .convert import path_of

if TYPE_CHECKING:  # pragma: no cover
    from .server import SkillEvalLanguageServer

RUN_COMMAND = "skill-eval.runProbe"
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


def register(ls: "SkillEvalLanguageServer", feature) -> None:
    ls.extra_lenses.append(lambda uri: lenses(ls, uri))
    ls.id_hover = hover_status

    @ls.command(RUN_COMMAND)
    async def run_probe(*arguments: Any):
        return await ls.guard(_run)(ls, list(arguments))


async def _run(ls: "SkillEvalLanguageServer", arguments: list[Any]) -> dict | None:
    api = _api()
    if not arguments or not isinstance(arguments[0], str):
        ls.show_once(f"{RUN_COMMAND} needs the probe.json URI as its first argument")
        return None
    path = path_of(arguments[0]) if arguments[0].startswith("file:") else Path(arguments[0])
    options = arguments[1] if len(arguments) > 1 and isinstance(arguments[1], dict) else {}
    loop = asyncio.get_running_loop()
    cancel = threading.Event()
    token = str(uuid.uuid4())
    progress = ls.progress_support
    if progress:
        try:
            await asyncio.wait_for(ls.work_done_progress.create_async(token), 10)
            ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                title=f"skill-eval: running {path.parent.name}", cancellable=True, percentage=0))
            ls.work_done_progress.tokens[token].add_done_callback(lambda _future: cancel.set())
        except Exception as error:  # noqa: BLE001 - progress is optional
            ls.log(f"no work-done progress for the run: {error}")
            progress = False
    arms = tuple(options.get("arms") or DEFAULT_ARMS)
    reps = int(options.get("reps") or DEFAULT_REPS)
    expected = max(len(arms) * reps, 1)
    landed = [0]
    refresh = bool(ls._cap("workspace", "code_lens", "refresh_support"))

    def landed_on_loop(record: dict) -> None:
        landed[0] += 1
        if progress:
            ls.work_done_progress.report(token, types.WorkDoneProgressReport(
                message=f"{record.get('arm', '?')} rep {record.get('rep', '?')}: {record.get('status', '?')}",
                percentage=min(100, int(100 * landed[0] / expected))))
        if refresh:
            ls.workspace_code_lens_refresh(None)

    def on_record(record: dict) -> None:  # called in the worker thread
        loop.call_soon_threadsafe(landed_on_loop, record)

    def work():
        return api.run_probe(path, agent=options.get("agent"), arms=arms, reps=reps, on_record=on_record, cancel=cancel)

    message = "done"
    try:
        status = await loop.run_in_executor(None, work)
        message = f"{status.zone}: {status.new_records} new record(s)" + (" (interrupted)" if status.interrupted else "")
        return status.to_json()
    except asyncio.CancelledError:
        cancel.set()
        message = "cancelled"
        raise
    except api.ApiError as error:
        message = "failed"
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"skill-eval: {error}"))
        return None
    finally:
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        if refresh:
            ls.workspace_code_lens_refresh(None)
