//! svclab's resource limits: the most one call of the core reads, builds or walks. Each is
//! enforced where the input is read and crossing it is a diagnostic (or a trace warning) that
//! names the file, document and line, never a panic or an unbounded allocation. ARCHITECTURE.md
//! tabulates them; docs/dev/measurements.md holds the figures measured against them.
//!
//! Kubernetes bounds the same things differently (a 3 MiB request body, go-yaml's alias
//! ratio); where svclab follows it the constant says so. The rest are svclab's own: generous
//! enough for a 100,000-Service scenario with its EndpointSlices (about 100 MB of YAML, 200,000
//! documents), and each bounds time and memory to a linear function of what it admits.

/// Bytes of scenario text one call reads, all inputs together. An input that would cross it is
/// skipped whole.
pub(crate) const MAX_INPUT_BYTES: usize = 256 * 1024 * 1024;

/// YAML documents read from one input; the rest of the input is skipped.
pub(crate) const MAX_DOCUMENTS: usize = 1_000_000;

/// Objects one call reads (`List` items counted one by one); the documents after the one that
/// reaches it are skipped.
pub(crate) const MAX_OBJECTS: usize = 1_000_000;

/// Nodes (scalars, sequences, mappings, alias expansions included) of one YAML document.
pub(crate) const MAX_NODES: usize = 2_000_000;

/// Nesting of sequences and mappings in one YAML document, alias expansions included. JSON
/// bodies of admission requests have the same bound from serde_json's recursion limit (128).
pub(crate) const MAX_DEPTH: usize = 128;

/// Nesting of `List`s inside `List`s; deeper items are skipped.
pub(crate) const MAX_LIST_DEPTH: usize = 8;

/// go-yaml's alias-expansion rule (`allowedAliasRatio` in `gopkg.in/yaml.v2` `decode.go`, from
/// 2.2.4, the fix for CVE-2019-11253 that kube-apiserver and kubectl carry): once a document
/// has decoded more than 1,000 nodes of which more than 100 come from aliases, the share from
/// aliases may be at most 99% up to 400,000 decoded nodes, falling linearly to 10% at
/// 4,000,000. Returns whether `alias_nodes` of `decoded_nodes` is "excessive aliasing".
pub(crate) fn excessive_aliasing(decoded_nodes: usize, alias_nodes: usize) -> bool {
    const LOW: usize = 400_000;
    const HIGH: usize = 4_000_000;
    if alias_nodes <= 100 || decoded_nodes <= 1000 {
        return false;
    }
    let allowed = if decoded_nodes <= LOW {
        0.99
    } else if decoded_nodes >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((decoded_nodes - LOW) as f64 / (HIGH - LOW) as f64)
    };
    alias_nodes as f64 / decoded_nodes as f64 > allowed
}

/// Entries one render writes: every Service port times its addresses (ClusterIPs, external
/// IPs, load-balancer ingress, source ranges, plus its NodePort and health-check rules), and
/// every endpoint times its slice's ports. kube-proxy writes about two rules per entry; a
/// 100,000-Service scenario with its slices has 1,600,000 entries. A Service with
/// thousands of ports and thousands of external IPs would otherwise ask for their product.
pub(crate) const MAX_RENDER_ENTRIES: usize = 8_000_000;

/// Chains one packet trace descends into (jumps inside jumps); a deeper jump is ignored with
/// a step saying so.
pub(crate) const MAX_TRACE_DEPTH: usize = 32;

/// Rules one packet trace evaluates over all its paths (which also bounds the steps it
/// records). Rendered rules need about one per Service port in `KUBE-SERVICES` (200,000 for
/// 100,000 two-port Services); a pasted ruleset whose chains jump into one another twice over
/// would otherwise ask for 2^32.
pub(crate) const MAX_TRACE_RULES: usize = 1_000_000;

/// Bytes of the steps one packet trace records over all its paths (a random branch copies the
/// steps before it): about 200,000 steps of kube-proxy's rules, the trace of a Service with
/// 20,000 endpoints.
pub(crate) const MAX_TRACE_BYTES: usize = 64 * 1024 * 1024;

/// Paths one packet trace follows (each random branch is one more): the outcomes of a Service
/// with this many endpoints.
pub(crate) const MAX_TRACE_PATHS: usize = 65_536;

#[cfg(test)]
mod tests;
