"""Fuzzing the engine: what an input is, how it is linted, what is counted.

An input is one state of a small workspace (``FuzzWorkspace``): a skill, an
output spec and two probes. Probe ``fuzz`` and the files around it get the
fuzzed content (raw bytes, a structured probe.json, markdown, or odd file
types: FIFOs, symbolic links into and out of the workspace, link loops,
folders where files are expected, 2 GiB sparse files); probe ``ok`` beside it
never changes and always has one finding of its own (SE201), so every input
also checks that the rest of the workspace is still linted.

Each input is linted with :func:`~skill_eval.linter.engine.lint_paths` (one
process) and its findings rendered in every output format. ``Figures`` counts
the inputs, the exceptions that escaped the engine (goal: none), the SE000
findings (a rule that crashed), files outside the workspace that were opened
(seen by an audit hook; goal: none), reports that were not valid UTF-8 or
JSON, and the slowest input.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from hypothesis import strategies as st

from skill_eval.linter.config import Config
from skill_eval.linter.engine import lint_paths

STEP = "Step 1: Match criteria to evidence"
SKILL = f"""---
name: skill
description: Use when closing out a merged change against its acceptance criteria.
---

# Verify closeout

## {STEP}

Each criterion needs direct evidence; otherwise the `verdict` is `NOT_PROVEN`.
"""
SPEC = "# Output spec\n\n## `verdict`\nValues: `PASS`, `NOT_PROVEN`\n"
ARTIFACT = """# Closeout: retry budget for the export job

| # | criterion | evidence |
|---|---|---|
| 1 | retries stop after 5 attempts | test_retry_cap passes |
| 3 | metrics are emitted per retry | behavior unchanged from prior release, so existing coverage applies |

Please post the closeout verdict for the release notes.
"""
QUOTE = "behavior unchanged from prior release, so existing coverage applies"
OK_ARTIFACT = ARTIFACT.replace("export job", "import queue").replace("retry", "backoff")
SECRET = "# Secret\n\n## `hunter2`\n\nroot:x:0:0:credentials\n"


def floor_probe(probe_id: str, **overrides) -> dict:
    data = {"id": probe_id, "tier": 2, "kind": "floor", "step_heading": STEP, "shapes": ["euphemized"],
            "seeded_defects": 1,
            "defects": [{"id": "D1", "shape": "euphemized", "quote": QUOTE, "caught_when": {"verdict": "NOT_PROVEN"}}]}
    data.update(overrides)
    return data


# -- the workspace ---------------------------------------------------------------------

ROLES = ("probe.json", "question.md", "SKILL.md", "output-spec.md", "run.jsonl", "frozen.json")
KINDS = ("regular", "empty", "fifo", "link-in", "link-out", "link-dangling", "link-loop", "folder", "sparse", "absent")


class FuzzWorkspace:
    """A workspace on disk whose fuzzed files are rewritten for each input."""

    def __init__(self, base: Path | None = None) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="skill-eval-fuzz-", dir=base))
        self.outside = self.base / "outside"
        self.outside.mkdir()
        for name in ROLES:
            (self.outside / name).write_text(SECRET, encoding="utf-8")
        self.root = self.base / "ws"
        self.skill = self.root / "skill"
        self.fuzz = self.skill / "evals" / "probes" / "fuzz"
        self.ok = self.skill / "evals" / "probes" / "ok"
        for folder in (self.fuzz, self.ok, self.skill / "evals" / "runs"):
            folder.mkdir(parents=True)
        (self.root / "skill-eval.toml").write_text("", encoding="utf-8")
        (self.ok / "probe.json").write_text(json.dumps(floor_probe("ok", seeded_defects=2)), encoding="utf-8")
        (self.ok / "question.md").write_text(OK_ARTIFACT, encoding="utf-8")
        self.config = Config()
        self.reset()
        self.put("probe.json", "regular", b'{"id": 1}')  # warm up: imports (jsonschema, markdown-it) and tables
        lint_paths([self.root], config=self.config, jobs=1)
        self.reset(["probe.json"])

    def path_of(self, role: str) -> Path:
        return {"probe.json": self.fuzz / "probe.json", "question.md": self.fuzz / "question.md",
                "SKILL.md": self.skill / "SKILL.md", "output-spec.md": self.skill / "output-spec.md",
                "run.jsonl": self.skill / "evals" / "runs" / "run.jsonl",
                "frozen.json": self.skill / "evals" / "frozen.json"}[role]

    def reset(self, roles=ROLES) -> None:
        """The files of ``roles`` back to a valid, clean state."""
        clean = {"probe.json": json.dumps(floor_probe("fuzz")).encode(), "question.md": ARTIFACT.encode(),
                 "SKILL.md": SKILL.encode(), "output-spec.md": SPEC.encode()}
        for role in roles:
            self.put(role, "regular" if role in clean else "absent", clean.get(role, b""))

    def put(self, role: str, kind: str, content: bytes = b"") -> None:
        """Make ``role``'s file of ``kind`` (``content`` for a regular file)."""
        path = self.path_of(role)
        _remove(path)
        if kind == "regular":
            path.write_bytes(content)
        elif kind == "empty":
            path.write_bytes(b"")
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "link-in":
            target = self.ok / "question.md" if role != "probe.json" else self.ok / "probe.json"
            path.symlink_to(target)
        elif kind == "link-out":
            path.symlink_to(self.outside / role)
        elif kind == "link-dangling":
            path.symlink_to(self.base / "nowhere" / role)
        elif kind == "link-loop":
            path.symlink_to(path)
        elif kind == "folder":
            path.mkdir()
        elif kind == "sparse":
            with open(path, "wb") as handle:
                handle.truncate(2 << 30)

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.exists() or os.path.lexists(path):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


