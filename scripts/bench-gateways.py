#!/usr/bin/env python3
"""Admission throughput and latency through the real gateways, with and without svclab.

Starts, on loopback: an Envoy that plays the API server (a direct_response 201, so the
upstream costs next to nothing), then Envoy and Traefik from the files in deploy/ in front of
it, each once with the svclab guest and once without, and drives each with wrk (POST of a
typical Service to the guarded path, one connection by default, so latency is the time per
request). Prints requests per second, p50/p99 latency and the gateway's CPU time (user+sys from
/proc) per request, then the filter's cost: p99 with minus p99 without (target: under 1 ms) and
CPU per request with minus without, the figure that stays meaningful on a loaded machine.

Every gateway process gets a warm-up of wrk traffic (2 s, not measured) before its measured
run, which absorbs what only the first requests pay: code the runtime compiles lazily on a
function's first call and the guest's memory growing to its working size. There is no tier-up
to wait for in Envoy: it starts V8 with `--no-liftoff` (the flag string is in the envoy
binary), so wasm runs only in the optimizing tier, TurboFan. Runs alternate off/on for
--rounds rounds and the summary takes the median of each figure, so one disturbed run on a
shared machine does not decide the result; every run's row is printed too.

Usage (one line, about 2.5 minutes with the defaults; builds the guests first unless --plugins):
    scripts/bench-gateways.py [--duration 5] [--rounds 3] [--connections 1] [--gateway both]
                              [--plugins DIR]
Needs scripts/setup.d/45-gateways.sh (envoy, traefik, wrk).
"""

import argparse
import json
import os
import re
import shutil
import statistics
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


def cpu_seconds(pid):
    """User+system CPU time of a process so far, from /proc/PID/stat."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk(port, duration, script, connections):
    out = subprocess.run(["wrk", "-t1", "-c%d" % connections, "-d%ds" % duration, "--latency", "-s", script,
                          "http://127.0.0.1:%d/api/v1/namespaces/shop/services" % port],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def percentile(p):
        value, unit = re.search(r"\s%s%%\s+([\d.]+)(us|ms|s)" % p, out).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    status = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    total = int(re.search(r"(\d+) requests in", out).group(1))
    return rps, percentile(50), percentile(99), int(status.group(1)) if status else 0, total


WARM_UP_SECONDS = 2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=int, default=5, help="seconds measured per run")
    parser.add_argument("--rounds", type=int, default=3,
                        help="off/on runs per gateway; the summary takes the median of each figure")
    parser.add_argument("--connections", type=int, default=1,
                        help="concurrent connections (1 measures the time per request)")
    parser.add_argument("--gateway", choices=("both", "envoy", "traefik"), default="both")
    parser.add_argument("--plugins", help="a folder `cargo xtask plugins` filled (default: build it now)")
    args = parser.parse_args()
    if args.plugins is None:
        args.plugins = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "plugins")
        subprocess.run(["cargo", "xtask", "plugins", "--out", args.plugins], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    work = tempfile.mkdtemp(prefix="svclab-bench-")
    script = os.path.join(work, "post.lua")
    with open(script, "w") as f:
        f.write('wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n'
                % json.dumps(SERVICE))
    procs = []
    gateways = [(name, launch) for key, name, launch in (("envoy", "Envoy 1.40", envoy), ("traefik", "Traefik 3.7", traefik))
                if args.gateway in ("both", key)]
    try:
        up_port, up_admin = free_port(), free_port()
        path = os.path.join(work, "upstream.yaml")
        with open(path, "w") as f:
            f.write(UPSTREAM % {"port": up_port, "admin": up_admin})
        procs.append(start([os.path.join(VENV, "envoy"), "-c", path, "--concurrency", "1",
                            "--disable-hot-restart", "--log-level", "error"], work, open(path + ".log", "w")))
        wait_http("http://127.0.0.1:%d/ready" % up_admin)
        print("Each run: a fresh gateway process, %d s of wrk warm-up (not measured), then %d s measured; "
              "%d round(s) of off/on; load average at start: %s"
              % (WARM_UP_SECONDS, args.duration, args.rounds, " ".join(open("/proc/loadavg").read().split()[:3])))
        print("| gateway | svclab | round | requests/s | p50 ms | p99 ms | gateway CPU µs/request | non-2xx |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        summary = []
        for name, launch in gateways:
            runs = {False: [], True: []}
            for round_ in range(1, args.rounds + 1):
                for with_filter in (False, True):
                    proc, port = launch(work, up_port, args.plugins, with_filter)
                    procs.append(proc)
                    wrk(port, WARM_UP_SECONDS, script, args.connections)
                    before = cpu_seconds(proc.pid)
                    rps, p50, p99, bad, total = wrk(port, args.duration, script, args.connections)
                    cpu = (cpu_seconds(proc.pid) - before) / max(total, 1) * 1e6
                    runs[with_filter].append((rps, p50, p99, cpu))
                    print("| %s | %s | %d | %.0f | %.2f | %.2f | %.0f | %d |" % (
                        name, "on" if with_filter else "off", round_, rps, p50, p99, cpu, bad))
                    proc.terminate()
                    proc.wait()
            median = {f: [statistics.median(column) for column in zip(*runs[f])] for f in runs}
            for with_filter in (False, True):
                rps, p50, p99, cpu = median[with_filter]
                print("| %s | %s | median | %.0f | %.2f | %.2f | %.0f | |" % (
                    name, "on" if with_filter else "off", rps, p50, p99, cpu))
            summary.append((name, median[True][1] - median[False][1], median[True][2] - median[False][2],
                            median[True][3] - median[False][3]))
        for name, p50_cost, p99_cost, cpu_cost in summary:
            print("%s: the svclab filter adds %+.2f ms p99 (target < 1 ms: %s), %+.2f ms p50, %+.0f µs CPU per request"
                  " (medians of %d rounds)"
                  % (name, p99_cost, "met" if p99_cost < 1 else "NOT met", p50_cost, cpu_cost, args.rounds))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
                proc.wait()
        shutil.rmtree(work, ignore_errors=True)

if __name__ == "__main__":
    sys.exit(main())
