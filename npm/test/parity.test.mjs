// Parity of the `svclab` npm package (built by `cargo xtask npm`) with the native `svclab`
// command: the same bytes for the examples (examples/, the playground's, the guide's), the
// validation vectors and the kube-proxy golden inputs. Run by tests/npm.rs (`cargo test`), which
// passes the package directory in SVCLAB_NPM and the built command in SVCLAB_BIN.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const NPM = process.env.SVCLAB_NPM ?? path.join(root, "target/npm/svclab");
const BIN = process.env.SVCLAB_BIN ?? path.join(root, "target/debug/svclab");
const require = createRequire(path.join(root, "playground-web/js/package.json"));

assert.ok(existsSync(path.join(NPM, "package.json")), `no package at ${NPM}: run \`cargo xtask npm\``);
assert.ok(existsSync(BIN), `no svclab command at ${BIN}: run \`cargo build -p svclab-host\``);
const manifest = JSON.parse(readFileSync(path.join(NPM, "package.json"), "utf8"));
const svclab = await import(pathToFileURL(path.join(NPM, manifest.exports["."].default)).href);

/** The native command's standard output, or its error line (exit status 2). */
function cli(args, stdin) {
  try {
    return { out: execFileSync(BIN, ["--engine", "native", ...args], { input: stdin, encoding: "utf8", maxBuffer: 1 << 26 }) };
  } catch (err) {
    if (err.status === 1) return { out: err.stdout };
    return { error: String(err.stderr).replace(/^error: /, "").trimEnd() };
  }
}

/** The package's answer in the same shape. */
function js(f) {
  try {
    return { out: f() };
  } catch (err) {
    if (err instanceof svclab.SvclabError) return { error: err.message };
    throw err;
  }
}

function yamlFiles(dir) {
  return readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort().map((f) => path.join(dir, f));
}

const scenarios = [
  ...yamlFiles(path.join(root, "examples")),
  ...yamlFiles(path.join(root, "playground-web/examples")),
].map((file) => ({ label: path.relative(root, file), text: readFileSync(file, "utf8") }));

test("the package speaks the plugin ABI and keeps the WIT shapes", () => {
  assert.equal(svclab.abiVersion, 6);
  const diagnostics = svclab.diagnose([{ name: "bad.yaml", text: "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  ports: [{port: 0}]\n" }]);
  assert.equal(diagnostics[0].severity, "error");
  assert.equal(diagnostics[0].field, "spec.ports[0].port");
  assert.deepEqual(diagnostics[0].source, { file: "bad.yaml", document: 0, line: 5, column: 12 });
  const report = svclab.check([{ name: "bad.yaml", text: "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  ports: [{port: 80}]\n" }], { noDefaults: true });
  assert.equal(report.kind, "Report");
  assert.equal(report.services.length, 1);
  assert.throws(() => svclab.render("kind: Node\n", { proxyMode: "ipvs" }), TypeError);
});

test("validateAdmission answers an AdmissionReview like the command's engine", () => {
  const review = {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "0f1c",
      kind: { group: "", version: "v1", kind: "Service" },
      operation: "CREATE",
      object: { apiVersion: "v1", kind: "Service", metadata: { name: "x", namespace: "default" }, spec: { ports: [{ port: 0 }] } },
    },
  };
  const answer = svclab.validateAdmission(review);
  assert.equal(answer.response.uid, "0f1c");
  assert.equal(answer.response.allowed, false);
  assert.equal(answer.response.status.code, 422);
  assert.throws(() => svclab.validateAdmission("{not json"), (err) => err instanceof svclab.SvclabError && err.kind === "bad-input");
});

for (const { label, text } of scenarios) {
  test(`example ${label}: check, render and trace give the command's bytes`, () => {
    assert.deepEqual(js(() => svclab.checkJson([{ name: "-", text }])), cli(["check", "--output", "json", "-"], text));
    assert.deepEqual(js(() => svclab.checkJson([{ name: "-", text }], { noDefaults: true })), cli(["check", "--no-defaults", "--output", "json", "-"], text));
    for (const mode of ["iptables", "nftables"]) {
      assert.deepEqual(js(() => svclab.render([{ name: "-", text }], { proxyMode: mode })), cli(["render", "--proxy-mode", mode, "-"], text));
    }
    const report = svclab.check(text);
    const service = report.services.find((s) => s.clusterIPs.length && s.ports.length);
    if (service) {
      const port = service.ports[0];
      const options = { src: "10.244.1.5", dst: service.clusterIPs[0], dport: port.port, protocol: port.protocol.toLowerCase() };
      assert.deepEqual(
        js(() => svclab.traceJson(text, options)),
        cli(["trace", "--src", options.src, "--dst", options.dst, "--dport", String(options.dport), "--protocol", options.protocol, "--output", "json", "-"], text),
      );
    }
  });
}

