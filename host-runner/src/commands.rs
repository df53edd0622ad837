//! The command line: global options, one module and one `XxxCommand` struct per subcommand.

mod check;
mod doc;
mod oci;
mod policy;
mod render;
mod serve;
mod test;
mod trace;
mod upgrade;

use std::io::{Read, Write};
use std::path::PathBuf;

use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::engine::Engine;
use crate::input::io_message;
use crate::plugin::{CacheDir, Limits};

pub(crate) use check::CheckCommand;
pub(crate) use doc::DocCommand;
pub(crate) use oci::OciCommand;
pub(crate) use policy::PolicyCommand;
pub(crate) use render::RenderCommand;
pub(crate) use serve::ServeCommand;
pub use serve::{FailurePolicy, HttpResponse, TlsConfig, TlsError, route};
pub(crate) use test::TestCommand;
pub(crate) use trace::TraceCommand;
pub(crate) use upgrade::UpgradeCommand;

/// Exit code when the scenario has errors (the report was printed).
pub(crate) const EXIT_REPORT_ERRORS: u8 = 1;
/// Exit code for usage, I/O and engine failures (no report).
pub(crate) const EXIT_FAILURE: u8 = 2;

/// svclab: what a real cluster does to these Kubernetes Services.
#[derive(Debug, Parser)]
#[command(
    name = "svclab",
    version,
    about,
    max_term_width = 100,
    after_help = "Exit status: 0 when the scenario is accepted, 1 when it has errors (the report is \
                  printed), 2 for usage, I/O and plugin failures.\n\
                  With --verbose, a metered plugin call (--fuel, or any --plugin) prints \
                  `svclab: plugin fuel used: N` on standard error."
)]
pub struct Cli {
    #[command(flatten)]
    engine: EngineOptions,
    /// Also print what each plugin call cost (`svclab: plugin fuel used: N`) on standard error.
    #[arg(long, short, global = true)]
    verbose: bool,
    /// The subcommand.
    #[command(subcommand)]
    command: Command,
}

/// Which engine runs the core, and the plugin's limits.
#[derive(Debug, Args)]
struct EngineOptions {
    /// Which engine runs the core: the sandboxed WebAssembly plugin, or the core linked natively
    /// (for comparison; both give identical bytes).
    #[arg(long, value_enum, global = true, default_value_t = EngineKind::Plugin)]
    engine: EngineKind,
    /// Run this WebAssembly plugin (a `svclab:policy` component) instead of the embedded one.
    #[arg(long, value_name = "PATH", global = true)]
    plugin: Option<PathBuf>,
    /// Fuel budget per plugin call. A plugin given with --plugin is always metered (default
    /// budget 50000000000); the embedded plugin is trusted and runs unmetered unless this is
    /// set (its deadline and memory limit hold either way).
    #[arg(long, value_name = "N", global = true)]
    fuel: Option<u64>,
    /// Deadline per plugin call, in milliseconds.
    #[arg(long, value_name = "MS", global = true, default_value_t = duration_ms(Limits::DEFAULT_TIMEOUT))]
    timeout_ms: u64,
    /// Largest linear memory of a plugin call, in MiB.
    #[arg(long, value_name = "MIB", global = true, default_value_t = Limits::DEFAULT_MAX_MEMORY_BYTES >> 20)]
    max_memory_mib: usize,
    /// Where compiled plugins are cached (default: plugins/ in $SVCLAB_CACHE_DIR, else in
    /// $XDG_CACHE_HOME/svclab, else in ~/.cache/svclab).
    #[arg(long, value_name = "DIR", global = true)]
    cache_dir: Option<PathBuf>,
    /// Compile the plugin even if a cached compilation exists (and do not store one).
    #[arg(long, global = true)]
    no_cache: bool,
}

const fn duration_ms(duration: Duration) -> u64 {
    duration.as_secs() * 1000 + duration.subsec_millis() as u64
}

