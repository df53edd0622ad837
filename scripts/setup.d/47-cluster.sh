#!/usr/bin/env bash
# The real control plane of the cluster tests (oracle/cluster/, svclab_oracle::cluster):
# openssl makes its throwaway service-account key, kubectl (45-gateways.sh) drives it, flock
# (util-linux) serialises its builds. etcd, kube-apiserver and kube-proxy themselves are built
# from their Go modules by the tests (cached; Go from 20-go.sh). Idempotent.
set -euo pipefail

missing=()
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v flock >/dev/null 2>&1 || missing+=(util-linux)
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "47-cluster: missing ${missing[*]} and not root; the cluster tests will fail saying so" >&2
    exit 0
fi
echo "47-cluster: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
