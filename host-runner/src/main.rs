//! The `svclab` binary: parse arguments, run, map the result to an exit code.

fn main() -> std::process::ExitCode {
    svclab_host::main()
}
