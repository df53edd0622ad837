//! The `svclab` command line, run in-process: formats, exit codes, standard input, errors.

use crate::support::{Run, svclab};

/// Runs `svclab ARGS` with `stdin` and checks the exit code.
#[track_caller]
fn check(args: &[&str], stdin: &str, code: u8) -> Run {
    let run = svclab(args, stdin);
    assert_eq!(run.code, code, "svclab {args:?}\nstdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    run
}

#[test]
fn check_json_is_the_report_contract() {
    let run = check(&["check", "data/cli/valid.yaml", "--output", "json"], "", 0);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("stdout is JSON");
    assert_eq!(report["apiVersion"], "svclab.dev/v1alpha1");
    assert_eq!(report["kind"], "Report");
    assert_eq!(report["services"][0]["clusterIPs"][0], "10.96.0.10");
    assert_eq!(report["services"][0]["allocations"][0]["band"], "static");
    assert!(run.stdout.ends_with("}\n"));
}

#[test]
fn check_yaml_keeps_the_contract_order() {
    let run = check(&["check", "data/cli/valid.yaml", "-o", "yaml", "--engine", "native"], "", 0);
    assert!(
        run.stdout.starts_with("apiVersion: svclab.dev/v1alpha1\nkind: Report\nprofile:\n"),
        "{}",
        run.stdout
    );
    let json = check(&["check", "data/cli/valid.yaml", "-o", "json", "--engine", "native"], "", 0);
    let from_yaml: serde_json::Value = serde_norway::from_str(&run.stdout).expect("stdout is YAML");
    let from_json: serde_json::Value = serde_json::from_str(&json.stdout).expect("stdout is JSON");
    assert_eq!(from_yaml, from_json);
}

#[test]
fn check_text_is_kubectl_like() {
    let run = check(&["check", "data/cli/invalid.yaml"], "", 1);
    assert!(run.stdout.contains("The Service \"broken\" is invalid: "), "{}", run.stdout);
    assert!(run.stdout.contains("spec.ports[0].port"), "{}", run.stdout);
}

#[test]
fn check_exits_1_on_errors_in_every_format() {
    for format in ["text", "json", "yaml"] {
        check(&["check", "data/cli/invalid.yaml", "--output", format], "", 1);
    }
}

#[test]
fn check_reads_standard_input() {
    let text = std::fs::read_to_string("data/cli/valid.yaml").expect("fixture");
    let from_stdin = check(&["check", "-", "-o", "json"], &text, 0);
    let implicit = check(&["check", "-o", "json"], &text, 0);
    let from_file = check(&["check", "data/cli/valid.yaml", "-o", "json"], "", 0);
    assert_eq!(from_stdin.stdout, implicit.stdout);
    // Only the input name differs (it appears in diagnostics' sources, when there are any).
    assert_eq!(from_stdin.stdout.replace("\"-\"", "\"data/cli/valid.yaml\""), from_file.stdout);
}

#[test]
fn check_several_files_in_order() {
    let run =
        check(&["check", "data/cli/valid.yaml", "data/cli/invalid.yaml", "-o", "json"], "", 1);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("stdout is JSON");
    let names: Vec<&str> = report["services"]
        .as_array()
        .expect("services")
        .iter()
        .filter_map(|service| service["name"].as_str())
        .collect();
    assert_eq!(names, ["dns", "web", "broken"]);
}

#[test]
fn check_no_defaults_skips_allocation() {
    // As written, `dns` has no targetPort (defaulting would copy the port): an error.
    let run = check(&["check", "data/cli/valid.yaml", "--no-defaults", "-o", "json"], "", 1);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("stdout is JSON");
    assert_eq!(report["services"][1]["name"], "web");
    assert_eq!(report["services"][1]["clusterIPs"], serde_json::json!([]));
    assert_eq!(report["diagnostics"][0]["field"], "spec.ports[0].targetPort");
}

#[test]
fn missing_file_is_a_clear_error() {
    let run = check(&["check", "data/cli/missing.yaml"], "", 2);
    assert_eq!(
        run.stderr,
        "error: cannot read \"data/cli/missing.yaml\": No such file or directory\n"
    );
    assert_eq!(run.stdout, "");
}

#[test]
fn usage_errors_exit_2() {
    let run = check(&["check", "data/cli/valid.yaml", "--output", "xml"], "", 2);
    assert!(run.stderr.contains("invalid value 'xml'"), "{}", run.stderr);
    let run = check(&["frobnicate"], "", 2);
    assert!(run.stderr.contains("unrecognized subcommand"), "{}", run.stderr);
}

#[test]
fn help_exits_0() {
    let run = check(&["--help"], "", 0);
    assert!(run.stdout.contains("check"), "{}", run.stdout);
    assert!(run.stdout.contains("--engine"), "{}", run.stdout);
}

#[test]
fn engines_print_identical_bytes() {
    for format in ["text", "json", "yaml"] {
        let native =
            check(&["check", "data/cli/valid.yaml", "-o", format, "--engine", "native"], "", 0);
        let plugin =
            check(&["check", "data/cli/valid.yaml", "-o", format, "--engine", "plugin"], "", 0);
        assert_eq!(native.stdout, plugin.stdout, "format {format}");
    }
}

#[test]
fn engines_print_identical_bytes_under_a_policy() {
    let policy = ["check", "data/policy/scenario.yaml", "--policy", "data/policy/full.yaml"];
    for requester in [&[][..], &["--user", "netops", "--group", "net-admins"]] {
        for format in ["text", "json"] {
            let args = [&policy[..], requester, &["-o", format]].concat();
            let native = check(&[&args[..], &["--engine", "native"]].concat(), "", 1);
            let plugin = check(&[&args[..], &["--engine", "plugin"]].concat(), "", 1);
            assert_eq!(native.stdout, plugin.stdout, "{args:?}");
            assert!(plugin.stdout.contains("(externalIPs.allowedCIDRs)"), "{}", plugin.stdout);
        }
    }
}

#[test]
fn plugin_engine_reports_fuel_when_verbose_and_metered() {
    let quiet = check(&["check", "data/cli/valid.yaml", "-o", "json"], "", 0);
    assert_eq!(quiet.stderr, "");
    let metered = ["check", "data/cli/valid.yaml", "-o", "json", "-v", "--fuel", "50000000000"];
    let plugin = check(&metered, "", 0);
    let fuel: u64 = plugin
        .stderr
        .strip_prefix("svclab: plugin fuel used: ")
        .and_then(|rest| rest.trim_end().parse().ok())
        .unwrap_or_else(|| panic!("no fuel line in {:?}", plugin.stderr));
    assert!(fuel > 0);
    let native =
        check(&["check", "data/cli/valid.yaml", "-o", "json", "--engine", "native", "-v"], "", 0);
    assert_eq!(native.stderr, "");
    // Fuel is deterministic: the same call costs the same.
    let again = check(&metered, "", 0);
    assert_eq!(again.stderr, plugin.stderr);
    // The embedded plugin is trusted: without --fuel it runs unmetered, with the same answer.
    let unmetered = check(&["check", "data/cli/valid.yaml", "-o", "json", "-v"], "", 0);
    assert_eq!(unmetered.stderr, "");
    assert_eq!(unmetered.stdout, plugin.stdout);
}

#[test]
fn plugin_flag_loads_another_plugin() {
    let run =
        check(&["check", "data/cli/valid.yaml", "--plugin", "data/wasm/wrong-abi.wat"], "", 2);
    assert_eq!(
        run.stderr,
        "error: plugin speaks svclab:policy ABI version 999, this host speaks version 6\n"
    );
    let run = check(&["check", "data/cli/valid.yaml", "--plugin", "data/wasm/missing.wasm"], "", 2);
    assert_eq!(
        run.stderr,
        "error: cannot read \"data/wasm/missing.wasm\": No such file or directory\n"
    );
    let run =
        check(&["check", "data/cli/valid.yaml", "--engine", "native", "--plugin", "x.wasm"], "", 2);
    assert_eq!(run.stderr, "error: --plugin cannot be combined with --engine native\n");
}

#[test]
fn render_prints_only_the_ruleset() {
    let iptables = check(&["render", "data/cli/valid.yaml", "--engine", "native"], "", 0);
    assert!(iptables.stdout.starts_with("*filter\n"), "{}", iptables.stdout);
    assert!(iptables.stdout.ends_with("COMMIT\n"), "{}", iptables.stdout);
    let nftables = check(&["render", "data/cli/valid.yaml", "--proxy-mode", "nftables"], "", 0);
    // valid.yaml is at 1.37: the 1.36 masquerading (the hairpin-connections set), the table
    // first.
    assert!(nftables.stdout.starts_with("add table ip kube-proxy"), "{}", nftables.stdout);
    assert!(nftables.stdout.contains(" hairpin-connections "), "{}", nftables.stdout);
    let plugin = check(&["render", "data/cli/valid.yaml"], "", 0);
    assert_eq!(plugin.stdout, iptables.stdout);
    let run = check(&["render", "data/cli/valid.yaml", "--node", "nowhere"], "", 0);
    assert!(
        run.stdout.starts_with("*filter\n"),
        "a node name without Node objects only decides locality"
    );
}

#[test]
fn trace_walks_a_packet() {
    let args = [
        "trace",
        "data/cli/valid.yaml",
        "--src",
        "10.244.1.5",
        "--dst",
        "10.96.0.10",
        "--dport",
        "53",
    ];
    let text = check(&[&args[..], &["--protocol", "udp"]].concat(), "", 0);
    assert!(text.stdout.starts_with("packet: udp 10.244.1.5 -> 10.96.0.10:53"), "{}", text.stdout);
    let json = check(
        &[&args[..], &["--protocol", "udp", "-o", "json", "--engine", "native"]].concat(),
        "",
        0,
    );
    let trace: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON trace");
    assert_eq!(trace["request"]["dst"], "10.96.0.10");
    let run = check(&[&args[..], &["--protocol", "icmp"]].concat(), "", 2);
    assert!(run.stderr.contains("invalid value 'icmp'"), "{}", run.stderr);
}

#[test]
fn hostile_plugins_end_with_a_clear_error() {
    let run = check(
        &[
            "check",
            "data/cli/valid.yaml",
            "--no-defaults",
            "--plugin",
            "data/wasm/endless-loop.wat",
            "--fuel",
            "1000000",
        ],
        "",
        2,
    );
    assert_eq!(
        run.stderr,
        "error: plugin ran out of fuel (budget 1000000; raise it with --fuel)\n"
    );
    let run = check(
        &[
            "check",
            "data/cli/valid.yaml",
            "--no-defaults",
            "--plugin",
            "data/wasm/endless-loop.wat",
            "--timeout-ms",
            "100",
        ],
        "",
        2,
    );
    assert_eq!(
        run.stderr,
        "error: plugin exceeded its deadline of 100 ms (raise it with --timeout-ms)\n"
    );
    let run = check(
        &[
            "check",
            "data/cli/valid.yaml",
            "--no-defaults",
            "--plugin",
            "data/wasm/memory-growth.wat",
            "--max-memory-mib",
            "32",
        ],
        "",
        2,
    );
    assert_eq!(
        run.stderr,
        "error: plugin exceeded its memory limit of 32 MiB (raise it with --max-memory-mib)\n"
    );
    // A plugin that answers garbage (this guest says "ok") cannot pass for a report (the text
    // of `check-text` is printed as the plugin wrote it, like `render`'s ruleset).
    let run = check(
        &["check", "data/cli/valid.yaml", "-o", "json", "--plugin", "data/wasm/trap.wat"],
        "",
        2,
    );
    assert!(
        run.stderr.ends_with(
            "error: the engine returned a malformed report: expected value at line 1 column 1\n"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn serve_refuses_to_start_with_a_bad_policy() {
    // `--listen nowhere` cannot be bound: were the policy accepted, serve would stop there
    // instead of listening forever.
    for engine in ["native", "plugin"] {
        let run = check(
            &[
                "serve",
                "--listen",
                "nowhere",
                "--policy",
                "data/policy/typo.yaml",
                "--engine",
                engine,
            ],
            "",
            2,
        );
        assert!(
            run.stderr.starts_with("error: the Service policy \"data/policy/typo.yaml\" is invalid:\ndata/policy/typo.yaml:7:5: "),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("allowedCIDR"), "{}", run.stderr);

        // Valid settings that cannot apply to the profile: 1.24 has no static band.
        let args = [
            "serve",
            "--listen",
            "nowhere",
            "--policy",
            "data/policy/static-band-only.yaml",
            "--profile",
            "data/policy/profile-1-24.yaml",
            "--engine",
            engine,
        ];
        let run = check(&args, "", 2);
        assert!(run.stderr.contains("clusterIP.explicit"), "{}", run.stderr);
        assert!(!run.stderr.contains("cannot listen"), "{}", run.stderr);

        // The same settings on the newest release start (and stop at the listener).
        let newest = [&args[..5], &args[7..]].concat();
        let run = check(&newest, "", 2);
        assert!(run.stderr.starts_with("error: cannot listen on nowhere"), "{}", run.stderr);
    }
}

#[test]
fn check_policy_denies_with_the_rule_id() {
    let run = check(
        &["check", "data/cli/valid.yaml", "--policy", "data/cli/policy.yaml", "--engine", "native"],
        "",
        1,
    );
    assert!(
        run.stdout.contains(
            "spec.ports[0].nodePort: Forbidden: node ports are not allowed (nodePorts.forbid)"
        ),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("service/dns created"), "{}", run.stdout);
    assert!(!run.stdout.contains("service/web created"), "{}", run.stdout);
}

#[test]
fn check_policy_user_and_groups_reach_user_rules() {
    let scenario = "apiVersion: v1\nkind: Service\nmetadata: {name: lb}\nspec: {externalIPs: [192.0.2.1], ports: [{port: 80}]}\n";
    let args = ["check", "-", "--policy", "data/cli/policy.yaml", "--engine", "native"];
    let anonymous = check(&args, scenario, 0);
    assert!(
        anonymous.stdout.contains("Info: externalIPs.allowedGroups: skipped: needs userInfo"),
        "{}",
        anonymous.stdout
    );
    let mut as_alice = args.to_vec();
    as_alice.extend(["--user", "alice", "--group", "dev"]);
    let denied = check(&as_alice, scenario, 1);
    assert!(denied.stdout.contains("user \"alice\" may not set external IPs"), "{}", denied.stdout);
    let mut as_admin = args.to_vec();
    as_admin.extend(["--user", "bob", "--group", "dev", "--group", "net-admins"]);
    check(&as_admin, scenario, 0);
}

#[test]
fn policy_check_points_at_the_settings_line() {
    let run = check(&["policy", "check", "data/cli/policy-invalid.yaml"], "", 1);
    assert!(
        run.stdout.contains("data/cli/policy-invalid.yaml:3:32: externalIPs.allowedCIDRs[1]: Invalid value: \"10.0.0.0/33\""),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("data/cli/policy-invalid.yaml:4:1: nodePort: Unsupported value"),
        "{}",
        run.stdout
    );
    let valid = check(&["policy", "check", "-"], "nodePorts: {forbid: true}\n", 0);
    assert_eq!(valid.stdout, "-: the policy settings are valid\n");
}

#[test]
fn policy_schema_is_json_schema() {
    let run = check(&["policy", "schema"], "", 0);
    let schema: serde_json::Value = serde_json::from_str(&run.stdout).expect("stdout is JSON");
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(schema["properties"]["nodePorts"]["additionalProperties"], false);
}
