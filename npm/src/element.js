// <svclab-example>: a live svclab example for any static docs site, in one script tag.
//
//   <script type="module" src="svclab-example.js"></script>
//   <svclab-example command="check" show="allocations diagnostics">
//   apiVersion: v1
//   kind: Service
//   ...
//   </svclab-example>
//
// The content is the scenario (or `src=` names a file to fetch); `command` is the svclab
// command line the example stands for (`check`, `render --proxy-mode nftables`,
// `trace --src 10.244.1.5 --dst 10.96.0.10 --dport 53 --protocol udp`); `show` picks the views
// (allocations, diagnostics, iptables, nftables, trace); `profile` sets the ClusterProfile's
// kubernetesVersion the way the playground's profile bar does; `theme` forces light or dark;
// `playground` is the playground's URL (the "Open in the playground" link carries the same
// `#v1.` share fragment the playground writes). Pages built by `cargo xtask docs` contain the
// scenario and the pre-rendered result already, so readers without JavaScript see both and the
// upgrade keeps the box's size.
import css from "./element.css";
import { check, render, trace, SvclabError } from "./api.js";

const VIEWS = ["diagnostics", "allocations", "iptables", "nftables", "trace"];

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value == null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Splits a command line into words (double and single quotes group). */
export function words(line) {
  const out = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  let m;
  while ((m = re.exec(line ?? ""))) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/** The command and options of a `command` attribute (`name=value` words are left out). */
export function parseCommand(line) {
  const list = words(line).filter((w) => w.startsWith("-") || !w.includes("="));
  if (list[0] === "svclab") list.shift();
  const name = list.shift() ?? "check";
  const options = {};
  for (let i = 0; i < list.length; i++) {
    const word = list[i];
    if (!word.startsWith("--")) continue;
    const eq = word.indexOf("=");
    const key = (eq < 0 ? word.slice(2) : word.slice(2, eq)).replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (eq >= 0) options[key] = word.slice(eq + 1);
    else if (i + 1 < list.length && !list[i + 1].startsWith("--")) options[key] = list[++i];
    else options[key] = true;
  }
  return { name, options };
}

/** The views to show: the `show` attribute, else what the command prints. */
export function views(show, command) {
  const asked = words((show ?? "").replaceAll(",", " ")).filter((v) => VIEWS.includes(v));
  if (asked.length) return asked;
  if (command.name === "render") return [command.options.proxyMode === "nftables" ? "nftables" : "iptables"];
  if (command.name === "trace") return ["trace"];
  return ["diagnostics", "allocations"];
}

/** The scenario with the ClusterProfile's kubernetesVersion set, as the profile bar does. */
export function withProfile(text, version) {
  if (!version) return text;
  const line = `kubernetesVersion: ${JSON.stringify(version)}`;
  const docs = text.split(/^(?=---\s*$)/m);
  for (let i = docs.length - 1; i >= 0; i--) {
    if (!/^kind:\s*ClusterProfile\s*$/m.test(docs[i])) continue;
    docs[i] = /^kubernetesVersion:.*$/m.test(docs[i])
      ? docs[i].replace(/^kubernetesVersion:.*$/m, line)
      : docs[i].replace(/^kind:\s*ClusterProfile\s*$/m, (m) => `${m}\n${line}`);
    return docs.join("");
  }
  const sep = /^\s*(#.*\n|\s*\n)*---/.test(text) ? "" : "---\n";
  return `apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\n${line}\n${sep}${text}`;
}

/** The playground's share fragment: `#v1.` + base64url(raw deflate(state JSON)). */
export async function shareFragment(state) {
  const json = new TextEncoder().encode(JSON.stringify(state));
  const stream = new Blob([json]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return `#v1.${btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")}`;
}

/** The playground state of an example (the same JSON keys and order as playground-web/src/share.rs). */
export function shareState(scenario, command, shown) {
  const state = { scenario };
  const first = shown[0];
  const tab = first === "iptables" || first === "nftables" ? "rules" : first;
  if (tab) state.tab = tab;
  if (command.name === "trace") {
    const o = command.options;
    state.trace = {
      src: String(o.src ?? ""),
      dst: String(o.dst ?? ""),
      port: String(o.dport ?? ""),
      protocol: String(o.protocol ?? "tcp").toUpperCase(),
    };
  }
  return state;
}

function location(diagnostic) {
  const s = diagnostic.source;
  return s ? `line ${s.line}:${s.column}` : "";
}

function objectName(o) {
  if (!o) return "";
  return `${o.kind} ${o.namespace ? `${o.namespace}/` : ""}${o.name}`;
}

function diagnosticsView(report) {
  const list = report.diagnostics ?? [];
  const section = el("section", { class: "svclab-section", "aria-label": "Diagnostics" }, el("h4", { text: "Diagnostics" }));
  if (!list.length) {
    section.append(el("p", { class: "svclab-ok", text: "✓ Accepted: no errors, no warnings." }));
    return section;
  }
  section.append(
    el(
      "ul",
      { class: "svclab-diags" },
      list.map((d) =>
        el(
          "li",
          { class: `svclab-diag ${["error", "warning", "info"].includes(d.severity) ? d.severity : "warning"}` },
          el("span", { class: "svclab-sev", text: d.severity }),
          el("span", { class: "svclab-loc svclab-mono", text: location(d) }),
          el("span", { class: "svclab-msg svclab-mono", text: d.object ? `${objectName(d.object)}: ${d.message}` : d.message }),
        ),
      ),
    ),
  );
  return section;
}

// Addresses as BigInt offsets, for the range bars.
function ipValue(text) {
  if (text.includes(":")) {
    const [head, tail = ""] = text.split("::");
    const h = head ? head.split(":") : [];
    const t = tail ? tail.split(":") : [];
    const groups = text.includes("::") ? [...h, ...Array(8 - h.length - t.length).fill("0"), ...t] : h;
    return groups.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g || "0", 16)), 0n);
  }
  return text.split(".").reduce((acc, o) => (acc << 8n) + BigInt(Number(o)), 0n);
}

