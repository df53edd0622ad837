# Preprocessor of the oracle's Go template (zz_oracle_test.go.in) for one release and mode.
#
#   awk -v minor=37 -v patch=2 -v mode=nftables -v release=v1.37.2 -f preprocess.awk FILE
#
# Lines `//oracle:if EXPR`, `//oracle:elif EXPR`, `//oracle:else` and `//oracle:end` (at the
# start of a line, nestable) keep or drop the lines between them; EXPR is one or more terms
# joined by `&&`, each `minor OP N`, `patch OP N` or `mode OP NAME` with OP one of
# == != >= <= > <. The directive lines themselves are dropped (blank lines keep line numbers
# of compile errors close to the template's). @PACKAGE@ becomes the mode (the package name)
# and @RELEASE@ the release.

function term(t,    f, n, lhs, op, rhs) {
	n = split(t, f, " ")
	if (n != 3) { fail("bad term: " t) }
	lhs = f[1]; op = f[2]; rhs = f[3]
	if (lhs == "minor") { lhs = minor + 0; rhs = rhs + 0 }
	else if (lhs == "patch") { lhs = patch + 0; rhs = rhs + 0 }
	else if (lhs == "mode") { lhs = mode }
	else { fail("bad term: " t) }
	if (op == "==") return lhs == rhs
	if (op == "!=") return lhs != rhs
	if (op == ">=") return lhs >= rhs
	if (op == "<=") return lhs <= rhs
	if (op == ">") return lhs > rhs
	if (op == "<") return lhs < rhs
	fail("bad operator: " t)
}

function expr(e,    parts, n, i) {
	n = split(e, parts, "&&")
	for (i = 1; i <= n; i++) {
		gsub(/^[ \t]+|[ \t]+$/, "", parts[i])
		if (!term(parts[i])) return 0
	}
	return 1
}

function fail(msg) {
	printf("preprocess.awk: %s:%d: %s\n", FILENAME, FNR, msg) > "/dev/stderr"
	failed = 1
	exit 1
}

function active(    i) {
	for (i = 1; i <= depth; i++) if (!cur[i]) return 0
	return 1
}

BEGIN { depth = 0 }

/^[ \t]*\/\/oracle:if / {
	sub(/^[ \t]*\/\/oracle:if /, "")
	depth++
	parent[depth] = active_before = 1
	v = expr($0)
	cur[depth] = v; taken[depth] = v
	print ""
	next
}
/^[ \t]*\/\/oracle:elif / {
	if (depth == 0) fail("elif without if")
	sub(/^[ \t]*\/\/oracle:elif /, "")
	if (taken[depth]) { cur[depth] = 0 } else { v = expr($0); cur[depth] = v; taken[depth] = v }
	print ""
	next
}
/^[ \t]*\/\/oracle:else[ \t]*$/ {
	if (depth == 0) fail("else without if")
	cur[depth] = !taken[depth]; taken[depth] = 1
	print ""
	next
}
/^[ \t]*\/\/oracle:end[ \t]*$/ {
	if (depth == 0) fail("end without if")
	depth--
	print ""
	next
}
/^[ \t]*\/\/oracle:/ { fail("unknown directive: " $0) }
{
	if (!active()) { print ""; next }
	line = $0
	gsub(/@PACKAGE@/, mode, line)
	gsub(/@RELEASE@/, release, line)
	print line
}
END {
	if (!failed && depth != 0) { printf("preprocess.awk: %s: unterminated //oracle:if\n", FILENAME) > "/dev/stderr"; exit 1 }
}
