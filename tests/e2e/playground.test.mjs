// End-to-end tests of the svclab playground in real headless Chromium (Debian's
// /usr/bin/chromium) driven by playwright-core. Run by tests/e2e.rs (`cargo test`), which
// builds the site, starts `cargo xtask serve` and passes its URL in SVCLAB_URL.
//
// Besides asserting, the run measures a cold load (bytes transferred and uncompressed), the time
// to the first result, the re-evaluation time of a 50-Service scenario and how many results
// twelve fast keystrokes into a 2,000-Service scenario painted, and saves light, dark,
// phone-width, embed, typed-into-2,000-Services and 250-errors screenshots into SVCLAB_SHOTS.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { launchProfile, pasteIntoEditor, watchPage } from "../chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

const URL_BASE = process.env.SVCLAB_URL ?? "http://127.0.0.1:8080/";
const SHOTS = process.env.SVCLAB_SHOTS ?? path.join(here, "../../target/e2e");
const ORIGIN = new URL(URL_BASE).origin;
mkdirSync(SHOTS, { recursive: true });

const metrics = {};
const problems = []; // console errors, page errors, requests leaving the origin
let context;
let closeBrowser;

function watch(page, label) {
  return watchPage(page, label, ORIGIN, problems);
}

async function newPage(label, viewport = { width: 1400, height: 900 }) {
  const page = watch(await context.newPage(), label);
  await page.setViewportSize(viewport);
  return page;
}

async function evaluations(page) {
  return Number(await page.getAttribute("#status", "data-evaluations"));
}

async function waitForEvaluation(page, before) {
  await page.waitForFunction(
    (n) => Number(document.querySelector("#status")?.getAttribute("data-evaluations")) > n,
    before,
    { timeout: 10000 },
  );
}

async function editorText(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll(".cm-content .cm-line")].map((l) => l.textContent).join("\n"),
  );
}

async function streamText(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/// What has the focus: an id, `cm-content` for the editor, else the tag name.
function focused() {
  const el = document.activeElement;
  return el?.id || (el?.classList.contains("cm-content") ? "cm-content" : el?.tagName);
}

/// Pastes `text` over the editor's text and waits (up to a minute: a cluster-sized paste) for
/// its evaluation.
async function pasteScenario(page, text) {
  const n = await evaluations(page);
  await pasteIntoEditor(page, text);
  await page.waitForFunction(
    (n) => Number(document.querySelector("#status")?.getAttribute("data-evaluations")) > n,
    n,
    { timeout: 60000 },
  );
}

/// Replaces the editor text the way a user pastes it, and waits for the re-evaluation.
async function typeScenario(page, text) {
  const n = await evaluations(page);
  await page.click(".cm-content");
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(text);
  await waitForEvaluation(page, n);
}

/// Puts the editor's cursor before the last character of `text` (the editor's search selects
/// it, Escape closes the search with the selection kept, ArrowRight goes to its end).
async function cursorBeforeLastOf(page, text) {
  await page.keyboard.press("Control+F");
  // Typed: the search field reads its query on key events.
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
  await page.keyboard.press("Escape");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowLeft");
}

/// 1-based line number of the line holding `selector` in the editor.
async function editorLineOf(page, selector) {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    const line = el?.closest(".cm-line");
    if (!line) return -1;
    return [...document.querySelectorAll(".cm-content .cm-line")].indexOf(line) + 1;
  }, selector);
}

before(async () => {
  ({ context, close: closeBrowser } = await launchProfile("e2e"));
});

after(async () => {
  await closeBrowser?.();
  writeFileSync(path.join(SHOTS, "metrics.json"), JSON.stringify(metrics, null, 2) + "\n");
  console.log(`METRICS ${JSON.stringify(metrics)}`);
});

const MANIFEST = `apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
serviceClusterIPRanges: ["10.96.0.0/24"]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  clusterIP: 10.96.0.10
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: dns}
spec:
  clusterIP: 10.96.0.10
  ports: [{port: 53, protocol: UDP}]
`;
const DUPLICATE_LINE = 16;

