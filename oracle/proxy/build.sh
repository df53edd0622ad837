#!/usr/bin/env bash
# Builds the kube-proxy oracle against one Kubernetes release.
#
#   oracle/proxy/build.sh RELEASE OUTDIR [MODE...]      e.g. build.sh v1.37.2 /tmp/oracle
#
# MODE is iptables and/or nftables (default: both where the release has them; nftables from
# 1.29). Prints the path of each test binary ($OUTDIR/proxy-MODE-RELEASE.test) on stdout, one a
# line, and what it did on stderr.
#
# What it does, for k8s.io/kubernetes@RELEASE:
#  1. `go mod download -json k8s.io/kubernetes@RELEASE` (verified against the checksum
#     database; GOMODCACHE as configured).
#  2. A writable copy of that module directory, hard-linked where possible, at
#     $CACHE/k8s/RELEASE (CACHE = ${SVCLAB_CACHE_DIR:-$HOME/.cache/svclab}/oracle). Go 1.25+
#     refuses -overlay entries beneath GOMODCACHE, so the build reads the copy. Nothing of
#     upstream is ever written into this repository.
#  3. A module for the release at $CACHE/proxy/RELEASE/go.mod: requires k8s.io/kubernetes
#     RELEASE, replaces it by the copy, replaces every k8s.io staging module the release's own
#     go.mod requires at v0.0.0 by v0.MINOR.PATCH, and repeats the release's own version pins
#     (`replace X => X vN` lines of its go.mod, which only a main module's go.mod applies), so
#     the build uses the dependency versions the release was tested with. go.sum is filled by
#     the first build (-mod=mod).
#  4. Our template zz_oracle_test.go.in, preprocessed for the release and mode
#     (preprocess.awk), added to upstream's pkg/proxy/MODE package with -overlay.
#  5. `go test -c -vet=off -mod=mod -overlay ... k8s.io/kubernetes/pkg/proxy/MODE`, retried with
#     -ldflags=-checklinkname=0 when the linker refuses a //go:linkname.
#
# Cached: a binary whose stamp (Go version, generated go.mod, preprocessed file, flags) is
# unchanged is not rebuilt; Go's build cache (GOCACHE) keeps compiled packages between builds.
#
# Environment: GO (default go), SVCLAB_CACHE_DIR, ORACLE_LDFLAGS (extra -ldflags),
# ORACLE_REPLACE ("k8s.io/kube-proxy=v0.31.11 ...": build with another version of a staging
# module, for a release whose own staging version the module proxy does not serve; the binary
# is then not exactly the release, say so wherever its results are used). Unset, the
# release's line of releases.txt gives it; set to "" it is none.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 RELEASE OUTDIR [iptables|nftables ...]" >&2
  exit 2
fi
outdir="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../gomod.sh
. "$here/../gomod.sh"
oracle_release "$1"
shift 2
# Staging substitutions: ORACLE_REPLACE, else the release's line of releases.txt.
staging_substitutions "$release"
if [ -n "${ORACLE_REPLACE// /}" ]; then
  echo "build.sh: $release with staging substitutions: $ORACLE_REPLACE" >&2
fi

modes=("$@")
if [ ${#modes[@]} -eq 0 ]; then
  modes=(iptables)
  if [ "$minor" -ge 29 ]; then modes+=(nftables); fi
fi
for m in "${modes[@]}"; do
  case "$m" in
    iptables) ;;
    nftables) if [ "$minor" -lt 29 ]; then echo "build.sh: no nftables proxier before 1.29" >&2; exit 2; fi ;;
    *) echo "build.sh: unknown mode $m" >&2; exit 2 ;;
  esac
done

cache="${SVCLAB_CACHE_DIR:-$HOME/.cache/svclab}/oracle"
mkdir -p "$outdir" "$cache/k8s" "$cache/proxy"
outdir="$(cd "$outdir" && pwd)"

# 1. Download (or find) the release.
dl="$("$GO" mod download -json "k8s.io/kubernetes@$release")"
dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$dl")"
gomod="$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' <<<"$dl")"
if [ -z "$dir" ] || [ ! -d "$dir" ] || [ ! -f "$gomod" ]; then
  echo "build.sh: cannot download k8s.io/kubernetes@$release:" >&2
  echo "$dl" >&2
  exit 1
