//! The engines that run the core: natively, or inside the WebAssembly plugin. Both take the same
//! inputs and return the same bytes; the CLI and the parity tests only talk to [`Engine`].

use std::io::Write;

use svclab_core::{
    AdmissionOptions, CheckOptions, Diagnostic, Input, IpFamily, ObjectRef, ProxyMode,
    RenderOptions, Report, Severity, Source, TestOptions, TestRun, TraceRequest,
};

use crate::plugin::{
    CacheDir, Limits, PluginError, PluginRunner, WitAdmissionOptions, WitCheckOptions,
    WitDiagnostic, WitInput, WitIpFamily, WitProxyMode, WitRenderOptions, WitSeverity,
    WitTestOptions, WitTestRun, WitTextReport, WitTraceOptions, WitUpgradeOptions, WitUserInfo,
};

/// A ready engine.
#[derive(Debug)]
pub enum Engine {
    /// The core linked into this binary.
    Native,
    /// The core inside a sandboxed WebAssembly plugin.
    Plugin(Box<PluginRunner>),
}

/// What one engine call produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The output document (report JSON, ruleset text, trace text).
    pub output: String,
    /// Fuel the plugin used (a deterministic cost figure); `None` for the native engine.
    pub fuel: Option<u64>,
    /// The plugin's largest linear memory during the call, in bytes; `None` for native.
    pub peak_memory_bytes: Option<usize>,
}

/// Why an engine call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineError {
    /// The plugin could not be loaded or failed during a call.
    Plugin(PluginError),
    /// The request is malformed.
    BadInput(String),
    /// The scenario cannot be rendered or traced.
    Failed(String),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::Plugin(err) => err.fmt(f),
            EngineError::BadInput(message) | EngineError::Failed(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for EngineError {}

impl From<PluginError> for EngineError {
    fn from(err: PluginError) -> Self {
        // The plugin's typed errors are the core's own answers: the same as the native engine's.
        match err {
            PluginError::BadInput(message) => EngineError::BadInput(message),
            PluginError::Failed(message) => EngineError::Failed(message),
            other => EngineError::Plugin(other),
        }
    }
}

impl Engine {
    /// The plugin embedded in this binary.
    pub fn embedded_plugin(limits: Limits, cache: &CacheDir) -> Result<Engine, EngineError> {
        Ok(Engine::Plugin(Box::new(PluginRunner::load_embedded(limits, cache)?)))
    }

    /// A plugin from its bytes (a component binary, or WAT text).
    pub fn plugin(bytes: &[u8], limits: Limits, cache: &CacheDir) -> Result<Engine, EngineError> {
        Ok(Engine::Plugin(Box::new(PluginRunner::load(bytes, limits, cache)?)))
    }

    /// Runs `svclab check`; the output is the report JSON, rulesets included whatever
    /// `options.omit_rules` says (callers of the JSON expect the whole report).
    pub fn check(&self, inputs: &[Input], options: &CheckOptions) -> Result<Outcome, EngineError> {
        let options = CheckOptions { omit_rules: false, ..options.clone() };
        match self {
            Engine::Native => Ok(native(svclab_core::check(inputs, &options).to_json())),
            Engine::Plugin(runner) => {
                let groups = wit_groups(&options);
                Ok(runner.check(&wit_inputs(inputs), wit_check_options(&options, &groups))?.into())
            }
        }
    }

    /// Runs `svclab check` for a caller that wants the typed report: the native engine builds it
    /// directly (without the rulesets when `options.omit_rules`), without a JSON round trip; the
    /// plugin's JSON is decoded, and kept for callers that print it.
    pub fn check_report(
        &self,
        inputs: &[Input],
        options: &CheckOptions,
    ) -> Result<Checked, EngineError> {
        match self {
            Engine::Native => {
                Ok(Checked { report: svclab_core::check(inputs, options), json: None, fuel: None })
            }
            Engine::Plugin(runner) => {
                let groups = wit_groups(options);
                let call =
                    runner.check(&wit_inputs(inputs), wit_check_options(options, &groups))?;
                let report = Report::from_json(&call.output).map_err(|err| {
                    EngineError::Failed(format!("the engine returned a malformed report: {err}"))
                })?;
                Ok(Checked { report, json: Some(call.output), fuel: call.fuel })
            }
        }
    }
}

impl Engine {
    /// Runs `svclab check --output text`: the report's text (without rulesets, which the text
    /// never shows) and whether it holds an error. The plugin renders the text itself
    /// (`check-text`), so no report JSON is written in the guest and decoded here.
    pub fn check_text(
        &self,
        inputs: &[Input],
        options: &CheckOptions,
    ) -> Result<CheckedText, EngineError> {
        let options = CheckOptions { omit_rules: true, ..options.clone() };
        match self {
            Engine::Native => {
                let report = svclab_core::check(inputs, &options);
                Ok(CheckedText {
                    text: report.to_text(),
                    has_errors: report.has_errors(),
                    fuel: None,
                })
            }
            Engine::Plugin(runner) => {
                let groups = wit_groups(&options);
                let call =
                    runner.check_text(&wit_inputs(inputs), wit_check_options(&options, &groups))?;
                let WitTextReport { text, has_errors } = call.output;
                Ok(CheckedText { text, has_errors, fuel: call.fuel })
            }
        }
    }
}

/// What [`Engine::check_text`] produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedText {
    /// The report as text.
    pub text: String,
    /// Whether any diagnostic is an error.
    pub has_errors: bool,
    /// Fuel the plugin used; `None` for the native engine or an unmetered plugin.
    pub fuel: Option<u64>,
}

