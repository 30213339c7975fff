"""``skill-eval review``: an opt-in model review of the artifacts (SE301,
SE302, SE304 by meaning).

The default lint judges sentences offline and deterministically
(linter/rules/artifact/_judgement.py). ``review`` asks a configured agent
(``[agents.NAME]`` of skill-eval.toml, a command or a harness preset, run
exactly as ``skill-eval run`` runs it) whether any sentence of an artifact
signposts the defect, frames a quiz, or leaks the answer. It is asked once
per artifact content: the verdict is cached under
``.skill-eval-cache/review/`` by a hash of the prompt (the artifact, the
defects' quotes and this module's :data:`PROMPT_VERSION`), the agent and its
model. Each verdict is a finding with the model's reason.

The prompt's definitions and examples are calibrated on the labelled set of
benchmarks/judgement/ (dev split only: the held-out split is never shown to
a model or a person tuning the prompt). The agent answers one JSON object::

    {"findings": [{"line": 12, "kind": "signpost", "text": "...", "reason": "..."}]}

``kind`` is ``signpost`` (SE301), ``quiz`` (SE302) or ``key-leak`` (SE304).
Anything else in the answer is ignored; an answer without such an object is
an error of the review (exit 2), never "no findings".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

PROMPT_VERSION = "review-1"
"""Part of every cache key: a new prompt asks again."""

KINDS = {"signpost": "SE301", "quiz": "SE302", "key-leak": "SE304"}
CACHE_FOLDER = Path(".skill-eval-cache") / "review"

INSTRUCTIONS = """\
You review a test artifact (question.md) written for an AI agent. The artifact is
realistic work (a report, a diff, a contract...) with a deliberate flaw planted in
it; the flaw's location is given below. The agent must find the flaw by applying a
discipline, so the artifact must not help it. Report every sentence, heading, table
cell, list item, block quote, comment, link text, link title or image alt text that:

- signpost: points the reader at WHERE the flaw is or at the FACT that one exists.
  Examples: "Criterion 3 is not as solid as it reads." "Take a second look at the
  metrics criterion." "There is a bug somewhere in this diff." "Something in the
  evidence column doesn't quite add up." "One of these tables is not like the others."
- quiz: asks the reader to hunt for a fault instead of doing the work. Examples:
  "Go through the criteria and tell me which ones you would push back on."
  "Tell us what would be lost if we decommissioned on Monday." "Spot the bug."
