//! `ranges`: a change of `serviceClusterIPRanges`, the NodePort range or the ServiceCIDR
//! objects, rehearsed as the documented migration (kubernetes.io "Extend Service IP Ranges":
//! add the new ServiceCIDR, delete the old one, which stays terminating while addresses in it
//! are allocated, recreate the Services that hold them), step by step, each step with what
//! kube-apiserver answers.
//!
//! The steps:
//! 1. configure the target: every kube-apiserver restarted with the new flags (what its repair
//!    loops then report is the allocation area's), and new ServiceCIDR objects created;
//! 2. old ServiceCIDR objects deleted (IPAddress allocator only): each is gone at once, or stays
//!    `Terminating` while the Services holding addresses in it exist;
//! 3. each Service holding an address or node port outside the target's ranges recreated:
//!    deleted, then its manifest (the last document that wrote it) created again through the
//!    pipeline at the target; a manifest that pins the old address or port is refused, and is
//!    created once more without the pin;
//! 4. the old ServiceCIDR objects gone, or still terminating (what still holds them).
//!
//! kube-apiserver with the IPAddress allocator never changes an existing default ServiceCIDR
//! (`kubernetes`) when its flags change (pkg/controlplane/controller/defaultservicecidr; from
//! 1.34 it reports `KubernetesDefaultServiceCIDRInconsistent`), so a flag change there is
//! migrated like an object: the old default is deleted and recreated from the flags once gone.

use std::net::IpAddr;
use std::sync::Arc;

use ipnet::IpNet;

use super::apiserver::status_message;
use super::cause::{Cause, Crossed};
use super::report::{Area, Finding, Impact};
use super::sides::Sides;
use crate::diagnostic::{ObjectRef, Severity};
use crate::manifest::Object;
use crate::model::well_known::OPERATION_ANNOTATION;
use crate::model::{Located, Service, ServiceKey};
use crate::net::{IpFamily, parse_cidr_sloppy, parse_ip_sloppy};
use crate::pipeline::write_onward;
use crate::profile::Profile;
use crate::report::Report;
use crate::validation;
use crate::world::World;

