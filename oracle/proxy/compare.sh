#!/usr/bin/env bash
# Compares svclab's kube-proxy rules with upstream kube-proxy's own for a set of scenarios.
#
#   oracle/proxy/compare.sh [-o OUTDIR] [-b BINDIR] [-t] RELEASE [SCENARIO.yaml...]
#
# RELEASE is a release tag (v1.37.2); SCENARIO files default to oracle/testdata/proxy/*.yaml.
# Each scenario may start with a line
#
#   # oracle: node=NAME families=IPv4[,IPv6] modes=iptables[,nftables] minors=24-33
#
# (defaults: svclab's default node, IPv4, every mode the release has, every release; `minors`
# limits a scenario to the minors where svclab's apiserver stores its objects as kube-proxy
# reads them, for objects a later apiserver refuses). Its ClusterProfile must
# carry a `kubernetesVersion:` line at the start of a line: it is rewritten to the release under
# test (X.Y.Z) for both sides.
#
# For every scenario, mode and family: `svclab --engine native render --proxy-mode M
# --ip-family F [--node N] SCENARIO` (SVCLAB, default `svclab` on PATH), and one batch per mode
# through the oracle binary (built by build.sh into BINDIR, default OUTDIR/bin). Both texts are
# normalised by upstream's own test normaliser inside the oracle binary (iptables:
# sortIPTablesRules of assertIPTablesRulesEqual, applied to the iptables-restore input;
# nftables: sortNFTablesTransaction of assertNFTablesTransactionEqual, applied to the knftables
# fake's Dump() after the transaction, as upstream's tests compare it; svclab's transaction is
# loaded into a fresh fake first) and compared byte for byte. For nftables the sorted `add
# element` lines of both transactions are compared too (an element added twice leaves the same
# state). A refused configuration compares svclab's error message with kube-proxy's.
#
# Writes OUTDIR/RELEASE/CASE/{svclab.txt,svclab.err,svclab.norm,upstream.txt,upstream.dump,
# upstream.norm,upstream.err,diff} and prints one line per case and a summary; exits 1 when any
# case diverges. OUTDIR defaults to oracle/proxy/out (git-ignored).
#
# -t tests the comparison itself: one byte of svclab's output is changed (the last character of
# its last rule or element line) before the comparison, and every case that renders must then be
# reported as a divergence; exits 1 when one is not.
#
# For nftables at 1.29 and 1.30, where the mode is alpha, `featureGates: {NFTablesProxyMode:
# true}` is added to the scenario's KubeProxyConfiguration (unless it names the gate; into its
# `featureGates: {...}` line when it has one).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
outdir="$here/out"
bindir=""
selftest=0
while getopts "o:b:t" opt; do
  case "$opt" in
    o) outdir="$OPTARG" ;;
    b) bindir="$OPTARG" ;;
    t) selftest=1 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
  echo "usage: $0 [-o OUTDIR] [-b BINDIR] RELEASE [SCENARIO.yaml...]" >&2
  exit 2
fi
release="$1"
shift
case "$release" in v*) ;; *) release="v$release" ;; esac
if ! [[ "$release" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]]; then
  echo "compare.sh: RELEASE must look like v1.37.2" >&2
  exit 2
