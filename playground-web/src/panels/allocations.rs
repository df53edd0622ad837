//! Allocations panel: a table of what every Service got, and a map of each service range (and
//! the NodePort range) drawing the static and dynamic bands and every allocated address.
//!
//! A band smaller than a fifth of its range is drawn wider than to scale (the static band of a
//! /12 is 256 of a million addresses); the map says so.

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::state::Shared;
use svclab_core::{AllocationReport, BandReport, PortReport, Report, ServiceReport, Severity};
use yew::prelude::*;

/// Props of [`AllocationsPanel`].
#[derive(Properties, Clone, PartialEq)]
pub(crate) struct AllocationsProps {
    /// The report.
    pub(crate) report: Shared<Report>,
}

/// Least share of the map width a non-empty static band gets.
const MIN_STATIC_SHARE: f64 = 0.2;

/// One address or port drawn on a map.
struct Mark<'r> {
    /// Offset from the range's first value.
    offset: f64,
    /// `requested`, `dynamic` or `failed`.
    kind: &'static str,
    /// The Service's namespace and name, and what its tooltip says of it.
    service: (&'r str, &'r str),
    title: Title<'r>,
}

/// What a mark's tooltip says, written only for the marks drawn (a cluster has tens of
/// thousands of marks, and a map draws at most about a thousand).
enum Title<'r> {
    /// A rejected Service's requested address, and why it failed.
    Failed {
        ip: &'r str,
        reasons: &'r [&'r str],
    },
    Allocated(&'r AllocationReport),
    NodePort(&'r PortReport),
}

impl Mark<'_> {
    fn title(&self) -> String {
        let (namespace, name) = self.service;
        match &self.title {
            Title::Failed { ip, reasons } => {
                format!("{namespace}/{name}: {ip} failed: {}", reasons.join("; "))
            }
            Title::Allocated(allocation) => {
                let how = if allocation.requested { "requested" } else { "picked dynamically" };
                let (ip, band) = (&allocation.ip, &allocation.band);
                format!("{namespace}/{name}: {ip} ({how}, {band} band)")
            }
            Title::NodePort(port) => format!(
                "{namespace}/{name}: nodePort {} ({} band)",
                port.node_port, port.node_port_band
            ),
        }
    }
}

/// A range drawn as a bar.
struct RangeMap<'r> {
    title: String,
    /// Number of values along the axis (first..=last).
    span: f64,
    first_label: String,
    /// `static band 10.96.0.1–10.96.0.16 · dynamic band ...` (empty without bands).
    bands_label: String,
    last_label: String,
    /// Static band as (offset of first, offset after last).
    static_band: Option<(f64, f64)>,
    dynamic_band: Option<(f64, f64)>,
    marks: Vec<Mark<'r>>,
}

impl RangeMap<'_> {
    /// Map position in [0, 1] of an offset, with the static band widened when tiny.
    fn position(&self, offset: f64) -> f64 {
        let Some((_, static_end)) = self.static_band else { return offset / self.span };
        let real_share = static_end / self.span;
        if real_share >= MIN_STATIC_SHARE || static_end <= 0.0 {
            return offset / self.span;
        }
        if offset <= static_end {
            offset / static_end * MIN_STATIC_SHARE
        } else {
            MIN_STATIC_SHARE
                + (offset - static_end) / (self.span - static_end) * (1.0 - MIN_STATIC_SHARE)
        }
    }

    fn widened(&self) -> bool {
        self.static_band.is_some_and(|(_, end)| end > 0.0 && end / self.span < MIN_STATIC_SHARE)
    }
}

fn ip_value(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

/// (network value, number of addresses) of a CIDR.
fn cidr_bounds(cidr: &str) -> Option<(u128, u128, bool)> {
    let (addr, prefix) = cidr.split_once('/')?;
    let ip: IpAddr = addr.parse().ok()?;
    let prefix: u32 = prefix.parse().ok()?;
    let bits: u32 = if ip.is_ipv4() { 32 } else { 128 };
    let host_bits = bits.checked_sub(prefix)?;
    let size = if host_bits >= 127 { u128::MAX / 2 } else { 1u128 << host_bits };
    Some((ip_value(ip) & !(size - 1), size, ip.is_ipv4()))
}

fn ip_offset(ip: &str, network: u128, size: u128) -> Option<f64> {
    let value = ip_value(ip.parse().ok()?);
    let offset = value.checked_sub(network)?;
    #[expect(clippy::cast_precision_loss, reason = "map positions need no exact offsets")]
    (offset < size).then_some(offset as f64)
}

/// Failure reasons of the rejected Services (their error diagnostics), by namespace and name,
/// read in one pass over the diagnostics (a cluster can reject thousands).
type Reasons<'r> = BTreeMap<(&'r str, &'r str), Vec<&'r str>>;

fn failure_reasons(report: &Report) -> Reasons<'_> {
    let mut reasons = Reasons::new();
    for d in report.diagnostics.iter().filter(|d| d.severity == Severity::Error) {
        if let Some(o) = d.object.as_ref().filter(|o| o.kind == "Service") {
            reasons.entry((o.namespace.as_str(), o.name.as_str())).or_default().push(&d.message);
        }
    }
    reasons
}

