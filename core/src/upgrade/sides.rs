//! The two sides of a rehearsal: today's cluster as the scenario gives it, and the target (its
//! release, kube-proxy mode, ClusterProfile, ServiceCIDRs and KubeProxyConfiguration), each as
//! the objects the pipeline evaluates and the profile it evaluates them under.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{UpgradeError, UpgradeOptions};
use crate::diagnostic::{Diagnostic, Severity};
use crate::manifest::{self, Input, Object};
use crate::model::{ClusterProfile, KubeProxyConfiguration, Located, ServiceCidr};
use crate::profile::{NEWEST_MINOR, OLDEST_MINOR, Profile, Version};
use crate::proxy::ProxyMode;

/// One side: what the cluster runs and holds.
#[derive(Debug, Clone)]
pub(crate) struct Side {
    /// The release (as given: a minor, or a patch).
    pub(crate) version: Version,
    /// The profile the pipeline evaluates under.
    pub(crate) profile: Profile,
    /// What reading the ClusterProfile said: today's input mistakes, or the flags the target
    /// kube-apiserver refuses.
    pub(crate) profile_errors: Vec<Diagnostic>,
    /// The scenario's objects as this side evaluates them.
    pub(crate) objects: Vec<Object>,
    /// What decoding the scenario said at this side's release: the same syntax and type
    /// errors on both sides, but the unknown-field warnings of this release's API types and
    /// field validation (none for the apiserver's kinds before ServerSideFieldValidation; see
    /// [`manifest::Scenario`]'s `at_release`).
    pub(crate) decoded: Vec<Diagnostic>,
    /// kube-proxy's mode.
    pub(crate) mode: ProxyMode,
    /// The apiserver feature gates the ClusterProfile sets.
    pub(crate) gates: BTreeMap<String, bool>,
    /// The KubeProxyConfiguration, when there is one.
    pub(crate) kube_proxy: Option<KubeProxyConfiguration>,
    /// The ServiceCIDR objects (name, CIDRs), in stream order.
    pub(crate) service_cidrs: Vec<(String, Vec<String>)>,
}

/// Both sides.
#[derive(Debug, Clone)]
pub(crate) struct Sides {
    pub(crate) from: Side,
    pub(crate) to: Side,
}

impl Sides {
    /// Today's side from the scenario; the target's from the options.
    pub(crate) fn new(inputs: &[Input], options: &UpgradeOptions) -> Result<Sides, UpgradeError> {
        if !(OLDEST_MINOR..=NEWEST_MINOR).contains(&options.to.minor) {
            return Err(UpgradeError::UnsupportedRelease(options.to.to_string()));
        }
        // Read once, decoded at each side's release: kube-apiserver 1.25 warns about an
        // unknown field 1.24 dropped in silence, and a field one release's types lack is
        // unknown there alone.
        let scenario = manifest::read(inputs);
        let objects = scenario.objects.clone();
        let mut from = side(objects.clone(), None);
        from.decoded = scenario.clone().at_release(&from.profile).diagnostics;
        let target = match &options.to_profile {
            Some(input) => Target::read(input)?,
            None => Target::default(),
        };
        let cidrs_replaced = !target.service_cidrs.is_empty();
        let profile = target_profile(&objects, target.profile, options.to)?;
        let mut kube_proxy = target.kube_proxy.or_else(|| last_kube_proxy(&objects).cloned());
        let mode = options
            .proxy_mode
            .or_else(|| kube_proxy.as_ref().map(|k| mode_of(&k.value)))
            .unwrap_or(from.mode);
        if kube_proxy.is_some() || mode != ProxyMode::Iptables {
            let mut located =
                kube_proxy.unwrap_or_else(|| located(KubeProxyConfiguration::default()));
            located.value.mode = mode.as_str().to_owned();
            kube_proxy = Some(located);
        }
        let mut to_objects: Vec<Object> = objects
            .into_iter()
            .filter(|o| match o {
                Object::ClusterProfile(_) | Object::KubeProxyConfiguration(_) => false,
                Object::ServiceCidr(_) => !cidrs_replaced,
                _ => true,
            })
            .collect();
        to_objects.push(Object::ClusterProfile(Arc::new(profile)));
        to_objects
            .extend(target.service_cidrs.into_iter().map(|c| Object::ServiceCidr(Arc::new(c))));
        to_objects.extend(kube_proxy.map(|k| Object::KubeProxyConfiguration(Arc::new(k))));
        let mut to = side(to_objects, Some(mode));
        to.decoded = scenario.at_release(&to.profile).diagnostics;
        Ok(Sides { from, to })
    }
}

