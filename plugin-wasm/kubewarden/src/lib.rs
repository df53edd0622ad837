//! The svclab Service policy as a Kubewarden policy: a waPC guest that answers Kubewarden's three
//! operations (`protocol_version`, `validate_settings`, `validate`) with the same core as
//! `svclab serve`, so a cluster gets the same verdicts from either.
//!
//! No logic lives here: the adapter decodes Kubewarden's JSON, calls `svclab_core` and encodes
//! its answer. The operations and their JSON shapes are Kubewarden's
//! (`kubewarden/policy-sdk-rust`: `src/lib.rs` registers the three names, `src/request.rs`
//! `ValidationRequest`, `src/response.rs` `ValidationResponse`, `src/settings.rs`
//! `SettingsValidationResponse`, `src/metadata.rs` `ProtocolVersion`).

mod admission;
mod inventory;
mod settings;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use svclab_core::AdmissionRequest;

use settings::Settings;

/// waPC's start-up hook: the host calls it once after instantiation, before any operation
/// (`wasmtime-provider` 2.x `initialize` calls each of `_start` and `wapc_init` the module
/// exports, under the `wapc_init` epoch deadline).
#[expect(unsafe_code, reason = "the waPC host finds this export by its unmangled name")]
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    wapc_guest::register_function("protocol_version", protocol_version);
    wapc_guest::register_function("validate_settings", validate_settings);
    wapc_guest::register_function("validate", validate);
}

/// Kubewarden's protocol version as JSON: policy-evaluator decodes the answer into its
/// `ProtocolVersion` enum, whose only variant serializes as `"v1"`.
fn protocol_version(_payload: &[u8]) -> wapc_guest::CallResult {
    Ok(br#""v1""#.to_vec())
}

/// `SettingsValidationResponse`: `{"valid": true}` or `{"valid": false, "message": ...}`.
#[derive(Serialize)]
struct SettingsValidationResponse {
    valid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// `validate_settings`: the settings object as the policy's `settings` hold it.
fn validate_settings(payload: &[u8]) -> wapc_guest::CallResult {
    let answer = match Settings::decode(payload).and_then(|settings| settings.check()) {
        Ok(()) => SettingsValidationResponse { valid: true, message: None },
        Err(message) => SettingsValidationResponse { valid: false, message: Some(message) },
    };
    Ok(serde_json::to_vec(&answer)?)
}

/// `ValidationRequest`: the admission request, read by the core's decoder (the one
/// `svclab serve` reads a review's request with), and the policy's settings.
#[derive(Deserialize)]
struct ValidationRequest {
    request: AdmissionRequest,
    #[serde(default)]
    settings: Value,
}

/// `validate`: one admission request. A request that cannot be judged at all (not JSON, not an
/// AdmissionRequest, bad settings) is a waPC error, which policy-server turns into a rejection
/// with code 500.
fn validate(payload: &[u8]) -> wapc_guest::CallResult {
    let request: ValidationRequest = serde_json::from_slice(payload)
        .map_err(|err| format!("the validation request cannot be read: {err}"))?;
    let settings = Settings::from_value(request.settings);
    let response = admission::evaluate(&request.request, &settings)?;
    Ok(serde_json::to_vec(&response)?)
}
