//! The wasmtime host for `svclab:policy` components: one [`wasmtime::Engine`], the component
//! compiled once (and cached on disk, keyed by its SHA-256, so the next process starts fast), a
//! fresh [`Store`] per call with an epoch deadline, memory limits and (unless the plugin is
//! trusted, see [`Limits::fuel`]) a fuel budget.
//!
//! Plugins are treated as hostile: every call runs under all three limits, a trap becomes a
//! [`PluginError`] naming the limit that stopped it, and nothing of a failed call survives into
//! the next one (the next call gets a new `Store` and a new instance).

mod cache;
mod limits;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, ResourceLimiter,
    Store, Trap,
};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

pub use cache::CacheDir;
pub use limits::Limits;

/// The bindings generated from `wit/policy.wit`.
mod generated {
    wasmtime::component::bindgen!({
        path: "../wit/policy.wit",
        world: "policy",
        ownership: Borrowing { duplicate_if_necessary: true },
    });
}

pub(crate) use generated::{
    AdmissionOptions as WitAdmissionOptions, CheckOptions as WitCheckOptions,
    Diagnostic as WitDiagnostic, Error as WitError, InputParam as WitInput,
    IpFamily as WitIpFamily, ProxyMode as WitProxyMode, RenderOptions as WitRenderOptions,
    Severity as WitSeverity, TestOptions as WitTestOptions, TestRun as WitTestRun,
    TextReport as WitTextReport, TraceOptions as WitTraceOptions,
    UpgradeOptions as WitUpgradeOptions, UserInfo as WitUserInfo,
};

/// The ABI version of `wit/policy.wit` this host speaks.
pub const ABI_VERSION: u32 = 6;

/// The plugin built from `plugin-wasm/` by `build.rs`.
pub static EMBEDDED_PLUGIN: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/svclab_plugin.wasm"));

/// [`EMBEDDED_PLUGIN`]'s SHA-256 in lowercase hex, computed by `build.rs`.
pub(crate) static EMBEDDED_PLUGIN_SHA256: &str =
    include_str!(concat!(env!("OUT_DIR"), "/svclab_plugin.wasm.sha256"));

/// Epoch ticks per second (the ticker thread's period is the deadline's resolution).
const TICK: Duration = Duration::from_millis(10);

/// Linear memory a pool slot keeps mapped between calls, reset with `memset` rather than
/// unmapped: a fresh call then reuses warm pages instead of faulting in new ones (a 1,000-Service
/// check touches ~20 MiB; page faults were a tenth of its cost).
const KEEP_RESIDENT_BYTES: usize = 64 << 20;

/// How many bytes of the guest's standard error a failed call quotes (panic messages).
const GUEST_STDERR_CAPACITY: usize = 16 * 1024;

/// Why a plugin could not be loaded or a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PluginError {
    /// The bytes are not a loadable component (or it imports something other than `wasi:*`).
    Load(String),
    /// The plugin speaks another ABI version.
    AbiVersion {
        /// What the plugin's `abi-version` returned.
        found: u32,
        /// What this host speaks.
        expected: u32,
    },
    /// The call used up its fuel budget.
    OutOfFuel {
        /// The budget.
        fuel: u64,
    },
    /// The call ran past its deadline.
    Timeout {
        /// The deadline.
        timeout: Duration,
    },
    /// The call tried to grow its memory past the limit.
    MemoryLimit {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The call trapped.
    Trap(String),
    /// The plugin refused the request as malformed (its typed `bad-input` error).
    BadInput(String),
    /// The plugin could not answer (its typed `failed` error).
    Failed(String),
}

