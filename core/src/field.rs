//! Field errors as `k8s.io/apimachinery/pkg/util/validation/field` renders them: error types,
//! Go-syntax value rendering (`%q`, `%#v`) and the `<path>: <Type>: <value>: <detail>` line.

use crate::diagnostic::{Diagnostic, ObjectRef};
use crate::model::Positions;

/// `field.ErrorType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorType {
    /// `Required value`.
    Required,
    /// `Invalid value`.
    Invalid,
    /// `Unsupported value`.
    NotSupported,
    /// `Duplicate value`.
    Duplicate,
    /// `Forbidden`.
    Forbidden,
    /// `Too long`.
    TooLong,
    /// `Too many`.
    TooMany,
    /// `Not found`.
    NotFound,
    /// `Internal error`.
    Internal,
    /// `Invalid value` from the decoder (wrong JSON type).
    TypeInvalid,
}

impl ErrorType {
    /// The word kubectl prints.
    pub fn word(self) -> &'static str {
        match self {
            ErrorType::Required => "Required value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::NotFound => "Not found",
            ErrorType::Internal => "Internal error",
        }
    }

    /// The `reason` of `Status.details.causes[]`.
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    fn shows_value(self) -> bool {
        !matches!(
            self,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong | ErrorType::Internal
        )
    }
}

/// A bad value, kept with its Go type so it renders exactly like `fmt` would.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GoValue {
    /// No value (Required, Forbidden, ...), or a nil pointer (`null`).
    Null,
    /// An integer of any width.
    Int(i64),
    /// A bool.
    Bool(bool),
    /// A plain `string` (renders with `%q` in every release).
    Str(String),
    /// A named string type (`core.ServiceType`, `core.Protocol`, `discovery.AddressType`):
    /// `%#v` before 1.34 (the same text as `%q`), `json.Marshal` from 1.34, which escapes
    /// `&`, `<`, `>` as `\u0026`... and control characters as `\u00XX` (field/errors.go
    /// `ErrorBody`: only the exact type `string` keeps the `%q` branch).
    Named(String),
    /// A slice of a string type: `[]string{"a", "b"}`; the type name is kept for `%#v`.
    StrSlice {
        /// Go type of the slice (`[]string`, `[]core.IPFamily`).
        type_name: &'static str,
        /// The items.
        items: Vec<String>,
    },
    /// Anything already rendered (`core.ServicePort{...}`).
    Raw(String),
    /// A composite value pre-rendered both ways: Go `%#v` (before 1.34) and `json.Marshal`
    /// (1.34+, kubernetes/kubernetes#132314).
    Composite {
        /// Go `%#v` rendering.
        go: String,
        /// JSON rendering.
        json: String,
    },
}

impl GoValue {
    /// `[]string{...}`.
    pub fn strings(items: &[String]) -> GoValue {
        GoValue::StrSlice { type_name: "[]string", items: items.to_vec() }
    }

    /// Renders like Go `fmt` (`json == false`) or as JSON (`json == true`, 1.34+ style).
    pub fn render(&self, json: bool) -> String {
        match self {
            // Before 1.34 `ErrorBody` replaced a nil value with the string "null" and then took
            // its `%q` branch; from 1.34 `json.Marshal(nil)` gives a bare `null`.
            GoValue::Null if json => "null".to_owned(),
            GoValue::Null => "\"null\"".to_owned(),
            GoValue::Int(i) => i.to_string(),
            GoValue::Bool(b) => b.to_string(),
            // Plain strings keep the `%q` type-switch branch even after #132314, which only
            // routes composite values (slices, structs) through JSON.
            GoValue::Str(s) => go_quote(s),
            GoValue::Named(s) if json => go_json_quote(s),
            GoValue::Named(s) => go_quote(s),
            GoValue::StrSlice { items, .. } if json && items.is_empty() => "null".to_owned(),
            GoValue::StrSlice { items, .. } if json => {
                let inner: Vec<String> = items.iter().map(|s| go_json_quote(s)).collect();
                format!("[{}]", inner.join(","))
            }
            GoValue::StrSlice { type_name, items } if items.is_empty() => {
                format!("{type_name}(nil)")
            }
            GoValue::StrSlice { type_name, items } => {
                let inner: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
                format!("{type_name}{{{}}}", inner.join(", "))
            }
            GoValue::Raw(s) => s.clone(),
            GoValue::Composite { json: j, .. } if json => j.clone(),
            GoValue::Composite { go, .. } => go.clone(),
        }
    }
}

/// A `core.ServicePort` as `%#v` and as JSON renders it (internal types carry no JSON tags, so
/// JSON uses the Go field names; `IntOrString` marshals to its bare value).
pub(crate) fn service_port_value(port: &crate::model::ServicePort) -> GoValue {
    GoValue::Composite { go: service_port_go(port), json: service_port_json(port) }
}

