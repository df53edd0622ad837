#!/usr/bin/env bash
# cosign, built from its Go module (github.com/sigstore/cosign/v2, pinned below) into svclab's
# cache: the distribution test signs the images it pushed to its loopback registry with a key
# pair it makes, and verifies them with `cosign verify`. No prebuilt binary is downloaded; Go
# comes from 20-go.sh and builds with GOTOOLCHAIN=local. Idempotent: nothing happens when the
# pinned version is there. The first build takes minutes (about 300 modules).
set -euo pipefail
version=v2.6.5
cache="${SVCLAB_CACHE_DIR:-$HOME/.cache/svclab}"
bin="$cache/bin"
if [ -x "$bin/cosign" ] && "$bin/cosign" version 2>/dev/null | grep -q "GitVersion: *$version\$"; then
    exit 0
fi
if ! command -v go >/dev/null 2>&1; then
    echo "49-cosign: Go is missing (20-go.sh); the signing test will fail saying so" >&2
    exit 0
fi
echo "49-cosign: building cosign $version from its Go module into $bin"
mkdir -p "$bin"
GOTOOLCHAIN=local GOBIN="$bin" GOFLAGS=-buildvcs=false \
    go install -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/release-utils/version.gitVersion=$version" \
    "github.com/sigstore/cosign/v2/cmd/cosign@$version"
