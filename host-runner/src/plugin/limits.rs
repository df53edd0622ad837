//! The limits every plugin call runs under.

use std::time::Duration;

/// Fuel, deadline and memory limits of one call (each call gets a fresh store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Fuel budget per call (roughly one unit per WebAssembly instruction); `None` runs the
    /// guest unmetered, for a trusted plugin (the embedded one), which makes its code ~30 %
    /// faster. The deadline and the memory limit hold either way.
    pub fuel: Option<u64>,
    /// Wall-clock deadline per call, enforced with epoch interruption.
    pub timeout: Duration,
    /// Largest linear memory a call may grow to, in bytes.
    pub max_memory_bytes: usize,
    /// Largest table a call may grow to, in elements.
    pub max_table_elements: usize,
    /// Most instances, tables and memories per store.
    pub max_instances: usize,
    /// Largest WebAssembly stack, in bytes.
    pub max_wasm_stack_bytes: usize,
    /// Reuse instance slots between calls (wasmtime's pooling allocator): repeated calls start
    /// faster and skip most page faults, loading costs ~2 ms more. For long-running hosts
    /// (`svclab serve`), not for one call per process.
    pub pooling: bool,
    /// Instance slots of the pool (calls that may run at once on one runner) when `pooling`.
    pub pool_slots: u32,
}

impl Limits {
    /// Default fuel: a 10,000-Service render uses a few hundred million units, so this budget
    /// stops a runaway guest after a few seconds while leaving real scenarios ample room.
    pub const DEFAULT_FUEL: u64 = 50_000_000_000;
    /// Default deadline.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default memory limit: 1 GiB.
    pub const DEFAULT_MAX_MEMORY_BYTES: usize = 1 << 30;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: Some(Limits::DEFAULT_FUEL),
            timeout: Limits::DEFAULT_TIMEOUT,
            max_memory_bytes: Limits::DEFAULT_MAX_MEMORY_BYTES,
            max_table_elements: 100_000,
            max_instances: 16,
            max_wasm_stack_bytes: 1 << 20,
            pooling: false,
            pool_slots: 16,
        }
    }
}
