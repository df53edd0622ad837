//! The `svclab` binary: parse arguments, run, map the result to an exit code.

use clap::Parser as _;

fn main() -> std::process::ExitCode {
    let cli = svclab_host::Cli::parse();
    let (mut stdin, mut stdout, mut stderr) =
        (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let mut io = svclab_host::Io { stdin: &mut stdin, stdout: &mut stdout, stderr: &mut stderr };
    std::process::ExitCode::from(svclab_host::run(cli, &mut io))
}
