//! kube-apiserver's registry steps for Services and EndpointSlices (`pkg/registry/core/service`
//! and the generic registry `Store`): what happens to an object between decoding and validation
//! besides defaulting and allocation. Update preparation (`patchAllocatedValues`,
//! `normalizeClusterIPs`), `PrepareForCreate`/`PrepareForUpdate` and `dropTypeDependentFields` of the Service
//! strategy, the resourceVersion an apply carries, name generation, EndpointSlice v1 defaulting
//! with the strategy's dropping of gated fields, and which ServiceCIDR objects give the
//! allocator ranges.

use std::collections::BTreeMap;

use ipnet::IpNet;

use crate::allocation::IpAddressAllocator;
use crate::diagnostic::{Diagnostic, ObjectRef};
use crate::field::go_quote;
use crate::manifest::Object;
use crate::model::{EndpointSlice, ObjectMeta, Positions, Service, ServiceCidr, ServiceStatus};
use crate::profile::{Feature, Profile};
use crate::validation::{Rule, rule_in_force};

/// `beginUpdate` of the Service REST storage: `patchAllocatedValues`, then
/// `normalizeClusterIPs` (update branch). The stored object is already fully defaulted, so
/// `defaultOnReadService(old)` has nothing to do.
pub(crate) fn begin_update(old: &Service, new: &mut Service, profile: &Profile) {
    meta_before_update(&old.metadata, &mut new.metadata);
    patch_allocated_values(old, new, profile);
    normalize_cluster_ips_update(old, new);
}

/// `defaultOnReadService`'s `normalizeClusterIPs(After{svc}, Before{nil})`, the Service REST
/// storage's decorator on every object it returns or reads back (pkg/registry/core/service/
/// storage/storage.go, k8s.io/kubernetes@v1.24.17 to @v1.37.2): a stored `clusterIP` without
/// `clusterIPs` reads back with both. It shows on an ExternalName Service updated from a
/// ClusterIP type with another `clusterIP` written: validation forbids only `clusterIPs` for
/// ExternalName, `dropTypeDependentFields` keeps a changed `clusterIP`, and the client reads
/// `clusterIPs: [that address]` (found by the apiserver oracle at every release).
pub(crate) fn default_on_read(service: &mut Service) {
    if !service.spec.cluster_ip.is_empty() && service.spec.cluster_ips.is_empty() {
        service.spec.cluster_ips = vec![service.spec.cluster_ip.clone()];
    }
}

/// The generic registry's `rest.BeforeUpdate` (apiserver `pkg/registry/rest/update.go`, v0.24.0
/// to v0.36.0): a client cannot set `metadata.generation` (the stored one is copied over before
/// `PrepareForUpdate`), and an update without a uid keeps the stored uid.
pub(crate) fn meta_before_update(old: &ObjectMeta, new: &mut ObjectMeta) {
    new.generation = old.generation;
    if new.uid.is_empty() {
        new.uid = old.uid.clone();
    }
}