/// The ranges findings: the migration's steps, when the target changes a range.
pub(crate) fn findings(sides: &Sides, today: &World, migrated: &World, out: &mut Vec<Finding>) {
    let crossed = Crossed::between(sides);
    let causes: Vec<Cause> = crossed
        .profile
        .iter()
        .filter(|c| {
            matches!(
                c.id.as_str(),
                "profile:serviceClusterIPRanges"
                    | "profile:serviceNodePortRange"
                    | "profile:serviceCIDRs"
            )
        })
        .cloned()
        .collect();
    if causes.is_empty() {
        return;
    }
    let mut steps = Steps { causes, out, release: sides.to.version.to_string() };
    let (from, to) = (&sides.from.profile, &sides.to.profile);
    let objects = to.multi_cidr();
    let old_cidrs = cidrs_of(from, &sides.from.service_cidrs, from.multi_cidr());
    let new_cidrs = cidrs_of(to, &sides.to.service_cidrs, objects);
    // Step 1: the target's configuration.
    if from.service_cluster_ip_ranges != to.service_cluster_ip_ranges {
        let flag = list(&to.service_cluster_ip_ranges);
        let answer = match sides.to.profile_errors.iter().find(|d| d.field == "serviceClusterIPRanges") {
            Some(error) => {
                steps.push(1, None, Impact::Breaks, format!(
                    "restart every kube-apiserver with --service-cluster-ip-range={flag}: it does not start: \"command failed\" err=\"{}\"",
                    error.message
                ));
                return;
            }
            None if objects && from.multi_cidr() => format!(
                "the default ServiceCIDR \"kubernetes\" keeps {} (kube-apiserver does not change an existing default ServiceCIDR{}), so it is migrated like any ServiceCIDR below",
                list(&from.service_cluster_ip_ranges),
                if sides.to.version.minor >= 34 {
                    format!("; it reports KubernetesDefaultServiceCIDRInconsistent: \"The default ServiceCIDR {} does not match the controller flag configurations {}\"", go_list(&from.service_cluster_ip_ranges), go_list(&to.service_cluster_ip_ranges))
                } else {
                    String::new()
                }
            ),
            None if objects => format!("it creates the default ServiceCIDR \"kubernetes\" for {flag}"),
            None => "its allocators serve the new range; its repair loop reports every ClusterIP outside it (see allocation)".to_owned(),
        };
        steps.push(
            1,
            None,
            Impact::Note,
            format!(
                "restart every kube-apiserver with --service-cluster-ip-range={flag}: {answer}"
            ),
        );
    }
    if from.service_node_port_range != to.service_node_port_range {
        steps.push(1, None, Impact::Note, format!(
            "restart every kube-apiserver with --service-node-port-range={}: its NodePort repair loop reports every node port outside it (see allocation)",
            to.service_node_port_range
        ));
    }
    if objects {
        for (name, cidrs) in &sides.to.service_cidrs {
            if sides.from.service_cidrs.iter().any(|(n, c)| n == name && c == cidrs) {
                continue;
            }
            let object = crate::model::ServiceCidr {
                metadata: crate::model::ObjectMeta { name: name.clone(), ..Default::default() },
                cidrs: cidrs.clone(),
            };
            let errors = validation::validate_service_cidr_create(&object, to);
            let answer = if errors.is_empty() {
                format!("servicecidr.networking.k8s.io/{name} created")
            } else {
                let object = ObjectRef::new("ServiceCIDR", "", name);
                let json = to.json_field_values();
                let diags: Vec<_> = errors
                    .iter()
                    .map(|e| e.to_diagnostic(&object, &Default::default(), json))
                    .collect();
                let refs: Vec<_> = diags.iter().collect();
                status_message(&object, &refs)
            };
            let impact = if answer.ends_with(" created") { Impact::Note } else { Impact::Breaks };
            steps.push(
                1,
                Some(format!("ServiceCIDR {name}")),
                impact,
                format!("kubectl apply the ServiceCIDR {name} ({}): {answer}", cidrs.join(", ")),
            );
        }
    }
    // Step 2: old ServiceCIDRs deleted (the IPAddress allocator keeps them while in use).
    let removed: Vec<&(String, Vec<IpNet>)> = if objects && from.multi_cidr() {
        old_cidrs
            .iter()
            .filter(|(name, nets)| !new_cidrs.iter().any(|(n, m)| n == name && m == nets))
            .collect()
    } else {
        Vec::new()
    };
    let holders = |nets: &[IpNet]| -> Vec<String> {
        today
            .services
            .iter()
            .filter(|(_, s)| {
                s.service
                    .spec
                    .cluster_ips
                    .iter()
                    .filter_map(|t| parse_ip_sloppy(t))
                    .any(|ip| nets.iter().any(|n| n.contains(&ip)))
            })
            .map(|(k, _)| k.to_string())
            .collect()
    };
    for (name, nets) in &removed {
        let held = holders(nets);
        let state = if held.is_empty() {
            "no address in it is allocated, so it goes at once".to_owned()
        } else {
            format!(
                "it stays Terminating (condition Ready=False, reason Terminating: \"There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR\") while {} Services hold addresses in it: {}",
                held.len(),
                held.join(", ")
            )
        };
        steps.push(2, Some(format!("ServiceCIDR {name}")), Impact::Note, format!(
            "kubectl delete servicecidr {name}: servicecidr.networking.k8s.io \"{name}\" deleted; {state}"
        ));
    }
    // Step 3: recreate what is outside the target's ranges.
    let target_nets: Vec<IpNet> = new_cidrs.iter().flat_map(|(_, n)| n.iter().copied()).collect();
    let mut world = migrated.clone();
    let mut still: Vec<String> = Vec::new();
    for (key, stored) in &today.services {
        let outside_ip = stored.service.needs_cluster_ip()
            && stored
                .service
                .spec
                .cluster_ips
                .iter()
                .filter_map(|t| parse_ip_sloppy(t))
                .any(|ip| !within(&target_nets, ip));
        let outside = |port: i32| {
            port != 0
                && u32::try_from(port).map_or(true, |p| !to.service_node_port_range.contains(p))
        };
        let spec = &stored.service.spec;
        let outside_port =
            spec.ports.iter().any(|p| outside(p.node_port)) || outside(spec.health_check_node_port);
        if !outside_ip && !outside_port {
            continue;
        }
        let Some(manifest) = manifest(&sides.from.objects, key) else { continue };
        let (next, answers, refused) = recreate(world, &stored.service, &manifest);
        world = next;
        if refused {
            still.push(key.to_string());
        }
        let impact =
            if answers.iter().any(|(_, refused)| *refused) { Impact::Breaks } else { Impact::Note };
        let text: Vec<&str> = answers.iter().map(|(a, _)| a.as_str()).collect();
        steps.push(
            3,
            Some(format!("Service {key}")),
            impact,
            format!("recreate the Service: {}", text.join("; then ")),
        );
        if let Some(last) = steps.out.last_mut() {
            last.source = Some(manifest.positions.source_of(""));
        }
    }
    // Step 4: what became of the old ServiceCIDRs.
    for (name, nets) in &removed {
        let held: Vec<String> = holders(nets)
            .into_iter()
            .filter(|h| still.contains(h) || !was_recreated(today, h, &target_nets))
            .collect();
        if holders(nets).is_empty() {
            continue;
        }
        let message = if held.is_empty() {
            format!(
                "ServiceCIDR {name} goes: its last address was released by the recreations (its finalizer networking.k8s.io/service-cidr-finalizer is removed)"
            )
        } else {
            format!("ServiceCIDR {name} stays Terminating: still held by {}", held.join(", "))
        };
        let impact = if held.is_empty() { Impact::Note } else { Impact::Changes };
        steps.push(4, Some(format!("ServiceCIDR {name}")), impact, message);
    }
}