/// The reasons of one Service.
fn reasons_of<'r>(reasons: &'r Reasons<'r>, service: &'r ServiceReport) -> &'r [&'r str] {
    reasons.get(&(service.namespace.as_str(), service.name.as_str())).map_or(&[], Vec::as_slice)
}

fn band_offsets(
    band: Option<&BandReport>,
    origin: impl Fn(&str) -> Option<f64>,
) -> Option<(f64, f64)> {
    let band = band?;
    Some((origin(&band.first)?, origin(&band.last)? + 1.0))
}

fn ip_maps<'r>(report: &'r Report, all_reasons: &'r Reasons<'r>) -> Vec<RangeMap<'r>> {
    let mut maps = Vec::new();
    for range in &report.ranges {
        let Some((network, size, _)) = cidr_bounds(&range.cidr) else { continue };
        let offset = |ip: &str| ip_offset(ip, network, size);
        let mut marks = Vec::new();
        for service in &report.services {
            let key = (service.namespace.as_str(), service.name.as_str());
            if service.outcome == "rejected" {
                let reasons = reasons_of(all_reasons, service);
                for ip in &service.cluster_ips {
                    if let Some(o) = offset(ip) {
                        marks.push(Mark {
                            offset: o,
                            kind: "failed",
                            service: key,
                            title: Title::Failed { ip, reasons },
                        });
                    }
                }
                continue;
            }
            if service.outcome == "deleted" {
                continue;
            }
            for allocation in &service.allocations {
                let Some(o) = offset(&allocation.ip) else { continue };
                let kind = if allocation.requested { "requested" } else { "dynamic" };
                marks.push(Mark {
                    offset: o,
                    kind,
                    service: key,
                    title: Title::Allocated(allocation),
                });
            }
        }
        #[expect(clippy::cast_precision_loss, reason = "map positions need no exact offsets")]
        let span = size as f64;
        let last = network + size - 1;
        let last_label = if range.family == "IPv4" {
            u32::try_from(last).map(|v| std::net::Ipv4Addr::from(v).to_string()).unwrap_or_default()
        } else {
            std::net::Ipv6Addr::from(last).to_string()
        };
        maps.push(RangeMap {
            title: format!(
                "{} ({}, {} allocator): {} used of {}",
                range.cidr, range.family, range.allocator, range.used, range.size
            ),
            span,
            first_label: range.cidr.split('/').next().unwrap_or_default().to_owned(),
            bands_label: bands_label(range.static_band.as_ref(), range.dynamic_band.as_ref()),
            last_label,
            static_band: band_offsets(range.static_band.as_ref(), offset),
            dynamic_band: band_offsets(range.dynamic_band.as_ref(), offset),
            marks,
        });
    }
    maps
}

fn port_map(report: &Report) -> Option<RangeMap<'_>> {
    let range = &report.node_port_range;
    let (first, last) = range.range.split_once('-')?;
    let (first, last): (u32, u32) = (first.parse().ok()?, last.parse().ok()?);
    let offset =
        |port: &str| port.parse::<u32>().ok().and_then(|p| p.checked_sub(first)).map(f64::from);
    let mut marks = Vec::new();
    for service in
        report.services.iter().filter(|s| s.outcome != "deleted" && s.outcome != "rejected")
    {
        for port in service.ports.iter().filter(|p| p.node_port != 0) {
            let Some(o) = port.node_port.checked_sub(first).map(f64::from) else { continue };
            marks.push(Mark {
                offset: o,
                kind: "dynamic",
                service: (service.namespace.as_str(), service.name.as_str()),
                title: Title::NodePort(port),
            });
        }
    }
    Some(RangeMap {
        title: format!("NodePorts {}: {} used of {}", range.range, range.used, range.size),
        span: f64::from(last - first + 1),
        first_label: first.to_string(),
        bands_label: bands_label(range.static_band.as_ref(), range.dynamic_band.as_ref()),
        last_label: last.to_string(),
        static_band: band_offsets(range.static_band.as_ref(), offset),
        dynamic_band: band_offsets(range.dynamic_band.as_ref(), offset),
        marks,
    })
}

