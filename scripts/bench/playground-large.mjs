// The playground with a cluster-sized scenario (issue 39), measured in headless Chromium (Debian's
// /usr/bin/chromium driven by playwright-core, as tests/e2e does). Run by `cargo xtask bench`,
// which builds the site, serves it and passes SVCLAB_URL and SVCLAB_SCENARIO (a scenario file,
// e.g. `cargo xtask gen-scenario --services 10000 --slices`).
//
// - paste-to-painted: from the paste event to the frame after `#status[data-evaluations]`
//   changed (the result is in the DOM and the browser had its chance to paint);
// - keystroke-to-painted: SVCLAB_KEYSTROKES keystrokes in the middle of the document (the
//   editor's search finds the middle Service's `app:` label and the cursor stays there), each
//   timed from the key press (its keydown event's time stamp in the page) to the frame after
//   the result for that text was painted; and, as this row timed it before, from just before
//   the harness sends the key (its round trips to the browser included);
// - the longest main-thread task while typing (PerformanceObserver 'longtask');
// - the tab's memory, after typing: the resident memory (VmRSS in /proc) of the tab's renderer
//   process (the one that grew from before the paste; Chromium's mapped binary included), the
//   resident memory of every renderer of the browser (as this row measured it before: the
//   profile's first page and spare renderers too, each counting Chromium's mapped binary
//   again), and the page's JS heap (performance.memory);
// - the page's own figure for the last evaluation (`#status[data-eval-ms]`: the pipeline; the
//   rulesets are rendered apart, for the Rules panel);
// - and, after those, the Rules panel open: from the tab's click to both rulesets drawn, and
//   the longest main-thread task meanwhile; then from each of five keystrokes at the end of the
//   document to the typed text's rulesets drawn, and the longest task while typing.
//
// Prints one line: `PLAYGROUND_LARGE {"services":N,"pasteMs":..,"keystrokeMedianMs":..,...}`.

import { readFileSync, readdirSync } from "node:fs";
import { launchProfile } from "../../tests/chromium.mjs";

const url = process.env.SVCLAB_URL;
const file = process.env.SVCLAB_SCENARIO;
const keystrokes = Number(process.env.SVCLAB_KEYSTROKES ?? "10");
if (!url || !file) {
  console.error("SVCLAB_URL and SVCLAB_SCENARIO must be set");
  process.exit(2);
}
const scenario = readFileSync(file, "utf8");
const services = (scenario.match(/^kind: Service$/gm) ?? []).length;
const middle = `app: app-${Math.floor(services / 2) - 1}\n`;
if (!scenario.includes(middle)) {
  console.error(`the scenario has no line ${JSON.stringify(middle)}`);
  process.exit(2);
}

/** The renderer processes of the browsers `browserPids`: pid → resident memory (KiB). */
function renderers(browserPids) {
  const parents = new Map();
  const lines = new Map();
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      parents.set(pid, stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      lines.set(pid, readFileSync(`/proc/${pid}/cmdline`, "utf8"));
    } catch {
      // The process ended meanwhile.
    }
  }
  const descends = (pid) => {
    for (let p = pid; p && p !== "0" && p !== "1"; p = parents.get(p)) {
      if (browserPids.includes(p)) return true;
    }
    return false;
  };
  const rss = new Map();
  for (const [pid, cmdline] of lines) {
    if (!cmdline.includes("--type=renderer") || !descends(pid)) continue;
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      rss.set(pid, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0"));
    } catch {
      // Gone.
    }
  }
  return rss;
}

function browserPids(profileMarker) {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const cmdline = readFileSync(`/proc/${p}/cmdline`, "utf8");
        return cmdline.includes(profileMarker) && !cmdline.includes("--type=");
      } catch {
        return false;
      }
    });
}

