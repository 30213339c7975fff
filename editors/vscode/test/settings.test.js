// Unit tests of the VS Code-free logic (out/settings.js, compiled from src/settings.ts).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");

const settings = require("../out/settings.js");

const context = { workspaceFolder: "/ws/project", home: "/home/ana", env: { VENV: "/opt/venv" } };

test("default: skill-eval-ls from PATH", () => {
  assert.deepEqual(settings.resolveServerCommand({}, context), { command: "skill-eval-ls", args: [], source: "default" });
  assert.deepEqual(settings.resolveServerCommand({ path: "  ", interpreter: "" }, context).command, "skill-eval-ls");
});

test("interpreter: python -m skill_eval.server, then the extra args", () => {
  assert.deepEqual(
    settings.resolveServerCommand({ interpreter: "${workspaceFolder}/.venv/bin/python", args: ["--log-level", "debug"] }, context),
    { command: "/ws/project/.venv/bin/python", args: ["-m", "skill_eval.server", "--log-level", "debug"], source: "interpreter" },
  );
});

test("path wins over interpreter", () => {
  assert.deepEqual(
    settings.resolveServerCommand({ path: "~/bin/skill-eval-ls", interpreter: "/usr/bin/python3", args: ["-v"] }, context),
    { command: path.join("/home/ana", "bin/skill-eval-ls"), args: ["-v"], source: "path" },
  );
});

test("variables: ${userHome}, ${env:NAME}; an unknown workspace folder stays literal", () => {
  assert.equal(settings.expandVariables("${env:VENV}/bin/skill-eval-ls", context), "/opt/venv/bin/skill-eval-ls");
  assert.equal(settings.expandVariables("${userHome}/x", context), "/home/ana/x");
  assert.equal(settings.expandVariables("${env:MISSING}x", context), "x");
  assert.equal(settings.expandVariables("${workspaceFolder}/py", { home: "/h", env: {} }), "${workspaceFolder}/py");
  assert.equal(settings.expandVariables("a~b", context), "a~b");
});

test("linter settings drop client-only keys and empty lists", () => {
  const section = {
    interpreter: "/usr/bin/python3",
    path: "",
    args: [],
    trace: { server: "verbose" },
    select: ["SE1"],
    ignore: [],
    "per-file-ignores": { "**/legacy/*": ["SE101"] },
    get() {},
  };
  assert.deepEqual(settings.linterSettings(section), { select: ["SE1"], "per-file-ignores": { "**/legacy/*": ["SE101"] } });
  assert.deepEqual(settings.linterSettings(undefined), {});
});

test("the client never re-registers the extension's own commands", () => {
  assert.deepEqual(
    settings.serverCommandsToRegister(["skill-eval.runProbe", "skill-eval.applyFix", "skill-eval.restart", "skill-eval.showProbes",
      "skill-eval.calibrate"]),
    ["skill-eval.applyFix"],
  );
  assert.deepEqual(settings.serverCommandsToRegister(undefined), []);
});

test("probe of the active file: probe.json itself, or the one beside its artifact", () => {
  const exists = (candidate) => candidate === path.join("/ws/p", "probe.json");
  assert.equal(settings.probeFileFor("/ws/q/probe.json", () => false), "/ws/q/probe.json");
  assert.equal(settings.probeFileFor("/ws/p/question.md", exists), path.join("/ws/p", "probe.json"));
  assert.equal(settings.probeFileFor("/ws/other/SKILL.md", exists), undefined);
});

test("fixture file names", () => {
  for (const name of ["probe.json", "question.md", "SKILL.md", "output-spec.md"]) {
    assert.ok(settings.isFixtureFile(`/a/b/${name}`), name);
  }
  assert.ok(!settings.isFixtureFile("/a/b/package.json"));
  assert.ok(!settings.isFixtureFile("/a/b/skill.md"));
});
