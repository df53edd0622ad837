//! The profile admission models: the host's ClusterProfile (a document or its bare fields), or
//! the `profile` key of Kubewarden-shaped settings, read the way the pipeline reads a scenario's
//! ClusterProfile.

use serde_json::Value;

use super::status::lines;
use super::{AdmissionError, AdmissionOptions, PROFILE_INPUT};
use crate::diagnostic::Severity;
use crate::manifest::Input;
use crate::profile::Profile;

/// The resolved profile and the ClusterProfile document to put first in the scenario; `None`
/// when the host configured none. Errors refuse the configuration.
pub(super) fn profile_input(
    options: &AdmissionOptions,
) -> Result<Option<(Input, Profile)>, AdmissionError> {
    let fields = match &options.profile {
        Some(input) => last_document(input)?,
        None => options.policy.as_ref().and_then(crate::policy::embedded_profile_json),
    };
    let Some(mut json) = fields else { return Ok(None) };
    let Some(map) = json.as_object_mut() else {
        return Err(AdmissionError::Profile(format!("must be an object, not {json}")));
    };
    map.entry("apiVersion").or_insert_with(|| Value::String("svclab.dev/v1alpha1".into()));
    map.entry("kind").or_insert_with(|| Value::String("ClusterProfile".into()));
    if options.stringly_typed {
        unstring_profile(map);
    }
    let text = json.to_string();
    let Some(node) =
        crate::yaml::parse_stream(&text).into_iter().find_map(|d| d.root.ok().flatten())
    else {
        return Ok(None);
    };
    let mut diags = Vec::new();
    let profile = crate::policy::profile_from_node(node, PROFILE_INPUT, 0, &mut diags);
    if diags.iter().any(|d| d.severity == Severity::Error) {
        return Err(AdmissionError::Profile(lines(&diags)));
    }
    Ok(Some((Input::new(PROFILE_INPUT, text), profile)))
}

/// The last document of the host's profile input, as JSON (sigs.k8s.io/yaml's words when it is
/// not YAML).
fn last_document(input: &Input) -> Result<Option<Value>, AdmissionError> {
    let mut last = None;
    for doc in crate::yaml::parse_stream(&input.text) {
        match doc.root {
            Ok(Some(root)) => last = Some(root.to_json()),
            Ok(None) => {}
            Err(err) => {
                return Err(AdmissionError::Profile(format!(
                    "error converting YAML to JSON: yaml: line {}: {}",
                    err.pos.line, err.message
                )));
            }
        }
    }
    Ok(last)
}

/// Traefik's strings back to the types a ClusterProfile has.
fn unstring_profile(map: &mut serde_json::Map<String, Value>) {
    if let Some(Value::Object(gates)) = map.get_mut("featureGates") {
        for value in gates.values_mut() {
            if let Value::String(s) = value
                && (s == "true" || s == "false")
            {
                *value = Value::Bool(s == "true");
            }
        }
    }
    if let Some(Value::String(seed)) = map.get("seed")
        && let Ok(n) = seed.parse::<u64>()
    {
        map.insert("seed".into(), Value::from(n));
    }
    if let Some(Value::String(version)) = map.get_mut("kubernetesVersion") {
        // Go's `%f` of the YAML float 1.30 is "1.300000"; svclab models 1.24 and later, so a
        // single digit left after trimming the zeros is a tens digit (1.3 means 1.30).
        if let Some((major, minor)) = version.split_once('.')
            && minor.len() == 6
            && minor.bytes().all(|b| b.is_ascii_digit())
        {
            let trimmed = minor.trim_end_matches('0');
            let minor = match trimmed.len() {
                0 => "0".to_owned(),
                1 => format!("{trimmed}0"),
                _ => trimmed.to_owned(),
            };
            *version = format!("{major}.{minor}");
        }
    }
}
