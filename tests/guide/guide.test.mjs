// The guide in real headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core):
// every page's <svclab-example> elements render live, in light and dark, without layout shift,
// and nothing leaves the origin; without JavaScript the scenario and the checked output show.
// Run by tests/guide.rs (`cargo test`), which builds the guide (`cargo xtask docs`), serves it
// and passes its URL in SVCLAB_URL. Screenshots and figures land in SVCLAB_SHOTS.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { launchBrowser, launchProfile, watchPage } from "../chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "../..");

const URL_BASE = process.env.SVCLAB_URL ?? "http://127.0.0.1:8080/";
const SHOTS = process.env.SVCLAB_SHOTS ?? path.join(root, "target/guide-e2e");
const ORIGIN = new URL(URL_BASE).origin;
mkdirSync(SHOTS, { recursive: true });

// The pages of SUMMARY.md, in order.
const PAGES = [...readFileSync(path.join(root, "docs/guide/SUMMARY.md"), "utf8").matchAll(/^- \[[^\]]*\]\(([^)]+)\.md\)/gm)].map((m) => `${m[1]}.html`);

const metrics = {};
const problems = [];
let context;
let closeBrowser;

function watch(page, label) {
  return watchPage(page, label, ORIGIN, problems);
}

before(async () => {
  ({ context, close: closeBrowser } = await launchProfile("guide"));
});

after(async () => {
  await closeBrowser?.();
  writeFileSync(path.join(SHOTS, "metrics.json"), JSON.stringify(metrics, null, 2) + "\n");
  console.log(`METRICS ${JSON.stringify(metrics)}`);
});

/** Loads a page and waits until every example has rendered (or failed); their states. */
async function load(page, name, scheme) {
  await page.emulateMedia({ colorScheme: scheme });
  // Layout shifts are recorded from the start (buffered entries of the page's lifetime).
  await page.goto(new URL(`guide/${name}`, URL_BASE).href, { waitUntil: "load" });
  await page.waitForFunction(
    () => [...document.querySelectorAll("svclab-example")].every((e) => ["rendered", "failed"].includes(e.dataset.svclabState)),
    null,
    { timeout: 20000 },
  );
  return page.evaluate(() => ({
    states: [...document.querySelectorAll("svclab-example")].map((e) => e.dataset.svclabState),
    errors: [...document.querySelectorAll("svclab-example .svclab-failure")].map((e) => e.textContent),
    firstRenderMs: globalThis.__svclabFirstRenderMs ?? null,
  }));
}

async function layoutShift(page) {
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        let total = 0;
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries()) if (!entry.hadRecentInput) total += entry.value;
        }).observe({ type: "layout-shift", buffered: true });
        setTimeout(() => resolve(total), 300);
      }),
  );
}

test("every guide page renders all of its examples live", async () => {
  assert.ok(PAGES.length >= 10, `SUMMARY.md lists ${PAGES.length} pages`);
  const page = watch(await context.newPage(), "guide");
  await page.setViewportSize({ width: 1300, height: 900 });
  let examples = 0;
  for (const name of PAGES) {
    const { states, errors, firstRenderMs } = await load(page, name, "light");
    // The first page of a fresh browser profile: nothing cached yet.
    metrics.firstRenderedExampleMs_cold ??= Math.round(firstRenderMs);
    assert.deepEqual(errors, [], `${name}: examples failed`);
    assert.ok(states.every((s) => s === "rendered"), `${name}: ${states}`);
    examples += states.length;
    await page.screenshot({ path: path.join(SHOTS, `page-${name.replace(/\.html$/, "")}.png`), fullPage: true });
  }
  metrics.examples = examples;
  assert.ok(examples >= 20, `only ${examples} examples in the guide`);
  await page.close();
  assert.deepEqual(problems, []);
});

