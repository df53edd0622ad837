#!/usr/bin/env bash
# Builds a real control plane of one Kubernetes release: kube-apiserver and kube-proxy from
# k8s.io/kubernetes RELEASE (their cmd/ packages, as upstream's own build does), and etcd from
# the go.etcd.io/etcd/server/v3 version that release requires.
#
#   oracle/cluster/build.sh RELEASE OUTDIR      e.g. build.sh v1.37.2 /tmp/cluster
#
# prints OUTDIR (holding etcd, kube-apiserver and kube-proxy) on stdout, what it did on stderr.
#
# The module of a release is generated at $CACHE/cluster/RELEASE/go.mod (CACHE =
# ${SVCLAB_CACHE_DIR:-$HOME/.cache/svclab}/oracle) by ../gomod.sh and passed with -modfile;
# go.sum is filled by the build. Nothing of upstream is copied: k8s.io/kubernetes is an ordinary
# module dependency from the module cache (GOMODCACHE, checked against the checksum database).
# Cached: binaries whose stamp (Go version, generated go.mod, our sources) is unchanged are not
# rebuilt; Go's build cache (GOCACHE) keeps compiled packages between builds and with the
# apiserver and proxy oracles.
#
# Environment: GO (default go), SVCLAB_CACHE_DIR.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 RELEASE OUTDIR" >&2
  exit 2
fi
outdir="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../gomod.sh
. "$here/../gomod.sh"
oracle_release "$1"

cache="${SVCLAB_CACHE_DIR:-$HOME/.cache/svclab}/oracle"
work="$cache/cluster/$release"
mkdir -p "$work" "$outdir"
outdir="$(cd "$outdir" && pwd)"
# One build of a release at a time (tests of several binaries may ask at once).
exec 9>"$work/.lock"
flock 9

gomod="$("$GO" mod download -json "k8s.io/kubernetes@$release" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
if [ -z "$gomod" ] || [ ! -f "$gomod" ]; then
  echo "build.sh: cannot download k8s.io/kubernetes@$release" >&2
  exit 1
fi
# The staging substitutions the proxy oracle needs for a release apply here too.
staging_substitutions "$release"
release_gomod oracle/cluster/build.sh svclab.dev/oracle/cluster "$release" "$gomod" > "$work/go.mod.new"
if ! cmp -s "$work/go.mod.new" "$work/go.mod.gen" 2>/dev/null; then
  cp "$work/go.mod.new" "$work/go.mod.gen"
  cp "$work/go.mod.new" "$work/go.mod"
  rm -f "$work/go.sum"
fi
rm -f "$work/go.mod.new"

# The version stamps upstream's build sets (hack/lib/version.sh, kube::version::ldflags): /version,
# kubectl's skew check and the binaries' --version report the release.
ldflags=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $p.gitVersion=$release -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  ldflags="$ldflags -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done

stamp="$({
  "$GO" version
  cat "$work/go.mod.gen"
  cat "$here/etcd/main.go"
  echo "$ldflags"
} | sha256sum | cut -d' ' -f1)"
if [ -f "$outdir/.stamp" ] && [ "$(cat "$outdir/.stamp")" = "$stamp" ] \
  && [ -x "$outdir/etcd" ] && [ -x "$outdir/kube-apiserver" ] && [ -x "$outdir/kube-proxy" ]; then
  echo "build.sh: $outdir is up to date" >&2
  echo "$outdir"
  exit 0
fi

log="$work/build.log"
start=$(date +%s)
build() { # OUT PACKAGE [EXTRA-LDFLAGS]
  (cd "$here" && "$GO" build -mod=mod -modfile="$work/go.mod" -ldflags "$ldflags ${3:-}" \
    -o "$outdir/$1.tmp" "$2") >>"$log" 2>&1
}
: >"$log"
for target in etcd=./etcd kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver \
  kube-proxy=k8s.io/kubernetes/cmd/kube-proxy; do
  out="${target%%=*}"
  pkg="${target#*=}"
  if ! build "$out" "$pkg"; then
    if grep -q "linkname" "$log"; then
      echo "build.sh: the linker refused a //go:linkname in $out; retrying with -checklinkname=0" >&2
      build "$out" "$pkg" "-checklinkname=0" || { cat "$log" >&2; exit 1; }
    else
      cat "$log" >&2
      exit 1
    fi
  fi
  mv "$outdir/$out.tmp" "$outdir/$out"
done
echo "$stamp" >"$outdir/.stamp"
echo "build.sh: built etcd, kube-apiserver and kube-proxy $release in $(( $(date +%s) - start ))s" >&2
echo "$outdir"
