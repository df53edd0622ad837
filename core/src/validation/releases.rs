//! When each kube-apiserver rule, text, warning and default that svclab models appeared, changed
//! and left: one table per area, read by the validation code (through [`in_force`]) and by
//! `svclab check --explain-release` (through [`governing`]).
//!
//! Releases are minors (`24` is Kubernetes 1.24); apimachinery and apiserver `v0.N.0` ship with
//! Kubernetes 1.N. Each row says how its boundaries are known: read at the release tags of
//! kubernetes/apimachinery or kubernetes/apiserver (`Pin::Tag`), read in kubernetes/kubernetes
//! at released versions on both sides of each boundary, as another repository vendored them
//! (`Pin::Vendored`), dated by a kubernetes/kubernetes pull request and the CHANGELOG of the
//! release that lists it (`Pin::Pr`), read in the `k8s.io/kubernetes` Go module of every release the apiserver
//! oracle builds (`oracle/apiserver`: the newest patch of each minor, v1.24.17 to v1.37.2) and
//! replayed through it (`Pin::Module`), or not pinned (`Pin::Unpinned`, with what is missing in
//! `upstream`).
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
    /// Read in the `k8s.io/kubernetes` module (and its staging modules `k8s.io/apimachinery`,
    /// `k8s.io/apiserver`, `k8s.io/api`) at the newest patch of every release svclab models,
    /// from the Go module cache the apiserver oracle builds against (`oracle/apiserver`), and
    /// checked by replaying scenarios through that release's own REST storage.
    Module,
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
    /// Fragments of the texts this row governs, to tie a diagnostic to its rows; a `*` in one
    /// stands for an index (a run of digits).
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
    /// The generic registry keeps one of each identical cause (create and update).
    IdenticalCausesOnce,
    /// Node ports kept on a type change: dropped when the new ones are a subset of the old.
    NodePortsSubset,
    /// `ValidateServiceUpdate` runs `ValidateObjectMeta(new)` through `ValidateService`.
    ServiceUpdateObjectMeta,
    /// A set `metadata.clusterName` is cleared with a warning.
    ClusterNameDropped,
    /// `patchAllocatedValues` keeps old node ports only while the new Service allocates them.
    PatchNodePortsOnlyWhenAllocated,
    // warnings
    /// `getWarningsForIP`/`getWarningsForCIDR` with the `netip` error and RFC 5952 texts.
    IpWarningsNetip,
    /// KEP-4858 warnings: "non-standard", "should be in RFC 5952", ambiguous CIDRs.
    IpWarningsKep4858,
    /// A non-standard IP or CIDR "is invalid" (no longer "will be considered invalid ...").
    NonStandardIsInvalid,
    /// "spec.externalIPs is ignored when spec.type is ExternalName" and its counterpart.
    ExternalNameIgnored,
    /// EndpointSlice address warnings for slices not managed in-tree.
    EndpointSliceIpWarnings,
    /// "spec.addressType: FQDN endpoints are deprecated" on creating an FQDN slice.
    EndpointSliceFqdnDeprecated,
    /// "... is ignored for headless services" warnings.
    HeadlessIgnored,
    /// `trafficDistribution: PreferClose` is deprecated.
    PreferCloseDeprecated,
    /// `spec.externalIPs` is deprecated.
    ExternalIpsDeprecated,
    // allocation
    /// A failed dynamic ClusterIP pick other than "range is full" is a 422 on `spec.clusterIPs`.
    ServiceIpNonFullInvalid,
    /// The 500 of a failed dynamic ClusterIP pick names the Service.
    ServiceIpFullNamesService,
    // ServiceCIDR
    /// ServiceCIDR specs are checked by `IsValidCIDR` and may grow from one CIDR to two.
    ServiceCidrStrictSpec,
    // EndpointSlice
    /// An address that fails its family check is also checked by `ValidateEndpointIP`.
    EndpointSliceFamilyAndSpecial,
    /// KEP-4858's address checks: the IP parser's errors alone, else the family at the list's
    /// path ("must be an IPv4 address") and `ValidateEndpointIP`.
    EndpointSliceKep4858Addresses,
    /// `ports` are checked before `endpoints`.
    EndpointSlicePortsFirst,
    /// An update whose endpoints did not change drops their errors.
    EndpointSliceUnchangedEndpoints,
    /// The `+k8s:beta` declarative rules replace the handwritten errors they cover.
    EndpointSliceDeclarativeBeta,
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

