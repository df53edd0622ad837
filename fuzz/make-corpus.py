#!/usr/bin/env python3
"""Writes svclab's fuzz seed corpus (fuzz/corpus/<target>/) from the repository's examples,
conformance vectors and kube-proxy goldens. Deterministic; run from anywhere. The files are
checked in: this script is how they were made, not a build step."""
import base64, hashlib, json, os, random, zlib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fuzz" / "corpus"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def merge(base, patch):
    if not isinstance(patch, dict) or not isinstance(base, dict):
        return patch
    out = dict(base)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


def vector_objects(path, every):
    doc = yaml.safe_load(path.read_text())
    bases = doc.get("bases", {})
    objs = []
    for i, v in enumerate(doc.get("vectors", [])):
        if i % every or v.get("base") not in bases:
            continue
        objs.append(merge(bases[v["base"]], v.get("patch") or {}))
    return objs


scenarios = sorted((ROOT / "examples").glob("*.yaml")) + sorted((ROOT / "tests/data/cli").glob("*.yaml"))
scenarios += sorted((ROOT / "tests/data/proxy").glob("*/input.yaml"))
scenarios += [ROOT / "tests/data/proxy/trace-iptables-save/scenario.yaml"]
for p in scenarios:
    put("check_yaml", p.read_text())
    put("yaml_readers", p.read_text())
objects = vector_objects(ROOT / "tests/data/validation/vectors.yaml", 9)
for obj in objects:
    put("check_yaml", yaml.safe_dump(obj))
    put("yaml_readers", yaml.safe_dump(obj))
# Where the fast reader must step aside: anchors, tags, block and multi-line scalars, escapes,
# comments after content, tabs, nested flow, non-ASCII, separators inside a document.
for text in [
    "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: |\n  text\n", "a: foo\n  bar\n", "a: 1 # note\n",
    "a:\nb: 1\n", 'a: "x\\ty"\n', "a: [1, [2]]\n", "1: a\n", '{"a": 1}\n', "a: 1\n b: 2\n",
    "- - a\n", "a:\tb\n", "a: é\n", "a: 1\n---\nb: 2\n", "a: 'it''s'\nb: \"q\"\n",
    "x:\n- a: 1\n  b: [c, 'd', \"e\"]\n- {f: g, h: 0x1F}\n",
]:
    put("yaml_readers", text)