/// What [`Engine::check_report`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The report.
    pub report: Report,
    /// The report JSON as the plugin wrote it; `None` from the native engine.
    pub json: Option<String>,
    /// Fuel the plugin used; `None` for the native engine.
    pub fuel: Option<u64>,
}

impl Checked {
    /// The report JSON: the plugin's bytes, or the native report's encoding (the same bytes).
    pub fn into_json(self) -> String {
        self.json.unwrap_or_else(|| self.report.to_json())
    }
}

impl Engine {
    /// The diagnostics of `check` alone (typed through the plugin's `diagnose` export).
    pub fn diagnose(
        &self,
        inputs: &[Input],
        options: &CheckOptions,
    ) -> Result<Vec<Diagnostic>, EngineError> {
        match self {
            // The typed diagnostics carry no release explanation (the WIT `diagnostic` record
            // has no such field; `check`'s report does), so the native answer drops it too.
            Engine::Native => Ok(svclab_core::check(inputs, options)
                .diagnostics
                .into_iter()
                .map(|d| Diagnostic { releases: None, ..d })
                .collect()),
            Engine::Plugin(runner) => {
                let groups = wit_groups(options);
                let call =
                    runner.diagnose(&wit_inputs(inputs), wit_check_options(options, &groups))?;
                Ok(call.output.into_iter().map(decode_diagnostic).collect())
            }
        }
    }

    /// Runs `svclab render`; the output is the ruleset text.
    pub fn render(
        &self,
        inputs: &[Input],
        options: &RenderOptions,
    ) -> Result<Outcome, EngineError> {
        match self {
            Engine::Native => {
                let (world, _) = svclab_core::evaluate(inputs, &CheckOptions::WORLD_ONLY);
                let text = svclab_core::render(&world, options)
                    .map_err(|err| EngineError::Failed(err.to_string()))?;
                Ok(native(text))
            }
            Engine::Plugin(runner) => {
                // The pieces the command streams, joined: parity holds that path to the bytes.
                let mut text = Vec::new();
                let call = runner.render_to(
                    &wit_inputs(inputs),
                    wit_render_options(options),
                    &mut text,
                )?;
                call.output.map_err(|err| EngineError::Failed(err.to_string()))?;
                let output = String::from_utf8(text)
                    .map_err(|err| EngineError::Failed(format!("ruleset is not UTF-8: {err}")))?;
                Ok(Outcome {
                    output,
                    fuel: call.fuel,
                    peak_memory_bytes: Some(call.peak_memory_bytes),
                })
            }
        }
    }

