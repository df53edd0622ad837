#!/usr/bin/env bash
# The distribution tests (host-runner/tests/oci.rs): a real OCI registry on loopback, Debian's
# docker-registry (the CNCF distribution registry), with TLS from a throwaway CA that openssl
# makes, and skopeo to push and pull the images `cargo xtask dist` writes. Idempotent: nothing
# is installed when all three are present.
set -euo pipefail

missing=()
command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
command -v skopeo >/dev/null 2>&1 || missing+=(skopeo)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "48-registry: missing ${missing[*]} and not root; the registry test will fail saying so" >&2
    exit 0
fi
echo "48-registry: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Debian's package starts a registry on :5000 where an init system runs; the tests start their
# own on a free loopback port, so a running service is left as it is.
