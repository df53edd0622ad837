// The package's TypeScript types (index.d.ts over jco's WIT types) type-check a consumer that
// imports `svclab` through package.json `exports`, with TypeScript (the version jco depends on),
// and reject a wrong use. Run by tests/npm.rs with SVCLAB_NPM set.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const NPM = process.env.SVCLAB_NPM ?? path.join(root, "target/npm/svclab");
const TSC = path.join(root, "playground-web/js/node_modules/.bin/tsc");

const GOOD = `import { check, checkSettings, diagnose, render, runTests, settingsSchema, trace, validateAdmission, Session, SvclabError, type Report, type TestRun } from "svclab";
import type { SvclabExample } from "svclab/element";
const report: Report = check([{ name: "a.yaml", text: "kind: Service" }], { noDefaults: true });
const severity: "error" | "warning" | "info" = diagnose("kind: Service", { policy: { nodePorts: { forbid: true } }, userInfo: { username: "ci" } })[0].severity;
const settingsErrors = checkSettings("spec: {}").length + Object.keys(settingsSchema()).length;
const rules: string = render("x", { proxyMode: "nftables", ipFamily: "IPv6" });
const walk = trace("x", { src: "10.244.1.5", dst: "10.96.0.10", dport: 53, protocol: "udp" });
const element: SvclabExample | null = document.querySelector("svclab-example");
const session = new Session({ name: "a.yaml", text: "kind: Service" }, { noDefaults: true }).edit(0, 0, "# x\\n");
const edited: Report = session.check();
session.close();
console.log(edited.services.length, session.text.length);
const run: TestRun = runTests({ "a.svclab-test.yaml": "kind: TestSuite" }, { update: true });
const status: "passed" | "failed" | "error" | undefined = run.suites[0]?.tests[0]?.status;
console.log(run.passed + run.failed + run.errors, status, run.updated?.length);
console.log(report.services.length, severity, rules, walk.outcomes[0]?.steps.length, validateAdmission("{}", { profile: { kubernetesVersion: "1.30" } }), SvclabError, element, settingsErrors);
`;

/** Type-checks `source` as a consumer of the package; tsc's output, or "" when it passes. */
function typecheck(source) {
  const dir = mkdtempSync(path.join(tmpdir(), "svclab-types-"));
  try {
    mkdirSync(path.join(dir, "node_modules"));
    symlinkSync(NPM, path.join(dir, "node_modules/svclab"), "dir");
    writeFileSync(path.join(dir, "package.json"), '{"type": "module"}\n');
    writeFileSync(path.join(dir, "use.ts"), source);
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"] },
        files: ["use.ts"],
      }),
    );
    try {
      execFileSync(TSC, ["-p", dir], { encoding: "utf8" });
      return "";
    } catch (err) {
      return `${err.stdout}${err.stderr}`;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a consumer type-checks against the package's types", () => {
  assert.ok(existsSync(TSC), `no TypeScript at ${TSC}: bash scripts/setup.d/31-npm.sh`);
  assert.equal(typecheck(GOOD), "");
});

test("a wrong use is a type error", () => {
  const output = typecheck(`${GOOD}render("x", { proxyMode: "ipvs" });\n`);
  assert.match(output, /"ipvs"/);
});
