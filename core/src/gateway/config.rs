//! The plugin configuration of the gateway guests: `{"policy": <settings>, "profile":
//! <ClusterProfile fields>, "mode", "prefix", "patch", "guard", "limits"}`.
//!
//! Unknown keys are errors (a typo must never switch a check off). Traefik hands every
//! middleware option over as a string (`false` → `"false"`, `3145728` → `"3145728"`), so with
//! `stringly_typed` numbers and booleans may be strings.

use serde_json::Value;

use crate::admission::{AdmissionError, AdmissionOptions, AdmissionRequest, admit};
use crate::manifest::Input;

/// The object the settings and the profile are tried on when the configuration is read.
const PROBE: &str = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"probe"},"spec":{"ports":[{"port":80}]}}"#;

/// kube-apiserver's own request body limit (`--max-request-body-bytes` default 3 MiB,
/// `apiserver/pkg/server/config.go` `MaxRequestBodyBytes: 3 * 1024 * 1024`).
pub const DEFAULT_MAX_BODY_BYTES: usize = 3 * 1024 * 1024;
/// How many objects one call of svclab's API may carry.
pub const DEFAULT_MAX_OBJECTS: usize = 1000;

/// The gateway guests' configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayConfig {
    /// The Service policy settings (JSON text), `None` = apiserver validation only.
    pub policy: Option<String>,
    /// ClusterProfile fields (JSON text), `None` = the newest release's defaults.
    pub profile: Option<String>,
    /// Refuse or only warn.
    pub mode: Mode,
    /// What a PATCH of a guarded object gets.
    pub patch: PatchMode,
    /// Where svclab's API answers (`""` = nowhere).
    pub prefix: String,
    /// Which Kubernetes API paths are judged.
    pub guard: Vec<Guard>,
    /// The largest body judged; beyond it the answer is 413.
    pub max_body_bytes: usize,
    /// The most objects one API call may carry; beyond it the answer is 413.
    pub max_objects: usize,
    /// Scalars of `policy` and `profile` may be strings (Traefik).
    pub stringly_typed: bool,
}

/// `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Refusals are answered by the gateway (the default).
    Enforce,
    /// Everything goes upstream; a refusal becomes one more `Warning` header.
    Warn,
}

/// `patch`: a PATCH body is partial, so it cannot be judged without the stored object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchMode {
    /// Forward it with a `Warning` header saying it was not validated (the default, so
    /// `kubectl apply` and `kubectl edit` keep working).
    Warn,
    /// Answer 405 `MethodNotAllowed`: clients must PUT whole objects.
    Refuse,
}

/// `guard` entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// `services` (create and update).
    Services,
    /// `services/status`.
    ServicesStatus,
    /// `endpointslices` (discovery.k8s.io/v1).
    EndpointSlices,
}

/// Why a configuration is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GatewayConfigError {
    /// Not a JSON object.
    Json(String),
    /// A key with a bad value or an unknown key, named by its path.
    Field {
        /// Path of the key (`limits.maxBodyBytes`).
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

impl std::fmt::Display for GatewayConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GatewayConfigError::Json(message) => {
                write!(f, "the gateway configuration is not a JSON object: {message}")
            }
            GatewayConfigError::Field { path, message } => write!(f, "{path}: {message}"),
        }
    }
}

impl std::error::Error for GatewayConfigError {}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            policy: None,
            profile: None,
            mode: Mode::Enforce,
            patch: PatchMode::Warn,
            prefix: String::new(),
            guard: vec![Guard::Services, Guard::ServicesStatus, Guard::EndpointSlices],
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_objects: DEFAULT_MAX_OBJECTS,
            stringly_typed: false,
        }
    }
}

fn field(path: &str, message: impl Into<String>) -> GatewayConfigError {
    GatewayConfigError::Field { path: path.to_owned(), message: message.into() }
}

impl GatewayConfig {
    /// The admission options of `policy` and `profile`.
    pub fn admission_options(&self) -> AdmissionOptions {
        AdmissionOptions {
            policy: self.policy.as_ref().map(|text| Input::new("policy", text.as_str())),
            profile: self.profile.as_ref().map(|text| Input::new("profile", text.as_str())),
            stringly_typed: self.stringly_typed,
            inventory: None,
        }
    }

