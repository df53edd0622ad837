#!/usr/bin/env bash
# The docs stacks of tests/docs_stacks.rs, pinned and installed under svclab's cache directory:
# MkDocs with Material and Sphinx with MyST into the project's venv (PyPI), Hugo from Debian,
# Docusaurus from npm (tests/docs-stacks/docusaurus/package-lock.json, installed beside the site
# the test builds there) and mdBook from crates.io (`cargo install`, without its serve and watch
# features). Idempotent: nothing is fetched when the pinned versions are there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${SVCLAB_CACHE_DIR:-$HOME/.cache/svclab}"
venv="$cache/venv"
stacks="$cache/docs-stacks"
mkdocs_version=1.6.1
material_version=9.8.1
sphinx_version=9.0.4
myst_version=5.2.0
mdbook_version=0.5.4

# PyPI: the venv 45-gateways.sh also uses.
have_version() { # package version
    local shown
    shown="$("$venv/bin/python" -m pip show "$1" 2>/dev/null || true)"
    grep -qx "Version: $2" <<<"$shown"
}
if [ ! -x "$venv/bin/python" ]; then
    echo "50-docs-stacks: creating $venv"
    python3 -m venv "$venv"
fi
wanted=()
have_version mkdocs "$mkdocs_version" || wanted+=("mkdocs==$mkdocs_version")
have_version mkdocs-material "$material_version" || wanted+=("mkdocs-material==$material_version")
have_version sphinx "$sphinx_version" || wanted+=("sphinx==$sphinx_version")
have_version myst-parser "$myst_version" || wanted+=("myst-parser==$myst_version")
if [ "${#wanted[@]}" -gt 0 ]; then
    echo "50-docs-stacks: installing ${wanted[*]}"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${wanted[@]}"
fi

# Debian: Hugo.
if ! command -v hugo >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        echo "50-docs-stacks: hugo is missing and not root; the docs stacks' test will fail" >&2
    else
        echo "50-docs-stacks: installing hugo"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends hugo
    fi
fi

# npm: Docusaurus, from the committed lockfile, skipped when node_modules matches it.
mkdir -p "$stacks/docusaurus"
site="$here/tests/docs-stacks/docusaurus"
if ! cmp -s "$site/package-lock.json" "$stacks/docusaurus/package-lock.json" \
    || [ ! -x "$stacks/docusaurus/node_modules/.bin/docusaurus" ]; then
    echo "50-docs-stacks: installing Docusaurus (npm ci)"
    cp "$site/package.json" "$site/package-lock.json" "$stacks/docusaurus/"
    (cd "$stacks/docusaurus" && npm ci --no-audit --no-fund --loglevel=error)
fi

# crates.io: mdBook.
mdbook="$stacks/mdbook/bin/mdbook"
if [ ! -x "$mdbook" ] || [ "$("$mdbook" --version 2>/dev/null)" != "mdbook v$mdbook_version" ]; then
    echo "50-docs-stacks: building mdbook $mdbook_version (cargo install)"
    nice cargo install --locked --quiet mdbook --version "$mdbook_version" \
        --no-default-features --features search --root "$stacks/mdbook"
fi
echo "50-docs-stacks: mkdocs $mkdocs_version (material $material_version), sphinx $sphinx_version (myst $myst_version), $(hugo version 2>/dev/null | cut -d' ' -f1-2), docusaurus $(node -p "require('$stacks/docusaurus/node_modules/@docusaurus/core/package.json').version" 2>/dev/null), $("$mdbook" --version 2>/dev/null)"
