//! When each kube-apiserver rule, text, warning and default that svclab models appeared, changed
//! and left: one table per area, read by the validation code (through [`in_force`]) and by
//! `svclab check --explain-release` (through [`governing`]).
//!
//! Releases are minors (`24` is Kubernetes 1.24); apimachinery and apiserver `v0.N.0` ship with
//! Kubernetes 1.N. Each row says how its boundaries are known: read at the release tags of
//! kubernetes/apimachinery or kubernetes/apiserver (`Pin::Tag`), read in kubernetes/kubernetes
//! at released versions on both sides of each boundary, as another repository vendored them
//! (`Pin::Vendored`), dated by a kubernetes/kubernetes pull request and the CHANGELOG of the
//! release that lists it (`Pin::Pr`), read in copies of the file dated by the API they use
//! (`Pin::Copies`), or not pinned (`Pin::Unpinned`, with what is missing in `upstream`).
//!
//! The vendored reads: ceph/ceph-csi vendors `k8s.io/kubernetes` (`vendor/k8s.io/kubernetes`,
//! its go.mod naming the version) at v1.24.0, v1.25.0, v1.26.1, v1.27.2, v1.28.0, v1.29.0,
//! v1.30.0 and v1.31.0, with `pkg/apis/core/validation`, `pkg/apis/core/v1/defaults.go` and the
//! whole `pkg/api/service` package (so a file absent there was absent from the release);
//! kubeedge/kubeedge vendors the same packages at v1.32.10 (its fork `v1.32.10-kubeedge1`, whose
//! Service validation, defaults and warnings match v1.31.0's but for the 1.32 signatures), and
//! openshift/openshift-apiserver vendors upstream `k8s.io/kubernetes` v1.33.3 and v1.34.1.

/// How a row's release boundaries are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pin {
    /// Read in the source at the release tags (apimachinery, apiserver).
    Tag,
    /// Read in kubernetes/kubernetes at released versions on both sides of each boundary, as
    /// vendored by another repository (the versions are named in `upstream`).
    Vendored,
    /// Dated by the pull request that changed it and the CHANGELOG of the release that lists
    /// it; the old form read in an older copy of the file, not at every tag.
    Pr,
    /// Read in copies of the file dated by the API they use (forks of kubernetes/kubernetes),
    /// one on each side of each boundary, not at the tags.
    Copies,
    /// A boundary is not pinned; `upstream` says which and what svclab assumes.
    Unpinned,
}

/// One change of upstream behaviour, in force from `since` to `until` (inclusive).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Change {
    /// What the code asks about.
    pub(crate) id: Rule,
    /// First minor in which upstream behaves this way (24: 1.24 or earlier).
    pub(crate) since: u32,
    /// Last minor in which it does; `None`: still in the newest release.
    pub(crate) until: Option<u32>,
    /// The behaviour, in a few words.
    pub(crate) what: &'static str,
    /// Upstream file, function and pull request.
    pub(crate) upstream: &'static str,
    /// How the boundaries are known.
    pub(crate) pin: Pin,
    /// Fragments of the texts this row governs, to tie a diagnostic to its rows.
    pub(crate) marks: &'static [&'static str],
}