/// `patchAllocatedValues`: a re-applied manifest without the allocated values keeps them.
/// ClusterIP and ClusterIPs come from the old object when empty; a port without a nodePort
/// gets the old nodePort of the same-named port unless that number is also named in both
/// objects; the health-check port is kept while both need one. Families and policy are not
/// patched here (`initIPFamilyFields` infers and inherits them).
pub(crate) fn patch_allocated_values(old: &Service, new: &mut Service, profile: &Profile) {
    // `needsNodePort` of pkg/registry/core/service/storage/storage.go: any NodePort or
    // LoadBalancer to 1.29; from 1.30 a LoadBalancer with `allocateLoadBalancerNodePorts: false`
    // no longer needs them, so an update turning allocation off does not keep the old ports
    // (`releases::Rule::PatchNodePortsOnlyWhenAllocated`). The strategy's own `needsNodePort`
    // (dropTypeDependentFields) stays type-only.
    let allocated_only = rule_in_force(Rule::PatchNodePortsOnlyWhenAllocated, profile);
    let needs_node_port = |s: &Service| {
        s.needs_node_port()
            && !(allocated_only
                && s.spec.type_ == "LoadBalancer"
                && s.spec.allocate_load_balancer_node_ports == Some(false))
    };
    if old.needs_cluster_ip() && new.needs_cluster_ip() {
        if new.spec.cluster_ip.is_empty() {
            new.spec.cluster_ip = old.spec.cluster_ip.clone();
        }
        if new.spec.cluster_ips.is_empty() && !old.spec.cluster_ips.is_empty() {
            new.spec.cluster_ips = old.spec.cluster_ips.clone();
        }
    }
    if needs_node_port(old) && needs_node_port(new) {
        let named = |s: &Service| {
            s.spec.ports.iter().map(|p| p.node_port).filter(|p| *p != 0).collect::<Vec<_>>()
        };
        let (old_used, new_used) = (named(old), named(new));
        // The last old port of a name wins, as a Go map insert would.
        let by_name: BTreeMap<&str, i32> =
            old.spec.ports.iter().map(|p| (p.name.as_str(), p.node_port)).collect();
        for port in &mut new.spec.ports {
            if port.node_port == 0 {
                let old_value = by_name.get(port.name.as_str()).copied().unwrap_or(0);
                if !(old_used.contains(&old_value) && new_used.contains(&old_value)) {
                    port.node_port = old_value;
                }
            }
        }
    }
    if old.needs_health_check() && new.needs_health_check() && new.spec.health_check_node_port == 0
    {
        new.spec.health_check_node_port = old.spec.health_check_node_port;
    }
}

/// `normalizeClusterIPs` (update branch): keep `clusterIP` and `clusterIPs` in step when a
/// client only sent or only changed the singular field.
pub(crate) fn normalize_cluster_ips_update(old: &Service, new: &mut Service) {
    if !old.spec.cluster_ips.is_empty()
        && new.spec.cluster_ips.is_empty()
        && old.spec.cluster_ip == new.spec.cluster_ip
    {
        new.spec.cluster_ips = old.spec.cluster_ips.clone();
    }
    if old.spec.cluster_ip != new.spec.cluster_ip {
        let same_ips = old.spec.cluster_ips == new.spec.cluster_ips;
        if !old.spec.cluster_ip.is_empty() && new.spec.cluster_ip.is_empty() {
            if same_ips {
                new.spec.cluster_ips.clear();
            }
        } else if same_ips {
            new.spec.cluster_ips = vec![new.spec.cluster_ip.clone()];
        }
    }
}

/// An update that names no resourceVersion is unconditional: the generic registry's
/// `Store.Update` gives it the stored object's resourceVersion before validation, because the
/// Service and EndpointSlice strategies both answer `AllowUnconditionalUpdate() == true`
/// (apiserver `pkg/registry/generic/registry/store.go` Update, `doUnconditionalUpdate`, and
/// `pkg/registry/core/service/strategy.go`, `pkg/registry/discovery/endpointslice/strategy.go`,
/// v1.24 to v1.37), so "must be specified for an update" never reaches a client of either
/// (`1` for an object stored without one).
pub(crate) fn carry_resource_version(old: &ObjectMeta, new: &mut ObjectMeta) {
    if new.resource_version.is_empty() {
        new.resource_version = if old.resource_version.is_empty() {
            "1".to_owned()
        } else {
            old.resource_version.clone()
        };
    }
}

