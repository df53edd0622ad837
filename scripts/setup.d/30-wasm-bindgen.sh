#!/usr/bin/env bash
# The playground build (`cargo xtask playground`): the wasm32 target and the wasm-bindgen CLI
# of exactly the version of the wasm-bindgen crate in Cargo.lock. The CLI is installed without
# --locked on purpose: its own lockfile pins a webpki-roots release the index no longer serves.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown \
  || rustup target add wasm32-unknown-unknown
version="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)"
if [ -z "$version" ]; then
  echo "30-wasm-bindgen: wasm-bindgen is not in Cargo.lock" >&2
  exit 1
fi
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $version" ]; then
  echo "installing wasm-bindgen-cli $version (takes a few minutes)"
  cargo install wasm-bindgen-cli --version "$version"
fi
