#!/usr/bin/env python3
"""Admission throughput and latency through the real gateways, with and without svclab.

Starts, on loopback: an Envoy that plays the API server (a direct_response 201, so the
upstream costs next to nothing), then Envoy and Traefik from the files in deploy/ in front of
it, each once with the svclab guest and once without, and drives each with wrk (POST of a
typical Service, one connection by default, so latency is the time per request). Prints requests per second and p50/p99 latency,
and the filter's cost (p99 with minus p99 without).

Usage: cargo xtask plugins && scripts/bench-gateways.py [--duration 10] [--plugins DIR]
Needs scripts/setup.d/45-gateways.sh (envoy, traefik, wrk).
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(os.environ.get("SVCLAB_CACHE_DIR", os.path.expanduser("~/.cache/svclab")), "venv", "bin")

SERVICE = json.dumps({
    "apiVersion": "v1", "kind": "Service",
    "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
    "spec": {"type": "ClusterIP", "selector": {"app": "web"},
             "ports": [{"name": "http", "port": 80, "targetPort": 8080},
                       {"name": "https", "port": 443, "targetPort": 8443}]},
})

UPSTREAM = """
admin: {address: {socket_address: {address: 127.0.0.1, port_value: %(admin)d}}}
static_resources:
  listeners:
  - address: {socket_address: {address: 127.0.0.1, port_value: %(port)d}}
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          stat_prefix: upstream
          route_config:
            virtual_hosts:
            - name: all
              domains: ["*"]
              routes:
              - match: {prefix: "/"}
                direct_response: {status: 201, body: {inline_string: "{}"}}
          http_filters:
          - name: envoy.filters.http.router
            typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def template(path, variables):
    with open(os.path.join(ROOT, path)) as f:
        text = f.read()
    for name, value in variables.items():
        text = text.replace("${%s}" % name, str(value))
    return text


def wait_http(url, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except Exception:
            pass
        time.sleep(0.2)
    raise SystemExit("not ready: " + url)


def start(argv, cwd, log):
    return subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def envoy(work, upstream, plugins, with_filter):
    port, admin = free_port(), free_port()
    text = template("deploy/envoy/envoy.yaml", {
        "LISTEN_PORT": port, "ADMIN_PORT": admin, "UPSTREAM_PORT": upstream,
        "PLUGIN_WASM": os.path.join(plugins, "svclab_plugin_proxy_wasm.wasm"), "SVCLAB_CONFIG": "{}",
    })
    if not with_filter:
        text = re.sub(r"\n\s*- name: envoy\.filters\.http\.wasm.*?(?=\n\s*- name: envoy\.filters\.http\.router)",
                      "", text, flags=re.S)
    path = os.path.join(work, "envoy-%d.yaml" % port)
    with open(path, "w") as f:
        f.write(text)
    proc = start([os.path.join(VENV, "envoy"), "-c", path, "--concurrency", "1", "--disable-hot-restart",
                  "--log-level", "error"], work, open(path + ".log", "w"))
    wait_http("http://127.0.0.1:%d/ready" % admin)
    return proc, port


def traefik(work, upstream, plugins, with_filter):
    port, admin = free_port(), free_port()
    folder = os.path.join(work, "traefik-%d" % port)
    layout = os.path.join(folder, "plugins-local/src/svclab.dev/svclab")
    os.makedirs(layout)
    shutil.copy(os.path.join(ROOT, "deploy/traefik/plugins-local/src/svclab.dev/svclab/.traefik.yml"), layout)
    shutil.copy(os.path.join(plugins, "svclab_plugin_http_wasm.wasm"), os.path.join(layout, "plugin.wasm"))
    variables = {"LISTEN_PORT": port, "ADMIN_PORT": admin, "UPSTREAM_PORT": upstream, "SVCLAB_CONFIG": "{}",
                 "DYNAMIC_FILE": os.path.join(folder, "dynamic.yml")}
    dynamic = template("deploy/traefik/dynamic.yml", variables)
    if not with_filter:
        dynamic = dynamic.replace("      middlewares: [svclab]\n", "")
    with open(variables["DYNAMIC_FILE"], "w") as f:
        f.write(dynamic)
    with open(os.path.join(folder, "traefik.yml"), "w") as f:
        f.write(template("deploy/traefik/traefik.yml", variables))
    proc = start([os.path.join(VENV, "traefik"), "--configFile=traefik.yml"], folder,
                 open(os.path.join(folder, "log"), "w"))
    wait_http("http://127.0.0.1:%d/ping" % admin)
    deadline = time.time() + 60
    while True:  # the router is up once a request through it reaches the upstream
        try:
            urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%d/x" % port), timeout=2)
            break
        except urllib.error.HTTPError as err:
            if err.code == 201:
                break
        except Exception:
            pass
        if time.time() > deadline:
            raise SystemExit("traefik router not ready")
        time.sleep(0.2)
    return proc, port


def wrk(port, duration, script, connections):
    out = subprocess.run(["wrk", "-t1", "-c%d" % connections, "-d%ds" % duration, "--latency", "-s", script,
                          "http://127.0.0.1:%d/api/v1/namespaces/shop/services" % port],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def percentile(p):
        value, unit = re.search(r"\s%s%%\s+([\d.]+)(us|ms|s)" % p, out).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    status = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, percentile(50), percentile(99), int(status.group(1)) if status else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=1,
                        help="concurrent connections (1 measures the time per request)")
    parser.add_argument("--plugins", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "plugin-wasm", "plugins"))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="svclab-bench-")
    script = os.path.join(work, "post.lua")
    with open(script, "w") as f:
        f.write('wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n'
                % json.dumps(SERVICE))
    procs = []
    try:
        up_port, up_admin = free_port(), free_port()
        path = os.path.join(work, "upstream.yaml")
        with open(path, "w") as f:
            f.write(UPSTREAM % {"port": up_port, "admin": up_admin})
        procs.append(start([os.path.join(VENV, "envoy"), "-c", path, "--concurrency", "1",
                            "--disable-hot-restart", "--log-level", "error"], work, open(path + ".log", "w")))
        wait_http("http://127.0.0.1:%d/ready" % up_admin)
        print("| gateway | svclab | requests/s | p50 ms | p99 ms | non-2xx |")
        print("| --- | --- | ---: | ---: | ---: | ---: |")
        for name, launch in (("Envoy 1.40", envoy), ("Traefik 3.7", traefik)):
            p99 = {}
            for with_filter in (False, True):
                proc, port = launch(work, up_port, args.plugins, with_filter)
                procs.append(proc)
                wrk(port, 2, script, args.connections)  # warm-up
                rps, p50, p99[with_filter], bad = wrk(port, args.duration, script, args.connections)
                print("| %s | %s | %.0f | %.2f | %.2f | %d |" % (name, "on" if with_filter else "off", rps, p50,
                                                                  p99[with_filter], bad))
                proc.terminate()
                proc.wait()
            print("| %s | cost | | | %+.2f | |" % (name, p99[True] - p99[False]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
                proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
