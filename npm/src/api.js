// svclab's JavaScript API: a thin layer over the svclab:policy component (the same
// plugin-wasm component the `svclab` command runs under wasmtime; it exports the `editing` world,
// `policy` and sessions), transpiled by jco.
// It keeps the WIT shapes (records as objects with camelCase keys, enums as strings) and
// parses the JSON documents the component returns, so callers get objects.
import * as component from "../component/svclab.js";

/** The ABI version of the bundled component (`abi-version` in wit/policy.wit). */
export const abiVersion = component.abiVersion();

/** A failed call: `kind` is the WIT error case (`bad-input` or `failed`). */
export class SvclabError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = "SvclabError";
    this.kind = kind;
  }
}

// jco throws a ComponentError whose `payload` is the WIT error variant, or, from the `editing`
// world's functions, a plain string (`bad-input`'s text).
function call(f) {
  try {
    return f();
  } catch (err) {
    const payload = err?.payload;
    if (payload && typeof payload.tag === "string") {
      throw new SvclabError(payload.tag, String(payload.val));
    }
    if (typeof payload === "string") throw new SvclabError("bad-input", payload);
    throw err;
  }
}

function inputs(list) {
  if (typeof list === "string") return [{ name: "-", text: list }];
  if (!Array.isArray(list)) throw new TypeError("inputs must be an array of {name, text} (or one string)");
  return list.map((input, i) => {
    if (typeof input === "string") return { name: String(i), text: input };
    return { name: String(input.name ?? "-"), text: String(input.text ?? "") };
  });
}

/** A policy or profile given as a string (YAML or JSON), an object (its settings), or {name, text}. */
function document(value, name) {
  if (value == null) return undefined;
  if (typeof value === "string") return { name, text: value };
  if (typeof value.text === "string") return { name: String(value.name ?? name), text: value.text };
  return { name, text: JSON.stringify(value) };
}

function userInfo(user) {
  if (user == null) return undefined;
  return { username: String(user.username ?? ""), groups: (user.groups ?? []).map(String) };
}

function checkOptions(options = {}) {
  return {
    noDefaults: Boolean(options.noDefaults),
    policy: document(options.policy, "policy"),
    userInfo: userInfo(options.userInfo),
    explainRelease: Boolean(options.explainRelease),
    omitRules: Boolean(options.omitRules),
  };
}

/** The whole pipeline: the report JSON (`svclab check --output json`), as text. */
export function checkJson(list, options) {
  return call(() => component.check(inputs(list), checkOptions(options)));
}

/** The whole pipeline: the report (`svclab check --output json`, parsed). */
export function check(list, options) {
  return JSON.parse(checkJson(list, options));
}

/**
 * A scenario being edited, checked again after each edit: the same report as `check` of the
 * same text, but an evaluation after an edit reads again only the documents it touched and
 * resumes the pipeline at the first of them (a keystroke in the middle applies about half of the
 * objects again, one near the end almost none). `options`: `noDefaults`, `policy`. Offsets are
 * a JavaScript string's (UTF-16 code units), as an editor gives them. Close a session when done:
 * an instance keeps at most 64 open.
 */
export class Session {
  #handle;

  constructor(input, options = {}) {
    const [{ name, text }] = inputs(typeof input === "string" ? input : [input]);
    const policy = document(options.policy, "policy")?.text;
    this.#handle = call(() => component.sessionOpen(name, text, Boolean(options.noDefaults), policy));
  }

