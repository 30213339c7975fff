"""Running the rules: discovery, dispatch by scope, SE000, suppression, filtering.

``lint_paths`` is what the CLI calls; ``lint_targets`` is what the language
server calls with its own session (an overlay reader of unsaved buffers).
"""

from __future__ import annotations

import bisect
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from .config import Config, load_config
from .context import LintSession, WorkspaceContext, probe_facts_of
from .diagnostics import Diagnostic
from .markdown import parse_markdown
from .reader import FileSystemReader, Reader
from .rules import REGISTRY, Rule
from .rules.base import Scope
from .rules.files.se000_internal_error import InternalError
from .textfile import Span, TextDocument
from .workspace import Targets, absolute, discover, find_workspace_root, sorted_paths


@dataclass
class LintResult:
    """Diagnostics of one run, sorted, and the files it checked (their paths
    as strings: only how many is reported)."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    checked: set[str] = field(default_factory=set)
    sessions: list[LintSession] = field(default_factory=list)


def enabled_rules(config: Config) -> list[Rule]:
    """Instances of the registered rules that ``config`` selects."""
    return [rule() for rule in REGISTRY if config.is_enabled(rule.code)]


def lint_paths(
    paths: Sequence[Path | str],
    *,
    config: Config | None = None,
    config_path: Path | None = None,
    reader: Reader | None = None,
    overrides: dict | None = None,
    jobs: int = 1,
) -> LintResult:
    """Lint ``paths`` (files or folders), each under its own workspace root.

    ``config`` replaces config discovery; otherwise the root's config file (or
    ``config_path``) is read and ``overrides`` applied on top of it.
    ``jobs`` > 1 lints a large workspace (:data:`PARALLEL_MIN_PROBES` probes or
    more) in that many forked worker processes; the result is the same.
    Raises :class:`~skill_eval.linter.config.ConfigError` and
    :class:`FileNotFoundError` for unusable input; rule crashes never escape.
    """
    reader = reader or FileSystemReader()
    by_root: dict[Path, Targets] = {}
    whole: dict[Path, list[str] | None] = {}
    for raw in paths:
        path = absolute(raw)
        if not reader.is_file(path) and not reader.is_dir(path):
            raise FileNotFoundError(f"{raw}: no such file or folder")
        root = find_workspace_root(path)
        discovered = discover(path, reader)
        by_root.setdefault(root, Targets()).update(discovered)
        if path == root:
            whole[root] = discovered.pruned
    result = LintResult()
    for root, targets in sorted(by_root.items()):
        root_config = config or load_config(root, config_path)
        if overrides:
            root_config = root_config.with_overrides(**overrides)
        if root in whole:
            session = LintSession(root, root_config, reader, sorted_paths(targets.probes), targets.skills | targets.output_specs,
                                  pruned_folders=whole[root])
        else:
            session = LintSession(root, root_config, reader)
        result.sessions.append(session)
        if jobs > 1 and _workers_pay_off(session, targets) and _can_fork():
            diagnostics, checked = _lint_in_workers(session, targets, jobs)
        else:
            diagnostics, checked = lint_targets(session, targets)
        result.diagnostics.extend(diagnostics)
        result.checked |= checked
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


PARALLEL_MIN_PROBES = 200
"""Below this many probes one process is faster than starting workers."""


def _workers_pay_off(session: LintSession, targets: Targets) -> bool:
    """Whether to fork workers: for many probes to lint, or for a few in a
    large workspace whose probes the workspace-wide rules compare them with
    (a pre-commit run on three files of a thousand-probe workspace spends
    most of its time loading the other probes' facts)."""
    if len(targets.probes) >= PARALLEL_MIN_PROBES:
        return True
    if not targets.probes or not any(rule.uses_probe_facts for rule in enabled_rules(session.config)):
        return False
    return len(session.all_probe_paths) >= PARALLEL_MIN_PROBES


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _can_fork() -> bool:
    """Whether this platform forks (POSIX); asked without importing
    :mod:`multiprocessing` (~30 ms), which offers ``fork`` exactly there."""
    return hasattr(os, "fork")


def _fork_pool(session: LintSession, workers: int, tasks: list):
    """A pool of ``workers`` processes forked from this one, inheriting ``session``
    and ``tasks``: a task is sent to a worker as its index in ``tasks`` (pickling
    thousands of paths per task to a process that already has them cost ~0.1 s
    at 1,000 probes). Forked as :func:`_forking` describes."""
    import multiprocessing

    global _WORKER_SESSION, _WORKER_TASKS
    with _forking():
        _WORKER_SESSION, _WORKER_TASKS = session, tasks
        try:
            return multiprocessing.get_context("fork").Pool(workers)
        finally:
            _WORKER_SESSION, _WORKER_TASKS = None, []


@contextmanager
def _forking():
    """The state in which this process forks workers.

    The workers do not get this process's standard streams: in the language
    server another thread is blocked reading stdin (holding its lock, which a
    forked child would wait on forever when multiprocessing closes stdin), and
    stdout carries the protocol, which no worker may write or flush into.

    Every object that exists at the fork is frozen out of the workers' garbage
    collections (``gc.freeze``, as the ``gc`` documentation advises before a
    fork): a collection in a worker would otherwise touch, and so copy, the
    memory pages of everything it inherited.
    """
    import gc
    import sys
    import warnings

    streams = sys.stdin, sys.stdout
    sys.stdin = sys.stdout = None
    gc.freeze()
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns that forking a process with threads may
            # deadlock the child: the workers run engine code only, and the one
            # lock they could meet (stdin's) is out of their reach above.
            warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork.*")
            yield
    finally:
        gc.unfreeze()
        sys.stdin, sys.stdout = streams


def _share_tasks(session: LintSession, tasks: list, helpers: int) -> Iterator[tuple[int, object]]:
    """``(index, _lint_chunk_task(index))`` for every task, as each is done, in
    no fixed order: run by this process and ``helpers`` forked ones, taking
    tasks from one shared counter, this process from the front of ``tasks``
    and the helpers from the back (so each works through neighbouring chunks,
    largest first, when they are laid out by :func:`_guided_chunks`).

    This process is one of the workers, unlike a ``multiprocessing.Pool``'s
    parent: with two CPUs, a pool of two workers plus the parent folding in
    their results were three busy processes on two cores, and every worker
    paid its own lazy imports (markdown-it, PyYAML: ~50 ms) and SKILL.md
    parses. A helper's results are received by a thread here (a helper
    blocked on a full pipe would idle) and handed over between this process's
    own tasks. A task whose result never came (its helper died, or the task
    raised there) is run here at the end, where an error surfaces as it would
    without helpers.

    Plain ``os.fork`` and pipes, not :mod:`multiprocessing` (importing it costs
    ~30 ms of the serial start: sockets, tempfile, shutil, signal): the
    counter lives in an anonymous shared ``mmap``, guarded by a one-byte token
    in a pipe (the protocol of make's jobserver: a one-byte read or write of a
    pipe is atomic), and each helper sends its results, pickled and
    length-prefixed, down a pipe of its own. Helpers are forked as
    :func:`_forking` describes and leave with ``os._exit``.
    """
    import mmap
    import queue
    import threading

    global _WORKER_SESSION, _WORKER_TASKS
    counter = _TaskCounter(mmap.mmap(-1, 16), *os.pipe(), len(tasks))
    received: "queue.SimpleQueue" = queue.SimpleQueue()
    children: list[int] = []
    readers: list[threading.Thread] = []
    _WORKER_SESSION, _WORKER_TASKS = session, tasks
    try:
        with _forking():
            for _ in range(helpers):
                receiving, sending = os.pipe()
                pid = os.fork()
                if pid == 0:  # the helper: it never leaves this block
                    code = 1
                    try:
                        os.close(receiving)
                        _helper_main(counter, len(tasks), sending)
                        code = 0
                    finally:
                        os._exit(code)
                os.close(sending)
                children.append(pid)
                readers.append(threading.Thread(target=_receive, args=(receiving, received), daemon=True))
        for reader in readers:
            reader.start()
    except BaseException:
        _end_helpers(children)
        counter.close()
        raise
    return _shared_results(tasks, counter, received, len(readers), children)


class _TaskCounter:
    """The tasks not taken yet, shared by this process and its forked helpers:
    the first and the last index left. This process takes from the front,
    helpers from the back (:meth:`take`)."""

    def __init__(self, memory, token_read: int, token_write: int, count: int) -> None:
        self.memory = memory
        self.token_read, self.token_write = token_read, token_write
        memory[:16] = (0).to_bytes(8, "little", signed=True) + (count - 1).to_bytes(8, "little", signed=True)
        os.write(token_write, b"t")

    def take(self, front: bool) -> int | None:
        """The next task's index from the front (or back), ``None`` when none is left."""
        os.read(self.token_read, 1)  # blocks while another process holds the token
        try:
            first = int.from_bytes(self.memory[:8], "little", signed=True)
            last = int.from_bytes(self.memory[8:16], "little", signed=True)
            if first > last:
                return None
            if front:
                self.memory[:8] = (first + 1).to_bytes(8, "little", signed=True)
                return first
            self.memory[8:16] = (last - 1).to_bytes(8, "little", signed=True)
            return last
        finally:
            os.write(self.token_write, b"t")

    def close(self) -> None:
        for fd in (self.token_read, self.token_write):
            try:
                os.close(fd)
            except OSError:
                pass
        self.memory.close()


def _shared_results(tasks: list, counter: _TaskCounter, received, helpers: int, children: list[int]) -> Iterator[tuple[int, object]]:
    """The results of :func:`_share_tasks`, this process's own tasks run as the
    iteration asks for more."""
    import queue

    completed = False
    try:
        done: set[int] = set()
        finished = 0
        while True:
            while True:  # what the helpers finished meanwhile
                try:
                    item = received.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    finished += 1
                elif item[1]:
                    done.add(item[0])
                    yield item[0], item[2]
            index = counter.take(front=True)
            if index is None:
                break
            result = _lint_chunk_task(index)
            done.add(index)
            yield index, result
        while finished < helpers:
            item = received.get()
            if item is None:
                finished += 1
            elif item[1]:
                done.add(item[0])
                yield item[0], item[2]
        for index in range(len(tasks)):
            if index not in done:
                yield index, _lint_chunk_task(index)
        completed = True
    finally:
        _end_helpers(children, completed)
        counter.close()


def _end_helpers(children: list[int], completed: bool = False) -> None:
    """Reap the helpers: done by now when the run ``completed`` (each leaves
    once the counter runs out), else stopped."""
    import signal

    global _WORKER_SESSION, _WORKER_TASKS
    _WORKER_SESSION, _WORKER_TASKS = None, []
    for pid in children:
        try:
            if not completed:
                os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
        except OSError:
            pass


def _helper_main(counter: _TaskCounter, count: int, sending: int) -> None:
    """A forked helper of :func:`_share_tasks`: take tasks until none are
    left, sending ``(index, True, result)`` for each (``(index, False, None)``
    for one that raised, which the parent then runs itself)."""
    import pickle

    try:
        while True:
            index = counter.take(front=False)
            if index is None:
                break
            try:
                message = (index, True, _lint_chunk_task(index))
            except Exception:  # noqa: BLE001 - the parent redoes the task and reports
                message = (index, False, None)
            data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
            _write_all(sending, len(data).to_bytes(8, "little") + data)
            if not message[1]:
                break
    finally:
        os.close(sending)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _receive(receiving: int, received) -> None:
    """Move a helper's results into ``received`` until it is done (its end of
    the pipe closed, or it died); then ``None``."""
    import pickle

    try:
        while True:
            header = _read_exactly(receiving, 8)
            if header is None:
                break
            data = _read_exactly(receiving, int.from_bytes(header, "little"))
            if data is None:
                break
            received.put(pickle.loads(data))
    except OSError:
        pass
    finally:
        os.close(receiving)
        received.put(None)


def _read_exactly(fd: int, size: int) -> bytes | None:
    """``size`` bytes from ``fd``, or ``None`` at the end of the stream."""
    parts = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


_WORKER_SESSION: LintSession | None = None
"""The session a forked worker inherits from the parent (set just before forking)."""

_WORKER_TASKS: list[tuple[Targets, frozenset, Sequence]] = []
"""The tasks a forked worker inherits: ``(targets, scopes, rule codes)`` for
:func:`_lint_probes_task`; ``(targets, scopes, probe paths whose facts to
compute)`` for :func:`_lint_chunk_task`."""


def _lint_probes_task(index: int) -> tuple[int, list[Diagnostic]]:
    """Task ``index`` of :data:`_WORKER_TASKS` for :func:`lint_probes_in_workers`:
    the index (results arrive out of order) and the chunk's diagnostics under
    the given rules."""
    targets, scopes, codes = _WORKER_TASKS[index]
    rules = [rule for rule in enabled_rules(_WORKER_SESSION.config) if rule.code in codes]
    return index, lint_targets(_WORKER_SESSION, targets, rules, scopes=scopes)[0]


def _lint_in_workers(session: LintSession, targets: Targets, jobs: int) -> tuple[list[Diagnostic], set[str]]:
    """Lint ``targets`` in this process and ``jobs`` - 1 forked helpers
    (:func:`_share_tasks`), with the same result as :func:`lint_targets`.

    Map, then reduce. The workspace's probes are cut into contiguous chunks
    (neighbours share a SKILL.md, so each worker parses few skills), largest
    first (:func:`_guided_chunks`); each SKILL.md and output-spec.md is
    checked in the chunk holding the first probe below its folder (the probes
    its checks read are loaded there anyway). A worker lints the probes,
    skills and specs of its chunk that are among ``targets``, and computes the
    :meth:`~skill_eval.linter.rules.base.Rule.probe_facts` of all its probes
    for the workspace-wide rules that compare probes through them (reused
    scenarios, duplicate ids, erased cases): the linted probes are compared
    with every probe of the workspace, so a run on three files of a large
    workspace is mostly this. This process folds the facts in as each chunk
    arrives and runs the workspace-wide rules over them at the end: no probe
    is loaded twice, where a task per workspace-wide rule loaded every probe
    (and parsed every SKILL.md) once more, ~0.5 s of CPU at 1,000 probes.

    Forking copies this process's imported modules, so a helper starts in
    milliseconds; its results come back pickled and are merged, deduped and
    sorted here.
    """
    rules = enabled_rules(session.config)
    wide = [rule for rule in rules if Scope.WORKSPACE in rule.scopes()]
    by_code = {rule.code: rule for rule in wide if rule.uses_probe_facts}
    # every probe of the workspace when facts are wanted: the linted ones are compared with all
    probes = sorted_paths(set(session.all_probe_paths) | targets.probes if by_code else targets.probes)
    tasks = _chunk_tasks(probes, targets, jobs, facts_wanted=bool(by_code))
    index_of = {str(path): number for number, path in enumerate(probes)}
    diagnostics: list[Diagnostic] = []
    seen: set[str] = set()
    facts: dict[str, dict[Path, object]] = {code: {} for code in by_code}
    refs: set[str] = set()
    results = _share_tasks(session, tasks, jobs - 1)
    try:
        for rule in wide:  # while the helpers start
            _ahead_of_check(rule.prepare, session)
        for _index, (found, checked_here, chunk_facts, refs_here) in results:  # as each chunk is done
            diagnostics.extend(found)
            seen.update(checked_here)
            for code, pairs in chunk_facts.items():
                pairs = [(probes[index_of[path]], value) for path, value in pairs]
                facts[code].update(pairs)
                _ahead_of_check(by_code[code].absorb_facts, pairs, len(probes))
            refs.update(refs_here)
    finally:
        results.close()
    fixture_paths = set(targets.skills) | set(targets.output_specs) | set(map(Path, refs))
    diagnostics.extend(_workspace_diagnostics(session, sorted_paths(targets.probes), wide, facts, fixture_paths))
    diagnostics.sort(key=Diagnostic.sort_key)
    return _dedupe(diagnostics), seen


def _ahead_of_check(step, *args) -> None:
    """Run ``step`` (a rule's ``prepare`` or ``absorb_facts``), which only gets
    ahead of work its ``check`` would do anyway: if it crashes, ``check`` does
    that work, and reports the crash as SE000 if it recurs there."""
    try:
        step(*args)
    except Exception:  # noqa: BLE001, S110 - check() redoes it and reports a crash
        pass


def _chunk_tasks(probes: list[Path], targets: Targets, jobs: int, facts_wanted: bool) -> list[tuple]:
    """The tasks of :func:`_lint_in_workers`, one per chunk of ``probes``
    (:func:`_guided_chunks`): ``(what to lint, scopes, probes whose facts to
    compute)``. A chunk lints its probes that are among ``targets``, and the
    SKILL.md/output-spec files of ``targets`` whose folder holds its first
    probe; a file with no probe below goes to a last task of its own."""
    bounds = _guided_chunks(len(probes), jobs)
    chunks = [Targets(probes=targets.probes.intersection(probes[start:end])) for start, end in bounds]
    chunk_of = [number for number, (start, end) in enumerate(bounds) for _ in range(start, end)]
    by_text = sorted((str(path), number) for number, path in enumerate(probes))
    leftover = Targets()
    for path in sorted_paths(targets.skills | targets.output_specs):
        folder = str(path.parent).rstrip(os.sep) + os.sep
        first = bisect.bisect_left(by_text, (folder,))
        below = first < len(by_text) and by_text[first][0].startswith(folder)
        group = chunks[chunk_of[by_text[first][1]]] if below else leftover
        (group.skills if path in targets.skills else group.output_specs).add(path)
    tasks = [(chunk, _LOCAL_SCOPES, probes[start:end] if facts_wanted else ()) for chunk, (start, end) in zip(chunks, bounds)]
    if leftover.skills or leftover.output_specs:
        tasks.append((leftover, _LOCAL_SCOPES, ()))
    return tasks


_LOCAL_SCOPES = frozenset({Scope.PROBE, Scope.SKILL, Scope.OUTPUT_SPEC})


def _guided_chunks(count: int, jobs: int, smallest: int = 16) -> list[tuple[int, int]]:
    """``(start, end)`` of contiguous chunks of ``count`` probes for ``jobs``
    workers, in probe order, largest at both ends and smallest in the middle
    ("guided" scheduling from two ends: :func:`_share_tasks`'s first worker
    takes chunks from the front, the others from the back). Chunk sizes are
    the remaining probes over ``2 * jobs``, down to ``smallest``, dealt to the
    two ends in turn. Big chunks keep per-task costs low; small ones last keep
    one worker from finishing a long chunk while the others wait (with equal
    chunks of an eighth of the probes that wait was up to a chunk's length,
    ~0.1 s at 1,000 probes); from two ends each worker's chunks are
    neighbours, so a SKILL.md is rarely parsed by two workers."""
    import math

    sizes = []
    remaining = count
    while remaining > 0:
        size = min(remaining, max(smallest, math.ceil(remaining / (2 * jobs))))
        sizes.append(size)
        remaining -= size
    front, back = sizes[0::2], sizes[1::2]
    bounds = []
    start = 0
    for size in front + back[::-1]:
        bounds.append((start, start + size))
        start += size
    return bounds


def _lint_chunk_task(index: int) -> tuple[list[Diagnostic], list[str], dict[str, list], list[str]]:
    """Chunk ``index`` of :data:`_WORKER_TASKS` for :func:`_lint_in_workers`: its
    diagnostics, the files it checked, its probes' facts for the workspace-wide
    rules (by code) and the SKILL.md/output-spec paths its probes name (paths
    as strings: cheaper to pickle)."""
    session = _WORKER_SESSION
    targets, scopes, facts_for = _WORKER_TASKS[index]
    rules = enabled_rules(session.config)
    diagnostics, checked = lint_targets(session, targets, rules, scopes=scopes)
    compared = [session.probe(path) for path in facts_for]
    errors: list[Diagnostic] = []
    facts = {
        rule.code: [(str(probe.json_path), probe_facts_of(rule, probe, errors)) for probe in compared]
        for rule in rules if Scope.WORKSPACE in rule.scopes() and rule.uses_probe_facts
    }
    diagnostics.extend(d for d in errors if _is_reported(d, session, set()))
    probes = [session.probe(path) for path in sorted_paths(targets.probes)]
    refs = [str(ref) for probe in probes for ref in (probe.skill_ref, probe.output_spec_ref) if isinstance(ref, Path)]
    return diagnostics, list(checked), facts, refs


def _workspace_diagnostics(
    session: LintSession, probe_paths: list[Path], rules: Sequence[Rule], facts: dict, fixture_paths: set[Path]
) -> list[Diagnostic]:
    """The workspace-scope findings of ``rules`` for the linted ``probe_paths``,
    over the facts the workers computed (a rule without facts reads the probes
    here), filtered as :func:`lint_targets` filters."""
    workspace = WorkspaceContext(session, [session.probe(path) for path in probe_paths], facts)
    found: list[Diagnostic] = []
    for rule in rules:
        found.extend(_run(rule, workspace, session.root, None))
    found.extend(workspace.fact_errors)
    return [d for d in found if _is_reported(d, session, fixture_paths)]


def lint_probes_in_workers(
    session: LintSession,
    probe_paths: Sequence[Path],
    rules: Sequence[Rule],
    workers: int,
    chunk: int = 64,
) -> Iterator[tuple[list[Path], list[Diagnostic]]]:
    """Run ``rules``' probe checks over ``probe_paths`` in ``workers`` forked
    processes; iterate ``(chunk of probe paths, their diagnostics)`` as each
    chunk finishes (in no fixed order), for a caller that reports progress.

    The workers start at once: the caller may do other work (the language
    server runs the workspace-wide rules) before it iterates. Each chunk's
    diagnostics are exactly what :func:`lint_targets` gives for it. The
    workers inherit ``session`` (its reader, unsaved buffers included) as it is
    at the call; what they load stays in them, so the caller's session is not
    warmed (nor its memory grown). With ``workers`` = 0, fewer than
    :data:`PARALLEL_MIN_PROBES` probes or no ``fork``, the chunks are linted
    in this process, lazily.
    """
    paths = sorted_paths(probe_paths)
    chunks = [paths[i : i + chunk] for i in range(0, len(paths), chunk)]
    if workers < 1 or len(paths) < PARALLEL_MIN_PROBES or not _can_fork():
        return ((part, lint_targets(session, Targets(probes=set(part)), rules, scopes=_PROBE_SCOPE)[0]) for part in chunks)
    codes = tuple(rule.code for rule in rules)
    tasks = [(Targets(probes=set(part)), _PROBE_SCOPE, codes) for part in chunks]
    pool = _fork_pool(session, workers, tasks)
    results = pool.imap_unordered(_lint_probes_task, range(len(tasks)))
    return PoolResults(pool, results, chunks)


_PROBE_SCOPE = frozenset({Scope.PROBE})


class PoolResults:
    """What :func:`lint_probes_in_workers` returns when it forked workers: their
    results by chunk; the pool ends with the iteration or with :meth:`close`
    (a caller that stops early)."""

    def __init__(self, pool, results, chunks: list[list[Path]]) -> None:
        self._pool = pool
        self._results = results
        self._chunks = chunks

    def __iter__(self) -> "PoolResults":
        return self

    def __next__(self) -> tuple[list[Path], list[Diagnostic]]:
        try:
            index, diagnostics = next(self._results)
        except BaseException:
            self.close()
            raise
        return self._chunks[index], diagnostics

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None


def lint_targets(
    session: LintSession,
    targets: Targets,
    rules: Sequence[Rule] | None = None,
    scopes: frozenset[Scope] | None = None,
) -> tuple[list[Diagnostic], set[str]]:
    """Run ``rules`` (default: the enabled ones) over ``targets`` in ``session``;
    ``scopes``, when given, limits the run to rules' checks of those scopes."""
    rules = enabled_rules(session.config) if rules is None else rules
    probes = [session.probe(path) for path in sorted_paths(targets.probes)]
    skills = [session.skill(path) for path in sorted_paths(targets.skills)]
    specs = [session.output_spec(path) for path in sorted_paths(targets.output_specs)]
    diagnostics: list[Diagnostic] = []
    workspace = WorkspaceContext(session, probes)
    for rule in rules:
        for scope in rule.scopes():
            if scopes is not None and scope not in scopes:
                continue
            if scope is Scope.PROBE:
                for probe in probes:
                    diagnostics.extend(_run(rule, probe, probe.json_path, probe.folder))
            elif scope is Scope.SKILL:
                for skill in skills:
                    diagnostics.extend(_run(rule, skill, skill.path, None))
            elif scope is Scope.OUTPUT_SPEC:
                for spec in specs:
                    diagnostics.extend(_run(rule, spec, spec.path, None))
            elif scope is Scope.WORKSPACE and probes:
                diagnostics.extend(_run(rule, workspace, session.root, None))
    diagnostics.extend(workspace.fact_errors)
    checked = {str(p.json_path) for p in probes} | {str(s.path) for s in skills} | {str(s.path) for s in specs}
    for probe in probes:
        for ref in (probe.artifact_ref,):
            if isinstance(ref, Path):
                checked.add(str(ref))
    fixture_paths: set[Path] | None = None
    if any(d.path.suffix.lower() == ".md" and d.path.name not in ("SKILL.md", "output-spec.md") for d in diagnostics):
        # Only a finding in a custom-named .md can need this set (is that file a
        # skill or spec, which honours directives, or an artifact, which does not?).
        fixture_paths = {s.path for s in skills} | {s.path for s in specs}
        for probe in probes:
            fixture_paths.update(ref for ref in (probe.skill_ref, probe.output_spec_ref) if isinstance(ref, Path))
    kept = [d for d in diagnostics if _is_reported(d, session, fixture_paths or set())]
    kept.sort(key=Diagnostic.sort_key)
    return _dedupe(kept), checked


def _run(rule: Rule, context, path: Path, probe_folder: Path | None) -> list[Diagnostic]:
    """``rule.check(context)``, with any crash turned into SE000 for ``path``."""
    try:
        found = list(rule.check(context))
    except Exception as error:  # noqa: BLE001 - a crashing rule must not stop the run
        import traceback

        return [InternalError.from_exception(rule, error, path, traceback.format_exc())]
    if found and probe_folder is not None:
        found = [d if d.probe is not None else _with_probe(d, probe_folder) for d in found]
    return found


def _with_probe(diagnostic: Diagnostic, folder: Path) -> Diagnostic:
    return diagnostic._replace(probe=folder)


def _is_reported(diagnostic: Diagnostic, session: LintSession, fixture_paths: set[Path]) -> bool:
    """Apply config (select/ignore/per-file-ignores) and suppressions."""
    config = session.config
    if not config.is_enabled(diagnostic.code, diagnostic.path, session.root):
        return False
    if diagnostic.probe is not None:
        probe = session.probe(diagnostic.probe / "probe.json")
        if diagnostic.code in probe.disabled_codes:
            return False
    if diagnostic.code != "SE000" and session.takes_directives(diagnostic.path, fixture_paths):
        loaded = session.load(diagnostic.path)
        if isinstance(loaded, TextDocument) and "skill-eval" in loaded.text:
            if parse_markdown(loaded.text).is_suppressed(diagnostic.code, diagnostic.start.line):
                return False
    return True


def _dedupe(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    seen = set()
    unique = []
    for diagnostic in diagnostics:
        key = (diagnostic.code, diagnostic.span, diagnostic.message)
        if key not in seen:
            seen.add(key)
            unique.append(diagnostic)
    return unique


__all__ = ["LintResult", "lint_paths", "lint_targets", "lint_probes_in_workers", "enabled_rules", "Span"]
