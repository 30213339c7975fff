// The schema shipped in the extension is a byte-for-byte copy of the one
// source of truth, linter/data/probe.schema.json (copied by `npm run build`).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const { copySchema, SOURCE, TARGET } = require("../scripts/copy-schema.js");

test("schemas/probe.schema.json equals linter/data/probe.schema.json", () => {
  assert.ok(fs.existsSync(TARGET), `${TARGET} is missing: run \`npm run build\``);
  assert.equal(fs.readFileSync(TARGET, "utf8"), fs.readFileSync(SOURCE, "utf8"));
});

test("the copy is the package's schema (draft 2020-12, probe v1)", () => {
  const schema = JSON.parse(fs.readFileSync(TARGET, "utf8"));
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.ok(schema.required.includes("step_heading"));
});

test("copySchema refuses a source that is not JSON", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skill-eval-schema-"));
  try {
    fs.writeFileSync(path.join(dir, "bad.json"), "{ not json");
    assert.throws(() => copySchema(path.join(dir, "bad.json"), path.join(dir, "out", "s.json")), SyntaxError);
    assert.ok(!fs.existsSync(path.join(dir, "out", "s.json")));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
