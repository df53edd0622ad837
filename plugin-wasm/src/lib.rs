//! The svclab core as a WebAssembly component: a thin adapter that decodes the WIT arguments,
//! calls `svclab_core` and encodes its answer. No logic lives here, so the plugin and the native
//! engine give the same bytes (the host's parity tests hold both to that).

use svclab_core::{
    AdmissionOptions, CheckOptions, Diagnostic, Input, IpFamily, ProxyMode, RenderOptions,
    RulesetWriter, Session, Severity, TraceRequest, UpgradeOptions, UserInfo,
};

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use bindings as types;

// Both replace pieces of wasi-libc, so they only exist in the WebAssembly build (the workspace's
// host-target builds of this crate, for clippy and tests, keep the platform's own; the tests
// call the comparison under its own name).
#[cfg(target_arch = "wasm32")]
mod heap;
#[cfg(any(target_arch = "wasm32", test))]
mod memcmp;

/// The bindings generated from `wit/policy.wit`'s `editing` world (`policy` and sessions).
#[allow(unsafe_code, reason = "wit-bindgen's generated glue is unsafe by nature")]
#[allow(missing_docs, unreachable_pub, clippy::too_many_arguments, reason = "generated code")]
mod bindings {
    wit_bindgen::generate!({ path: "../wit/policy.wit", world: "editing" });

    use super::Plugin;
    export!(Plugin);
}

/// The ABI version of `wit/policy.wit` this adapter implements.
const ABI_VERSION: u32 = 6;

struct Plugin;

impl bindings::Guest for Plugin {
    fn abi_version() -> u32 {
        ABI_VERSION
    }

    fn check(
        inputs: Vec<types::Input>,
        options: types::CheckOptions,
    ) -> Result<String, types::Error> {
        let inputs = decode_inputs(inputs);
        let (world, report) = svclab_core::evaluate(&inputs, &decode_check_options(options));
        let json = report.to_json();
        leave((world, report, inputs));
        Ok(json)
    }

    fn check_text(
        inputs: Vec<types::Input>,
        options: types::CheckOptions,
    ) -> Result<types::TextReport, types::Error> {
        // The text never shows the kube-proxy rulesets.
        let options = CheckOptions { omit_rules: true, ..decode_check_options(options) };
        let inputs = decode_inputs(inputs);
        let (world, report) = svclab_core::evaluate(&inputs, &options);
        let answer = types::TextReport { has_errors: report.has_errors(), text: report.to_text() };
        leave((world, report, inputs));
        Ok(answer)
    }

    fn diagnose(
        inputs: Vec<types::Input>,
        options: types::CheckOptions,
    ) -> Result<Vec<types::Diagnostic>, types::Error> {
        let options = CheckOptions { omit_rules: true, ..decode_check_options(options) };
        let inputs = decode_inputs(inputs);
        let (world, report) = svclab_core::evaluate(&inputs, &options);
        leave((world, inputs));
        report.diagnostics.into_iter().map(encode_diagnostic).collect()
    }

    fn render(
        inputs: Vec<types::Input>,
        options: types::RenderOptions,
    ) -> Result<String, types::Error> {
        let mut text = String::new();
        render_ruleset(inputs, options)?.write_to(&mut |piece| text.push_str(piece));
        Ok(text)
    }

    fn render_begin(
        inputs: Vec<types::Input>,
        options: types::RenderOptions,
    ) -> Result<(), types::Error> {
        let ruleset = render_ruleset(inputs, options)?;
        RENDERED.set(Some(ruleset));
        Ok(())
    }

    fn session_open(
        name: String,
        text: String,
        no_defaults: bool,
        policy: Option<String>,
    ) -> Result<u32, String> {
        SESSIONS.with_borrow_mut(|sessions| {
            if sessions.open.len() >= MAX_SESSIONS {
                return Err(format!(
                    "{MAX_SESSIONS} sessions are open in this instance; close one first"
                ));
            }
            let handle = sessions.next;
            sessions.next = sessions.next.wrapping_add(1);
            let options = CheckOptions {
                no_defaults,
                policy: policy.map(|text| Input::new("policy", text)),
                ..CheckOptions::default()
            };
            sessions.open.insert(handle, Session::new(name, text, options));
            Ok(handle)
        })
    }

    fn session_edit(session: u32, from: u32, to: u32, text: String) -> Result<(), String> {
        with_session(session, |session| {
            session.edit_utf16(from as usize..to as usize, &text).map_err(|err| err.to_string())
        })
    }

    fn session_check(session: u32) -> Result<String, String> {
        with_session(session, |session| Ok(session.evaluate().1.to_json()))
    }

