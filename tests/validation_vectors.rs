//! Runs every validation conformance vector (validation.md §10) as its own test, from the
//! in-repo copy and from the shared conformance directory (where held-out sets are dropped),
//! de-duplicated by id.
//!
//! `validate` vectors call the core's validation functions on the object exactly as written;
//! `api` vectors go through `svclab_core::check` (defaulting, allocation, validation, warnings).

use std::collections::{BTreeMap, BTreeSet};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use svclab_core::testing::{
    ErrorType, FieldError, validate_endpoint_slice_create, validate_endpoint_slice_update,
    validate_service_create, validate_service_update,
};
use svclab_core::{
    CheckOptions, Input, Object, ObjectRef, Profile, Severity, Version, check, parse,
};
use svclab_tests::vectors;

fn main() {
    let args = Arguments::from_args();
    let mut seen = BTreeSet::new();
    let mut trials = Vec::new();
    // The in-repo copy of the shared set first, then svclab's own vectors, then the shared
    // directory (identical ids are run once).
    let local = svclab_tests::data_dir().join("validation");
    let mut files = vec![
        local.join("vectors.yaml"),
        local.join("svclab-vectors.yaml"),
        local.join("release-vectors.yaml"),
    ];
    if let Some(dir) = svclab_tests::conformance_dir() {
        let mut extra: Vec<_> = std::fs::read_dir(&dir)
            .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        // Every top-level YAML file: held-out sets may be named anything; vectors that are not
        // validation vectors (no `mode: validate|api`) are skipped below.
        extra.retain(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"));
        extra.sort();
        files.extend(extra);
    }
    for file in files {
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(err) => {
                let msg = err.to_string();
                trials
                    .push(Trial::test(format!("read {}", file.display()), move || Err(msg.into())));
                continue;
            }
        };
        let doc: Value = match serde_norway::from_str(&text) {
            Ok(v) => v,
            // Other sets (allocation, proxy) may use YAML this reader does not take; only a
            // validation file that does not parse is a failure.
            Err(_) if !file.to_string_lossy().contains("validation") => continue,
            Err(err) => {
                let msg = format!("{}: {err}", file.display());
                trials.push(Trial::test(format!("parse {}", file.display()), move || {
                    Err(msg.into())
                }));
                continue;
            }
        };
        let bases = doc["bases"].clone();
        let messages: BTreeMap<String, String> = doc["messages"]
            .as_object()
            .map(|m| {
                m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect()
            })
            .unwrap_or_default();
        for vector in doc["vectors"].as_array().cloned().unwrap_or_default() {
            if !matches!(vector["mode"].as_str(), Some("validate" | "api")) {
                continue;
            }
            let id = vector["id"].as_str().unwrap_or("?").to_owned();
            if !seen.insert(id.clone()) {
                continue;
            }
            let (bases, messages) = (bases.clone(), messages.clone());
            trials.push(Trial::test(id, move || run_vector(&vector, &bases, &messages)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// `{KEY}` placeholders expanded from the file's `messages`.
fn expand(text: &str, messages: &BTreeMap<String, String>) -> String {
    let mut out = text.to_owned();
    for (k, v) in messages {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

/// The profile a vector runs under.
///
/// The vectors describe the snapshot of `validation.go` read for validation.md: a 1.33 tree
/// (StrictIPCIDRValidation, PreferSameTrafficDistribution and RelaxedServiceNameValidation off)
/// whose field errors still render composite values with Go `%#v` (`[]string{"x"}`), so by
/// default a vector runs as Kubernetes 1.33. Vectors that expect warnings describe the newest
/// warnings.go (headless warnings since 1.34, the externalIPs deprecation assumed 1.36), and
/// vectors whose texts carry JSON-rendered values (`["x"]`, 1.34+) need a 1.34+ release: those
/// run as the newest release with StrictIPCIDRValidation turned off, as the vector format says.
///
/// A vector with `release: "1.N"` runs as that release, with its `gates` set as
/// `--feature-gates` would (the per-release vectors).
fn profile_for(vector: &Value, texts: &[String]) -> Result<Profile, Failed> {
    if let Some(release) = vector["release"].as_str() {
        let version = Version::parse(release).ok_or_else(|| format!("bad release {release:?}"))?;
        let mut profile = Profile::for_version(version);
        for (name, on) in vector["gates"].as_object().into_iter().flatten() {
            profile.set_gate(name, on.as_bool().ok_or("gate values are booleans")?)?;
        }
        return Ok(profile);
    }
    let expects_warnings = vector["expect"]["warnings"].as_array().is_some_and(|w| !w.is_empty());
    // `[]string{...}` starts with `[]`; a JSON array or object does not.
    let json_values = texts.iter().any(|t| {
        t.match_indices("value: [").any(|(i, m)| !t[i + m.len()..].starts_with(']'))
            || t.contains("value: {")
    });
    if expects_warnings || json_values {
        let mut profile = Profile::for_version(Version::NEWEST);
        profile.set_gate("StrictIPCIDRValidation", false)?;
        Ok(profile)
    } else {
        Ok(Profile::for_version(Version { minor: 33, patch: None }))
    }
}

/// The `ClusterProfile` document that selects a profile in `api` mode.
fn profile_document(profile: &Profile) -> String {
    let defaults = Profile::for_version(profile.version).summary().feature_gates;
    let gates: Vec<String> = profile
        .summary()
        .feature_gates
        .iter()
        .filter(|(name, on)| {
            name.as_str() == "StrictIPCIDRValidation" || defaults.get(*name) != Some(*on)
        })
        .map(|(name, on)| format!("{name}: {on}"))
        .collect();
    format!(
        "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"{}\"\nfeatureGates: {{{}}}\n",
        profile.version,
        gates.join(", ")
    )
}

fn type_word(kind: ErrorType) -> &'static str {
    match kind {
        ErrorType::Required => "Required",
        ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid",
        ErrorType::NotSupported => "Unsupported",
        ErrorType::Duplicate => "Duplicate",
        ErrorType::Forbidden => "Forbidden",
        ErrorType::TooLong => "TooLong",
        ErrorType::TooMany => "TooMany",
        ErrorType::NotFound => "NotFound",
        _ => "Internal",
    }
}

fn reason_word(reason: &str) -> &'static str {
    match reason {
        "FieldValueRequired" => "Required",
        "FieldValueInvalid" | "FieldValueTypeInvalid" => "Invalid",
        "FieldValueNotSupported" => "Unsupported",
        "FieldValueDuplicate" => "Duplicate",
        "FieldValueForbidden" => "Forbidden",
        "FieldValueTooLong" => "TooLong",
        "FieldValueTooMany" => "TooMany",
        "FieldValueNotFound" => "NotFound",
        _ => "Internal",
    }
}

/// (path, type, text) triples.
type Lines = Vec<(String, String, String)>;

/// What `check` said about a vector's object.
struct CheckRun {
    /// The text report.
    text: String,
    /// The object's errors.
    lines: Lines,
    /// Its apiserver warnings.
    warnings: Vec<String>,
    /// With `explain`, the release ranges of each error.
    releases: Vec<Vec<String>>,
}

fn run_vector(
    vector: &Value,
    bases: &Value,
    messages: &BTreeMap<String, String>,
) -> Result<(), Failed> {
    let vectors::Objects { object, old } = vectors::objects(vector, bases)?;
    let expect = &vector["expect"];
    let expected: Lines = expect["errors"]
        .as_array()
        .map(|errors| {
            errors
                .iter()
                .map(|e| {
                    let s = |k: &str| expand(e[k].as_str().unwrap_or(""), messages);
                    (s("path"), s("type"), s("text"))
                })
                .collect()
        })
        .unwrap_or_default();
    let expected_warnings: Vec<String> = expect["warnings"]
        .as_array()
        .map(|w| w.iter().filter_map(Value::as_str).map(|t| expand(t, messages)).collect())
        .unwrap_or_default();
    let texts: Vec<String> =
        expected.iter().map(|(_, _, t)| t.clone()).chain(expected_warnings.clone()).collect();
    let profile = profile_for(vector, &texts)?;
    let valid = expect["valid"].as_bool().ok_or("expect.valid missing")?;
    if valid != expected.is_empty() {
        return Err("vector is inconsistent: valid must mean no errors".into());
    }
    let kind = vector["kind"].as_str().unwrap_or("");
    // `releases` on an expected error: the ranges `--explain-release` must give it (api mode).
    let expected_releases: Vec<Option<Vec<String>>> = expect["errors"]
        .as_array()
        .map(|errors| {
            errors
                .iter()
                .map(|e| {
                    e["releases"]
                        .as_array()
                        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                })
                .collect()
        })
        .unwrap_or_default();
    let explain = expected_releases.iter().any(Option::is_some);
    let mut actual_releases = Vec::new();
    let (actual, warnings, kubectl) = match vector["mode"].as_str() {
        Some("validate") => {
            let (lines, text) = validate_mode(kind, &object, old.as_ref(), &profile)?;
            (lines, None, Some(kubectl_block(&text)))
        }
        Some("api") => {
            let run = run_check(&object, old.as_ref(), &profile, explain)?;
            actual_releases = run.releases;
            (run.lines, Some(run.warnings), Some(kubectl_block(&run.text)))
        }
        other => return Err(format!("unknown mode {other:?}").into()),
    };
    let mut problems = Vec::new();
    for (i, want) in expected_releases.iter().enumerate() {
        let Some(want) = want else { continue };
        if actual_releases.get(i) != Some(want) {
            problems.push(format!(
                "releases of error {i} differ\n  expected: {want:?}\n  actual:   {:?}",
                actual_releases.get(i)
            ));
        }
    }
    if actual != expected {
        problems.push(format!("errors differ\n  expected: {expected:#?}\n  actual:   {actual:#?}"));
    }
    if let Some(warnings) = warnings
        && warnings != expected_warnings
    {
        problems.push(format!(
            "warnings differ\n  expected: {expected_warnings:#?}\n  actual:   {warnings:#?}"
        ));
    }
    if let (Some(want), Some(got)) = (vector["kubectl"].as_str(), kubectl) {
        let want = expand(want, messages);
        if want.trim_end_matches('\n') != got {
            problems
                .push(format!("kubectl text differs\n  expected: {want:?}\n  actual:   {got:?}"));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
}

/// Decodes one object through the core's reader.
fn decode(value: &Value, name: &str) -> Result<Object, Failed> {
    let text = serde_json::to_string(value).map_err(|e| e.to_string())?;
    let scenario = parse(&[Input::new(name, text)]);
    if let Some(d) = scenario.diagnostics.iter().find(|d| d.severity == Severity::Error) {
        return Err(format!("object does not decode: {}", d.message).into());
    }
    scenario.objects.into_iter().next().ok_or_else(|| "no object decoded".into())
}

fn lines_of(errors: &[FieldError], json: bool) -> Lines {
    errors.iter().map(|e| (e.path.clone(), type_word(e.kind).to_owned(), e.message(json))).collect()
}

fn validate_mode(
    kind: &str,
    object: &Value,
    old: Option<&Value>,
    profile: &Profile,
) -> Result<(Lines, String), Failed> {
    let json = profile.json_field_values();
    let new = decode(object, "new.yaml")?;
    let old = old.map(|o| decode(o, "old.yaml")).transpose()?;
    let (errors, positions, meta) = match (kind, new, old) {
        ("Service", Object::Service(n), None) => (
            validate_service_create(&n.value, profile),
            n.positions.clone(),
            n.value.metadata.clone(),
        ),
        ("Service", Object::Service(n), Some(Object::Service(o))) => (
            validate_service_update(&n.value, &o.value, profile),
            n.positions.clone(),
            n.value.metadata.clone(),
        ),
        ("EndpointSlice", Object::EndpointSlice(n), None) => (
            validate_endpoint_slice_create(&n.value, profile),
            n.positions.clone(),
            n.value.metadata.clone(),
        ),
        ("EndpointSlice", Object::EndpointSlice(n), Some(Object::EndpointSlice(o))) => (
            validate_endpoint_slice_update(&n.value, &o.value, profile),
            n.positions.clone(),
            n.value.metadata.clone(),
        ),
        _ => return Err(format!("cannot validate a {kind} vector with these objects").into()),
    };
    // kubectl's view of these errors, through the core's own text rendering of a report.
    let object = ObjectRef { kind: kind.to_owned(), namespace: meta.namespace, name: meta.name };
    let mut report = check(&[], &CheckOptions::default());
    report.diagnostics =
        errors.iter().map(|e| e.to_diagnostic(&object, &positions, json)).collect();
    Ok((lines_of(&errors, json), report.to_text()))
}

/// Runs `check` on [profile, old?, new]; returns the text report, the new object's errors, its
/// apiserver warnings (svclab advisories are not apiserver warnings and are left out) and, with
/// `explain`, the release ranges `--explain-release` gives each error.
fn run_check(
    object: &Value,
    old: Option<&Value>,
    profile: &Profile,
    explain: bool,
) -> Result<CheckRun, Failed> {
    let mut docs = vec![profile_document(profile)];
    if let Some(old) = old {
        docs.push(serde_json::to_string(old).map_err(|e| e.to_string())?);
    }
    docs.push(serde_json::to_string(object).map_err(|e| e.to_string())?);
    let new_doc = docs.len() - 1;
    let report = check(
        &[Input::new("vector.yaml", docs.join("\n---\n"))],
        &CheckOptions { explain_release: explain, ..CheckOptions::default() },
    );
    let mut lines = Vec::new();
    let mut warnings = Vec::new();
    let mut releases = Vec::new();
    for d in &report.diagnostics {
        let document = d.source.as_ref().map(|s| s.document);
        if document != Some(new_doc) {
            if d.severity == Severity::Error {
                return Err(format!(
                    "unexpected diagnostic outside the vector's object: {}",
                    d.message
                )
                .into());
            }
            continue;
        }
        match d.severity {
            Severity::Error => {
                lines.push((d.field.clone(), reason_word(&d.reason).to_owned(), d.message.clone()));
                releases.push(d.releases.as_ref().map(|r| r.releases.clone()).unwrap_or_default());
            }
            Severity::Warning if d.reason == "Warning" => warnings.push(d.message.clone()),
            Severity::Warning | Severity::Info => {}
        }
    }
    Ok(CheckRun { text: report.to_text(), lines, warnings, releases })
}

/// kubectl's error block of a text report: the `The X "n" is invalid: ...` line and its `* ` lines.
fn kubectl_block(text: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for line in text.lines() {
        if out.is_empty() {
            if line.starts_with("The ") && line.contains(" is invalid: ") {
                out.push(line);
            }
        } else if line.starts_with("* ") {
            out.push(line);
        } else {
            break;
        }
    }
    out.join("\n")
}
