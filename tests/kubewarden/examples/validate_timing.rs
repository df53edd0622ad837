//! How long one Kubewarden `validate` takes through the waPC host (policy-server's crates), next
//! to the same decision made natively by `svclab_core::admit`: loads the policy with the
//! settings of `deploy/kubewarden/cluster-admission-policy.yaml`, then validates a typical
//! Service create many times and prints the mean and percentiles.
//!
//! `cargo run -p svclab-kubewarden-tests --example validate_timing [-- ROUNDS]`

use std::io::Write as _;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svclab_kubewarden_tests::Policy;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = std::env::args().nth(1).map(|n| n.parse()).transpose()?.unwrap_or(2000);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/kubewarden/cluster-admission-policy.yaml"
    );
    let deployed: Value = serde_norway::from_str(&std::fs::read_to_string(path)?)?;
    let settings = deployed["spec"]["settings"].clone();
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
        "spec": {"type": "ClusterIP", "selector": {"app": "web"},
                 "ports": [{"name": "http", "port": 80, "targetPort": 8080}, {"name": "https", "port": 443, "targetPort": 8443}]},
    });
    let request = json!({
        "uid": "1", "kind": {"group": "", "version": "v1", "kind": "Service"},
        "resource": {"group": "", "version": "v1", "resource": "services"},
        "name": "web", "namespace": "shop", "operation": "CREATE",
        "userInfo": {"username": "dev", "groups": ["system:authenticated"]},
        "object": service, "dryRun": false,
    });
    // An empty namespace: the unique-selector rule runs with an inventory of none.
    let capability: svclab_kubewarden_tests::Capability = Box::new(|_, _, _, _| {
        Ok(br#"{"apiVersion":"v1","kind":"ServiceList","metadata":{},"items":[]}"#.to_vec())
    });
    let compile = Instant::now();
    svclab_kubewarden_tests::module()?;
    let compile = compile.elapsed();
    let load = Instant::now();
    let policy = Policy::load(settings.clone(), Some(capability))?;
    let load = load.elapsed();
    let answer = policy.validate(&request)?;
    let mut wapc = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        policy.validate(&request)?;
        wapc.push(start.elapsed());
    }
    let options = svclab_core::AdmissionOptions {
        policy: Some(svclab_core::Input::new("settings", settings.to_string())),
        inventory: Some(Vec::new()),
        ..svclab_core::AdmissionOptions::default()
    };
    let admission = svclab_core::AdmissionRequest {
        kind: "Service".into(),
        operation: "CREATE".into(),
        namespace: "shop".into(),
        object: Some(request["object"].to_string()),
        ..svclab_core::AdmissionRequest::default()
    };
    let mut native = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        svclab_core::admit(&admission, &options)?;
        native.push(start.elapsed());
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "answer: {answer}")?;
    writeln!(
        out,
        "module: {} bytes; compile: {compile:.1?}; load (instantiate, protocol_version, validate_settings): {load:.1?}",
        svclab_kubewarden_tests::WASM.len()
    )?;
    writeln!(out, "{rounds} rounds          mean       p50       p99")?;
    for (name, mut times) in [("validate via wapc", wapc), ("admit natively", native)] {
        times.sort();
        let mean = times.iter().sum::<Duration>() / u32::try_from(times.len())?;
        let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
        writeln!(out, "{name:<20} {mean:>9.1?} {:>9.1?} {:>9.1?}", at(0.5), at(0.99))?;
    }
    Ok(())
}