    /// Reads the plugin configuration (empty bytes = all defaults); bad `policy` settings or a
    /// bad `profile` are errors here, so a gateway refuses the configuration instead of running
    /// without the rules it was given.
    pub fn parse(bytes: &[u8], stringly_typed: bool) -> Result<GatewayConfig, GatewayConfigError> {
        let mut config = GatewayConfig { stringly_typed, ..GatewayConfig::default() };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(config);
        }
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|err| GatewayConfigError::Json(err.to_string()))?;
        let Value::Object(map) = value else {
            return Err(GatewayConfigError::Json("expected an object".into()));
        };
        for (key, value) in map {
            match key.as_str() {
                "policy" => config.policy = document(&key, value)?,
                "profile" => config.profile = document(&key, value)?,
                "mode" => {
                    config.mode = match string(&key, &value)? {
                        "enforce" => Mode::Enforce,
                        "warn" => Mode::Warn,
                        _ => return Err(field(&key, "must be \"enforce\" or \"warn\"")),
                    }
                }
                "patch" => {
                    config.patch = match string(&key, &value)? {
                        "warn" => PatchMode::Warn,
                        "refuse" => PatchMode::Refuse,
                        _ => return Err(field(&key, "must be \"warn\" or \"refuse\"")),
                    }
                }
                "prefix" => {
                    let prefix = string(&key, &value)?.trim_end_matches('/');
                    if !prefix.is_empty() && !prefix.starts_with('/') {
                        return Err(field(&key, "must start with \"/\""));
                    }
                    config.prefix = prefix.to_owned();
                }
                "guard" => config.guard = guard(&value)?,
                "limits" => {
                    let Value::Object(limits) = value else {
                        return Err(field(&key, "must be an object"));
                    };
                    for (name, value) in limits {
                        let path = format!("limits.{name}");
                        let number = count(&path, &value, config.stringly_typed)?;
                        match name.as_str() {
                            "maxBodyBytes" => config.max_body_bytes = number,
                            "maxObjects" => config.max_objects = number,
                            _ => return Err(field(&path, "unknown key")),
                        }
                    }
                }
                _ => return Err(field(&key, "unknown key")),
            }
        }
        // One admission of a minimal Service decodes the settings and the profile exactly as
        // every request will.
        let probe = AdmissionRequest {
            kind: "Service".into(),
            operation: "CREATE".into(),
            namespace: "default".into(),
            object: Some(PROBE.into()),
            ..AdmissionRequest::default()
        };
        match admit(&probe, &config.admission_options()) {
            Err(AdmissionError::Settings(message)) => Err(field("policy", message)),
            Err(AdmissionError::Profile(message)) => Err(field("profile", message)),
            _ => Ok(config),
        }
    }
}

/// `policy` and `profile`: an object (kept as JSON text) or a YAML/JSON document as a string.
fn document(key: &str, value: Value) -> Result<Option<String>, GatewayConfigError> {
    match value {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some(value.to_string())),
        Value::String(text) => Ok(Some(text)),
        _ => Err(field(key, "must be an object")),
    }
}

fn string<'a>(key: &str, value: &'a Value) -> Result<&'a str, GatewayConfigError> {
    value.as_str().ok_or_else(|| field(key, "must be a string"))
}

fn count(path: &str, value: &Value, stringly_typed: bool) -> Result<usize, GatewayConfigError> {
    let number = match value {
        // Istio's pluginConfig is a protobuf Struct: its numbers arrive as doubles.
        Value::Number(number) => number.as_u64().or_else(|| {
            number
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15)
                .map(|f| f as u64)
        }),
        Value::String(text) if stringly_typed => text.parse::<u64>().ok(),
        _ => None,
    };
    number
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| field(path, "must be a positive integer"))
}

fn guard(value: &Value) -> Result<Vec<Guard>, GatewayConfigError> {
    let Value::Array(items) = value else {
        return Err(field("guard", "must be a list"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item.as_str() {
            Some("services") => Ok(Guard::Services),
            Some("services/status") => Ok(Guard::ServicesStatus),
            Some("endpointslices") => Ok(Guard::EndpointSlices),
            _ => Err(field(
                &format!("guard[{i}]"),
                "must be \"services\", \"services/status\" or \"endpointslices\"",
            )),
        })
        .collect()
}