fi
minor="${BASH_REMATCH[1]}"
version="${release#v}"
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  scenarios=("$here"/../testdata/proxy/*.yaml)
fi
SVCLAB="${SVCLAB:-svclab}"
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
bindir="${bindir:-$outdir/bin}"
run="$outdir/$release"
rm -rf "$run"
mkdir -p "$run"

release_modes=(iptables)
if [ "$minor" -ge 29 ]; then release_modes+=(nftables); fi

# Build (cached) the binaries.
declare -A bins
if ! built="$("$here/build.sh" "$release" "$bindir" "${release_modes[@]}")"; then
  echo "compare.sh: cannot build the oracle for $release" >&2
  exit 1
fi
while IFS= read -r b; do
  case "$b" in
    *proxy-iptables-*) bins[iptables]="$b" ;;
    *proxy-nftables-*) bins[nftables]="$b" ;;
  esac
done <<<"$built"

for m in "${release_modes[@]}"; do : > "$run/cases-$m.jsonl"; done

svclab_start=$(date +%s.%N)
ncases=0
for scenario in "${scenarios[@]}"; do
  name="$(basename "$scenario" .yaml)"
  header="$(sed -n 's/^# oracle: //p' "$scenario" | head -1)"
  node=""; families="IPv4"; modes="$(IFS=,; echo "${release_modes[*]}")"; minors=""
  for kv in $header; do
    case "$kv" in
      node=*) node="${kv#node=}" ;;
      families=*) families="${kv#families=}" ;;
      modes=*) modes="${kv#modes=}" ;;
      minors=*) minors="${kv#minors=}" ;;
    esac
  done
  if [ -n "$minors" ] && { [ "$minor" -lt "${minors%-*}" ] || [ "$minor" -gt "${minors#*-}" ]; }; then
    continue
  fi
  versioned="$run/$name.yaml"
  sed "s/^\([[:space:]]*\)kubernetesVersion:.*/\1kubernetesVersion: \"$version\"/" "$scenario" > "$versioned"
  for mode in ${modes//,/ }; do
    if ! [[ " ${release_modes[*]} " == *" $mode "* ]]; then continue; fi
    input="$versioned"
    if [ "$mode" = nftables ] && [ "$minor" -le 30 ] && ! grep -q NFTablesProxyMode "$versioned"; then
      # The nftables mode is alpha (off) in 1.29 and 1.30: turn kube-proxy's gate on.
      input="$run/$name.nftables-gate.yaml"
      if grep -q '^featureGates: {' "$versioned"; then
        # A flow mapping of its own: the gate joins it (a second key would replace it).
        sed 's/^featureGates: {/&NFTablesProxyMode: true, /' "$versioned" > "$input"
      else
        sed 's/^kind: KubeProxyConfiguration[[:space:]]*$/&\nfeatureGates: {NFTablesProxyMode: true}/' "$versioned" > "$input"
      fi
    fi
    for family in ${families//,/ }; do
      id="$name.$mode.$family"
      d="$run/$id"
      mkdir -p "$d"
      args=(--engine native render --proxy-mode "$mode" --ip-family "$family")
      if [ -n "$node" ]; then args+=(--node "$node"); fi
      set +e
      "$SVCLAB" "${args[@]}" "$input" > "$d/svclab.txt" 2> "$d/svclab.err"
      rc=$?
      set -e
      echo "$rc" > "$d/svclab.rc"
      if [ "$rc" -eq 0 ] && [ "$selftest" -eq 1 ]; then
        # Change the last character of the last rule or element line.
        awk '{ line[NR] = $0 } /^(-A |add rule |add element )/ { last = NR }
          END { for (i = 1; i <= NR; i++) { l = line[i]; if (i == last) { c = substr(l, length(l)); l = substr(l, 1, length(l) - 1) (c == "x" ? "y" : "x") } print l } }' \
          "$d/svclab.txt" > "$d/svclab.txt.mutated"
        mv "$d/svclab.txt.mutated" "$d/svclab.txt"
      fi
      if [ "$rc" -eq 0 ]; then
        jq -nc --arg id "$id" --arg mode "$mode" --arg fam "$family" --arg node "$node" \
          --rawfile s "$input" --rawfile out "$d/svclab.txt" \
          '{id: $id, mode: $mode, ipFamily: $fam, node: $node, scenario: $s, svclab: $out}' \
          >> "$run/cases-$mode.jsonl"
      else
        jq -nc --arg id "$id" --arg mode "$mode" --arg fam "$family" --arg node "$node" \
          --rawfile s "$input" \
          '{id: $id, mode: $mode, ipFamily: $fam, node: $node, scenario: $s}' \
          >> "$run/cases-$mode.jsonl"
      fi
      ncases=$((ncases + 1))
    done
  done
done
svclab_secs=$(echo "$(date +%s.%N) - $svclab_start" | bc)

oracle_secs=0
for mode in "${release_modes[@]}"; do
  [ -s "$run/cases-$mode.jsonl" ] || continue
  start=$(date +%s.%N)
  ORACLE_CASES="$run/cases-$mode.jsonl" ORACLE_OUT="$run/results-$mode.jsonl" \
    "${bins[$mode]}" -test.run '^TestOracle$' > "$run/oracle-$mode.log" 2>&1 || {
      echo "compare.sh: the $mode oracle failed:" >&2
      cat "$run/oracle-$mode.log" >&2
      exit 1
    }
  oracle_secs=$(echo "$oracle_secs + $(date +%s.%N) - $start" | bc)
done

agree=0
diverge=0
for mode in "${release_modes[@]}"; do
  [ -s "$run/results-$mode.jsonl" ] || continue
  while IFS= read -r line; do
    id="$(jq -r .id <<<"$line")"
    d="$run/$id"
    jq -j '.rules' <<<"$line" > "$d/upstream.txt"
    jq -j '.dump // ""' <<<"$line" > "$d/upstream.dump"
    jq -j '.normalized // ""' <<<"$line" > "$d/upstream.norm"
    jq -j '.error // ""' <<<"$line" > "$d/upstream.err"
    jq -j '.svclabNormalized // ""' <<<"$line" > "$d/svclab.norm"
    jq '.settings' <<<"$line" > "$d/settings.json"
    rc="$(cat "$d/svclab.rc")"
    uerr="$(cat "$d/upstream.err")"
    verdict=""
    if [ "$rc" -ne 0 ] && [ -n "$uerr" ]; then
      if grep -qF -- "$uerr" "$d/svclab.err"; then verdict="agree (both refuse)"; else verdict="DIVERGE (both refuse, different messages)"; fi
      diff -u "$d/svclab.err" "$d/upstream.err" > "$d/diff" || true
    elif [ "$rc" -ne 0 ]; then
      verdict="DIVERGE (svclab refuses, upstream renders)"
      cp "$d/svclab.err" "$d/diff"
    elif [ -n "$uerr" ]; then
      verdict="DIVERGE (upstream refuses: $(head -1 "$d/upstream.err"))"
      cp "$d/upstream.err" "$d/diff"
    elif [ -n "$(jq -r '.svclabNormalizeError // ""' <<<"$line")" ]; then
      verdict="DIVERGE (svclab's output does not parse: $(jq -r .svclabNormalizeError <<<"$line"))"
    elif cmp -s "$d/svclab.norm" "$d/upstream.norm"; then
      verdict="agree"
      if [ "$mode" = nftables ]; then
        # Same state; also the same elements added by the transaction (an element added twice
        # leaves the state as once, but the text handed to nft differs).
        grep '^add element ' "$d/svclab.txt" | sort > "$d/svclab.elements" || true
        grep '^add element ' "$d/upstream.txt" | sort > "$d/upstream.elements" || true
        if ! cmp -s "$d/svclab.elements" "$d/upstream.elements"; then
          diff -u --label "svclab $id (add element lines, sorted)" --label "upstream $id (add element lines, sorted)" \
            "$d/svclab.elements" "$d/upstream.elements" > "$d/diff" || true
          verdict="DIVERGE (same state, but the transactions add elements differently: $(grep -c '^[-+]add' "$d/diff" || true) lines)"
        fi
      fi
    else
      diff -u --label "svclab $id" --label "upstream $id" "$d/svclab.norm" "$d/upstream.norm" > "$d/diff" || true
      verdict="DIVERGE ($(grep -c '^[-+]' "$d/diff" || true) diff lines)"
    fi
    case "$verdict" in agree*) agree=$((agree + 1)) ;; *) diverge=$((diverge + 1)) ;; esac
    printf '%-8s %-55s %s\n' "$release" "$id" "$verdict"
  done < "$run/results-$mode.jsonl"
done
printf '%s: %d cases, %d agree, %d diverge (svclab %.1fs, oracle %.2fs); details in %s\n' \
  "$release" "$ncases" "$agree" "$diverge" "$svclab_secs" "$oracle_secs" "$run" >&2
if [ "$selftest" -eq 1 ]; then
  # Cases where both sides refuse are compared by message and stay in agree.
  refused="$(grep -l . "$run"/*/upstream.err 2>/dev/null | wc -l)"
  if [ "$agree" -gt "$refused" ]; then
    echo "compare.sh -t: FAILED: a changed svclab output was reported as agreeing" >&2
    exit 1
  fi
  echo "compare.sh -t: every changed svclab output was reported as a divergence" >&2
  exit 0
fi
[ "$diverge" -eq 0 ]