function rangeBar(range, services) {
  const [base, prefix] = range.cidr.split("/");
  const bits = base.includes(":") ? 128 : 32;
  const size = 1n << BigInt(bits - Number(prefix));
  const start = ipValue(base);
  const percent = (ip) => Number(((ipValue(ip) - start) * 10000n) / size) / 100;
  const track = el("div", { class: "svclab-track", role: "img", "aria-label": `${range.cidr}: static band and dynamic band with allocated addresses` });
  for (const [kind, band] of [["static", range.staticBand], ["dynamic", range.dynamicBand]]) {
    if (!band) continue;
    const left = percent(band.first);
    const width = Math.max(percent(band.last) - left, 0.6);
    track.append(el("div", { class: `svclab-band ${kind}`, style: `left:${left}%;width:${width}%`, text: kind }));
  }
  for (const service of services) {
    for (const a of service.allocations ?? []) {
      if (!a.ip.includes(":") !== !base.includes(":")) continue;
      const v = ipValue(a.ip);
      if (v < start || v >= start + size) continue;
      track.append(
        el("div", {
          class: `svclab-mark ${a.requested ? "requested" : "dynamic"}`,
          style: `left:${percent(a.ip)}%`,
          title: `${service.namespace}/${service.name} ${a.ip} (${a.requested ? "requested" : "dynamic"}, ${a.band} band)`,
        }),
      );
    }
  }
  return el(
    "figure",
    { class: "svclab-range" },
    el("figcaption", {}, el("code", { text: range.cidr }), ` ${range.family}, ${range.allocator}: ${range.used} used of ${range.size}`),
    track,
    el("div", { class: "svclab-axis svclab-mono" }, el("span", { text: base }), el("span", { text: `/${prefix}` })),
  );
}

function pill(band, text) {
  return el("span", { class: `svclab-pill ${band || "none"}`, text });
}