/// Every release-dependent behaviour the validation code asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    // apimachinery texts
    /// A nil bad value prints as the quoted string `"null"`.
    NilValueQuoted,
    /// Composite and named-string bad values render through `json.Marshal`.
    JsonValues,
    /// `IsDNS1123Label` says "must not contain dots" for a valid subdomain.
    LabelNoDots,
    /// `IsValidPortName` words the letter check "at least one letter (a-z)".
    PortNameLetterOnly,
    /// Label keys are "a valid label key" and lengths count "bytes".
    LabelKeyBytes,
    /// `field.TooLong` of annotations reads "may not be more than N bytes".
    TooLongMayNot,
    /// `field.NotSupported` lists the values in the caller's order.
    NotSupportedCallerOrder,
    /// `trafficDistribution`'s supported values, in the literal order upstream lists them.
    TrafficDistributionOrder,
    // Service rules
    /// A LoadBalancer may not expose the kubelet port 10250.
    KubeletPort,
    /// `loadBalancerSourceRanges` checked as one whole-field CIDR list.
    SourceRangesWholeField,
    /// `externalTrafficPolicy` is set (and defaulted) for ClusterIP Services with externalIPs.
    EtpForExternalIps,
    /// Without MixedProtocolLBService, a LoadBalancer may not mix protocols unless the old
    /// object (of any type) already did.
    MixedProtocolGate,
    /// `topology-mode` must match `topology-aware-hints` when both are set.
    TopologyModeMatch,
    /// An update leaves an unchanged source-ranges annotation unchecked.
    SourceRangesAnnotationRatchet,
    // updates
    /// The generic registry copies the stored generation (and an empty uid) onto an update.
    GenerationFromStore,
    /// The generic registry's `validateCommonFields` adds object-meta causes on update.
    CommonFieldsOnUpdate,
    /// Node ports kept on a type change: dropped when the new ones are a subset of the old.
    NodePortsSubset,
    /// `ValidateServiceUpdate` runs `ValidateObjectMeta(new)` through `ValidateService`.
    ServiceUpdateObjectMeta,
    // warnings
    /// `getWarningsForIP`/`getWarningsForCIDR` with the `netip` error and RFC 5952 texts.
    IpWarningsNetip,
    /// KEP-4858 warnings: "non-standard", "should be in RFC 5952", ambiguous CIDRs.
    IpWarningsKep4858,
    /// "spec.externalIPs is ignored when spec.type is ExternalName" and its counterpart.
    ExternalNameIgnored,
    /// EndpointSlice address warnings for slices not managed in-tree.
    EndpointSliceIpWarnings,
    /// "... is ignored for headless services" warnings.
    HeadlessIgnored,
    /// `trafficDistribution: PreferClose` is deprecated.
    PreferCloseDeprecated,
    /// `spec.externalIPs` is deprecated.
    ExternalIpsDeprecated,
    // EndpointSlice
    /// An address that fails its family check is also checked by `ValidateEndpointIP`.
    EndpointSliceFamilyAndSpecial,
    /// At most 20000 ports per EndpointSlice.
    EndpointSlicePorts20000,
}

/// apimachinery: how `field.Error` renders and the name-check texts.
pub(crate) const TEXTS: &[Change] = &[
    Change {
        id: Rule::NilValueQuoted,
        since: 24,
        until: Some(33),
        what: "a nil bad value prints as \"null\" (quoted): ErrorBody turns it into the string \"null\" and then takes the %q branch",
        upstream: "apimachinery pkg/util/validation/field/errors.go ErrorBody (v0.24.0..v0.33.0; rewritten in v0.34.0)",
        pin: Pin::Tag,
        marks: &["\"null\""],
    },
    Change {
        id: Rule::JsonValues,
        since: 34,
        until: None,
        what: "bad values other than string/int/bool render with json.Marshal (slices as [\"a\"], named string types JSON-escaped: & as \\u0026); nil as null",
        upstream: "apimachinery pkg/util/validation/field/errors.go ErrorBody (v0.34.0, kubernetes/kubernetes#132314)",
        pin: Pin::Tag,
        marks: &[": [\"", ": null:", "\\u00"],
    },
    Change {
        id: Rule::LabelNoDots,
        since: 27,
        until: None,
        what: "IsDNS1123Label says \"must not contain dots\" for a valid subdomain",
        upstream: "apimachinery pkg/util/validation/validation.go IsDNS1123Label (v0.27.0)",
        pin: Pin::Tag,
        marks: &["must not contain dots"],
    },
    Change {
        id: Rule::PortNameLetterOnly,
        since: 25,
        until: None,
        what: "IsValidPortName: \"must contain at least one letter (a-z)\" (1.24: \"letter or number (a-z, 0-9)\")",
        upstream: "apimachinery pkg/util/validation/validation.go IsValidPortName (v0.25.0)",
        pin: Pin::Tag,
        marks: &["must contain at least one letter"],
    },
    Change {
        id: Rule::LabelKeyBytes,
        since: 35,
        until: None,
        what: "label keys are \"a valid label key\" and lengths count \"bytes\" (before: \"a qualified name\", \"characters\")",
        upstream: "apimachinery pkg/api/validate/content IsLabelKey/IsLabelValue (v0.35.0)",
        pin: Pin::Tag,
        marks: &["a valid label key", "a qualified name", "bytes", "characters"],
    },
    Change {
        id: Rule::TooLongMayNot,
        since: 32,
        until: None,
        what: "field.TooLong: \"may not be more than N bytes\" (before: \"must have at most N bytes\")",
        upstream: "apimachinery pkg/util/validation/field/errors.go TooLong (v0.32.0)",
        pin: Pin::Tag,
        marks: &["may not be more than", "must have at most"],
    },
    Change {
        id: Rule::NotSupportedCallerOrder,
        since: 24,
        until: None,
        what: "field.NotSupported quotes the supported values in the order the caller passes them (never sorted); callers passing sets.List(...) get them sorted",
        upstream: "apimachinery pkg/util/validation/field/errors.go NotSupported (v0.24.0..v0.36.0)",
        pin: Pin::Tag,
        marks: &["supported values:"],
    },
];

