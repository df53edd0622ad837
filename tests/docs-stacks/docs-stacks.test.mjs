// svclab's examples in the docs stacks people use: MkDocs (Material), Sphinx (MyST), Hugo,
// Docusaurus and mdBook. Each small site under tests/docs-stacks/<stack>/ gets the shared page
// examples.md (fenced ```svclab blocks, the page `svclab doc test` checks), a page with the
// hand-written element, and the npm package's dist/ in its static folder; the framework's own
// command builds it, and headless Chromium loads it: the fenced blocks must be live examples with
// the right addresses, bands and verdicts, the hand-written element must render, content the
// Markdown processor mangled must show the explaining error, and without JavaScript the fenced
// scenario and its expected output stay readable. The configuration line each stack's guide page
// (docs/guide/on-<stack>.md) gives must be the one its test site uses. Run by tests/docs_stacks.rs, which builds the
// package and passes SVCLAB_NPM (the package), SVCLAB_CACHE (svclab's cache directory, where
// scripts/setup.d/50-docs-stacks.sh installs the stacks), SVCLAB_WORK and SVCLAB_SHOTS.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, rmSync, existsSync, readFileSync, writeFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { launchBrowser, launchProfile, watchPage } from "../chromium.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const NPM = process.env.SVCLAB_NPM;
const CACHE = process.env.SVCLAB_CACHE;
const WORK = process.env.SVCLAB_WORK;
const SHOTS = process.env.SVCLAB_SHOTS;
assert.ok(NPM && CACHE && WORK && SHOTS, "run by tests/docs_stacks.rs (SVCLAB_NPM, SVCLAB_CACHE, SVCLAB_WORK, SVCLAB_SHOTS)");
mkdirSync(SHOTS, { recursive: true });

const venv = path.join(CACHE, "venv/bin");
const docusaurusDir = path.join(CACHE, "docs-stacks/docusaurus");

// Each stack: where its site is built, where pages and static files go, the command, the output
// folder and the URL paths of the two pages. `raw` says whether the hand-written element page
// also carries the mangled example (MDX refuses to build it, so Docusaurus's has none).
const STACKS = {
  mkdocs: {
    config: "mkdocs.yml",
    tool: path.join(venv, "mkdocs"),
    content: "docs",
    statics: "docs/svclab",
    build: (dir, tool) => [tool, ["build", "--strict", "--quiet", "--site-dir", "site"], dir],
    out: "site",
    examples: "examples/",
    element: "element/",
    mangled: true,
    // Material's highlighter writes an unknown language as `language-text`: the element finds the
    // example by its first line, but cannot tell the expected block from any other, so it stays.
    expectedShown: true,
  },
  sphinx: {
    config: "conf.py",
    tool: path.join(venv, "sphinx-build"),
    content: ".",
    statics: "_static/svclab",
    build: (dir, tool) => [tool, ["-b", "html", "-q", "-W", "--keep-going", ".", "_build/html"], dir],
    out: "_build/html",
    examples: "examples.html",
    element: "element.html",
    mangled: true,
  },
  hugo: {
    config: "layouts/_default/baseof.html",
    tool: "/usr/bin/hugo",
    content: "content",
    statics: "static/svclab",
    build: (dir, tool) => [tool, ["--quiet", "--destination", "public"], dir],
    out: "public",
    examples: "examples/",
    element: "element/",
    mangled: true,
  },
  docusaurus: {
    config: "docusaurus.config.js",
    tool: path.join(docusaurusDir, "node_modules/.bin/docusaurus"),
    // Built inside the cache directory, beside the node_modules the set-up installed there.
    site: path.join(docusaurusDir, "site"),
    content: "docs",
    statics: "static/svclab",
    build: (dir, tool) => [tool, ["build", "--out-dir", "build"], dir],
    out: "build",
    examples: "examples",
    element: "",
    mangled: false,
  },
  mdbook: {
    config: "theme/head.hbs",
    tool: path.join(CACHE, "docs-stacks/mdbook/bin/mdbook"),
    content: "src",
    statics: "src/svclab",
    build: (dir, tool) => [tool, ["build", "--dest-dir", "book"], dir],
    out: "book",
    examples: "examples.html",
    element: "element.html",
    mangled: true,
    // mdBook keeps the words after the language: the info-string form works there too.
    info: "info.html",
  },
};

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".wasm": "application/wasm", ".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png", ".woff2": "font/woff2", ".woff": "font/woff", ".ico": "image/x-icon", ".txt": "text/plain", ".xml": "application/xml" };

