//! Native = plugin: for every example, every validation conformance vector and every proxy
//! golden input, `check`, `render` (both modes) and `trace` give identical bytes through the
//! embedded WebAssembly plugin and through the natively linked core; so do `check` under a
//! Service policy (`--policy`, with and without a requester) and the settings checks.

use std::path::Path;

use serde_json::Value;
use svclab_core::{CheckOptions, Input, ProxyMode, RenderOptions, Report, TraceRequest, UserInfo};
use svclab_host::{CacheDir, Engine, Limits};
use svclab_scenario_gen::{Shape, generate};
use svclab_tests::vectors;

use crate::support::{cache_dir, plugin, scenario_files, workspace};

/// One scenario to run through both engines.
struct Case {
    name: String,
    inputs: Vec<Input>,
    options: CheckOptions,
}

/// Runs every call on both engines; returns the mismatches (empty = parity).
fn check(case: &Case) -> Vec<String> {
    let native = Engine::Native;
    let plugin = plugin();
    let mut mismatches = Vec::new();
    let mut compare =
        |what: &str, native: Result<String, String>, plugin: Result<String, String>| {
            if native != plugin {
                mismatches.push(format!(
                    "{}: {what} differs\nnative: {native:?}\nplugin: {plugin:?}",
                    case.name
                ));
            }
        };
    let outputs = |engine: &Engine| -> Result<String, String> {
        engine
            .check(&case.inputs, &case.options)
            .map(|outcome| outcome.output)
            .map_err(|err| err.to_string())
    };
    let native_report = outputs(&native);
    compare("check", native_report.clone(), outputs(plugin));
    // `omit_rules` (what `check -o text` asks for) reaches the plugin through the ABI: both
    // engines leave the rulesets out and agree on everything else.
    let omitted = |engine: &Engine| -> Result<String, String> {
        let options = CheckOptions { omit_rules: true, ..case.options.clone() };
        let checked = engine.check_report(&case.inputs, &options).map_err(|err| err.to_string())?;
        if checked.report.rules.is_some() {
            return Err("the report carries rulesets under omit_rules".to_owned());
        }
        Ok(checked.report.to_json())
    };
    compare("check with omit_rules", omitted(&native), omitted(plugin));
    // `check -o text` takes the text (and the error flag) from the engine: the plugin renders
    // it in the guest.
    let text = |engine: &Engine| -> Result<String, String> {
        let checked =
            engine.check_text(&case.inputs, &case.options).map_err(|err| err.to_string())?;
        Ok(format!("has_errors={}\n{}", checked.has_errors, checked.text))
    };
    compare("check text", text(&native), text(plugin));
    // The typed diagnostics through `diagnose` are the report's diagnostics, field for field,
    // except the `--explain-release` explanation, which only the report carries.
    let diagnose = |engine: &Engine| {
        engine
            .diagnose(&case.inputs, &case.options)
            .map(|diagnostics| format!("{diagnostics:?}"))
            .map_err(|err| err.to_string())
    };
    let from_report = native_report
        .as_deref()
        .map_err(Clone::clone)
        .and_then(|json| Report::from_json(json).map_err(|err| err.to_string()))
        .map(|report| {
            let plain: Vec<_> = report
                .diagnostics
                .into_iter()
                .map(|d| svclab_core::Diagnostic { releases: None, ..d })
                .collect();
            format!("{plain:?}")
        });
    compare("diagnose (native)", from_report, diagnose(&native));
    // The CLI prints text from the report JSON (whichever engine made it): the round trip must
    // lose nothing the text shows.
    let report = svclab_core::check(&case.inputs, &case.options);
    let round_trip = Report::from_json(&report.to_json())
        .map(|report| report.to_text())
        .map_err(|err| err.to_string());
    compare("text after the JSON round trip", Ok(report.to_text()), round_trip);
    compare("diagnose", diagnose(&native), diagnose(plugin));
    // `render` and `trace` take no options: the scenario's own ServicePolicy documents apply, as
    // in the plain case of the same file.
    if case.options.no_defaults || case.options.policy.is_some() {
        return mismatches;
    }
    for mode in [ProxyMode::Iptables, ProxyMode::Nftables] {
        for standalone in [false, true] {
            let options = RenderOptions { standalone, ..RenderOptions::new(mode) };
            let render = |engine: &Engine| {
                engine
                    .render(&case.inputs, &options)
                    .map(|outcome| outcome.output)
                    .map_err(|err| err.to_string())
            };
            compare(
                &format!("render {mode:?} standalone={standalone}"),
                render(&native),
                render(plugin),
            );
        }
    }
    for request in trace_requests(native_report.as_deref().unwrap_or("")) {
        let trace = |engine: &Engine| {
            engine
                .trace(&case.inputs, &request)
                .map(|outcome| outcome.output)
                .map_err(|err| err.to_string())
        };
        compare(&format!("trace {}:{}", request.dst, request.dport), trace(&native), trace(plugin));
    }
    mismatches
}