  /** Replaces `text.slice(from, to)` of the session's text with `inserted`. */
  edit(from, to, inserted) {
    call(() => component.sessionEdit(this.#handle, from >>> 0, to >>> 0, String(inserted)));
    return this;
  }

  /** The report of the text as it is now (`check`'s, parsed). */
  check() {
    return JSON.parse(this.checkJson());
  }

  /** The report JSON of the text as it is now, byte for byte `checkJson`'s. */
  checkJson() {
    return call(() => component.sessionCheck(this.#handle));
  }

  /** The text as edited so far. */
  get text() {
    return call(() => component.sessionText(this.#handle));
  }

  /** Frees what the session keeps; it answers no more calls. */
  close() {
    component.sessionClose(this.#handle);
  }
}

/** The diagnostics of `check` alone, typed by the WIT `diagnostic` record. */
export function diagnose(list, options) {
  return call(() => component.diagnose(inputs(list), checkOptions(options)));
}

/** Only the ruleset kube-proxy programs (`svclab render`): iptables-restore input or an nft transaction. */
export function render(list, options = {}) {
  const proxyMode = options.proxyMode ?? "iptables";
  if (proxyMode !== "iptables" && proxyMode !== "nftables") {
    throw new TypeError(`proxyMode must be "iptables" or "nftables", not ${JSON.stringify(proxyMode)}`);
  }
  const family = options.ipFamily == null ? undefined : String(options.ipFamily).toLowerCase();
  if (family !== undefined && family !== "ipv4" && family !== "ipv6") {
    throw new TypeError(`ipFamily must be "IPv4" or "IPv6", not ${JSON.stringify(options.ipFamily)}`);
  }
  return call(() =>
    component.render(inputs(list), {
      proxyMode,
      ipFamily: family,
      node: options.node ?? undefined,
      standalone: Boolean(options.standalone),
    }),
  );
}

/** The packet walk as JSON text (`svclab trace --output json`). */
export function traceJson(list, options = {}) {
  for (const key of ["src", "dst", "dport"]) {
    if (options[key] == null) throw new TypeError(`trace needs ${key}`);
  }
  return call(() =>
    component.trace(inputs(list), {
      src: String(options.src),
      dst: String(options.dst),
      dport: Number(options.dport),
      protocol: String(options.protocol ?? "tcp").toLowerCase(),
      node: options.node ?? undefined,
      inInterface: options.inInterface ?? undefined,
    }),
  );
}

/** The packet walk (`svclab trace --output json`, parsed). */
export function trace(list, options) {
  return JSON.parse(traceJson(list, options));
}

/** The settings errors of a Service policy alone (`svclab policy check`); empty when valid. */
export function checkSettings(settings) {
  return call(() => component.checkSettings(document(settings, "policy")));
}

/** The JSON Schema (draft 2020-12) of the Service policy settings (`svclab policy schema`). */
export function settingsSchema() {
  return JSON.parse(component.settingsSchema());
}

/**
 * An admission.k8s.io/v1 AdmissionReview (object or JSON text) in, the reviewed AdmissionReview
 * out. `options`: `policy` (the Service policy), `profile` (a ClusterProfile or its fields),
 * `stringlyTyped`, `inventory` (the cluster's other Services, objects or JSON texts).
 */
export function validateAdmission(review, options = {}) {
  const text = typeof review === "string" ? review : JSON.stringify(review);
  const admission = {
    policy: document(options.policy, "policy"),
    profile: document(options.profile, "profile"),
    stringlyTyped: Boolean(options.stringlyTyped),
    inventory: options.inventory?.map((s) => (typeof s === "string" ? s : JSON.stringify(s))),
  };
  return JSON.parse(call(() => component.validateAdmission(text, admission)));
}

/** The suffix of suite files (`*.svclab-test.yaml`): `runTests` runs the files so named. */
export const SUITE_SUFFIX = ".svclab-test.yaml";

function testFiles(files) {
  if (files == null || typeof files !== "object") {
    throw new TypeError("runTests takes an array of {name, text} or an object of name: text");
  }
  const list = Array.isArray(files)
    ? files.map((f) => ({ name: String(f.name), text: String(f.text ?? "") }))
    : Object.entries(files).map(([name, text]) => ({ name, text: String(text) }));
  const suites = list.filter((f) => f.name.endsWith(SUITE_SUFFIX));
  if (suites.length === 0) throw new TypeError(`runTests found no suite (a name ending in ${SUITE_SUFFIX})`);
  return { suites, others: list.filter((f) => !f.name.endsWith(SUITE_SUFFIX)) };
}

/**
 * Runs `svclab test` suites: `files` holds the suites (names ending in `.svclab-test.yaml`) and
 * every file they name (scenario files, policies, golden rulesets), under the names the suites
 * give them relative to their own folder. The result is `svclab test --output json`'s, parsed;
 * with `{ update: true }` it also has `updated`: the rewritten files, `{name, text}`.
 */
export function runTests(files, options = {}) {
  const { suites, others } = testFiles(files);
  const run = call(() => component.runTests(suites, others, { update: Boolean(options.update) }));
  const result = JSON.parse(run.json);
  if (options.update) result.updated = run.updated;
  return result;
}

/** The text of `svclab test` for the same files (cargo test's shape, byte for byte). */
export function runTestsText(files, options = {}) {
  const { suites, others } = testFiles(files);
  return call(() => component.runTests(suites, others, { update: Boolean(options.update) })).text;
}

/** The files the suites among `files` name, resolved against each suite's folder. */
export function testFilesNeeded(files) {
  return component.testFiles(testFiles(files).suites);
}

/** The JSON Schema (draft 2020-12) of the suite format (`svclab test schema`). */
export function testSchema() {
  return JSON.parse(component.testSchema());
}