/// Whether a stored Service's addresses were all recreated out of the old ranges (a Service
/// every address of which is inside the target's ranges was not touched by step 3).
fn was_recreated(today: &World, name: &str, target: &[IpNet]) -> bool {
    today.services.iter().find(|(k, _)| k.to_string() == name).is_some_and(|(_, s)| {
        s.service
            .spec
            .cluster_ips
            .iter()
            .filter_map(|t| parse_ip_sloppy(t))
            .any(|ip| !within(target, ip))
    })
}

/// The findings of the steps.
struct Steps<'a> {
    causes: Vec<Cause>,
    out: &'a mut Vec<Finding>,
    release: String,
}

impl Steps<'_> {
    fn push(&mut self, step: u32, object: Option<String>, impact: Impact, message: String) {
        let mut finding = Finding::new(
            Area::Ranges,
            impact,
            format!("{message} (kube-apiserver {})", self.release),
        )
        .caused_by(&self.causes);
        finding.object = object;
        finding.step = Some(step);
        self.out.push(finding);
    }
}

/// The ranges addresses come from: the flag ranges (as the default ServiceCIDR
/// `kubernetes`), and the ServiceCIDR objects when the IPAddress allocator reads them.
fn cidrs_of(
    profile: &Profile,
    objects: &[(String, Vec<String>)],
    reads_objects: bool,
) -> Vec<(String, Vec<IpNet>)> {
    let mut out = vec![("kubernetes".to_owned(), profile.service_cluster_ip_ranges.clone())];
    if reads_objects {
        for (name, cidrs) in objects {
            let nets = cidrs.iter().filter_map(|c| parse_cidr_sloppy(c).map(|(_, n)| n)).collect();
            out.push((name.clone(), nets));
        }
    }
    out
}

fn within(nets: &[IpNet], ip: IpAddr) -> bool {
    nets.iter().any(|n| IpFamily::of_net(n) == IpFamily::of(ip) && n.contains(&ip))
}

