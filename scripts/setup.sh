#!/usr/bin/env bash
# Installs what svclab's build and tests need on a fresh Debian machine: idempotent, and fast
# when everything is already present. Each step lives in scripts/setup.d/NN-name.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for step in "$here"/setup.d/*.sh; do
  [ -e "$step" ] || continue
  echo "==> setup: $(basename "$step")"
  bash "$step"
done
