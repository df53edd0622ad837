//! The probes of one case, planned before the kernel is touched: where each comes from (the
//! node, a pod, clients outside), what it must do by the case's oracle (the hand-worked table,
//! `svclab trace` cross-checked with the other backend and the table, or nothing at all for the
//! control), and where the oracles disagree.

use std::net::{IpAddr, SocketAddr};

use svclab_core::World;

use super::{CaseDef, Oracle, Prepared, describe_expect, same_expectation};
use crate::bootstrap;
use crate::case::{Expect, Family, Mode, Probe, Role, Target, cidr_span, offset};
use crate::svclab;
use crate::topology::if_name;

/// Where a case's probes come from: the node, a pod of the node that is no endpoint, a client
/// outside the cluster, one inside `loadBalancerSourceRanges` and, in the differential run, a
/// pod of another node; each address clear of the scenario's own.
pub(super) struct Sources {
    node: IpAddr,
    pub(super) pod: IpAddr,
    external: IpAddr,
    allowed: Option<IpAddr>,
    /// Inside the cluster CIDR, outside this node's pod CIDR, arriving on a non-pod interface.
    remote_pod: Option<IpAddr>,
    /// The node-side interface of the non-endpoint pod.
    pod_if: String,
}

impl Sources {
    pub(super) fn pick(case: &CaseDef, prepared: &Prepared) -> Sources {
        let model = &prepared.model;
        let mut taken: Vec<IpAddr> = model.pods.iter().map(|p| p.ip).collect();
        taken.push(prepared.node_ip);
        let pod = model.pod_source(prepared.local_cidr, &taken);
        taken.push(pod);
        let external = model.external_source(&taken);
        taken.push(external);
        let allowed = model.allowed_source(&taken);
        let remote_pod = case.light.then(|| match case.family {
            Family::V4 => IpAddr::from([10, 244, 200, 250]),
            Family::V6 => IpAddr::from([0xfd00, 0x10, 0x244, 0xc8, 0, 0, 0, 0xfa_u16]),
        });
        let pod_if = pod_client_if(prepared);
        Sources { node: prepared.node_ip, pod, external, allowed, remote_pod, pod_if }
    }

    /// The address a probe of `role` comes from (an endpoint's is its target's own).
    fn address(&self, role: Role) -> Option<IpAddr> {
        match role {
            Role::Node => Some(self.node),
            Role::Pod => Some(self.pod),
            Role::External => Some(self.external),
            Role::Allowed => self.allowed,
            Role::RemotePod => self.remote_pod,
            Role::Endpoint => None,
        }
    }

    /// The node-side interface a probe of `role` arrives on (for `-i` matches of the
    /// InterfaceNamePrefix detector); `None` for the node's own connections.
    fn interface(&self, role: Role) -> Option<String> {
        match role {
            Role::Node | Role::Endpoint => None,
            Role::Pod => Some(self.pod_if.clone()),
            Role::External => Some(if_name("vcl", 0)),
            Role::Allowed => Some(if_name("vcl", 1)),
            Role::RemotePod => Some(if_name("vcl", 1 + usize::from(self.allowed.is_some()))),
        }
    }

    /// The clients outside the node's pods, in the order of their interfaces.
    pub(super) fn clients(&self) -> Vec<IpAddr> {
        let mut clients = vec![self.external];
        clients.extend(self.allowed);
        clients.extend(self.remote_pod);
        clients
    }
}

/// The probes of a case and what planning them found, before the kernel is touched.
#[derive(Default)]
pub(super) struct Plan {
    pub(super) probes: Vec<Probe>,
    /// The node-side interface each probe arrives on, in the order of `probes`.
    pub(super) interfaces: Vec<Option<String>>,
    /// Where the nftables and iptables traces differ (said, not failed).
    pub(super) notes: Vec<String>,
    /// Where two oracles disagree (failures).
    pub(super) disagreements: Vec<String>,
    /// Probes left out, and why.
    pub(super) skipped: Vec<String>,
}

impl Plan {
    /// Every probe of the case with its expectation: the model's targets, then, when svclab
    /// traces, the service addresses no Service port owns.
    pub(super) fn for_case(
        case: &CaseDef,
        prepared: &Prepared,
        sources: &Sources,
    ) -> Result<Plan, String> {
        let mut plan = Plan::default();
        let localhost = case.mode == Mode::Iptables && prepared.route_localnet();
        for target in prepared.model.targets(prepared.node_ip, localhost, case.light) {
            plan_target(case, prepared, sources, target, &mut plan)?;
        }
        if let Oracle::Trace(world, _) = &prepared.oracle {
            unassigned_probes(world, case, prepared, sources, &mut plan)?;
        }
        Ok(plan)
    }

