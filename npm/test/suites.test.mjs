// `runTests` of the `svclab` npm package: the example suites (examples/tests/) give the same
// JSON as the native `svclab test --output json`, a changed value fails with its path, an update
// makes a wrong suite pass, and the types accept the call. Run by tests/npm.rs with SVCLAB_NPM
// and SVCLAB_BIN set.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const NPM = process.env.SVCLAB_NPM ?? path.join(root, "target/npm/svclab");
const BIN = process.env.SVCLAB_BIN ?? path.join(root, "target/debug/svclab");
assert.ok(existsSync(path.join(NPM, "package.json")), `no package at ${NPM}: run \`cargo xtask npm\``);
const manifest = JSON.parse(readFileSync(path.join(NPM, "package.json"), "utf8"));
const svclab = await import(pathToFileURL(path.join(NPM, manifest.exports["."].default)).href);

// The suites and the files they name, as `svclab test examples/tests` reads them from the
// workspace root.
const suites = readdirSync(path.join(root, "examples/tests"))
  .filter((f) => f.endsWith(svclab.SUITE_SUFFIX))
  .sort()
  .map((f) => ({ name: `examples/tests/${f}`, text: readFileSync(path.join(root, "examples/tests", f), "utf8") }));
const named = svclab.testFilesNeeded(suites).map((name) => ({ name, text: readFileSync(path.join(root, name), "utf8") }));

test("runTests gives the native command's JSON, byte for byte", () => {
  const native = execFileSync(BIN, ["--engine", "native", "test", "--output", "json", "examples/tests"], { cwd: root, encoding: "utf8" });
  const result = svclab.runTests([...suites, ...named]);
  assert.deepEqual(result, JSON.parse(native));
  assert.equal(result.failed + result.errors, 0);
  assert.ok(result.passed >= 20, `${result.passed} passed`);
  const text = execFileSync(BIN, ["--engine", "native", "test", "examples/tests"], { cwd: root, encoding: "utf8" });
  assert.equal(svclab.runTestsText([...suites, ...named]), text);
});

test("a changed value fails with its path, and an update makes it pass again", () => {
  const dns = suites.find((s) => s.name.endsWith("/dns.svclab-test.yaml"));
  const wrong = { name: dns.name, text: dns.text.replace("band: static", "band: dynamic") };
  const files = Object.fromEntries([wrong, ...named].map((f) => [f.name, f.text]));
  const result = svclab.runTests(files);
  assert.equal(result.failed, 1);
  const failure = result.suites[0].tests[0].failures[0];
  assert.equal(failure.path, "expect.objects[0].band");
  assert.equal(failure.want, "dynamic");
  assert.equal(failure.got, "static");
  const updated = svclab.runTests(files, { update: true });
  assert.equal(updated.failed, 0);
  assert.deepEqual(updated.updated, [{ name: dns.name, text: dns.text }]);
});

test("a suite with a mistake is an error, not a pass", () => {
  const result = svclab.runTests({ "x.svclab-test.yaml": "apiVersion: svclab.dev/v1alpha1\nkind: TestSuite\nmetadata: {name: x}\ntests:\n- name: t\n  expect: {}\n" });
  assert.equal(result.errors, 1);
  assert.equal(result.suites[0].tests[0].status, "error");
  assert.throws(() => svclab.runTests([{ name: "cluster.yaml", text: "" }]), TypeError);
  assert.equal(svclab.testSchema().properties.kind.const, "TestSuite");
});
