"""Helpers of the real-harness tests: where the pinned CLIs are, and running one
inside a loopback-only network namespace against the stand-in model.

An agent CLI is only ever started by netns_driver.py, which this module runs
as ``unshare --net --pid --mount --fork --kill-child --mount-proc sh -c 'ip
link set lo up && exec python3 netns_driver.py SPEC'``: a network namespace
holding nothing but loopback (the driver checks it before starting anything),
and a PID namespace, so that when the driver ends, or ``unshare`` is killed by
the outer time limit here, every process of the run dies with it.

When a CLI is not installed (``.ci/install-agent-clis``), or namespaces cannot
be made (not root), the tests skip, unless ``SKILL_EVAL_REQUIRE_AGENT_CLIS=1``
(CI sets it): then they fail.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from skill_eval.evals.presets import Launch, get_preset, prepare_project

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PINS = json.loads((HERE / "agent_clis.json").read_text("utf-8"))
SKILL = REPO / "examples" / "skills" / "closeout-review"
PROBE = SKILL / "evals" / "probes" / "drifted-count"
REQUIRE_ENV = "SKILL_EVAL_REQUIRE_AGENT_CLIS"
OUTER_MARGIN = 60.0
"""Seconds the outer time limit adds to a run's own timeout before killing the namespace."""

SKILL_DESCRIPTION = "Checks that every acceptance criterion has its own direct evidence before returning PASS."
"""From the skill's front matter: what a harness lists to the model when the skill is installed."""
SKILL_BODY_LINE = "Match each criterion to direct evidence"
"""From the SKILL.md body (a step heading): sent only once the harness loaded the skill."""

MODELS = {
    "claude-code": "claude-sonnet-4-5",
    "codex": "gpt-5-codex",
    "gemini-cli": "gemini-2.5-pro",
    "opencode": "standin/stand-model",
}
OPENCODE_COST_PER_MILLION = {"input": 3.0, "output": 15.0, "cache_read": 0.3}


API_KEYS = {"claude-code": ("ANTHROPIC_API_KEY", "sk-standin"), "codex": ("STANDIN_API_KEY", "sk-standin"),
            "gemini-cli": ("GEMINI_API_KEY", "standin-key"), "opencode": ("STANDIN_API_KEY", "sk-standin")}
"""Each harness's API key variable and the stand-in's key (given in the
runner's environment when the runner runs the harness: it passes through)."""


def endpoint_settings(preset: str, url: str = "{standin}", with_key: bool = True) -> tuple[dict[str, str], list[str]]:
    """How a user points each harness at their own endpoint (here: a
    stand-in, whose URL the driver fills in for ``url``, e.g. ``{standin}``):
    environment and agent ``args``, as an agent's config would give them.
    ``with_key``: the API key too (else it comes from the runner's environment)."""
    variable, key = API_KEYS[preset]
    keys = {variable: key} if with_key else {}
    if preset == "claude-code":
        return {"ANTHROPIC_BASE_URL": url, **keys}, []
    if preset == "codex":
        provider = ('model_providers.standin={name="stand-in", base_url="' + url + '/v1", wire_api="responses", '
                    'env_key="STANDIN_API_KEY", request_max_retries=0, stream_max_retries=0}')
        return keys, ["-c", 'model_provider="standin"', "-c", provider]
    if preset == "gemini-cli":
        return {"GOOGLE_GEMINI_BASE_URL": url, **keys}, []
    if preset == "opencode":
        config = {"provider": {"standin": {
            "npm": "@ai-sdk/openai-compatible", "name": "Stand-in",
            "options": {"baseURL": url + "/v1", "apiKey": "{env:STANDIN_API_KEY}"},
            "models": {"stand-model": {"name": "Stand-in model", "cost": OPENCODE_COST_PER_MILLION}}}}}
        return {"OPENCODE_CONFIG_CONTENT": json.dumps(config), **keys}, []
    raise KeyError(preset)


