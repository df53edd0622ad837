#!/usr/bin/env bash
# The distribution tests (host-runner/tests/oci.rs): a real OCI registry on loopback, Debian's
# docker-registry (the CNCF distribution registry), with TLS from a throwaway CA that openssl
# makes, skopeo to push and pull the images `cargo xtask dist` writes, and runc, the OCI runtime
# that runs the webhook image (Debian's crun 1.8 refuses this machine's hybrid cgroup layout:
# "cgroups in hybrid mode not supported, drop all controllers from cgroupv2"). `cargo xtask dist`
# itself needs ldd and strip (libc-bin, binutils) and the CA bundle of ca-certificates.
# Idempotent: nothing is installed when everything is present.
set -euo pipefail

missing=()
command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
command -v skopeo >/dev/null 2>&1 || missing+=(skopeo)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v runc >/dev/null 2>&1 || missing+=(runc)
command -v strip >/dev/null 2>&1 || missing+=(binutils)
[ -f /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "48-distribution: missing ${missing[*]} and not root; the distribution tests will fail saying so" >&2
    exit 0
fi
echo "48-distribution: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Debian's package starts a registry on :5000 where an init system runs; the tests start their
# own on a free loopback port, so a running service is left as it is.