test("cold load: first result, transferred bytes, light screenshot", async () => {
  const page = await newPage("cold");
  await page.emulateMedia({ colorScheme: "light" });
  const responses = [];
  page.on("response", (r) => responses.push(r));
  await page.goto(URL_BASE);
  await page.waitForSelector("#status", { timeout: 15000 });
  metrics.firstResultMs = Math.round(await page.evaluate(() => performance.now()));
  await page.waitForLoadState("networkidle");
  let transferred = 0;
  let uncompressed = 0;
  const files = {};
  for (const r of responses) {
    const sizes = await r.request().sizes();
    const body = await r.body().catch(() => Buffer.alloc(0));
    transferred += sizes.responseBodySize + sizes.responseHeadersSize;
    uncompressed += body.length;
    files[new URL(r.url()).pathname] = { transferred: sizes.responseBodySize, bytes: body.length };
  }
  metrics.coldLoad = { requests: responses.length, transferredBytes: transferred, uncompressedBytes: uncompressed, files };
  assert.ok(await page.isVisible("#allocation-table"), "the allocation table shows on load");
  assert.equal(await page.getAttribute("html", "data-theme"), "light");
  await page.screenshot({ path: path.join(SHOTS, "playground-light.png") });
  assert.ok(metrics.firstResultMs < 5000, `first result took ${metrics.firstResultMs} ms`);
  await page.close();
});

test("type a manifest: allocation, error marker on the right line, jump from the diagnostic", async () => {
  const page = await newPage("type");
  await page.goto(URL_BASE);
  await page.waitForSelector("#status");
  await typeScenario(page, MANIFEST);
  await page.click("#tab-allocations");
  const table = await page.innerText("#allocation-table");
  assert.match(table, /default\/web\s+ClusterIP\s+created\s+10\.96\.0\.10/);
  assert.match(table, /default\/dns\s+ClusterIP\s+rejected/);
  await page.waitForSelector(".cm-lintRange-error");
  assert.equal(await editorLineOf(page, ".cm-lintRange-error"), DUPLICATE_LINE);
  assert.ok(await page.$(".cm-lint-marker-error"), "a gutter marker is drawn");

  await page.click("#tab-diagnostics");
  const item = page.locator(`button.diag.error[data-line="${DUPLICATE_LINE}"]`);
  assert.match(await item.innerText(), /spec\.clusterIPs: Invalid value: .*provided IP is already allocated/);
  assert.match(await page.innerText(".diagnostics"), /The Service "dns" is invalid:/);
  await page.click("#tab-allocations"); // move the cursor away, then jump back with the keyboard
  await page.click("#tab-diagnostics");
  await item.focus();
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.activeElement?.classList.contains("cm-content"));
  assert.equal(await editorLineOf(page, ".cm-activeLine"), DUPLICATE_LINE);
  await page.close();
});

