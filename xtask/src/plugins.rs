//! `cargo xtask plugins [--out DIR]` builds every svclab guest into one folder, default
//! `$CARGO_TARGET_DIR/plugins`, and prints each file with its size: the WIT component (our host,
//! jco), the Kubewarden policy (waPC), the proxy-wasm filter (Envoy, Istio, Envoy Gateway) and the
//! http-wasm middleware (Traefik), which is also copied into Traefik's local plugin layout under
//! `deploy/traefik/`, after its bulk-memory instructions are lowered for Traefik's wazero
//! (`plugins/lower.rs`). A guest over `MAX_SIZE` fails the build: policy engines load
//! every policy at start-up and hosts such as Kubewarden feel large modules
//! (`kubewarden/adm-controller#1818`, #528).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};

use crate::annotate;
use crate::plugin::{PROFILE, plugin_target_dir};
use crate::workspace::{say, workspace_root};

mod lower;

/// The size every policy-engine and gateway guest stays under: 1.5 MiB until the upstream
/// oracle's fixes (issue 35: kube-proxy's configuration validation and gate registries by
/// release, the storage's refusals, KEP-4858 and declarative EndpointSlice rules) took the
/// Kubewarden guest to 1,574,205 bytes and the proxy-wasm filter to 1,590,899 (2026-12-05);
/// 1,610,977 and 1,632,155 with issue 39's reading after edits and rulesets in steps (whose
/// step machinery the guests do not carry: `report_rules` renders without it; 2026-12-06).
const MAX_SIZE: u64 = 1_600 * 1024;

/// The size the WIT component stays under: it alone carries `svclab test`'s suite runner (the
/// suite reader, the comparisons, the nftables tracer suites reach: about 0.22 MB), which took
/// it past [`MAX_SIZE`]; our host and jco load it once per process, not with every policy.
/// 1,883,708 bytes with the oracle's fixes, 2,261,647 with `svclab upgrade`'s rehearsal (issue
/// 36: both sides' evaluations, the rule layouts, probes and diff; 2026-12-05), 2,311,482 with
/// the real control plane's fixes (issue 43), each side decoded at its release, the kube-proxy
/// rows' attribution and the trace's destination index (issue 36, the same day), 2,358,899 with
/// the `editing` world's sessions (issue 39: the reading cache, the pipeline's checkpoints, the
/// UTF-16 edits).
const MAX_COMPONENT_SIZE: u64 = 2_368 * 1024;

/// One guest: a cdylib package built for a wasm target, then finished for its host.
pub(crate) struct Guest {
    pub(crate) package: &'static str,
    pub(crate) target: &'static str,
    /// The file name in the output folder.
    pub(crate) file: &'static str,
    finish: Finish,
}