// The Service policy: options of `check`, settings checks, the schema, admission options.
const policyDir = path.join(root, "tests/data/policy");
test("a policy and a requester given to check give the command's bytes", () => {
  const scenario = readFileSync(path.join(policyDir, "scenario.yaml"), "utf8");
  for (const file of readdirSync(policyDir).filter((f) => f.endsWith(".yaml") && f !== "scenario.yaml").sort()) {
    const policyFile = path.join(policyDir, file);
    const policy = { name: policyFile, text: readFileSync(policyFile, "utf8") };
    for (const userInfo of [undefined, { username: "alice", groups: ["dev", "system:masters"] }]) {
      const flags = userInfo ? ["--user", userInfo.username, ...userInfo.groups.flatMap((g) => ["--group", g])] : [];
      assert.deepEqual(
        js(() => svclab.checkJson(scenario, { policy, userInfo })),
        cli(["check", "--policy", policyFile, ...flags, "--output", "json", "-"], scenario),
        `${file} ${JSON.stringify(userInfo)}`,
      );
    }
  }
});

test("settings checks and the schema are the command's", () => {
  const typo = path.join(policyDir, "typo.yaml");
  const diagnostics = svclab.checkSettings({ name: typo, text: readFileSync(typo, "utf8") });
  assert.ok(diagnostics.length > 0);
  const lines = diagnostics.map((d) => `${typo}:${d.source.line}:${d.source.column}: ${d.message}\n`).join("");
  assert.equal(lines, cli(["policy", "check", typo], "").out);
  assert.deepEqual(svclab.checkSettings(readFileSync(path.join(policyDir, "full.yaml"), "utf8")), []);
  assert.deepEqual(svclab.settingsSchema(), JSON.parse(cli(["policy", "schema"], "").out));
});

test("validateAdmission applies the policy and the profile it is given", () => {
  const review = (spec) => ({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "1",
      kind: { group: "", version: "v1", kind: "Service" },
      operation: "CREATE",
      userInfo: { username: "alice", groups: ["dev"] },
      object: { apiVersion: "v1", kind: "Service", metadata: { name: "x", namespace: "default" }, spec },
    },
  });
  const nodePort = review({ type: "NodePort", ports: [{ port: 80 }] });
  assert.equal(svclab.validateAdmission(nodePort).response.allowed, true);
  const denied = svclab.validateAdmission(nodePort, { policy: { nodePorts: { forbid: true } } });
  assert.equal(denied.response.allowed, false);
  assert.equal(denied.response.status.code, 403);
  assert.throws(
    () => svclab.validateAdmission(nodePort, { policy: { nodePorts: { forbidd: true } } }),
    (err) => err instanceof svclab.SvclabError && err.kind === "bad-input",
  );
});

// The guide's examples, with their own command lines.
const guide = path.join(root, "docs/guide");
for (const file of readdirSync(guide).filter((f) => f.endsWith(".md")).sort()) {
  const markdown = readFileSync(path.join(guide, file), "utf8");
  const fence = /^```svclab ([^\n]*)\n([\s\S]*?)^```$/gm;
  let m;
  while ((m = fence.exec(markdown))) {
    const words = m[1].split(/\s+/).filter((w) => w && (w.startsWith("-") || !w.includes("=")));
    const text = m[2];
    const line = markdown.slice(0, m.index).split("\n").length;
    test(`guide ${file}:${line}: svclab ${words.join(" ")}`, () => {
      const [command, ...rest] = words;
      const value = (name) => rest[rest.indexOf(`--${name}`) + 1];
      if (command === "check") {
        const noDefaults = rest.includes("--no-defaults");
        assert.deepEqual(js(() => svclab.checkJson(text, { noDefaults })), cli(["check", ...(noDefaults ? ["--no-defaults"] : []), "--output", "json", "-"], text));
      } else if (command === "render") {
        assert.deepEqual(
          js(() => svclab.render(text, { proxyMode: value("proxy-mode") ?? "iptables", ipFamily: rest.includes("--ip-family") ? value("ip-family") : undefined })),
          cli([...words, "-"], text),
        );
      } else if (command === "trace") {
        const options = { src: value("src"), dst: value("dst"), dport: value("dport"), protocol: rest.includes("--protocol") ? value("protocol") : "tcp" };
        assert.deepEqual(js(() => svclab.traceJson(text, options)), cli([...words, "--output", "json", "-"], text));
      } else if (command === "test") {
        // A suite, not a scenario: `svclab doc test` checks these examples in both engines, and
        // npm/test holds runTests to the command's JSON on examples/tests.
        return;
      } else if (command === "upgrade") {
        // The package has no rehearsal: `svclab doc test` checks these examples in both engines.
        return;
      } else {
        assert.fail(`unknown command ${command}`);
      }
    });
  }
}