/// The generic registry's `BeforeCreate`/`BeforeUpdate` clear `metadata.clusterName` (1.24's
/// `ZZZ_DeprecatedClusterName`, the last release with the field) and warn when it was set
/// (apiserver `pkg/registry/rest/create.go` and `update.go`, v0.24.17; `releases::Rule::
/// ClusterNameDropped`). After the Service's allocation, before validation, so a refused
/// object gets the warning too. The text, when it warns.
pub(crate) fn drop_cluster_name(meta: &mut ObjectMeta, profile: &Profile) -> Option<&'static str> {
    let set = !std::mem::take(&mut meta.cluster_name).is_empty();
    (set && rule_in_force(Rule::ClusterNameDropped, profile)).then_some(
        "metadata.clusterName was specified. This field is not preserved and will be removed from the schema in 1.25",
    )
}

/// `metadata.generateName` on create (`BeforeCreate`: only for an object with a
/// `generateName` and no name): the random suffix is drawn from the profile's seed,
/// salted with where the document was written, so two documents with the same prefix get
/// different names and every run the same ones.
pub(crate) fn generate_name(meta: &mut ObjectMeta, positions: &Positions, seed: u64) {
    if !meta.name.is_empty() || meta.generate_name.is_empty() {
        return;
    }
    let salt = format!("{}/{}/{}", positions.file(), positions.document(), positions.object().line);
    simple_name_generator(meta, seed, &salt);
}

/// `names.SimpleNameGenerator`: `generateName` (cut to 58 bytes) plus 5 characters from
/// `bcdfghjklmnpqrstvwxz2456789`. Kubernetes draws them at random; svclab derives them from
/// the scenario seed and the document's position so runs are reproducible.
fn simple_name_generator(meta: &mut ObjectMeta, seed: u64, salt: &str) {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut base = meta.generate_name.as_str();
    if base.len() > 58 {
        let mut cut = 58;
        while !base.is_char_boundary(cut) {
            cut -= 1;
        }
        base = &base[..cut];
    }
    let mut name = base.to_owned();
    let len = ALPHABET.len() as u64;
    for z in SaltedDraws::new(seed, salt).take(5) {
        name.push(char::from(ALPHABET[usize::try_from(z % len).unwrap_or(0)]));
    }
    meta.name = name;
}

/// Reproducible draws for what Kubernetes picks at random per object: FNV-1a over the seed and
/// a salt (where the document was written), then a splitmix64 sequence.
struct SaltedDraws(u64);

impl SaltedDraws {
    fn new(seed: u64, salt: &str) -> SaltedDraws {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in seed.to_le_bytes().iter().chain(salt.as_bytes()) {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        SaltedDraws(h)
    }
}

impl Iterator for SaltedDraws {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Some(z ^ (z >> 31))
    }
}

/// `rest.FillObjectMetaSystemFields` on create (apiserver `pkg/registry/rest/meta.go`, v0.24 to
/// v0.37): every created object gets a fresh random uid, whatever the request said. svclab's is
/// a version-4 UUID drawn from the seed and the document's position.
pub(crate) fn fill_uid(meta: &mut ObjectMeta, positions: &Positions, seed: u64) {
    let salt =
        format!("uid/{}/{}/{}", positions.file(), positions.document(), positions.object().line);
    let mut bytes = [0u8; 16];
    for (chunk, z) in bytes.chunks_mut(8).zip(SaltedDraws::new(seed, &salt)) {
        chunk.copy_from_slice(&z.to_be_bytes());
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    // 8-4-4-4-12 hex digits, written in place (a string per byte was a fifteenth of a
    // Session's keystroke at 10,000 Services).
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut uid = String::with_capacity(36);
    for (i, byte) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            uid.push('-');
        }
        uid.push(char::from(HEX[usize::from(byte >> 4)]));
        uid.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    meta.uid = uid;
}

/// Where the storage layer keeps a kind, for its conflict messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StoredKind {
    /// The qualified resource (`services`, `endpointslices.discovery.k8s.io`).
    resource: &'static str,
    /// The etcd key prefix of kube-apiserver's default storage layout.
    key_prefix: &'static str,
}