function allocationsView(report) {
  const services = report.services ?? [];
  const section = el("section", { class: "svclab-section", "aria-label": "Allocations" }, el("h4", { text: "Allocations" }));
  for (const range of report.ranges ?? []) section.append(rangeBar(range, services));
  if (!services.length) {
    section.append(el("p", { class: "svclab-ok", text: "No Services." }));
    return section;
  }
  const rows = services.map((s) =>
    el(
      "tr",
      { class: s.outcome === "rejected" ? "rejected" : null },
      el("th", { scope: "row", class: "svclab-mono", text: `${s.namespace}/${s.name}` }),
      el("td", { text: s.type }),
      el("td", {}, (s.allocations ?? []).map((a) => [el("code", { text: a.ip }), " ", pill(a.band, `${a.band}${a.requested ? ", requested" : ""}`), " "])),
      el(
        "td",
        {},
        (s.ports ?? []).map((p) => [
          el("code", { text: `${p.port}/${p.protocol}` }),
          p.nodePort ? [" → ", el("code", { text: String(p.nodePort) }), " ", pill(p.nodePortBand, p.nodePortBand || "none")] : "",
          el("br"),
        ]),
      ),
      el("td", { text: s.outcome }),
    ),
  );
  section.append(
    el(
      "table",
      {},
      el("thead", {}, el("tr", {}, ["Service", "Type", "ClusterIPs", "Ports", "Outcome"].map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, rows),
    ),
  );
  return section;
}

function rulesView(mode, text) {
  return el(
    "section",
    { class: "svclab-section", "aria-label": `${mode} rules` },
    el("h4", { text: mode === "nftables" ? "nftables (kube-proxy table)" : "iptables-restore" }),
    el("pre", { class: "svclab-rules", tabindex: "0" }, el("code", { text })),
  );
}

function traceView(report) {
  const section = el("section", { class: "svclab-section", "aria-label": "Trace" }, el("h4", { text: `Trace: ${report.path ?? ""}` }));
  for (const warning of report.warnings ?? []) section.append(el("p", { class: "svclab-failure", text: warning }));
  for (const outcome of report.outcomes ?? []) {
    const title = [
      `${(outcome.probability * 100).toFixed(outcome.probability === 1 ? 0 : 1)}%`,
      outcome.verdict,
      outcome.endpoint ? `→ ${outcome.endpoint}` : "",
      outcome.masquerade ? "(masqueraded)" : "",
    ].filter(Boolean).join(" ");
    section.append(
      el(
        "div",
        { class: "svclab-outcome" },
        el("h4", { text: title }),
        el(
          "ol",
          { class: "svclab-steps" },
          (outcome.steps ?? []).map((step) =>
            el("li", {}, el("span", { class: "svclab-chain", text: `${step.table} ${step.chain}` }), el("code", { text: step.rule }), el("span", { class: "svclab-effect", text: step.effect })),
          ),
        ),
      ),
    );
  }
  return section;
}

/** Evaluates an example: the DOM of its live result. */
export function evaluate(scenario, command, shown, name = "-") {
  const inputs = [{ name, text: scenario }];
  const out = [];
  let report;
  const needReport = () => (report ??= check(inputs, { noDefaults: Boolean(command.options.noDefaults) }));
  for (const view of shown) {
    if (view === "diagnostics") out.push(diagnosticsView(needReport()));
    else if (view === "allocations") out.push(allocationsView(needReport()));
    else if (view === "iptables" || view === "nftables") {
      const o = command.options;
      out.push(rulesView(view, render(inputs, { proxyMode: view, ipFamily: o.ipFamily, node: o.node, standalone: Boolean(o.standalone) })));
    } else if (view === "trace") {
      const o = command.options;
      out.push(traceView(trace(inputs, { src: o.src, dst: o.dst, dport: o.dport, protocol: o.protocol, node: o.node, inInterface: o.inInterface })));
    }
  }
  return out;
}

let firstRender = null;

export class SvclabExample extends HTMLElement {
  static observedAttributes = ["command", "show", "profile", "src"];

  connectedCallback() {
    if (!this.isConnected || this.dataset.svclabState) return;
    if (reactPending(this)) {
      setTimeout(() => this.connectedCallback(), 30);
      return;
    }
    this.dataset.svclabState = "loading";
    this.#upgrade().catch((err) => this.#fail(err));
  }

  attributeChangedCallback(name, old, value) {
    if (old === value || !this.dataset.svclabState || this.dataset.svclabState === "loading") return;
    this.dataset.svclabState = "loading";
    this.#upgrade().catch((err) => this.#fail(err));
  }

  /** The scenario text: `src`, else the scenario <pre>, else the element's own text. */
  async #scenario() {
    const src = this.getAttribute("src");
    if (src) {
      const response = await fetch(new URL(src, document.baseURI));
      if (!response.ok) throw new Error(`cannot fetch ${src}: HTTP ${response.status}`);
      return response.text();
    }
    const pre = this.querySelector(":scope > .svclab-scenario");
    if (pre) return pre.textContent;
    const altered = alteration(this);
    if (altered) throw new AlteredContent(altered);
    // Hand-written content: the text, with the indentation of the markup removed.
    const lines = this.textContent.replace(/^\s*\n/, "").replace(/\s+$/, "").split("\n");
    const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.match(/^ */)[0].length));
    return `${lines.map((l) => l.slice(indent)).join("\n")}\n`;
  }

  /** The scenario, bar and result boxes; built when the page did not pre-render them. */
  #frame(scenario, commandLine) {
    let pre = this.querySelector(":scope > .svclab-scenario");
    let bar = this.querySelector(":scope > .svclab-bar");
    let result = this.querySelector(":scope > .svclab-result");
    if (!pre || !bar || !result) {
      this.replaceChildren();
      pre = el("pre", { class: "svclab-scenario", tabindex: "0", "aria-label": "Scenario" }, el("code", { text: scenario }));
      bar = el("div", { class: "svclab-bar" }, el("span", {}, el("code", { text: `$ svclab ${commandLine}` })), el("a", { class: "svclab-open", href: "#", text: "Open in the playground" }));
      result = el("div", { class: "svclab-result", role: "region", "aria-label": "Result" });
      this.append(pre, bar, result);
    } else if (pre.textContent !== scenario) {
      pre.replaceChildren(el("code", { text: scenario }));
    }
    return { bar, result };
  }

  async #upgrade() {
    if (!document.getElementById("svclab-example-css")) {
      document.head.append(el("style", { id: "svclab-example-css", text: css }));
    }
    const commandLine = this.getAttribute("command") ?? "check";
    const command = parseCommand(commandLine);
    const shown = views(this.getAttribute("show"), command);
    const scenario = withProfile(await this.#scenario(), this.getAttribute("profile"));
    const { bar, result } = this.#frame(scenario, commandLine);
    // Keep the box's height where the reader can see it: on screen (or above it) the live view
    // takes exactly the pre-rendered result's space, so nothing moves; below the viewport it
    // takes its natural height, since growing there moves nothing the reader sees.
    // Only a pre-rendered result has a size worth keeping; an empty box has its placeholder's.
    const reserved = result.childElementCount > 0 ? result.getBoundingClientRect().height : 0;
    const offscreen = result.getBoundingClientRect().top >= window.innerHeight;
    const live = el("div", { class: "svclab-live", "aria-live": "polite" }, evaluate(scenario, command, shown, this.getAttribute("name") ?? "-"));
    if (reserved > 0 && !offscreen) result.style.height = `${reserved}px`;
    result.replaceChildren(live);
    result.setAttribute("role", "region");
    result.setAttribute("aria-label", `svclab ${commandLine}: ${shown.join(", ")}`);
    result.tabIndex = 0;
    const link = bar.querySelector(".svclab-open");
    // A pre-rendered link (made by `cargo xtask docs`) stays unless `profile` changed the text.
    if (link && (!link.hasAttribute("data-svclab-share") || this.hasAttribute("profile"))) {
      const base = this.getAttribute("playground") ?? document.documentElement.dataset.svclabPlayground ?? "/";
      link.href = new URL(base, document.baseURI).href.replace(/#.*$/, "") + (await shareFragment(shareState(scenario, command, shown)));
    }
    this.dataset.svclabState = "rendered";
    if (firstRender === null) {
      firstRender = performance.now();
      globalThis.__svclabFirstRenderMs = firstRender;
    }
    this.dispatchEvent(new CustomEvent("svclab-rendered", { bubbles: true }));
  }

  #fail(err) {
    if (err instanceof AlteredContent) {
      // What the Markdown processor left is not the scenario: show only the explanation.
      this.replaceChildren(el("div", { class: "svclab-result" }));
    }
    const result = this.querySelector(":scope > .svclab-result") ?? this.appendChild(el("div", { class: "svclab-result" }));
    const what =
      err instanceof SvclabError ? `svclab: ${err.message}` : err instanceof AlteredContent ? err.message : `The example could not run: ${err?.message ?? err}`;
    const help = err instanceof AlteredContent ? el("pre", { class: "svclab-help" }, el("code", { text: FENCE_HELP })) : null;
    result.replaceChildren(el("div", { class: "svclab-live", role: "alert" }, el("p", { class: "svclab-failure", text: what }), help));
    this.dataset.svclabState = "failed";
    this.dispatchEvent(new CustomEvent("svclab-rendered", { bubbles: true, detail: { error: what } }));
  }
}

