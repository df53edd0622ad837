// The package's `Session`: a scenario edited in a JavaScript string's offsets and checked after
// every edit gives `checkJson` of the same text, byte for byte; edits that do not fit are
// refused and leave the text; an instance keeps at most 64 sessions. Run by tests/npm.rs with
// SVCLAB_NPM set.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const NPM = process.env.SVCLAB_NPM ?? path.join(root, "target/npm/svclab");
assert.ok(existsSync(path.join(NPM, "package.json")), `no package at ${NPM}: run \`cargo xtask npm\``);
const manifest = JSON.parse(readFileSync(path.join(NPM, "package.json"), "utf8"));
const svclab = await import(pathToFileURL(path.join(NPM, manifest.exports["."].default)).href);

const NAME = "scenario.yaml";

/** Services, each with an annotation holding characters of one, two and four UTF-8 bytes. */
function scenario(count) {
  const services = [];
  for (let i = 0; i < count; i++) {
    services.push(`apiVersion: v1
kind: Service
metadata:
  name: svc-${i}
  annotations: {note: "é𝄞 ${i}"}
spec:
  type: ${i % 3 === 0 ? "NodePort" : "ClusterIP"}
  selector: {app: svc-${i}}
  ports: [{port: 80, targetPort: 8080}]`);
  }
  return services.join("\n---\n") + "\n";
}

/** The session against a fresh check of the text the edits should have made. */
function check(session, expected) {
  assert.equal(session.text, expected);
  assert.equal(session.checkJson(), svclab.checkJson([{ name: NAME, text: expected }]));
}

test("edits in a JavaScript string's offsets check as the edited text does", () => {
  let text = scenario(30);
  const session = new svclab.Session({ name: NAME, text });
  check(session, text);
  // A pseudo-random walk of edits (fixed seed): typing, deleting, a separator, a port fixed,
  // a name broken and mended, on both sides of the surrogate pairs.
  let seed = 7;
  const next = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const edits = [];
  for (let i = 0; i < 40; i++) {
    const kind = next(5);
    let from = next(text.length + 1);
    // Never inside a surrogate pair: that is refused (below).
    if (from > 0 && from < text.length && /[\uDC00-\uDFFF]/.test(text[from])) from -= 1;
    let to = Math.min(text.length, from + [0, 1, 3, 0, 2][kind]);
    if (to > 0 && to < text.length && /[\uDC00-\uDFFF]/.test(text[to])) to += 1;
    const inserted = ["x", "", "\n---\n", "9", "é"][kind];
    edits.push([from, to, inserted]);
    session.edit(from, to, inserted);
    text = text.slice(0, from) + inserted + text.slice(to);
    check(session, text);
  }
  // The middle Service's port, as a user fixes a value.
  const at = text.indexOf("port: 80,", text.length / 2) + "port: ".length;
  session.edit(at, at + 2, "8443");
  text = text.slice(0, at) + "8443" + text.slice(at + 2);
  check(session, text);
  session.close();
});

test("an edit outside the text or inside a surrogate pair is refused, and the text stays", () => {
  const text = scenario(2);
  const session = new svclab.Session(text, { noDefaults: true });
  const refused = (from, to) =>
    assert.throws(() => session.edit(from, to, "x"), (err) => err instanceof svclab.SvclabError && err.kind === "bad-input");
  refused(0, text.length + 1);
  refused(5, 4);
  const pair = text.indexOf("𝄞");
  refused(pair + 1, pair + 1);
  assert.equal(session.text, text);
  assert.equal(session.checkJson(), svclab.checkJson([{ name: "-", text }], { noDefaults: true }));
  session.close();
  assert.throws(() => session.check(), /no open session/);
});

test("an instance keeps at most 64 sessions open; closing one makes room", () => {
  const sessions = [];
  for (let i = 0; i < 64; i++) sessions.push(new svclab.Session(`# ${i}\n`));
  assert.throws(() => new svclab.Session("# one too many\n"), /64 sessions are open/);
  sessions.pop().close();
  const another = new svclab.Session("# room again\n");
  assert.equal(another.text, "# room again\n");
  for (const session of [...sessions, another]) session.close();
});
