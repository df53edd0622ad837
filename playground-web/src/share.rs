//! Share links: the whole playground state in the URL fragment.
//!
//! Format: `#v1.` followed by base64url (no padding) of the raw deflate of a UTF-8 JSON object
//! whose `scenario` field holds the editor text. Other fields are optional and unknown fields are
//! ignored, so links made by newer playgrounds still open in older ones and the other way round.

use data_encoding::BASE64URL_NOPAD;
use serde::{Deserialize, Serialize};

/// Prefix of a version-1 fragment (without the `#`).
pub(crate) const FRAGMENT_PREFIX: &str = "v1.";

/// Largest inflated payload accepted (a guard against deflate bombs in links).
const MAX_INFLATED_BYTES: usize = 4 * 1024 * 1024;

/// Everything a link carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SharedState {
    /// The editor text: the whole scenario, profile included.
    pub(crate) scenario: String,
    /// The open panel (`diagnostics`, `allocations`, `rules`, `trace`, `compare`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) tab: String,
    /// The Rules panel's Service filter (`namespace/name`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) rules_filter: String,
    /// The Trace panel's packet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) trace: Option<SharedTrace>,
    /// The Compare panel's target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) compare: Option<SharedCompare>,
}

/// The target of the Compare panel: what `svclab upgrade --to --proxy-mode --to-profile` takes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SharedCompare {
    /// The target release (`1.37`, `1.33.5`).
    #[serde(default)]
    pub(crate) to: String,
    /// `iptables`, `nftables`, or empty for the scenario's own mode.
    #[serde(default)]
    pub(crate) proxy_mode: String,
    /// The target's `serviceClusterIPRanges`, comma separated; empty keeps today's.
    #[serde(default, rename = "serviceClusterIPRanges")]
    pub(crate) service_cluster_ip_ranges: String,
    /// The target's `serviceNodePortRange`; empty keeps today's.
    #[serde(default)]
    pub(crate) service_node_port_range: String,
}

/// The packet of the Trace panel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SharedTrace {
    /// Source address.
    #[serde(default)]
    pub(crate) src: String,
    /// Destination address.
    #[serde(default)]
    pub(crate) dst: String,
    /// Destination port.
    #[serde(default)]
    pub(crate) port: String,
    /// `TCP`, `UDP` or `SCTP`.
    #[serde(default)]
    pub(crate) protocol: String,
}

/// Why a fragment could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ShareError {
    /// The fragment does not start with `v1.`.
    UnknownVersion,
    /// The text after `v1.` is not base64url without padding.
    Base64,
    /// The bytes are not raw deflate (or inflate past the size limit).
    Deflate,
    /// The inflated bytes are not UTF-8.
    Utf8,
    /// The text is not a JSON object with a string `scenario`.
    Json(String),
}

impl std::fmt::Display for ShareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShareError::UnknownVersion => {
                write!(f, "the link does not start with #{FRAGMENT_PREFIX} (unknown share format)")
            }
            ShareError::Base64 => write!(f, "the link is not valid base64url; was it cut short?"),
            ShareError::Deflate => {
                write!(f, "the link's data does not decompress; was it cut short?")
            }
            ShareError::Utf8 => write!(f, "the link's data is not UTF-8 text"),
            ShareError::Json(detail) => {
                write!(f, "the link's data is not a playground state: {detail}")
            }
        }
    }
}

/// Encodes a state as a fragment, without the leading `#`.
pub(crate) fn encode(state: &SharedState) -> String {
    let json = serde_json::to_vec(state).unwrap_or_default();
    let deflated = miniz_oxide::deflate::compress_to_vec(&json, 10);
    format!("{FRAGMENT_PREFIX}{}", BASE64URL_NOPAD.encode(&deflated))
}

/// Decodes a fragment (with or without the leading `#`).
pub(crate) fn decode(fragment: &str) -> Result<SharedState, ShareError> {
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    let payload = fragment.strip_prefix(FRAGMENT_PREFIX).ok_or(ShareError::UnknownVersion)?;
    let deflated =
        BASE64URL_NOPAD.decode(payload.trim().as_bytes()).map_err(|_| ShareError::Base64)?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&deflated, MAX_INFLATED_BYTES)
        .map_err(|_| ShareError::Deflate)?;
    let text = String::from_utf8(json).map_err(|_| ShareError::Utf8)?;
    serde_json::from_str(&text).map_err(|e| ShareError::Json(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(fragment: &str, expected: Result<&str, ShareError>) {
        assert_eq!(decode(fragment).map(|s| s.scenario), expected.map(str::to_owned));
    }

    #[test]
    fn round_trip_keeps_every_field() {
        let state = SharedState {
            scenario: "apiVersion: v1\nkind: Service\n# ünïcode\n".into(),
            tab: "trace".into(),
            rules_filter: "default/dns".into(),
            trace: Some(SharedTrace {
                src: "10.0.0.1".into(),
                dst: "10.96.0.10".into(),
                port: "53".into(),
                protocol: "UDP".into(),
            }),
            compare: Some(SharedCompare {
                to: "1.37".into(),
                proxy_mode: "nftables".into(),
                service_cluster_ip_ranges: "10.100.0.0/16".into(),
                service_node_port_range: String::new(),
            }),
        };
        let fragment = encode(&state);
        assert!(fragment.starts_with("v1."));
        assert!(!fragment.contains('=') && !fragment.contains('+') && !fragment.contains('/'));
        assert_eq!(decode(&format!("#{fragment}")), Ok(state));
    }

    #[test]
    fn unknown_fields_are_ignored_and_malformed_links_say_why() {
        let json = br#"{"scenario":"kind: Service\n","future":{"x":1}}"#;
        let link = format!(
            "v1.{}",
            BASE64URL_NOPAD.encode(&miniz_oxide::deflate::compress_to_vec(json, 6))
        );
        check(&link, Ok("kind: Service\n"));
        check("v2.abc", Err(ShareError::UnknownVersion));
        check("v1.***", Err(ShareError::Base64));
        check("v1.AAAA", Err(ShareError::Deflate));
        let no_scenario = format!(
            "v1.{}",
            BASE64URL_NOPAD.encode(&miniz_oxide::deflate::compress_to_vec(b"{}", 6))
        );
        assert!(matches!(decode(&no_scenario), Err(ShareError::Json(m)) if m.contains("scenario")));
    }
}
