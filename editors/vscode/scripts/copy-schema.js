#!/usr/bin/env node
// Copies the one source of truth, linter/data/probe.schema.json, into the
// extension (schemas/probe.schema.json) so that the .vsix ships it for the
// `jsonValidation` contribution. Run by `npm run build`; test/schema.test.js
// checks that the copy equals the source.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const EXTENSION_ROOT = path.resolve(__dirname, "..");
const SOURCE = path.resolve(EXTENSION_ROOT, "..", "..", "linter", "data", "probe.schema.json");
const TARGET = path.join(EXTENSION_ROOT, "schemas", "probe.schema.json");

function copySchema(source = SOURCE, target = TARGET) {
  const text = fs.readFileSync(source, "utf8");
  JSON.parse(text); // refuse to ship a schema that is not JSON
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, text);
  return { source, target };
}

module.exports = { copySchema, SOURCE, TARGET };

if (require.main === module) {
  const { source, target } = copySchema();
  console.log(`copied ${path.relative(process.cwd(), source)} -> ${path.relative(process.cwd(), target)}`);
}
