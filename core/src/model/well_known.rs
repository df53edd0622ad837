//! The well-known label and annotation keys svclab reads, each spelled once: Kubernetes' own
//! under upstream's names (`k8s.io/api/core/v1` `well_known_labels.go` and
//! `annotation_key_constants.go`, `k8s.io/api/discovery/v1` `well_known_labels.go`), then
//! svclab's.

/// `v1.AnnotationLoadBalancerSourceRangesKey`: the source ranges of a LoadBalancer Service when
/// `spec.loadBalancerSourceRanges` is empty.
pub(crate) const ANNOTATION_LOAD_BALANCER_SOURCE_RANGES_KEY: &str =
    "service.beta.kubernetes.io/load-balancer-source-ranges";

/// `v1.DeprecatedAnnotationTopologyAwareHints`: topology-aware hints before KEP-2433's rename
/// (1.27); still read by kube-proxy and the EndpointSlice controller.
pub(crate) const DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS: &str =
    "service.kubernetes.io/topology-aware-hints";

/// `v1.AnnotationTopologyMode`: topology-aware routing from 1.27.
pub(crate) const ANNOTATION_TOPOLOGY_MODE: &str = "service.kubernetes.io/topology-mode";

/// The endpoints controller's `TolerateUnreadyEndpointsAnnotation`, removed in 1.24 in favour of
/// `spec.publishNotReadyAddresses` (no constant is left upstream).
pub(crate) const TOLERATE_UNREADY_ENDPOINTS_ANNOTATION: &str =
    "service.alpha.kubernetes.io/tolerate-unready-endpoints";

/// `v1.LabelServiceProxyName`: a Service another proxy handles, which kube-proxy skips.
pub(crate) const LABEL_SERVICE_PROXY_NAME: &str = "service.kubernetes.io/service-proxy-name";

/// `v1.IsHeadlessService`: the label the EndpointSlice controller puts on a headless Service's
/// slices, which kube-proxy skips.
pub(crate) const IS_HEADLESS_SERVICE: &str = "service.kubernetes.io/headless";

/// `v1.LabelTopologyZone`: the Node's zone, which topology hints are matched against.
pub(crate) const LABEL_TOPOLOGY_ZONE: &str = "topology.kubernetes.io/zone";

/// `discoveryv1.LabelServiceName`: the Service an EndpointSlice belongs to.
pub(crate) const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";

/// `discoveryv1.LabelManagedBy`: the controller that manages an EndpointSlice.
pub(crate) const LABEL_MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";

/// svclab's: a Service document annotated `svclab.dev/operation: delete` deletes that Service at
/// that point of the stream.
pub const OPERATION_ANNOTATION: &str = "svclab.dev/operation";

/// svclab's audit annotation listing the policy rules a judgement skipped (and why). A key
/// without a prefix: kube-apiserver puts the webhook's name before every key of a webhook's
/// `auditAnnotations` and drops a key that then has two `/`
/// (`k8s.io/apiserver/pkg/admission/plugin/webhook/validating/dispatcher.go` and
/// `checkKeyFormat` in `k8s.io/apiserver/pkg/admission/attributes.go`, v1.24.17 to v1.37.2):
/// `skipped` is logged as `services.svclab.dev/skipped`.
pub(crate) const SKIPPED_AUDIT_ANNOTATION: &str = "skipped";