impl std::fmt::Display for PluginError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PluginError::Load(message) => write!(f, "cannot load plugin: {message}"),
            PluginError::AbiVersion { found, expected } => write!(
                f,
                "plugin speaks svclab:policy ABI version {found}, this host speaks version {expected}"
            ),
            PluginError::OutOfFuel { fuel } => {
                write!(f, "plugin ran out of fuel (budget {fuel}; raise it with --fuel)")
            }
            PluginError::Timeout { timeout } => write!(
                f,
                "plugin exceeded its deadline of {} ms (raise it with --timeout-ms)",
                timeout.as_millis()
            ),
            PluginError::MemoryLimit { limit } => write!(
                f,
                "plugin exceeded its memory limit of {} MiB (raise it with --max-memory-mib)",
                limit >> 20
            ),
            PluginError::Trap(message) => write!(f, "plugin trapped: {message}"),
            PluginError::BadInput(message) | PluginError::Failed(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for PluginError {}

/// What a successful call returned, with its cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutput<T = String> {
    /// The output document (or typed answer).
    pub output: T,
    /// Fuel the call consumed; `None` when the call ran unmetered.
    pub fuel: Option<u64>,
    /// The largest linear memory the call had, in bytes.
    pub peak_memory_bytes: usize,
}

/// Per-store host state: WASI (no files, no network, no environment) and the memory limiter.
struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: CallLimiter,
}

/// The store's resource limiter; remembers whether the memory limit stopped the guest.
struct CallLimiter {
    limits: Limits,
    memory_exceeded: bool,
    /// The largest linear memory size granted so far, in bytes.
    peak_memory_bytes: usize,
}

impl ResourceLimiter for CallLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limits.max_memory_bytes {
            // An error (rather than `Ok(false)`, which makes `memory.grow` return -1) traps the
            // guest at once, so a guest that ignores failed grows cannot spin on them.
            self.memory_exceeded = true;
            return Err(wasmtime::Error::msg(format!("memory grow to {desired} bytes refused")));
        }
        self.peak_memory_bytes = self.peak_memory_bytes.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= self.limits.max_table_elements)
    }

    fn instances(&self) -> usize {
        self.limits.max_instances
    }

    fn tables(&self) -> usize {
        self.limits.max_instances
    }

    fn memories(&self) -> usize {
        self.limits.max_instances
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// A loaded, ABI-checked plugin, ready to serve calls.
pub struct PluginRunner {
    engine: Engine,
    pre: generated::PolicyPre<HostState>,
    limits: Limits,
    ticker: Ticker,
    /// Whether the compiled component came from the on-disk cache.
    from_cache: bool,
    /// The instance that answered the ABI check, kept for the first call of an unmetered
    /// runner: it has run nothing but `abi-version` (a constant), so it is as fresh as a new
    /// one, and a one-call process (`svclab check`) instantiates once instead of twice. Metered
    /// runners never use it, so the fuel of a call does not depend on whether it came first.
    checked: Mutex<Option<(CallStore, generated::Policy)>>,
}

impl std::fmt::Debug for PluginRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginRunner").field("limits", &self.limits).finish_non_exhaustive()
    }
}

impl PluginRunner {
    /// Loads a component (binary, or WAT text), compiling it or reusing the cached compilation,
    /// and checks its ABI version.
    pub fn load(
        bytes: &[u8],
        limits: Limits,
        cache: &CacheDir,
    ) -> Result<PluginRunner, PluginError> {
        PluginRunner::load_digested(bytes, None, limits, cache)
    }

    /// Loads the plugin embedded in this binary, whose digest `build.rs` computed.
    pub(crate) fn load_embedded(
        limits: Limits,
        cache: &CacheDir,
    ) -> Result<PluginRunner, PluginError> {
        PluginRunner::load_digested(EMBEDDED_PLUGIN, Some(EMBEDDED_PLUGIN_SHA256), limits, cache)
    }

