"""Helpers of the language-server tests: a small workspace on disk, waiting
with a timeout, and a pytest-lsp client with a real editor's capabilities."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path
from typing import Callable

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

PROFILES = {"neovim": "neovim", "vscode": "visual-studio-code"}

SKILL = """\
---
name: verify-closeout
description: Use when closing out a merged change.
---

# Verify closeout

## Step 1: Read the acceptance criteria

Each criterion needs its own evidence. An item without direct proof makes the
`verdict` `NOT_PROVEN`.

## Step 2: Check the evidence lines

Evidence that argues from prior behavior is not proof of the criterion: the
`verdict` is `NOT_PROVEN` and the item goes in `unproven`.

### Details

More about evidence.
"""

OUTPUT_SPEC = """\
# Output spec

## `verdict` — the call

Values: `PASS`, `NOT_PROVEN`

## `unproven`

The items without proof.
"""

QUESTION = """\
# Closeout: retry budget for the export job

| # | criterion | evidence |
|---|---|---|
| 1 | retries stop after 5 attempts | test_retry_cap passes |
| 2 | backoff doubles | test_backoff passes |
| 3 | metrics emitted | behavior unchanged from prior release, so existing coverage applies |

Please post the closeout verdict.
"""


def probe_json(probe_id: str, step_heading: str, *, seeded: int = 1, extra: str = "") -> str:
    return textwrap.dedent(
        f"""\
        {{
          "id": "{probe_id}",{extra}
          "tier": 2,
          "kind": "floor",
          "step_heading": "{step_heading}",
          "shapes": ["euphemized"],
          "seeded_defects": {seeded},
          "defects": [
            {{"id": "D1", "shape": "euphemized", "quote": "existing coverage applies", "caught_when": {{"verdict": "NOT_PROVEN"}}}}
          ]
        }}
        """
    )


def write_workspace(root: Path, extra_probes: dict[str, str] | None = None) -> Path:
    """A workspace: one skill, its output spec, and probes ``good`` (clean),
    ``renamed`` (SE101), ``drifted`` (SE201) and ``emoji`` (SE101 after an emoji)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "skill-eval.toml").write_text("# workspace root\n", encoding="utf-8")
    skill = root / "skills" / "verify"
    probes = skill / "evals" / "probes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (skill / "output-spec.md").write_text(OUTPUT_SPEC, encoding="utf-8")
    contents = {
        "good": probe_json("good", "Step 2: Check the evidence lines"),
        "renamed": probe_json("renamed", "Step 2: Check evidence"),
        "drifted": probe_json("drifted", "Step 2: Check the evidence lines", seeded=3),
        "emoji": '{"x-note": "\U0001F680\U0001F680", "step_heading": "Nope", "id": "emoji", "tier": 1}\n',
    }
    contents.update(extra_probes or {})
    for name, text in contents.items():
        folder = probes / name
        folder.mkdir(parents=True)
        (folder / "probe.json").write_text(text, encoding="utf-8")
        (folder / "question.md").write_text(QUESTION, encoding="utf-8")
    return root


def uri(path: Path) -> str:
    return path.as_uri()


async def wait_until(predicate: Callable[[], object], timeout: float = 15.0, what: str = "condition"):
    """Poll ``predicate`` until it is truthy; fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.02)


def _register_capability(client: LanguageClient, params: types.RegistrationParams):
    client.registrations.extend(params.registrations)


def _publish_diagnostics(client: LanguageClient, params: types.PublishDiagnosticsParams):
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)


def _lens_refresh(client: LanguageClient, params):
    client.lens_refreshes += 1


def converter():
    """pygls's converter, reading ``(Command | CodeAction)[]`` as editors do.

    lsprotocol's hook reads any item with a ``command`` key as a ``Command``,
    so a ``CodeAction`` carrying a command (the runner's run and calibrate
    actions) would come back as a ``Command`` whose ``command`` is a dict;
    VS Code (``Command.is``: ``command`` is a string) and Neovim (``command``
    is a table: a code action) tell them apart by the type of ``command``."""
    from typing import Any, Union

    made = default_converter()

    def command_or_code_action(value: Any, _type: type):
        if isinstance(value, dict) and isinstance(value.get("command"), str):
            return made.structure(value, types.Command)
        return made.structure(value, types.CodeAction)

    made.register_structure_hook(Union[types.Command, types.CodeAction], command_or_code_action)
    return made


def make_client() -> LanguageClient:
    """pytest-lsp's test client plus what it lacks: a ``client/registerCapability``
    handler, a log of every publishDiagnostics (the default keeps only the last),
    and code actions read as editors read them (:func:`converter`)."""
    client = LanguageClient(converter_factory=converter)
    client.registrations = []
    client.published = []
    client.lens_refreshes = 0
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.CLIENT_REGISTER_CAPABILITY] = _register_capability
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _publish_diagnostics
    features[types.WORKSPACE_CODE_LENS_REFRESH] = _lens_refresh
    register_lsp_features(client, features)
    return client


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "skill_eval.server"], client_factory=make_client)


async def start(client: LanguageClient, root: Path, profile: str, options: dict | None = None) -> None:
    """Initialize a session with ``profile``'s capabilities; the negotiated
    position encoding is kept as ``client.position_encoding``."""
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(PROFILES[profile]),
            root_uri=uri(root),
            workspace_folders=[types.WorkspaceFolder(uri=uri(root), name=root.name)],
            initialization_options=options,
        )
    )
    encoding = result.capabilities.position_encoding
    client.position_encoding = getattr(encoding, "value", encoding) or "utf-16"


def scan_done(client: LanguageClient) -> bool:
    return any(
        reports and isinstance(reports[-1], types.WorkDoneProgressEnd) for reports in client.progress_reports.values()
    )


