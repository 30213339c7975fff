"""``skill-eval freeze``: record the content hashes of chosen cases.

The seed: "Freeze the chosen development cases before any separately
authorized comparison." ``evals/frozen.json`` beside the skill lists, per
probe id and version, the SHA-256 of probe.json and of the artifact. SE502
(frozen-case-edited) reports a frozen case whose files no longer match; the
way forward is a new version, never an edit of the frozen one.

Format (``schema`` 1)::

    {
      "schema": 1,
      "cases": [
        {"id": "euphemized-coverage", "version": 1,
         "probe": "probes/euphemized-coverage/probe.json",
         "probe_sha256": "…", "artifact_sha256": "…",
         "frozen_at": "2025-01-01T12:00:00.000Z"}
      ]
    }

``probe`` is relative to the skill's ``evals/`` folder. Freezing a case that is
already frozen with the same hashes changes nothing; with other hashes it is
refused (bump ``version`` instead).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from skill_eval.linter.context import RECORDS_MAX_SIZE, FileProblem
from skill_eval.linter.run_records import frozen_path, read_frozen

from .executor import now_iso
from .probes import Probe, ProbeError
from .records import write_json_atomic

SCHEMA = 1


@dataclass
class FreezeResult:
    path: Path
    added: list[str]
    unchanged: list[str]


def _read_frozen_file(path: Path, probe: Probe) -> dict:
    """The suite's frozen.json as data (a new one when there is none), read
    through the engine's safe read: a frozen.json (or an ``evals/``) that
    leads out of the workspace, a FIFO or a file over the records' size limit
    is a :class:`ProbeError` naming it; nothing outside the workspace is read
    or, later, written."""
    session = probe.session
    if session is None:
        raise ProbeError(f"{path}: cannot read frozen.json: the probe was not read from a workspace")
    where = session.resolve(path.parent, path.name, remember=False)
    if isinstance(where, FileProblem):
        raise ProbeError(f"{path}: cannot use frozen.json: {where.message}; {where.fix}")
    raw = session.read_safely(path, max(session.config.max_file_size, RECORDS_MAX_SIZE), resolved=True)
    if isinstance(raw, FileProblem):
        if raw.kind == "missing":
            return {"schema": SCHEMA, "cases": []}
        raise ProbeError(f"{path}: cannot read frozen.json: {raw.message}; {raw.fix}")
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ProbeError(f"{path}: cannot read frozen.json ({error}); restore it from version control") from None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise ProbeError(f"{path}: frozen.json has no `cases` list; restore it from version control")
    return data


def freeze(probes: list[Probe]) -> list[FreezeResult]:
    """Add ``probes`` to their suites' frozen.json files; refuse conflicting entries."""
    by_file: dict[Path, list[Probe]] = {}
    for probe in probes:
        by_file.setdefault(frozen_path(probe.suite), []).append(probe)
    conflicts = []
    plans = []
    for path, group in sorted(by_file.items()):
        data = _read_frozen_file(path, group[0])
        existing = read_frozen(path, json.dumps(data).encode())
        added, unchanged = [], []
        for probe in group:
            name = f"{probe.probe_id} v{probe.version}"
            case = existing.get((probe.probe_id, probe.version))
            if case is not None:
                if case.get("probe_sha256") == probe.probe_sha256 and case.get("artifact_sha256") == probe.artifact_sha256:
                    unchanged.append(name)
                else:
                    conflicts.append(f"{probe.json_path}: {name} is already frozen with other content; a new variant "
                                     "is a new version: bump \"version\" in probe.json (or restore the frozen files)")
                continue
            data["cases"].append({
                "id": probe.probe_id,
                "version": probe.version,
                "probe": probe.json_path.relative_to(path.parent).as_posix()
                if path.parent in probe.json_path.parents else str(probe.json_path),
                "probe_sha256": probe.probe_sha256,
                "artifact_sha256": probe.artifact_sha256,
                "frozen_at": now_iso(),
            })
            existing[(probe.probe_id, probe.version)] = data["cases"][-1]
            added.append(name)
        plans.append((path, data, FreezeResult(path, added, unchanged)))
    if conflicts:
        raise ProbeError("\n".join(conflicts))
    results = []
    for path, data, result in plans:
        if result.added:
            data["cases"].sort(key=lambda c: (str(c.get("id")), c.get("version", 0)))
            write_json_atomic(path, data)
        results.append(result)
    return results