    fn session_text(session: u32) -> Result<String, String> {
        with_session(session, |session| Ok(session.text().to_owned()))
    }

    fn session_close(session: u32) {
        SESSIONS.with_borrow_mut(|sessions| sessions.open.remove(&session));
    }

    fn render_next() -> Option<String> {
        RENDERED.with_borrow_mut(|rendered| {
            let piece = rendered.as_mut()?.next_piece(PIECE_BYTES);
            if piece.is_none() {
                leave(rendered.take());
            }
            piece
        })
    }

    fn trace(
        inputs: Vec<types::Input>,
        options: types::TraceOptions,
    ) -> Result<String, types::Error> {
        let request = TraceRequest {
            src: options.src,
            dst: options.dst,
            dport: options.dport,
            protocol: options.protocol,
            node: options.node,
            in_interface: options.in_interface,
        };
        let inputs = decode_inputs(inputs);
        let (world, _) = svclab_core::evaluate(&inputs, &CheckOptions::WORLD_ONLY);
        let report = svclab_core::trace(&world, &request);
        leave((world, inputs));
        let mut json = serde_json::to_string_pretty(&report)
            .map_err(|err| types::Error::Failed(err.to_string()))?;
        json.push('\n');
        Ok(json)
    }

    fn upgrade(
        inputs: Vec<types::Input>,
        options: types::UpgradeOptions,
    ) -> Result<String, types::Error> {
        let options = decode_upgrade_options(options)?;
        let report = svclab_core::upgrade(&decode_inputs(inputs), &options)
            .map_err(|err| types::Error::BadInput(err.to_string()))?;
        Ok(report.to_json())
    }

    fn upgrade_text(
        inputs: Vec<types::Input>,
        options: types::UpgradeOptions,
    ) -> Result<types::TextReport, types::Error> {
        let options = decode_upgrade_options(options)?;
        let report = svclab_core::upgrade(&decode_inputs(inputs), &options)
            .map_err(|err| types::Error::BadInput(err.to_string()))?;
        Ok(types::TextReport { has_errors: report.breaks(), text: report.to_text() })
    }

    fn validate_admission(
        review: String,
        options: types::AdmissionOptions,
    ) -> Result<String, types::Error> {
        let options = AdmissionOptions {
            policy: options.policy.map(decode_input),
            profile: options.profile.map(decode_input),
            stringly_typed: options.stringly_typed,
            inventory: options.inventory,
        };
        svclab_core::validate_admission(&review, &options)
            .map_err(|err| types::Error::BadInput(err.to_string()))
    }

    fn check_settings(settings: types::Input) -> Result<Vec<types::Diagnostic>, types::Error> {
        svclab_core::check_settings(&decode_input(settings))
            .into_iter()
            .map(encode_diagnostic)
            .collect()
    }

    fn settings_schema() -> String {
        svclab_core::settings_schema()
    }

    fn test_files(suites: Vec<types::Input>) -> Vec<String> {
        svclab_core::test_files(&decode_inputs(suites))
    }

    fn run_tests(
        suites: Vec<types::Input>,
        files: Vec<types::Input>,
        options: types::TestOptions,
    ) -> Result<types::TestRun, types::Error> {
        let options = svclab_core::TestOptions { update: options.update };
        let run = svclab_core::run_tests(&decode_inputs(suites), &decode_inputs(files), &options);
        Ok(types::TestRun {
            json: run.to_json(),
            text: run.to_text(),
            updated: run
                .updated
                .into_iter()
                .map(|input| types::Input {
                    name: input.name,
                    text: std::sync::Arc::unwrap_or_clone(input.text),
                })
                .collect(),
        })
    }

    fn test_schema() -> String {
        svclab_core::test_schema()
    }
}

thread_local! {
    /// The ruleset `render-begin` rendered, written out piece by piece by `render-next` (and
    /// dropped after its last piece). An instance serves one request, so nothing here outlives
    /// it.
    static RENDERED: RefCell<Option<RulesetWriter>> = const { RefCell::new(None) };
    /// The open sessions of `session-open`, by handle.
    static SESSIONS: RefCell<Sessions> = const {
        RefCell::new(Sessions { open: BTreeMap::new(), next: 1 })
    };
    /// Whether a call of this instance has left its state ([`leave`]).
    static LEFT: Cell<bool> = const { Cell::new(false) };
}

/// The sessions an instance keeps between calls.
struct Sessions {
    open: BTreeMap<u32, Session>,
    /// The next handle: handles are not reused while the instance lives (short of 2^32 opens).
    next: u32,
}

/// How many sessions an instance keeps open at once: each holds its scenario's text, what it
/// read and a copy of the pipeline's state, so a host that forgets to close them would grow the
/// instance without bound.
const MAX_SESSIONS: usize = 64;

