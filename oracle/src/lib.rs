//! svclab against upstream's own code, as an oracle: the same scenario given to kube-apiserver's
//! REST storage and kube-proxy's proxiers (Go programs under `oracle/apiserver/` and
//! `oracle/proxy/`, built from the `k8s.io/kubernetes` module of a release) and to svclab, and
//! every difference between their answers.
//!
//! Layers, lowest first: [`divergence`] (what a difference is, and how differences group),
//! [`apiserver`] and [`proxy`] (both sides' answers to a case, put in one form, and their
//! comparison: no I/O), [`upstream`] (building and running the Go programs), [`shrink`]
//! (making a diverging case minimal), [`cluster`] (a real etcd, kube-apiserver and kube-proxy
//! built from their modules, and [`cluster::blackbox`], the apiserver's cases through it), and
//! [`upgrade`] (`svclab upgrade`'s apiserver findings against both releases' upstream answers). `cargo xtask oracle` drives them; the regression cases
//! it writes under `tests/data/oracle/` hold upstream's recorded answers, and
//! `tests/oracle_regressions.rs` compares svclab with them without Go.

pub mod apiserver;
pub mod cluster;
pub mod divergence;
pub mod proxy;
pub mod shrink;
pub mod upgrade;
pub mod upstream;

pub use divergence::{Divergence, DivergenceKind};

#[cfg(test)]
mod tests {
    /// `oracle/releases.txt` (what `cargo xtask oracle --all` runs) and core's table of the
    /// patch a bare minor stands for are the same list.
    #[test]
    fn the_releases_run_are_the_releases_core_models() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/releases.txt"))
            .unwrap_or_default();
        let listed: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_owned)
            .collect();
        let modelled: Vec<String> = svclab_core::CHECKED_RELEASES
            .iter()
            .map(|(minor, patch)| format!("v1.{minor}.{patch}"))
            .collect();
        assert_eq!(listed, modelled);
    }
}
