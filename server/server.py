"""The pygls 2.x language server: LSP in, engine calls, LSP out.

This module owns the protocol side only: document sync, debouncing, settings,
file watching, progress, publishing and error containment. Linting state lives
in :mod:`.state`; hover, completion, navigation, rename and code actions in
:mod:`.features`. No rule logic is written here.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import logging
import os
import sys
import threading
import time
import traceback
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..linter.reader import read_regular_file
from ..linter.textfile import DEFAULT_MAX_FILE_SIZE, UnreadableFile, decode_text
from ..linter.suites import is_named_suite
from ..linter.workspace import FIXTURE_NAMES, find_workspace_root
from . import features
from .convert import Converter, path_of, uri_of
from .runner import ACTION_KINDS as RUNNER_ACTION_KINDS
from .framing import CHUNK, StdinChunks, serve
from .settings import SECTION, config_files, resolve, settings_mapping
from .state import Changes, WorkspaceState, is_calibration_file, release_free_memory
from .textsync import SkillEvalProtocol, engine_text, split_lines

logger = logging.getLogger(__name__)

DEBOUNCE = 0.1
"""Seconds between two lints caused by typing in the same document."""
SETTLE = 0.5
"""Idle seconds after the last change before the workspace-scope rules (SE006,
SE501, ...) run over every probe again. They compare each probe with all the
others (SE501 indexes every artifact), so they run once edits settle instead
of on every keystroke; the findings of the other rules are published at once."""
CALIBRATION_DELAY = 1.0
"""Seconds to wait for more eval-run records before re-linting for them."""
SWEEP_INTERVAL = 5.0
"""Seconds between two checks of the disk for deleted files and folders when
the client watches no files (environment: ``SKILL_EVAL_LS_SWEEP_SECONDS``;
0 turns the sweep off)."""
SWEEP_ENVIRONMENT = "SKILL_EVAL_LS_SWEEP_SECONDS"


def sweep_interval() -> float:
    """:data:`SWEEP_INTERVAL`, or the environment's ``SKILL_EVAL_LS_SWEEP_SECONDS``."""
    try:
        return float(os.environ.get(SWEEP_ENVIRONMENT, SWEEP_INTERVAL))
    except ValueError:
        return SWEEP_INTERVAL

WATCHED_GLOBS = (
    "**/probe.json",
    "**/SKILL.md",
    "**/output-spec.md",
    "**/*.md",
    "**/skill-eval.toml",
    "**/pyproject.toml",
    "**/frozen.json",
    "**/evals/runs/**",
    "**/evals.json",
    "**/*.csv",
    "**/trigger*.json",
    "**/eval_set.json",
)
"""Files whose creation, change or deletion the server wants to hear of."""
DELETED_GLOB = "**/*"
"""Watched for deletions only: a deleted folder is reported as the folder alone
(VS Code sends no event for the files that were in it), so every path's
deletion is asked for; :meth:`WorkspaceState.removed` drops what lay below it."""
FIX_ALL_KIND = "source.fixAll.skill-eval"
SHOW_PROBES_COMMAND = "skill-eval.showProbes"


@dataclass(frozen=True)
class Registration:
    """What a handler method answers: an LSP ``method`` (with its server
    ``options``), or, when ``command`` is true, a ``workspace/executeCommand``
    command of that name."""

    method: str
    options: Any = None
    command: bool = False


def lsp_feature(method: str, options: Any = None) -> Callable:
    """Mark a method of :class:`SkillEvalLanguageServer` as the handler of ``method``."""

    def mark(function: Callable) -> Callable:
        function.registration = Registration(method, options)
        return function

    return mark


def lsp_command(name: str) -> Callable:
    """Mark a method of :class:`SkillEvalLanguageServer` as the handler of the command ``name``."""

    def mark(function: Callable) -> Callable:
        function.registration = Registration(name, command=True)
        return function

    return mark