def cli_root() -> Path:
    if os.environ.get("SKILL_EVAL_AGENT_CLIS"):
        return Path(os.environ["SKILL_EVAL_AGENT_CLIS"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "skill-eval" / "agent-clis"


def installed_cli(preset: str) -> Path | None:
    """The pinned CLI's executable, when installed at its pinned version."""
    pin = PINS[preset]
    prefix = cli_root() / preset
    try:
        manifest = json.loads((prefix / "node_modules" / pin["package"] / "package.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    executable = prefix / "node_modules" / ".bin" / pin["bin"]
    return executable if manifest.get("version") == pin["version"] and executable.exists() else None


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1)")
    pytest.skip(reason)


@functools.lru_cache(maxsize=1)
def _namespaces_problem() -> str | None:
    if sys.platform != "linux" or shutil.which("unshare") is None or shutil.which("ip") is None:
        return "needs Linux with unshare and ip (apt-get install util-linux iproute2)"
    try:
        probe = subprocess.run(["unshare", "--net", "--pid", "--mount", "--fork", "--kill-child", "--mount-proc",
                                "sh", "-c", "ip link set lo up"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"cannot make a network namespace: {error}"
    if probe.returncode != 0:
        return f"cannot make a network namespace (root needed): {probe.stderr.decode(errors='replace').strip()}"
    return None


def require_cli(preset: str) -> Path:
    """The pinned CLI, or skip (fail under SKILL_EVAL_REQUIRE_AGENT_CLIS=1)."""
    problem = _namespaces_problem()
    if problem:
        _unavailable(problem)
    executable = installed_cli(preset)
    if executable is None:
        pin = PINS[preset]
        _unavailable(f"{pin['package']}@{pin['version']} is not installed in {cli_root() / preset}; "
                     f"run .ci/install-agent-clis")
    return executable


def base_env() -> dict[str, str]:
    """A clean environment for the CLIs: never this process's (it may hold real keys)."""
    folders = []
    node = shutil.which("node")
    if node:
        folders.append(str(Path(node).parent))
    folders += ["/usr/local/bin", "/usr/bin", "/bin"]
    return {"PATH": os.pathsep.join(dict.fromkeys(folders)), "LANG": "C.UTF-8"}


@dataclass
class Run:
    preset: str
    launch: Launch
    status: str
    exit_code: int | None
    stdout: str
    stderr: str
    duration: float
    url: str
    requests: list[dict] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    """The host names the run looked up (the namespace's only DNS server logs them)."""

    def texts(self) -> list[str]:
        """Each logged request's body as JSON text."""
        return [json.dumps(request["body"], ensure_ascii=False) for request in self.requests]

    def model_requests(self) -> list[dict]:
        return [request for request in self.requests if request.get("reported_usage")]

    def describe(self) -> str:
        return (f"{self.preset}: status {self.status}, exit {self.exit_code}, {self.duration:.1f} s, "
                f"{len(self.requests)} requests, names looked up: {sorted(set(self.names))}\nstdout: {self.stdout[-3000:]}\nstderr: {self.stderr[-3000:]}")


def run_harness(
    preset: str,
    work: Path,
    *,
    prompt: str,
    skill: Path | None = None,
    script: dict | None = None,
    endpoint: str = "standin",
    timeout: float = 90.0,
    artifact_name: str = "question.md",
    artifact: bytes = b"",
) -> Run:
    """Prepare a scratch project with the preset, then run the real CLI once in
    a loopback-only namespace against the stand-in; the log and result come
    back here. The whole run is killed ``OUTER_MARGIN`` s after ``timeout``."""
    executable = require_cli(preset)
    env, args = endpoint_settings(preset)
    launch = prepare_project(
        get_preset(preset), work / "scratch", prompt=prompt, artifact_name=artifact_name, artifact=artifact,
        skill=skill, model=MODELS[preset], args=args, env=env, base_env=base_env(), executable=str(executable))
    spec = {
        "launch": {"argv": list(launch.argv), "env": dict(launch.env), "cwd": str(launch.cwd), "stdin": launch.stdin},
        "script": script or {}, "endpoint": endpoint, "timeout": timeout,
        "log": str(work / "requests.jsonl"), "result": str(work / "result.json"),
        "names_log": str(work / "names.jsonl"),
    }
    (work / "spec.json").write_text(json.dumps(spec), "utf-8")
    try:
        subprocess.run(namespace_command(work / "spec.json"), stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout + OUTER_MARGIN)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{preset}: the run outlived its timeout ({timeout:g} s) by {OUTER_MARGIN:g} s and was killed")
    result_path = work / "result.json"
    if not result_path.exists():
        pytest.fail(f"{preset}: the namespace driver wrote no result")
    result = json.loads(result_path.read_text("utf-8"))
    if result["status"] == "refused":
        pytest.fail(result["error"])
    log, names = work / "requests.jsonl", work / "names.jsonl"
    requests = [json.loads(line) for line in log.read_text("utf-8").splitlines()] if log.exists() else []
    looked_up = [json.loads(line)["name"] for line in names.read_text("utf-8").splitlines()] if names.exists() else []
    return Run(preset, launch, result["status"], result.get("exit_code"), result.get("stdout", ""),
               result.get("stderr", ""), result["duration"], result["url"], requests, looked_up)


def namespace_command(spec_path: Path) -> list[str]:
    """``unshare`` a network (and PID, mount) namespace, bring loopback up, and
    run the driver on ``spec_path`` there."""
    return ["unshare", "--net", "--pid", "--mount", "--fork", "--kill-child", "--mount-proc", "sh", "-c",
            'ip link set lo up && exec "$0" "$1" "$2"', sys.executable, str(HERE / "netns_driver.py"), str(spec_path)]


def run_phases(work: Path, spec: dict, outer_timeout: float) -> dict:
    """Run the driver's phases (commands such as ``skill-eval run``, which
    start the agent CLIs) in one loopback-only namespace with its endpoints;
    the result per command comes back here. Killed after ``outer_timeout``."""
    spec = dict(spec, result=str(work / "result.json"), names_log=str(work / "names.jsonl"))
    (work / "spec.json").write_text(json.dumps(spec), "utf-8")
    try:
        subprocess.run(namespace_command(work / "spec.json"), stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=outer_timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the namespace outlived {outer_timeout:g} s and was killed")
    result_path = work / "result.json"
    if not result_path.exists():
        pytest.fail("the namespace driver wrote no result")
    result = json.loads(result_path.read_text("utf-8"))
    if result["status"] == "refused":
        pytest.fail(result["error"])
    names = work / "names.jsonl"
    result["names"] = [json.loads(line)["name"] for line in names.read_text("utf-8").splitlines()] if names.exists() else []
    return result


def read_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()] if path.exists() else []