impl EngineOptions {
    /// The engine; `long_running` hosts (the webhook) reuse instance slots between calls.
    fn engine(&self, long_running: bool) -> anyhow::Result<Engine> {
        if self.engine == EngineKind::Native {
            anyhow::ensure!(
                self.plugin.is_none(),
                "--plugin cannot be combined with --engine native"
            );
            return Ok(Engine::Native);
        }
        // Third-party plugins are hostile and always metered; the embedded plugin is built
        // from this repository's core, so fuel is only counted when asked for.
        let fuel = match (&self.plugin, self.fuel) {
            (_, Some(fuel)) => Some(fuel),
            (Some(_), None) => Some(Limits::DEFAULT_FUEL),
            (None, None) => None,
        };
        let limits = Limits {
            fuel,
            timeout: Duration::from_millis(self.timeout_ms),
            max_memory_bytes: self.max_memory_mib.saturating_mul(1 << 20),
            pooling: long_running,
            // The webhook runs one review per core at a time: as many instance slots.
            pool_slots: if long_running {
                serve::concurrency()
            } else {
                Limits::default().pool_slots
            },
            ..Limits::default()
        };
        let cache = match (&self.cache_dir, self.no_cache) {
            (_, true) => CacheDir::disabled(),
            (Some(dir), false) => CacheDir::at(dir),
            (None, false) => CacheDir::from_env(),
        };
        let engine = match &self.plugin {
            Some(path) => {
                let bytes = std::fs::read(path).map_err(|err| {
                    anyhow::anyhow!(
                        "cannot read {:?}: {}",
                        path.display().to_string(),
                        io_message(&err)
                    )
                })?;
                Engine::plugin(&bytes, limits, &cache)?
            }
            None => Engine::embedded_plugin(limits, &cache)?,
        };
        Ok(engine)
    }
}

/// Which engine runs the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineKind {
    /// The core linked into this binary.
    Native,
    /// The core inside the sandboxed WebAssembly plugin.
    Plugin,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the whole pipeline and print the report.
    Check(CheckCommand),
    /// Print only the ruleset kube-proxy programs, ready for iptables-restore / nft -f.
    Render(RenderCommand),
    /// Walk a packet through the rules: matched rules, DNAT choices, masquerade, verdict.
    Trace(TraceCommand),
    /// Rehearse an upgrade, rollback, kube-proxy mode switch or range change: what the
    /// cluster's Services meet (exit status 1 when a finding breaks something).
    Upgrade(UpgradeCommand),
    /// Serve a validating admission webhook (AdmissionReview v1 at /validate; /healthz, /readyz,
    /// /metrics).
    Serve(ServeCommand),
    /// Check the svclab examples of Markdown documents (`svclab doc test FILE.md...`).
    Doc(DocCommand),
    /// The operator's Service policy: its settings schema, and checking settings alone.
    Policy(PolicyCommand),
    /// What a Wasm host would make of a published artifact (`svclab oci check REF|LAYOUT
    /// --host kubewarden|istio|envoy-gateway|traefik`).
    Oci(OciCommand),
    /// Run `*.svclab-test.yaml` suites: expected outcomes, addresses, bands, messages, rules,
    /// traces and policy violations (`svclab test schema` prints the format's JSON Schema).
    Test(TestCommand),
}

impl Cli {
    /// Whether the command runs until it is stopped (`serve`) rather than once.
    pub fn serves(&self) -> bool {
        matches!(self.command, Command::Serve(_))
    }
}

/// The standard streams a command reads and writes (captured in tests).
pub struct Io<'a> {
    /// Standard input (scenario text for `-`).
    pub stdin: &'a mut dyn Read,
    /// Standard output (the report, rules, trace).
    pub stdout: &'a mut dyn Write,
    /// Standard error (errors; fuel figures with `--verbose`).
    pub stderr: &'a mut dyn Write,
}

/// Runs a parsed command line; returns the process exit code.
pub fn run(cli: Cli, io: &mut Io<'_>) -> u8 {
    match run_command(cli, io) {
        Ok(code) => code,
        Err(err) => {
            // Nothing more useful can be done when standard error is gone.
            let _ = writeln!(io.stderr, "error: {err:#}");
            EXIT_FAILURE
        }
    }
}

/// Parses `args` (the first is the program name) and runs them, as the binary does.
pub fn run_args<I, T>(args: I, io: &mut Io<'_>) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    match Cli::try_parse_from(args) {
        Ok(cli) => run(cli, io),
        Err(err) => {
            let text = err.render().to_string();
            if err.use_stderr() {
                let _ = write!(io.stderr, "{text}");
                EXIT_FAILURE
            } else {
                let _ = write!(io.stdout, "{text}");
                0
            }
        }
    }
}

fn run_command(cli: Cli, io: &mut Io<'_>) -> anyhow::Result<u8> {
    // Settings checks, the schema and artifact checks need no engine: they never load the plugin.
    match cli.command {
        Command::Policy(command) => return command.run(io),
        Command::Oci(command) => return command.run(io),
        _ => {}
    }
    let engine = cli.engine.engine(cli.serves())?;
    match cli.command {
        Command::Check(command) => command.run(&engine, io, cli.verbose),
        Command::Render(command) => command.run(&engine, io, cli.verbose),
        Command::Trace(command) => command.run(&engine, io, cli.verbose),
        Command::Upgrade(command) => command.run(&engine, io, cli.verbose),
        Command::Serve(command) => command.run(engine, io),
        Command::Doc(command) => command.run(&engine, io),
        Command::Test(command) => command.run(&engine, io, cli.verbose),
        Command::Policy(_) | Command::Oci(_) => Ok(EXIT_FAILURE),
    }
}