    fn push(&mut self, probe: Probe, interface: Option<String>) {
        self.probes.push(probe);
        self.interfaces.push(interface);
    }
}

/// Plans the probe of one target, unless it is not probed.
fn plan_target(
    case: &CaseDef,
    prepared: &Prepared,
    sources: &Sources,
    target: Target,
    plan: &mut Plan,
) -> Result<(), String> {
    let Some(src) = target.src.or_else(|| sources.address(target.role)) else { return Ok(()) };
    let role = target.role;
    if role == Role::Endpoint && (src == prepared.node_ip || prepared.node_addresses.contains(&src))
    {
        // A hostNetwork endpoint: its connections are the node's own, probed already.
        return Ok(());
    }
    let in_interface =
        if role == Role::Endpoint { pod_if_of(prepared, src) } else { sources.interface(role) };
    if !prepared.node_known && (role == Role::Node || target.dst.ip() == prepared.node_ip) {
        let what = &target.what;
        plan.skipped
            .push(format!("{what} from {}: the scenario names no node address", role.as_str()));
        return Ok(());
    }
    let Some(expect) = expectation(case, prepared, &target, src, in_interface.as_deref(), plan)?
    else {
        return Ok(());
    };
    let Target { what, dst, udp, .. } = target;
    let dst_is_cluster_ip = what.contains("cluster IP");
    let probe = Probe { what, role, src, dst, expect, dst_is_cluster_ip, udp, light: case.light };
    plan.push(probe, in_interface);
    Ok(())
}

/// The node-side interface of the endpoint pod at `ip`.
fn pod_if_of(prepared: &Prepared, ip: IpAddr) -> Option<String> {
    let index = prepared.model.pods.iter().position(|p| p.ip == ip)?;
    Some(if_name(&prepared.pod_if_prefix, index))
}

/// What the probe of `target` from `src` must do, by the case's oracle; `None` leaves the
/// target out.
fn expectation(
    case: &CaseDef,
    prepared: &Prepared,
    target: &Target,
    src: IpAddr,
    in_interface: Option<&str>,
    plan: &mut Plan,
) -> Result<Option<Expect>, String> {
    let (role, dst) = (target.role, target.dst);
    // Probes beyond the hand tables (hairpin, localhost) are only checked against svclab.
    let extra = role == Role::Endpoint
        || dst.ip().is_loopback()
        || (matches!(role, Role::Node | Role::Pod) && !target.what.ends_with("cluster IP"));
    match &prepared.oracle {
        // The hand tables are TCP only (so are the goldens).
        Oracle::Table(_) | Oracle::Control if target.udp => Ok(None),
        Oracle::Table(id) => match bootstrap::expect(id, role, dst) {
            Ok(expect) => Ok(Some(expect)),
            Err(_) if extra => Ok(None),
            Err(err) => Err(err),
        },
        Oracle::Control if dst.ip().is_loopback() => Ok(None),
        Oracle::Control => Ok(Some(Expect::Unhandled)),
        Oracle::Trace(world, table) => {
            let expect = traced_expectation(
                case.mode,
                world,
                table.as_deref(),
                target,
                src,
                in_interface,
                plan,
            )?;
            // A pod that reaches itself through its Service without masquerading never sees
            // the reply come back through conntrack: kube-proxy's nftables proxier of 1.36 on
            // masquerades hairpin traffic only for endpoints the EndpointSlice puts on this
            // node (the hairpin-connections set), and the topology runs every endpoint pod on
            // the one node whatever its nodeName. Such a probe is left out, with a note.
            let unmasqueraded_hairpin = role == Role::Endpoint
                && matches!(&expect, Expect::Land { endpoints, .. }
                    if endpoints.iter().any(|ep| ep.addr.ip() == src && !ep.masquerade));
            if unmasqueraded_hairpin {
                plan.notes.push(format!(
                    "{} from {}: hairpin without masquerade (the EndpointSlice does not place this pod on the node), not probed",
                    target.what,
                    role.as_str()
                ));
                return Ok(None);
            }
            Ok(Some(expect))
        }
    }
}

