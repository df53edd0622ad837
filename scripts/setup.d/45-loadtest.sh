#!/usr/bin/env bash
# Tools of `cargo xtask loadtest` (the webhook's load figures): wrk drives `svclab serve`, curl
# reads its /metrics afterwards. Not needed by scripts/test. Installs only what is missing.
set -euo pipefail

missing=()
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v curl >/dev/null 2>&1 || missing+=(curl)

if [ "${#missing[@]}" -eq 0 ]; then
    echo "45-loadtest: wrk and curl are present"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "45-loadtest: missing ${missing[*]} and not root; cargo xtask loadtest will fail" >&2
    exit 0
fi
echo "45-loadtest: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
