//! Generic tests over every release table: for each row of the validation and warning tables,
//! the kube-proxy table, the feature gates (kube-apiserver's and kube-proxy's own) and the
//! allocator behaviours, at every boundary where its behaviour changes (read from the tables, so
//! a new row or a moved boundary is covered without touching this file), a scenario that
//! crosses it (its witness) produces a finding that cites the row, in both directions, and the
//! same scenario across the next release where the row does not change produces none.
//!
//! Witnesses are written here per row; a row without one gets one searched among the
//! generated scenarios of `svclab-scenario-gen` (the oracle's), so a new row the generator
//! exercises needs nothing; a row neither finds fails the test, naming it. Rows no upgrade can
//! show are listed in [`UNOBSERVABLE`] and [`UNOBSERVABLE_PROXY`] with the reason, which the
//! tests keep honest.

use serde_json::Value;

use super::{Rehearsal, citing};
use crate::proxy::{Behaviour, ProxyMode, release_rows};
use crate::upgrade::cause::ALLOCATION;
use crate::validation::{Rule, TABLES, in_force};
use crate::{Profile, Version};

/// Rows whose change no upgrade can show, with why.
const UNOBSERVABLE: &[(&str, &str)] = &[
    (
        "validation:NilValueQuoted",
        "a nil bad value reaches a message only when an object is validated as written \
         (`--no-defaults`): the write path fills the pointers it checks (ipFamilyPolicy) before \
         validation",
    ),
    (
        "validation:EndpointSliceUnchangedEndpoints",
        "from 1.33 an update whose endpoints equal the stored ones drops their errors; a stored \
         slice's endpoints passed its own release's validation, and no endpoint check gets \
         stricter at 1.33 itself (StrictIPCIDRValidation is alpha and off there), so the next \
         write meets no error to drop on either side of the boundary",
    ),
    (
        "validation:SourceRangesAnnotationRatchet",
        "from 1.33 an unchanged source-ranges annotation is not checked on update; an object can \
         only be stored with a value its release's create path accepts, which the update path of \
         the releases on both sides of 1.33 accepts too",
    ),
];

/// kube-proxy rows no upgrade can show, with why: a row of a mode the rehearsal never runs, or
/// one whose only uncovered boundary is no change.
const UNOBSERVABLE_PROXY: &[(&str, &str)] = &[
    (
        "proxy:NftablesPostDnatOutputChain",
        "its end (1.33 → 1.34) is no change at any patch svclab models: 1.33.6 backported \
         NftablesPreDnatChains, which replaces it, so 1.33's newest patch renders the pre-DNAT \
         chains already; its start (1.29 → 1.30) is cited by NftablesAlphaTable's witness, the \
         two rows being one setting (proxy/config.rs ROW_GROUPS)",
    ),
    (
        "proxy:PlatformDefaultsBeforeValidate",
        "its defaults (a blank mode is iptables, a blank detectLocalMode ClusterCIDR) change what \
         Validate checks only where a check reads them: the ClusterCIDR check of the Linux \
         block (1.31 on, ValidateLinuxBlock), after it; at its own boundary (1.27 → 1.28) a \
         blank mode and iptables are checked alike and a blank detectLocalMode is valid \
         (proxy/startup.rs `refusals`)",
    ),
    (
        "proxy:IpvsModeGated",
        "it refuses `mode: ipvs`, and the rehearsal runs kube-proxy in a mode svclab renders \
         (sides.rs reads any other mode as iptables), so no side asks for ipvs",
    ),
    (
        "proxy:ModeListCommaSpace",
        "the list of valid modes is printed for a mode kube-proxy does not know, and the \
         rehearsal reads such a mode as iptables on both sides (sides.rs)",
    ),
    (
        "proxy:ValidateIpvsScheduler",
        "it checks the ipvs block only in ipvs mode, which the rehearsal never runs (sides.rs \
         reads it as iptables)",
    ),
];

/// A scenario that shows a row's behaviour when an upgrade crosses it.
#[derive(Clone, Default)]
struct Witness {
    scenario: String,
    /// The target's profile (a KubeProxyConfiguration with a gate the older release lacks).
    to_profile: Option<String>,
    /// Crossed forward only (its `to_profile` makes no sense the other way).
    forward_only: bool,
}

fn w(scenario: impl Into<String>) -> Option<Witness> {
    Some(Witness { scenario: scenario.into(), ..Witness::default() })
}

const SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\n";