/// `ValidateService` and the Service strategy.
pub(crate) const SERVICE: &[Change] = &[
    Change {
        id: Rule::KubeletPort,
        since: 24,
        until: Some(32),
        what: "a LoadBalancer may not expose port 10250",
        upstream: "pkg/apis/core/validation/validation.go ValidateService (present in v1.24.0 to v1.31.0 as vendored by ceph/ceph-csi and in v1.32.10 as vendored by kubeedge/kubeedge; absent in v1.33.3 as vendored by openshift/openshift-apiserver); removed by kubernetes/kubernetes#129174, listed in CHANGELOG-1.33 (\"Remove the limitation on exposing port 10250 externally in service\")",
        pin: Pin::Vendored,
        marks: &["since it is used by kubelet"],
    },
    Change {
        id: Rule::SourceRangesWholeField,
        since: 24,
        until: Some(29),
        what: "spec.LoadBalancerSourceRanges (or the annotation) checked whole: one Invalid with the list as fmt %v and \"must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 \"",
        upstream: "pkg/apis/core/validation/validation.go ValidateService via pkg/api/service/util.go GetLoadBalancerSourceRanges in v1.24.0 to v1.29.0; per-entry apimachinery IsValidCIDR (space-trimmed) in v1.30.0, v1.31.0 (read as vendored by ceph/ceph-csi) and v1.32.10 (kubeedge/kubeedge)",
        pin: Pin::Vendored,
        marks: &["must be a list of IP ranges"],
    },
    Change {
        id: Rule::EtpForExternalIps,
        since: 29,
        until: None,
        what: "externalTrafficPolicy is defaulted, required and allowed for ClusterIP Services with externalIPs (\"may only be set for externally-accessible services\"); before, only NodePort and LoadBalancer (\"may only be set when `type` is 'NodePort' or 'LoadBalancer'\")",
        upstream: "pkg/apis/core/validation/validation.go validateServiceExternalTrafficPolicy and pkg/apis/core/v1/defaults.go SetDefaults_Service: needsExternalTrafficPolicy in v1.28.0, apiservice.ExternallyAccessible in v1.29.0 (read as vendored by ceph/ceph-csi); kubernetes/kubernetes#119150, CHANGELOG-1.29 (\"Allow specifying ExternalTrafficPolicy for Services with ExternalIPs\"); pkg/registry/core/service/strategy.go dropTypeDependentFields read in a fork's copy of 1.29 or later",
        pin: Pin::Vendored,
        marks: &["externally-accessible services", "'NodePort' or 'LoadBalancer'"],
    },
    Change {
        id: Rule::MixedProtocolGate,
        since: 24,
        until: Some(25),
        what: "MixedProtocolLBService off: a LoadBalancer may not mix protocols unless the old object, of any type, already did (gate GA and locked from 1.26, removed in 1.28)",
        upstream: "pkg/apis/core/validation/conditional_validation.go validateMixedProtocolLBService (ValidateConditionalService, after ValidateService) in v1.24.0 and v1.25.0; the file is gone in v1.26.1 (read as vendored by ceph/ceph-csi)",
        pin: Pin::Vendored,
        marks: &["may not contain more than 1 protocol"],
    },
    Change {
        id: Rule::TrafficDistributionOrder,
        since: 30,
        until: None,
        what: "spec.trafficDistribution's supported values in the literal order of upstream's slice (NotSupported does not sort): \"PreferClose\" alone, and \"PreferClose\", \"PreferSameZone\", \"PreferSameNode\" with PreferSameTrafficDistribution (alpha 1.33, beta 1.34, GA 1.35)",
        upstream: "pkg/apis/core/validation/validation.go validateServiceTrafficDistribution: []string{PreferClose} in v1.30.0, v1.31.0 (absent in v1.29.0; read as vendored by ceph/ceph-csi) and v1.32.10 (kubeedge/kubeedge); the gate-dependent slice, three values in that order with the gate, in v1.33.3 and v1.34.1 (openshift/openshift-apiserver's vendor); 1.35 on not read at a release",
        pin: Pin::Vendored,
        marks: &["supported values: \"PreferClose\""],
    },
    Change {
        id: Rule::TopologyModeMatch,
        since: 27,
        until: None,
        what: "the topology-mode annotation must match topology-aware-hints when both are set (the annotation and its check came with KEP-2433's rename in 1.27)",
        upstream: "pkg/apis/core/validation/validation.go ValidateService (and the deprecation warning in pkg/api/service/warnings.go GetWarningsForService): absent in v1.26.1, present in v1.27.2 (read as vendored by ceph/ceph-csi)",
        pin: Pin::Vendored,
        marks: &["when both are specified", "please use service.kubernetes.io/topology-mode"],
    },
    Change {
        id: Rule::SourceRangesAnnotationRatchet,
        since: 33,
        until: None,
        what: "on update, the load-balancer-source-ranges annotation is checked only when its value changed (KEP-4858's ratcheting; its entries go through IsValidCIDRForLegacyField, strict with StrictIPCIDRValidation)",
        upstream: "pkg/apis/core/validation/validation.go ValidateService: always checked in v1.32.10 (kubeedge/kubeedge's vendor), `oldService == nil || oldService.Annotations[...] != val` in v1.33.3 and v1.34.1 (openshift/openshift-apiserver's vendor)",
        pin: Pin::Vendored,
        marks: &[],
    },
];