fn bands_label(static_band: Option<&BandReport>, dynamic_band: Option<&BandReport>) -> String {
    let mut parts = Vec::new();
    if let Some(b) = static_band {
        parts.push(format!("static band {}–{}", b.first, b.last));
    }
    match (static_band, dynamic_band) {
        (Some(_), Some(b)) => parts.push(format!("dynamic band {}–{}", b.first, b.last)),
        (None, Some(b)) => parts.push(format!(
            "no static band: dynamic picks may take any address of {}–{}, including ones meant for manual use",
            b.first, b.last
        )),
        _ => {}
    }
    parts.join(" · ")
}

fn percent(value: f64) -> String {
    format!("{:.3}%", (value * 100.0).clamp(0.0, 100.0))
}

/// Most marks a map draws one by one; past it, marks of one kind that fall on the same
/// thousandth of the bar are drawn as one (a 10,000-Service cluster would otherwise put 10,000
/// elements on a bar some 700 pixels wide), its title saying how many it stands for.
const MAX_MARKS: usize = 500;

/// The marks to draw: (position in [0, 1], kind, title).
fn drawn_marks(map: &RangeMap<'_>) -> Vec<(f64, &'static str, String)> {
    if map.marks.len() <= MAX_MARKS {
        return map.marks.iter().map(|m| (map.position(m.offset), m.kind, m.title())).collect();
    }
    let mut buckets: BTreeMap<(u32, &'static str), (f64, &Mark<'_>, usize)> = BTreeMap::new();
    for m in &map.marks {
        let position = map.position(m.offset);
        #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "in [0, 1000]")]
        let bucket = (position * 1000.0).round() as u32;
        buckets.entry((bucket, m.kind)).or_insert((position, m, 0)).2 += 1;
    }
    buckets
        .into_iter()
        .map(|((_, kind), (position, title, n))| {
            let title = match n {
                1 => title.title(),
                _ => format!("{} and {} more here", title.title(), n - 1),
            };
            (position, kind, title)
        })
        .collect()
}

fn draw(map: &RangeMap<'_>, index: usize) -> Html {
    let band = |b: Option<(f64, f64)>, class: &'static str, label: &'static str| match b {
        Some((start, end)) => {
            let left = map.position(start);
            let right = map.position(end);
            html! {
                <div class={classes!("band", class)} style={format!("left:{};width:{}", percent(left), percent(right - left))}>
                    <span>{label}</span>
                </div>
            }
        }
        None => html! {},
    };
    html! {
        <figure class="range-map" id={format!("range-map-{index}")}>
            <figcaption>{map.title.clone()}</figcaption>
            <div class="bar" role="img" aria-label={format!("{}: {} addresses marked", map.title, map.marks.len())}
                data-static-band={map.static_band.is_some().to_string()}>
                { band(map.static_band, "static", "static") }
                { band(map.dynamic_band, "dynamic", if map.static_band.is_some() { "dynamic" } else { "one band (no static/dynamic split)" }) }
                if map.static_band.is_none() && map.dynamic_band.is_none() {
                    <div class="band none" style="left:0;width:100%"><span>{"one band (no static/dynamic split)"}</span></div>
                }
                { for drawn_marks(map).into_iter().map(|(position, kind, title)| html! {
                    <div class={classes!("mark", kind)} style={format!("left:{}", percent(position))} {title}></div>
                }) }
            </div>
            <div class="axis"><span>{map.first_label.clone()}</span><span>{map.last_label.clone()}</span></div>
            if !map.bands_label.is_empty() {
                <p class="note bands">{map.bands_label.clone()}</p>
            }
            if map.widened() {
                <p class="note">{"The static band is drawn wider than to scale."}</p>
            }
        </figure>
    }
}

fn node_ports(service: &ServiceReport) -> String {
    let ports: Vec<String> = service
        .ports
        .iter()
        .map(|p| {
            if p.node_port == 0 {
                format!("{}/{}", p.port, p.protocol)
            } else {
                format!("{}:{}/{}", p.port, p.node_port, p.protocol)
            }
        })
        .collect();
    ports.join(", ")
}

