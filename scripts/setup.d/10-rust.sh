#!/usr/bin/env bash
# The pinned toolchain (rust-toolchain.toml) with its WebAssembly targets and components.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
need=()
installed="$(rustup target list --installed 2>/dev/null || true)"
for t in wasm32-unknown-unknown wasm32-wasip1 wasm32-wasip2; do
  grep -qx "$t" <<<"$installed" || need+=("$t")
done
if [ ${#need[@]} -gt 0 ]; then
  rustup target add "${need[@]}"
fi
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
