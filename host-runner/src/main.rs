//! The `svclab` binary: parse arguments, run, map the result to an exit code.

use clap::Parser as _;

fn main() -> std::process::ExitCode {
    let cli = svclab_host::Cli::parse();
    let code = svclab_host::run(cli, &mut svclab_host::Io::std());
    std::process::ExitCode::from(code)
}
