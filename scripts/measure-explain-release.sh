#!/usr/bin/env bash
# CPU time (user + sys, GNU time) and peak RSS of `svclab check` with and without
# --explain-release, which evaluates the scenario once more per release (1.24 to the newest).
# Usage: scripts/measure-explain-release.sh [SERVICES]   (default 1000; needs a built svclab:
# $SVCLAB, else target/release/svclab under $CARGO_TARGET_DIR or ./target)
set -euo pipefail
cd "$(dirname "$0")/.."
services="${1:-1000}"
target="${CARGO_TARGET_DIR:-target}"
svclab="${SVCLAB:-$target/release/svclab}"
[ -x "$svclab" ] || { echo "no svclab binary at $svclab (cargo build --release -p svclab-host, or set SVCLAB)" >&2; exit 1; }
scenario="$(mktemp --suffix=.yaml)"
trap 'rm -f "$scenario"' EXIT
cargo run --quiet -p xtask -- gen-scenario --services "$services" > "$scenario"
for flags in "" "--explain-release"; do
  /usr/bin/time -f "check $flags: %U user + %S sys s, %M KB peak RSS" \
    "$svclab" check --output json $flags "$scenario" > /dev/null || true
done