/// The generic registry and the Service strategy on update.
pub(crate) const UPDATES: &[Change] = &[
    Change {
        id: Rule::GenerationFromStore,
        since: 24,
        until: None,
        what: "BeforeUpdate sets metadata.generation to the stored one (and an empty uid to the stored uid) before validation, so \"must not be decremented\" never reaches a client",
        upstream: "apiserver pkg/registry/rest/update.go BeforeUpdate (v0.24.0..v0.36.0)",
        pin: Pin::Tag,
        marks: &["must not be decremented"],
    },
    Change {
        id: Rule::CommonFieldsOnUpdate,
        since: 24,
        until: None,
        what: "validateCommonFields: ValidateObjectMetaAccessor(new) and ValidateObjectMetaAccessorUpdate(new, old) causes come before the strategy's ValidateUpdate (so a metadata error is listed again)",
        upstream: "apiserver pkg/registry/rest/update.go BeforeUpdate/validateCommonFields; apimachinery pkg/api/validation/objectmeta.go (v0.24.0..v0.36.0)",
        pin: Pin::Tag,
        marks: &[],
    },
    Change {
        id: Rule::NodePortsSubset,
        since: 24,
        until: None,
        what: "on a change to a type without node ports, the node ports are dropped when every new one is among the old ones (sameNodePorts is a subset check, not positional)",
        upstream: "pkg/registry/core/service/strategy.go dropTypeDependentFields/sameNodePorts (oldPorts.IsSuperset(newPorts)): the same in forks' copies from 1.26 or earlier (they use ServiceExternalTrafficPolicyTypeLocal, renamed in v1.27) and from 1.29 or later (ExternallyAccessible in dropTypeDependentFields); no copy of 1.33 or later read",
        pin: Pin::Copies,
        marks: &[],
    },
    Change {
        id: Rule::ServiceUpdateObjectMeta,
        since: 24,
        until: Some(33),
        what: "ValidateServiceUpdate ends with ValidateService(new), which opens with ValidateObjectMeta(new, ValidateServiceName): on update a metadata error is listed once more than from 1.34, where validateService leaves ObjectMeta to ValidateServiceCreate and ValidateObjectMetaUpdate (a bad label on update: 4 causes to 1.33, 3 from 1.34)",
        upstream: "pkg/apis/core/validation/validation.go ValidateService/ValidateServiceUpdate: ValidateObjectMeta inside ValidateService in v1.24.0 to v1.31.0 (ceph/ceph-csi's vendor), v1.32.10 (kubeedge/kubeedge's) and v1.33.3 (openshift/openshift-apiserver's); validateService without it, ValidateServiceCreate with RelaxedServiceNameValidation (KEP-5311), in v1.34.1 (openshift/openshift-apiserver's) and in a fork's copy of 1.35 or later",
        pin: Pin::Vendored,
        marks: &[],
    },
];