class SkillEvalLanguageServer(LanguageServer):
    """The server and its adapter state (buffers, engine states, publishing).

    Its LSP handlers are its methods marked with :func:`lsp_feature` or
    :func:`lsp_command` (section "LSP handlers"), registered by
    :meth:`register_handlers`: each converts the request's types and
    dispatches, to the methods here (documents, settings, files) or to
    :mod:`.features` (hover, completion, navigation, rename, code actions)."""

    def __init__(self) -> None:
        super().__init__(
            "skill-eval-ls",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=SkillEvalProtocol,
        )
        self.buffers: dict[Path, str] = {}
        self.versions: dict[Path, int] = {}
        self.states: dict[Path, WorkspaceState] = {}
        self.init_settings: dict[str, Any] = {}
        self.client_settings: dict[str, Any] = {}
        self.reported: set[str] = set()
        self.published: set[Path] = set()
        self.dirty: set[Path] = set()
        self.last_flush: dict[Path, float] = {}
        self.flush_handle: asyncio.TimerHandle | None = None
        self.settle_handle: asyncio.TimerHandle | None = None
        self.calibration_handle: asyncio.TimerHandle | None = None
        self.calibration_roots: set[Path] = set()
        self.watching = False
        self.sweep_interval = sweep_interval()
        self.sweep_handle: asyncio.TimerHandle | None = None
        self.sweep_task: asyncio.Future | None = None
        self.sweep_again = False
        self.config_stamps: dict[Path, tuple] = {}
        self.ready = False
        self.extra_lenses: list[Callable[[str], list[types.CodeLens]]] = []
        """Code-lens providers of optional integrations (the eval runner)."""
        self.id_hover: Callable[[Path], str | None] | None = None
        """Hover text for probe.json's ``id`` value (the eval runner's status)."""
        self.extra_actions: list[Callable[[types.CodeActionParams], list[types.CodeAction]]] = []
        """Code-action providers of optional integrations (the eval runner's run and calibrate)."""

    # -- client capabilities -------------------------------------------------------

    def supports(self, field: str) -> bool:
        """Whether the client's capability ``field`` (a dotted path, as
        pygls's :func:`~pygls.capabilities.get_capability` takes it) is set."""
        return bool(get_capability(self.client_capabilities, field, False))

    @property
    def related_support(self) -> bool:
        return self.supports("text_document.publish_diagnostics.related_information")

    @property
    def progress_support(self) -> bool:
        return self.supports("window.work_done_progress")

    @property
    def configuration_support(self) -> bool:
        return self.supports("workspace.configuration")

    @property
    def watch_support(self) -> bool:
        return self.supports("workspace.did_change_watched_files.dynamic_registration")

    @property
    def relative_pattern_support(self) -> bool:
        return self.supports("workspace.did_change_watched_files.relative_pattern_support")

    # -- transports ------------------------------------------------------------------

    def start_io(self, stdin=None, stdout=None) -> int:
        """Serve one client over stdin/stdout; returns the exit status.

        Replaces pygls's reading loop with :func:`.framing.serve`: malformed
        framing is logged and skipped, or ends the connection, never hangs it."""
        stdin = stdin or sys.stdin.buffer
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def main() -> bool:
            chunks = StdinChunks(stdin.fileno(), asyncio.get_running_loop())
            return await serve(self.protocol, chunks.read, self.report_framing, self._stop_event)

        return self._run(main)

    def start_tcp(self, host: str, port: int) -> int:
        """Listen on ``host``:``port`` for one client and serve it; returns the
        exit status. There is no authentication: whoever connects first is the
        client (see ``skill-eval-ls --help``)."""
        self._stop_event = threading.Event()

        async def main() -> bool:
            loop = asyncio.get_running_loop()
            connected: asyncio.Future = loop.create_future()

            async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                if connected.done():  # one client per server
                    writer.close()
                    return
                connected.set_result((reader, writer))

            listener = await asyncio.start_server(on_client, host, port)
            for sock in listener.sockets:
                address = sock.getsockname()
                announce_tcp(address[0], address[1])
            reader, writer = await connected
            listener.close()
            self.protocol.set_writer(writer)
            try:
                return await serve(self.protocol, lambda: reader.read(CHUNK), self.report_framing, self._stop_event)
            finally:
                writer.close()

        return self._run(main)

    def _run(self, main: Callable) -> int:
        try:
            return 0 if asyncio.run(main()) else 1
        except BrokenPipeError:
            logger.error("the connection to the client is lost; shutting down")
            return 1
        except SystemExit as exit:  # pygls's `exit` handler
            return exit.code if isinstance(exit.code, int) else 1
        except KeyboardInterrupt:
            return 1
        finally:
            self.shutdown()

    def report_framing(self, text: str, fatal: bool) -> None:
        """Log malformed input from the client (the server's log, and the client's)."""
        message = f"skill-eval-ls: malformed LSP input from the client: {text}"
        logger.error(message)
        self.log(message, types.MessageType.Error if fatal else types.MessageType.Warning)

    # -- logging and errors ----------------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # noqa: BLE001 - logging must never fail a handler
            logger.exception("cannot send window/logMessage")

    def report_server_error(self, error: Exception, source) -> None:
        """Internal errors go to the log, never to a pop-up."""
        self.log(f"skill-eval-ls internal error ({getattr(source, '__name__', source)}): {error}", types.MessageType.Error)

    def show_once(self, message: str) -> None:
        """Tell the user about ``message`` (an invalid config) once per distinct message."""
        if message in self.reported:
            return
        self.reported.add(message)
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"skill-eval: {message}"))
        self.log(f"skill-eval: {message}", types.MessageType.Error)

    # -- conversion ----------------------------------------------------------------------

    def lines_of(self, path: Path) -> list[str]:
        """``path``'s lines as the client has them: the open buffer's, split as
        the LSP splits them, else the file's as the engine decoded it."""
        text = self.buffers.get(path)
        if text is not None:
            return split_lines(text)
        state = self.state_for(path, create=False)
        document = state.document(path) if state is not None else None
        # Split for this conversion only: ``document.lines`` would stay cached on
        # every document with findings (docs/performance.md).
        return document.text.split("\n") if document is not None else []

    @property
    def converter(self) -> Converter:
        return Converter(self.workspace.position_codec, self.lines_of)

    # -- engine states -----------------------------------------------------------------

    def settings_layers(self) -> list[tuple[str, dict]]:
        return [
            ("skill-eval settings (initializationOptions)", self.init_settings),
            ("skill-eval settings (workspace/configuration)", self.client_settings),
        ]

    def config_for(self, root: Path):
        config, errors = resolve(root, self.settings_layers())
        for message in errors:
            self.show_once(message)
        self.config_stamps[root] = self._stamp(root)
        return config

    @staticmethod
    def _stamp(root: Path) -> tuple:
        stamp = []
        for path in config_files(root):
            try:
                stat = path.stat()
                stamp.append((stat.st_mtime_ns, stat.st_size))
            except OSError:
                stamp.append(None)
        return tuple(stamp)

    def folders(self) -> list[Path]:
        folders = []
        for folder in self.workspace.folders.values():
            path = path_of(folder.uri)
            if path is not None:
                folders.append(path)
        if not folders and self.workspace.root_uri:
            path = path_of(self.workspace.root_uri)
            if path is not None:
                folders.append(path)
        return folders

    def build_states(self) -> None:
        for folder in self.folders():
            root = find_workspace_root(folder)
            state = self.states.get(root)
            if state is None:
                state = self.states[root] = WorkspaceState(root, self.config_for(root), self.buffers)
            state.scope.add(folder)

    def state_for(self, path: Path, create: bool = True) -> WorkspaceState | None:
        best = None
        for root, state in self.states.items():
            if state.owns(path) and (best is None or len(root.parts) > len(best.root.parts)):
                best = state
        if best is None and create:
            root = find_workspace_root(path)
            best = self.states[root] = WorkspaceState(root, self.config_for(root), self.buffers)
        return best

    # -- publishing ------------------------------------------------------------------------

    def publish(self, state: WorkspaceState, changes: Changes, extra: set[Path] = frozenset()) -> None:
        """Send the diagnostics of the files ``changes`` (and ``extra``) name.

        A file is confirmed to exist (or to be an open buffer) before its
        findings are sent: one that is gone (deleted, or its folder was) gets an
        empty list if it had any, and leaves the state with its stored findings,
        re-linting the probes that read it."""
        converter = self.converter
        related = self.related_support
        gone: set[Path] = set()
        for path in sorted(changes.all() | set(extra)):
            found = state.diagnostics_for(path)
            if not found and path not in self.published and path not in changes.always and path not in extra:
                continue
            if path == state.root:
                continue
            if path not in self.buffers and not os.path.isfile(path):
                if path not in changes.cleared:
                    gone.add(path)
                if path not in self.published:
                    continue
                found = []
            diagnostics = []
            for diagnostic in found:
                try:
                    diagnostics.append(converter.diagnostic(diagnostic, related))
                except Exception:  # noqa: BLE001 - one bad span must not hide the rest
                    self.log(f"cannot convert {diagnostic.code} in {path}:\n{traceback.format_exc()}", types.MessageType.Error)
            if diagnostics:
                self.published.add(path)
            else:
                self.published.discard(path)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri_of(path), diagnostics=diagnostics, version=self.versions.get(path))
            )
        if gone:
            self.publish(state, state.removed(gone))

    # -- scanning -----------------------------------------------------------------------------

    async def scan(self, states: list[WorkspaceState], title: str = "skill-eval: checking probes") -> None:
        token = None
        if self.progress_support:
            token = str(uuid.uuid4())
            try:
                await asyncio.wait_for(self.work_done_progress.create_async(token), 10)
                self.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, percentage=0, cancellable=False))
            except Exception as error:  # noqa: BLE001 - progress is optional
                self.log(f"no work-done progress: {error}")
                token = None
        try:
            for state in states:
                for done, total, changes in state.scan():
                    self.publish(state, changes)
                    if token is not None:
                        percentage = int(100 * done / total) if total else 100
                        self.work_done_progress.report(
                            token, types.WorkDoneProgressReport(message=f"{done}/{total} files", percentage=percentage)
                        )
                    await asyncio.sleep(0)
        finally:
            if token is not None:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))

    # -- changes --------------------------------------------------------------------------------

    def mark_dirty(self, path: Path, immediate: bool) -> None:
        self.dirty.add(path)
        loop = asyncio.get_running_loop()
        now = loop.time()
        due = self.last_flush.get(path, float("-inf")) + DEBOUNCE
        if immediate or (now >= due and self.flush_handle is None):
            self.flush(extra={path})
            return
        if self.flush_handle is None:
            self.flush_handle = loop.call_later(max(due - now, 0), self._timed_flush)

    def _timed_flush(self) -> None:
        self.flush_handle = None
        self.guard(self.flush)()

    def flush(self, extra: set[Path] = frozenset()) -> None:
        """Re-lint everything the dirty paths affect and publish."""
        if self.flush_handle is not None:
            self.flush_handle.cancel()
            self.flush_handle = None
        dirty, self.dirty = self.dirty, set()
        loop = asyncio.get_running_loop()
        by_state: dict[Path, tuple[WorkspaceState, set[Path]]] = {}
        for path in dirty | set(extra):
            state = self.state_for(path)
            by_state.setdefault(state.root, (state, set()))[1].add(path)
        for state, paths in by_state.values():
            changes = state.changed(paths & dirty, wide=False)
            self.publish(state, changes, extra={p for p in paths if p in self.buffers})
        now = loop.time()
        for path in dirty:
            self.last_flush[path] = now
        self.schedule_settle()

    def schedule_settle(self) -> None:
        if not any(state.workspace_rules for state in self.states.values()):
            return
        loop = asyncio.get_running_loop()
        if self.settle_handle is not None:
            self.settle_handle.cancel()
        self.settle_handle = loop.call_later(SETTLE, self.guard(self._settle))

    def _settle(self) -> None:
        self.settle_handle = None
        for state in list(self.states.values()):
            self.publish(state, state.workspace_pass(None))

    def differs_from_disk(self, path: Path, text: str | None) -> bool:
        """Whether ``text`` (a buffer) differs from ``path``'s content on disk,
        read below its workspace root only (no link out followed, even one
        made meanwhile: :class:`~skill_eval.linter.reader.SealedRoot`)."""
        if text is None:
            return True
        state = self.state_for(path, create=False)
        if state is None:
            return True
        try:
            disk = decode_text(read_regular_file(path, DEFAULT_MAX_FILE_SIZE, state.root))
        except (OSError, UnreadableFile, ValueError):
            return True
        return disk != engine_text(text)

    def reload_config(self, state: WorkspaceState) -> None:
        state.configure(self.config_for(state.root))
        self.publish(state, state.relint_all())

    def poll_disk(self) -> None:
        """Without file watching: notice config changes now, and look for
        deleted files in a sweep that starts at once (at document events: open,
        save, close)."""
        if self.watching:
            return
        for state in list(self.states.values()):
            if self._stamp(state.root) != self.config_stamps.get(state.root):
                self.reload_config(state)
        self.request_sweep()

    def request_sweep(self) -> None:
        """Start :meth:`sweep` unless one is running (that one then goes round again)."""
        if self.sweep_task is not None and not self.sweep_task.done():
            self.sweep_again = True
            return
        self.sweep_task = asyncio.ensure_future(self.guard(self.sweep)())

    async def sweep(self) -> None:
        """Find the known files that no longer exist (probes, skills, output
        specs, files with findings) and drop them and their findings.

        The files are checked in a worker thread: ``stat`` releases the GIL,
        so edits are linted meanwhile (a ``stat`` per known file adds up over
        a large workspace: docs/performance.md)."""
        loop = asyncio.get_running_loop()
        while True:
            self.sweep_again = False
            for state in list(self.states.values()):
                known = state.probes | state.skills | state.specs | state.files_with_diagnostics()
                candidates = [path for path in known if path != state.root and path not in self.buffers]
                missing = await loop.run_in_executor(None, _missing, candidates)
                gone = {path for path in missing if path not in self.buffers}
                if gone and self.states.get(state.root) is state:
                    self.publish(state, state.removed(gone))
            if not self.sweep_again:
                return

    def schedule_sweep(self, delay: float | None = None) -> None:
        """Sweep now and then when the client watches no files (Neovim 0.11 on
        Linux): a deleted probe folder's diagnostics go within about
        :data:`SWEEP_INTERVAL` seconds, without waiting for a document event.
        A sweep that took long waits longer (50 times its duration), so
        sweeping costs at most ~2% of a CPU."""
        if self.watching or self.sweep_interval <= 0:
            return
        loop = asyncio.get_running_loop()
        self.sweep_handle = loop.call_later(self.sweep_interval if delay is None else delay, self._timed_sweep)

    def _timed_sweep(self) -> None:
        started = time.perf_counter()
        self.request_sweep()

        def again(_task) -> None:
            self.schedule_sweep(max(self.sweep_interval, 50 * (time.perf_counter() - started)))

        self.sweep_task.add_done_callback(again)

    def on_watched(self, changes: list[types.FileEvent]) -> None:
        config_roots: set[Path] = set()
        by_kind: dict[types.FileChangeType, set[Path]] = {kind: set() for kind in types.FileChangeType}
        for change in changes:
            path = path_of(change.uri)
            if path is None:
                continue
            state = self.state_for(path, create=False)
            if state is None:
                continue
            if path in config_files(state.root):
                config_roots.add(state.root)
            elif is_calibration_file(path):
                self.calibration_roots.add(state.root)
            elif change.type == types.FileChangeType.Changed and path in self.buffers:
                continue  # the open buffer wins over the disk
            else:
                by_kind[change.type].add(path)
        for root in config_roots:
            self.reload_config(self.states[root])
        for kind, paths in by_kind.items():
            grouped: dict[Path, set[Path]] = {}
            for path in paths:
                grouped.setdefault(self.state_for(path).root, set()).add(path)
            for root, group in grouped.items():
                state = self.states[root]
                if kind == types.FileChangeType.Deleted:
                    self.publish(state, state.removed(group))
                elif kind == types.FileChangeType.Created:
                    self.publish(state, state.created(group))
                else:
                    self.publish(state, state.changed(group, wide=False))
        if self.calibration_roots:
            loop = asyncio.get_running_loop()
            if self.calibration_handle is not None:
                self.calibration_handle.cancel()
            self.calibration_handle = loop.call_later(CALIBRATION_DELAY, self.guard(self._calibration_relint))
        self.schedule_settle()

    def _calibration_relint(self) -> None:
        self.calibration_handle = None
        roots, self.calibration_roots = self.calibration_roots, set()
        for root in roots:
            state = self.states.get(root)
            if state is not None:
                self.publish(state, state.relint_all())

    def file_watchers(self) -> list[types.FileSystemWatcher]:
        """What to watch: :data:`WATCHED_GLOBS` (every kind of change) and
        :data:`DELETED_GLOB` (deletions, folders included), relative to each
        workspace folder when the client takes relative patterns, else anywhere
        in the workspace."""
        bases: list[str | None] = [None]
        if self.relative_pattern_support and self.folders():
            bases = [uri_of(folder) for folder in self.folders()]
        watchers = []
        for base in bases:
            for glob, kind in [*((glob, None) for glob in WATCHED_GLOBS), (DELETED_GLOB, types.WatchKind.Delete)]:
                pattern = glob if base is None else types.RelativePattern(base_uri=base, pattern=glob)
                watchers.append(types.FileSystemWatcher(glob_pattern=pattern, kind=kind))
        return watchers

    async def register_watchers(self) -> None:
        if not self.watch_support:
            return
        watchers = self.file_watchers()
        registration = types.Registration(
            id=str(uuid.uuid4()),
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
        )
        try:
            await asyncio.wait_for(
                self.client_register_capability_async(types.RegistrationParams(registrations=[registration])), 10
            )
            self.watching = True
        except Exception as error:  # noqa: BLE001 - fall back to polling at events
            self.log(f"file watching unavailable ({error}); checking the disk at document events and every few seconds instead")

    async def fetch_settings(self) -> None:
        if not self.configuration_support:
            return
        try:
            result = await asyncio.wait_for(
                self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                ),
                10,
            )
        except Exception as error:  # noqa: BLE001 - settings are optional
            self.log(f"workspace/configuration failed: {error}")
            return
        self.client_settings = settings_mapping(result[0] if result else None)

    # -- error containment ------------------------------------------------------------------

    def guard(self, function: Callable, default: Any = None) -> Callable:
        """``function`` with any exception logged (window/logMessage) instead of raised."""
        if asyncio.iscoroutinefunction(function):

            @functools.wraps(function)
            async def guarded_async(*args, **kwargs):
                try:
                    return await function(*args, **kwargs)
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001
                    self.log(f"skill-eval-ls: {function.__name__} failed:\n{traceback.format_exc()}", types.MessageType.Error)
                    return default

            return guarded_async

        @functools.wraps(function)
        def guarded(*args, **kwargs):
            try:
                return function(*args, **kwargs)
            except Exception:  # noqa: BLE001
                self.log(f"skill-eval-ls: {function.__name__} failed:\n{traceback.format_exc()}", types.MessageType.Error)
                return default

        return guarded

    # -- LSP handlers ------------------------------------------------------------------------

    def register_handlers(self) -> None:
        """Register every method marked with :func:`lsp_feature` or
        :func:`lsp_command`, each under :meth:`guard` (an exception is logged,
        never sent to the client as a failure of the server)."""
        for name in dir(type(self)):
            registration = getattr(getattr(type(self), name), "registration", None)
            if not isinstance(registration, Registration):
                continue
            handler = self.guard(getattr(self, name))
            if registration.command:
                self.command(registration.method)(handler)
            elif registration.options is None:
                self.feature(registration.method)(handler)
            else:
                self.feature(registration.method, registration.options)(handler)

    @lsp_feature(types.INITIALIZE)
    def on_initialize(self, params: types.InitializeParams) -> None:
        self.init_settings = settings_mapping(params.initialization_options)

    @lsp_feature(types.INITIALIZED)
    async def on_initialized(self, params: types.InitializedParams) -> None:
        await self.fetch_settings()
        self.build_states()
        await self.register_watchers()
        await self.scan(list(self.states.values()))
        for state in self.states.values():
            self.publish(state, state.warm_up())
        release_free_memory()  # what publishing the scan's findings and the warm-up freed
        self.ready = True
        self.schedule_sweep()

    @lsp_feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_did_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        if self.configuration_support:
            await self.fetch_settings()
        else:
            self.client_settings = settings_mapping(params.settings)
        for state in list(self.states.values()):
            self.reload_config(state)

    @lsp_feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def on_did_change_watched_files(self, params: types.DidChangeWatchedFilesParams) -> None:
        self.on_watched(params.changes)

    def take_buffer(self, uri: str) -> Path | None:
        """The path of ``uri`` with its buffer and version taken from pygls's
        document (which applied the client's edits); ``None`` for a URI that
        names no local file."""
        path = path_of(uri)
        if path is None:
            return None
        document = self.workspace.get_text_document(uri)
        self.buffers[path] = document.source
        self.versions[path] = document.version
        return path

    @lsp_feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        path = self.take_buffer(params.text_document.uri)
        if path is None:
            return
        self.poll_disk()
        state = self.state_for(path)
        if (path.name in FIXTURE_NAMES or is_named_suite(path)) and not state.is_unit(path):
            self.mark_dirty(path, immediate=True)
        elif self.differs_from_disk(path, self.buffers.get(path)):
            self.mark_dirty(path, immediate=True)
        else:
            self.publish(state, Changes(), extra={path})

    @lsp_feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        path = self.take_buffer(params.text_document.uri)
        if path is not None:
            self.mark_dirty(path, immediate=False)

    @lsp_feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def on_did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is None:
            return
        state = self.state_for(path)
        if path in config_files(state.root):
            self.reload_config(state)
            return
        self.poll_disk()
        if path in self.dirty:
            self.mark_dirty(path, immediate=True)

    @lsp_feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is None:
            return
        closing = self.buffers.pop(path, None)
        self.versions.pop(path, None)
        self.dirty.discard(path)
        state = self.state_for(path)
        if not path.exists():
            self.publish(state, state.removed({path}))
            return
        self.poll_disk()
        if self.differs_from_disk(path, closing):
            self.mark_dirty(path, immediate=True)

    @lsp_feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(self, params: types.HoverParams) -> types.Hover | None:
        return features.hover(self, params)

    @lsp_feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=['"', ":", " ", ">"]))
    def on_completion(self, params: types.CompletionParams):
        return features.completion(self, params)

    @lsp_feature(types.TEXT_DOCUMENT_DEFINITION)
    def on_definition(self, params: types.DefinitionParams):
        return features.definition(self, params)

    @lsp_feature(types.TEXT_DOCUMENT_REFERENCES)
    def on_references(self, params: types.ReferenceParams):
        return features.references(self, params)

    @lsp_feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def on_code_lens(self, params: types.CodeLensParams):
        return features.code_lens(self, params)

    @lsp_feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    def on_prepare_rename(self, params: types.PrepareRenameParams):
        return features.prepare_rename(self, params)

    @lsp_feature(types.TEXT_DOCUMENT_RENAME, types.RenameOptions(prepare_provider=True))
    def on_rename(self, params: types.RenameParams):
        return features.rename(self, params)

    @lsp_feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND, *RUNNER_ACTION_KINDS]))
    def on_code_action(self, params: types.CodeActionParams):
        return features.code_actions(self, params)

    @lsp_command(SHOW_PROBES_COMMAND)
    def on_show_probes(self, uri: str, line: int):
        return features.probes_at_heading(self, uri, line)


def _missing(paths: list[Path]) -> list[Path]:
    """The ``paths`` that do not exist (run in a worker thread)."""
    exists = os.path.exists
    return [path for path in paths if not exists(path)]


TCP_WARNING = (
    "there is no authentication: any process that can connect to this address "
    "is the server's client, and can have it read files and run the agents a workspace's config names"
)


def announce_tcp(host: str, port: int) -> None:
    """Say where the server listens, and that anyone reaching it may use it
    (stderr, and the server's log)."""
    try:
        loopback = ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        loopback = host == "localhost"
    where = "loopback only" if loopback else "NOT loopback: reachable from other machines"
    message = f"skill-eval-ls: listening on {host}:{port} for one client ({where}); {TCP_WARNING}"
    logger.info(message)  # the --log-file; stderr gets it below, once
    print(message, file=sys.stderr, flush=True)


def create_server() -> SkillEvalLanguageServer:
    """A server with every handler registered (:meth:`SkillEvalLanguageServer.register_handlers`)
    and the optional integrations' (:func:`.features.register_extensions`)."""
    ls = SkillEvalLanguageServer()
    ls.register_handlers()
    features.register_extensions(ls)
    return ls
