// Integration: the command line that out/settings.js computes really starts
// skill-eval-ls, which speaks LSP over stdio to the same protocol library the
// extension uses (vscode-languageserver-protocol, a dependency of
// vscode-languageclient), accepts the extension's initializationOptions, and
// publishes SE101 for a misanchored step_heading with a quick fix.
//
// Needs skill-eval-ls: on PATH, or SKILL_EVAL_PYTHON=<python with skill-eval[server]>.
// Skipped (with the reason) when neither is available.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const cp = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { pathToFileURL } = require("node:url");
const protocol = require("vscode-languageserver-protocol/node");

const settings = require("../out/settings.js");

function onPath(name) {
  const dirs = (process.env.PATH || "").split(path.delimiter);
  return dirs.some((dir) => dir && fs.existsSync(path.join(dir, name)));
}

const python = process.env.SKILL_EVAL_PYTHON;
const serverSettings = python ? { interpreter: python } : {};
const available = python ? fs.existsSync(python) : onPath("skill-eval-ls");
const skip = available ? false : "skill-eval-ls is not on PATH and SKILL_EVAL_PYTHON is not set";

function workspace() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "skill-eval-vscode-"));
  const skill = path.join(root, "skill");
  const probeDir = path.join(skill, "evals", "probes", "p");
  fs.mkdirSync(probeDir, { recursive: true });
  fs.writeFileSync(path.join(root, "skill-eval.toml"), "# root\n");
  fs.writeFileSync(path.join(skill, "SKILL.md"), "# Skill\n\n## Step 2: Check the evidence lines\n\nThe `verdict` is `NOT_PROVEN` without proof.\n");
  fs.writeFileSync(path.join(skill, "output-spec.md"), "# Fields\n\n## `verdict`\nValues: `PASS`, `NOT_PROVEN`\n");
  fs.writeFileSync(path.join(probeDir, "question.md"), "# Closeout\n\nmetrics: existing coverage applies\n");
  const probe = {
    id: "p", tier: 2, kind: "floor", step_heading: "Step 2: Check evidence", shapes: ["euphemized"], seeded_defects: 1,
    defects: [{ id: "D1", shape: "euphemized", quote: "existing coverage applies", caught_when: { verdict: "NOT_PROVEN" } }],
  };
  const probePath = path.join(probeDir, "probe.json");
  fs.writeFileSync(probePath, JSON.stringify(probe, null, 2) + "\n");
  return { root, probePath };
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms); }),
  ]);
}

test("skill-eval-ls starts from the computed command line and publishes SE101 with a quick fix", { skip, timeout: 60_000 }, async () => {
  const { root, probePath } = workspace();
  const command = settings.resolveServerCommand(serverSettings, { workspaceFolder: root });
  const child = cp.spawn(command.command, command.args, { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => { stderr += chunk; });
  const connection = protocol.createProtocolConnection(
    new protocol.StreamMessageReader(child.stdout),
    new protocol.StreamMessageWriter(child.stdin),
  );
  const published = new Promise((resolve) => {
    connection.onNotification(protocol.PublishDiagnosticsNotification.type, (params) => {
      if (params.uri === pathToFileURL(probePath).href && params.diagnostics.some((d) => d.code === "SE101")) {
        resolve(params.diagnostics);
      }
    });
  });
  connection.onRequest(protocol.ConfigurationRequest.type, (params) => params.items.map(() => settings.linterSettings({ select: ["SE1"], ignore: [], path: "x" })));
  connection.onRequest(protocol.RegistrationRequest.type, () => null);
  connection.onRequest(protocol.WorkDoneProgressCreateRequest.type, () => null);
  connection.listen();
  try {
    const rootUri = pathToFileURL(root).href;
    const init = await withTimeout(connection.sendRequest(protocol.InitializeRequest.type, {
      processId: process.pid,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: "ws" }],
      capabilities: { workspace: { configuration: true }, textDocument: { publishDiagnostics: { relatedInformation: true } } },
      initializationOptions: settings.linterSettings({ select: ["SE1"], ignore: [], interpreter: "python3" }),
    }), 30_000, `initialize (stderr: ${stderr})`);
    assert.ok(init.capabilities.codeActionProvider, "codeActionProvider");
    await connection.sendNotification(protocol.InitializedNotification.type, {});
    await connection.sendNotification(protocol.DidOpenTextDocumentNotification.type, {
      textDocument: { uri: pathToFileURL(probePath).href, languageId: "json", version: 1, text: fs.readFileSync(probePath, "utf8") },
    });
    const diagnostics = await withTimeout(published, 30_000, `SE101 (stderr: ${stderr})`);
    const se101 = diagnostics.find((d) => d.code === "SE101");
    const actions = await withTimeout(connection.sendRequest(protocol.CodeActionRequest.type, {
      textDocument: { uri: pathToFileURL(probePath).href },
      range: se101.range,
      context: { diagnostics: [se101], only: ["quickfix"] },
    }), 30_000, "codeAction");
    assert.ok(actions.some((a) => a.title.includes("Step 2: Check the evidence lines")), JSON.stringify(actions));
    await withTimeout(connection.sendRequest(protocol.ShutdownRequest.type), 10_000, "shutdown");
    await connection.sendNotification(protocol.ExitNotification.type);
  } finally {
    connection.dispose();
    child.kill();
    fs.rmSync(root, { recursive: true, force: true });
  }
});