/** Content a Markdown processor changed before the element saw it. */
export class AlteredContent extends Error {}

const FENCE_HELP = "```svclab\n# svclab check\napiVersion: v1\nkind: Service\n...\n```";

/**
 * Why an element's hand-written content is not the scenario as written, or null: a Markdown
 * processor turned it into markup (paragraphs, `---` into rules, `{...}` into text it ate) or
 * moved part of it after the element.
 */
export function alteration(element) {
  const markup = [...element.children].map((c) => c.localName);
  const after = element.nextElementSibling ?? (element.parentElement?.localName === "p" ? element.parentElement.nextElementSibling : null);
  const spilled = after && (after.localName === "hr" || (after.localName === "p" && /^\s*(apiVersion|kind|metadata|spec):/m.test(after.textContent)));
  if (!markup.length && !spilled) return null;
  const found = markup.length
    ? `it holds <${[...new Set(markup)].join(">, <")}> elements where the scenario's plain text was expected`
    : `part of the scenario follows the element as <${after.localName}>`;
  return (
    "This example was changed by the page's Markdown processor before svclab saw it: " +
    `${found} (\`---\` becomes a rule, lines become paragraphs), so no result is shown. ` +
    "Write the example as a fenced code block with the language svclab and the command on its first line, which every Markdown processor keeps as it is:"
  );
}

