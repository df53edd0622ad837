//! The `svclab` binary: parse arguments, run, map the result to an exit code.

use std::ffi::{c_int, c_long};

use clap::Parser as _;

/// mimalloc instead of glibc's malloc: the core builds and frees millions of small objects for
/// a cluster-sized scenario, which glibc's bins turned into a fifth of the run.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = svclab_host::Cli::parse();
    if !cli.serves() {
        keep_freed_memory();
    }
    let (mut stdin, mut stdout, mut stderr) =
        (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let mut io = svclab_host::Io { stdin: &mut stdin, stdout: &mut stdout, stderr: &mut stderr };
    std::process::ExitCode::from(svclab_host::run(cli, &mut io))
}

/// `mi_option_purge_delay` in mimalloc.h's `mi_option_e` (the sixteenth option in both v2 and
/// v3, the library the `mimalloc` crate builds; the test below holds it to its default).
const MI_OPTION_PURGE_DELAY: c_int = 15;

#[allow(unsafe_code, reason = "mimalloc's option setters are C functions")]
unsafe extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
    #[cfg(test)]
    fn mi_option_get(option: c_int) -> c_long;
}

/// A command that runs once keeps the memory it frees until it exits. By default mimalloc
/// hands freed pages back to the kernel a second later (`purge_delay`, 1,000 ms in the v3 it
/// builds), and a 100,000-Service `render`, which frees the YAML of each document and the
/// cluster state before it writes the rules, then faulted tens of thousands of pages back in,
/// zeroed: 2 to 4 % of its time. Its peak grows instead (about 600 to 654 MiB; at 10,000
/// Services nothing is purged and nothing changes). `serve` keeps the default, so what a burst
/// of reviews took goes back.
fn keep_freed_memory() {
    // SAFETY: stores a number that mimalloc reads when it considers purging; -1 is "never".
    #[allow(unsafe_code, reason = "a C call without preconditions")]
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, -1);
    }
}

#[cfg(test)]
mod tests {
    /// The option number is `purge_delay`'s: it holds that option's default in mimalloc v3's
    /// options.c (1,000 ms; the options next to it default to 0 and 1).
    #[test]
    fn purge_delay_is_the_option_set() {
        // SAFETY: reads an option.
        #[allow(unsafe_code, reason = "a C call without preconditions")]
        let delay = unsafe { super::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        assert_eq!(delay, 1000);
    }
}
