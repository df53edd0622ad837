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
    const reserved = result.getBoundingClientRect().height;
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
    const result = this.querySelector(":scope > .svclab-result") ?? this.appendChild(el("div", { class: "svclab-result" }));
    const what = err instanceof SvclabError ? `svclab: ${err.message}` : `The example could not run: ${err?.message ?? err}`;
    result.replaceChildren(el("div", { class: "svclab-live", role: "alert" }, el("p", { class: "svclab-failure", text: what })));
    this.dataset.svclabState = "failed";
    this.dispatchEvent(new CustomEvent("svclab-rendered", { bubbles: true, detail: { error: what } }));
  }
}

if (!customElements.get("svclab-example")) customElements.define("svclab-example", SvclabExample);