fn list(nets: &[IpNet]) -> String {
    nets.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}

/// Go's `%v` of a `[]string` / `[]*net.IPNet`: `[a b]`.
fn go_list(nets: &[IpNet]) -> String {
    format!("[{}]", nets.iter().map(ToString::to_string).collect::<Vec<_>>().join(" "))
}

/// The last document of the scenario that wrote the Service (not a delete).
fn manifest(objects: &[Object], key: &ServiceKey) -> Option<Located<Service>> {
    objects.iter().rev().find_map(|o| match o {
        Object::Service(s)
            if ServiceKey::defaulted(&s.value.metadata) == *key
                && s.value
                    .metadata
                    .annotations
                    .get(OPERATION_ANNOTATION)
                    .is_none_or(|v| v != "delete") =>
        {
            Some((**s).clone())
        }
        _ => None,
    })
}

/// Deletes the stored Service and creates its manifest again; a manifest refused for the
/// address or node port it pins is created once more without them. The world afterwards, each
/// answer with whether it is a refusal, and whether the Service ended up refused.
fn recreate(
    world: World,
    stored: &Service,
    manifest: &Located<Service>,
) -> (World, Vec<(String, bool)>, bool) {
    let mut delete = stored.clone();
    delete.metadata.annotations.insert(OPERATION_ANNOTATION.to_owned(), "delete".to_owned());
    let name = &stored.metadata.name;
    let delete = Object::Service(Arc::new(Located {
        value: delete,
        api_version: "v1".to_owned(),
        positions: manifest.positions.clone(),
    }));
    let (world, _) = write_onward(world, vec![delete]);
    let mut answers =
        vec![(format!("kubectl delete service {name}: service \"{name}\" deleted"), false)];
    let (world, report) = write_onward(world, vec![Object::Service(Arc::new(manifest.clone()))]);
    let (text, refused) = answer(&report, name);
    answers.push((format!("kubectl apply the manifest: {text}"), refused));
    if !refused {
        return (world, answers, false);
    }
    let pinned = !manifest.value.spec.cluster_ip.is_empty()
        && manifest.value.spec.cluster_ip != "None"
        || !manifest.value.spec.cluster_ips.is_empty()
        || manifest.value.spec.ports.iter().any(|p| p.node_port != 0);
    if !pinned {
        return (world, answers, true);
    }
    let mut unpinned = manifest.clone();
    if unpinned.value.spec.cluster_ip != "None" {
        unpinned.value.spec.cluster_ip.clear();
        unpinned.value.spec.cluster_ips.clear();
    }
    for port in &mut unpinned.value.spec.ports {
        port.node_port = 0;
    }
    unpinned.value.spec.health_check_node_port = 0;
    let (world, report) = write_onward(world, vec![Object::Service(Arc::new(unpinned))]);
    let (text, refused) = answer(&report, name);
    answers.push((format!("without its pinned clusterIP and nodePorts: {text}"), refused));
    (world, answers, refused)
}

/// kubectl's answer to one create: `service/x created (clusterIPs …)` or the refusal.
fn answer(report: &Report, name: &str) -> (String, bool) {
    let errors: Vec<_> =
        report.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
    if let (Some(first), false) = (errors.first(), errors.is_empty()) {
        let object = first.object.clone().unwrap_or_else(|| ObjectRef::new("Service", "", name));
        return (status_message(&object, &errors), true);
    }
    let Some(service) = report.services.last() else {
        return (format!("service/{name} created"), false);
    };
    let ports: Vec<String> = service
        .ports
        .iter()
        .filter(|p| p.node_port != 0)
        .map(|p| p.node_port.to_string())
        .collect();
    let ports =
        if ports.is_empty() { String::new() } else { format!(", nodePorts {}", ports.join(", ")) };
    (
        format!(
            "service/{name} {} (clusterIPs {}{ports})",
            service.outcome,
            service.cluster_ips.join(", ")
        ),
        false,
    )
}