enum Finish {
    /// Shipped as built.
    AsBuilt,
    /// Kubewarden: `metadata.yml` (relative to the workspace) into the module's custom section.
    KubewardenMetadata(&'static str),
    /// Traefik: every `memory.copy` and `memory.fill` lowered into a call (see `lower.rs`),
    /// then also copied to the local plugin layout (relative to the workspace) that
    /// `deploy/traefik/` configures.
    LowerBulkMemory(&'static str),
}

pub(crate) const GUESTS: &[Guest] = &[
    Guest {
        package: "svclab-plugin",
        target: "wasm32-wasip2",
        file: "svclab-plugin.wasm",
        finish: Finish::AsBuilt,
    },
    // wasm32-unknown-unknown rather than the wasip1 of Kubewarden's templates: a waPC module
    // needs no WASI, and without it the module imports only waPC functions (no file system,
    // clock or environment), which the import allow-list test in tests/kubewarden holds it to.
    Guest {
        package: "svclab-plugin-kubewarden",
        target: "wasm32-unknown-unknown",
        file: "svclab-kubewarden.wasm",
        finish: Finish::KubewardenMetadata("plugin-wasm/kubewarden/metadata.yml"),
    },
    Guest {
        package: "svclab-plugin-proxy-wasm",
        target: "wasm32-wasip1",
        file: "svclab_plugin_proxy_wasm.wasm",
        finish: Finish::AsBuilt,
    },
    Guest {
        package: "svclab-plugin-http-wasm",
        target: "wasm32-wasip1",
        file: "svclab_plugin_http_wasm.wasm",
        finish: Finish::LowerBulkMemory(
            "deploy/traefik/plugins-local/src/svclab.dev/svclab/plugin.wasm",
        ),
    },
];

/// `cargo xtask plugins [--out DIR]`, or `cargo xtask plugins --lower IN OUT` to give any core
/// module the Traefik lowering (the gateway tests' probe).
pub(crate) fn build(args: &[String]) -> anyhow::Result<()> {
    let root = workspace_root();
    let target_dir = plugin_target_dir(&root);
    let out = match args {
        [] => target_dir.parent().unwrap_or(&root).join("plugins"),
        [flag, dir] if flag == "--out" => PathBuf::from(dir),
        [flag, input, output] if flag == "--lower" => {
            let wasm = std::fs::read(input).with_context(|| format!("cannot read {input}"))?;
            let lowered =
                lower::lower_bulk_memory(&wasm).with_context(|| format!("cannot lower {input}"))?;
            return std::fs::write(output, lowered)
                .with_context(|| format!("cannot write {output}"));
        }
        _ => bail!("usage: cargo xtask plugins [--out DIR | --lower IN OUT]"),
    };
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut too_large = Vec::new();
    for guest in GUESTS {
        let path = build_guest(&root, &target_dir, &out, guest)?;
        let size = std::fs::metadata(&path)
            .with_context(|| format!("cannot stat {}", path.display()))?
            .len();
        say(&format!("{:<28} {:>9} bytes  {}", guest.file, size, path.display()));
        let max = if guest.target == "wasm32-wasip2" { MAX_COMPONENT_SIZE } else { MAX_SIZE };
        if size > max {
            too_large.push(format!("{} ({size} bytes, over {max})", guest.file));
        }
    }
    ensure!(too_large.is_empty(), "too large: {}", too_large.join(", "));
    Ok(())
}

fn build_guest(
    root: &Path,
    target_dir: &Path,
    out: &Path,
    guest: &Guest,
) -> anyhow::Result<PathBuf> {
    let built = compile(root, target_dir, guest, &[])?;
    let wasm = std::fs::read(&built).with_context(|| format!("cannot read {}", built.display()))?;
    let wasm =
        finish(root, guest, wasm).with_context(|| format!("cannot finish {}", built.display()))?;
    let path = out.join(guest.file);
    std::fs::write(&path, &wasm).with_context(|| format!("cannot write {}", path.display()))?;
    if let Finish::LowerBulkMemory(layout) = guest.finish {
        let layout = root.join(layout);
        std::fs::write(&layout, &wasm)
            .with_context(|| format!("cannot write {}", layout.display()))?;
    }
    Ok(path)
}

/// Builds `guest` with cargo into `target_dir`, `config` adding `--config` values (`cargo xtask
/// dist` remaps build paths); the path of the built `.wasm`.
pub(crate) fn compile(
    root: &Path,
    target_dir: &Path,
    guest: &Guest,
    config: &[String],
) -> anyhow::Result<PathBuf> {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["build", "--locked", "--package", guest.package, "--target", guest.target])
        .args(["--profile", PROFILE])
        .arg("--target-dir")
        .arg(target_dir)
        .args(config.iter().flat_map(|value| ["--config", value.as_str()]))
        .status()
        .context("cannot run cargo")?;
    ensure!(
        status.success(),
        "building {} failed (is the {} target installed? see scripts/setup.d/10-rust.sh)",
        guest.package,
        guest.target
    );
    Ok(target_dir
        .join(guest.target)
        .join(PROFILE)
        .join(format!("{}.wasm", guest.package.replace('-', "_"))))
}

/// The built module finished for its host: Kubewarden's metadata section, Traefik's lowering.
pub(crate) fn finish(root: &Path, guest: &Guest, wasm: Vec<u8>) -> anyhow::Result<Vec<u8>> {
    Ok(match guest.finish {
        Finish::AsBuilt => wasm,
        Finish::KubewardenMetadata(metadata) => {
            let path = root.join(metadata);
            let yaml = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            annotate::annotate(&wasm, &yaml, env!("CARGO_PKG_VERSION"))
                .map_err(anyhow::Error::msg)
                .context("cannot annotate")?
        }
        Finish::LowerBulkMemory(_) => lower::lower_bulk_memory(&wasm).context("cannot lower")?,
    })
}