/// `%#v` of a `core.ServicePort`. A non-nil `AppProtocol` prints a memory address in Go; we print
/// a fixed placeholder so output stays deterministic.
pub(crate) fn service_port_go(port: &crate::model::ServicePort) -> String {
    let app =
        if port.app_protocol.is_some() { "(*string)(0xc000000000)" } else { "(*string)(nil)" };
    let target = match &port.target_port {
        crate::model::IntOrString::Int(i) => {
            format!("intstr.IntOrString{{Type:0, IntVal:{i}, StrVal:\"\"}}")
        }
        crate::model::IntOrString::String(s) => {
            format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}", go_quote(s))
        }
    };
    format!(
        "core.ServicePort{{Name:{}, Protocol:{}, AppProtocol:{app}, Port:{}, TargetPort:{target}, NodePort:{}}}",
        go_quote(&port.name),
        go_quote(&port.protocol),
        port.port,
        port.node_port
    )
}

/// `json.Marshal` of a `core.ServicePort`.
pub(crate) fn service_port_json(port: &crate::model::ServicePort) -> String {
    let app = port.app_protocol.as_deref().map_or("null".to_owned(), go_json_quote);
    let target = match &port.target_port {
        crate::model::IntOrString::Int(i) => i.to_string(),
        crate::model::IntOrString::String(s) => go_json_quote(s),
    };
    format!(
        "{{\"Name\":{},\"Protocol\":{},\"AppProtocol\":{app},\"Port\":{},\"TargetPort\":{target},\"NodePort\":{}}}",
        go_json_quote(&port.name),
        go_json_quote(&port.protocol),
        port.port,
        port.node_port
    )
}

/// Go `encoding/json` string encoding (`json.Marshal` with its default HTML escaping).
pub(crate) fn go_json_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go `strconv.Quote`.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            // Go escapes what `unicode.IsPrint` rejects: controls, spaces other than U+0020 and
            // the common format characters (soft hyphen, zero-width and bidi marks, BOM).
            c if c.is_control()
                || (c.is_whitespace() && c != ' ')
                || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}') =>
            {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One `field.Error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Field path (`spec.ports[0].port`).
    pub path: String,
    /// Error type.
    pub kind: ErrorType,
    /// The bad value (ignored for types that do not show one).
    pub value: GoValue,
    /// Detail text.
    pub detail: String,
}

impl FieldError {
    /// `field.Invalid`.
    pub fn invalid(
        path: impl Into<String>,
        value: GoValue,
        detail: impl Into<String>,
    ) -> FieldError {
        FieldError { path: path.into(), kind: ErrorType::Invalid, value, detail: detail.into() }
    }

    /// `field.Required`.
    pub fn required(path: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError {
            path: path.into(),
            kind: ErrorType::Required,
            value: GoValue::Null,
            detail: detail.into(),
        }
    }

    /// `field.Forbidden`.
    pub fn forbidden(path: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError {
            path: path.into(),
            kind: ErrorType::Forbidden,
            value: GoValue::Null,
            detail: detail.into(),
        }
    }

    /// `field.Duplicate`.
    pub fn duplicate(path: impl Into<String>, value: GoValue) -> FieldError {
        FieldError { path: path.into(), kind: ErrorType::Duplicate, value, detail: String::new() }
    }

    /// `field.NotSupported` with its quoted list of valid values, in the caller's order: the
    /// function never sorted them (field/errors.go `NotSupported`, v0.24.0 to v0.36.0), so each
    /// caller passes upstream's order (`sets.List` sorts, a literal slice does not).
    pub fn not_supported(path: impl Into<String>, value: GoValue, valid: &[&str]) -> FieldError {
        let detail = if valid.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        FieldError { path: path.into(), kind: ErrorType::NotSupported, value, detail }
    }

    /// `field.NotSupported` over `sets.List(...)` of the values: sorted first.
    pub fn not_supported_sorted(
        path: impl Into<String>,
        value: GoValue,
        valid: &[&str],
    ) -> FieldError {
        let mut sorted = valid.to_vec();
        sorted.sort_unstable();
        FieldError::not_supported(path, value, &sorted)
    }

    /// `field.InternalError`.
    pub fn internal(path: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError {
            path: path.into(),
            kind: ErrorType::Internal,
            value: GoValue::Null,
            detail: detail.into(),
        }
    }

    /// `ErrorBody()`: the text after the path.
    pub fn body(&self, json_values: bool) -> String {
        let mut s = self.kind.word().to_owned();
        if self.kind.shows_value() {
            s.push_str(": ");
            s.push_str(&self.value.render(json_values));
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// `Error()`: `<path>: <body>`.
    pub fn message(&self, json_values: bool) -> String {
        if self.path.is_empty() {
            self.body(json_values)
        } else {
            format!("{}: {}", self.path, self.body(json_values))
        }
    }

    /// The report diagnostic for this error on an object.
    pub fn to_diagnostic(
        &self,
        object: &ObjectRef,
        positions: &Positions,
        json_values: bool,
    ) -> Diagnostic {
        let message = self.message(json_values);
        Diagnostic::error(Some(object.clone()), self.path.clone(), self.kind.reason(), message)
            .at(positions.source_of(&self.path))
    }
}

#[cfg(test)]
mod tests;