test("a page with several examples renders them in light and dark, without layout shift", async () => {
  for (const scheme of ["light", "dark"]) {
    const page = watch(await context.newPage(), `bands-${scheme}`);
    await page.setViewportSize({ width: 1300, height: 900 });
    const { states, firstRenderMs } = await load(page, "static-dynamic-bands.html", scheme);
    assert.ok(states.length >= 2 && states.every((s) => s === "rendered"), String(states));
    metrics[`firstRenderedExampleMs_${scheme}`] = Math.round(firstRenderMs);
    metrics[`layoutShift_${scheme}`] = await layoutShift(page);
    // Live views, not the pre-rendered text: the allocation table and the range bar.
    assert.ok((await page.locator("svclab-example .svclab-track").count()) >= 2);
    const rejected = await page.locator("svclab-example tr.rejected").count();
    assert.ok(rejected >= 1, "the 1.24 collision shows kube-dns rejected");
    const background = await page.evaluate(() => getComputedStyle(document.querySelector("svclab-example")).backgroundColor);
    assert.equal(background, scheme === "dark" ? "rgb(34, 38, 46)" : "rgb(255, 255, 255)");
    // The share link carries the playground's fragment.
    const href = await page.getAttribute("svclab-example .svclab-open", "href");
    assert.match(href, /^\.\.\/#v1\.[A-Za-z0-9_-]+$/);
    await page.screenshot({ path: path.join(SHOTS, `guide-bands-${scheme}.png`), fullPage: true });
    await page.close();
  }
  assert.ok(metrics.layoutShift_light < 0.01, `layout shift ${metrics.layoutShift_light}`);
  assert.deepEqual(problems, []);
});

test("rules and trace examples render, and the theme attribute wins", async () => {
  const page = watch(await context.newPage(), "trace");
  await page.setViewportSize({ width: 1300, height: 900 });
  await load(page, "trace.html", "light");
  assert.ok((await page.locator("svclab-example .svclab-outcome").count()) >= 2);
  await page.evaluate(() => document.querySelector("svclab-example").setAttribute("theme", "dark"));
  const background = await page.evaluate(() => getComputedStyle(document.querySelector("svclab-example")).backgroundColor);
  assert.equal(background, "rgb(34, 38, 46)");
  await page.screenshot({ path: path.join(SHOTS, "guide-trace-mixed.png"), fullPage: true });
  await load(page, "kube-proxy.html", "dark");
  const rules = await page.locator("svclab-example .svclab-rules").allTextContents();
  assert.ok(rules.some((r) => r.includes("KUBE-SVC-")) && rules.some((r) => r.includes("table ip kube-proxy")));
  await page.screenshot({ path: path.join(SHOTS, "guide-kube-proxy-dark.png") });
  await page.close();
  assert.deepEqual(problems, []);
});

test("a hand-written element with only a scenario renders and links to the playground", async () => {
  const page = watch(await context.newPage(), "hand-written");
  await page.goto(new URL("guide/index.html", URL_BASE).href);
  await page.evaluate(() => {
    const el = document.createElement("svclab-example");
    el.id = "hand";
    el.setAttribute("show", "diagnostics");
    el.setAttribute("profile", "1.36");
    el.textContent = "\n  apiVersion: v1\n  kind: Service\n  metadata: {name: legacy}\n  spec:\n    clusterIP: 10.096.0.050\n    ports: [{port: 80}]\n";
    document.querySelector("main").prepend(el);
  });
  await page.waitForFunction(() => document.getElementById("hand")?.dataset.svclabState === "rendered");
  const text = await page.locator("#hand .svclab-diags").textContent();
  assert.match(text, /10\.096\.0\.050/);
  assert.match(await page.locator("#hand .svclab-scenario").textContent(), /kubernetesVersion: "1.36"/);
  const href = await page.getAttribute("#hand .svclab-open", "href");
  assert.match(href, /\/#v1\.[A-Za-z0-9_-]+$/);
  // The fragment is the playground's: base64url of the raw deflate of the state JSON.
  const state = await page.evaluate(async (link) => {
    const b64 = link.split("#v1.")[1].replaceAll("-", "+").replaceAll("_", "/");
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
    return JSON.parse(await new Response(stream).text());
  }, href);
  assert.equal(state.scenario, await page.locator("#hand .svclab-scenario").textContent());
  assert.equal(state.tab, "diagnostics");
  // `src=`: the scenario comes from the origin (the guide's own copy of an example).
  await page.evaluate(() => {
    const el = document.createElement("svclab-example");
    el.id = "fetched";
    el.setAttribute("src", "scenarios/trace-1.yaml");
    el.setAttribute("command", "trace --src 10.244.1.5 --dst 10.96.0.10 --dport 53 --protocol udp");
    document.querySelector("main").prepend(el);
  });
  await page.waitForFunction(() => document.getElementById("fetched")?.dataset.svclabState === "rendered");
  assert.equal(await page.locator("#fetched .svclab-outcome").count(), 2);
  await page.close();
  assert.deepEqual(problems, []);
});

test("without JavaScript the scenario and the checked output are there", async () => {
  const browser = await launchBrowser();
  try {
    const noJs = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1300, height: 900 } });
    const page = watch(await noJs.newPage(), "no-js");
    await page.goto(new URL("guide/static-dynamic-bands.html", URL_BASE).href);
    const scenario = await page.locator("svclab-example .svclab-scenario").first().textContent();
    assert.match(scenario, /kind: ClusterProfile/);
    const output = await page.locator("svclab-example .svclab-result").first().textContent();
    assert.match(output, /kube-dns/);
    await page.screenshot({ path: path.join(SHOTS, "guide-bands-no-js.png") });
  } finally {
    await browser.close();
  }
  assert.deepEqual(problems, []);
});