const { context, close } = await launchProfile("bench-large");
try {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForSelector("#status");
  await page.evaluate(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.__longTasks.push(entry.duration);
    }).observe({ type: "longtask" });
    // Resolves with the time of the frame after `data-evaluations` exceeds `n`.
    window.__paintedAfter = (n) =>
      new Promise((resolve) => {
        const status = () => document.querySelector("#status");
        const check = () => {
          if (Number(status()?.getAttribute("data-evaluations")) > n) {
            observer.disconnect();
            requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0));
            return true;
          }
          return false;
        };
        const observer = new MutationObserver(check);
        observer.observe(document.body, { attributes: true, subtree: true, childList: true });
        check();
      });
  });
  const evaluations = async () => Number(await page.getAttribute("#status", "data-evaluations"));

  // Which renderer is the tab's: the one that grows by the paste and the typing (the others are
  // the profile's first page and spare renderers, which Chromium may also hand the tab's page).
  const beforePaste = renderers(browserPids("svclab-bench-large-"));

  // Paste.
  await page.click(".cm-content");
  await page.keyboard.press("Control+A");
  const pasteMs = await page.evaluate(async (text) => {
    const n = Number(document.querySelector("#status").getAttribute("data-evaluations"));
    const painted = window.__paintedAfter(n);
    const started = performance.now();
    const data = new DataTransfer();
    data.setData("text/plain", text);
    const paste = new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true });
    document.querySelector(".cm-content").dispatchEvent(paste);
    return (await painted) - started;
  }, scenario);
  const status = await page.innerText("#status");
  const painted = Number(/^(\d+) Services?/.exec(status)?.[1] ?? "0");

  // To the middle of the document: the editor's search (Ctrl+F) selects the label, Escape
  // closes the panel with the selection kept, ArrowRight puts the cursor at its end.
  await page.keyboard.press("Control+F");
  // Typed: the search field reads its query on key events.
  await page.keyboard.type(middle.trim());
  await page.keyboard.press("Enter");
  await page.keyboard.press("Escape");
  await page.keyboard.press("ArrowRight");
  await page.waitForTimeout(500);

  await page.evaluate(() => {
    window.__longTasks = [];
  });
  // The key's arrival in the page: its keydown event's time stamp (performance.now()'s clock).
  await page.evaluate(() => {
    window.addEventListener("keydown", (e) => { window.__keyAt = e.timeStamp; }, true);
  });
  const typed = [];
  const sent = [];
  for (let i = 0; i < keystrokes; i++) {
    const n = await evaluations();
    const key = String.fromCharCode(97 + (i % 26));
    await page.evaluate(
      ([n]) => {
        window.__typed = { started: performance.now(), painted: window.__paintedAfter(n) };
      },
      [n],
    );
    await page.keyboard.press(key);
    const [fromKey, fromSend] = await page.evaluate(async () => {
      const painted = await window.__typed.painted;
      return [painted - window.__keyAt, painted - window.__typed.started];
    });
    typed.push(fromKey);
    sent.push(fromSend);
  }
  // Let a result that was still on its way land before reading the long tasks.
  await page.waitForTimeout(300);
  const longTasks = await page.evaluate(() => window.__longTasks);
  const evalMs = Number(await page.getAttribute("#status", "data-eval-ms"));
  const heap = await page.evaluate(() => performance.memory?.usedJSHeapSize ?? 0);
  const now = renderers(browserPids("svclab-bench-large-"));
  const rss = [...now.values()].reduce((total, kib) => total + kib, 0);
  const growth = (pid) => (now.get(pid) ?? 0) - (beforePaste.get(pid) ?? 0);
  const tab = [...now.keys()].sort((a, b) => growth(b) - growth(a))[0];
  const tabRss = now.get(tab) ?? 0;
  // The Rules panel open: the rulesets are rendered after each result, in steps. Timed from
  // the tab's click to the rulesets drawn, then from each of a few keys to the typed text's
  // rulesets drawn; the longest task of each.
  await page.evaluate(() => {
    window.__longTasks = [];
    // Resolves with the time of the frame after the rulesets of a result past `n` are drawn.
    window.__rulesAfter = (n) =>
      new Promise((resolve) => {
        const check = () => {
          const evaluated = Number(document.querySelector("#status")?.getAttribute("data-evaluations")) > n;
          const drawn = document.querySelector("#ruleset-iptables") !== null
            && document.querySelector("#rules-updating, #rules-rendering") === null;
          if (evaluated && drawn) {
            observer.disconnect();
            requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0));
          }
        };
        const observer = new MutationObserver(check);
        observer.observe(document.body, { attributes: true, subtree: true, childList: true });
        check();
      });
  });
  const rulesOpenMs = await page.evaluate(async () => {
    const n = Number(document.querySelector("#status").getAttribute("data-evaluations"));
    const drawn = window.__rulesAfter(n - 1);
    const started = performance.now();
    document.querySelector("#tab-rules").click();
    return (await drawn) - started;
  });
  const rulesOpenLongTasks = await page.evaluate(() => window.__longTasks.splice(0));
  await page.click(".cm-content");
  await page.keyboard.press("Control+End");
  const rulesTyped = [];
  for (let i = 0; i < 5; i++) {
    const n = await evaluations();
    await page.evaluate(([n]) => { window.__typedRules = window.__rulesAfter(n); }, [n]);
    await page.keyboard.press("#");
    rulesTyped.push(await page.evaluate(async () => (await window.__typedRules) - window.__keyAt));
  }
  const rulesLongTasks = await page.evaluate(() => window.__longTasks);

  const sorted = [...typed].sort((a, b) => a - b);
  const round = (x) => Math.round(x * 10) / 10;
  const figures = {
    services: painted,
    bytes: scenario.length,
    pasteMs: round(pasteMs),
    keystrokeMedianMs: round(sorted[Math.floor(sorted.length / 2)]),
    keystrokeMaxMs: round(sorted[sorted.length - 1]),
    keystrokesMs: typed.map(round),
    keystrokeFromSendMedianMs: round([...sent].sort((a, b) => a - b)[Math.floor(sent.length / 2)]),
    evalMs: round(evalMs),
    longestTaskMs: round(Math.max(0, ...longTasks)),
    longTasks: longTasks.length,
    rendererRssMib: round(rss / 1024),
    tabRssMib: round(tabRss / 1024),
    jsHeapMib: round(heap / 1048576),
    rulesOpenMs: round(rulesOpenMs),
    rulesKeystrokeMedianMs: round([...rulesTyped].sort((a, b) => a - b)[2]),
    rulesKeystrokesMs: rulesTyped.map(round),
    rulesOpenLongestTaskMs: round(Math.max(0, ...rulesOpenLongTasks)),
    rulesLongestTaskMs: round(Math.max(0, ...rulesLongTasks)),
  };
  console.log(`PLAYGROUND_LARGE ${JSON.stringify(figures)}`);
} finally {
  await close();
}