/// Services: `/registry/services/specs/<namespace>/<name>`.
pub(crate) const SERVICES: StoredKind =
    StoredKind { resource: "services", key_prefix: "/registry/services/specs" };
/// ServiceCIDRs (cluster-scoped): `/registry/servicecidrs/<name>`.
pub(crate) const SERVICE_CIDRS: StoredKind =
    StoredKind { resource: "servicecidrs.networking.k8s.io", key_prefix: "/registry/servicecidrs" };
/// EndpointSlices: `/registry/endpointslices/<namespace>/<name>`.
pub(crate) const ENDPOINT_SLICES: StoredKind = StoredKind {
    resource: "endpointslices.discovery.k8s.io",
    key_prefix: "/registry/endpointslices",
};

/// What the storage layer refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StorageRefusal {
    /// 409 Conflict with this message.
    Conflict(String),
    /// A plain Go error: a 500 with an empty reason, the text as is.
    Unknown(String),
}

/// The etcd3 store's `Create` (apiserver `pkg/storage/etcd3/store.go`, v0.24 to v0.37): a
/// resourceVersion that parses as a non-zero version refuses the create, after validation,
/// the strategy's warnings and admission (a version that does not parse is dropped).
pub(crate) fn create_resource_version(meta: &ObjectMeta) -> Result<(), StorageRefusal> {
    match parse_resource_version(&meta.resource_version) {
        Ok(version) if version != 0 => Err(StorageRefusal::Unknown(
            "resourceVersion should not be set on objects to be created".to_owned(),
        )),
        _ => Ok(()),
    }
}

/// The generic registry's `Store.Update` before anything of the strategy runs (apiserver
/// `pkg/registry/generic/registry/store.go` Update and the etcd3 store's `GuaranteedUpdate`,
/// v0.24 to v0.37): a uid in the request is a precondition the stored uid must meet; a
/// resourceVersion must parse as a version, and a non-zero one must be the stored object's
/// etcd revision, which a scenario cannot know, so it conflicts (svclab keeps no revisions).
/// Zero or none is an unconditional update ([`carry_resource_version`]).
pub(crate) fn update_preconditions(
    kind: StoredKind,
    new: &ObjectMeta,
    old: &ObjectMeta,
) -> Result<(), StorageRefusal> {
    let conflict = |detail: String| {
        StorageRefusal::Conflict(format!(
            "Operation cannot be fulfilled on {} {}: {detail}",
            kind.resource,
            go_quote(&old.name)
        ))
    };
    if !new.uid.is_empty() && new.uid != old.uid {
        let key = if old.namespace.is_empty() {
            format!("{}/{}", kind.key_prefix, old.name)
        } else {
            format!("{}/{}/{}", kind.key_prefix, old.namespace, old.name)
        };
        return Err(conflict(format!(
            "StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: {}, UID in object meta: {}",
            new.uid, old.uid
        )));
    }
    match parse_resource_version(&new.resource_version) {
        Err(text) => Err(StorageRefusal::Unknown(text)),
        Ok(0) => Ok(()),
        Ok(_) => Err(conflict(
            "the object has been modified; please apply your changes to the latest version and try again"
                .to_owned(),
        )),
    }
}

/// `APIObjectVersioner.ParseResourceVersion`: empty and `0` are no version; anything else must
/// be a decimal `uint64`, else the error is Go's `strconv.ParseUint` text.
fn parse_resource_version(text: &str) -> Result<u64, String> {
    if text.is_empty() || text == "0" {
        return Ok(0);
    }
    let error = |why: &str| format!("strconv.ParseUint: parsing {}: {why}", go_quote(text));
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(error("invalid syntax"));
    }
    text.parse::<u64>().map_err(|_| error("value out of range"))
}