// The validation vectors: each vector's object (base + merge patch, and the old object for
// updates) after a ClusterProfile, as tests/validation_vectors.rs builds it.
function mergePatch(target, patch) {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return structuredClone(patch);
  const out = target && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

const { parse: parseYaml } = await import(pathToFileURL(require.resolve("yaml")).href).catch(() => ({}));
for (const name of ["vectors.yaml", "svclab-vectors.yaml", "release-vectors.yaml"]) {
  const file = path.join(root, "tests/data/validation", name);
  test(`validation vectors ${name}: check gives the command's bytes`, () => {
    assert.ok(parseYaml, "the `yaml` npm package is missing: bash scripts/setup.d/31-npm.sh");
    const doc = parseYaml(readFileSync(file, "utf8"));
    const vectors = doc.vectors ?? [];
    assert.ok(vectors.length > 0, `${name} has no vectors`);
    // One command run over all vectors (several inputs keep their documents apart by name).
    const inputs = [];
    for (const vector of vectors) {
      const base = doc.bases?.[vector.base];
      if (!base) continue;
      const object = mergePatch(base, vector.patch ?? {});
      // Per-release vectors run at their release, with --explain-release.
      const release = vector.release ?? "1.33";
      const gates = JSON.stringify(vector.gates ?? {});
      const docs = [`apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: "${release}"\nfeatureGates: ${gates}\n`];
      if (vector.op === "update") docs.push(JSON.stringify(mergePatch(base, vector.old_patch ?? {})));
      docs.push(JSON.stringify(object));
      inputs.push({ id: vector.id, text: docs.join("\n---\n"), explain: vector.release !== undefined });
    }
    assert.ok(inputs.length > 0);
    let same = 0;
    for (const { id, text, explain } of inputs) {
      for (const noDefaults of [false, true]) {
        const args = ["check", "--output", "json", ...(noDefaults ? ["--no-defaults"] : []), ...(explain ? ["--explain-release"] : []), "-"];
        const options = { noDefaults, explainRelease: explain };
        assert.deepEqual(js(() => svclab.checkJson(text, options)), cli(args, text), `vector ${id}`);
        same++;
      }
    }
    assert.equal(same, inputs.length * 2);
  });
}

// The kube-proxy goldens' inputs (Services and EndpointSlices of kube-proxy's own tests).
const proxy = path.join(root, "tests/data/proxy");
for (const dir of readdirSync(proxy).filter((d) => existsSync(path.join(proxy, d, "input.yaml"))).sort()) {
  const text = readFileSync(path.join(proxy, dir, "input.yaml"), "utf8");
  test(`proxy golden ${dir}: render gives the command's bytes`, () => {
    for (const mode of ["iptables", "nftables"]) {
      assert.deepEqual(js(() => svclab.render(text, { proxyMode: mode })), cli(["render", "--proxy-mode", mode, "-"], text));
    }
    assert.deepEqual(js(() => svclab.checkJson(text)), cli(["check", "--output", "json", "-"], text));
  });
}

test("a pasted iptables-save dump traces the same", () => {
  const dir = path.join(proxy, "trace-iptables-save");
  const inputs = [
    { name: "scenario.yaml", text: readFileSync(path.join(dir, "scenario.yaml"), "utf8") },
    { name: "iptables-save.txt", text: readFileSync(path.join(dir, "iptables-save.txt"), "utf8") },
  ];
  const report = svclab.check([inputs[0]]);
  const service = report.services.find((s) => s.clusterIPs.length && s.ports.length);
  assert.ok(service, "the scenario has a Service with a ClusterIP");
  const options = { src: "10.244.1.5", dst: service.clusterIPs[0], dport: service.ports[0].port };
  // The command reads files by name; the package gets the same names and texts.
  const args = ["trace", "--src", options.src, "--dst", options.dst, "--dport", String(options.dport), "--output", "json", ...inputs.map((i) => path.join(dir, i.name))];
  const named = inputs.map((i) => ({ name: path.join(dir, i.name), text: i.text }));
  assert.deepEqual(js(() => svclab.traceJson(named, options)), cli(args, ""));
});
