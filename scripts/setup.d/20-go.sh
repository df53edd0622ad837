#!/usr/bin/env bash
# Go, for the upstream oracle (oracle/apiserver, oracle/proxy: kube-apiserver's and kube-proxy's
# own code built from the k8s.io/kubernetes Go module). svclab does not install Go: the machine
# brings it (Go 1.26.8 here; every release of oracle/releases.txt builds with it). The oracle's
# builds run with GOTOOLCHAIN=local, so no other toolchain is ever downloaded.
set -euo pipefail
need="1.26"
if ! command -v go >/dev/null 2>&1; then
  echo "20-go: Go $need or newer is not installed; the upstream oracle step of scripts/test needs it" >&2
  exit 1
fi
have="$(GOTOOLCHAIN=local go env GOVERSION)"
have="${have#go}"
if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" != "$need" ]; then
  echo "20-go: Go $have is older than $need, which the upstream oracle needs" >&2
  exit 1
fi
echo "20-go: Go $have"