test("share link restores the same state in a fresh page; malformed links say so", async () => {
  const page = await newPage("share");
  await page.goto(URL_BASE);
  await page.waitForSelector("#status");
  await typeScenario(page, MANIFEST);
  await page.click("#tab-diagnostics");
  await page.click("#share");
  const link = await page.inputValue("#share-link");
  assert.match(link, /#v1\.[A-Za-z0-9_-]+$/);
  const text = await editorText(page);
  const diagnostics = await page.innerText(".diagnostics");
  await page.click("#embed-snippet");
  assert.match(await page.inputValue("#snippet-text"), /^<iframe src="http:[^"]*\?embed#v1\.[A-Za-z0-9_-]+" /);
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-report")]);
  assert.equal(download.suggestedFilename(), "svclab-report.json");
  const report = JSON.parse(await streamText(await download.createReadStream()));
  assert.equal(report.kind, "Report");
  assert.deepEqual(report.services.map((s) => s.outcome), ["created", "rejected"]);
  const [rules] = await Promise.all([page.waitForEvent("download"), page.click("#download-iptables")]);
  assert.match(await streamText(await rules.createReadStream()), /^\*filter$/m);
  // Export as test: a suite of the editor's scenario with what the panels show as expectations.
  const [exported] = await Promise.all([page.waitForEvent("download"), page.click("#export-test")]);
  assert.equal(exported.suggestedFilename(), "playground.svclab-test.yaml");
  const suite = await streamText(await exported.createReadStream());
  assert.match(suite, /^kind: TestSuite$/m);
  assert.match(suite, /^    - ref: Service default\/web\n      outcome: created\n      clusterIPs: \[10\.96\.0\.10\]$/m);
  assert.match(suite, /^    - ref: Service default\/dns\n      outcome: rejected\n/m);

  const fresh = await newPage("shared");
  await fresh.goto(link);
  await fresh.waitForSelector("#status");
  assert.equal(await editorText(fresh), text);
  assert.equal(await fresh.getAttribute("#panel", "data-tab"), "diagnostics");
  assert.equal(await fresh.innerText(".diagnostics"), diagnostics);

  await fresh.goto(`${URL_BASE}?embed${new URL(link).hash}`);
  await fresh.waitForSelector("#status");
  assert.equal(await editorText(fresh), text);
  assert.equal(await fresh.getAttribute(".cm-content", "contenteditable"), "false", "the embed view is read-only");
  await fresh.screenshot({ path: path.join(SHOTS, "playground-embed.png") });

  const broken = await newPage("broken-link");
  await broken.goto(`${URL_BASE}#v1.this-is-not*deflate`);
  await broken.waitForSelector("#notice");
  assert.match(await broken.innerText("#notice"), /share link could not be opened: .*default example/);
  assert.match(await editorText(broken), /kind: ClusterProfile/);
  await Promise.all([page.close(), fresh.close(), broken.close()]);
});

test("1.24: switching ServiceIPStaticSubrange changes the bands", async () => {
  const page = await newPage("gate");
  await page.goto(URL_BASE);
  await page.waitForSelector("#status");
  let n = await evaluations(page);
  await page.selectOption("#examples", "gate-off-1-24");
  await waitForEvaluation(page, n);
  await page.click("#tab-allocations");
  assert.equal(await page.inputValue("#profile-version"), "1.24");
  assert.equal(await page.getAttribute("#range-map-0 .bar", "data-static-band"), "false");
  n = await evaluations(page);
  await page.check("#gate-static-subrange");
  await waitForEvaluation(page, n);
  assert.equal(await page.getAttribute("#range-map-0 .bar", "data-static-band"), "true");
  assert.match(await editorText(page), /^featureGates: \{ServiceIPStaticSubrange: true\}$/m);
  // Newer releases lock the gate on (GA in 1.26).
  n = await evaluations(page);
  await page.selectOption("#profile-version", "1.26");
  await waitForEvaluation(page, n);
  assert.ok(await page.isDisabled("#gate-static-subrange"));
  assert.match(await editorText(page), /^kubernetesVersion: "1\.26"$/m);
  await page.close();
});

test("rules side by side and a packet trace", async () => {
  const page = await newPage("rules");
  await page.goto(URL_BASE);
  await page.waitForSelector("#status");
  const n = await evaluations(page);
  await page.selectOption("#examples", "iptables-vs-nftables");
  await waitForEvaluation(page, n);
  await page.click("#tab-rules");
  const iptables = await page.innerText("#ruleset-iptables");
  const nftables = await page.innerText("#ruleset-nftables");
  assert.match(iptables, /KUBE-SERVICES/);
  assert.match(nftables, /table ip kube-proxy|kube-proxy/);
  const link = page.locator("#ruleset-iptables a.chain-link").first();
  const chain = (await link.innerText()).trim();
  await link.click();
  await page.waitForFunction(() => document.activeElement?.classList.contains("def"));
  assert.ok((await page.evaluate(() => document.activeElement.textContent)).includes(chain));
  await page.fill("#rules-filter", "default/web");
  await page.press("#rules-filter", "Enter");
  assert.ok((await page.innerText("#ruleset-iptables")).includes("default/web"));

  await page.click("#tab-trace");
  await page.fill("#trace-src", "10.244.9.9");
  await page.click("#trace-run");
  await page.waitForSelector("#trace-result");
  const result = await page.innerText("#trace-result");
  assert.match(result, /Outcome 1 \(p = 0\.5000\): endpoint 10\.244\.\d+\.40:8080/, result);
  assert.match(result, /KUBE-SVC-/);

  // Before 1.29 kube-proxy has no nftables mode: the pane says so instead of staying blank.
  await page.click("#tab-rules");
  const m = await evaluations(page);
  await page.selectOption("#profile-version", "1.28");
  await waitForEvaluation(page, m);
  assert.match(await page.innerText("#ruleset-nftables-refused"), /refuses --proxy-mode nftables/);
  assert.match(await page.innerText("#ruleset-iptables"), /KUBE-SERVICES/);
  assert.match(await page.innerText("#rules-figures"), /no nftables rules at this release/);
  await page.screenshot({ path: path.join(SHOTS, "playground-rules-1.28.png") });
  await page.close();
});

const UPGRADE = `apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: "1.27"
featureGates: {ServiceIPStaticSubrange: true}
serviceClusterIPRanges: ["10.96.0.0/24"]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  clusterIP: 10.96.0.10
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-1
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
ports: [{port: 8080, protocol: TCP}]
endpoints:
- addresses: [10.244.1.5]
  conditions: {ready: true}
`;

test("compare: findings, rules side by side with changed lines marked, the share link keeps the comparison", async () => {
  const page = await newPage("compare");
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(URL_BASE);
  await page.waitForSelector("#status");
  await typeScenario(page, UPGRADE);
  await page.click("#tab-compare");
  // The first target is the newest release, kube-proxy's mode and the ranges kept.
  await page.waitForSelector("#compare-findings");
  assert.equal(await page.inputValue("#compare-to"), "1.37");
  const gate = page.locator('#compare-findings tr.finding[data-area="featureGates"][data-severity="breaks"]');
  assert.equal(await gate.count(), 1);
  assert.match(await gate.innerText(), /kube-apiserver 1\.37 does not start: .*unrecognized feature gate: ServiceIPStaticSubrange/);
  assert.match(await gate.locator(".upstream").innerText(), /^feature gate ServiceIPStaticSubrange: .*removed in 1\.37 \(pkg\/features\/kube_features\.go/);
  assert.match(await page.innerText("#compare-summary"), /^1 break · \d+ changes · \d+ notes? — svclab upgrade would exit with 1$/);
  // iptables at 1.27 and at 1.37: the one changed line faces its new self (1.37 always writes
  // --random-fully), the rest is unchanged or folded.
  const removed = await page.locator("#rules-diff-0 td.removed").allInnerTexts();
  const added = await page.locator("#rules-diff-0 td.added").allInnerTexts();
  assert.deepEqual(removed, ['-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE']);
  assert.deepEqual(added, ['-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully']);
  assert.match(await page.innerText("#rules-diff-0"), /⋯ \d+ unchanged lines/);
  await page.locator("#rules-diff-0 td.added").scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(SHOTS, "playground-compare-rules.png") });

  // Switch kube-proxy to nftables and move the ClusterIP range.
  await page.selectOption("#compare-mode", "nftables");
  await page.waitForFunction(() => document.querySelector(".diff-pane h4")?.textContent.includes("iptables → nftables"));
  await page.fill("#compare-cidrs", "10.100.0.0/24");
  await page.press("#compare-cidrs", "Enter");
  await page.waitForSelector('#compare-findings tr.finding[data-area="ranges"]');
  const recreate = page.locator('#compare-findings tr.finding[data-area="ranges"][data-severity="breaks"]');
  assert.match(await recreate.innerText(), /recreate the Service: kubectl delete service web: service "web" deleted; .*failed to allocate IP 10\.96\.0\.10: the provided network does not match the current range/);
  assert.match(await page.innerText("#compare-sides"), /^from 1\.27 \(1\.27\.\d+\) · iptables · 10\.96\.0\.0\/24 .*\nto 1\.37 \(1\.37\.\d+\) · nftables · 10\.100\.0\.0\/24 /);
  const nft = (await page.locator("#rules-diff-0 td.added").allInnerTexts()).join("\n");
  assert.match(nft, /^add table ip kube-proxy/m);
  assert.match(nft, /default\/web/);
  await page.screenshot({ path: path.join(SHOTS, "playground-compare.png") });
  const result = await page.innerText("#compare-result");

  await page.click("#share");
  const link = await page.inputValue("#share-link");
  const fresh = await newPage("compare-shared");
  await fresh.emulateMedia({ colorScheme: "light" });
  await fresh.goto(link);
  await fresh.waitForSelector("#compare-result");
  assert.equal(await fresh.getAttribute("#panel", "data-tab"), "compare");
  assert.equal(await fresh.inputValue("#compare-to"), "1.37");
  assert.equal(await fresh.inputValue("#compare-mode"), "nftables");
  assert.equal(await fresh.inputValue("#compare-cidrs"), "10.100.0.0/24");
  assert.equal(await fresh.innerText("#compare-result"), result);
  await Promise.all([page.close(), fresh.close()]);
});