- key-leak: states the flaw or the expected answer where the reader can find it:
  an HTML comment, a code comment (above all on the flaw's own line), a link title,
  an image's alt text. Examples: "<!-- criterion 3 has no real test behind it -->",
  "pass  # FIXME: swallows the error", alt text "no alert exists for queue depth".

Do NOT report work: sentences that use attention words about something that is not
the flaw ("Pay attention to the `--dry-run` flag", "Watch out for the 02:00 deploy
freeze", "Hint: the dashboard lives under Exports"), "note" and "bug" used as work
words ("Bug 311 was fixed in loader 2.4", "Note: the table is partitioned by date"),
the flaw's own vocabulary used innocently, and the flawed text itself.

Answer with one JSON object and nothing else:
{"findings": [{"line": <line number>, "kind": "signpost"|"quiz"|"key-leak",
  "text": "<the words, verbatim>", "reason": "<one sentence: what it points at>"}]}
Answer {"findings": []} when nothing qualifies.
"""


@dataclass(frozen=True)
class ReviewFinding:
    path: Path
    line: int
    code: str
    text: str
    reason: str

    def render(self) -> str:
        return f"{self.path}:{self.line}: {self.code} [review] {self.text!r}: {self.reason}"


class ReviewError(Exception):
    """The agent gave no usable verdict."""


def build_prompt(artifact: str, quotes: Sequence[str]) -> str:
    """The review prompt: instructions, the flaw's quotes with their lines,
    and the artifact with numbered lines."""
    lines = artifact.split("\n")
    numbered = "\n".join(f"{number:>3}| {line}" for number, line in enumerate(lines, 1))
    located = []
    for quote in quotes:
        wanted = " ".join(quote.split())
        where = [str(n) for n, line in enumerate(lines, 1) if wanted and wanted in " ".join(line.split())]
        located.append(f"- {quote!r}" + (f" (line {', '.join(where)})" if where else ""))
    return (f"{INSTRUCTIONS}\nThe planted flaw (defect quotes from probe.json):\n" + "\n".join(located)
            + f"\n\nThe artifact, with line numbers:\n{numbered}\n")


def cache_key(prompt: str, agent: Any, model: str) -> str:
    data = json.dumps([PROMPT_VERSION, prompt, agent.name, agent.preset, list(agent.command), model])
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_verdict(answer: str) -> list[dict[str, Any]]:
    """The findings of an answer: the last JSON object in it that has a
    ``findings`` list. Raises :class:`ReviewError` when there is none."""
    decoder = json.JSONDecoder()
    found = None
    for start in [m.start() for m in re.finditer(r"\{", answer)]:
        try:
            value, _end = decoder.raw_decode(answer, start)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("findings"), list):
            found = value
    if found is None:
        raise ReviewError("the agent's answer holds no JSON object with a \"findings\" list")
    return [f for f in found["findings"] if isinstance(f, dict) and f.get("kind") in KINDS]


def ask(agent: Any, model: str, prompt: str, artifact: bytes, root: Path) -> tuple[str, dict[str, Any]]:
    """Run ``agent`` once on ``prompt``; its answer and what it cost."""
    from .executor import AgentJob, HarnessLaunch, execute_job, expand
    from .runner import preset_executable

    values = {"model": model, "workspace": str(root)}
    if agent.preset:
        harness = HarnessLaunch(agent.preset, tuple(expand(arg, values) for arg in agent.args),
                                preset_executable(agent, root))
        job = AgentJob("review", (), prompt.encode("utf-8"), "question.md", artifact, dict(agent.env), agent.timeout,
                       values=values, max_output=agent.max_output, harness=harness)
    else:
        argv = list(agent.command)
        if "/" in argv[0] and not Path(argv[0]).is_absolute() and "{" not in argv[0]:
            argv[0] = str(root / argv[0])
        job = AgentJob("review", tuple(argv), prompt.encode("utf-8"), "question.md", artifact, dict(agent.env),
                       agent.timeout, values=values, max_output=agent.max_output)
    outcome = execute_job(job)
    if outcome.status != "ok":
        raise ReviewError(f"the agent's start ended {outcome.status}: {outcome.error or outcome.stderr_tail[-300:]}")
    usage: dict[str, Any] = {"duration_s": outcome.duration, "prompt_chars": len(prompt)}
    if outcome.harness is not None:
        harness = outcome.harness
        usage.update(tokens_in=harness.tokens_in, tokens_out=harness.tokens_out, cost_usd=harness.cost_usd)
        return harness.answer or "", usage
    return outcome.stdout.decode("utf-8", "replace"), usage


def review_probe(probe, agent: Any, model: str, root: Path, use_cache: bool = True) -> tuple[list[ReviewFinding], dict]:
    """The review's findings for one probe, from the cache or the agent."""
    artifact = probe.artifact_bytes.decode("utf-8", "replace")
    quotes = [d["quote"] for d in probe.defects if isinstance(d.get("quote"), str)]
    prompt = build_prompt(artifact, quotes)
    key = cache_key(prompt, agent, model)
    cached = root / CACHE_FOLDER / f"{key}.json"
    usage: dict[str, Any] = {"cached": False}
    if use_cache and cached.is_file():
        verdict = json.loads(cached.read_text(encoding="utf-8"))
        usage["cached"] = True
    else:
        answer, usage = ask(agent, model, prompt, probe.artifact_bytes, root)
        usage["cached"] = False
        verdict = parse_verdict(answer)
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(verdict), encoding="utf-8")
    lines = artifact.split("\n")
    findings = []
    for item in verdict:
        line = item.get("line") if isinstance(item.get("line"), int) and 0 < item.get("line") <= len(lines) else 1
        findings.append(ReviewFinding(probe.artifact_path, line, KINDS[item["kind"]], str(item.get("text", ""))[:200],
                                      str(item.get("reason", "")).strip()[:300] or "the model gave no reason"))
    return findings, usage


def review_main(argv: Sequence[str] | None = None) -> int:
    from .cli import _Parser, _common, _fail, _open, _select
    from .probes import ProbeError
    from .runner import RunError, select_agent

    parser = _Parser(prog="skill-eval review", description="Ask a configured agent whether an artifact signposts its "
                     "defect, frames a quiz or leaks the answer (opt-in; one call per artifact content, cached).")
    _common(parser)
    parser.add_argument("--agent", help="an [agents.NAME] of the config (default: the only one)")
    parser.add_argument("--model", help="override the agent's model ({model})")
    parser.add_argument("--no-cache", action="store_true", help="ask again even when a verdict is cached")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    try:
        workspace = _open(args)
        agent = select_agent(workspace.config, args.agent)
        probes, errors = workspace.load_all(_select(workspace, args), need_skill=False, need_spec=False)
    except (ProbeError, RunError) as error:
        return _fail(str(error))
    for error in errors:
        print(f"skill-eval: {error}", file=sys.stderr)
    model = args.model or agent.model
    every: list[ReviewFinding] = []
    asked = cached = 0
    failed = False
    report = []
    for probe in probes:
        try:
            findings, usage = review_probe(probe, agent, model, workspace.root, use_cache=not args.no_cache)
        except ReviewError as error:
            print(f"skill-eval: {probe.json_path}: review failed: {error}", file=sys.stderr)
            failed = True
            continue
        cached += usage["cached"]
        asked += not usage["cached"]
        every.extend(findings)
        report.append({"probe": str(probe.json_path), "findings": [f.__dict__ | {"path": str(f.path)} for f in findings],
                       "usage": usage})
    if args.format == "json":
        print(json.dumps(report, indent=2))
    else:
        for finding in every:
            print(finding.render())
        print(f"{len(every)} finding(s) in {len(probes)} artifact(s); asked the agent {asked} time(s), "
              f"{cached} verdict(s) from the cache", file=sys.stderr)
    if failed:
        return 2
    return 1 if every else 0