    /// Runs `svclab render`, writing the ruleset to `out` as it is produced rather than joined
    /// into one string first (tens of megabytes at 10,000 Services): natively through
    /// [`svclab_core::render_to`], which also drops the scenario's text once the cluster state is
    /// built; the plugin's pieces as it hands them over. The inner result is `out`'s first error;
    /// the value is the plugin's fuel when metered. The ruleset is complete inside the plugin
    /// before its first piece is handed over, so a render that fails (the scenario, or a limit)
    /// writes nothing; only a hostile plugin that fails between pieces leaves some written.
    pub fn render_to(
        &self,
        inputs: Vec<Input>,
        options: &RenderOptions,
        out: &mut dyn Write,
    ) -> Result<std::io::Result<Option<u64>>, EngineError> {
        match self {
            Engine::Native => {
                let mut written = Ok(());
                svclab_core::render_to(inputs, options, &mut |piece| {
                    if written.is_ok() {
                        written = out.write_all(piece.as_bytes());
                    }
                })
                .map_err(|err| EngineError::Failed(err.to_string()))?;
                Ok(written.map(|()| None))
            }
            Engine::Plugin(runner) => {
                // The text is lent to the call (the component ABI copies it into the guest).
                let call =
                    runner.render_to(&wit_inputs(&inputs), wit_render_options(options), out)?;
                Ok(call.output.map(|()| call.fuel))
            }
        }
    }

    /// Runs `svclab trace`; the output is the trace report JSON.
    pub fn trace(&self, inputs: &[Input], request: &TraceRequest) -> Result<Outcome, EngineError> {
        match self {
            Engine::Native => {
                let (world, _) = svclab_core::evaluate(inputs, &CheckOptions::WORLD_ONLY);
                let report = svclab_core::trace(&world, request);
                // The same encoding as plugin-wasm's `trace`.
                let mut json = serde_json::to_string_pretty(&report)
                    .map_err(|err| EngineError::Failed(err.to_string()))?;
                json.push('\n');
                Ok(native(json))
            }
            Engine::Plugin(runner) => {
                let options = WitTraceOptions {
                    src: &request.src,
                    dst: &request.dst,
                    dport: request.dport,
                    protocol: &request.protocol,
                    node: request.node.as_deref(),
                    in_interface: request.in_interface.as_deref(),
                };
                Ok(runner.trace(&wit_inputs(inputs), options)?.into())
            }
        }
    }
}

/// What `svclab upgrade` asks the engine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpgradeRequest {
    /// `--to`, as written (`1.33`, `1.33.5`).
    pub to: String,
    /// `--proxy-mode`.
    pub proxy_mode: Option<ProxyMode>,
    /// `--to-profile`'s text.
    pub to_profile: Option<Input>,
    /// `--diff`.
    pub diff: bool,
}

impl UpgradeRequest {
    fn options(&self) -> Result<svclab_core::UpgradeOptions, EngineError> {
        let to = svclab_core::target_release(&self.to)
            .map_err(|err| EngineError::BadInput(err.to_string()))?;
        Ok(svclab_core::UpgradeOptions {
            to,
            proxy_mode: self.proxy_mode,
            to_profile: self.to_profile.clone(),
            diff: self.diff,
        })
    }

    fn wit(&self) -> WitUpgradeOptions<'_> {
        WitUpgradeOptions {
            to: &self.to,
            proxy_mode: self.proxy_mode.map(wit_proxy_mode),
            to_profile: self.to_profile.as_ref().map(wit_input),
            diff: self.diff,
        }
    }
}

impl Engine {
    /// Runs `svclab upgrade --output json`: the rehearsal's report JSON.
    pub fn upgrade(
        &self,
        inputs: &[Input],
        request: &UpgradeRequest,
    ) -> Result<Outcome, EngineError> {
        match self {
            Engine::Native => {
                let report = svclab_core::upgrade(inputs, &request.options()?)
                    .map_err(|err| EngineError::BadInput(err.to_string()))?;
                Ok(native(report.to_json()))
            }
            Engine::Plugin(runner) => {
                Ok(runner.upgrade(&wit_inputs(inputs), request.wit())?.into())
            }
        }
    }

