#!/usr/bin/env bash
# xmllint (libxml2-utils): the integration tests validate `svclab test --junit` output against
# the Jenkins JUnit schema (tests/data/junit/junit-10.xsd) with it. Installs only when missing.
set -euo pipefail

if command -v xmllint >/dev/null 2>&1; then
    echo "46-junit: xmllint is present"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "46-junit: xmllint is missing and not root; the JUnit schema test will fail" >&2
    exit 0
fi
echo "46-junit: installing libxml2-utils"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends libxml2-utils
