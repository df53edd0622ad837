//! The svclab host: the command line (and later the plugin runner and webhook).

/// Entry point of the binary.
pub fn main() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