test("a Service policy: rule ids and severities in the diagnostics, markers on the offending lines", async () => {
  const page = await newPage("policy");
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(URL_BASE);
  await page.waitForSelector("#status");
  const n = await evaluations(page);
  await page.selectOption("#examples", "policy-external-ips");
  await waitForEvaluation(page, n);
  const lines = (await editorText(page)).split("\n");
  const offending = lines.findIndex((l) => l.includes("externalIPs: [203.0.113.9]")) + 1;
  assert.ok(offending > 0, "the example writes the outside address");

  await page.click("#tab-diagnostics");
  const denied = page.locator('.diag.error[data-reason="policy:externalIPs.allowedCIDRs"]');
  assert.equal(await denied.count(), 1);
  assert.equal(Number(await denied.getAttribute("data-line")), offending);
  const deniedText = await denied.innerText();
  assert.match(deniedText, /spec\.externalIPs\[0\]: Forbidden: "203\.0\.113\.9" is outside the allowed ranges 192\.0\.2\.0\/24/);
  assert.match(deniedText, /policy:externalIPs\.allowedCIDRs/, "the rule id is shown");
  assert.match(await page.innerText(".diagnostics"), /The Service "outside" is forbidden by the Service policy:/);
  // Without a requester the user rule is skipped, said as an info, never a silent pass.
  const skipped = page.locator('.diag.info[data-reason="policy:skipped"]');
  assert.ok((await skipped.count()) >= 1, "a skipped rule is listed");
  assert.match(await skipped.first().innerText(), /externalIPs\.allowedGroups: skipped: needs/);
  assert.match(await page.innerText("#status"), / · \d+ info · /);

  await page.waitForSelector(".cm-lintRange-error");
  assert.equal(await editorLineOf(page, ".cm-lintRange-error"), offending);
  assert.ok(await page.$(".cm-lintRange-info"), "infos are info markers");
  await page.screenshot({ path: path.join(SHOTS, "playground-policy.png") });

  // Every policy example evaluates with its settings valid and denies something.
  for (const id of ["policy-node-ports", "policy-load-balancer", "policy-static-band", "policy-external-name", "policy-endpoint-slices"]) {
    const before = await evaluations(page);
    await page.selectOption("#examples", id);
    await waitForEvaluation(page, before);
    assert.ok((await page.locator('.diag.error[data-reason^="policy:"]').count()) >= 1, `${id} denies something`);
  }
  await page.close();
});

