//! The webhook's Prometheus metrics (OpenMetrics text at `/metrics`), all prefixed
//! `svclab_webhook_`: requests by path and code with a latency histogram, reviews by outcome,
//! verdicts by rule, plugin fuel per review, engine failures by kind, open connections, TLS
//! handshake failures and certificate reloads.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

/// What one review came to, as the metrics see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Review {
    /// The engine answered.
    Answered {
        /// The decision.
        decision: Decision,
        /// Fuel the plugin used (`None` on the native engine).
        fuel: Option<u64>,
    },
    /// The AdmissionReview was malformed (HTTP 400).
    BadRequest,
    /// The engine failed; answered by the failure policy.
    Failed {
        /// `out_of_fuel`, `timeout`, `memory_limit`, `trap`, `plugin`, `failed`, `panic`.
        kind: &'static str,
    },
}

/// What a review decided, read back from the AdmissionReview it answered: the labels of the
/// review and rule counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Decision {
    /// `response.allowed`.
    pub(super) allowed: bool,
    /// The rules behind it, with their effect, deduplicated: a policy rule (the `(rule.id)`
    /// that ends each policy message) with `deny` (a 403 cause), `warn` (a warning) or `audit`
    /// (a `<rule>` audit annotation); an apiserver refusal's field path (indices as `[*]`)
    /// with `Invalid`.
    pub(super) rules: Vec<(String, &'static str)>,
}

