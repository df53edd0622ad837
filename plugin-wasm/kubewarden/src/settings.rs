//! The policy's Kubewarden `settings`: the svclab Service policy settings object itself, with
//! one optional top-level key `profile` holding ClusterProfile fields (`kubernetesVersion`,
//! `featureGates`, `serviceClusterIPRanges`, `serviceNodePortRange`) for the release and ranges
//! that apiserver validation models. The core reads both from the one object.

use serde_json::Value;
use svclab_core::{AdmissionError, AdmissionOptions, AdmissionRequest, Input};

/// Input name, so settings errors say what they are about.
const SETTINGS_INPUT: &str = "settings";

/// The settings as the core takes them.
pub(crate) struct Settings {
    /// The settings object; `None` when it is empty (or the policy has none), so only
    /// apiserver validation runs, like `svclab serve` without `--policy`.
    pub(crate) policy: Option<Input>,
    /// `selector.uniqueInNamespace` is on: the one rule that compares with the cluster's other
    /// Services, which the policy then asks the host for.
    pub(crate) unique_selector: bool,
}

impl Settings {
    /// Decodes the `validate_settings` payload.
    pub(crate) fn decode(payload: &[u8]) -> Result<Settings, String> {
        let value: Value = serde_json::from_slice(payload)
            .map_err(|err| format!("settings: the settings are not JSON: {err}"))?;
        Ok(Settings::from_value(value))
    }

    /// The settings of a `validate` request; `null` (a policy deployed without settings) is
    /// `{}`.
    pub(crate) fn from_value(value: Value) -> Settings {
        let unique_selector =
            value.pointer("/selector/uniqueInNamespace").and_then(Value::as_bool) == Some(true);
        let empty = value.is_null() || value.as_object().is_some_and(serde_json::Map::is_empty);
        let policy = (!empty).then(|| Input::new(SETTINGS_INPUT, value.to_string()));
        Settings { policy, unique_selector }
    }

    /// The settings errors (unknown keys, bad CIDRs, orphans, a bad `profile`) in the
    /// `field.Error` shape with settings paths: one line, or several as `[a, b]`. They come from
    /// the admission path itself (`admit` checks the profile and the settings before it looks at
    /// the request), so settings that pass here never make `validate` fail.
    pub(crate) fn check(&self) -> Result<(), String> {
        let options =
            AdmissionOptions { policy: self.policy.clone(), ..AdmissionOptions::default() };
        match svclab_core::admit(&AdmissionRequest::default(), &options) {
            Ok(_) => Ok(()),
            Err(AdmissionError::Settings(lines) | AdmissionError::Profile(lines)) => Err(lines),
            Err(other) => Err(other.to_string()),
        }
    }
}