    /// [`PluginRunner::load`], with the bytes' SHA-256 (lowercase hex) when already known.
    fn load_digested(
        bytes: &[u8],
        sha256: Option<&str>,
        limits: Limits,
        cache: &CacheDir,
    ) -> Result<PluginRunner, PluginError> {
        let engine = new_engine(&limits)?;
        let (component, from_cache) = cache.load(&engine, bytes, sha256)?;
        check_imports(&engine, &component)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(load_error)?;
        let instance_pre = linker.instantiate_pre(&component).map_err(load_error)?;
        let ticker = Ticker::start(&engine);
        let mut runner_store = new_store(&engine, &limits);
        // The ABI version is read through an untyped lookup first, so a plugin for another
        // version of the WIT file fails with a clear message instead of a type mismatch.
        let instance = instance_pre
            .instantiate(&mut runner_store.store)
            .map_err(|err| runner_store.error(err))?;
        let abi_version = instance
            .get_typed_func::<(), (u32,)>(&mut runner_store.store, "abi-version")
            .map_err(|err| PluginError::Load(format!("no usable `abi-version` export: {err:#}")))?;
        let (found,) =
            abi_version.call(&mut runner_store.store, ()).map_err(|err| runner_store.error(err))?;
        if found != ABI_VERSION {
            return Err(PluginError::AbiVersion { found, expected: ABI_VERSION });
        }
        let pre = generated::PolicyPre::new(instance_pre).map_err(load_error)?;
        let checked = match limits.fuel {
            None => {
                let policy = generated::Policy::new(&mut runner_store.store, &instance)
                    .map_err(load_error)?;
                Some((runner_store, policy))
            }
            Some(_) => None,
        };
        Ok(PluginRunner { engine, pre, limits, ticker, from_cache, checked: Mutex::new(checked) })
    }