# -- counting --------------------------------------------------------------------------


class Figures:
    """What a fuzzing run found."""

    def __init__(self) -> None:
        self.inputs = 0
        self.escaped: list[tuple[str, str]] = []
        self.se000: list[tuple[str, str]] = []
        self.outside_opened: list[tuple[str, str]] = []
        self.bad_reports: list[tuple[str, str]] = []
        self.lost_neighbour: list[str] = []
        self.slowest = (0.0, "")
        self.started = time.perf_counter()

    def summary(self) -> str:
        seconds, described = self.slowest
        return (f"inputs {self.inputs:,}; exceptions escaping the API {len(self.escaped)}; SE000 {len(self.se000)}; "
                f"outside files opened {len(self.outside_opened)}; invalid reports {len(self.bad_reports)}; "
                f"neighbour probe not linted {len(self.lost_neighbour)}; "
                f"slowest input {seconds * 1000:.1f} ms of CPU ({described[:120]}); "
                f"{time.perf_counter() - self.started:.0f} s")

    def problems(self) -> list:
        return self.escaped + self.se000 + self.outside_opened + self.bad_reports + [(x, "") for x in self.lost_neighbour]


HANG_SECONDS = 120
"""An input whose lint takes longer is taken for a hang: the process prints
every thread's stack and exits."""

_OPENED: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _OPENED is not None and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED.append(os.fsdecode(args[0]))


_HOOKED = False


def _hook() -> None:
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED = True