/// Nodes, kube-proxy's configuration (`KPC` replaced by extra lines) and one Service with
/// endpoints on both nodes.
fn dataplane(kpc: &str, service_spec: &str) -> String {
    format!(
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clusterCIDR: 10.244.0.0/16
{kpc}
---
apiVersion: v1
kind: Node
metadata: {{name: node-a, labels: {{topology.kubernetes.io/zone: zone-a}}}}
spec: {{podCIDR: 10.244.0.0/24}}
status: {{addresses: [{{type: InternalIP, address: 192.168.0.10}}]}}
---
apiVersion: v1
kind: Node
metadata: {{name: node-b, labels: {{topology.kubernetes.io/zone: zone-b}}}}
spec: {{podCIDR: 10.244.1.0/24}}
status: {{addresses: [{{type: InternalIP, address: 192.168.0.11}}]}}
---
{SERVICE}spec:
  selector: {{app: web}}
  ports: [{{name: http, port: 80, targetPort: 8080}}]
{service_spec}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: web-1, namespace: default, labels: {{kubernetes.io/service-name: web}}}}
addressType: IPv4
ports: [{{name: http, port: 8080, protocol: TCP}}]
endpoints:
- addresses: [10.244.0.5]
  nodeName: node-a
  zone: zone-a
  hints: {{forZones: [{{name: zone-a}}]}}
- addresses: [10.244.1.5]
  nodeName: node-b
  zone: zone-b
  hints: {{forZones: [{{name: zone-b}}]}}
"
    )
}