/// A ClusterProfile and `count` Services spread over `namespaces` namespaces, every tenth a
/// NodePort, the i-th named `name(i)`.
function servicesScenario(count, namespaces, name = (i) => `svc-${i}`) {
  const services = [];
  for (let i = 0; i < count; i++) {
    services.push(`apiVersion: v1
kind: Service
metadata: {name: ${name(i)}, namespace: team-${i % namespaces}}
spec:
  type: ${i % 10 === 0 ? "NodePort" : "ClusterIP"}
  selector: {app: svc-${i}}
  ports: [{name: http, port: 80, targetPort: 8080}, {name: metrics, port: 9090}]`);
  }
  return `apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
serviceClusterIPRanges: ["10.96.0.0/16"]
seed: 7
---
${services.join("\n---\n")}
`;
}

test("50 Services: re-evaluation time measured in the page", async () => {
  const page = await newPage("fifty");
  await page.goto(URL_BASE);
  await page.waitForSelector("#status");
  const base = servicesScenario(50, 5);
  const times = [];
  for (let round = 0; round < 6; round++) {
    await typeScenario(page, base.replace("seed: 7", `seed: ${7 + round}`));
    times.push(Number(await page.getAttribute("#status", "data-eval-ms")));
  }
  assert.match(await page.innerText("#status"), /^50 Services · 0 errors/);
  times.sort((a, b) => a - b);
  metrics.reevaluation50 = { medianMs: times[Math.floor(times.length / 2)], maxMs: times[times.length - 1], samplesMs: times };
  await page.close();
});

