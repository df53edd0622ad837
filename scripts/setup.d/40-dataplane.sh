#!/usr/bin/env bash
# Tools of the dataplane suite (tests/dataplane.rs): iproute2 (ip netns, veth), iptables
# (iptables-nft-restore / iptables-legacy-restore), nftables (nft -f) and nfacct (the counters
# kube-proxy's rules reference when the host has them). Installs only what is missing.
#
# Which iptables-restore: the suite uses iptables-nft-restore explicitly, never the `iptables`
# alternative, so the result does not depend on update-alternatives. The nft backend is
# Debian's default since bullseye, the default of kube-proxy's own image wrapper on hosts
# without legacy rules, and needs no legacy x_tables modules (which newer kernels make
# optional). SVCLAB_DATAPLANE_IPTABLES=legacy switches the suite to iptables-legacy-restore.
set -euo pipefail

missing=()
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v iptables-nft-restore >/dev/null 2>&1 || missing+=(iptables)
command -v nft >/dev/null 2>&1 || missing+=(nftables)
command -v nfacct >/dev/null 2>&1 || missing+=(nfacct)

if [ "${#missing[@]}" -eq 0 ]; then
    echo "40-dataplane: iproute2, iptables, nftables and nfacct are present"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "40-dataplane: missing ${missing[*]} and not root; the dataplane suite will fail (or set SVCLAB_SKIP_DATAPLANE=1)" >&2
    exit 0
fi
echo "40-dataplane: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