    /// Runs `svclab upgrade`: the rehearsal as text, `has_errors` when a finding breaks
    /// something.
    pub fn upgrade_text(
        &self,
        inputs: &[Input],
        request: &UpgradeRequest,
    ) -> Result<CheckedText, EngineError> {
        match self {
            Engine::Native => {
                let report = svclab_core::upgrade(inputs, &request.options()?)
                    .map_err(|err| EngineError::BadInput(err.to_string()))?;
                Ok(CheckedText { text: report.to_text(), has_errors: report.breaks(), fuel: None })
            }
            Engine::Plugin(runner) => {
                let call = runner.upgrade_text(&wit_inputs(inputs), request.wit())?;
                let WitTextReport { text, has_errors } = call.output;
                Ok(CheckedText { text, has_errors, fuel: call.fuel })
            }
        }
    }
}

impl Engine {
    /// An `admission.k8s.io/v1` AdmissionReview in, the AdmissionReview with its response out,
    /// judged under `options` (the Service policy, the profile, the inventory).
    pub fn validate_admission(
        &self,
        review: &str,
        options: &AdmissionOptions,
    ) -> Result<Outcome, EngineError> {
        match self {
            Engine::Native => svclab_core::validate_admission(review, options)
                .map(native)
                .map_err(|err| EngineError::BadInput(err.to_string())),
            Engine::Plugin(runner) => {
                let inventory: Option<Vec<&str>> = options
                    .inventory
                    .as_ref()
                    .map(|objects| objects.iter().map(String::as_str).collect());
                let options = WitAdmissionOptions {
                    policy: options.policy.as_ref().map(wit_input),
                    profile: options.profile.as_ref().map(wit_input),
                    stringly_typed: options.stringly_typed,
                    inventory: inventory.as_deref(),
                };
                Ok(runner.validate_admission(review, options)?.into())
            }
        }
    }

    /// The settings errors of a Service policy alone (`field` = settings path).
    pub fn check_settings(&self, settings: &Input) -> Result<Vec<Diagnostic>, EngineError> {
        match self {
            Engine::Native => Ok(svclab_core::check_settings(settings)),
            Engine::Plugin(runner) => {
                let call = runner.check_settings(wit_input(settings))?;
                Ok(call.output.into_iter().map(decode_diagnostic).collect())
            }
        }
    }

    /// The JSON Schema of the Service policy settings.
    pub fn settings_schema(&self) -> Result<Outcome, EngineError> {
        match self {
            Engine::Native => Ok(native(svclab_core::settings_schema())),
            Engine::Plugin(runner) => Ok(runner.settings_schema()?.into()),
        }
    }
}

impl Engine {
    /// The files test suites name, resolved against each suite's folder (what `svclab test`
    /// reads for [`Engine::run_tests`]).
    pub fn test_files(&self, suites: &[Input]) -> Result<Vec<String>, EngineError> {
        match self {
            Engine::Native => Ok(svclab_core::test_files(suites)),
            Engine::Plugin(runner) => Ok(runner.test_files(&wit_inputs(suites))?.output),
        }
    }

    /// Runs `svclab test` suites against the files they name: the run, its JSON and its text
    /// (the plugin's bytes, or the native run's encodings: the same bytes).
    pub fn run_tests(
        &self,
        suites: &[Input],
        files: &[Input],
        options: &TestOptions,
    ) -> Result<Tested, EngineError> {
        match self {
            Engine::Native => {
                let run = svclab_core::run_tests(suites, files, options);
                Ok(Tested { json: run.to_json(), text: run.to_text(), run, fuel: None })
            }
            Engine::Plugin(runner) => {
                let call = runner.run_tests(
                    &wit_inputs(suites),
                    &wit_inputs(files),
                    WitTestOptions { update: options.update },
                )?;
                let WitTestRun { json, text, updated } = call.output;
                let mut run = TestRun::from_json(&json).map_err(|err| {
                    EngineError::Failed(format!("the engine returned a malformed test run: {err}"))
                })?;
                run.updated =
                    updated.into_iter().map(|input| Input::new(input.name, input.text)).collect();
                Ok(Tested { run, json, text, fuel: call.fuel })
            }
        }
    }

