// The playground's re-evaluation time for a big scenario, measured in headless Chromium (Debian's
// /usr/bin/chromium driven by playwright-core, as tests/e2e does). Run by `cargo xtask bench`,
// which builds the site, serves it and passes SVCLAB_URL and SVCLAB_SCENARIO (a scenario file,
// e.g. `cargo xtask gen-scenario --services 1000`). The scenario is pasted into the editor
// SVCLAB_ROUNDS times (each round with a different trailing comment, so every paste is a change)
// and the page's own figure is read after each: `#status[data-eval-ms]`, the time of
// `svclab_core::evaluate` plus the report's rulesets, measured with `performance.now()`.
// Prints one line: `PLAYGROUND {"services":N,"medianMs":..,"maxMs":..,"samplesMs":[..]}`.

import { readFileSync } from "node:fs";
import { launchProfile, pasteIntoEditor } from "../../tests/chromium.mjs";

const url = process.env.SVCLAB_URL;
const file = process.env.SVCLAB_SCENARIO;
const rounds = Number(process.env.SVCLAB_ROUNDS ?? "5");
if (!url || !file) {
  console.error("SVCLAB_URL and SVCLAB_SCENARIO must be set");
  process.exit(2);
}
const scenario = readFileSync(file, "utf8");

const { context, close } = await launchProfile("bench");
try {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForSelector("#status");
  const evaluations = async () => Number(await page.getAttribute("#status", "data-evaluations"));
  const times = [];
  for (let round = 0; round < rounds; round++) {
    const before = await evaluations();
    await pasteIntoEditor(page, `${scenario}# round ${round}\n`);
    await page.waitForFunction(
      (n) => Number(document.querySelector("#status")?.getAttribute("data-evaluations")) > n,
      before,
      { timeout: 120000 },
    );
    times.push(Number(await page.getAttribute("#status", "data-eval-ms")));
  }
  const status = await page.innerText("#status");
  const services = Number(/^(\d+) Services?/.exec(status)?.[1] ?? "0");
  times.sort((a, b) => a - b);
  const figures = {
    services,
    medianMs: times[Math.floor(times.length / 2)],
    maxMs: times[times.length - 1],
    samplesMs: times,
  };
  console.log(`PLAYGROUND ${JSON.stringify(figures)}`);
} finally {
  await close();
}