/// The side of a list of objects: its profile from its last ClusterProfile, kube-proxy's mode
/// from its last KubeProxyConfiguration (blank: iptables) unless `mode` says.
fn side(objects: Vec<Object>, mode: Option<ProxyMode>) -> Side {
    let cluster_profile = objects.iter().rev().find_map(|o| match o {
        Object::ClusterProfile(p) => Some(&**p),
        _ => None,
    });
    let mut profile_errors = Vec::new();
    let profile = Profile::from_scenario(cluster_profile, &mut profile_errors);
    let gates = cluster_profile.map(|p| p.value.feature_gates.clone()).unwrap_or_default();
    let kube_proxy = last_kube_proxy(&objects).map(|k| k.value.clone());
    let mode = mode.unwrap_or_else(|| kube_proxy.as_ref().map_or(ProxyMode::Iptables, mode_of));
    let service_cidrs = objects
        .iter()
        .filter_map(|o| match o {
            Object::ServiceCidr(c) => Some((c.value.metadata.name.clone(), c.value.cidrs.clone())),
            _ => None,
        })
        .collect();
    Side {
        version: profile.version,
        profile,
        profile_errors,
        objects,
        decoded: Vec::new(),
        mode,
        gates,
        kube_proxy,
        service_cidrs,
    }
}

/// The last KubeProxyConfiguration of the objects.
fn last_kube_proxy(objects: &[Object]) -> Option<&Located<KubeProxyConfiguration>> {
    objects.iter().rev().find_map(|o| match o {
        Object::KubeProxyConfiguration(k) => Some(&**k),
        _ => None,
    })
}

/// kube-proxy's mode as a KubeProxyConfiguration names it: `nftables`, else the iptables mode
/// svclab renders (blank means iptables on Linux; svclab renders no ipvs rules).
fn mode_of(kube_proxy: &KubeProxyConfiguration) -> ProxyMode {
    ProxyMode::parse(&kube_proxy.mode).unwrap_or(ProxyMode::Iptables)
}

/// An object that was not written anywhere.
fn located<T>(value: T) -> Located<T> {
    Located { value, api_version: String::new(), positions: Default::default() }
}

/// What `--to-profile` brings.
#[derive(Default)]
struct Target {
    profile: Option<Located<ClusterProfile>>,
    service_cidrs: Vec<Located<ServiceCidr>>,
    kube_proxy: Option<Located<KubeProxyConfiguration>>,
}

impl Target {
    /// The target profile's documents; a document that cannot be read refuses the rehearsal.
    fn read(input: &Input) -> Result<Target, UpgradeError> {
        let scenario = manifest::parse(std::slice::from_ref(input));
        if let Some(error) = scenario.diagnostics.iter().find(|d| d.severity == Severity::Error) {
            let at = error.source.as_ref().map(|s| format!("{}:{}: ", s.file, s.line));
            return Err(UpgradeError::TargetProfile(format!(
                "{}{}",
                at.unwrap_or_default(),
                error.message
            )));
        }
        let mut target = Target::default();
        for object in scenario.objects {
            match object {
                Object::ClusterProfile(p) => target.profile = Some(Arc::unwrap_or_clone(p)),
                Object::ServiceCidr(c) => target.service_cidrs.push(Arc::unwrap_or_clone(c)),
                Object::KubeProxyConfiguration(k) => {
                    target.kube_proxy = Some(Arc::unwrap_or_clone(k))
                }
                _ => {}
            }
        }
        Ok(target)
    }
}

/// The target's ClusterProfile: `--to-profile`'s, else today's, at release `to` (a
/// `kubernetesVersion` of its own must name the same release).
fn target_profile(
    objects: &[Object],
    given: Option<Located<ClusterProfile>>,
    to: Version,
) -> Result<Located<ClusterProfile>, UpgradeError> {
    if let Some(given) = &given
        && let Some(text) = &given.value.kubernetes_version
    {
        let same = Version::parse(text)
            .is_some_and(|v| v.minor == to.minor && (v.patch == to.patch || to.patch.is_none()));
        if !same {
            return Err(UpgradeError::ConflictingRelease {
                to: to.to_string(),
                profile: text.clone(),
            });
        }
    }
    let release = given
        .as_ref()
        .and_then(|g| g.value.kubernetes_version.as_deref())
        .and_then(Version::parse)
        .filter(|v| to.patch.is_none() && v.minor == to.minor)
        .unwrap_or(to);
    let today = objects.iter().rev().find_map(|o| match o {
        Object::ClusterProfile(p) => Some((**p).clone()),
        _ => None,
    });
    let mut profile = given.or(today).unwrap_or_else(|| located(ClusterProfile::default()));
    profile.value.kubernetes_version = Some(release.to_string());
    Ok(profile)
}