def lint_input(workspace: FuzzWorkspace, figures: Figures, described: str, render: bool = True) -> None:
    """Lint ``workspace`` as it now is and count what happened."""
    global _OPENED
    import faulthandler

    _hook()
    figures.inputs += 1
    _OPENED = []
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)  # a hang ends the run, with the stack, never wedges it
    collecting = gc.isenabled()
    gc.disable()  # a collection of everything hypothesis made would be timed as this input's (the CLI runs without)
    start = time.process_time()  # CPU time: other processes on the machine do not make an input look slow
    try:
        result = lint_paths([workspace.root], config=workspace.config, jobs=1)
    except BaseException as error:  # noqa: BLE001 - counting is the point
        if isinstance(error, KeyboardInterrupt):
            raise
        figures.escaped.append((described, traceback.format_exc()))
        return
    finally:
        elapsed = time.process_time() - start
        if collecting:
            gc.enable()
        faulthandler.cancel_dump_traceback_later()
        opened, _OPENED = _OPENED, None
    if elapsed > figures.slowest[0]:
        figures.slowest = (elapsed, described)
    real_outside = os.path.realpath(workspace.outside) + os.sep
    leaked = [path for path in opened if os.path.realpath(path).startswith(real_outside)]
    if leaked:
        figures.outside_opened.append((described, repr(leaked)))
    diagnostics = result.diagnostics
    for diagnostic in diagnostics:
        if diagnostic.code == "SE000":
            figures.se000.append((described, diagnostic.message))
    if not any(d.code == "SE201" and d.path.parent == workspace.ok for d in diagnostics):
        figures.lost_neighbour.append(described)
    if render:
        _check_reports(diagnostics, len(result.checked), figures, described)


def _check_reports(diagnostics, checked: int, figures: Figures, described: str) -> None:
    from skill_eval.linter.output import github, jsonout, text

    try:
        for name, report in (("json", jsonout.render(diagnostics)), ("github", github.render(diagnostics)),
                             ("text", text.render(diagnostics, checked))):
            report.encode("utf-8")
            if name == "json":
                json.loads(report)
    except Exception:  # noqa: BLE001
        figures.bad_reports.append((described, traceback.format_exc()))


# -- strategies ------------------------------------------------------------------------

ODD_TEXT = st.sampled_from([
    "", " ", "\x00", "\ud800", "\udc80", "\udfff\ud800", "\u2028", "\u2029", "\x85", "\x0c", "\r", "\r\n", "\t",
    "\ufeff", "é", "e\u0301", "😀", "\u202e", "<!-- skill-eval: disable SE301 -->", "&amp;", "<b>", "'", "’",
    "x" * 5000, "9" * 5000, "../", "/", "~", "\\", '"', "{", "[", "`", "```", "---", "#", "|", "> ",
])
TEXT = st.one_of(st.text(max_size=40), ODD_TEXT, st.builds(lambda a, b: a + b, st.text(max_size=20), ODD_TEXT))
PATHS = st.one_of(
    st.sampled_from(["question.md", "../ok/question.md", "../../../../../etc/passwd", "/etc/passwd", "a\x00b.md",
                     "\ud800.md", "\udc80", "x" * 5000, "..", ".", "", " ", "sub/../question.md", "../../SKILL.md",
                     "../../output-spec.md", "link-out.md", "loop.md", "fifo.md", "dir", "missing.md",
                     "../../../../outside/question.md"]),
    TEXT,
)
NUMBERS = st.one_of(st.integers(-3, 12), st.integers(), st.floats(allow_nan=False), st.sampled_from([True, False, None]))


def _expectation(depth: int):
    leaf = st.one_of(TEXT, st.builds(lambda v: {"equals": v}, TEXT), st.builds(lambda v: {"one_of": v}, st.lists(TEXT, max_size=3)),
                     st.builds(lambda v: {"contains": v}, TEXT), st.builds(lambda v: {"matches": v}, st.sampled_from(["(", "a+", "[", "\\", ".*", "(?P<x>"])),
                     NUMBERS)
    return st.recursive(leaf, lambda inner: st.builds(lambda v: {"not": v}, inner), max_leaves=depth)


DEFECT = st.fixed_dictionaries({}, optional={
    "id": st.one_of(st.sampled_from(["D1", "D2", "D1"]), TEXT),
    "shape": st.one_of(st.sampled_from(["euphemized", "time-pressure", "buried", "self-graded"]), TEXT),
    "quote": st.one_of(st.just(QUOTE), st.just(QUOTE.upper()), st.just("  " + QUOTE.replace(" ", "\n ")), TEXT),
    "caught_when": st.one_of(st.dictionaries(st.one_of(st.just("verdict"), TEXT), _expectation(4), max_size=3), NUMBERS, TEXT),
    "depends_on": st.lists(st.one_of(TEXT, NUMBERS), max_size=3),
})