/// A packet to each Service's first ClusterIP and port, from a pod address and from outside.
fn trace_requests(report_json: &str) -> Vec<TraceRequest> {
    let Ok(report) = Report::from_json(report_json) else { return Vec::new() };
    let mut requests = Vec::new();
    for service in report.services.iter().take(8) {
        let (Some(ip), Some(port)) = (service.cluster_ips.first(), service.ports.first()) else {
            continue;
        };
        for src in ["10.244.1.5", "203.0.113.9"] {
            requests.push(TraceRequest {
                src: src.to_owned(),
                dst: ip.clone(),
                dport: u16::try_from(port.port).unwrap_or(0),
                protocol: port.protocol.to_lowercase(),
                ..TraceRequest::default()
            });
        }
    }
    requests
}

#[track_caller]
fn assert_parity(cases: &[Case]) {
    assert!(!cases.is_empty(), "no cases found");
    let mismatches: Vec<String> = cases.iter().flat_map(check).collect();
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n\n")
    );
}

fn file_case(path: &Path, no_defaults: bool) -> Case {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let name = path.strip_prefix(workspace()).unwrap_or(path).display().to_string();
    Case {
        name: name.clone(),
        inputs: vec![Input::new(name, text)],
        options: CheckOptions { no_defaults, ..CheckOptions::default() },
    }
}

#[test]
fn examples() {
    let mut cases = Vec::new();
    for path in scenario_files(&workspace().join("examples"))
        .iter()
        .chain(&scenario_files(Path::new("data/cli")))
    {
        cases.push(file_case(path, false));
        cases.push(file_case(path, true));
    }
    assert_parity(&cases);
}

#[test]
fn policies() {
    let read =
        |path: &str| std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{path}: {err}"));
    let requesters = [
        None,
        Some(UserInfo { username: "dev".into(), groups: vec!["system:authenticated".into()] }),
        Some(UserInfo { username: "netops".into(), groups: vec!["net-admins".into()] }),
    ];
    let scenarios: Vec<_> = scenario_files(&workspace().join("examples"))
        .into_iter()
        .chain(scenario_files(Path::new("data/cli")))
        .chain([Path::new("data/policy/scenario.yaml").to_path_buf()])
        .collect();
    let mut cases = Vec::new();
    for settings in ["data/policy/full.yaml", "data/policy/static-band-only.yaml"] {
        let policy = Input::new(settings, read(settings));
        for path in &scenarios {
            for user_info in &requesters {
                let mut case = file_case(path, false);
                case.name = format!("{} --policy {settings} (user {user_info:?})", case.name);
                case.options = CheckOptions {
                    policy: Some(policy.clone()),
                    user_info: user_info.clone(),
                    ..CheckOptions::default()
                };
                cases.push(case);
            }
        }
    }
    // The policy as a document of the scenario itself, before the objects.
    let mut inline = file_case(Path::new("data/policy/scenario.yaml"), false);
    inline.inputs.insert(0, Input::new("full.yaml", read("data/policy/full.yaml")));
    cases.push(inline);
    // Settings errors are diagnostics too.
    let mut typo = file_case(Path::new("data/policy/scenario.yaml"), false);
    typo.options.policy = Some(Input::new("typo.yaml", read("data/policy/typo.yaml")));
    cases.push(typo);
    // The policy really judges these objects (parity over empty verdicts would prove nothing).
    let report = svclab_core::check(&cases[cases.len() - 2].inputs, &CheckOptions::default());
    let mut rules: Vec<&str> = report
        .diagnostics
        .iter()
        .filter_map(|d| d.reason.strip_prefix("policy:"))
        .filter(|rule| *rule != "skipped")
        .collect();
    rules.sort_unstable();
    rules.dedup();
    assert!(rules.len() >= 10, "only {rules:?}");
    assert_parity(&cases);

    for settings in scenario_files(Path::new("data/policy")) {
        let input =
            Input::new(settings.display().to_string(), read(&settings.display().to_string()));
        let native = Engine::Native.check_settings(&input).map(|d| format!("{d:?}"));
        let plugged = plugin().check_settings(&input).map(|d| format!("{d:?}"));
        assert_eq!(native, plugged, "check-settings {}", settings.display());
    }
    let schema = |engine: &Engine| engine.settings_schema().map(|outcome| outcome.output);
    assert_eq!(schema(&Engine::Native), schema(plugin()), "settings-schema");
}

