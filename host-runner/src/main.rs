//! The `svclab` binary: parse arguments, run, map the result to an exit code.

use clap::Parser as _;

/// mimalloc instead of glibc's malloc: the core builds and frees millions of small objects for
/// a cluster-sized scenario, which glibc's bins turned into a fifth of the run.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = svclab_host::Cli::parse();
    let (mut stdin, mut stdout, mut stderr) =
        (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let mut io = svclab_host::Io { stdin: &mut stdin, stdout: &mut stdout, stderr: &mut stderr };
    std::process::ExitCode::from(svclab_host::run(cli, &mut io))
}