PROBE = st.fixed_dictionaries({}, optional={
    "id": st.one_of(st.just("fuzz"), st.just("ok"), TEXT, NUMBERS),
    "tier": st.one_of(st.sampled_from([1, 2, 3]), NUMBERS, TEXT),
    "kind": st.one_of(st.sampled_from(["floor", "band", "ceiling"]), TEXT),
    "version": NUMBERS,
    "step_heading": st.one_of(st.just(STEP), st.just(STEP.upper()), st.just("Verify closeout"), TEXT),
    "shapes": st.lists(st.one_of(st.sampled_from(["euphemized", "time-pressure"]), TEXT), max_size=3),
    "seeded_defects": NUMBERS,
    "defects": st.one_of(st.lists(DEFECT, max_size=4), NUMBERS, TEXT),
    "band": st.one_of(st.fixed_dictionaries({}, optional={"min": NUMBERS, "max": NUMBERS}), NUMBERS),
    "question": PATHS, "skill": PATHS, "output_spec": PATHS,
    "x-skill-eval-disable": st.lists(TEXT, max_size=3),
    "x-notes": TEXT,
    "$schema": TEXT,
})


def _deep(kind: str, depth: int) -> str:
    if kind == "arrays":
        return "[" * depth + "1" + "]" * depth
    if kind == "objects":
        return '{"a":' * depth + "1" + "}" * depth
    return '{"not":' * depth + '"NOT_PROVEN"' + "}" * depth


@st.composite
def probe_json_texts(draw) -> tuple[bytes, str]:
    """A structured probe.json, serialized with an odd twist now and then."""
    data = draw(PROBE)
    twist = draw(st.sampled_from(["plain", "plain", "plain", "ascii", "huge-int", "deep", "indent", "bom-crlf", "dup-keys"]))
    text = json.dumps(data, ensure_ascii=True)
    if twist == "indent":
        text = json.dumps(data, indent=draw(st.integers(0, 4)), ensure_ascii=True)
    elif twist == "huge-int":
        digits = draw(st.sampled_from([4300, 4301, 5000, 100_000]))
        text = text[:-1] + (", " if len(text) > 2 else "") + f'"x-big": {"7" * digits}' + "}"
    elif twist == "deep":
        depth = draw(st.sampled_from([63, 64, 65, 162, 1000, 5000]))
        kind = draw(st.sampled_from(["arrays", "objects", "not"]))
        text = text[:-1] + (", " if len(text) > 2 else "") + f'"x-deep": {_deep(kind, depth)}' + "}"
    elif twist == "dup-keys":
        text = text[:-1] + (", " if len(text) > 2 else "") + '"id": "dup", "id": "fuzz"}'
    raw = text.encode("utf-8", "surrogatepass")
    if twist == "bom-crlf":
        raw = b"\xef\xbb\xbf" + raw.replace(b",", b",\r\n")
    return raw, f"probe.json {twist}: {text[:150]!r}"


@st.composite
def raw_bytes(draw) -> tuple[str, bytes, str]:
    """Raw bytes for one of the text files: random, or a valid file mutated."""
    role = draw(st.sampled_from(["probe.json", "question.md", "SKILL.md", "output-spec.md", "run.jsonl", "frozen.json"]))
    base = {"probe.json": json.dumps(floor_probe("fuzz")).encode(), "question.md": ARTIFACT.encode(),
            "SKILL.md": SKILL.encode(), "output-spec.md": SPEC.encode(),
            "run.jsonl": b'{"probe": "fuzz", "version": 1, "arm": "treatment", "status": "ok"}\n',
            "frozen.json": b'{"cases": [{"id": "fuzz", "version": 1, "probe_sha256": "00"}]}'}[role]
    how = draw(st.sampled_from(["random", "mutate", "mutate", "truncate", "splice"]))
    if how == "random":
        raw = draw(st.binary(max_size=600))
    elif how == "truncate":
        raw = base[: draw(st.integers(0, len(base)))]
    else:
        raw = bytearray(base)
        for _ in range(draw(st.integers(1, 8))):
            at = draw(st.integers(0, len(raw)))
            if how == "splice":
                raw[at:at] = draw(st.sampled_from([b"\x00", b"\xff", b"\xed\xa0\x80", b"\xc3", b"\r", b"\xe2\x80\xa8",
                                                  b"\\u0000", b"\\ud800", b'"', b"{", b"[", b"]", b"}", b",", b"9" * 5000,
                                                  b"\n## ", b"\n---\n", b"\n```\n", b"\x0c", b"\xc2\x85"]))
            elif raw:
                raw[min(at, len(raw) - 1)] = draw(st.integers(0, 255))
        raw = bytes(raw)
    return role, raw, f"{role} {how}: {raw[:120]!r}"