// Fenced code blocks: what each Markdown processor makes of ```svclab (Python-Markdown,
// markdown-it, pulldown-cmark, Goldmark and MDX: a `language-` or `lang-` class on the code or
// the pre; Pygments under Sphinx: a `highlight-svclab` div; Material and Docusaurus: a
// `language-svclab` div around the pre).
const FENCE = "code.language-svclab, code.lang-svclab, pre.language-svclab, pre.lang-svclab, div.highlight-svclab, div.language-svclab";
const EXPECTED = ["expected"];

/** The `language-` (or `lang-`, `highlight-`) word of a rendered block, or null. */
export function blockLanguage(node) {
  for (const n of [node, ...node.querySelectorAll("pre, code")]) {
    for (const c of n.classList) {
      const m = /^(?:language|lang|highlight)-(.+)$/.exec(c);
      if (m && m[1] !== "none") return m[1];
    }
  }
  return null;
}

/** The text of a rendered code block as written: `<br>` is a line end, buttons are not text. */
export function blockText(pre) {
  let text = "";
  const walk = (node) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) text += child.data;
      else if (child.nodeType !== Node.ELEMENT_NODE) continue;
      else if (child.localName === "br") text += "\n";
      else if (!["button", "svg"].includes(child.localName) && !child.matches(".buttons, .linenos, .lineno, .copybutton")) walk(child);
    }
  };
  walk(pre);
  return text.endsWith("\n") ? text : `${text}\n`;
}

const FIRST_LINE = /^\s*#\s*svclab(\s|$)/;

/** The command of a fenced block: its first line `# svclab <command> [options]`, else `check`. */
export function fenceCommand(text, info = "") {
  const first = /^\s*#\s*svclab(?:\s+(.*))?$/.exec(text.split("\n", 1)[0]);
  if (first) return first[1]?.trim() || "check";
  return info.trim() || "check";
}

// A React page (Docusaurus) owns its nodes: a node is changed only once React has hydrated it
// (it carries React's fiber key), so hydration never meets a node it did not render. Until the
// page's deferred scripts have run (DOMContentLoaded), nobody knows yet whether React will come.
function domReady() {
  if (document.readyState === "complete") return true;
  const navigation = globalThis.performance?.getEntriesByType?.("navigation")?.[0];
  return document.readyState !== "loading" && (navigation?.domContentLoadedEventEnd ?? 0) > 0;
}

// Elements this script made from fenced blocks: React never renders them.
const made = new WeakSet();
// The block each of those elements stands for.
const fenceOf = new WeakMap();

export function reactPending(node) {
  if (!domReady()) return true;
  if (made.has(node)) return false;
  const fiberKey = Object.keys(node).find((k) => k.startsWith("__reactFiber$"));
  if (fiberKey) return !(committed(node[fiberKey]) || committed(node[fiberKey].alternate));
  // Docusaurus (and Next.js, Gatsby) hydrate their root only once the route's code has loaded,
  // after DOMContentLoaded: inside such a root a node waits for React even before it starts.
  if (node.closest?.(REACT_ROOTS)) return true;
  for (let n = node.parentElement; n; n = n.parentElement) {
    if (Object.keys(n).some((k) => k.startsWith("__reactContainer$"))) return true;
  }
  return false;
}

const REACT_ROOTS = "#__docusaurus, #__next, #___gatsby";

// Whether a fiber belongs to the tree React has committed, with no dehydrated Suspense boundary
// above it: a node React has claimed but not committed may still be hydrated again (a boundary
// retried when its code arrives), and must then be exactly what the server sent.
function committed(fiber) {
  let last = null;
  for (let f = fiber; f; f = f.return) {
    if (f.tag === 13 && f.memoizedState?.dehydrated) return false; // SuspenseComponent
    last = f;
  }
  const root = last?.tag === 3 ? last.stateNode : null; // HostRoot
  return Boolean(root && root.current === last && !last.memoizedState?.isDehydrated);
}

