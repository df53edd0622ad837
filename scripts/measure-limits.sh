#!/usr/bin/env bash
# Measures the core (release build, native) on the generated 100,000-Service scenario with its
# EndpointSlices against the limits table of ARCHITECTURE.md: CPU time (user + sys, which a
# loaded machine does not inflate the way it does wall time) and peak RSS, for `check` and for
# `check` + rendering both proxy modes. Usage: scripts/measure-limits.sh [SERVICES]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
services="${1:-100000}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --locked --release -q -p svclab-fuzz --example scale
scenario="$(mktemp --suffix=.yaml)"
trap 'rm -f "$scenario"' EXIT
cargo xtask gen-scenario --services "$services" --slices >"$scenario"
echo "scenario: $services Services with EndpointSlices, $(wc -c <"$scenario") bytes, $(grep -c '^---' "$scenario") documents"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1); load $(cut -d' ' -f1-3 /proc/loadavg)"
for command in check render; do
  out="$(mktemp)"
  /usr/bin/time -f '%U %S %M' -o "$out.time" "$target/release/examples/scale" "$command" "$scenario" >"$out"
  read -r user sys rss <"$out.time"
  echo "$command: $(tr '\n' ' ' <"$out")| cpu $(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f s (user %.2f + sys %.2f)", u + s, u, s}') | peak RSS $((rss / 1024)) MiB"
  rm -f "$out" "$out.time"
done
