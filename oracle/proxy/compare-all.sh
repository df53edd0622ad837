#!/usr/bin/env bash
# Runs compare.sh at every release of releases.txt (or the releases given) and prints one
# summary line per release.
#
#   SVCLAB=/path/to/svclab oracle/proxy/compare-all.sh [-o OUTDIR] [-b BINDIR] [-t] [RELEASE...]
#
# Exits 1 when any release diverges (or, with -t, when the self-test fails).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
opts=()
while getopts "o:b:t" opt; do
  case "$opt" in
    o|b) opts+=("-$opt" "$OPTARG") ;;
    t) opts+=(-t) ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
releases=("$@")
if [ ${#releases[@]} -eq 0 ]; then
  mapfile -t releases < <(awk '!/^#/ && NF { print $1 }' "$here/releases.txt")
fi
status=0
for r in "${releases[@]}"; do
  if ! "$here/compare.sh" "${opts[@]}" "$r"; then status=1; fi
done
exit $status
