//! `cargo xtask loadtest [--seconds N] [--connections N] [--threads N] [--engine plugin|native]`:
//! builds `svclab` in release mode, serves the webhook over TLS on loopback, drives it with wrk
//! (keep-alive HTTP/1.1, a typical AdmissionReview: a two-port ClusterIP Service created) for a
//! bounded time, and prints a table of reviews/s, p50, p99 and errors, the server's CPU time
//! (user + system, from `/proc/<pid>/stat`) per review, which unlike the rate does not depend on
//! what else the machine runs, the load average, and the webhook's own count of allowed reviews
//! from `/metrics`.

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail, ensure};

use crate::workspace::{say, target_dir, workspace_root};

/// What one run is.
struct Options {
    seconds: u32,
    connections: u32,
    threads: u32,
    engine: String,
}

fn parse(args: &[String]) -> anyhow::Result<Options> {
    let mut options =
        Options { seconds: 30, connections: 8, threads: 1, engine: "plugin".to_owned() };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--seconds" => options.seconds = value.parse()?,
            "--connections" => options.connections = value.parse()?,
            "--threads" => options.threads = value.parse()?,
            "--engine" => options.engine.clone_from(value),
            _ => bail!(
                "usage: cargo xtask loadtest [--seconds N] [--connections N] [--threads N] \
                 [--engine plugin|native]"
            ),
        }
    }
    ensure!(options.seconds > 0 && options.seconds <= 600, "--seconds must be 1..=600");
    ensure!(options.connections >= options.threads, "--connections must be >= --threads");
    Ok(options)
}

/// The typical review wrk sends.
const REVIEW: &str = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","kind":{"group":"","version":"v1","kind":"Service"},"resource":{"group":"","version":"v1","resource":"services"},"requestKind":{"group":"","version":"v1","kind":"Service"},"requestResource":{"group":"","version":"v1","resource":"services"},"name":"web","namespace":"shop","operation":"CREATE","userInfo":{"username":"alice","groups":["system:authenticated"]},"object":{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop","labels":{"app":"web"}},"spec":{"type":"ClusterIP","selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":8080,"protocol":"TCP"},{"name":"https","port":443,"targetPort":8443,"protocol":"TCP"}]}},"oldObject":null,"dryRun":false,"options":{"apiVersion":"meta.k8s.io/v1","kind":"CreateOptions"}}}"#;

/// `cargo xtask loadtest`.
pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let options = parse(args)?;
    ensure!(
        Command::new("wrk").arg("--version").output().is_ok(),
        "wrk is not installed: run scripts/setup.sh (scripts/setup.d/45-loadtest.sh)"
    );
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&root)
        .args(["build", "--release", "--locked", "--package", "svclab-host", "--bin", "svclab"])
        .status()
        .context("cannot run cargo")?;
    ensure!(status.success(), "building svclab failed");
    let binary = target_dir(&root).join("release/svclab");

    let scratch = std::env::temp_dir().join(format!("svclab-loadtest-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let body = scratch.join("review.json");
    std::fs::write(&body, REVIEW)?;
    let script = scratch.join("review.lua");
    std::fs::write(
        &script,
        format!(
            "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n\
             local file = io.open(\"{}\", \"r\")\nwrk.body = file:read(\"*a\")\nfile:close()\n",
            body.display()
        ),
    )?;

    let tls = root.join("host-runner/tests/data/tls");
    let mut server = Command::new(&binary)
        .args(["--engine", &options.engine, "serve", "--listen", "127.0.0.1:0"])
        .arg("--tls-cert")
        .arg(tls.join("server-a.pem"))
        .arg("--tls-key")
        .arg(tls.join("server-a.key"))
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start svclab serve")?;
    let result = measure(&mut server, &script, &options);
    let _ = Command::new("kill").args(["-TERM", &server.id().to_string()]).status();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&scratch);
    let (row, allowed) = result?;
    let cpu_per_review = row.server_cpu.map_or_else(
        || "(no /proc)".to_owned(),
        |cpu| format!("{:.0} µs", cpu.as_secs_f64() * 1e6 / row.requests as f64),
    );
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "(no /proc)".to_owned());
    say("");
    say(
        "| engine | connections | seconds | requests | reviews/s | p50 | p99 | errors | server CPU/review | load average | allowed (/metrics) |",
    );
    say("|---|---|---|---|---|---|---|---|---|---|---|");
    say(&format!(
        "| {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {} | {} |",
        options.engine,
        options.connections,
        options.seconds,
        row.requests,
        row.per_second,
        row.p50,
        row.p99,
        row.errors,
        cpu_per_review,
        load,
        allowed.as_deref().unwrap_or("(curl missing)")
    ));
    ensure!(row.errors == 0, "{} requests failed", row.errors);
    Ok(())
}