    /// The JSON Schema of the suite format.
    pub fn test_schema(&self) -> Result<Outcome, EngineError> {
        match self {
            Engine::Native => Ok(native(svclab_core::test_schema())),
            Engine::Plugin(runner) => Ok(runner.test_schema()?.into()),
        }
    }
}

/// What [`Engine::run_tests`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Tested {
    /// The run, with the files `update` rewrote.
    pub run: TestRun,
    /// Its JSON (`svclab test --output json`).
    pub json: String,
    /// Its text (`svclab test`).
    pub text: String,
    /// Fuel the plugin used; `None` for the native engine or an unmetered plugin.
    pub fuel: Option<u64>,
}

impl Outcome {
    /// Prints the fuel figure (plugin engine only) to `stderr`.
    pub(crate) fn report_fuel(&self, stderr: &mut dyn Write) -> std::io::Result<()> {
        match self.fuel {
            Some(fuel) => writeln!(stderr, "svclab: plugin fuel used: {fuel}"),
            None => Ok(()),
        }
    }
}

impl From<crate::plugin::CallOutput> for Outcome {
    fn from(call: crate::plugin::CallOutput) -> Self {
        Outcome {
            output: call.output,
            fuel: call.fuel,
            peak_memory_bytes: Some(call.peak_memory_bytes),
        }
    }
}

fn native(output: String) -> Outcome {
    Outcome { output, fuel: None, peak_memory_bytes: None }
}

fn decode_diagnostic(diagnostic: WitDiagnostic) -> Diagnostic {
    Diagnostic {
        severity: match diagnostic.severity {
            WitSeverity::Error => Severity::Error,
            WitSeverity::Warning => Severity::Warning,
            WitSeverity::Info => Severity::Info,
        },
        object: diagnostic.object.map(|object| ObjectRef {
            kind: object.kind,
            namespace: object.namespace,
            name: object.name,
        }),
        field: diagnostic.field,
        reason: diagnostic.reason,
        message: diagnostic.message,
        source: diagnostic.source.map(|source| Source {
            file: source.file,
            document: source.document as usize,
            line: source.line,
            column: source.column,
        }),
        releases: None,
    }
}

/// The inputs as a plugin call takes them: lent, not copied (the component ABI copies the text
/// into the guest's memory, once).
fn wit_inputs(inputs: &[Input]) -> Vec<WitInput<'_>> {
    inputs.iter().map(wit_input).collect()
}

fn wit_input(input: &Input) -> WitInput<'_> {
    WitInput { name: &input.name, text: &input.text }
}

fn wit_proxy_mode(mode: ProxyMode) -> WitProxyMode {
    match mode {
        ProxyMode::Iptables => WitProxyMode::Iptables,
        ProxyMode::Nftables => WitProxyMode::Nftables,
    }
}

fn wit_render_options(options: &RenderOptions) -> WitRenderOptions<'_> {
    WitRenderOptions {
        proxy_mode: wit_proxy_mode(options.mode),
        ip_family: options.family.map(|family| match family {
            IpFamily::V4 => WitIpFamily::Ipv4,
            IpFamily::V6 => WitIpFamily::Ipv6,
        }),
        node: options.node.as_deref(),
        standalone: options.standalone,
    }
}

/// The requester's groups as [`wit_check_options`] lends them.
fn wit_groups(options: &CheckOptions) -> Vec<&str> {
    options.user_info.iter().flat_map(|user| &user.groups).map(String::as_str).collect()
}

fn wit_check_options<'a>(options: &'a CheckOptions, groups: &'a [&'a str]) -> WitCheckOptions<'a> {
    WitCheckOptions {
        no_defaults: options.no_defaults,
        policy: options.policy.as_ref().map(wit_input),
        user_info: options
            .user_info
            .as_ref()
            .map(|user| WitUserInfo { username: &user.username, groups }),
        explain_release: options.explain_release,
        omit_rules: options.omit_rules,
    }
}