/**
 * Upgrades every fenced ```svclab block under `root` into a live <svclab-example>: the element
 * goes before the block, which stays in the page hidden (without JavaScript it, and the
 * `expected` block after it, are what readers see); the expected block is hidden too.
 */
export function upgradeFences(root = document) {
  let pending = false;
  const seen = new Set();
  // A React page may replace a block after hydration (Docusaurus renders code blocks anew in
  // the browser): the example of a block that left the page moves to its successor.
  const orphans = [...root.querySelectorAll('svclab-example[data-svclab-from="fence"]')].filter((e) => made.has(e) && !fenceOf.get(e)?.isConnected);
  // A highlighter that does not know the language may drop it (MkDocs Material writes
  // `language-text`): a block whose first line is `# svclab <command>` is an example too.
  const marked = [...root.querySelectorAll("pre")].filter((pre) => !pre.closest("svclab-example") && FIRST_LINE.test(blockText(pre)));
  for (const hit of [...root.querySelectorAll(FENCE), ...marked]) {
    if (hit.closest("svclab-example")) continue;
    const pre = hit.closest("pre") ?? hit.querySelector("pre");
    const wrapper = pre?.parentElement?.matches("div.highlight") ? pre.parentElement : null;
    const block = hit.closest("div.highlight-svclab, div.language-svclab") ?? wrapper ?? pre ?? hit;
    if (seen.has(block) || block.dataset.svclabFence) continue;
    seen.add(block);
    if (reactPending(block)) {
      pending = true;
      continue;
    }
    const code = (pre ?? block).querySelector("code.language-svclab, code.lang-svclab");
    const source = code ?? pre ?? block;
    const scenario = blockText(source);
    const line = words(fenceCommand(scenario, keptInfo(source)));
    const example = el("svclab-example", { command: line.filter((w) => !isAttribute(w)).join(" ") || "check", "data-svclab-from": "fence" });
    for (const w of line.filter(isAttribute)) {
      const eq = w.indexOf("=");
      example.setAttribute(w.slice(0, eq), w.slice(eq + 1));
    }
    made.add(example);
    example.append(el("pre", { class: "svclab-scenario", tabindex: "0", "aria-label": "Scenario" }, el("code", { text: scenario })));
    block.dataset.svclabFence = "upgraded";
    const moved = orphans.findIndex((o) => o.getAttribute("command") === example.getAttribute("command") && o.svclabScenario === scenario);
    const live = moved >= 0 ? orphans.splice(moved, 1)[0] : example;
    live.svclabScenario = scenario;
    fenceOf.set(live, block);
    block.before(live);
    block.hidden = true;
    block.style.display = "none";
    const next = block.nextElementSibling;
    if (next && EXPECTED.includes(blockLanguage(next))) {
      next.hidden = true;
      next.style.display = "none";
    }
  }
  for (const orphan of orphans) orphan.remove();
  return pending;
}

/**
 * The info string's words after `svclab` where the processor keeps them: mdBook writes
 * ```` ```svclab trace --src ... ```` as `class="language-svclab trace --src ..."` (highlight.js
 * then adds its own `hljs` class).
 */
export function keptInfo(code) {
  const classes = (code.getAttribute("class") ?? "").split(/\s+/);
  const at = classes.findIndex((c) => c === "language-svclab" || c === "lang-svclab");
  if (at < 0) return "";
  return classes.slice(at + 1).filter((c) => c && c !== "hljs" && !/^(language|lang)-/.test(c)).join(" ");
}

function isAttribute(word) {
  return !word.startsWith("-") && word.includes("=");
}

if (!customElements.get("svclab-example")) customElements.define("svclab-example", SvclabExample);

// Fenced blocks on the page now, and whatever a client-side router (Material's instant
// navigation, Docusaurus) puts in later.
if (typeof document !== "undefined" && typeof MutationObserver !== "undefined") {
  let scheduled = false;
  const run = () => {
    scheduled = false;
    if (upgradeFences(document)) schedule(50);
  };
  const schedule = (ms = 0) => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(run, ms);
  };
  new MutationObserver(() => schedule()).observe(document.documentElement, { childList: true, subtree: true });
  if (document.readyState === "complete") schedule();
  else window.addEventListener("load", () => schedule(), { once: true });
  schedule();
}