/// Runs `f` on the open session `handle`; an error when it is not open.
fn with_session<T>(
    handle: u32,
    f: impl FnOnce(&mut Session) -> Result<T, String>,
) -> Result<T, String> {
    SESSIONS.with_borrow_mut(|sessions| match sessions.open.get_mut(&handle) {
        Some(session) => f(session),
        None => Err(format!("no open session {handle}")),
    })
}

/// What a piece of `render-next` holds, about: large enough that the calls cost nothing next to
/// the copying, small enough that the host holds little at a time.
const PIECE_BYTES: usize = 1 << 20;

/// The ruleset of `render` and `render-begin` (kept out of line, so the component carries it
/// once). `render_ruleset` drops the scenario's text as soon as the cluster state is built,
/// like the native `svclab render`, and the ruleset is held once: each piece is copied from it
/// as the host asks.
#[inline(never)]
fn render_ruleset(
    inputs: Vec<types::Input>,
    options: types::RenderOptions,
) -> Result<RulesetWriter, types::Error> {
    svclab_core::render_ruleset(decode_inputs(inputs), &decode_render_options(options))
        .map_err(|err| types::Error::Failed(err.to_string()))
}

fn decode_render_options(options: types::RenderOptions) -> RenderOptions {
    RenderOptions {
        mode: match options.proxy_mode {
            types::ProxyMode::Iptables => ProxyMode::Iptables,
            types::ProxyMode::Nftables => ProxyMode::Nftables,
        },
        family: options.ip_family.map(|family| match family {
            types::IpFamily::Ipv4 => IpFamily::V4,
            types::IpFamily::Ipv6 => IpFamily::V6,
        }),
        node: options.node,
        standalone: options.standalone,
    }
}

fn decode_upgrade_options(options: types::UpgradeOptions) -> Result<UpgradeOptions, types::Error> {
    let to = svclab_core::target_release(&options.to)
        .map_err(|err| types::Error::BadInput(err.to_string()))?;
    Ok(UpgradeOptions {
        to,
        proxy_mode: options.proxy_mode.map(|mode| match mode {
            types::ProxyMode::Iptables => ProxyMode::Iptables,
            types::ProxyMode::Nftables => ProxyMode::Nftables,
        }),
        to_profile: options.to_profile.map(decode_input),
        diff: options.diff,
    })
}

fn decode_check_options(options: types::CheckOptions) -> CheckOptions {
    CheckOptions {
        no_defaults: options.no_defaults,
        policy: options.policy.map(decode_input),
        user_info: options
            .user_info
            .map(|user| UserInfo { username: user.username, groups: user.groups }),
        explain_release: options.explain_release,
        omit_rules: options.omit_rules,
    }
}

fn encode_diagnostic(diagnostic: Diagnostic) -> Result<types::Diagnostic, types::Error> {
    let source = match diagnostic.source {
        Some(source) => Some(types::Source {
            file: source.file,
            document: u32::try_from(source.document)
                .map_err(|_| types::Error::Failed("document index out of range".into()))?,
            line: source.line,
            column: source.column,
        }),
        None => None,
    };
    Ok(types::Diagnostic {
        severity: match diagnostic.severity {
            Severity::Error => types::Severity::Error,
            Severity::Warning => types::Severity::Warning,
            Severity::Info => types::Severity::Info,
        },
        object: diagnostic.object.map(|object| types::ObjectRef {
            kind: object.kind,
            namespace: object.namespace,
            name: object.name,
        }),
        field: diagnostic.field,
        reason: diagnostic.reason,
        message: diagnostic.message,
        source,
    })
}

/// Leaves a call's state (the cluster state, the report, the inputs, a rendered ruleset) to the
/// end of the instance instead of freeing it, when the call is the instance's first: svclab's
/// host runs every call in a fresh instance whose memory it throws away when the call returns
/// (`PluginRunner::call` in host-runner), so freeing the state block by block is work nobody
/// sees (at 10,000 Services and their EndpointSlices, about a fortieth of a `check`). A host
/// that serves many calls from one instance (jco's transpiled module keeps one per page or
/// process) gets every later call's state freed, so the instance holds at most the first call's
/// beyond what it uses. Nothing here holds a resource outside the guest's memory.
fn leave<T>(state: T) {
    if LEFT.replace(true) {
        drop(state);
    } else {
        std::mem::forget(state);
    }
}

/// The inputs as the core takes them: each text moves into its `Input` without a copy.
fn decode_inputs(inputs: Vec<types::Input>) -> Vec<Input> {
    inputs.into_iter().map(decode_input).collect()
}

fn decode_input(input: types::Input) -> Input {
    Input::new(input.name, input.text)
}