/// The generic registry, the Service strategy and the Service REST storage on update.
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
        id: Rule::IdenticalCausesOnce,
        since: 37,
        until: None,
        what: "a create or update of a Service, EndpointSlice or ServiceCIDR lists each identical cause once, the first kept (an update turning a Service into a LoadBalancer with a bad loadBalancerClass: one cause, two to 1.36; a metadata error validateCommonFields and the strategy both give: once): their strategies embed rest.DeclarativeValidation, whose ValidateDeclarativelyWithMigrationChecks filters the handwritten errors through ErrorList.Filter, and Filter goes through ToAggregate, which drops a message it has seen",
        upstream: "pkg/registry/core/service/strategy.go, pkg/registry/discovery/endpointslice/strategy.go, pkg/registry/networking/servicecidr/strategy.go (rest.DeclarativeValidation: Service and ServiceCIDR from k8s.io/kubernetes@v1.37.2, none in @v1.36.5; the EndpointSlice's in @v1.36.5 filters only with declarative enforcement); apiserver pkg/registry/rest/validate.go ValidateDeclarativelyWithMigrationChecks (v0.37.2: FilterCoveredHandwrittenErrors always), apimachinery pkg/util/validation/field/errors.go ErrorList.Filter/ToAggregate",
        pin: Pin::Module,
        marks: &[],
    },
    Change {
        id: Rule::NodePortsSubset,
        since: 24,
        until: None,
        what: "on a change to a type without node ports, the node ports are dropped when every new one is among the old ones (sameNodePorts is a subset check, not positional)",
        upstream: "pkg/registry/core/service/strategy.go dropTypeDependentFields/sameNodePorts (oldPorts.IsSuperset(newPorts)) in k8s.io/kubernetes@v1.24.17, @v1.33.13 and @v1.37.2 (and in forks' copies of 1.26 and 1.29)",
        pin: Pin::Module,
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
    Change {
        id: Rule::PatchNodePortsOnlyWhenAllocated,
        since: 30,
        until: None,
        what: "an update keeps the old node ports of ports that name none only while the new Service still needs node ports, and a LoadBalancer with allocateLoadBalancerNodePorts: false does not (to 1.29 every NodePort and LoadBalancer kept them, so turning allocation off kept the ports)",
        upstream: "pkg/registry/core/service/storage/storage.go needsNodePort (read by patchAllocatedValues): type NodePort or LoadBalancer in k8s.io/kubernetes@v1.24.17 to @v1.29.15, with `AllocateLoadBalancerNodePorts == nil || *AllocateLoadBalancerNodePorts` for LoadBalancers in @v1.30.14 to @v1.37.2",
        pin: Pin::Module,
        marks: &[],
    },
    Change {
        id: Rule::ClusterNameDropped,
        since: 24,
        until: Some(24),
        what: "a create or update with metadata.clusterName set warns \"metadata.clusterName was specified. This field is not preserved and will be removed from the schema in 1.25\" and stores the object without it; from 1.25 ObjectMeta has no such field (an unknown field)",
        upstream: "apiserver pkg/registry/rest/create.go BeforeCreate and update.go BeforeUpdate (ZZZ_DeprecatedClusterName) in v0.24.17; apimachinery pkg/apis/meta/v1/types.go has the field in v0.24.17 and only a comment from v0.25.16 (the generic registry of k8s.io/kubernetes@v1.24.17 and @v1.25.16)",
        pin: Pin::Module,
        marks: &["metadata.clusterName was specified"],
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
        what: "KEP-4858 warnings: \"non-standard IP address ... will be considered invalid in a future Kubernetes release\" (\"is invalid\" from 1.36, NonStandardIsInvalid), \"should be in RFC 5952 canonical format\", \"CIDR value ... is ambiguous in this context\"",
        upstream: "pkg/api/service/warnings.go, apimachinery pkg/api/validation/ip.go GetWarningsForIP/GetWarningsForCIDR (v0.33.0)",
        pin: Pin::Tag,
        marks: &["non-standard", "should be in RFC 5952", "is ambiguous in this context"],
    },
    Change {
        id: Rule::NonStandardIsInvalid,
        since: 36,
        until: None,
        what: "GetWarningsForIP/GetWarningsForCIDR say a non-standard value \"is invalid: use ...\" (1.33 to 1.35: \"will be considered invalid in a future Kubernetes release: use ...\")",
        upstream: "apimachinery pkg/util/validation/ip.go GetWarningsForIP/GetWarningsForCIDR: the future-release text in v0.33.13 to v0.35.8, \"is invalid\" in v0.36.5 and v0.37.2 (called by pkg/api/service/warnings.go and the EndpointSlice strategy's warnOnBadIPs in k8s.io/kubernetes@v1.36.5 and @v1.37.2)",
        pin: Pin::Module,
        // Both texts: a rollback across 1.36 brings the older one back.
        marks: &["is invalid: use", "will be considered invalid in a future Kubernetes release"],
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
        upstream: "pkg/registry/discovery/endpointslice/strategy.go WarningsOnCreate/WarningsOnUpdate warnOnBadIPs (apimachinery GetWarningsForIP): absent in k8s.io/kubernetes@v1.27.16 to @v1.32.13, present in @v1.33.13 to @v1.37.2",
        pin: Pin::Module,
        // The warnings' own form: an error about an endpoint is not this row's.
        marks: &[
            "endpoints[*].addresses[*]: non-standard IP address",
            "endpoints[*].addresses[*]: IPv6 address",
        ],
    },
    Change {
        id: Rule::EndpointSliceFqdnDeprecated,
        since: 27,
        until: None,
        what: "creating an FQDN EndpointSlice warns \"spec.addressType: FQDN endpoints are deprecated\" (with a spec. prefix the kind does not have); before 1.27 WarningsOnCreate returns nil",
        upstream: "pkg/registry/discovery/endpointslice/strategy.go WarningsOnCreate: returns nil in k8s.io/kubernetes@v1.24.17 to @v1.26.15, warnOnDeprecatedAddressType from @v1.27.16 to @v1.37.2",
        pin: Pin::Module,
        marks: &["FQDN endpoints are deprecated"],
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

/// The Service REST storage's allocation (`pkg/registry/core/service/storage/alloc.go`).
pub(crate) const ALLOCATION: &[Change] = &[
    Change {
        id: Rule::ServiceIpNonFullInvalid,
        since: 35,
        until: None,
        what: "a dynamic ClusterIP pick that fails with anything but \"range is full\" is a 422 Invalid on spec.clusterIPs (\"failed to allocate IP: <error>\"), and the IPAddress allocator returns a refused IPAddress create instead of trying the next address; before, every failed pick is a 500 InternalError, and a refused create ends the scan with \"range is full\"",
        upstream: "pkg/registry/core/service/storage/alloc.go allocIPs: `!errors.Is(err, ipallocator.ErrFull)` branch absent in k8s.io/kubernetes@v1.34.12, present in @v1.35.8 to @v1.37.2; ipallocator.go allocateFromRange: `continue` on any create error to @v1.34.12, only on ErrAllocated from @v1.35.8 (issues.k8s.io/135333)",
        pin: Pin::Module,
        marks: &["failed to allocate IP: "],
    },
    Change {
        id: Rule::ServiceIpFullNamesService,
        since: 36,
        until: None,
        what: "the 500 of a failed dynamic ClusterIP pick names the Service (\"failed to allocate a serviceIP for Service %q: range is full\"; before: \"failed to allocate a serviceIP: range is full\")",
        upstream: "pkg/registry/core/service/storage/alloc.go allocIPs: fmt.Errorf(\"failed to allocate a serviceIP: %w\") in k8s.io/kubernetes@v1.24.17 (%v) to @v1.35.8, \"failed to allocate a serviceIP for Service %q: %w\" in @v1.36.5 and @v1.37.2",
        pin: Pin::Module,
        marks: &["failed to allocate a serviceIP"],
    },
];

/// `ValidateServiceCIDR` and `ValidateServiceCIDRUpdate`.
pub(crate) const SERVICE_CIDR: &[Change] = &[Change {
    id: Rule::ServiceCidrStrictSpec,
    since: 33,
    until: None,
    what: "ValidateServiceCIDR checks each CIDR with apimachinery IsValidCIDR (\"must not have bits set beyond the prefix length\"), the pair's families after them, and an update may add a second CIDR (the first unchanged); 1.29 to 1.32: a pair of one family ends the checks, each CIDR goes through Go netip.ParsePrefix (\"wrong CIDR format, IP doesn't match network IP address\", \"CIDR not in RFC 5952 canonical format\"), and spec.cidrs is immutable whole",
    upstream: "pkg/apis/networking/validation/validation.go ValidateServiceCIDR/validateCIDR/ValidateServiceCIDRUpdate in k8s.io/kubernetes@v1.29.15 to @v1.32.13 (the same in all four); validateServiceCIDRSpec and the 1-to-2 update (issues.k8s.io/131261) in @v1.33.13 to @v1.37.2",
    pin: Pin::Module,
    marks: &[
        "may only hold up to 2 values",
        "wrong CIDR format",
        "CIDR not in RFC 5952 canonical format",
    ],
}];

/// `ValidateEndpointSlice`.
pub(crate) const ENDPOINT_SLICE: &[Change] = &[
    Change {
        id: Rule::EndpointSliceFamilyAndSpecial,
        since: 24,
        until: Some(32),
        what: "an address is checked for its family (\"must be a valid IPv4 address\", at the address's path) and then by ValidateNonSpecialIP, so a bad address gets both errors",
        upstream: "pkg/apis/discovery/validation/validation.go validateEndpoints: IsValidIPv4Address/IsValidIPv6Address, then ValidateNonSpecialIP, in k8s.io/kubernetes@v1.24.17 to @v1.32.13 (the file is the same in all nine); replaced in @v1.33.13 by KEP-4858's form (kubernetes/kubernetes#128786)",
        pin: Pin::Module,
        marks: &[
            "must be a valid IPv4 address",
            "must be a valid IPv6 address",
            "must be a valid IP address",
        ],
    },
    Change {
        id: Rule::EndpointSliceKep4858Addresses,
        since: 33,
        until: None,
        what: "an IPv4 slice's address goes through IsValidIPForLegacyField (strict with StrictIPCIDRValidation), an IPv6 slice's through IsValidIP (always strict: leading 0s, IPv4-mapped, canonical form); only an address without such errors is checked for its family, at the list's path (\"endpoints[0].addresses: ... must be an IPv4 address\"), and by ValidateEndpointIP",
        upstream: "pkg/apis/discovery/validation/validation.go validateEndpoints in k8s.io/kubernetes@v1.33.13 to @v1.37.2; apimachinery pkg/util/validation/ip.go IsValidIP/IsValidIPForLegacyField (v0.33.13 to v0.37.2)",
        pin: Pin::Module,
        marks: &[
            "must be an IPv4 address",
            "must be an IPv6 address",
            "must be in canonical form",
            "must not be an IPv4-mapped IPv6 address",
        ],
    },
    Change {
        id: Rule::EndpointSlicePortsFirst,
        since: 33,
        until: None,
        what: "ValidateEndpointSlice checks ports before endpoints (to 1.32: endpoints, then ports)",
        upstream: "pkg/apis/discovery/validation/validation.go ValidateEndpointSlice: validateEndpoints before validatePorts in k8s.io/kubernetes@v1.24.17 to @v1.32.13, after it from @v1.33.13 (where the endpoints' errors became droppable on update) to @v1.37.2",
        pin: Pin::Module,
        marks: &[],
    },
    Change {
        id: Rule::EndpointSliceUnchangedEndpoints,
        since: 33,
        until: None,
        what: "an update whose endpoints are semantically equal to the stored ones drops all their errors (older releases accepted them)",
        upstream: "pkg/apis/discovery/validation/validation.go ValidateEndpointSlice(new, old): apiequality.Semantic.DeepEqual(old.Endpoints, new.Endpoints) in k8s.io/kubernetes@v1.33.13 to @v1.37.2; absent (ValidateEndpointSlice(new) only) in @v1.32.13",
        pin: Pin::Module,
        marks: &[],
    },
    Change {
        id: Rule::EndpointSliceDeclarativeBeta,
        since: 37,
        until: None,
        what: "with DeclarativeValidationBeta on (beta from 1.36), the EndpointSlice's +k8s:beta declarative rules are enforced: the handwritten addressType required/unsupported/immutable and addresses required/too-many errors they cover are removed and the declarative ones appended after every other cause (\"endpoints[0].addresses: Required value\" without its detail, \"addressType: Invalid value: null: field is immutable\"); in 1.36 the same rules are +k8s:alpha and only shadow",
        upstream: "staging/src/k8s.io/api/discovery/v1/types.go +k8s:alpha(since: \"1.36\") in k8s.io/api@v0.36.5, +k8s:beta(since: \"1.37\") in @v0.37.2; pkg/apis/discovery/v1/zz_generated.validations.go Validate_EndpointSlice and pkg/apis/discovery/validation/validation.go MarkCoveredByDeclarative in k8s.io/kubernetes@v1.36.5 and @v1.37.2; apiserver pkg/registry/rest/validate.go ValidateDeclarativelyWithMigrationChecks, apimachinery pkg/api/validate/errors.go FilterCoveredHandwrittenErrors (v0.37.2)",
        pin: Pin::Module,
        // Both the declarative "Required value" and the handwritten one it replaces hold this
        // text, and only this row changes it (it is crossed at 1.36 to 1.37 alone).
        marks: &[
            "Invalid value: null: field is immutable",
            "endpoints[*].addresses: Required value",
        ],
    },
    Change {
        id: Rule::EndpointSlicePorts20000,
        since: 24,
        until: None,
        what: "at most 20000 ports (raised from 100 in 1.21, before the oldest release svclab models)",
        upstream: "pkg/apis/discovery/validation/validation.go maxPorts = 20000 in k8s.io/kubernetes@v1.24.17, @v1.33.13 and @v1.37.2",
        pin: Pin::Module,
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
    ("allocation", ALLOCATION),
    ("ServiceCIDR", SERVICE_CIDR),
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
        .filter(|(_, c)| c.marks.iter().any(|m| marked(message, m)))
        .collect()
}

/// Whether `message` holds `mark`, each `*` of the mark matching a run of digits.
fn marked(message: &str, mark: &str) -> bool {
    let Some((first, rest)) = mark.split_once('*') else { return message.contains(mark) };
    message.match_indices(first).any(|(at, _)| {
        let mut tail = &message[at + first.len()..];
        for segment in rest.split('*') {
            let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            match tail[digits..].strip_prefix(segment) {
                Some(after) if digits > 0 => tail = after,
                _ => return false,
            }
        }
        true
    })
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