    /// Whether the compiled component was read from the on-disk cache.
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }

    /// The limits every call runs under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The whole pipeline; the report JSON.
    pub(crate) fn check(
        &self,
        inputs: &[WitInput<'_>],
        options: WitCheckOptions<'_>,
    ) -> Result<CallOutput, PluginError> {
        self.call(|policy, store| policy.call_check(store, inputs, options))
    }

    /// The whole pipeline; the report as text, and whether it holds an error.
    pub(crate) fn check_text(
        &self,
        inputs: &[WitInput<'_>],
        options: WitCheckOptions<'_>,
    ) -> Result<CallOutput<WitTextReport>, PluginError> {
        self.call(|policy, store| policy.call_check_text(store, inputs, options))
    }

    /// The upgrade rehearsal; the report JSON.
    pub(crate) fn upgrade(
        &self,
        inputs: &[WitInput<'_>],
        options: WitUpgradeOptions<'_>,
    ) -> Result<CallOutput, PluginError> {
        self.call(|policy, store| policy.call_upgrade(store, inputs, options))
    }

    /// The upgrade rehearsal as text, and whether a finding breaks something.
    pub(crate) fn upgrade_text(
        &self,
        inputs: &[WitInput<'_>],
        options: WitUpgradeOptions<'_>,
    ) -> Result<CallOutput<WitTextReport>, PluginError> {
        self.call(|policy, store| policy.call_upgrade_text(store, inputs, options))
    }

    /// The diagnostics of `check`, typed.
    pub(crate) fn diagnose(
        &self,
        inputs: &[WitInput<'_>],
        options: WitCheckOptions<'_>,
    ) -> Result<CallOutput<Vec<WitDiagnostic>>, PluginError> {
        self.call(|policy, store| policy.call_diagnose(store, inputs, options))
    }

    /// The ruleset, written to `out` piece by piece as the plugin hands the pieces over
    /// (`render-begin`, then `render-next` until `none`), so neither side holds all of it. The
    /// inner result is `out`'s first error, which ends the call. A plugin's pieces together may
    /// not exceed its memory limit, the bound of any one answer (a hostile guest could otherwise
    /// hand out the same piece until its deadline).
    pub(crate) fn render_to(
        &self,
        inputs: &[WitInput<'_>],
        options: WitRenderOptions<'_>,
        out: &mut dyn std::io::Write,
    ) -> Result<CallOutput<std::io::Result<()>>, PluginError> {
        let limit = self.limits.max_memory_bytes;
        self.call(|policy, store| {
            if let Err(err) = policy.call_render_begin(&mut *store, inputs, options)? {
                return Ok(Err(err));
            }
            let mut total = 0_usize;
            while let Some(piece) = policy.call_render_next(&mut *store)? {
                total = total.saturating_add(piece.len());
                if total > limit {
                    store.data_mut().limiter.memory_exceeded = true;
                    return Err(wasmtime::Error::msg(format!(
                        "the ruleset's pieces exceed {limit} bytes"
                    )));
                }
                if let Err(err) = out.write_all(piece.as_bytes()) {
                    return Ok(Ok(Err(err)));
                }
            }
            Ok(Ok(Ok(())))
        })
    }

    /// The packet walk text.
    pub(crate) fn trace(
        &self,
        inputs: &[WitInput<'_>],
        options: WitTraceOptions<'_>,
    ) -> Result<CallOutput, PluginError> {
        self.call(|policy, store| policy.call_trace(store, inputs, options))
    }

    /// A fresh store and instance, and a call of `abi-version`: the fixed cost of every call.
    pub fn ping(&self) -> Result<u32, PluginError> {
        let _ = &self.ticker;
        let mut call_store = new_store(&self.engine, &self.limits);
        let policy =
            self.pre.instantiate(&mut call_store.store).map_err(|err| call_store.error(err))?;
        policy.call_abi_version(&mut call_store.store).map_err(|err| call_store.error(err))
    }

    /// An AdmissionReview in, the AdmissionReview with its response out.
    pub(crate) fn validate_admission(
        &self,
        review: &str,
        options: WitAdmissionOptions<'_>,
    ) -> Result<CallOutput, PluginError> {
        self.call(|policy, store| policy.call_validate_admission(store, review, options))
    }

    /// The settings errors of a Service policy, typed.
    pub(crate) fn check_settings(
        &self,
        settings: WitInput<'_>,
    ) -> Result<CallOutput<Vec<WitDiagnostic>>, PluginError> {
        self.call(|policy, store| policy.call_check_settings(store, settings))
    }

    /// The JSON Schema of the settings.
    pub(crate) fn settings_schema(&self) -> Result<CallOutput, PluginError> {
        self.call(|policy, store| policy.call_settings_schema(store).map(Ok))
    }

    /// The files test suites name.
    pub(crate) fn test_files(
        &self,
        suites: &[WitInput<'_>],
    ) -> Result<CallOutput<Vec<String>>, PluginError> {
        self.call(|policy, store| policy.call_test_files(store, suites).map(Ok))
    }

    /// Runs test suites against the files they name.
    pub(crate) fn run_tests(
        &self,
        suites: &[WitInput<'_>],
        files: &[WitInput<'_>],
        options: WitTestOptions,
    ) -> Result<CallOutput<WitTestRun>, PluginError> {
        self.call(|policy, store| policy.call_run_tests(store, suites, files, options))
    }

    /// The JSON Schema of the suite format.
    pub(crate) fn test_schema(&self) -> Result<CallOutput, PluginError> {
        self.call(|policy, store| policy.call_test_schema(store).map(Ok))
    }

    /// Instantiates a fresh store and instance, runs `f` under the limits, and maps the outcome.
    fn call<T, F>(&self, f: F) -> Result<CallOutput<T>, PluginError>
    where
        F: FnOnce(
            &generated::Policy,
            &mut Store<HostState>,
        ) -> wasmtime::Result<Result<T, WitError>>,
    {
        let _ = &self.ticker;
        let checked = self.checked.lock().ok().and_then(|mut checked| checked.take());
        let (mut call_store, policy) = match checked {
            Some((mut call_store, policy)) => {
                // The deadline counts from now, not from the load.
                call_store.store.set_epoch_deadline(deadline_ticks(self.limits.timeout));
                (call_store, policy)
            }
            None => {
                let mut call_store = new_store(&self.engine, &self.limits);
                let policy = self
                    .pre
                    .instantiate(&mut call_store.store)
                    .map_err(|err| call_store.error(err))?;
                (call_store, policy)
            }
        };
        let answer = f(&policy, &mut call_store.store).map_err(|err| call_store.error(err))?;
        let fuel = self
            .limits
            .fuel
            .map(|budget| budget.saturating_sub(call_store.store.get_fuel().unwrap_or(0)));
        match answer {
            Ok(output) => Ok(CallOutput {
                output,
                fuel,
                peak_memory_bytes: call_store.store.data().limiter.peak_memory_bytes,
            }),
            Err(WitError::BadInput(message)) => Err(PluginError::BadInput(message)),
            Err(WitError::Failed(message)) => Err(PluginError::Failed(message)),
        }
    }
}

/// A store with its limits armed and the guest's standard error captured.
struct CallStore {
    store: Store<HostState>,
    stderr: MemoryOutputPipe,
    limits: Limits,
}

impl CallStore {
    /// Maps a wasmtime error (a trap, most likely) to the limit or fault behind it.
    fn error(&self, err: wasmtime::Error) -> PluginError {
        if self.store.data().limiter.memory_exceeded {
            return PluginError::MemoryLimit { limit: self.limits.max_memory_bytes };
        }
        match err.downcast_ref::<Trap>() {
            Some(Trap::OutOfFuel) => PluginError::OutOfFuel { fuel: self.limits.fuel.unwrap_or(0) },
            Some(Trap::Interrupt) => PluginError::Timeout { timeout: self.limits.timeout },
            _ => {
                let stderr = self.stderr.contents();
                let stderr = String::from_utf8_lossy(&stderr);
                let stderr = stderr.trim();
                if stderr.is_empty() {
                    PluginError::Trap(format!("{err:#}"))
                } else {
                    PluginError::Trap(format!("{err:#} (guest stderr: {stderr})"))
                }
            }
        }
    }
}

fn new_store(engine: &Engine, limits: &Limits) -> CallStore {
    let stderr = MemoryOutputPipe::new(GUEST_STDERR_CAPACITY);
    // No files, network, environment or arguments; randomness is a fixed sequence so a plugin
    // cannot behave differently from run to run (the core takes its seed from the scenario).
    let wasi = WasiCtx::builder()
        .stderr(stderr.clone())
        .secure_random(wasmtime_wasi::Deterministic::new(vec![0x5a; 32]))
        .insecure_random(wasmtime_wasi::Deterministic::new(vec![0xa5; 32]))
        .insecure_random_seed(0)
        .build();
    let limiter =
        CallLimiter { limits: limits.clone(), memory_exceeded: false, peak_memory_bytes: 0 };
    let mut store = Store::new(engine, HostState { wasi, table: ResourceTable::new(), limiter });
    store.limiter(|state| &mut state.limiter);
    if let Some(fuel) = limits.fuel {
        // Infallible: the engine was configured with `consume_fuel(true)`.
        let _ = store.set_fuel(fuel);
    }
    // What a call hands back (a report, rendered rules) is copied out of the guest's memory in
    // one piece, and wasmtime caps each such copy at 128 MiB of "hostcall fuel" by default:
    // 100,000 Services' rulesets are larger. The guest cannot hold more than its memory limit,
    // so that limit bounds the copy too.
    store.set_hostcall_fuel(limits.max_memory_bytes);
    store.set_epoch_deadline(deadline_ticks(limits.timeout));
    store.epoch_deadline_trap();
    CallStore { store, stderr, limits: limits.clone() }
}

fn deadline_ticks(timeout: Duration) -> u64 {
    let ticks = timeout.as_nanos().div_ceil(TICK.as_nanos());
    u64::try_from(ticks).unwrap_or(u64::MAX).max(1)
}

fn new_engine(limits: &Limits) -> Result<Engine, PluginError> {
    let mut config = Config::new();
    config.wasm_component_model(true);
    // Metering instruments every basic block of the compiled code, so it is an engine setting
    // (and part of the code cache's key, through the engine's compatibility hash).
    config.consume_fuel(limits.fuel.is_some());
    config.epoch_interruption(true);
    config.max_wasm_stack(limits.max_wasm_stack_bytes);
    // For profiling only: `perf` names the plugin's compiled functions from /tmp/perf-PID.map
    // (CONTRIBUTING.md, "Measure and profile"). Unset, the engine is the same.
    if std::env::var_os("SVCLAB_PERFMAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    if !limits.pooling {
        // An unmetered one-shot call's memory, in transparent huge pages where the kernel has
        // them (src/linear_memory.rs). wasmtime maps a module's initial memory copy-on-write
        // only into memories it maps itself; into these a compiled start-up function copies the
        // data segments (some 135,000 instructions per instance), which a metered call would be
        // charged as fuel, so metered engines keep wasmtime's memories.
        #[cfg(target_os = "linux")]
        if limits.fuel.is_none() {
            config
                .memory_init_cow(false)
                .with_host_memory(Arc::new(crate::linear_memory::HugePageMemories));
        }
        return Engine::new(&config).map_err(load_error);
    }
    // A pool of instance slots: per-call instantiation reuses memory instead of mapping it anew.
    // A component here is a few core instances (the program, its WASI adapter, shims).
    let slots = limits.pool_slots.max(1);
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(slots)
        .total_core_instances(slots * 8)
        .total_memories(slots * 4)
        .total_tables(slots * 8)
        .max_memory_size(limits.max_memory_bytes)
        .linear_memory_keep_resident(KEEP_RESIDENT_BYTES.min(limits.max_memory_bytes))
        .table_keep_resident(1 << 20)
        // Reset only the pages a call dirtied (Linux 6.7's PAGEMAP_SCAN ioctl; older kernels
        // fall back to resetting the whole resident prefix). Without it every call paid a
        // `memset` of the guest's whole linear memory (~1.2 MiB after an AdmissionReview): two
        // thirds of the fixed cost of a call, a fifth of a review's.
        .pagemap_scan(Enabled::Auto);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    Engine::new(&config).map_err(load_error)
}

/// The allow-list: a plugin may import `wasi:*` interfaces and nothing else.
fn check_imports(engine: &Engine, component: &Component) -> Result<(), PluginError> {
    let forbidden: Vec<String> = component
        .component_type()
        .imports(engine)
        .map(|(name, _)| name.to_owned())
        .filter(|name| !name.starts_with("wasi:"))
        .collect();
    if forbidden.is_empty() {
        Ok(())
    } else {
        Err(PluginError::Load(format!(
            "imports outside the wasi:* allow-list: {}",
            forbidden.join(", ")
        )))
    }
}

fn load_error(err: wasmtime::Error) -> PluginError {
    PluginError::Load(format!("{err:#}"))
}

/// Advances the engine's epoch every [`TICK`] until dropped.
struct Ticker {
    stop: Arc<AtomicBool>,
}

impl Ticker {
    fn start(engine: &Engine) -> Ticker {
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        let engine = engine.clone();
        std::thread::spawn(move || {
            while !thread_stop.load(Ordering::Relaxed) {
                std::thread::sleep(TICK);
                engine.increment_epoch();
            }
        });
        Ticker { stop }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// What a component imports and exports, by name (`func check`, `type input`,
/// `instance wasi:io/streams@0.2.6`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentInterface {
    /// Imports, in the component's order.
    pub imports: Vec<String>,
    /// Exports, in the component's order.
    pub exports: Vec<String>,
}

/// Lists a component's imports and exports (for the artifact's allow-list check).
pub fn component_interface(bytes: &[u8]) -> Result<ComponentInterface, PluginError> {
    let engine = new_engine(&Limits::default())?;
    let component = Component::new(&engine, bytes).map_err(load_error)?;
    let ty = component.component_type();
    let describe = |(name, item): (&str, wasmtime::component::types::ComponentExtern<'_>)| {
        use wasmtime::component::types::ComponentItem;
        let kind = match item.ty {
            ComponentItem::ComponentFunc(_) => "func",
            ComponentItem::CoreFunc(_) => "core-func",
            ComponentItem::Module(_) => "module",
            ComponentItem::Component(_) => "component",
            ComponentItem::ComponentInstance(_) => "instance",
            ComponentItem::Type(_) => "type",
            ComponentItem::Resource(_) => "resource",
        };
        format!("{kind} {name}")
    };
    Ok(ComponentInterface {
        imports: ty.imports(&engine).map(describe).collect(),
        exports: ty.exports(&engine).map(describe).collect(),
    })
}
