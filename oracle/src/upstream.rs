//! Upstream's own code as programs: building an area's oracle binary for a release (the area's
//! `build.sh`, which generates the release's Go module and caches the build) and running a batch
//! of cases through it, one process per batch.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// An area of the oracle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Area {
    /// kube-apiserver's Service and EndpointSlice storage (`oracle/apiserver/`).
    Apiserver,
    /// kube-proxy's iptables and nftables proxiers (`oracle/proxy/`).
    Proxy,
}

impl Area {
    /// `apiserver` or `proxy`.
    pub fn as_str(self) -> &'static str {
        match self {
            Area::Apiserver => "apiserver",
            Area::Proxy => "proxy",
        }
    }
}

/// Why upstream could not answer.
#[derive(Debug)]
pub enum UpstreamError {
    /// A program could not be started (Go missing, a script gone).
    Start {
        /// The program.
        program: String,
        /// Why.
        error: std::io::Error,
    },
    /// The build failed.
    Build {
        /// The release built.
        release: String,
        /// The tail of the build's output.
        output: String,
    },
    /// The oracle binary failed on a batch.
    Run {
        /// The binary.
        binary: PathBuf,
        /// The tail of its output.
        output: String,
    },
    /// Reading or writing the batch files.
    Io(std::io::Error),
}

impl fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpstreamError::Start { program, error } => write!(f, "cannot run {program}: {error}"),
            UpstreamError::Build { release, output } => {
                write!(f, "building the oracle for {release} failed:\n{output}")
            }
            UpstreamError::Run { binary, output } => {
                write!(f, "{} failed:\n{output}", binary.display())
            }
            UpstreamError::Io(error) => write!(f, "oracle files: {error}"),
        }
    }
}

impl std::error::Error for UpstreamError {}

impl From<std::io::Error> for UpstreamError {
    fn from(error: std::io::Error) -> Self {
        UpstreamError::Io(error)
    }
}

/// The last lines of a program's output, for an error message.
fn tail(bytes: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Builds (or finds, cached) the oracle binaries of `area` at `release` (`v1.37.2`) under
/// `out`: `oracle/<area>/build.sh RELEASE OUT`, which prints the binaries' paths, one a line.
pub fn build(
    root: &Path,
    area: Area,
    release: &str,
    out: &Path,
) -> Result<Vec<PathBuf>, UpstreamError> {
    let script = root.join("oracle").join(area.as_str()).join("build.sh");
    let output = Command::new("bash")
        .arg(&script)
        .arg(release)
        .arg(out)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| UpstreamError::Start { program: script.display().to_string(), error })?;
    if !output.status.success() {
        let mut both = output.stdout.clone();
        both.extend_from_slice(&output.stderr);
        return Err(UpstreamError::Build { release: release.to_owned(), output: tail(&both, 40) });
    }
    let paths: Vec<PathBuf> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .collect();
    if paths.is_empty() {
        return Err(UpstreamError::Build {
            release: release.to_owned(),
            output: format!("{} printed no binary", script.display()),
        });
    }
    Ok(paths)
}

/// Runs `cases` (one JSON value each) through an oracle binary in one process and returns its
/// answers by case id. `work` is a folder for the batch's files.
pub fn run(
    binary: &Path,
    cases: &[Value],
    work: &Path,
) -> Result<std::collections::BTreeMap<String, Value>, UpstreamError> {
    std::fs::create_dir_all(work)?;
    let input = work.join("cases.jsonl");
    let output = work.join("answers.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&input)?);
    for case in cases {
        writeln!(file, "{case}")?;
    }
    file.flush()?;
    drop(file);
    let result = Command::new(binary)
        .arg("-test.run")
        .arg("^TestOracle$")
        .env("ORACLE_CASES", &input)
        .env("ORACLE_OUT", &output)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|error| UpstreamError::Start { program: binary.display().to_string(), error })?;
    if !result.status.success() {
        let mut both = result.stdout.clone();
        both.extend_from_slice(&result.stderr);
        return Err(UpstreamError::Run { binary: binary.to_path_buf(), output: tail(&both, 40) });
    }
    let text = std::fs::read_to_string(&output)?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| Some((v["id"].as_str()?.to_owned(), v)))
        .collect())
}