/// What wrk reported.
struct Row {
    requests: u64,
    per_second: f64,
    p50: String,
    p99: String,
    /// Socket errors plus non-2xx answers.
    errors: u64,
    /// The server's CPU time (user + system) over the measured run.
    server_cpu: Option<Duration>,
}

fn measure(
    server: &mut Child,
    script: &Path,
    options: &Options,
) -> anyhow::Result<(Row, Option<String>)> {
    let stderr = server.stderr.take().context("no stderr")?;
    let first = std::io::BufReader::new(stderr).lines().next().context("server exited")??;
    let url = first
        .split_whitespace()
        .find(|word| word.starts_with("https://"))
        .with_context(|| format!("no address in {first:?}"))?
        .to_owned();
    let wrk = |seconds: u32| -> anyhow::Result<String> {
        let output = Command::new("wrk")
            .arg(format!("--threads={}", options.threads))
            .arg(format!("--connections={}", options.connections))
            .arg(format!("--duration={seconds}s"))
            .arg("--latency")
            .arg("--script")
            .arg(script)
            .arg(&url)
            .output()
            .context("cannot run wrk")?;
        ensure!(output.status.success(), "wrk failed: {}", String::from_utf8_lossy(&output.stderr));
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    };
    // Warm-up: connections, the blocking pool, the plugin's instance slots.
    wrk(2)?;
    let cpu_before = cpu_time(server.id());
    let report = wrk(options.seconds)?;
    let cpu_after = cpu_time(server.id());
    say(report.trim_end());
    let mut row =
        parse_wrk(&report).with_context(|| format!("cannot read wrk's report:\n{report}"))?;
    row.server_cpu = cpu_before.zip(cpu_after).map(|(before, after)| after.saturating_sub(before));
    let metrics_url = url.replace("/validate", "/metrics");
    let allowed =
        Command::new("curl").args(["--silent", "--insecure", &metrics_url]).output().ok().and_then(
            |output| {
                String::from_utf8_lossy(&output.stdout).lines().find_map(|line| {
                    line.strip_prefix("svclab_webhook_reviews_total{outcome=\"allowed\"} ")
                        .map(str::to_owned)
                })
            },
        );
    Ok((row, allowed))
}

/// User plus system CPU time of process `pid` so far (`utime` and `stime`, the 14th and 15th
/// fields of `/proc/<pid>/stat`, in clock ticks of `getconf CLK_TCK`).
fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    let per_second = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|output| String::from_utf8_lossy(&output.stdout).trim().parse::<u64>().ok())
        .filter(|&hz| hz > 0)
        .unwrap_or(100);
    Some(Duration::from_secs_f64(ticks as f64 / per_second as f64))
}

fn parse_wrk(report: &str) -> Option<Row> {
    let mut row = Row {
        requests: 0,
        per_second: 0.0,
        p50: String::new(),
        p99: String::new(),
        errors: 0,
        server_cpu: None,
    };
    for line in report.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["50%", value] => row.p50 = (*value).to_owned(),
            ["99%", value] => row.p99 = (*value).to_owned(),
            [count, "requests", "in", ..] => row.requests = count.parse().ok()?,
            ["Requests/sec:", value] => row.per_second = value.parse().ok()?,
            ["Non-2xx", "or", "3xx", "responses:", count] => {
                row.errors += count.parse::<u64>().ok()?
            }
            ["Socket", "errors:", rest @ ..] => {
                row.errors += rest
                    .iter()
                    .filter_map(|word| word.trim_end_matches(',').parse::<u64>().ok())
                    .sum::<u64>();
            }
            _ => {}
        }
    }
    (row.requests > 0 && !row.p99.is_empty()).then_some(row)
}