/** A static server for one built site on a free loopback port; what it had not, in `notFound`. */
const notFound = [];
function serve(root) {
  const server = createServer((req, res) => {
    let file = path.join(root, decodeURIComponent(new URL(req.url, "http://x").pathname));
    if (!file.startsWith(root)) file = root;
    if (existsSync(file) && statSync(file).isDirectory()) file = path.join(file, "index.html");
    if (!existsSync(file) && existsSync(`${file}.html`)) file = `${file}.html`;
    // The browser asks for a favicon on its own; the test sites have none.
    if (!existsSync(file) && req.url === "/favicon.ico") {
      res.writeHead(204).end();
      return;
    }
    if (!existsSync(file)) {
      notFound.push(req.url);
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
    res.end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/` })));
}

/** Copies the stack's site, the shared pages and the package in, and runs the framework's build. */
function build(name) {
  const stack = STACKS[name];
  assert.ok(
    existsSync(stack.tool),
    `${name} is not installed: ${stack.tool} is missing (bash scripts/setup.d/50-docs-stacks.sh installs it; see its output for why it failed)`,
  );
  const dir = stack.site ?? path.join(WORK, name);
  rmSync(dir, { recursive: true, force: true });
  cpSync(path.join(here, name), dir, { recursive: true });
  cpSync(path.join(here, "examples.md"), path.join(dir, stack.content, "examples.md"));
  if (stack.mangled) cpSync(path.join(here, "element.md"), path.join(dir, stack.content, "element.md"));
  cpSync(path.join(NPM, "dist"), path.join(dir, stack.statics), { recursive: true });
  const [tool, args, cwd] = stack.build(dir, stack.tool);
  const started = Date.now();
  try {
    execFileSync(tool, args, { cwd, stdio: "pipe", env: { ...process.env, DOCUSAURUS_TELEMETRY_DISABLED: "1" } });
  } catch (err) {
    assert.fail(`${name}: \`${path.basename(tool)} ${args.join(" ")}\` failed:\n${err.stdout}\n${err.stderr}`);
  }
  metrics[`${name}_buildMs`] = Date.now() - started;
  return path.join(dir, stack.out);
}

const metrics = {};
const problems = [];
let context;
let closeBrowser;

before(async () => {
  ({ context, close: closeBrowser } = await launchProfile("docs-stacks"));
});

after(async () => {
  await closeBrowser?.();
  writeFileSync(path.join(SHOTS, "metrics.json"), JSON.stringify(metrics, null, 2) + "\n");
  console.log(`METRICS ${JSON.stringify(metrics)}`);
});

/** Loads a page and waits until every example has rendered or failed; their states by id. */
async function load(page, url) {
  await page.goto(url, { waitUntil: "load" });
  await page.waitForFunction(
    () => {
      const all = [...document.querySelectorAll("svclab-example")];
      return all.length > 0 && all.every((e) => ["rendered", "failed"].includes(e.dataset.svclabState));
    },
    null,
    { timeout: 30000 },
  );
}

/** The configuration the stack's guide page gives: its first code block that is not Markdown or svclab. */
function guideConfiguration(name) {
  const page = readFileSync(path.join(here, `../../docs/guide/on-${name}.md`), "utf8");
  const block = /^```(yaml|python|html|js)\n([\s\S]*?)^```$/m.exec(page);
  assert.ok(block, `docs/guide/on-${name}.md gives no configuration block`);
  return block[2].trim();
}

async function checkStack(name) {
  const stack = STACKS[name];
  // The guide's configuration line is the test site's, word for word.
  const configuration = guideConfiguration(name);
  assert.ok(
    readFileSync(path.join(here, name, stack.config), "utf8").includes(configuration),
    `${name}: tests/docs-stacks/${name}/${stack.config} does not contain the line docs/guide/on-${name}.md gives:\n${configuration}`,
  );
  const out = build(name);
  const { server, url } = await serve(out);
  const origin = new URL(url).origin;
  const mark = problems.length;
  try {
    const page = watchPage(await context.newPage(), name, origin, problems);
    await page.setViewportSize({ width: 1200, height: 900 });

    // The shared page: both fenced blocks are live examples, and the blocks they came from
    // (and their expected blocks) are hidden.
    await load(page, new URL(stack.examples, url).href);
    const fences = page.locator('svclab-example[data-svclab-from="fence"]');
    assert.equal(await fences.count(), 2, `${name}: the two fenced blocks became elements`);
    assert.deepEqual(await fences.evaluateAll((all) => all.map((e) => [e.getAttribute("command"), e.dataset.svclabState])), [
      ["check", "rendered"],
      ["trace --src 10.244.1.5 --dst 10.96.0.10 --dport 53 --protocol udp", "rendered"],
    ]);
    const check = fences.nth(0);
    // Every document reached the engine: the profile's range, both Services, their bands.
    assert.match(await check.locator("figcaption").first().textContent(), /10\.96\.0\.0\/24 IPv4, ipaddress: 2 used of 254/);
    const rows = await check.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent.trim())));
    assert.equal(rows.length, 2, `${name}: ${JSON.stringify(rows)}`);
    assert.deepEqual(rows.map((r) => [r[0], r[4]]), [
      ["default/web", "created"],
      ["kube-system/kube-dns", "created"],
    ]);
    assert.match(rows[0][2], /^10\.96\.0\.\d+ dynamic$/);
    assert.equal(rows[1][2], "10.96.0.10 static, requested");
    assert.match(await check.locator(".svclab-diagnostics, section[aria-label=Diagnostics]").textContent(), /Accepted: no errors, no warnings/);
    // The live result takes its own height (nothing reserved it, so nothing may clip it).
    const box = await check.locator(".svclab-result").evaluate((r) => [r.scrollHeight, r.clientHeight]);
    assert.ok(box[0] <= box[1] + 1, `${name}: the check result is clipped (${box})`);
    const trace = fences.nth(1);
    const outcomes = await trace.locator(".svclab-outcome > h4").allTextContents();
    assert.equal(outcomes.length, 2, `${name}: ${outcomes}`);
    assert.match(outcomes[0], /^50\.0% .*→ 10\.244\.1\.10:53/);
    assert.match(outcomes[1], /^50\.0% .*→ 10\.244\.2\.11:53/);
    assert.match(await check.locator(".svclab-open").getAttribute("href"), /#v1\.[A-Za-z0-9_-]+$/);
    const hidden = await page.evaluate(() =>
      [...document.querySelectorAll("[data-svclab-fence]")].map((b) => [b.hidden, getComputedStyle(b).display, getComputedStyle(b.nextElementSibling ?? b).display]),
    );
    const expected = stack.expectedShown ? "block" : "none";
    assert.deepEqual(hidden, [[true, "none", expected], [true, "none", expected]], `${name}: fenced blocks (and expected blocks) are hidden`);
    await page.screenshot({ path: path.join(SHOTS, `${name}-examples.png`), fullPage: true });

    // The hand-written element renders; the mangled one explains instead of showing a result.
    await load(page, new URL(stack.element, url).href);
    assert.equal(await page.locator("#hand").getAttribute("data-svclab-state"), "rendered");
    assert.match(await page.locator("#hand .svclab-diags").textContent(), /10\.096\.0\.050/);
    if (stack.mangled) {
      assert.equal(await page.locator("#altered").getAttribute("data-svclab-state"), "failed");
      const text = await page.locator("#altered .svclab-failure").textContent();
      assert.match(text, /changed by the page's Markdown processor/);
      assert.match(await page.locator("#altered .svclab-help").textContent(), /```svclab\n# svclab check/);
      assert.equal(await page.locator("#altered .svclab-allocations, #altered table").count(), 0, "no result beside the error");
    }
    await page.screenshot({ path: path.join(SHOTS, `${name}-element.png`), fullPage: true });
    if (stack.info) {
      await load(page, new URL(stack.info, url).href);
      const info = page.locator('svclab-example[data-svclab-from="fence"]');
      assert.equal(await info.getAttribute("command"), "trace --src 10.244.1.5 --dst 10.96.0.10 --dport 80 --protocol tcp");
      assert.deepEqual(await info.locator(".svclab-outcome > h4").allTextContents(), ["100% endpoint → 10.244.1.7:8080"]);
    }
    await page.close();

    // Without JavaScript the fenced scenario and its expected output are there.
    const browser = await launchBrowser();
    try {
      const noJs = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1200, height: 900 } });
      const plain = watchPage(await noJs.newPage(), `${name}-no-js`, origin, problems);
      await plain.goto(new URL(stack.examples, url).href);
      const text = await plain.locator("body").innerText();
      assert.match(text, /# svclab check/);
      assert.match(text, /kube-system\s+kube-dns\s+ClusterIP\s+10\.96\.0\.10\s+static\*/);
      await plain.screenshot({ path: path.join(SHOTS, `${name}-no-js.png`) });
    } finally {
      await browser.close();
    }
  } finally {
    server.close();
  }
  assert.deepEqual([...problems.slice(mark), ...notFound.splice(0)], []);
}

for (const name of Object.keys(STACKS)) {
  test(`${name}: fenced blocks and the element are live, mangled content explains itself`, () => checkStack(name));
}
