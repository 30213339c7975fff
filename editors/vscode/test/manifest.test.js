// The package.json contributions the extension's contract promises.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8"));

test("activation: workspaces with probe.json or SKILL.md, and json/markdown files", () => {
  for (const event of ["workspaceContains:**/probe.json", "workspaceContains:**/SKILL.md", "onLanguage:json", "onLanguage:markdown"]) {
    assert.ok(manifest.activationEvents.includes(event), event);
  }
});

test("settings", () => {
  const properties = manifest.contributes.configuration.properties;
  for (const key of ["interpreter", "path", "args", "trace.server", "select", "ignore"]) {
    assert.ok(properties[`skill-eval.${key}`], `skill-eval.${key}`);
  }
  assert.deepEqual(properties["skill-eval.trace.server"].enum, ["off", "messages", "verbose"]);
});

test("commands", () => {
  const commands = manifest.contributes.commands.map((c) => c.command);
  assert.deepEqual(commands.sort(), ["skill-eval.calibrate", "skill-eval.restart", "skill-eval.runProbe"]);
});

test("untrusted workspaces: limited, executable settings restricted", () => {
  const untrusted = manifest.capabilities.untrustedWorkspaces;
  assert.equal(untrusted.supported, "limited");
  assert.deepEqual(untrusted.restrictedConfigurations.sort(), ["skill-eval.args", "skill-eval.interpreter", "skill-eval.path"]);
});

test("jsonValidation points probe.json at the shipped schema", () => {
  assert.deepEqual(manifest.contributes.jsonValidation, [{ fileMatch: "**/probe.json", url: "./schemas/probe.schema.json" }]);
});

test("vscode-languageclient v9", () => {
  assert.match(manifest.dependencies["vscode-languageclient"], /^\^9\./);
});