/// What the registry does to an object before validation that is not defaulting:
/// `PrepareForCreate` clears status, and `PrepareForCreate` and `PrepareForUpdate` call
/// `dropServiceDisabledFields` (`pkg/registry/core/service/strategy.go`), which clears a field
/// whose gate is off unless the old object (none on create) already uses it:
/// `internalTrafficPolicy` under ServiceInternalTrafficPolicy (the gate is off-able in 1.24 and
/// 1.25 only) and `trafficDistribution` under ServiceTrafficDistribution (1.30 to 1.32).
pub(crate) fn prepare_service(svc: &mut Service, old: Option<&Service>, profile: &Profile) {
    svc.status = ServiceStatus::default();
    if !profile.gate(Feature::ServiceInternalTrafficPolicy)
        && old.is_none_or(|o| o.spec.internal_traffic_policy.is_none())
    {
        svc.spec.internal_traffic_policy = None;
    }
    if !profile.gate(Feature::ServiceTrafficDistribution)
        && old.is_none_or(|o| o.spec.traffic_distribution.is_none())
    {
        svc.spec.traffic_distribution = None;
    }
}

/// `dropServiceStatusDisabledFields` of the status strategy (`pkg/registry/core/service/
/// strategy.go`, from 1.29), on the status a scenario writes as the load-balancer controller:
/// with LoadBalancerIPMode off (alpha and off in 1.29, beta in 1.30 and 1.31, locked from
/// 1.32) `ipMode` is cleared unless the stored status already has one.
pub(crate) fn drop_disabled_status_fields(
    status: &mut ServiceStatus,
    old: Option<&ServiceStatus>,
    profile: &Profile,
) {
    if profile.version.minor < 29 || profile.gate(Feature::LoadBalancerIPMode) {
        return;
    }
    if old.is_some_and(|o| o.load_balancer_ingress.iter().any(|i| i.ip_mode.is_some())) {
        return;
    }
    for ingress in &mut status.load_balancer_ingress {
        ingress.ip_mode = None;
    }
}

/// `dropTypeDependentFields` (registry strategy, on update): when a type change makes a field
/// meaningless and the manifest left it as the old object had it, the field is cleared, so
/// e.g. switching to ExternalName does not trip over the old cluster IPs.
pub(crate) fn drop_type_dependent_fields(new: &mut Service, old: &Service, profile: &Profile) {
    if old.needs_cluster_ip() && !new.needs_cluster_ip() {
        if new.spec.cluster_ip == old.spec.cluster_ip
            && new.spec.cluster_ips == old.spec.cluster_ips
        {
            new.spec.cluster_ip.clear();
            new.spec.cluster_ips.clear();
        }
        if new.spec.ip_families == old.spec.ip_families {
            new.spec.ip_families.clear();
        }
        if new.spec.ip_family_policy == old.spec.ip_family_policy {
            new.spec.ip_family_policy = None;
        }
    }
    // `sameNodePorts`: every non-zero node port of the new object is one of the old object's
    // (a subset, not a positional comparison).
    let same_node_ports = new.spec.ports.iter().all(|n| {
        n.node_port == 0
            || old.spec.ports.iter().any(|o| o.node_port != 0 && o.node_port == n.node_port)
    });
    if old.needs_node_port() && !new.needs_node_port() && same_node_ports {
        for port in &mut new.spec.ports {
            port.node_port = 0;
        }
    }
    if old.needs_health_check()
        && !new.needs_health_check()
        && new.spec.health_check_node_port == old.spec.health_check_node_port
    {
        new.spec.health_check_node_port = 0;
    }
    if old.spec.type_ == "LoadBalancer" && new.spec.type_ != "LoadBalancer" {
        if new.spec.allocate_load_balancer_node_ports.is_some()
            && new.spec.allocate_load_balancer_node_ports
                == old.spec.allocate_load_balancer_node_ports
        {
            new.spec.allocate_load_balancer_node_ports = None;
        }
        if new.spec.load_balancer_class == old.spec.load_balancer_class {
            new.spec.load_balancer_class = None;
        }
        new.status = ServiceStatus::default();
    }
    // `needsExternalTrafficPolicy`: ExternallyAccessible from 1.29, NodePort/LoadBalancer before.
    let needs_etp = |s: &Service| {
        if rule_in_force(Rule::EtpForExternalIps, profile) {
            s.is_externally_accessible()
        } else {
            s.needs_node_port()
        }
    };
    if needs_etp(old)
        && !needs_etp(new)
        && new.spec.external_traffic_policy == old.spec.external_traffic_policy
    {
        new.spec.external_traffic_policy.clear();
    }
}