fn validation_witness(rule: Rule) -> Option<Witness> {
    match rule {
        Rule::JsonValues => w(format!(
            "{SERVICE}spec:\n  clusterIPs: [10.96.0.10, 10.96.0.11]\n  ports: [{{port: 80}}]\n"
        )),
        Rule::LabelNoDots => w(
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: default}\naddressType: IPv4\nendpoints: [{addresses: [10.244.0.5], hostname: a.b}]\n",
        ),
        Rule::PortNameLetterOnly => {
            w(format!("{SERVICE}spec:\n  ports: [{{port: 80, targetPort: \"123\"}}]\n"))
        }
        Rule::LabelKeyBytes => w(
            "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default, labels: {a/b/c: x}}\nspec:\n  ports: [{port: 80}]\n",
        ),
        Rule::TooLongMayNot => w(format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: web, namespace: default, annotations: {{big: \"{}\"}}}}\nspec:\n  ports: [{{port: 80}}]\n",
            "x".repeat(270_000)
        )),
        Rule::KubeletPort => {
            w(format!("{SERVICE}spec:\n  type: LoadBalancer\n  ports: [{{port: 10250}}]\n"))
        }
        Rule::SourceRangesWholeField => w(format!(
            "{SERVICE}spec:\n  type: LoadBalancer\n  loadBalancerSourceRanges: [bogus]\n  ports: [{{port: 80}}]\n"
        )),
        Rule::EtpForExternalIps => w(format!(
            "{SERVICE}spec:\n  externalIPs: [192.0.2.10]\n  externalTrafficPolicy: Local\n  ports: [{{port: 80}}]\n"
        )),
        Rule::MixedProtocolGate => w(format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"RELEASE\"\nfeatureGates: {{MixedProtocolLBService: false}}\n---\n{SERVICE}spec:\n  type: LoadBalancer\n  ports: [{{name: a, port: 53, protocol: UDP}}, {{name: b, port: 53, protocol: TCP}}]\n"
        )),
        Rule::TrafficDistributionOrder => w(format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"RELEASE\"\nfeatureGates: {{ServiceTrafficDistribution: true}}\n---\n{SERVICE}spec:\n  trafficDistribution: Bogus\n  ports: [{{port: 80}}]\n"
        )),
        Rule::TopologyModeMatch => w(
            "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default, annotations: {service.kubernetes.io/topology-aware-hints: Auto, service.kubernetes.io/topology-mode: Disabled}}\nspec:\n  ports: [{port: 80}]\n",
        ),
        Rule::ServiceUpdateObjectMeta => w(format!(
            "{SERVICE}spec:\n  ports: [{{port: 80}}]\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: web, namespace: default, labels: {{\"bad key!\": x}}}}\nspec:\n  ports: [{{port: 80}}]\n"
        )),
        Rule::IpWarningsNetip | Rule::IpWarningsKep4858 | Rule::NonStandardIsInvalid => {
            w(format!("{SERVICE}spec:\n  externalIPs: [010.1.2.3]\n  ports: [{{port: 80}}]\n"))
        }
        Rule::ExternalNameIgnored => w(format!(
            "{SERVICE}spec:\n  type: ExternalName\n  externalName: example.com\n  externalIPs: [192.0.2.10]\n"
        )),
        Rule::EndpointSliceIpWarnings => w(
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: default}\naddressType: IPv4\nendpoints: [{addresses: [010.1.2.3]}]\n",
        ),
        Rule::HeadlessIgnored => w(format!(
            "{SERVICE}spec:\n  clusterIP: None\n  externalIPs: [192.0.2.10]\n  ports: [{{port: 80}}]\n"
        )),
        Rule::PreferCloseDeprecated => w(format!(
            "{SERVICE}spec:\n  trafficDistribution: PreferClose\n  ports: [{{port: 80}}]\n"
        )),
        Rule::ExternalIpsDeprecated => {
            w(format!("{SERVICE}spec:\n  externalIPs: [192.0.2.10]\n  ports: [{{port: 80}}]\n"))
        }
        Rule::EndpointSliceFamilyAndSpecial => w(
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: default}\naddressType: IPv4\nendpoints: [{addresses: [\"::1\"]}]\n",
        ),
        Rule::ClusterNameDropped => w(
            "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default, clusterName: x}\nspec:\n  ports: [{port: 80}]\n",
        ),
        Rule::EndpointSliceFqdnDeprecated => w(
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: default}\naddressType: FQDN\nendpoints: [{addresses: [a.example.com]}]\n",
        ),
        Rule::EndpointSliceKep4858Addresses => w(
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: default}\naddressType: IPv6\nendpoints: [{addresses: [\"::ffff:1.2.3.4\"]}]\n",
        ),
        Rule::ServiceCidrStrictSpec => w(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"RELEASE\"\nfeatureGates: {MultiCIDRServiceAllocator: true}\n---\napiVersion: networking.k8s.io/v1beta1\nkind: ServiceCIDR\nmetadata: {name: extra}\nspec:\n  cidrs: [\"10.100.0.0/24\", \"10.101.0.0/24\"]\n",
        ),
        Rule::ServiceIpFullNamesService => w(format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"RELEASE\"\nserviceClusterIPRanges: [10.96.0.0/30]\n---\n{SERVICE}spec:\n  ports: [{{port: 80}}]\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: api, namespace: default}}\nspec:\n  ports: [{{port: 80}}]\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: db, namespace: default}}\nspec:\n  ports: [{{port: 80}}]\n"
        )),
        // An endpoint without addresses: the declarative "Required value" from 1.37.
        Rule::EndpointSliceDeclarativeBeta => w(
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: default}\naddressType: IPv4\nendpoints: [{addresses: []}]\n",
        ),
        // An endpoint error and a port error: their order changes.
        Rule::EndpointSlicePortsFirst => w(
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s, namespace: default}\naddressType: IPv4\nports: [{name: Bad_Name, port: 80}]\nendpoints: [{addresses: [10.1.2.3], hostname: Bad_Host}]\n",
        ),
        // A LoadBalancer that stops allocating node ports: to 1.29 it keeps 30080, so a later
        // Service asking for 30080 is refused; from 1.30 the port is free.
        Rule::PatchNodePortsOnlyWhenAllocated => w(format!(
            "{SERVICE}spec:\n  type: LoadBalancer\n  ports: [{{port: 80, nodePort: 30080}}]\n---\n{SERVICE}spec:\n  type: LoadBalancer\n  allocateLoadBalancerNodePorts: false\n  ports: [{{port: 80}}]\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: other, namespace: default}}\nspec:\n  type: NodePort\n  ports: [{{port: 80, nodePort: 30080}}]\n"
        )),
        // A Service without a name: its pick's IPAddress has no parentRef name, which 1.35 on
        // refuses as a 422 naming the address.
        Rule::ServiceIpNonFullInvalid => w(
            "apiVersion: v1\nkind: Service\nmetadata: {namespace: default}\nspec:\n  ports: [{port: 80}]\n",
        ),
        Rule::IdenticalCausesOnce => w(format!(
            "{SERVICE}spec:\n  ports: [{{port: 80}}]\n---\n{SERVICE}spec:\n  type: LoadBalancer\n  loadBalancerClass: \"bad class\"\n  ports: [{{port: 80}}]\n"
        )),
        _ => None,
    }
}

