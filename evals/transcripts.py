"""Known transcripts: calibrate the discriminator before spending live reps.

The seed: "Calibrate the discriminator on known transcripts before spending
live reps." A probe's known transcripts live in ``transcripts/*.md`` inside its
folder. Each is an answer an agent could give, opened by a small YAML front
matter block that says, per defect, whether that answer catches it::

    ---
    expect:
      D1: caught
      D2: missed
    note: names criterion 3 but returns PASS   # optional, for humans
    ---
    verdict: PASS
    criteria: 3

The flow form ``expect: {D1: caught, D2: missed}`` is the same thing. Every
defect of the probe must be labelled, with ``caught`` or ``missed``; the body
after the closing ``---`` is the answer, graded exactly as a live answer is.
``skill-eval check`` fails on any transcript whose grading differs from its
labels, and says why (the expectation that held or did not).

A defect graded by a judge (evals/judges.py) is calibrated the same way: the
judge runs on each transcript's body exactly as on a live answer, and a judge
that disagrees with a label, or gives no verdict, fails the check (and so
blocks ``skill-eval run``, which checks the transcripts first).

Transcripts are not part of the artifact and never reach an agent. The linter
does not read them (they are not fixtures), so they may quote the defect freely.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .grading import BadExpectation, grade_answer
from .judges import ProbeJudge
from .probes import Probe

LABELS = ("caught", "missed")


class TranscriptError(Exception):
    """A transcript whose header cannot be used (the message says how to fix it)."""


@dataclass
class Transcript:
    path: Path
    expect: dict[str, str]
    body: str


@dataclass
class TranscriptResult:
    path: Path
    ok: bool
    lines: list[str] = field(default_factory=list)
    """Per defect: expected, graded, and the grading's reasons."""
    error: str | None = None


def parse_transcript(path: Path, text: str) -> Transcript:
    import yaml

    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise TranscriptError(f"{path}: no header; open the file with a `---` block holding `expect: {{D1: caught}}`")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() in ("---", "..."))
    except StopIteration:
        raise TranscriptError(f"{path}: the header is not closed; end it with a `---` line") from None
    try:
        header = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise TranscriptError(f"{path}: the header is not valid YAML{where}; write `expect: {{D1: caught, D2: missed}}`") from None
    expect = header.get("expect") if isinstance(header, dict) else None
    if not isinstance(expect, dict) or not expect:
        raise TranscriptError(f"{path}: the header has no `expect` mapping; add `expect: {{D1: caught}}` (caught or missed per defect)")
    labels: dict[str, str] = {}
    for defect_id, label in expect.items():
        if label not in LABELS:
            raise TranscriptError(f"{path}: `expect.{defect_id}` is {label!r}; use caught or missed")
        labels[str(defect_id)] = label
    return Transcript(path, labels, "\n".join(lines[end + 1:]))


def transcript_paths(probe: Probe) -> list[Path]:
    folder = probe.transcripts_folder
    return sorted(folder.glob("*.md")) if folder.is_dir() else []


def check_transcript(probe: Probe, path: Path, workspace: Path | None = None) -> TranscriptResult:
    """Grade one transcript as a live answer is graded (judges included; their
    ``{workspace}`` is ``workspace``) and compare with its labels."""
    try:
        transcript = parse_transcript(path, path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        return TranscriptResult(path, False, error=f"{path}: not UTF-8 text; re-save it as UTF-8")
    except OSError as error:
        return TranscriptResult(path, False, error=f"{path}: cannot read it ({error.strerror or error})")
    except TranscriptError as error:
        return TranscriptResult(path, False, error=str(error))
    ids = probe.defect_ids
    unknown = sorted(set(transcript.expect) - set(ids))
    if unknown:
        return TranscriptResult(path, False, error=f"{path}: `expect` names {', '.join(unknown)}, which "
                                f"{probe.json_path.name} does not define (defects: {', '.join(ids)}); fix the label")
    unlabelled = [d for d in ids if d not in transcript.expect]
    if unlabelled:
        return TranscriptResult(path, False, error=f"{path}: `expect` does not label {', '.join(unlabelled)}; "
                                "label every defect caught or missed")
    try:
        answer, grades = grade_answer(transcript.body, list(probe.defects), probe.output_spec,
                                      judge=ProbeJudge(probe, workspace))
    except BadExpectation as error:
        return TranscriptResult(path, False, error=f"{probe.json_path}: {error}; fix caught_when")
    result = TranscriptResult(path, True)
    for grade in grades:
        graded = "not graded" if grade.error else "caught" if grade.caught else "missed"
        expected = transcript.expect[grade.defect_id]
        match = graded == expected
        result.ok = result.ok and match
        verdict = "ok" if match else "MISMATCH"
        result.lines.append(f"{grade.defect_id}: expected {expected}, graded {graded} [{verdict}] "
                            f"({'; '.join(grade.reasons)}; answer read from {answer.source})")
    return result


def check_probe(probe: Probe, workspace: Path | None = None) -> list[TranscriptResult]:
    return [check_transcript(probe, path, workspace) for path in transcript_paths(probe)]