test("2,000 Services: typing in the middle lands every key, results coalesce, the last result is the last text's", async () => {
  const page = await newPage("large");
  await page.goto(URL_BASE);
  await page.waitForSelector("#status");
  const text = servicesScenario(2000, 20, (i) => (i === 1000 ? "middle" : `svc-${i}`));
  // A paste, as a user's: one clipboard event with the whole text.
  await page.click("#tab-diagnostics");
  await pasteScenario(page, text);
  assert.match(await page.innerText("#status"), /^2000 Services · 0 errors/);

  // The cursor to the end of the middle Service's name (the editor's search selects it), then
  // twelve keys as fast as the keyboard sends them. The name they leave is invalid (upper
  // case), so the last text's result is one diagnostic that names it; the names typed on the
  // way (`middle-`, `middle-renamed-A`, ...) would each have had their own.
  await cursorBeforeLastOf(page, "name: middle,");
  const n = await evaluations(page);
  const typed = "-renamed-ABC";
  await page.keyboard.type(typed);
  // The editor took every key, in order.
  const lines = (await editorText(page)).split("\n");
  const edited = lines.filter((l) => l.includes("name: middle"));
  assert.deepEqual(edited, [`metadata: {name: middle${typed}, namespace: team-0}`]);
  // The result for the final text arrives...
  await page.waitForFunction(
    (name) => document.querySelector(".diagnostics")?.innerText.includes(name),
    `"middle${typed}"`,
    { timeout: 60000 },
  );
  // ... and is the last one: nothing else is on its way.
  const afterLast = await evaluations(page);
  await page.waitForTimeout(1500);
  assert.equal(await evaluations(page), afterLast, "a result was painted after the last text's");
  assert.match(await page.innerText("#status"), /^2000 Services · 1 error/);
  const errors = page.locator("button.diag.error");
  assert.equal(await errors.count(), 1);
  assert.match(await errors.innerText(), new RegExp(`metadata\\.name: Invalid value: "middle${typed}"`));
  assert.equal(
    Number(await errors.getAttribute("data-line")),
    text.split("\n").findIndex((l) => l.includes("name: middle,")) + 1,
    "the diagnostic points at the typed line",
  );
  // Edits coalesced: fewer results than keys.
  const painted = afterLast - n;
  assert.ok(painted >= 1 && painted < typed.length, `${painted} results for ${typed.length} keys`);
  metrics.typing2000 = { keys: typed.length, resultsPainted: painted, evalMs: Number(await page.getAttribute("#status", "data-eval-ms")) };
  await page.screenshot({ path: path.join(SHOTS, "playground-2000-typed.png") });
  await page.close();
});

test("250 invalid Services: the diagnostics list draws 200 and shows the rest on demand", async () => {
  const page = await newPage("many-errors");
  await page.goto(URL_BASE);
  await page.waitForSelector("#status");
  await page.click("#tab-diagnostics");
  // Upper case is not a DNS-1035 label: one error per Service.
  await pasteScenario(page, servicesScenario(250, 5, (i) => `Bad-${i}`));
  assert.match(await page.innerText("#status"), /^250 Services · 250 errors/);
  assert.match(await page.innerText("#errors-heading"), /Errors \(250\)/);
  const errors = page.locator("button.diag.error");
  assert.equal(await errors.count(), 200);
  assert.match(await page.innerText("#errors-more"), /^Show 50 more \(200 of 250 shown\)$/);
  await page.locator("#errors-more").scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(SHOTS, "playground-250-errors.png") });
  await page.click("#errors-more");
  assert.equal(await errors.count(), 250);
  assert.equal(await page.locator("#errors-more").count(), 0);
  // The last one is the last Service's, and still goes to its line.
  await errors.last().click();
  assert.match(await errors.last().innerText(), /"Bad-249"/);
  await page.close();
});

test("1,200 Services: each ruleset draws 500 lines and the rest on demand, and follows typing", async () => {
  const page = await newPage("many-rules");
  await page.goto(URL_BASE);
  await page.waitForSelector("#status");
  await pasteScenario(page, servicesScenario(1200, 5));
  await page.click("#tab-rules");
  await page.waitForSelector("#ruleset-iptables .rule");
  const lines = page.locator("#ruleset-iptables .rule");
  assert.equal(await lines.count(), 500);
  const more = await page.innerText("#ruleset-iptables-more");
  const total = Number(/^Show 500 more lines \(500 of (\d+) shown\)$/.exec(more)?.[1]);
  assert.ok(total > 2000 && total <= 4000, more);
  for (let shown = 500; shown < total; shown += 500) {
    await page.click("#ruleset-iptables-more");
    assert.equal(await lines.count(), Math.min(shown + 500, total));
  }
  assert.equal(await page.locator("#ruleset-iptables-more").count(), 0);
  // The last Service's rules are among the lines drawn now.
  assert.match(await page.innerText("#ruleset-iptables"), /team-4\/svc-1199/);

  // Typing with the panel open: the result comes first, the rulesets after it (in steps, the
  // panel showing the last ones meanwhile), and they are the typed text's.
  await page.click(".cm-content");
  await cursorBeforeLastOf(page, "name: svc-1199,");
  await page.keyboard.type("-renamed");
  // The filter suggests the new name once the typed text's rulesets are in (its suggestions
  // are made once it is focused).
  await page.focus("#rules-filter");
  await page.waitForSelector('#rules-services option[value="team-4/svc-1199-renamed"]', { state: "attached", timeout: 60000 });
  await page.fill("#rules-filter", "team-4/svc-1199-renamed");
  await page.press("#rules-filter", "Enter");
  await page.waitForFunction(
    () => document.querySelector("#ruleset-iptables")?.innerText.includes("team-4/svc-1199-renamed:http"),
    null,
    { timeout: 60000 },
  );
  assert.equal(await page.locator("#rules-updating").count(), 0, "the rulesets are the text's");
  assert.equal(await page.locator('#rules-services option[value="team-4/svc-1199"]').count(), 0);
  await page.screenshot({ path: path.join(SHOTS, "playground-1200-rules-typed.png") });
  await page.close();
});