/// v1 defaulting of an EndpointSlice plus the request namespace (port `name` nil → `""`,
/// `protocol` nil → `TCP`), then `PrepareForCreate`'s dropping of hint fields whose gate is off
/// (`hints` with TopologyAwareHints, `hints.forNodes` with PreferSameTrafficDistribution).
pub(crate) fn default_endpoint_slice(slice: &mut EndpointSlice, profile: &Profile) {
    let hints = profile.gate(Feature::TopologyAwareHints);
    let for_nodes = profile.gate(Feature::PreferSameTrafficDistribution);
    for endpoint in &mut slice.endpoints {
        if !hints {
            endpoint.hints = None;
        }
        if let Some(h) = endpoint.hints.as_mut()
            && !for_nodes
        {
            h.for_nodes.clear();
        }
    }
    if slice.metadata.namespace.is_empty() {
        slice.metadata.namespace = "default".to_owned();
    }
    for port in &mut slice.ports {
        port.name.get_or_insert_with(String::new);
        port.protocol.get_or_insert_with(|| "TCP".to_owned());
    }
}

/// `dropDisabledFieldsOnCreate` / `dropDisabledFieldsOnUpdate` of the EndpointSlice strategy
/// (`pkg/registry/discovery/endpointslice/strategy.go`) for EndpointSliceTerminatingCondition,
/// which can be off in 1.24 and 1.25 only (locked on in v1.26.1): `conditions.serving` and
/// `conditions.terminating` of every endpoint are cleared on create, and on update unless an
/// endpoint of the stored slice already sets either.
pub(crate) fn drop_disabled_endpoint_conditions(
    slice: &mut EndpointSlice,
    old: Option<&EndpointSlice>,
    profile: &Profile,
) {
    if profile.gate(Feature::EndpointSliceTerminatingCondition) {
        return;
    }
    let in_use = old.is_some_and(|o| {
        o.endpoints.iter().any(|e| e.serving.is_some() || e.terminating.is_some())
    });
    if in_use {
        return;
    }
    for endpoint in &mut slice.endpoints {
        endpoint.serving = None;
        endpoint.terminating = None;
    }
}