/// The expectation `svclab trace` gives, cross-checked: in nftables mode with the iptables
/// trace (a difference is noted), for a golden with its hand-worked table (a difference is a
/// disagreement).
fn traced_expectation(
    mode: Mode,
    world: &World,
    table: Option<&str>,
    target: &Target,
    src: IpAddr,
    in_interface: Option<&str>,
    plan: &mut Plan,
) -> Result<Expect, String> {
    let Target { what, role, dst, affinity, udp, .. } = target;
    let from = role.as_str();
    let report = svclab::trace(world, mode, src, *dst, *udp, in_interface);
    let expect = svclab::expectation(&report, *affinity)
        .map_err(|err| format!("{what} from {from}: {err}\n{}", report.to_text()))?;
    if mode == Mode::Nftables {
        // Where the two backends' traces differ, say so (not an error by itself).
        let ipt = svclab::trace(world, Mode::Iptables, src, *dst, *udp, in_interface);
        if let Ok(other) = svclab::expectation(&ipt, *affinity)
            && !same_expectation(&other, &expect)
        {
            plan.notes.push(format!(
                "{what} from {from}: nftables trace {}, iptables trace {}",
                describe_expect(&expect),
                describe_expect(&other)
            ));
        }
    }
    if let Some(id) = table
        && let Ok(hand) = bootstrap::expect(id, *role, *dst)
        && !same_expectation(&hand, &expect)
    {
        plan.disagreements.push(format!(
            "{what} from {from}: svclab trace says {}, the hand-worked golden expectation says {}",
            describe_expect(&expect),
            describe_expect(&hand)
        ));
    }
    Ok(expect)
}

/// The node-side interface name of the non-endpoint pod.
fn pod_client_if(prepared: &Prepared) -> String {
    prepared
        .bridge
        .clone()
        .unwrap_or_else(|| if_name(&prepared.pod_if_prefix, prepared.model.pods.len()))
}

/// Probes of service addresses no Service port owns: a ClusterIP on a port the Service does not
/// define, and an unallocated address of the service CIDR. Expectations come from the trace of
/// the case's mode, and are cross-checked with what kube-proxy is known to do: iptables mode has
/// no rule for them (the sink refuses them); nftables mode from 1.30 rejects the first and
/// drops the second in its cluster-ips-check chain (pkg/proxy/nftables/proxier.go
/// `setupNFTables`), 1.29's has no such chain.
fn unassigned_probes(
    world: &World,
    case: &CaseDef,
    prepared: &Prepared,
    sources: &Sources,
    plan: &mut Plan,
) -> Result<(), String> {
    let (mode, pod_src) = (case.mode, sources.pod);
    let model = &prepared.model;
    let cluster_ips: Vec<IpAddr> = model.ports.iter().filter_map(|p| p.cluster_ip).collect();
    let pod_if = &sources.pod_if;
    let mut add = |what: String, dst: SocketAddr, nft: Expect| -> Result<(), String> {
        let report = svclab::trace(world, mode, pod_src, dst, false, Some(pod_if));
        let expect = svclab::expectation(&report, false)
            .map_err(|err| format!("{what}: {err}\n{}", report.to_text()))?;
        // 1.29's nftables table has no cluster-ips-check (kubernetes/kubernetes#122692 added
        // it in 1.30), so nothing handles these there either.
        let checks = mode == Mode::Nftables && world.profile.version.minor >= 30;
        let known = if checks { nft } else { Expect::Unhandled };
        if expect != known {
            plan.disagreements.push(format!(
                "{what}: svclab trace says {}, kube-proxy {} mode does {}",
                describe_expect(&expect),
                mode.as_str(),
                describe_expect(&known)
            ));
        }
        let probe = Probe {
            what,
            role: Role::Pod,
            src: pod_src,
            dst,
            expect,
            dst_is_cluster_ip: false,
            udp: false,
            light: case.light,
        };
        plan.push(probe, Some(pod_if.clone()));
        Ok(())
    };
    if let Some(ip) = cluster_ips.first() {
        let used: Vec<u16> = model
            .ports
            .iter()
            .filter(|p| p.cluster_ip == Some(*ip) && !p.udp)
            .map(|p| p.port)
            .collect();
        if let Some(port) = (1..u16::MAX).find(|p| !used.contains(p)) {
            add(
                format!("cluster IP {ip}, port {port} no Service defines"),
                SocketAddr::new(*ip, port),
                Expect::Refused,
            )?;
        }
    }
    if let Some(cidr) = prepared.service_cidr {
        let size = cidr_span(cidr);
        let free = (2..size.min(4096))
            .map(|i| offset(cidr.0, size - i))
            .find(|ip| !cluster_ips.contains(ip));
        if let Some(ip) = free {
            add(
                format!("unallocated service-CIDR address {ip}"),
                SocketAddr::new(ip, 80),
                Expect::Dropped,
            )?;
        }
    }
    Ok(())
}
