//! Runs every allocation conformance vector (allocation.md §7) as its own test, from the
//! in-repo copy and from the shared conformance directory (where held-out sets are dropped).

use std::collections::BTreeSet;
use std::net::IpAddr;

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use svclab_core::testing::allocation::{
    Bitmap, IpAddressAllocator, IpRange, MetaAllocator, PortAllocator, RangeSnapshot,
    ip_band_offset, ip_offset_for, port_band_offset, range_size,
};
use svclab_core::{CheckOptions, Input, IpFamily, PortRange, Profile, SmallRangeRule, Version};

fn main() {
    let args = Arguments::from_args();
    let mut seen = BTreeSet::new();
    let mut trials = Vec::new();
    let mut files = vec![svclab_tests::data_dir().join("allocation").join("vectors.yaml")];
    if let Some(dir) = svclab_tests::conformance_dir() {
        let mut extra: Vec<_> = std::fs::read_dir(&dir)
            .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        extra.retain(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("allocation") && n.ends_with(".yaml"))
        });
        extra.sort();
        files.extend(extra);
    }
    for file in files {
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(err) => {
                let name = format!("read {}", file.display());
                let msg = err.to_string();
                trials.push(Trial::test(name, move || Err(msg.into())));
                continue;
            }
        };
        let doc: Value = match serde_norway::from_str(&text) {
            Ok(v) => v,
            Err(err) => {
                let msg = format!("{}: {err}", file.display());
                trials.push(Trial::test(format!("parse {}", file.display()), move || {
                    Err(msg.into())
                }));
                continue;
            }
        };
        for vector in doc["vectors"].as_array().cloned().unwrap_or_default() {
            let id = vector["id"].as_str().unwrap_or("?").to_owned();
            if !seen.insert(id.clone()) {
                continue;
            }
            trials.push(Trial::test(id, move || run_vector(&vector)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The profile a vector names (allocation.md §7.1).
fn profile(vector: &Value) -> Result<Profile, Failed> {
    let name = vector["profile"].as_str().unwrap_or("current");
    Ok(match name {
        // The newest release whose default allocator is still the bitmap (1.32).
        "current" => Profile::for_version(Version { minor: 32, patch: None }),
        "k8s-1.24" => Profile::for_version(Version { minor: 24, patch: None }),
        "k8s-1.24-static-subrange" => {
            let mut p = Profile::for_version(Version { minor: 24, patch: None });
            p.set_gate("ServiceIPStaticSubrange", true)?;
            p
        }
        "multicidr" => Profile::for_version(Version { minor: 33, patch: None }),
        other => return Err(format!("unknown profile {other:?}").into()),
    })
}

/// One allocator under test.
enum Target {
    Ip(IpRange),
    Core(Bitmap, svclab_core::testing::allocation::Seeded),
    Port(PortAllocator),
    Object(IpAddressAllocator),
    Meta(MetaAllocator),
    Service { profile: Profile, cluster: Value, services: Vec<Value> },
}

fn run_vector(vector: &Value) -> Result<(), Failed> {
    let kind = vector["kind"].as_str().unwrap_or("");
    let profile = profile(vector)?;
    if let Some(table) = vector["table"].as_array() {
        return check_table(kind, table);
    }
    let mut target = match kind {
        "ip" => Target::Ip(ip_range(vector, &profile)?),
        "ip-core" => {
            let max = vector["core"]["max"].as_u64().ok_or("core.max")? as usize;
            let offset = vector["core"]["offset"].as_u64().ok_or("core.offset")? as usize;
            Target::Core(
                Bitmap::new(max, offset),
                svclab_core::testing::allocation::Seeded::new(profile.seed, "core"),
            )
        }
        "port" => Target::Port(port_allocator(vector, &profile)?),
        "ip-object" => {
            let net = cidr(vector["range"].as_str().ok_or("range")?)?;
            match IpAddressAllocator::new(net, ip_offset_for(&profile, &net), profile.seed) {
                Ok(a) => Target::Object(a),
                Err(err) => {
                    return expect_error(&vector["expect"]["error"], err.kind(), &err.to_string());
                }
            }
        }
        "meta" => {
            let mut cidrs = Vec::new();
            for c in vector["cidrs"].as_array().ok_or("cidrs")? {
                let net = cidr(c.as_str().ok_or("cidr")?)?;
                cidrs.push((net, ip_offset_for(&profile, &net)));
            }
            let family = cidrs.first().map_or(IpFamily::V4, |(n, _)| match n {
                ipnet::IpNet::V4(_) => IpFamily::V4,
                ipnet::IpNet::V6(_) => IpFamily::V6,
            });
            Target::Meta(
                MetaAllocator::new(family, &cidrs, profile.seed).map_err(|e| e.to_string())?,
            )
        }
        "service" => Target::Service {
            profile: profile.clone(),
            cluster: vector["cluster"].clone(),
            services: Vec::new(),
        },
        other => return Err(format!("unknown vector kind {other:?}").into()),
    };
    if let Some(geometry) = vector.get("expect_geometry") {
        check_geometry(&target, geometry)?;
    }
    let mut returned: BTreeSet<String> = BTreeSet::new();
    let mut last_snapshot: Option<(String, Vec<u8>)> = None;
    for (n, step) in vector["steps"].as_array().cloned().unwrap_or_default().iter().enumerate() {
        let op = step["op"].as_str().unwrap_or("");
        let expect = &step["expect"];
        let args: Vec<Value> =
            if let Some([lo, hi]) = step["repeat_args"].as_array().map(Vec::as_slice) {
                expand(lo, hi)?
            } else {
                let repeat = step["repeat"].as_u64().unwrap_or(1);
                (0..repeat).map(|_| step["arg"].clone()).collect()
            };
        for arg in &args {
            run_step(&mut target, op, arg, expect, &mut returned, &mut last_snapshot).map_err(
                |e| format!("step {n} ({op} {arg}): {}", e.message().unwrap_or("failed")),
            )?;
        }
        if op == "check" {
            check_counts(&target, expect)
                .map_err(|e| format!("step {n} (check): {}", e.message().unwrap_or("")))?;
        }
    }
    Ok(())
}

fn cidr(text: &str) -> Result<ipnet::IpNet, Failed> {
    svclab_core::testing::parse_cidr_sloppy(text)
        .map(|(_, n)| n)
        .ok_or_else(|| format!("bad CIDR {text}").into())
}

fn ip_range(vector: &Value, profile: &Profile) -> Result<IpRange, Failed> {
    let net = cidr(vector["range"].as_str().ok_or("range")?)?;
    Ok(IpRange::new(net, ip_offset_for(profile, &net), profile.seed))
}

fn port_allocator(vector: &Value, profile: &Profile) -> Result<PortAllocator, Failed> {
    let text = vector["range"].as_str().ok_or("range")?;
    let range = PortRange::parse(text).ok_or_else(|| format!("bad port range {text}"))?;
    Ok(PortAllocator::new(range, profile.node_port_static_subrange(), profile.seed))
}

fn expand(lo: &Value, hi: &Value) -> Result<Vec<Value>, Failed> {
    if let (Some(a), Some(b)) = (lo.as_u64(), hi.as_u64()) {
        return Ok((a..=b).map(Value::from).collect());
    }
    let (a, b) = (ip(lo)?, ip(hi)?);
    let (a, b) = (numeric(a), numeric(b));
    let family = IpFamily::of(ip(lo)?);
    Ok((a..=b)
        .map(|v| {
            let addr: IpAddr = match family {
                IpFamily::V4 => IpAddr::V4(std::net::Ipv4Addr::from(v as u32)),
                IpFamily::V6 => IpAddr::V6(std::net::Ipv6Addr::from(v)),
            };
            Value::from(addr.to_string())
        })
        .collect())
}

fn ip(v: &Value) -> Result<IpAddr, Failed> {
    let text = v.as_str().ok_or_else(|| format!("expected an address, got {v}"))?;
    svclab_core::testing::parse_ip_sloppy(text).ok_or_else(|| format!("bad address {text}").into())
}

fn numeric(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

/// Orders results of any kind: numbers as numbers, addresses numerically.
fn key(v: &Value) -> Option<u128> {
    if let Some(n) = v.as_u64() {
        return Some(u128::from(n));
    }
    ip(v).ok().map(numeric)
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

type Outcome = Result<Option<Value>, (String, String)>;

fn run_step(
    target: &mut Target,
    op: &str,
    arg: &Value,
    expect: &Value,
    returned: &mut BTreeSet<String>,
    last_snapshot: &mut Option<(String, Vec<u8>)>,
) -> Result<(), Failed> {
    let outcome: Outcome = match (target, op) {
        (Target::Ip(r), "allocate") => {
            r.allocate(ip(arg)?).map(|()| None).map_err(|e| (e.kind().into(), e.to_string()))
        }
        (Target::Ip(r), "allocate_next") => r
            .allocate_next()
            .map(|ip| Some(Value::from(ip.to_string())))
            .map_err(|e| (e.kind().into(), e.to_string())),
        (Target::Ip(r), "release") => {
            r.release(ip(arg)?);
            Ok(None)
        }
        (Target::Ip(r), "has") => Ok(Some(Value::Bool(r.has(ip(arg)?)))),
        (Target::Ip(r), "dry_allocate") => {
            r.dry_allocate(ip(arg)?).map(|()| None).map_err(|e| (e.kind().into(), e.to_string()))
        }
        (Target::Ip(r), "dry_allocate_next") => {
            Ok(Some(Value::from(r.dry_allocate_next().to_string())))
        }
        (Target::Ip(r), "snapshot") => {
            let s = r.snapshot();
            *last_snapshot = Some((s.range.clone(), s.data.clone()));
            check_snapshot(expect, &s.range, &s.data)?;
            return Ok(());
        }
        (Target::Ip(r), "restore") => {
            let (range, data) = snapshot_arg(arg, last_snapshot)?;
            let mut fresh = IpRange::new(r.cidr(), r.offset(), 0);
            let result = fresh.restore(&RangeSnapshot { range, data });
            if result.is_ok() {
                *r = fresh;
            }
            result.map(|()| None).map_err(|e| (e.kind().into(), e.to_string()))
        }
        (Target::Core(b, _), "allocate") => {
            let i = arg.as_u64().ok_or("index")? as usize;
            b.allocate(i).map(|()| None).map_err(|e| (e.kind().into(), e.to_string()))
        }
        (Target::Core(b, rng), "allocate_next") => b
            .allocate_next(rng)
            .map(|i| Some(Value::from(i as u64)))
            .map_err(|e| (e.kind().into(), e.to_string())),
        (Target::Core(b, _), "release") => {
            b.release(arg.as_u64().ok_or("index")? as usize);
            Ok(None)
        }
        (Target::Core(b, _), "has") => {
            Ok(Some(Value::Bool(b.has(arg.as_u64().ok_or("index")? as usize))))
        }
        (Target::Port(p), "allocate") => {
            let port = arg.as_u64().ok_or("port")? as u32;
            p.allocate(port).map(|()| None).map_err(|e| (e.kind().into(), e.to_string()))
        }
        (Target::Port(p), "allocate_next") => p
            .allocate_next()
            .map(|v| Some(Value::from(v)))
            .map_err(|e| (e.kind().into(), e.to_string())),
        (Target::Port(p), "release") => {
            p.release(arg.as_u64().ok_or("port")? as u32);
            Ok(None)
        }
        (Target::Port(p), "has") => {
            Ok(Some(Value::Bool(p.has(arg.as_u64().ok_or("port")? as u32))))
        }
        (Target::Port(p), "dry_allocate") => {
            let port = arg.as_u64().ok_or("port")? as u32;
            p.dry_allocate(port).map(|()| None).map_err(|e| (e.kind().into(), e.to_string()))
        }
        // portallocator's dry run hands out no port (0) and allocates nothing.
        (Target::Port(_), "dry_allocate_next") => Ok(Some(Value::from(0))),
        (Target::Port(p), "snapshot") => {
            let (range, data) = p.snapshot();
            *last_snapshot = Some((range.clone(), data.clone()));
            check_snapshot(expect, &range, &data)?;
            return Ok(());
        }
        (Target::Port(p), "restore") => {
            let (range, data) = snapshot_arg(arg, last_snapshot)?;
            let mut fresh = PortAllocator::new(p.range(), p.offset() > 0, 0);
            let result = fresh.restore(&range, &data);
            if result.is_ok() {
                *p = fresh;
            }
            result.map(|()| None).map_err(|e| (e.kind().into(), e.to_string()))
        }
        (Target::Object(a), "allocate") => {
            a.allocate(ip(arg)?).map(|()| None).map_err(|e| (e.kind().into(), e.to_string()))
        }
        (Target::Object(a), "allocate_next") => a
            .allocate_next()
            .map(|ip| Some(Value::from(ip.to_string())))
            .map_err(|e| (e.kind().into(), e.to_string())),
        (Target::Object(a), "release") => {
            a.release(ip(arg)?);
            Ok(None)
        }
        (Target::Object(a), "has") => Ok(Some(Value::Bool(a.has(ip(arg)?)))),
        (Target::Meta(m), "allocate") => {
            m.allocate(ip(arg)?).map(|()| None).map_err(|e| (e.kind().into(), e.to_string()))
        }
        (Target::Meta(m), "allocate_next") => m
            .allocate_next()
            .map(|ip| Some(Value::from(ip.to_string())))
            .map_err(|e| (e.kind().into(), e.to_string())),
        (Target::Meta(m), "release") => {
            m.release(ip(arg)?).map(|()| None).map_err(|e| (e.kind().into(), e.to_string()))
        }
        (Target::Meta(m), "has") => Ok(Some(Value::Bool(m.has(ip(arg)?)))),
        (Target::Service { profile, cluster, services }, "create_service") => {
            services.push(arg.clone());
            return check_service(profile, cluster, services, expect);
        }
        (_, "check") => return Ok(()),
        (_, other) => {
            return Err(format!("operation {other:?} does not apply to this vector kind").into());
        }
    };
    match outcome {
        Ok(value) => {
            if !expect["error"].is_null() {
                return Err(
                    format!("expected error {}, got success {value:?}", expect["error"]).into()
                );
            }
            if let Some(v) = &value {
                check_value(v, expect, returned)?;
            }
            Ok(())
        }
        Err((kind, message)) => {
            if expect["error"].is_null() {
                return Err(format!("unexpected error {kind}: {message}").into());
            }
            expect_error(&expect["error"], &kind, &message)
        }
    }
}

fn check_value(v: &Value, expect: &Value, returned: &mut BTreeSet<String>) -> Result<(), Failed> {
    if let Some(want) = expect.get("value")
        && key(want) != key(v)
    {
        return Err(format!("value {} != expected {}", text(v), text(want)).into());
    }
    if let Some(want) = expect.get("bool")
        && want != v
    {
        return Err(format!("has = {v}, expected {want}").into());
    }
    if let Some(ranges) = expect["in"].as_array() {
        let k = key(v).ok_or("unordered value")?;
        let inside = ranges.iter().any(|r| match r.as_array().map(Vec::as_slice) {
            Some([lo, hi]) => {
                key(lo).is_some_and(|lo| lo <= k) && key(hi).is_some_and(|hi| k <= hi)
            }
            _ => false,
        });
        if !inside {
            return Err(format!("{} not in {}", text(v), expect["in"]).into());
        }
    }
    if expect["distinct"].as_bool() == Some(true) && !returned.insert(text(v)) {
        return Err(format!("{} handed out twice", text(v)).into());
    }
    Ok(())
}

fn expect_error(want: &Value, kind: &str, message: &str) -> Result<(), Failed> {
    if let Some(k) = want["kind"].as_str()
        && k != kind
    {
        return Err(format!("error kind {kind} ({message}), expected {k}").into());
    }
    if let Some(m) = want["message"].as_str()
        && m != message
    {
        return Err(format!("error message\n  got:  {message}\n  want: {m}").into());
    }
    if let Some(m) = want["message_contains"].as_str()
        && !message.contains(m)
    {
        return Err(format!("error message {message:?} does not contain {m:?}").into());
    }
    Ok(())
}

fn snapshot_arg(
    arg: &Value,
    last: &Option<(String, Vec<u8>)>,
) -> Result<(String, Vec<u8>), Failed> {
    if arg.as_str() == Some("<previous snapshot>") {
        return last.clone().ok_or_else(|| "no previous snapshot".into());
    }
    let range = arg["range"].as_str().ok_or("restore.range")?.to_owned();
    let data = arg["bytes"]
        .as_array()
        .map(|bytes| {
            bytes
                .iter()
                .filter_map(|b| b.as_str())
                .filter_map(|h| u8::from_str_radix(h, 16).ok())
                .collect()
        })
        .unwrap_or_default();
    Ok((range, data))
}

fn check_snapshot(expect: &Value, range: &str, data: &[u8]) -> Result<(), Failed> {
    if let Some(want) = expect["range"].as_str()
        && want != range
    {
        return Err(format!("snapshot range {range}, expected {want}").into());
    }
    if let Some(bytes) = expect["bytes"].as_array() {
        let want: Vec<u8> = bytes
            .iter()
            .filter_map(|b| b.as_str())
            .filter_map(|h| u8::from_str_radix(h, 16).ok())
            .collect();
        if want != data {
            return Err(format!("snapshot bytes {data:02x?}, expected {want:02x?}").into());
        }
    }
    Ok(())
}

fn counts(target: &Target) -> Option<(u128, u128)> {
    match target {
        Target::Ip(r) => Some((r.free(), r.used())),
        Target::Core(b, _) => Some((b.free() as u128, b.used() as u128)),
        Target::Port(p) => Some((u128::from(p.free()), u128::from(p.used()))),
        Target::Object(a) => Some((a.free(), a.used())),
        Target::Meta(m) => Some((m.free(), m.used())),
        Target::Service { .. } => None,
    }
}

fn check_counts(target: &Target, expect: &Value) -> Result<(), Failed> {
    let Some((free, used)) = counts(target) else { return Ok(()) };
    if let Some(want) = expect["free"].as_u64()
        && u128::from(want) != free
    {
        return Err(format!("free {free}, expected {want}").into());
    }
    if let Some(want) = expect["used"].as_u64()
        && u128::from(want) != used
    {
        return Err(format!("used {used}, expected {want}").into());
    }
    Ok(())
}

fn check_geometry(target: &Target, want: &Value) -> Result<(), Failed> {
    let (free, first, last, offset, static_band, dynamic_band) = match target {
        Target::Ip(r) => {
            (r.free(), r.first(), r.last(), r.offset(), r.static_band(), r.dynamic_band())
        }
        Target::Object(a) => {
            (a.free(), a.first(), a.last(), a.offset(), a.static_band(), a.dynamic_band())
        }
        Target::Port(p) => {
            if let Some(f) = want["free"].as_u64()
                && u64::from(p.free()) != f
            {
                return Err(format!("free {}, expected {f}", p.free()).into());
            }
            if let Some(o) = want["offset"].as_u64()
                && u64::from(p.offset()) != o
            {
                return Err(format!("offset {}, expected {o}", p.offset()).into());
            }
            return Ok(());
        }
        _ => return Err("geometry for this kind is not defined".into()),
    };
    let show = |ip: Option<IpAddr>| ip.map(|i| i.to_string()).unwrap_or_default();
    if let Some(f) = want["free"].as_u64()
        && u128::from(f) != free
    {
        return Err(format!("free {free}, expected {f}").into());
    }
    if let Some(o) = want["offset"].as_u64()
        && u128::from(o) != offset
    {
        return Err(format!("offset {offset}, expected {o}").into());
    }
    for (name, got) in [("first", first), ("last", last)] {
        if let Some(w) = want[name].as_str()
            && show(got) != w
        {
            return Err(format!("{name} {}, expected {w}", show(got)).into());
        }
    }
    for (name, got) in [("static", static_band), ("dynamic", dynamic_band)] {
        if let Some([lo, hi]) = want[name].as_array().map(Vec::as_slice) {
            let got = got.map(|(a, b)| (a.to_string(), b.to_string()));
            let w = (text(lo), text(hi));
            if got.as_ref() != Some(&w) {
                return Err(format!("{name} band {got:?}, expected {w:?}").into());
            }
        }
    }
    Ok(())
}

fn check_table(kind: &str, table: &[Value]) -> Result<(), Failed> {
    for row in table {
        if kind == "port" {
            let size = row["size"].as_u64().ok_or("size")? as u32;
            let want = row["offset"].as_u64().ok_or("offset")? as u32;
            let got = port_band_offset(size);
            if got != want {
                return Err(format!("port size {size}: offset {got}, expected {want}").into());
            }
            continue;
        }
        let net = cidr(row["range"].as_str().ok_or("range")?)?;
        let want = row["offset"].as_u64().ok_or("offset")? as u128;
        let got = ip_band_offset(range_size(&net), SmallRangeRule::AtMost16);
        if got != want {
            return Err(format!("{net}: offset {got}, expected {want}").into());
        }
        let want_124 = row["k8s_1_24_offset"].as_u64().map_or(want, u128::from);
        let got_124 = ip_band_offset(range_size(&net), SmallRangeRule::LessThan16);
        if got_124 != want_124 {
            return Err(format!("{net} (1.24 rule): offset {got_124}, expected {want_124}").into());
        }
    }
    Ok(())
}

/// Runs the pipeline on the cluster profile plus every Service so far; checks the last one.
fn check_service(
    profile: &Profile,
    cluster: &Value,
    services: &[Value],
    expect: &Value,
) -> Result<(), Failed> {
    let mut docs = vec![serde_json::json!({
        "apiVersion": "svclab.dev/v1alpha1",
        "kind": "ClusterProfile",
        "kubernetesVersion": profile.version.to_string(),
        "featureGates": {},
        "serviceClusterIPRanges": cluster["ranges"].clone(),
        "serviceNodePortRange": cluster["nodePortRange"].as_str().unwrap_or("30000-32767"),
    })];
    for spec in services {
        let mut spec = spec.clone();
        let name = spec["name"].as_str().unwrap_or("svc").to_owned();
        if let Some(map) = spec.as_object_mut() {
            map.remove("name");
            if !map.contains_key("ports")
                && map.get("type").and_then(Value::as_str) != Some("ExternalName")
            {
                map.insert("ports".into(), serde_json::json!([{"port": 80}]));
            }
        }
        docs.push(serde_json::json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }));
    }
    let scenario: String = docs.iter().map(|d| format!("---\n{d}\n")).collect();
    let report =
        svclab_core::check(&[Input::new("vector.yaml", scenario)], &CheckOptions::default());
    let last = report.services.last().ok_or("no service in the report")?;
    let doc_index = services.len();
    let errors: Vec<&svclab_core::Diagnostic> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == svclab_core::Severity::Error)
        .filter(|d| d.source.as_ref().is_some_and(|s| s.document == doc_index))
        .collect();
    if !expect["error"].is_null() {
        if errors.is_empty() {
            return Err(format!("expected an error, service was {}", last.outcome).into());
        }
        let internal = errors.iter().any(|d| d.reason == "InternalError");
        let (kind, message) = if internal {
            ("Internal", errors.iter().map(|d| d.message.clone()).collect::<Vec<_>>().join("; "))
        } else {
            let mut lines: Vec<String> = Vec::new();
            for d in &errors {
                if !lines.contains(&d.message) {
                    lines.push(d.message.clone());
                }
            }
            let agg =
                if lines.len() == 1 { lines[0].clone() } else { format!("[{}]", lines.join(", ")) };
            ("Invalid", format!("Service {:?} is invalid: {agg}", last.name))
        };
        return expect_error(&expect["error"], kind, &message);
    }
    if !errors.is_empty() {
        return Err(format!(
            "unexpected errors: {:?}",
            errors.iter().map(|d| &d.message).collect::<Vec<_>>()
        )
        .into());
    }
    if let Some(p) = expect["ipFamilyPolicy"].as_str()
        && last.ip_family_policy != p
    {
        return Err(format!("ipFamilyPolicy {}, expected {p}", last.ip_family_policy).into());
    }
    if let Some(f) = expect["ipFamilies"].as_array() {
        let want: Vec<String> = f.iter().map(text).collect();
        if last.ip_families != want {
            return Err(format!("ipFamilies {:?}, expected {want:?}", last.ip_families).into());
        }
    }
    if let Some(ips) = expect["clusterIPs"].as_array() {
        let want: Vec<String> = ips.iter().map(text).collect();
        if last.cluster_ips != want {
            return Err(format!("clusterIPs {:?}, expected {want:?}", last.cluster_ips).into());
        }
    }
    if let Some(per_index) = expect["clusterIPs_in"].as_array() {
        for (i, ranges) in per_index.iter().enumerate() {
            let got = last.cluster_ips.get(i).ok_or_else(|| format!("no clusterIPs[{i}]"))?;
            check_value(
                &Value::from(got.clone()),
                &serde_json::json!({"in": ranges}),
                &mut BTreeSet::new(),
            )?;
        }
    }
    if let Some(n) = expect["clusterIPs_count"].as_u64()
        && last.cluster_ips.len() as u64 != n
    {
        return Err(format!("{} clusterIPs, expected {n}", last.cluster_ips.len()).into());
    }
    if let Some(n) = expect["allocated"].as_u64()
        && last.allocations.len() as u64 != n
    {
        return Err(format!("{} allocations, expected {n}", last.allocations.len()).into());
    }
    if let Some(f) = expect["clusterIP_family"].as_str() {
        let first =
            last.cluster_ips.first().and_then(|ip| svclab_core::testing::parse_ip_sloppy(ip));
        if first.map(IpFamily::of).map(IpFamily::as_str) != Some(f) {
            return Err(format!("clusterIP family of {:?}, expected {f}", last.cluster_ips).into());
        }
    }
    if let Some(ranges) = expect["nodePort_in"].as_array() {
        for p in &last.ports {
            check_value(
                &Value::from(p.node_port),
                &serde_json::json!({"in": ranges}),
                &mut BTreeSet::new(),
            )?;
        }
    }
    Ok(())
}
