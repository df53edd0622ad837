#!/usr/bin/env bash
# The fuzzing toolchain: a pinned nightly (cargo-fuzz needs -Zsanitizer and libFuzzer's
# coverage instrumentation) and a pinned cargo-fuzz. `cargo xtask fuzz` uses both; fast when
# both are present.
set -euo pipefail
NIGHTLY=nightly-2026-05-20
CARGO_FUZZ=0.13.2
host="$(rustc -vV | sed -n 's/^host: //p')"
toolchains="${RUSTUP_HOME:-$HOME/.rustup}/toolchains"
if ! rustup toolchain list | grep -q "^$NIGHTLY-$host"; then
  # A machine whose only nightly is the channel toolchain of that very date (and no way to
  # download another) gets the pinned name as a link to it, the way rustup names a dated one.
  channel="$toolchains/nightly-$host"
  if [ -f "$channel/lib/rustlib/multirust-channel-manifest.toml" ] &&
    grep -qx "date = \"${NIGHTLY#nightly-}\"" "$channel/lib/rustlib/multirust-channel-manifest.toml"; then
    ln -sfn "$channel" "$toolchains/$NIGHTLY-$host"
  else
    rustup toolchain install "$NIGHTLY" --profile minimal
  fi
fi
if [ "$(cargo fuzz --version 2>/dev/null || true)" != "cargo-fuzz $CARGO_FUZZ" ]; then
  cargo install cargo-fuzz --version "$CARGO_FUZZ" --locked
fi
