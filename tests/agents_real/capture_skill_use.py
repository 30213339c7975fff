"""Capture what each pinned agent CLI prints, with and without the skill loaded,
as fixtures for tests/evals/test_skill_use.py.

Each CLI runs with its preset inside a loopback-only network namespace
against the stand-in model (agents_real_helpers.run_harness), on the example
probe's prompt, three ways:

- ``treatment``: the skill installed, and the stand-in calls the harness's
  skill tool (Codex: reads the listed SKILL.md with its shell) before it
  answers;
- ``treatment-unused``: the skill installed, and the stand-in answers at once;
- ``control``: no skill, the stand-in answers at once.

What the CLI printed on stdout is written to
``tests/fixtures/skill_use/<preset>-<case>.out`` with the scratch folder's
path replaced by ``/SCRATCH`` (it is a fresh temporary folder), and beside it
``<preset>-<case>.json``: what the stand-in logged (whether a request held
the SKILL.md body: the ground truth the tests compare with). Run::

    python tests/agents_real/capture_skill_use.py [PRESET ...]

as root (namespaces), with the CLIs installed (.ci/install-agent-clis).
The ``gemini-cli-json-*`` fixtures were captured the same way while the
Gemini preset printed ``--output-format json`` (before ``stream-json``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from agents_real_helpers import PROBE, SKILL, SKILL_BODY_LINE, run_harness  # noqa: E402

from skill_eval.evals.presets import PRESET_NAMES  # noqa: E402
from skill_eval.evals.prompt import build_prompt  # noqa: E402
from skill_eval.linter.outputspec import parse_output_spec  # noqa: E402

FIXTURES = HERE.parent / "fixtures" / "skill_use"
ANSWER = "Reviewed the closeout report.\n\nverdict: NOT_PROVEN\nunproven: 2\nconfidence: medium\n"
CASES = {"treatment": (True, "closeout-review"), "treatment-unused": (True, None), "control": (False, None)}
"""case -> (skill installed, the skill the stand-in calls the skill tool for)."""


def capture(preset: str, case: str, work: Path) -> dict:
    """Run ``preset`` once for ``case``; the printed output and the ground truth."""
    installed, call = CASES[case]
    artifact = (PROBE / "question.md").read_bytes()
    spec = parse_output_spec((SKILL / "output-spec.md").read_text("utf-8"))
    prompt = build_prompt(artifact, spec).decode("utf-8")
    script = {"answer": ANSWER, "skill_name": call}
    run = run_harness(preset, work, prompt=prompt, skill=SKILL if installed else None, script=script,
                      artifact=artifact)
    if run.status != "ok":
        raise SystemExit(f"{preset} {case}: {run.describe()}")
    scratch = str(work / "scratch")
    body_sent = any(SKILL_BODY_LINE in text for text in run.texts())
    return {"stdout": run.stdout.replace(scratch, "/SCRATCH"),
            "truth": {"preset": preset, "case": case, "skill_installed": installed,
                      "skill_body_sent_to_model": body_sent,
                      "model_requests": len(run.model_requests()),
                      "replies": [request["reply"] for request in run.requests if request.get("reply")]}}


def main(presets: list[str]) -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for preset in presets or PRESET_NAMES:
        for case in CASES:
            with tempfile.TemporaryDirectory() as work:
                captured = capture(preset, case, Path(work))
            (FIXTURES / f"{preset}-{case}.out").write_text(captured["stdout"], "utf-8")
            (FIXTURES / f"{preset}-{case}.json").write_text(json.dumps(captured["truth"], indent=2) + "\n", "utf-8")
            print(preset, case, captured["truth"])


if __name__ == "__main__":
    main(sys.argv[1:])