#[test]
fn proxy_golden_inputs() {
    let mut cases = Vec::new();
    let mut dirs: Vec<_> =
        std::fs::read_dir("data/proxy").expect("tests/data/proxy").filter_map(Result::ok).collect();
    dirs.sort_by_key(|entry| entry.file_name());
    for dir in dirs.iter().map(|entry| entry.path()).filter(|path| path.is_dir()) {
        let mut inputs = Vec::new();
        for file in ["input.yaml", "scenario.yaml", "iptables-save.txt"] {
            if let Ok(text) = std::fs::read_to_string(dir.join(file)) {
                inputs.push(Input::new(file, text));
            }
        }
        if !inputs.is_empty() {
            cases.push(Case {
                name: dir.display().to_string(),
                inputs,
                options: CheckOptions::default(),
            });
        }
    }
    assert_parity(&cases);
}

#[test]
fn validation_vectors() {
    let mut cases = Vec::new();
    for file in ["data/validation/vectors.yaml", "data/validation/svclab-vectors.yaml"] {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let document: Value =
            serde_norway::from_str(&text).unwrap_or_else(|err| panic!("{file}: {err}"));
        cases.extend(vector_cases(file, &document));
    }
    assert!(cases.len() >= 90, "only {} validation vectors found", cases.len());
    assert_parity(&cases);
}

/// The per-release vectors with `--explain-release`: the plugin re-evaluates each scenario at
/// every release and must give the same ranges and table rows as the native core.
#[test]
fn release_vectors_explained() {
    let file = "data/validation/release-vectors.yaml";
    let text = std::fs::read_to_string(file).unwrap_or_else(|err| panic!("{file}: {err}"));
    let document: Value =
        serde_norway::from_str(&text).unwrap_or_else(|err| panic!("{file}: {err}"));
    let mut cases = vector_cases(file, &document);
    assert!(cases.len() >= 20, "only {} release vectors found", cases.len());
    for case in &mut cases {
        case.options.explain_release = true;
    }
    assert_parity(&cases);
}

/// Each vector's object (its base with its JSON merge patch applied), in the vector's mode.
fn vector_cases(file: &str, document: &Value) -> Vec<Case> {
    let bases = document.get("bases").cloned().unwrap_or(Value::Null);
    let Some(vectors) = document.get("vectors").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut cases = Vec::new();
    for vector in vectors {
        let id = vector.get("id").and_then(Value::as_str).unwrap_or("?");
        let Ok(vectors::Objects { object, old }) = vectors::objects(vector, &bases) else {
            continue;
        };
        let pretty = |object: &Value| serde_json::to_string_pretty(object).unwrap_or_default();
        // An update vector stores the old object first, then applies the new one over it; a
        // per-release vector starts with the ClusterProfile of its release and gates.
        let mut inputs = Vec::new();
        if let Some(release) = vector.get("release").and_then(Value::as_str) {
            let gates = vector.get("gates").map(Value::to_string).unwrap_or_else(|| "{}".into());
            inputs.push(Input::new(
                format!("{id}-profile.yaml"),
                format!(
                    "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{release}\"\nfeatureGates: {gates}\n"
                ),
            ));
        }
        if let Some(old) = &old {
            inputs.push(Input::new(format!("{id}-old.json"), pretty(old)));
        }
        inputs.push(Input::new(format!("{id}.json"), pretty(&object)));
        let no_defaults = vector.get("mode").and_then(Value::as_str) == Some("validate");
        cases.push(Case {
            name: format!("{file} {id}"),
            inputs,
            options: CheckOptions { no_defaults, ..CheckOptions::default() },
        });
    }
    cases
}

/// The command's own engine: the embedded plugin unmetered (as `svclab --engine plugin` runs
/// it), whose memories are the host's transparent-huge-page ones
/// (`host-runner/src/linear_memory.rs`) rather than wasmtime's, initialised by copying the data
/// segments instead of mapping them. A generated scenario large enough to grow the memory many
/// times renders and checks byte for byte as natively.
#[test]
fn unmetered_plugin_with_its_own_memories() {
    let limits = Limits { fuel: None, ..Limits::default() };
    let unmetered = Engine::embedded_plugin(limits, &CacheDir::at(cache_dir()))
        .expect("the embedded plugin loads unmetered");
    let inputs = [Input::new("scenario.yaml", generate(Shape { services: 2_000, slices: true }))];
    let render = |engine: &Engine| {
        let outcome = engine.render(&inputs, &RenderOptions::new(ProxyMode::Iptables));
        outcome.unwrap_or_else(|err| panic!("{err}"))
    };
    let (native, plugged) = (render(&Engine::Native), render(&unmetered));
    assert!(native.output == plugged.output, "the unmetered plugin's ruleset differs");
    assert_eq!(plugged.fuel, None);
    let grown = plugged.peak_memory_bytes.expect("the plugin reports its largest memory");
    assert!(grown > 8 << 20, "the memory grew past 8 MiB: {grown} bytes");
    let check = |engine: &Engine| {
        engine.check(&inputs, &CheckOptions::default()).unwrap_or_else(|err| panic!("{err}"))
    };
    assert!(check(&Engine::Native).output == check(&unmetered).output, "the reports differ");
}
