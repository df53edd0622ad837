// Headless Chromium for svclab's browser tests and benchmarks: Debian's /usr/bin/chromium driven
// by playwright-core (installed under playground-web/js by scripts/setup.d/31-npm.sh). One place
// for the binary, the flags and the throw-away profile, so the playground tests, the guide tests
// and the playground benchmark run the same browser the same way.
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../playground-web/js/package.json"));

/** playwright-core's Chromium driver. */
export const { chromium } = require("playwright-core");

export const EXECUTABLE = "/usr/bin/chromium";

// Headless, no sandbox (tests run as root), and nothing that would reach the network on its own:
// a request that leaves the origin is a test failure, so the browser must not make any itself.
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-quic",
  "--no-first-run",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Launches Chromium with a fresh persistent profile (so service workers and storage behave as
 * for a user) and returns `{ context, close }`; `close` also removes the profile directory.
 */
export async function launchProfile(name) {
  const userDataDir = mkdtempSync(path.join(tmpdir(), `svclab-${name}-`));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: EXECUTABLE,
    headless: true,
    args: ARGS,
  });
  const close = async () => {
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true });
  };
  return { context, close };
}

/**
 * Replaces the playground editor's whole text with `text` as a user pastes it: select all, then
 * one clipboard event carrying the text, which the editor turns into one change (typing it with
 * `keyboard.insertText` costs minutes at 1,000 Services).
 */
export async function pasteIntoEditor(page, text) {
  await page.click(".cm-content");
  await page.keyboard.press("Control+A");
  await page.evaluate((text) => {
    const data = new DataTransfer();
    data.setData("text/plain", text);
    const paste = new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true });
    document.querySelector(".cm-content").dispatchEvent(paste);
  }, text);
}

/** Launches Chromium without a profile, for contexts with their own options (no JavaScript). */
export function launchBrowser() {
  return chromium.launch({ executablePath: EXECUTABLE, args: ARGS });
}

/**
 * Records into `problems` what a page must never do: console errors, uncaught page errors, and
 * requests that leave `origin` (the page must work offline from its own server). Returns the page.
 */
export function watchPage(page, label, origin, problems) {
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`${label}: console error: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`${label}: page error: ${e.message}`));
  page.on("request", (r) => {
    const url = r.url();
    if (!url.startsWith(origin) && !url.startsWith("data:") && !url.startsWith("blob:")) {
      problems.push(`${label}: request left the origin: ${url}`);
    }
  });
  return page;
}