/// The networks of the scenario's ServiceCIDR objects that get an allocator (KEP-1880's
/// `ServiceCIDR` storage and the IPAddress allocator's readiness). Without the
/// MultiCIDRServiceAllocator gate the objects are ignored with a warning. Otherwise each goes
/// through the ServiceCIDR storage in stream order, as Services do: a name seen before is an
/// update (the storage's preconditions, the stored generation and uid, the common metadata
/// checks, `ValidateServiceCIDRUpdate`), a new one a create (`ValidateServiceCIDR`, a fresh uid,
/// no resourceVersion); a refused object changes nothing. An IPv6 prefix shorter than /64 is
/// stored, but its allocator never becomes ready.
pub(crate) fn service_cidrs(
    objects: &[Object],
    profile: &Profile,
    diags: &mut Vec<Diagnostic>,
) -> Vec<IpNet> {
    // The stored objects, in the order they were created.
    let mut stored: Vec<ServiceCidr> = Vec::new();
    let json = profile.json_field_values();
    for object in objects {
        let Object::ServiceCidr(located) = object else { continue };
        let mut cidr = located.value.clone();
        // rest.EnsureObjectNamespaceMatchesRequestNamespace: a cluster-scoped request carries no
        // namespace, and the object's is cleared (apiserver pkg/registry/rest/meta.go, v0.24
        // to v0.37), so ValidateObjectMeta never sees one.
        cidr.metadata.namespace.clear();
        let object_ref = ObjectRef::new("ServiceCIDR", "", &cidr.metadata.name);
        if !profile.multi_cidr() {
            let message = format!(
                "ServiceCIDR objects are ignored: MultiCIDRServiceAllocator is off in Kubernetes {}",
                profile.version
            );
            diags.push(
                Diagnostic::warning(Some(object_ref), "", "Ignored", message)
                    .at(located.positions.source_of("")),
            );
            continue;
        }
        let refuse = |diags: &mut Vec<Diagnostic>, errors: &[crate::field::FieldError]| {
            diags.extend(
                errors.iter().map(|e| e.to_diagnostic(&object_ref, &located.positions, json)),
            );
        };
        let storage = |diags: &mut Vec<Diagnostic>, refusal: StorageRefusal| {
            let (reason, message) = match refusal {
                StorageRefusal::Conflict(message) => ("Conflict", message),
                StorageRefusal::Unknown(message) => ("Unknown", message),
            };
            diags.push(
                Diagnostic::error(Some(object_ref.clone()), "", reason, message)
                    .at(located.positions.source_of("")),
            );
        };
        match stored.iter().position(|s| s.metadata.name == cidr.metadata.name) {
            Some(i) => {
                let old = &stored[i];
                if let Err(refusal) =
                    update_preconditions(SERVICE_CIDRS, &cidr.metadata, &old.metadata)
                {
                    storage(diags, refusal);
                    continue;
                }
                carry_resource_version(&old.metadata, &mut cidr.metadata);
                meta_before_update(&old.metadata, &mut cidr.metadata);
                let mut errors = crate::validation::validate_common_update_fields(
                    &cidr.metadata,
                    &old.metadata,
                    crate::validation::Scope::Cluster,
                    profile,
                );
                errors.extend(crate::validation::validate_service_cidr_update(&cidr, old, profile));
                crate::validation::registry_causes(&mut errors, profile);
                if !errors.is_empty() {
                    refuse(diags, &errors);
                    continue;
                }
                stored[i] = cidr;
            }
            None => {
                fill_uid(&mut cidr.metadata, &located.positions, profile.seed);
                let mut errors = crate::validation::validate_service_cidr_create(&cidr, profile);
                crate::validation::registry_causes(&mut errors, profile);
                if !errors.is_empty() {
                    refuse(diags, &errors);
                    continue;
                }
                if let Err(refusal) = create_resource_version(&cidr.metadata) {
                    storage(diags, refusal);
                    continue;
                }
                stored.push(cidr);
            }
        }
    }
    let mut nets = Vec::new();
    for cidr in &stored {
        let name = &cidr.metadata.name;
        for (i, net) in
            crate::validation::service_cidr_networks(&cidr.cidrs).into_iter().enumerate()
        {
            match IpAddressAllocator::new(net, 0, 0) {
                Ok(_) => nets.push(net),
                Err(err) => {
                    let object_ref = ObjectRef::new("ServiceCIDR", "", name);
                    let field = format!("spec.cidrs[{i}]");
                    let message = format!("ServiceCIDR {name:?} has no allocator: {err}");
                    let source = objects.iter().rev().find_map(|o| match o {
                        Object::ServiceCidr(l) if l.value.metadata.name == *name => {
                            Some(l.positions.source_of(&field))
                        }
                        _ => None,
                    });
                    let warning =
                        Diagnostic::warning(Some(object_ref), field, "AllocatorNotReady", message);
                    diags.push(match source {
                        Some(source) => warning.at(source),
                        None => warning,
                    });
                }
            }
        }
    }
    nets
}

#[cfg(test)]
mod tests;