for p in scenarios[:8]:
    docs = [d for d in yaml.safe_load_all(p.read_text()) if d]
    put("check_json", "\n".join(json.dumps(d, indent=1) for d in docs))
    put("check_json", json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
for obj in objects[:20]:
    put("check_json", json.dumps(obj))

for i, p in enumerate(sorted((ROOT / "tests/data/proxy").glob("*/input.yaml")) + scenarios[:7]):
    text = p.read_text()
    put("render_trace", bytes([i % 32]) + text.encode())

# kube-proxy by release: each case of the release goldens as the scenario it renders (the
# ClusterProfile's kubernetesVersion, the KubeProxyConfiguration's mode and fields, its own
# featureGates), so mutation starts from the release-dependent paths and startup refusals.
releases = ROOT / "tests/data/proxy-releases"
for case in yaml.safe_load((releases / "cases.yaml").read_text()):
    docs = [d for d in yaml.safe_load_all((releases / case.get("scenario", "scenario.yaml")).read_text()) if d]
    for d in docs:
        if d.get("kind") == "ClusterProfile":
            d["kubernetesVersion"] = case["release"]
        if d.get("kind") == "KubeProxyConfiguration":
            d["mode"] = case["mode"]
            d.update(case.get("kubeProxyConfiguration") or {})
    text = yaml.safe_dump_all(docs, sort_keys=False)
    flags = (1 if case["mode"] == "nftables" else 0) | (8 if case.get("standalone") else 0)
    put("render_trace", bytes([flags]) + text.encode())
    put("check_yaml", text)

for i, p in enumerate(sorted((ROOT / "tests/data/proxy").glob("*/expected.*"))):
    flags = 1 if p.suffix == ".nft" or "nft" in p.name else 0
    put("trace_rules", bytes([flags | (i & 4)]) + p.read_bytes())
put("trace_rules", b"\x00" + (ROOT / "tests/data/proxy/trace-iptables-save/iptables-save.txt").read_bytes())

review = {
    "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
    "request": {"uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                "kind": {"group": "", "version": "v1", "kind": "Service"},
                "resource": {"group": "", "version": "v1", "resource": "services"},
                "namespace": "default", "operation": "CREATE",
                "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
                "object": None, "oldObject": None},
}
for i, obj in enumerate(objects[:24]):
    r = json.loads(json.dumps(review))
    r["request"]["object"] = obj
    if obj.get("kind") == "EndpointSlice":
        r["request"]["kind"] = {"group": "discovery.k8s.io", "version": "v1", "kind": "EndpointSlice"}
    if i % 5 == 4:
        r["request"]["operation"] = "UPDATE"
        r["request"]["oldObject"] = obj
    put("admission", bytes([i % 4]) + json.dumps(r).encode())

for p in sorted((ROOT / "tests/data/policy").glob("*.yaml")) + sorted((ROOT / "examples").glob("policy-*.yaml")) + [ROOT / "tests/data/cli/policy.yaml", ROOT / "tests/data/cli/policy-invalid.yaml"]:
    put("policy_settings", p.read_text())


def share(state):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw = c.compress(json.dumps(state).encode()) + c.flush()
    return "#v1." + base64.urlsafe_b64encode(raw).decode().rstrip("=")


for i, p in enumerate(scenarios[:6]):
    state = {"scenario": p.read_text()}
    if i % 2:
        state.update(tab="trace", rulesFilter="default/web",
                     trace={"src": "10.244.0.5", "dst": "10.96.0.10", "port": "53", "protocol": "UDP"})
    put("share_link", share(state))
put("share_link", "v1.AAAA")
put("share_link", share({"scenario": "", "future": {"x": 1}}))

config = {"prefix": "/svclab", "mode": "enforce", "patch": "warn",
          "policy": {"types": {"allowed": ["ClusterIP", "NodePort"]}},
          "profile": {"kubernetesVersion": "1.30"}, "limits": {"maxBodyBytes": 65536, "maxObjects": 10}}
stringly = {"prefix": "/svclab", "mode": "warn", "profile": {"kubernetesVersion": "1.300000"},
            "limits": {"maxBodyBytes": "65536"}}
svc = json.dumps(objects[0])
scenario = scenarios[0].read_text()
for i, (flags, cfg, method, path, body) in enumerate([
    (0, config, "POST", "/api/v1/namespaces/default/services", svc),
    (0, config, "PUT", "/api/v1/namespaces/default/services/web", svc),
    (0, config, "PUT", "/api/v1/namespaces/default/services/web/status", svc),
    (0, config, "PATCH", "/api/v1/namespaces/default/services/web", "{}"),
    (0, config, "POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", json.dumps(objects[-1])),
    (0, config, "POST", "/svclab/check", scenario),
    (0, config, "POST", "/svclab/render?mode=nftables", scenario),
    (0, config, "POST", "/svclab/trace?src=10.244.0.5&dst=10.96.0.10&port=53&protocol=udp", scenario),
    (1, stringly, "POST", "/api/v1/namespaces/default/services?dryRun=All", svc),
    (2, {}, "GET", "/api/v1/services", ""),
]):
    put("gateway", bytes([flags]) + json.dumps(cfg).encode() + b"\0" + method.encode() + b"\0" + path.encode() + b"\0" + body.encode())

rng = random.Random(15)
for n in [64, 128, 256, 512, 1024, 2048, 4096]:
    for _ in range(3):
        put("structured", bytes(rng.randrange(256) for _ in range(n)))