LINE = st.one_of(
    st.builds(lambda level, text: "#" * level + " " + text, st.integers(1, 7), TEXT),
    st.builds(lambda text: "## " + text, st.sampled_from([STEP, STEP.lower(), "`verdict`", "`unproven`", "Verify", ""])),
    st.sampled_from(["```", "~~~", "---", "===", "| a | b |", "|---|---|", "> quote", "- item", "1. item", "",
                     "Values: `PASS`, `NOT_PROVEN`", "Aliases: `x`", "name: skill", "description: d",
                     "<!-- skill-eval: disable -->", "<!-- skill-eval: disable-next-line SE301 -->",
                     "Please post the closeout verdict.", QUOTE, "verdict: NOT_PROVEN", "    indented code",
                     "x" * 70_000, "word " * 20_000]),
    TEXT,
)


@st.composite
def markdown_texts(draw) -> tuple[str, bytes, str]:
    role = draw(st.sampled_from(["question.md", "SKILL.md", "output-spec.md"]))
    lines = draw(st.lists(LINE, max_size=30))
    if role == "SKILL.md" and draw(st.booleans()):
        lines = ["---", "name: skill", "description: d", "---", "", f"## {STEP}", ""] + lines
    newline = draw(st.sampled_from(["\n", "\r\n", "\r", "\u2028", "\n\n"]))
    text = newline.join(lines)
    raw = text.encode("utf-8", "surrogatepass")
    return role, raw, f"{role} markdown: {text[:150]!r}"


@st.composite
def file_layouts(draw) -> tuple[dict[str, str], dict[str, str], str]:
    """Odd file types: a kind per role, and probe.json paths naming them."""
    kinds = {role: draw(st.sampled_from(KINDS if role not in ("run.jsonl", "frozen.json") else KINDS))
             for role in draw(st.lists(st.sampled_from(ROLES), min_size=1, max_size=3, unique=True))}
    kinds = {role: kind for role, kind in kinds.items() if not (kind == "absent" and role == "probe.json")}
    refs = draw(st.fixed_dictionaries({}, optional={"question": PATHS, "skill": PATHS, "output_spec": PATHS}))
    return kinds, refs, f"files {kinds} refs {refs!r}"[:300]


EXTRA_FILES = {"link-out.md": "link-out", "loop.md": "link-loop", "fifo.md": "fifo", "dir": "folder"}


def apply_layout(workspace: FuzzWorkspace, kinds: dict[str, str], refs: dict[str, str]) -> None:
    """Lay out odd files in the probe's folder under the names PATHS uses, the
    roles' files as ``kinds`` says, and probe.json naming ``refs``."""
    for name, kind in EXTRA_FILES.items():
        path = workspace.fuzz / name
        _remove(path)
        if kind == "link-out":
            path.symlink_to(workspace.outside / "question.md")
        elif kind == "link-loop":
            path.symlink_to(path)
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            path.mkdir()
    if refs:
        workspace.put("probe.json", "regular", json.dumps(floor_probe("fuzz", **refs), ensure_ascii=True).encode())
    for role, kind in kinds.items():
        content = {"run.jsonl": b'{"probe": "fuzz", "version": 1}\n', "frozen.json": b'{"cases": []}'}.get(role, b"# x\n")
        workspace.put(role, kind, content)