fi

# 2. The writable copy (hard links into the verified module directory).
copy="$cache/k8s/$release"
if [ ! -f "$copy/.oracle-copy-done" ]; then
  if [ -e "$copy" ]; then chmod -R u+w "$copy"; rm -rf "$copy"; fi
  if ! cp -al "$dir" "$copy" 2>/dev/null; then
    if [ -e "$copy" ]; then chmod -R u+w "$copy"; rm -rf "$copy"; fi
    cp -a "$dir" "$copy"
  fi
  chmod u+w "$copy"
  touch "$copy/.oracle-copy-done"
fi

# 3. The release's module.
work="$cache/proxy/$release"
mkdir -p "$work/gen"
release_gomod oracle/proxy/build.sh svclab.dev/oracle/proxy "$release" "$gomod" "$copy" \
  > "$work/go.mod.new"
if ! cmp -s "$work/go.mod.new" "$work/go.mod.gen" 2>/dev/null; then
  cp "$work/go.mod.new" "$work/go.mod.gen"
  cp "$work/go.mod.new" "$work/go.mod"
  rm -f "$work/go.sum"
fi
rm -f "$work/go.mod.new"

for mode in "${modes[@]}"; do
  # A release whose link needed -checklinkname=0 once keeps it (extra-ldflags-MODE).
  ldflags="${ORACLE_LDFLAGS:-}"
  if [ -f "$work/extra-ldflags-$mode" ]; then ldflags="$ldflags $(cat "$work/extra-ldflags-$mode")"; fi
  # 4. Our file for this release and mode, and the overlay adding it to upstream's package.
  gen="$work/gen/zz_oracle_${mode}_test.go"
  awk -v minor="$minor" -v patch="$patch" -v mode="$mode" -v release="$release" \
    -f "$here/preprocess.awk" "$here/zz_oracle_test.go.in" > "$gen.new"
  mv "$gen.new" "$gen"
  overlay="$work/overlay-$mode.json"
  printf '{"Replace":{"%s":"%s"}}\n' "$copy/pkg/proxy/$mode/zz_oracle_test.go" "$gen" > "$overlay"

  bin="$outdir/proxy-$mode-$release.test"
  stamp="$({
    "$GO" version
    echo "ldflags=$ldflags"
    cat "$work/go.mod.gen"
    cat "$gen"
  } | sha256sum | cut -d' ' -f1)"
  if [ -x "$bin" ] && [ -f "$bin.stamp" ] && [ "$(cat "$bin.stamp")" = "$stamp" ]; then
    echo "build.sh: $bin is up to date" >&2
    echo "$bin"
    continue
  fi

  # 5. Build.
  log="$work/build-$mode.log"
  start=$(date +%s)
  build() {
    (cd "$work" && "$GO" test -c -vet=off -mod=mod -overlay "$overlay" ${1:+-ldflags "$1"} \
      -o "$bin.tmp" "k8s.io/kubernetes/pkg/proxy/$mode")
  }
  if ! build "$ldflags" >"$log" 2>&1; then
    if grep -q "linkname" "$log" && ! grep -q -- "-checklinkname=0" <<<"$ldflags"; then
      echo "build.sh: the linker refused a //go:linkname; retrying with -checklinkname=0" >&2
      ldflags="$ldflags -checklinkname=0"
      if ! build "$ldflags" >"$log" 2>&1; then
        cat "$log" >&2
        exit 1
      fi
      echo "-checklinkname=0" > "$work/extra-ldflags-$mode"
      stamp="$({
        "$GO" version
        echo "ldflags=$ldflags"
        cat "$work/go.mod.gen"
        cat "$gen"
      } | sha256sum | cut -d' ' -f1)"
    else
      cat "$log" >&2
      exit 1
    fi
  fi
  mv "$bin.tmp" "$bin"
  echo "$stamp" > "$bin.stamp"
  echo "build.sh: built $bin in $(( $(date +%s) - start ))s" >&2
  echo "$bin"
done