/// `GetWarningsForService` and the EndpointSlice strategy's warnings.
pub(crate) const WARNINGS: &[Change] = &[
    Change {
        id: Rule::IpWarningsNetip,
        since: 27,
        until: Some(32),
        what: "IP/CIDR warnings from netip: \"IP address was accepted, but will be invalid in a future Kubernetes release: <netip error>\" (any loadBalancerIP that is not an IP too), \"IPv6 address ... is not in RFC 5952 canonical format (...), which may cause controller apply-loops\"; no ambiguous-CIDR warning",
        upstream: "pkg/api/service/warnings.go getWarningsForIP/getWarningsForCIDR: pkg/api/service has no warnings.go in v1.26.1, the same file in v1.27.2 to v1.31.0 (read as vendored by ceph/ceph-csi) and v1.32.10 (kubeedge/kubeedge); v1.33.3 (openshift/openshift-apiserver's vendor) calls apimachinery GetWarningsForIP/GetWarningsForCIDR (KEP-4858, v0.33.0). The netip error texts are those of the Go release svclab ports, not of the Go each apiserver was built with",
        pin: Pin::Vendored,
        marks: &["was accepted, but will be invalid", "which may cause controller apply-loops"],
    },
    Change {
        id: Rule::IpWarningsKep4858,
        since: 33,
        until: None,
        what: "KEP-4858 warnings: \"non-standard IP address ... will be considered invalid\", \"should be in RFC 5952 canonical format\", \"CIDR value ... is ambiguous in this context\"",
        upstream: "pkg/api/service/warnings.go, apimachinery pkg/api/validation/ip.go GetWarningsForIP/GetWarningsForCIDR (v0.33.0)",
        pin: Pin::Tag,
        marks: &["non-standard", "should be in RFC 5952", "is ambiguous in this context"],
    },
    Change {
        id: Rule::ExternalNameIgnored,
        since: 28,
        until: None,
        what: "\"spec.externalIPs is ignored when spec.type is \\\"ExternalName\\\"\" and \"spec.externalName is ignored when spec.type is not \\\"ExternalName\\\"\"",
        upstream: "pkg/api/service/warnings.go GetWarningsForService: absent in v1.27.2, present in v1.28.0 to v1.31.0 (read as vendored by ceph/ceph-csi) and v1.32.10 (kubeedge/kubeedge)",
        pin: Pin::Vendored,
        marks: &["is ignored when spec.type is"],
    },
    Change {
        id: Rule::EndpointSliceIpWarnings,
        since: 33,
        until: None,
        what: "EndpointSlice address warnings (KEP-4858) for slices not managed by the in-tree controllers",
        upstream: "pkg/registry/discovery/endpointslice/strategy.go WarningsOnCreate/WarningsOnUpdate warnOnBadIPs (KEP-4858): a fork's copy with discovery/v1beta1 still served (1.25 or earlier) warns about FQDN only and returns nil on update; a copy of 1.33 or later calls apimachinery GetWarningsForIP, which first appears in v0.33.0",
        pin: Pin::Copies,
        marks: &["endpoints["],
    },
];

/// The warnings that came after KEP-4858 (appended to [`WARNINGS`] through [`TABLES`]).
pub(crate) const LATER_WARNINGS: &[Change] = &[
    Change {
        id: Rule::HeadlessIgnored,
        since: 34,
        until: None,
        what: "\"spec.loadBalancerIP/externalIPs/SessionAffinity is ignored for headless services\" (1.34.0 and 1.34.1 warned about sessionAffinity on every headless Service, fixed in 1.34.2)",
        upstream: "pkg/api/service/warnings.go GetWarningsForService: absent in v1.33.3, present in v1.34.1 with `SessionAffinity != \"\"` (openshift/openshift-apiserver's vendor); kubernetes/kubernetes#132214; the fix of #134040, #134054 (CHANGELOG-1.35), cherry-picked as #134133, is listed in CHANGELOG-1.34 under v1.34.2",
        pin: Pin::Vendored,
        marks: &["is ignored for headless services"],
    },
    Change {
        id: Rule::PreferCloseDeprecated,
        since: 35,
        until: None,
        what: "trafficDistribution PreferClose is deprecated in favour of PreferSameZone",
        upstream: "pkg/api/service/warnings.go GetWarningsForService: absent in v1.34.1 (openshift/openshift-apiserver's vendor); kubernetes/kubernetes#134457, CHANGELOG-1.35 (PreferSameZone and PreferSameNode GA, PreferClose deprecated)",
        pin: Pin::Pr,
        marks: &["is deprecated; use \"PreferSameZone\""],
    },
    Change {
        id: Rule::ExternalIpsDeprecated,
        since: 36,
        until: None,
        what: "\"spec.externalIPs is deprecated and may no longer be implemented in some clusters\" for a Service with externalIPs that is neither headless nor ExternalName",
        upstream: "pkg/api/service/warnings.go GetWarningsForService (KEP-5707): absent in v1.34.1 (openshift/openshift-apiserver's vendor); kubernetes/kubernetes#137293, CHANGELOG-1.36 under v1.36.0 Deprecation (\"Added warnings and deprecation for Service .spec.externalIPs\"); text and condition read in the newest stored copy",
        pin: Pin::Pr,
        marks: &["spec.externalIPs is deprecated"],
    },
];

