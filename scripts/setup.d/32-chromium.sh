#!/usr/bin/env bash
# Headless Chromium for the playground's end-to-end tests (Debian's package, driven by
# playwright-core with executablePath /usr/bin/chromium).
set -euo pipefail
if [ ! -x /usr/bin/chromium ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
fi
