// One instance, many calls: jco's transpiled module keeps a single instance of the component for
// every call of a page or process, while svclab's own host gives each call a fresh one. The guest
// leaves only an instance's first call's state unfreed (plugin-wasm's `leave`), so here the
// memory must stop growing after the first calls, whatever the number of calls. Run by
// tests/npm.rs with the other package tests.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const NPM = process.env.SVCLAB_NPM ?? path.join(root, "target/npm/svclab");
assert.ok(existsSync(path.join(NPM, "package.json")), `no package at ${NPM}: run \`cargo xtask npm\``);
const manifest = JSON.parse(readFileSync(path.join(NPM, "package.json"), "utf8"));
const svclab = await import(pathToFileURL(path.join(NPM, manifest.exports["."].default)).href);

/** `services` two-port Services, each with a three-endpoint EndpointSlice. */
function scenario(services) {
  let text = "";
  for (let i = 0; i < services; i++) {
    const ns = `ns-${i % 20}`;
    const ip = (k) => `10.${(i >> 8) & 255}.${i & 255}.${k + 2}`;
    text += `---
apiVersion: v1
kind: Service
metadata: {name: svc-${i}, namespace: ${ns}}
spec:
  selector: {app: app-${i}}
  ports: [{name: http, port: 80, targetPort: 8080}, {name: metrics, port: 9090}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: svc-${i}-abcde
  namespace: ${ns}
  labels: {kubernetes.io/service-name: svc-${i}}
addressType: IPv4
endpoints:
- addresses: ["${ip(0)}"]
- addresses: ["${ip(1)}"]
- addresses: ["${ip(2)}"]
ports: [{name: http, port: 8080}, {name: metrics, port: 9090}]
`;
  }
  return text;
}

test("one instance serves call after call without keeping their state", () => {
  // A call's state here is about 10 MiB: twelve calls that kept theirs would add over 100 MiB.
  const text = scenario(2000);
  for (let i = 0; i < 3; i++) assert.deepEqual(svclab.diagnose(text), []);
  const before = process.memoryUsage().rss;
  for (let i = 0; i < 12; i++) assert.deepEqual(svclab.diagnose(text), []);
  const grown = process.memoryUsage().rss - before;
  assert.ok(grown < 32 << 20, `resident memory grew by ${(grown / (1 << 20)).toFixed(1)} MiB over 12 calls`);
});
