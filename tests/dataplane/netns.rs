//! Network namespaces the suite owns: creation, commands inside them, and guaranteed removal.
//!
//! Every name starts with [`PREFIX`] followed by the creating process id, so a run can find and
//! remove what a killed earlier run left behind without touching a concurrent run's namespaces.

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Prefix of every namespace the suite creates.
pub(crate) const PREFIX: &str = "svdp-";

/// Runs a command and returns its stdout, or an error naming the command and its stderr.
pub(crate) fn run(cmd: &mut Command) -> Result<String, String> {
    let output: Output =
        cmd.stdin(Stdio::null()).output().map_err(|err| format!("cannot run {cmd:?}: {err}"))?;
    stdout_of(cmd, output)
}

/// Runs a command with `input` on stdin.
pub(crate) fn run_with_input(cmd: &mut Command, input: &str) -> Result<String, String> {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("cannot run {cmd:?}: {err}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).map_err(|err| format!("writing to {cmd:?}: {err}"))?;
    }
    let output = child.wait_with_output().map_err(|err| format!("waiting for {cmd:?}: {err}"))?;
    stdout_of(cmd, output)
}

/// A finished command's stdout, or an error naming it with its status, stderr and stdout.
fn stdout_of(cmd: &Command, output: Output) -> Result<String, String> {
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "{cmd:?} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim(),
            String::from_utf8_lossy(&output.stdout).trim()
        ))
    }
}

/// `ip <args>`.
pub(crate) fn ip(args: &[&str]) -> Result<String, String> {
    run(Command::new("ip").args(args))
}

/// A network namespace, deleted (with every process still inside) when dropped.
#[derive(Debug)]
pub(crate) struct Netns {
    /// The `ip netns` name.
    pub(crate) name: String,
}

impl Netns {
    /// Creates the namespace and brings its loopback up.
    pub(crate) fn create(name: String) -> Result<Netns, String> {
        ip(&["netns", "add", &name])?;
        let ns = Netns { name };
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// `ip -n <ns> <args>`.
    pub(crate) fn ip(&self, args: &[&str]) -> Result<String, String> {
        run(Command::new("ip").arg("-n").arg(&self.name).args(args))
    }

    /// A command that runs `program args` inside the namespace (`ip netns exec`).
    pub(crate) fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.name]).arg(program);
        cmd
    }

    /// Runs `program args` inside the namespace and returns its stdout.
    pub(crate) fn exec(&self, program: &str, args: &[&str]) -> Result<String, String> {
        run(self.command(Path::new(program)).args(args))
    }

    /// Runs `program args` inside the namespace with `input` on stdin.
    pub(crate) fn exec_with_input(
        &self,
        program: &str,
        args: &[&str],
        input: &str,
    ) -> Result<String, String> {
        run_with_input(self.command(Path::new(program)).args(args), input)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        remove(&self.name);
    }
}

/// Kills every process inside the namespace, then deletes it. Errors are ignored: this is
/// cleanup, and a namespace that is already gone is the wanted state.
fn remove(name: &str) {
    if let Ok(pids) = ip(&["netns", "pids", name]) {
        for pid in pids.split_whitespace() {
            let _ = run(Command::new("kill").args(["-KILL", pid]));
        }
    }
    let _ = ip(&["netns", "del", name]);
}

/// Removes namespaces with [`PREFIX`] whose creating process is gone (left behind by a run that
/// was killed before its guards ran). Returns the names removed.
pub(crate) fn cleanup_stale() -> Vec<String> {
    let Ok(list) = ip(&["netns", "list"]) else { return Vec::new() };
    let mut removed = Vec::new();
    for line in list.lines() {
        let Some(name) = line.split_whitespace().next() else { continue };
        let Some(rest) = name.strip_prefix(PREFIX) else { continue };
        let owner = rest.split('-').next().unwrap_or_default();
        let alive =
            owner.parse::<u32>().is_ok_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
        if !alive {
            remove(name);
            removed.push(name.to_owned());
        }
    }
    removed
}