fn proxy_witness(behaviour: Behaviour) -> Option<Witness> {
    let nft = "mode: nftables\nfeatureGates: {NFTablesProxyMode: true}";
    match behaviour {
        Behaviour::HintsAnnotationAuto | Behaviour::HintsAnnotationAnyValue => {
            let mut scenario = dataplane("", "");
            scenario = scenario.replace(
                "metadata: {name: web, namespace: default}\nspec:",
                "metadata: {name: web, namespace: default, annotations: {service.kubernetes.io/topology-aware-hints: PreferZone}}\nspec:",
            );
            w(scenario)
        }
        Behaviour::HintsWithoutAnnotation => Some(Witness {
            scenario: dataplane("", ""),
            to_profile: Some("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\nfeatureGates: {ServiceTrafficDistribution: true}\n".to_owned()),
            forward_only: true,
        }),
        Behaviour::IpModeProxySkipped => Some(Witness {
            scenario: dataplane("", "  type: LoadBalancer\nstatus: {loadBalancer: {ingress: [{ip: 192.0.2.50, ipMode: Proxy}]}}"),
            to_profile: Some("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\nfeatureGates: {LoadBalancerIPMode: true}\n".to_owned()),
            forward_only: true,
        }),
        Behaviour::PrimaryKeyword => w(dataplane("nodePortAddresses: [primary]", "  type: NodePort")),
        Behaviour::NftablesModeGated | Behaviour::NftablesModeGa => {
            w(dataplane("mode: nftables\nfeatureGates: {NFTablesProxyMode: false}", ""))
        }
        Behaviour::NftablesModeOnByDefault | Behaviour::UserspaceProxyMode => w(dataplane("mode: nftables", "")),
        Behaviour::LocalhostNodePortsOption => w(dataplane("iptables: {localhostNodePorts: false}", "  type: NodePort")),
        Behaviour::KubeFirewallInPayload => w(dataplane("", "  type: NodePort")),
        Behaviour::TcpBeLiberalOption => w(dataplane("conntrack: {tcpBeLiberal: true}", "")),
        Behaviour::NfacctCounters => w(format!(
            "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"RELEASE\"\nhost: {{nfacct: true}}\n---\n{}",
            dataplane("", "  type: NodePort")
        )),
        Behaviour::ProxyFirewallChain => w(dataplane(
            "",
            "  type: LoadBalancer\n  loadBalancerSourceRanges: [198.51.100.0/24]\nstatus: {loadBalancer: {ingress: [{ip: 192.0.2.50}]}}",
        )),
        Behaviour::NoLocalEndpointsInFilter => w(dataplane("", "  type: NodePort\n  externalTrafficPolicy: Local").replace(
            "- addresses: [10.244.0.5]\n  nodeName: node-a",
            "- addresses: [10.244.2.5]\n  nodeName: node-c",
        )),
        Behaviour::NftablesAlphaTable
        | Behaviour::NftablesPostDnatOutputChain
        | Behaviour::NftablesPreDnatChains
        | Behaviour::NftablesMasqueradeMatchesPort
        | Behaviour::NftablesMarkForMasqueradeChain => w(dataplane(nft, "  type: NodePort")),
        Behaviour::NftablesElementsOnce => w(format!(
            "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\n{nft}\n---\n{SERVICE}spec:\n  externalIPs: [192.0.2.10]\n  ports: [{{name: http, port: 80}}]\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: other, namespace: default}}\nspec:\n  externalIPs: [192.0.2.10]\n  ports: [{{name: http, port: 80}}]\n"
        )),
        Behaviour::NftablesIifname => {
            w(dataplane(&format!("{nft}\ndetectLocalMode: InterfaceNamePrefix\ndetectLocal: {{interfaceNamePrefix: veth}}"), ""))
        }
        Behaviour::DuplicateEndpointsPreferNonTerminating => {
            // The copy on kube-proxy's node (node-a) is terminating, the one on node-b is not.
            let scenario = dataplane("", "").replace(
                "- addresses: [10.244.0.5]\n  nodeName: node-a\n  zone: zone-a",
                "- addresses: [10.244.0.5]\n  nodeName: node-a\n  zone: zone-a\n  conditions: {ready: false, serving: true, terminating: true}",
            );
            w(format!(
                "{scenario}---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: web-2, namespace: default, labels: {{kubernetes.io/service-name: web}}}}\naddressType: IPv4\nports: [{{name: http, port: 8080, protocol: TCP}}]\nendpoints:\n- addresses: [10.244.0.5]\n  nodeName: node-b\n"
            ))
        }
        Behaviour::IptablesRandomFullyAlways => w(dataplane("", "  type: NodePort")),
        Behaviour::NftablesHairpinMasquerade => w(dataplane("mode: nftables", "  type: NodePort")),
        // kube-proxy's startup validation: the same configuration refused in other words, or
        // refused on one side only.
        Behaviour::ValidateLogging => w(dataplane("logging: {format: bogus}", "")),
        Behaviour::ValidateDetectLocalMode | Behaviour::DetectLocalModeStartupError => {
            w(dataplane("detectLocalMode: Bogus", ""))
        }
        Behaviour::ValidatePortRange => w(dataplane("portRange: 1-x", "")),
        Behaviour::ValidateUdpIdleTimeout => w(dataplane("udpIdleTimeout: -1s", "")),
        Behaviour::ValidateConntrackUdpTimeouts => w(dataplane("conntrack: {udpTimeout: -1s}", "")),
        Behaviour::NodePortAddressKeywords => {
            w(dataplane("nodePortAddresses: [localhost]", "  type: NodePort"))
        }
        Behaviour::ValidateLinuxBlock => w(dataplane("iptables: {syncPeriod: -1s}", "")),
        Behaviour::ValidateNftablesBlock => {
            w(dataplane(&format!("{nft}\nnftables: {{masqueradeBit: -1}}"), ""))
        }
        Behaviour::ShowHiddenMetricsFieldError => {
            w(dataplane("showHiddenMetricsForVersion: \"1.10\"", ""))
        }
        // An endpoint written with a leading zero: kube-proxy's hairpin `-s` (1.24 to 1.28
        // parses it) and its DNAT (1.31 on parses it).
        Behaviour::EndpointIpPartParsed | Behaviour::EndpointIpsAsWritten => {
            w(dataplane("", "").replace("- addresses: [10.244.1.5]", "- addresses: [010.244.1.5]"))
        }
        Behaviour::FirewallChainClosingComment => w(dataplane(
            "",
            "  type: LoadBalancer\n  loadBalancerSourceRanges: [198.51.100.0/24]\nstatus: {loadBalancer: {ingress: [{ip: 192.0.2.50}]}}",
        )),
        // A cluster CIDR written with host bits: kept as written to 1.29, the network from 1.30.
        Behaviour::LocalDetectorCidrAsWritten => {
            w(dataplane("", "").replace("clusterCIDR: 10.244.0.0/16", "clusterCIDR: 10.244.0.1/16"))
        }
        // A Service port without endpoints (its no-endpoint-services element carries the
        // comment namespace/name:port), the comment past nftables' 128 bytes.
        Behaviour::NftablesCommentTruncated => {
            let (name, namespace) =
                (format!("web-{}", "x".repeat(59)), format!("ns-{}", "y".repeat(60)));
            let scenario = dataplane(nft, "");
            let (without_endpoints, _) =
                scenario.split_once("---\napiVersion: discovery.k8s.io/v1").unwrap_or_default();
            w(without_endpoints
                .replace(
                    "name: web, namespace: default}",
                    &format!("name: {name}, namespace: {namespace}}}"),
                )
                .replace("name: http, port: 80,", "name: http-port-named, port: 80,"))
        }
        // Back from 1.30 to 1.29 there is no firewall-ips map to comment on: that rollback
        // is the table's change (NftablesAlphaTable).
        Behaviour::NftablesFirewallElementComment => Some(Witness {
            scenario: dataplane(
                nft,
                "  type: LoadBalancer\n  loadBalancerSourceRanges: [198.51.100.0/24]\nstatus: {loadBalancer: {ingress: [{ip: 192.0.2.50}]}}",
            ),
            to_profile: None,
            forward_only: true,
        }),
        // A node without an address: 1.30 falls back on the node IP, loopback, which 1.31's
        // `primary` leaves out.
        Behaviour::NftablesNodeIpFallback
        | Behaviour::NftablesDefaultPrimary
        | Behaviour::PrimaryNodePortAddresses => w(dataplane(nft, "  type: NodePort").replace(
            "status: {addresses: [{type: InternalIP, address: 192.168.0.10}]}\n",
            "",
        )),
        // One endpoint only.
        Behaviour::NftablesSingleEndpointDnat => w(dataplane(nft, "").replace(
            "- addresses: [10.244.1.5]\n  nodeName: node-b\n  zone: zone-b\n  hints: {forZones: [{name: zone-b}]}\n",
            "",
        )),
        // Source ranges that hold the node's address: 1.24 to 1.27 take the node IP from the
        // bind address (0.0.0.0), so no rule lets the node itself through.
        Behaviour::NodeIpFromBindAddress => w(dataplane(
            "",
            "  type: LoadBalancer\n  loadBalancerSourceRanges: [192.168.0.0/24]\nstatus: {loadBalancer: {ingress: [{ip: 192.0.2.50}]}}",
        )),
        // nodePortAddresses no node address is in: 1.24 to 1.26 write no NodePort rule.
        Behaviour::NodePortRulesNeedNodeAddress => {
            w(dataplane("nodePortAddresses: [203.0.113.0/24]", "  type: NodePort"))
        }
        // External IPs written with a leading zero: as written to 1.29, parsed from 1.30.
        Behaviour::ServiceIpsAsWritten => {
            w(dataplane("", "  externalIPs: [192.0.2.010]"))
        }
        // A CIDR of the other family only: 1.26 filtered it out (so every address), 1.27 keeps
        // it and skips it (no NodePort address), 1.28 filters by family again.
        Behaviour::NodePortAddressesUnfiltered => {
            w(dataplane("nodePortAddresses: [\"fd00::/64\"]", "  type: NodePort"))
        }
        // A dual-stack node and load balancer whose source ranges hold the node's addresses:
        // the rule letting the node itself through needs kube-proxy's node IP of the family,
        // the bind address's to 1.27 (none), the primary family's only in 1.28, both from 1.29.
        Behaviour::NodeIpPrimaryFamilyOnly => w(format!(
            "apiVersion: svclab.dev/v1alpha1
kind: ClusterProfile
kubernetesVersion: \"RELEASE\"
serviceClusterIPRanges: [10.96.0.0/12, \"fd00:10:96::/112\"]
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clusterCIDR: 10.244.0.0/16,fd00:10:244::/56
---
apiVersion: v1
kind: Node
metadata: {{name: node-a}}
status: {{addresses: [{{type: InternalIP, address: 192.168.0.10}}, {{type: InternalIP, address: \"fd00::10\"}}]}}
---
{SERVICE}spec:
  type: LoadBalancer
  ipFamilyPolicy: RequireDualStack
  loadBalancerSourceRanges: [192.168.0.0/24, \"fd00::/64\"]
  selector: {{app: web}}
  ports: [{{name: http, port: 80, targetPort: 8080}}]
status: {{loadBalancer: {{ingress: [{{ip: 192.0.2.50}}, {{ip: \"2001:db8::50\"}}]}}}}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: web-4, namespace: default, labels: {{kubernetes.io/service-name: web}}}}
addressType: IPv4
ports: [{{name: http, port: 8080, protocol: TCP}}]
endpoints: [{{addresses: [10.244.0.5], nodeName: node-a}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: web-6, namespace: default, labels: {{kubernetes.io/service-name: web}}}}
addressType: IPv6
ports: [{{name: http, port: 8080, protocol: TCP}}]
endpoints: [{{addresses: [\"fd00:10:244::5\"], nodeName: node-a}}]
"
        )),
        // A zero prefix written with another address: zero by its text to 1.33, by its
        // length from 1.34; and in 1.27 alone, skipped once parsed.
        Behaviour::ZeroCidrByText | Behaviour::ZeroPrefixMatchesNothing => {
            w(dataplane("nodePortAddresses: [192.168.0.9/0]", "  type: NodePort"))
        }
        // The rows the table gained later find their witness among the generated scenarios.
        _ => None,
    }
}

/// The generated scenarios searched for a witness of a row the table above does not list:
/// kube-apiserver cases and kube-proxy cases of the oracle's generator, at the older release.
fn generated(minor: u32) -> Vec<String> {
    let text = |objects: Vec<Value>| {
        let documents: Vec<String> = objects
            .into_iter()
            .map(|mut o| {
                if o["kind"] == "ClusterProfile" {
                    o["kubernetesVersion"] = Value::String("RELEASE".into());
                }
                o.to_string()
            })
            .collect();
        documents.join("\n---\n") + "\n"
    };
    let mut out = Vec::new();
    for index in 0..24 {
        out.push(text(svclab_scenario_gen::variety::apiserver_case(36, minor, index).objects));
        out.push(text(svclab_scenario_gen::variety::proxy_case(36, minor, index).0.objects));
    }
    out
}

/// The releases a change can happen between, in order: every minor (its newest checked patch),
/// and around every backport the kube-proxy table names, the patch before it and the patch.
fn release_points(patches: bool) -> Vec<Version> {
    let mut points: Vec<Version> = (crate::OLDEST_MINOR..=crate::NEWEST_MINOR)
        .map(|minor| Version { minor, patch: None })
        .collect();
    for (behaviour, ..) in release_rows().filter(|_| patches) {
        for (minor, patch) in backports(behaviour) {
            points.push(Version { minor, patch: Some(patch - 1) });
            points.push(Version { minor, patch: Some(patch) });
        }
    }
    points.sort_by_key(|v| (v.minor, v.modelled().patch));
    points.dedup();
    points
}

/// The backports of a kube-proxy row, read through `holds_at` (a patch where the row holds
/// before its first minor).
fn backports(behaviour: Behaviour) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for &(minor, _) in &crate::CHECKED_RELEASES {
        let newest = Version { minor, patch: None }.modelled().patch.unwrap_or(0);
        let holds =
            |patch| crate::proxy::holds_at(behaviour, Version { minor, patch: Some(patch) });
        if (1..=newest).any(|p| holds(p) && !holds(p - 1)) {
            let first = (1..=newest).find(|p| holds(*p) && !holds(*p - 1)).unwrap_or(0);
            out.push((minor, first));
        }
    }
    out
}

/// The boundaries of a behaviour over the release points (with the backports' patches when
/// `patches`): adjacent points where `holds` differs, as (older, newer).
fn boundaries(holds: &dyn Fn(Version) -> bool, patches: bool) -> Vec<(Version, Version)> {
    let points = release_points(patches);
    points.windows(2).filter(|p| holds(p[0]) != holds(p[1])).map(|p| (p[0], p[1])).collect()
}

/// A release point next to a boundary where the behaviour does not change: after its newer
/// side, else before its older side.
fn quiet(
    holds: &dyn Fn(Version) -> bool,
    (a, b): (Version, Version),
    patches: bool,
) -> Option<(Version, Version)> {
    let points = release_points(patches);
    let at = |v: Version| points.iter().position(|p| *p == v);
    let (i, j) = (at(a)?, at(b)?);
    if let Some(next) = points.get(j + 1)
        && holds(*next) == holds(b)
    {
        return Some((b, *next));
    }
    let previous = points.get(i.checked_sub(1)?)?;
    (holds(*previous) == holds(a)).then_some((*previous, a))
}

/// The checks of one row: at each boundary the witness's findings cite it (both ways unless
/// the witness says otherwise); across a quiet neighbour they do not. Returns what failed.
fn check_row(
    id: &str,
    holds: &dyn Fn(Version) -> bool,
    witness: Option<Witness>,
    patches: bool,
) -> Vec<String> {
    let mut failures = Vec::new();
    for (a, b) in boundaries(holds, patches) {
        let (from, to) = (a.to_string(), b.to_string());
        let found = witness.clone().or_else(|| {
            generated(a.minor)
                .into_iter()
                .map(|s| Witness { scenario: s, ..Witness::default() })
                .find(|w| {
                    let rehearsal = Rehearsal {
                        scenario: &w.scenario,
                        from: &from,
                        to: &to,
                        ..Rehearsal::default()
                    };
                    !citing(&rehearsal.run(), id).is_empty()
                })
        });
        let Some(witness) = found else {
            failures.push(format!(
                "{id}: no witness crosses {from} → {to} (write one in upgrade/tests/tables.rs)"
            ));
            continue;
        };
        let mut runs = vec![(from.clone(), to.clone())];
        // Before 1.29 kube-proxy has no nftables mode to roll back to: what it says of one is
        // its gate's finding (featureGates), not a row's.
        let no_nftables_before = witness.scenario.contains("mode: nftables") && a.minor < 29;
        if !witness.forward_only && !no_nftables_before {
            runs.push((to.clone(), from.clone()));
        }
        for (x, y) in runs {
            let report = Rehearsal {
                scenario: &witness.scenario,
                from: &x,
                to: &y,
                to_profile: witness.to_profile.clone(),
                ..Rehearsal::default()
            }
            .run();
            if citing(&report, id).is_empty() {
                failures.push(format!(
                    "{id}: crossing {x} → {y} cites nothing of it:\n{}",
                    report.to_text()
                ));
            }
        }
        if let Some((x, y)) = quiet(holds, (a, b), patches) {
            let (x, y) = (x.to_string(), y.to_string());
            let report = Rehearsal {
                scenario: &witness.scenario,
                from: &x,
                to: &y,
                to_profile: witness.to_profile.clone(),
                ..Rehearsal::default()
            }
            .run();
            let cited = citing(&report, id);
            if !cited.is_empty() {
                failures
                    .push(format!("{id}: {x} → {y} does not cross it, yet: {}", cited[0].message));
            }
        }
    }
    failures
}

#[test]
fn every_validation_and_warning_row_is_found_where_an_upgrade_crosses_it() {
    let mut failures = Vec::new();
    for (_, rows) in TABLES {
        for row in rows.iter() {
            let id = format!("validation:{:?}", row.id);
            if UNOBSERVABLE.iter().any(|(u, _)| *u == id) {
                assert!(
                    validation_witness(row.id).is_none(),
                    "{id} has a witness and is listed as unobservable"
                );
                continue;
            }
            let holds = |v: Version| in_force(row.id, v.minor);
            failures.extend(check_row(&id, &holds, validation_witness(row.id), false));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_kube_proxy_row_is_found_where_an_upgrade_crosses_it() {
    let mut failures = Vec::new();
    for (behaviour, ..) in release_rows() {
        let id = format!("proxy:{behaviour:?}");
        if UNOBSERVABLE.iter().chain(UNOBSERVABLE_PROXY).any(|(u, _)| *u == id) {
            continue;
        }
        let holds = |v: Version| crate::proxy::holds_at(behaviour, v);
        failures.extend(check_row(&id, &holds, proxy_witness(behaviour), true));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// kube-apiserver's and kube-proxy's gates: where a default changes, an empty cluster's
/// rehearsal says so; where a gate goes (or locks the other way), a profile that sets it breaks.
#[test]
fn every_gate_change_is_found_where_an_upgrade_crosses_it() {
    let mut failures = Vec::new();
    let tables: [(&str, &[crate::profile::Gate]); 2] =
        [("gate", crate::profile::gates()), ("proxyGate", crate::proxy::own_gates())];
    for (kind, gates) in tables {
        for gate in gates {
            let id = format!("{kind}:{}", gate.name);
            let default = |v: Version| gate.default_at(v.minor);
            failures.extend(check_row(&id, &default, w(""), false));
            // Set to its value where it exists: refused where it is gone or locked otherwise.
            let refused = |v: Version, value: bool| gate.refusal(value, v.minor).is_some();
            for value in [true, false] {
                let setting = match kind {
                    "gate" => format!(
                        "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"RELEASE\"\nfeatureGates: {{{}: {value}}}\n",
                        gate.name
                    ),
                    _ => format!(
                        "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nfeatureGates: {{{}: {value}}}\n",
                        gate.name
                    ),
                };
                for (a, b) in boundaries(&|v| refused(v, value), false) {
                    // Accepted on the older side, refused on the newer (or the other way): the
                    // side that refuses breaks.
                    let (ok, bad) = if refused(a, value) { (b, a) } else { (a, b) };
                    let report = Rehearsal {
                        scenario: &setting,
                        from: &ok.to_string(),
                        to: &bad.to_string(),
                        ..Rehearsal::default()
                    }
                    .run();
                    let breaks = citing(&report, &id)
                        .into_iter()
                        .any(|f| f.severity == crate::Impact::Breaks);
                    if !breaks {
                        failures.push(format!(
                            "{id}={value}: {ok} → {bad} does not break:\n{}",
                            report.to_text()
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_allocator_behaviour_is_found_where_an_upgrade_crosses_it() {
    let services = "apiVersion: v1\nkind: Service\nmetadata: {name: dns, namespace: default}\nspec:\n  type: NodePort\n  clusterIP: 10.96.0.10\n  ports: [{port: 53, nodePort: 30053}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec:\n  ports: [{port: 80}]\n";
    let small = format!(
        "apiVersion: svclab.dev/v1alpha1\nkind: ClusterProfile\nkubernetesVersion: \"RELEASE\"\nserviceClusterIPRanges: [10.96.0.0/28]\n---\n{}",
        services.replace("10.96.0.10", "10.96.0.5")
    );
    let mut failures = Vec::new();
    for (id, decides, _) in ALLOCATION {
        let holds = |v: Version| decides(&Profile::for_version(v));
        let witness =
            if id == "allocation:smallRangeRule" { w(small.clone()) } else { w(services) };
        failures.extend(check_row(id, &holds, witness, true));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The rows listed as unobservable exist, so the lists do not rot.
#[test]
fn unobservable_rows_exist() {
    for id in UNOBSERVABLE.iter().chain(UNOBSERVABLE_PROXY).map(|(id, _)| id) {
        let validation = TABLES
            .iter()
            .flat_map(|(_, rows)| rows.iter())
            .any(|r| format!("validation:{:?}", r.id) == *id);
        let proxy = release_rows().any(|(b, ..)| format!("proxy:{b:?}") == *id);
        assert!(validation || proxy, "{id} is in no table");
    }
}

/// Every witness, rehearsed from its release to the same release and mode: nothing.
#[test]
fn a_release_to_itself_finds_nothing() {
    let mut witnesses: Vec<Witness> = TABLES
        .iter()
        .flat_map(|(_, rows)| rows.iter())
        .filter_map(|row| validation_witness(row.id))
        .collect();
    witnesses.extend(release_rows().filter_map(|(b, ..)| proxy_witness(b)));
    for minor in [24, 29, 33, 37] {
        let release = format!("1.{minor}");
        for witness in &witnesses {
            let report = Rehearsal {
                scenario: &witness.scenario,
                from: &release,
                to: &release,
                ..Rehearsal::default()
            }
            .run();
            assert!(report.findings.is_empty(), "{release} → {release}:\n{}", report.to_text());
        }
    }
}

/// The mode of a scenario does not matter to the walk above; a mode switch at one release
/// cites the switch.
#[test]
fn a_mode_switch_cites_the_switch() {
    let scenario = dataplane("", "  type: NodePort");
    let report = Rehearsal {
        scenario: &scenario,
        from: "1.33",
        to: "1.33",
        mode: Some(ProxyMode::Nftables),
        ..Rehearsal::default()
    }
    .run();
    assert!(!report.findings.is_empty());
    assert!(report.findings.iter().all(|f| f.causes == ["mode"]), "{}", report.to_text());
}
