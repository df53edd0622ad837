#!/usr/bin/env python3
"""Names the plugin's functions in a callgrind profile of `svclab`.

Under valgrind the plugin's code (compiled by wasmtime at run time) shows as bare addresses;
with SVCLAB_PERFMAP=1 the engine writes /tmp/perf-PID.map, which names them. This prints the
functions by instructions, self or inclusive, the plugin's under their Rust names and the host's
as callgrind names them. See CONTRIBUTING.md, "Measure and profile".

usage: callgrind-names.py CALLGRIND_OUT [PERF_MAP] [--inclusive] [--top N]
"""

import bisect
import re
import subprocess
import sys


def perf_map(path):
    """(start, size, name) of every function in a perf map, sorted by start."""
    symbols = []
    with open(path) as lines:
        for line in lines:
            start, size, name = line.rstrip("\n").split(" ", 2)
            name = re.sub(r"^wasm\[0\]::function\[\d+\]::", "", name)
            symbols.append((int(start, 16), int(size, 16), name))
    symbols.sort()
    return symbols


def demangle(names):
    """Rust names, demangled by c++filt (legacy mangling) with the hash dropped."""
    if not names:
        return {}
    out = subprocess.run(
        ["c++filt"], input="\n".join(names), capture_output=True, text=True
    ).stdout.splitlines()
    if len(out) != len(names):
        out = names
    return {n: re.sub(r"::h[0-9a-f]{16}$", "", d) for n, d in zip(names, out)}


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    inclusive = "--inclusive" in argv
    top = 40
    if "--top" in argv:
        top = int(argv[argv.index("--top") + 1])
        args.remove(str(top))
    if not args:
        sys.exit(__doc__)
    symbols = perf_map(args[1]) if len(args) > 1 else []
    starts = [s[0] for s in symbols]

    def name_of(address):
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and symbols[i][0] <= address < symbols[i][0] + symbols[i][1]:
            return symbols[i][2]
        return hex(address)

    command = ["callgrind_annotate", f"--inclusive={'yes' if inclusive else 'no'}", args[0]]
    text = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    total, rows = None, {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)", line)
        if not m:
            continue
        count, where = int(m.group(1).replace(",", "")), m.group(2)
        if "PROGRAM TOTALS" in where:
            total = count
            continue
        address = re.search(r"\?\?\?:0x([0-9a-f]+)", where)
        if address:
            name = name_of(int(address.group(1), 16))
        else:
            where = re.sub(r"\s*\[[^\]]*\]\s*$", "", where)
            name = where.split(":", 1)[1] if ":" in where else where
        name = re.sub(r"'\d+$", "", re.sub(r"\s*\([\d,]+x\)$", "", name)).strip()
        # Inclusive figures repeat a function per call site: keep its largest.
        rows[name] = max(rows.get(name, 0), count) if inclusive else rows.get(name, 0) + count
    names = demangle(list(rows))
    print(f"total {total:,} instructions ({'inclusive' if inclusive else 'self'} per function)")
    for name, count in sorted(rows.items(), key=lambda kv: -kv[1])[:top]:
        share = 100 * count / total if total else 0
        print(f"{count:>15,} {share:6.2f}%  {names.get(name, name)[:120]}")


if __name__ == "__main__":
    main(sys.argv[1:])