impl Decision {
    pub(super) fn of(output: &str) -> Decision {
        let review: serde_json::Value = serde_json::from_str(output).unwrap_or_default();
        let response = &review["response"];
        let forbidden =
            response.pointer("/status/reason").and_then(|r| r.as_str()) == Some("Forbidden");
        let mut rules: Vec<(String, &'static str)> = Vec::new();
        let causes = response.pointer("/status/details/causes").and_then(|c| c.as_array());
        for cause in causes.into_iter().flatten() {
            let message = cause["message"].as_str().unwrap_or_default();
            let field = cause["field"].as_str().unwrap_or_default();
            match rule_of(message) {
                Some(rule) if forbidden => rules.push((rule.to_owned(), "deny")),
                // Field paths carry indices (`spec.ports[3].port`): stripped, so the label set
                // stays bounded.
                _ if !field.is_empty() => rules.push((strip_indices(field), "Invalid")),
                _ => {}
            }
        }
        let warnings = response["warnings"].as_array();
        rules.extend(
            warnings
                .into_iter()
                .flatten()
                .filter_map(|warning| rule_of(warning.as_str()?))
                .map(|rule| (rule.to_owned(), "warn")),
        );
        if let Some(annotations) = response["auditAnnotations"].as_object() {
            rules.extend(
                annotations
                    .keys()
                    .filter(|key| *key != "skipped")
                    .map(|rule| (rule.clone(), "audit")),
            );
        }
        rules.sort();
        rules.dedup();
        Decision { allowed: response["allowed"].as_bool().unwrap_or(false), rules }
    }
}

/// The policy rule a message names at its end (`... (externalIPs.allowedCIDRs)`).
fn rule_of(message: &str) -> Option<&str> {
    let rule = message.strip_suffix(')')?.rsplit_once(" (")?.1;
    let is_id = rule.contains('.') && rule.chars().all(|c| c.is_ascii_alphanumeric() || c == '.');
    is_id.then_some(rule)
}

/// `spec.ports[3].port` → `spec.ports[*].port`.
fn strip_indices(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut in_index = false;
    for c in field.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push_str("[*]");
            }
            ']' => in_index = false,
            _ if in_index => {}
            _ => out.push(c),
        }
    }
    out
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    path: &'static str,
    code: u32,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PathLabels {
    path: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RuleLabels {
    rule: String,
    /// `Invalid` (apiserver validation), `deny`, `warn` or `audit` (policy).
    effect: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// The registry and its metrics.
pub(super) struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: HistogramFamily<PathLabels>,
    reviews: Family<OutcomeLabels, Counter>,
    rules: Family<RuleLabels, Counter>,
    fuel: Histogram,
    failures: Family<KindLabels, Counter>,
    pub(super) connections: Gauge,
    pub(super) handshake_failures: Counter,
    reloads: Family<ResultLabels, Counter>,
}

impl Metrics {
    pub(super) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("svclab_webhook");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register("requests", "HTTP requests by path and status code", requests.clone());
        // 0.1 ms to ~3.3 s: a review takes well under a millisecond natively, kube-apiserver
        // gives up after 10 s.
        let latency: HistogramFamily<PathLabels> =
            Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.0001, 2.0, 16)));
        registry.register_with_unit(
            "request_duration",
            "Time from request head to response, by path",
            Unit::Seconds,
            latency.clone(),
        );
        let reviews = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "reviews",
            "AdmissionReviews by outcome: allowed, denied, bad_request, failed",
            reviews.clone(),
        );
        let rules = Family::<RuleLabels, Counter>::default();
        registry.register(
            "rule_verdicts",
            "Policy rules that denied, warned or audited (effect deny, warn, audit), and the \
             fields of apiserver refusals (effect Invalid, indices as [*])",
            rules.clone(),
        );
        // 10^4 to ~4·10^10 units (the default budget is 5·10^10).
        let fuel = Histogram::new(exponential_buckets(10_000.0, 4.0, 13));
        registry.register("plugin_fuel", "Plugin fuel used per review", fuel.clone());
        let failures = Family::<KindLabels, Counter>::default();
        registry.register(
            "engine_failures",
            "Reviews the engine could not answer (answered by --failure-policy), by kind",
            failures.clone(),
        );
        let connections = Gauge::default();
        registry.register("connections", "Open client connections", connections.clone());
        let handshake_failures = Counter::default();
        registry.register(
            "tls_handshake_failures",
            "TLS handshakes that failed or timed out (refused client certificates among them)",
            handshake_failures.clone(),
        );
        let reloads = Family::<ResultLabels, Counter>::default();
        registry.register(
            "certificate_reloads",
            "Certificate reloads after the files changed, by result (ok, error)",
            reloads.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            reviews,
            rules,
            fuel,
            failures,
            connections,
            handshake_failures,
            reloads,
        }
    }

    /// Records one answered request.
    pub(super) fn request(&self, path: &'static str, code: u16, elapsed: Duration) {
        self.requests.get_or_create(&RequestLabels { path, code: code.into() }).inc();
        self.latency.get_or_create(&PathLabels { path }).observe(elapsed.as_secs_f64());
    }

    /// Records one review.
    pub(super) fn review(&self, review: &Review) {
        let outcome = match review {
            Review::Answered { decision, fuel } => {
                if let Some(fuel) = fuel {
                    // Precision loss above 2^53 units is irrelevant to a histogram.
                    #[expect(clippy::cast_precision_loss, reason = "histogram of fuel units")]
                    self.fuel.observe(*fuel as f64);
                }
                for (rule, effect) in &decision.rules {
                    let labels = RuleLabels { rule: rule.clone(), effect };
                    self.rules.get_or_create(&labels).inc();
                }
                if decision.allowed { "allowed" } else { "denied" }
            }
            Review::BadRequest => "bad_request",
            Review::Failed { kind } => {
                self.failures.get_or_create(&KindLabels { kind }).inc();
                "failed"
            }
        };
        self.reviews.get_or_create(&OutcomeLabels { outcome }).inc();
    }

    /// Records a certificate reload.
    pub(super) fn reload(&self, ok: bool) {
        let result = if ok { "ok" } else { "error" };
        self.reloads.get_or_create(&ResultLabels { result }).inc();
    }

    /// The OpenMetrics text.
    pub(super) fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}
