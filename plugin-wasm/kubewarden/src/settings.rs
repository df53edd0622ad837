//! The policy's Kubewarden `settings`: the svclab Service policy settings object itself, plus
//! one optional top-level key `profile` holding ClusterProfile fields (`kubernetesVersion`,
//! `featureGates`, `serviceClusterIPRanges`, `serviceNodePortRange`) for the release and ranges
//! that apiserver validation models.

use serde_json::{Map, Value};
use svclab_core::Input;

/// Input names, so settings errors say which part of the settings they are about.
const POLICY_INPUT: &str = "settings";
const PROFILE_INPUT: &str = "settings.profile";

/// The settings split into what the core takes.
pub(crate) struct Settings {
    /// The Service policy settings (every key but `profile`); `None` when there are none, so
    /// only apiserver validation runs, like `svclab serve` without `--policy`.
    pub(crate) policy: Option<Input>,
    /// The ClusterProfile fields; `None` models the newest release with its default ranges.
    pub(crate) profile: Option<Input>,
    /// Namespaces whose Services the context-aware rules need (empty: no rule needs any).
    pub(crate) inventory_namespaces: Vec<String>,
}

impl Settings {
    /// Decodes the `validate_settings` payload.
    pub(crate) fn decode(payload: &[u8]) -> Result<Settings, String> {
        let value: Value = serde_json::from_slice(payload)
            .map_err(|err| format!("settings: the settings are not JSON: {err}"))?;
        Settings::from_value(value)
    }

    /// Splits a settings value; `null` (a policy deployed without settings) is `{}`.
    pub(crate) fn from_value(value: Value) -> Result<Settings, String> {
        let mut fields = match value {
            Value::Null => Map::new(),
            Value::Object(fields) => fields,
            other => {
                return Err(format!(
                    "settings: Invalid value: {other}: the settings must be an object"
                ));
            }
        };
        let profile = match fields.remove("profile") {
            None | Some(Value::Null) => None,
            Some(profile @ Value::Object(_)) => Some(Input::new(PROFILE_INPUT, profile.to_string())),
            Some(other) => {
                return Err(format!(
                    "profile: Invalid value: {other}: the profile must be an object of ClusterProfile fields"
                ));
            }
        };
        let inventory_namespaces = inventory_namespaces(&fields);
        let policy = (!fields.is_empty())
            .then(|| Input::new(POLICY_INPUT, Value::Object(fields).to_string()));
        Ok(Settings { policy, profile, inventory_namespaces })
    }

    /// Settings errors, one per line in the `field.Error` shape with settings paths.
    pub(crate) fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// The namespaces to list Services in for the context-aware rules the settings switch on:
/// `selector.uniqueInNamespace` compares with the Services of the object's own namespace
/// (written `""` here, resolved per request), and `clusterIP.reservations` /
/// `nodePorts.reservations` look at the Services that hold a reserved value in the namespaces
/// the reservations name.
fn inventory_namespaces(fields: &Map<String, Value>) -> Vec<String> {
    let mut namespaces = Vec::new();
    let unique_selector =
        fields.get("selector").and_then(|selector| selector.get("uniqueInNamespace"));
    if matches!(unique_selector, Some(Value::Bool(true))) {
        namespaces.push(String::new());
    }
    for block in ["clusterIP", "nodePorts"] {
        let reservations = fields
            .get(block)
            .and_then(|block| block.get("reservations"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for reservation in reservations {
            if let Some(namespace) = reservation.get("namespace").and_then(Value::as_str)
                && !namespaces.iter().any(|known| known == namespace)
            {
                namespaces.push(namespace.to_owned());
            }
        }
    }
    namespaces
}