/// `ValidateEndpointSlice`.
pub(crate) const ENDPOINT_SLICE: &[Change] = &[
    Change {
        id: Rule::EndpointSliceFamilyAndSpecial,
        since: 24,
        until: Some(32),
        what: "an address is checked for its family (\"must be a valid IPv4 address\") and then by ValidateEndpointIP, so a bad address gets both errors",
        upstream: "pkg/apis/discovery/validation/validation.go validateEndpoints: the family check, then the core special-IP check on every IPv4/IPv6 address, in a fork's copy that serves discovery v1 with deprecatedTopology (1.21 or later; the check's texts are ValidateNonSpecialIP's in v1.24.0 to v1.32.10 and ValidateEndpointIP's in v1.33.3, the same). Unpinned: the 1.33 form (the family error alone) was read in no copy; it is dated by KEP-4858 (kubernetes/kubernetes#122550 and #128786, CHANGELOG-1.33's StrictIPCIDRValidation line). Searched again for a 1.33+ copy: kubernetes/kubernetes' stored copy and the twelve forks holding the path predate 1.33 (no forNodes hints); the one copy that calls ValidateEndpointIP(address, path) after the family check also has no forNodes hints and serves 1.21 to 1.23, before the function was renamed ValidateNonSpecialIP (v1.24.0)",
        pin: Pin::Unpinned,
        marks: &[
            "must be a valid IPv4 address",
            "must be a valid IPv6 address",
            "must be a valid IP address",
        ],
    },
    Change {
        id: Rule::EndpointSlicePorts20000,
        since: 24,
        until: None,
        what: "at most 20000 ports (raised from 100 in 1.21, before the oldest release svclab models)",
        upstream: "pkg/apis/discovery/validation/validation.go maxPorts = 20000 in a fork's copy that serves discovery v1 with deprecatedTopology and forZones-only hints (1.21 to 1.32); not read in a copy of 1.33 or later",
        pin: Pin::Copies,
        marks: &["must have at most 20000 items"],
    },
];

/// Every table, in the order the report cites them.
pub(crate) const TABLES: &[(&str, &[Change])] = &[
    ("apimachinery texts", TEXTS),
    ("Service rules", SERVICE),
    ("updates", UPDATES),
    ("warnings", WARNINGS),
    ("later warnings", LATER_WARNINGS),
    ("EndpointSlice", ENDPOINT_SLICE),
];

/// The row of a rule.
fn row(id: Rule) -> Option<&'static Change> {
    TABLES.iter().flat_map(|(_, rows)| rows.iter()).find(|c| c.id == id)
}

/// Whether upstream behaves as `id` says in minor release `minor`.
pub(crate) fn in_force(id: Rule, minor: u32) -> bool {
    row(id).is_some_and(|c| minor >= c.since && c.until.is_none_or(|u| minor <= u))
}

/// The rows whose texts appear in a message, with their table (for `--explain-release`).
pub(crate) fn governing(message: &str) -> Vec<(&'static str, &'static Change)> {
    TABLES
        .iter()
        .flat_map(|(table, rows)| rows.iter().map(move |c| (*table, c)))
        .filter(|(_, c)| c.marks.iter().any(|m| message.contains(m)))
        .collect()
}

impl Change {
    /// `1.24–1.29`, `1.30+`.
    pub(crate) fn releases(&self) -> String {
        match self.until {
            Some(u) if u == self.since => format!("1.{u}"),
            Some(u) => format!("1.{}–1.{u}", self.since),
            None => format!("1.{}+", self.since),
        }
    }
}

#[cfg(test)]
mod tests;
