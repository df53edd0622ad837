#!/usr/bin/env bash
# npm packages of the playground and the svclab npm package (CodeMirror 6, esbuild,
# playwright-core, jco and its preview2-shim, yaml for the package's tests) from
# playground-web/js/package-lock.json; skipped when node_modules already matches the lockfile.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../playground-web/js"
if ! command -v npm >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
fi
# npm writes node_modules/.package-lock.json after a successful install; when it equals the
# committed lockfile's packages, there is nothing to do.
if [ -f node_modules/.package-lock.json ] && [ -x node_modules/.bin/esbuild ] && [ -x node_modules/.bin/jco ] \
  && node -e '
    const want = require("./package-lock.json").packages, have = require("./node_modules/.package-lock.json").packages;
    const ok = Object.entries(want).every(([k, v]) => k === "" || v.optional || (have[k] && have[k].version === v.version))
      && Object.entries(have).every(([k, v]) => want[k] && want[k].version === v.version);
    process.exit(ok ? 0 : 1);'; then
  exit 0
fi
npm ci --no-audit --no-fund