test("past VS Code's large-file line (300,000 lines) the editor stops highlighting YAML, and starts again below it", async () => {
  const page = await newPage("large-file");
  await page.goto(URL_BASE);
  await page.waitForSelector("#status");
  // Highlighted tokens are spans inside the editor's lines (lint ranges aside).
  const highlighted = () =>
    page.evaluate(() => document.querySelectorAll(".cm-line span:not(.cm-lintRange)").length);
  assert.ok((await highlighted()) > 0, "the example is highlighted");
  const small = servicesScenario(3, 1);
  const paste = async (text) => {
    await pasteScenario(page, text);
    await page.keyboard.press("Control+Home");
  };
  await paste(`${small}\n${"#\n".repeat(300000)}`);
  assert.match(await page.innerText("#status"), /^3 Services · 0 errors/);
  await page.waitForFunction(() => document.querySelector(".cm-line")?.textContent.startsWith("apiVersion"));
  assert.equal(await highlighted(), 0, "a 300,001-line text is not highlighted");
  await paste(small);
  await page.waitForFunction(() => document.querySelectorAll(".cm-line span:not(.cm-lintRange)").length > 0);
  await page.close();
});

test("dark theme (system and toggle), phone width, keyboard", async () => {
  const page = await newPage("dark");
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(URL_BASE);
  await page.waitForSelector("#status");
  assert.equal(await page.getAttribute("html", "data-theme"), "light");
  await page.emulateMedia({ colorScheme: "dark" }); // the page follows the system
  await page.waitForFunction(() => document.documentElement.dataset.theme === "dark");
  await page.screenshot({ path: path.join(SHOTS, "playground-dark.png") });
  // Keyboard: from the top of the page, Tab reaches the examples menu, the share button and
  // the editor; inside the editor Tab indents, and Escape then Tab leaves it.
  const reached = [];
  for (let i = 0; i < 12 && !reached.includes("cm-content"); i++) {
    await page.keyboard.press("Tab");
    reached.push(await page.evaluate(focused));
  }
  assert.ok(reached.includes("examples") && reached.includes("share") && reached.includes("cm-content"), reached.join(","));
  await page.keyboard.press("Escape");
  await page.keyboard.press("Tab");
  assert.notEqual(await page.evaluate(focused), "cm-content");
  await page.click("#theme-toggle");
  assert.equal(await page.getAttribute("html", "data-theme"), "light");
  await page.click("#theme-toggle");
  assert.equal(await page.getAttribute("html", "data-theme"), "dark");

  const phone = await newPage("phone", { width: 390, height: 844 });
  await phone.emulateMedia({ colorScheme: "dark" });
  await phone.goto(URL_BASE);
  await phone.waitForSelector("#status");
  await phone.screenshot({ path: path.join(SHOTS, "playground-phone.png"), fullPage: true });
  const overflow = await phone.evaluate(() => {
    const wide = [...document.querySelectorAll("body *")]
      .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
      .map((e) => e.id || e.className || e.tagName);
    return { by: document.documentElement.scrollWidth - window.innerWidth, wide: wide.slice(0, 5) };
  });
  assert.ok(overflow.by <= 1, `the page scrolls sideways by ${overflow.by}px at phone width: ${overflow.wide}`);
  await Promise.all([page.close(), phone.close()]);
});

test("no console errors and no request left the page's origin", () => {
  assert.deepEqual(problems, []);
});