/// Rows of the table drawn at first, and added by each "show more": a cluster-sized scenario
/// has thousands of Services, and every edit would redraw them all.
const ROWS_PAGE: usize = 200;

/// The panel.
#[component]
pub(crate) fn AllocationsPanel(props: &AllocationsProps) -> Html {
    let report = &props.report;
    let shown = use_state(|| ROWS_PAGE);
    let reasons = failure_reasons(report);
    let maps = ip_maps(report, &reasons);
    let total = report.services.len();
    html! {
        <div class="allocations">
            <div class="legend" aria-hidden="true">
                <span><span class="key static"></span>{"static band"}</span>
                <span><span class="key dynamic"></span>{"dynamic band"}</span>
                <span><span class="mark-key requested"></span>{"requested"}</span>
                <span><span class="mark-key dynamic"></span>{"dynamic pick"}</span>
                <span><span class="mark-key failed"></span>{"failed request"}</span>
            </div>
            { for maps.iter().enumerate().map(|(i, m)| draw(m, i)) }
            { port_map(report).map(|m| draw(&m, maps.len())).unwrap_or_default() }
            <div class="table-wrap">
            <table id="allocation-table">
                <thead><tr><th>{"Service"}</th><th>{"type"}</th><th>{"outcome"}</th><th>{"ClusterIPs"}</th><th>{"ports"}</th></tr></thead>
                <tbody>
                { for report.services.iter().take(*shown).map(|s| {
                    let reasons = reasons_of(&reasons, s);
                    html! {
                        <tr class={s.outcome.clone()}>
                            <td>{format!("{}/{}", s.namespace, s.name)}</td>
                            <td>{s.type_.clone()}</td>
                            <td>{s.outcome.clone()}</td>
                            <td>
                                { for s.allocations.iter().map(|a| html! {
                                    <div class="alloc">
                                        <code>{a.ip.clone()}</code>
                                        <span class={classes!("pill", a.band.clone())}>{a.band.clone()}</span>
                                        <span class="how">{if a.requested { "requested" } else { "dynamic" }}</span>
                                    </div>
                                }) }
                                if s.allocations.is_empty() && s.outcome == "rejected" {
                                    { for s.cluster_ips.iter().map(|ip| html! { <div class="alloc"><code>{ip.clone()}</code>{" requested"}</div> }) }
                                }
                                { for reasons.iter().map(|r| html! { <div class="reason">{*r}</div> }) }
                            </td>
                            <td>{node_ports(s)}</td>
                        </tr>
                    }
                }) }
                if total > *shown {
                    <tr class="more"><td colspan="5">
                        { super::show_more("allocation-more", &shown, ROWS_PAGE,
                            format!("Show {} more ({} of {total} Services shown)", ROWS_PAGE.min(total - *shown), *shown)) }
                    </td></tr>
                }
                </tbody>
            </table>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A /20 with `n` dynamic picks in its first addresses.
    fn check(n: usize, drawn: usize) {
        let picks: Vec<AllocationReport> = (0..n)
            .map(|i| AllocationReport {
                ip: format!("pick {i}"),
                band: "dynamic".to_owned(),
                requested: false,
            })
            .collect();
        let map = RangeMap {
            title: String::new(),
            span: 4096.0,
            first_label: String::new(),
            bands_label: String::new(),
            last_label: String::new(),
            static_band: None,
            dynamic_band: None,
            #[expect(clippy::cast_precision_loss, reason = "small offsets")]
            marks: picks
                .iter()
                .enumerate()
                .map(|(i, pick)| Mark {
                    offset: i as f64,
                    kind: "dynamic",
                    service: ("ns", "svc"),
                    title: Title::Allocated(pick),
                })
                .collect(),
        };
        let marks = drawn_marks(&map);
        assert_eq!(marks.len(), drawn);
        // Every mark is accounted for in a title.
        let stood_for: usize = marks
            .iter()
            .map(|(_, _, t)| {
                t.split(" and ")
                    .nth(1)
                    .and_then(|r| r.split(' ').next())
                    .map_or(1, |k| k.parse::<usize>().map_or(1, |k| k + 1))
            })
            .sum();
        assert_eq!(stood_for, n);
    }

    #[test]
    fn a_crowded_bar_draws_one_mark_per_thousandth() {
        check(MAX_MARKS, MAX_MARKS);
        // 4,000 picks over 4,096 addresses: a thousandth holds about four.
        check(4_000, 977);
    }
}
