//! `cargo xtask dist [--twice]` writes every svclab artifact a user installs into
//! `<target>/dist/`, reproducibly (issue 37):
//!
//! - `kubewarden/` (+ `kubewarden.oci.tar`): the policy as an OCI image in Kubewarden's format,
//!   one `application/vnd.wasm.content.layer.v1+wasm` layer and an
//!   `application/vnd.wasm.config.v1+json` config of `{}` (what policy-fetcher's `do_push`
//!   writes), the metadata's `io.kubewarden.policy.*` annotations on the manifest, and
//!   `artifacthub-pkg.yml` with the version and the manifest's digest, both from `metadata.yml`;
//! - `proxy-wasm/` (+ `proxy-wasm.oci.tar`): the filter in the Wasm image spec's "compat" variant
//!   (one `application/vnd.oci.image.layer.v1.tar+gzip` layer holding `plugin.wasm`), which
//!   Istio's `pkg/wasm` fetcher (`extractOCIStandardImage`) and Envoy Gateway accept;
//! - `traefik/` (+ a tarball): Traefik's local plugin layout, `.traefik.yml` and `plugin.wasm`;
//! - `webhook/` (+ `webhook.oci.tar`): `svclab serve` as a linux/amd64 container image, built
//!   without a container engine (`webhook` below);
//! - the `svclab` command as a tarball, the npm package (`npm pack`), the playground with the
//!   guide under `guide/` as a static-site tarball;
//! - a CycloneDX SBOM per artifact (`*.cdx.json`, `dist/sbom.rs`) and `SHA256SUMS`;
//! - `deploy/`: the manifests of `deploy/` that pull these images, pinned by their digests
//!   (`dist/pinned.rs`).
//!
//! Reproducible: every timestamp is the commit's (`SOURCE_DATE_EPOCH`, else `git log -1 %ct`),
//! archives are sorted with fixed owners and modes (`archive.rs`), JSON has sorted keys, and the
//! Rust builds run in their own target directory (`<target>/dist-build`, so the everyday caches
//! keep their flags) with `--remap-path-prefix` for cargo's home and that directory. `--twice`
//! builds again into a fresh folder and fails unless every file of `SHA256SUMS` is the same.
//!
//! Layers: above `plugins` (the guests and their finishing), `npm`, `playground` and `docs`.

mod oci;
mod pinned;
mod sbom;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};

use crate::archive::Tar;
use crate::artifacthub;
use crate::gzip::gzip;
use crate::plugins::{self, GUESTS, Guest};
use crate::workspace::{cargo, run, say, target_dir, workspace_root};
use oci::{Blob, Image};

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The platform the `svclab` tarball is built for.
const HOST_TRIPLE: &str = "x86_64-unknown-linux-gnu";
const KUBEWARDEN_METADATA: &str = "plugin-wasm/kubewarden/metadata.yml";
const QUESTIONS: &str = "deploy/kubewarden/questions-ui.yml";
const TRAEFIK_MANIFEST: &str = "deploy/traefik/plugins-local/src/svclab.dev/svclab/.traefik.yml";
/// Where Traefik looks for a local plugin named `svclab.dev/svclab` (its `moduleName`).
const TRAEFIK_LAYOUT: &str = "plugins-local/src/svclab.dev/svclab";
const SOURCE: &str = "https://example.invalid/svclab";

/// `cargo xtask dist [--twice]`.
pub(crate) fn run_task(args: &[String]) -> anyhow::Result<()> {
    let twice = match args {
        [] => false,
        [flag] if flag == "--twice" => true,
        _ => bail!("usage: cargo xtask dist [--twice]"),
    };
    let root = workspace_root();
    let out = target_dir(&root).join("dist");
    let started = std::time::Instant::now();
    build(&root, &out)?;
    say(&format!("dist: {} in {:.0?}", out.display(), started.elapsed()));
    if twice {
        let again = target_dir(&root).join("dist-again");
        let started = std::time::Instant::now();
        build(&root, &again)?;
        say(&format!("dist: built again in {:.0?}", started.elapsed()));
        let first = std::fs::read_to_string(out.join("SHA256SUMS"))?;
        let second = std::fs::read_to_string(again.join("SHA256SUMS"))?;
        let differ: Vec<&str> = first
            .lines()
            .zip(second.lines())
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a.rsplit(' ').next().unwrap_or(a))
            .collect();
        ensure!(
            differ.is_empty() && first.lines().count() == second.lines().count(),
            "two builds of the same commit differ: {}",
            differ.join(", ")
        );
        std::fs::remove_dir_all(&again)?;
        say("dist: two builds gave byte-identical artifacts (SHA256SUMS equal)");
    }
    Ok(())
}

/// What every artifact of one build shares: the commit, its time, the build flags.
struct Release {
    root: PathBuf,
    build_dir: PathBuf,
    epoch: u64,
    /// `epoch` in RFC 3339.
    created: String,
    revision: String,
    /// `--config` values: `--remap-path-prefix` for every target triple built, and a fixed
    /// `SOURCE_DATE_EPOCH` for C compilers.
    config: Vec<String>,
}

impl Release {
    fn new(root: &Path) -> anyhow::Result<Self> {
        let git = |args: &[&str]| -> anyhow::Result<String> {
            let output = Command::new("git").current_dir(root).args(args).output()?;
            ensure!(output.status.success(), "git {} failed", args.join(" "));
            Ok(String::from_utf8(output.stdout)?.trim().to_owned())
        };
        let epoch = match std::env::var("SOURCE_DATE_EPOCH") {
            Ok(value) => value.parse().context("SOURCE_DATE_EPOCH is not a number")?,
            Err(_) => git(&["log", "-1", "--format=%ct"])?.parse()?,
        };
        // The build directory by its real path: clones that share a target directory through
        // a link (CI's) then pass the same flags and share the cache.
        let build_dir = target_dir(root).join("dist-build");
        std::fs::create_dir_all(&build_dir)?;
        let build_dir = build_dir.canonicalize()?;
        let cargo_home = std::env::var_os("CARGO_HOME").map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo")
        });
        // Two prefixes reach the artifacts: registry sources (panic locations) and the build
        // directory (generated code such as cranelift's `out/*.rs`). The workspace needs none:
        // cargo names its members' files relative to it (the guests and the playground have no
        // debug info). A checkout at another path still gives the native binary's promoted local
        // symbols other `.llvm.<hash>` suffixes (remapping the checkout did not change that,
        // docs/dev/measurements.md, 2026-12-05), so the tarball's binary has no symbols.
        let flags: Vec<String> = [(cargo_home, "/cargo"), (build_dir.clone(), "/build")]
            .iter()
            .map(|(from, to)| format!("\"--remap-path-prefix={}={to}\"", from.display()))
            .collect();
        let mut config: Vec<String> =
            ["wasm32-wasip2", "wasm32-wasip1", "wasm32-unknown-unknown", HOST_TRIPLE]
                .iter()
                .map(|triple| format!("target.{triple}.rustflags=[{}]", flags.join(",")))
                .collect();
        // C compiled by build scripts: GCC takes `__DATE__` and `__TIME__` (mimalloc's
        // options.c prints them) from SOURCE_DATE_EPOCH. A fixed 0, not the commit's time:
        // build scripts do not rerun when it changes, so a cached object would otherwise keep
        // whichever time its first build had (two cold builds differed only by this).
        config.push("env.SOURCE_DATE_EPOCH=\"0\"".to_owned());
        Ok(Self {
            root: root.to_path_buf(),
            build_dir,
            epoch,
            created: rfc3339(epoch),
            revision: git(&["rev-parse", "HEAD"])?,
            config,
        })
    }

    /// The guest built and finished for its host.
    fn guest(&self, package: &str) -> anyhow::Result<(&'static Guest, Vec<u8>)> {
        let guest = GUESTS
            .iter()
            .find(|guest| guest.package == package)
            .with_context(|| format!("no guest {package}"))?;
        let built = plugins::compile(&self.root, &self.build_dir, guest, &self.config)?;
        let wasm = std::fs::read(&built).with_context(|| format!("reading {}", built.display()))?;
        Ok((guest, plugins::finish(&self.root, guest, wasm)?))
    }

    /// The OCI annotations every image carries (image-spec `annotations.md`).
    fn image_annotations(&self, title: &str) -> BTreeMap<String, String> {
        [
            ("org.opencontainers.image.created", self.created.as_str()),
            ("org.opencontainers.image.revision", &self.revision),
            ("org.opencontainers.image.source", SOURCE),
            ("org.opencontainers.image.title", title),
            ("org.opencontainers.image.version", VERSION),
            ("org.opencontainers.image.licenses", "Apache-2.0"),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect()
    }
}

/// One artifact for `SHA256SUMS` and its SBOM: the file name and the packages it links.
struct Artifact {
    file: String,
    packages: &'static [&'static str],
    target: &'static str,
    /// Debian packages whose files the artifact carries (name, version, architecture).
    debian: Vec<(String, String, String)>,
}

fn build(root: &Path, out: &Path) -> anyhow::Result<()> {
    let release = Release::new(root)?;
    if out.exists() {
        std::fs::remove_dir_all(out).with_context(|| format!("removing {}", out.display()))?;
    }
    std::fs::create_dir_all(out)?;
    let mut artifacts = Vec::new();

    say("dist: the Kubewarden policy (OCI, Kubewarden's format)");
    let (artifact, kubewarden_digest) = kubewarden(&release, out)?;
    artifacts.push(artifact);
    say("dist: the proxy-wasm filter (OCI, compat variant)");
    let (artifact, proxy_wasm_digest) = proxy_wasm(&release, out)?;
    artifacts.push(artifact);
    say("dist: the Traefik middleware (local plugin layout)");
    artifacts.push(traefik(&release, out)?);
    say("dist: the component, the svclab command");
    let (_, component) = release.guest("svclab-plugin")?;
    // Rewritten only when it changed: host-runner's build script reruns when the file does.
    let component_path = release.build_dir.join("svclab-plugin.wasm");
    if std::fs::read(&component_path).ok().as_ref() != Some(&component) {
        std::fs::write(&component_path, &component)?;
    }
    let (artifact, binary) = cli(&release, out, &component_path)?;
    artifacts.push(artifact);
    say("dist: the webhook image (OCI, linux/amd64)");
    let (artifact, webhook_digest) = webhook(&release, out, &binary)?;
    artifacts.push(artifact);
    let digests = pinned::Digests {
        kubewarden: kubewarden_digest,
        proxy_wasm: proxy_wasm_digest,
        webhook: webhook_digest,
    };
    pinned::write(root, out, &digests)?;
    say("dist: the npm package, the playground and the guide");
    artifacts.push(npm_pack(out, &component_path)?);
    artifacts.push(site(&release, out)?);

    let mut graphs = BTreeMap::new();
    let mut sums = String::new();
    for artifact in &artifacts {
        let bytes = std::fs::read(out.join(&artifact.file))?;
        let graph = match graphs.entry(artifact.target) {
            std::collections::btree_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::btree_map::Entry::Vacant(entry) => {
                entry.insert(sbom::Graph::load(root, artifact.target)?)
            }
        };
        let bom = graph.cyclonedx(
            &artifact.file,
            &bytes,
            VERSION,
            artifact.packages,
            &artifact.debian,
            &release.created,
        )?;
        std::fs::write(out.join(format!("{}.cdx.json", artifact.file)), bom)?;
    }
    let mut files: Vec<String> = std::fs::read_dir(out)?
        .flatten()
        .filter(|entry| entry.path().is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    for file in &files {
        let bytes = std::fs::read(out.join(file))?;
        let digest = oci::sha256_digest(&bytes);
        let _ = std::fmt::Write::write_fmt(
            &mut sums,
            format_args!("{}  {file}\n", digest.trim_start_matches("sha256:")),
        );
        say(&format!("  {file:<52} {:>10} bytes  {}", bytes.len(), &digest[..19]));
    }
    std::fs::write(out.join("SHA256SUMS"), sums)?;
    Ok(())
}

/// The policy as Kubewarden pulls it, and its Artifact Hub package with the image's digest.
fn kubewarden(release: &Release, out: &Path) -> anyhow::Result<(Artifact, String)> {
    let (_, wasm) = release.guest("svclab-plugin-kubewarden")?;
    let metadata = std::fs::read_to_string(release.root.join(KUBEWARDEN_METADATA))?;
    let mut annotations = release.image_annotations(artifacthub::POLICY_NAME);
    annotations
        .extend(artifacthub::manifest_annotations(&metadata, VERSION).map_err(anyhow::Error::msg)?);
    let image = Image {
        config: Blob { media_type: "application/vnd.wasm.config.v1+json", bytes: b"{}".to_vec() },
        layers: vec![Blob {
            media_type: "application/vnd.wasm.content.layer.v1+wasm",
            bytes: wasm,
        }],
        annotations,
    };
    let digest = image.write(&out.join("kubewarden"), VERSION, release.epoch)?;
    let questions = std::fs::read_to_string(release.root.join(QUESTIONS))?;
    let package = artifacthub::artifacthub_pkg(
        &metadata,
        &questions,
        &artifacthub::Release {
            version: VERSION,
            created_at: &release.created,
            digest: Some(&digest),
        },
    )
    .map_err(anyhow::Error::msg)?;
    std::fs::write(out.join("artifacthub-pkg.yml"), package)?;
    let artifact = Artifact {
        file: "kubewarden.oci.tar".into(),
        packages: &["svclab-plugin-kubewarden"],
        target: "wasm32-unknown-unknown",
        debian: Vec::new(),
    };
    Ok((artifact, digest))
}

/// The filter as Istio and Envoy Gateway pull it: the Wasm image spec's compat variant.
fn proxy_wasm(release: &Release, out: &Path) -> anyhow::Result<(Artifact, String)> {
    let (_, wasm) = release.guest("svclab-plugin-proxy-wasm")?;
    let mut tar = Tar::default();
    tar.file("plugin.wasm", wasm, false)?;
    let layer = tar.finish(release.epoch)?;
    let diff_id = oci::sha256_digest(&layer);
    // The image config of image-spec `config.md`: the wasm platform (as `docker buildx
    // --platform wasi/wasm` writes it) and the uncompressed layer's digest as its diff ID.
    let config = serde_json::json!({
        "architecture": "wasm",
        "os": "wasip1",
        "created": release.created,
        "config": {},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
    });
    let annotations = release.image_annotations("svclab-proxy-wasm");
    let image = Image::container(&config, gzip(&layer), annotations);
    let digest = image.write(&out.join("proxy-wasm"), VERSION, release.epoch)?;
    let artifact = Artifact {
        file: "proxy-wasm.oci.tar".into(),
        packages: &["svclab-plugin-proxy-wasm"],
        target: "wasm32-wasip1",
        debian: Vec::new(),
    };
    Ok((artifact, digest))
}

/// Traefik's local plugin: `.traefik.yml` and `plugin.wasm` under `plugins-local/src/<module>`.
fn traefik(release: &Release, out: &Path) -> anyhow::Result<Artifact> {
    let (_, wasm) = release.guest("svclab-plugin-http-wasm")?;
    let manifest = std::fs::read(release.root.join(TRAEFIK_MANIFEST))?;
    let dir = out.join("traefik").join(TRAEFIK_LAYOUT);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join(".traefik.yml"), &manifest)?;
    std::fs::write(dir.join("plugin.wasm"), &wasm)?;
    let mut tar = Tar::default();
    tar.file(&format!("{TRAEFIK_LAYOUT}/.traefik.yml"), manifest, false)?;
    tar.file(&format!("{TRAEFIK_LAYOUT}/plugin.wasm"), wasm, false)?;
    let file = format!("svclab-traefik-plugin-{VERSION}.tar.gz");
    std::fs::write(out.join(&file), gzip(&tar.finish(release.epoch)?))?;
    Ok(Artifact {
        file,
        packages: &["svclab-plugin-http-wasm"],
        target: "wasm32-wasip1",
        debian: Vec::new(),
    })
}

/// The `svclab` command (with the component embedded) and the README, in one folder.
fn cli(release: &Release, out: &Path, component: &Path) -> anyhow::Result<(Artifact, PathBuf)> {
    run(
        Command::new(cargo())
            .current_dir(&release.root)
            .args(["build", "--locked", "--release", "--package", "svclab-host", "--bin", "svclab"])
            .args(["--target", HOST_TRIPLE, "--target-dir"])
            .arg(&release.build_dir)
            .args(release.config.iter().flat_map(|value| ["--config", value.as_str()]))
            .env("SVCLAB_PLUGIN_WASM", component),
        "cargo build of svclab",
    )?;
    let binary = release.build_dir.join(HOST_TRIPLE).join("release/svclab");
    // The release profile keeps line tables (for the project's own profiling); users get the
    // binary without them or a symbol table, 20 % of its size. The symbols go because a
    // checkout at another path gives its promoted local symbols other `.llvm.<hash>` suffixes
    // (the code is the same bytes), and with them the linker's build ID: the ID is then the
    // content's own (`content_build_id`), so any checkout of the commit gives the same binary.
    // A panic's backtrace shows addresses, not names. binutils' strip writes the same bytes for
    // the same input.
    let stripped = release.build_dir.join("svclab.stripped");
    run(
        Command::new("strip").arg("--strip-all").arg("-o").arg(&stripped).arg(&binary),
        "strip (binutils)",
    )?;
    let mut bytes = std::fs::read(&stripped)?;
    content_build_id(&mut bytes)?;
    // The webhook image takes the binary from this file.
    std::fs::write(&stripped, &bytes)?;
    let name = format!("svclab-{VERSION}-{HOST_TRIPLE}");
    let mut tar = Tar::default();
    tar.file(&format!("{name}/svclab"), bytes, true)?;
    tar.file(&format!("{name}/README.md"), std::fs::read(release.root.join("README.md"))?, false)?;
    let file = format!("{name}.tar.gz");
    std::fs::write(out.join(&file), gzip(&tar.finish(release.epoch)?))?;
    Ok((
        Artifact { file, packages: &["svclab-host"], target: HOST_TRIPLE, debian: Vec::new() },
        stripped,
    ))
}

/// Replaces the GNU build ID of an ELF binary (its `NT_GNU_BUILD_ID` note: namesz 4, descsz
/// 20, type 3, `GNU\0`) with the first 20 bytes of the SHA-256 of the binary with the ID
/// zeroed: what the linker hashed included the symbol names `strip` removed.
fn content_build_id(elf: &mut [u8]) -> anyhow::Result<()> {
    const NOTE: [u8; 16] = [4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, b'G', b'N', b'U', 0];
    let head = elf.get(..4096).unwrap_or(elf);
    let at = head
        .windows(NOTE.len())
        .position(|window| window == NOTE)
        .context("the svclab binary has no GNU build ID note in its first 4 KiB")?
        + NOTE.len();
    elf.get_mut(at..at + 20).context("the build ID note is cut short")?.fill(0);
    let digest = <sha2::Sha256 as sha2::Digest>::digest(&*elf);
    elf[at..at + 20].copy_from_slice(&digest[..20]);
    Ok(())
}

/// The user the webhook runs as: distroless's `nonroot`, as `deploy/webhook/deployment.yaml`
/// asks (`runAsUser: 65532`).
const WEBHOOK_USER: u32 = 65_532;
/// The CA bundle of Debian's ca-certificates, where rustls-native and OpenSSL users look.
const CA_BUNDLE: &str = "etc/ssl/certs/ca-certificates.crt";

/// The webhook as a container image for linux/amd64, assembled without a container engine:
/// the stripped `svclab` binary, exactly the shared libraries `ldd` says it loads (glibc's,
/// libgcc_s) at the paths the loader looks in, the CA bundle, `/etc/passwd` and `/etc/group`
/// with the non-root user, a world-writable sticky `/tmp` for the compiled-plugin cache, and
/// `svclab serve` as the entrypoint.
fn webhook(release: &Release, out: &Path, binary: &Path) -> anyhow::Result<(Artifact, String)> {
    let mut tar = Tar::default();
    tar.file("usr/local/bin/svclab", std::fs::read(binary)?, true)?;
    // The CA bundle is generated from ca-certificates' files by update-ca-certificates.
    let ca_package = ("ca-certificates".to_owned(), debian_version("ca-certificates")?);
    let mut debian = vec![(ca_package.0, ca_package.1.0, ca_package.1.1)];
    let ldd = Command::new("ldd").arg(binary).output().context("cannot run ldd")?;
    ensure!(ldd.status.success(), "ldd {} failed", binary.display());
    for line in String::from_utf8_lossy(&ldd.stdout).lines() {
        // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)` or `/lib64/ld-linux-x86-64.so.2 (0x…)`
        let Some(path) = line.split_whitespace().find(|word| word.starts_with('/')) else {
            continue; // linux-vdso.so.1, which the kernel maps
        };
        let bytes = std::fs::read(path).with_context(|| format!("reading {path}"))?;
        tar.file(path.trim_start_matches('/'), bytes, true)?;
        debian.push(debian_package(path)?);
    }
    debian.sort();
    debian.dedup();
    let ca = Path::new("/").join(CA_BUNDLE);
    let bundle = std::fs::read(&ca)
        .with_context(|| format!("reading {} (Debian's ca-certificates package)", ca.display()))?;
    tar.file(CA_BUNDLE, bundle, false)?;
    let user = WEBHOOK_USER;
    tar.file(
        "etc/passwd",
        format!("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:{user}:{user}:nonroot:/tmp:/sbin/nologin\n")
            .into_bytes(),
        false,
    )?;
    tar.file("etc/group", format!("root:x:0:\nnonroot:x:{user}:\n").into_bytes(), false)?;
    tar.dir("tmp/", 0o1777)?;
    let layer = tar.finish(release.epoch)?;
    let config = serde_json::json!({
        "architecture": "amd64",
        "os": "linux",
        "created": release.created,
        "config": {
            "User": format!("{user}:{user}"),
            "Entrypoint": ["/usr/local/bin/svclab", "serve"],
            "Cmd": ["--listen=0.0.0.0:8443"],
            "Env": [
                "PATH=/usr/local/bin",
                "HOME=/tmp",
                format!("SSL_CERT_FILE=/{CA_BUNDLE}"),
            ],
            "ExposedPorts": {"8443/tcp": {}},
            "WorkingDir": "/",
        },
        "rootfs": {"type": "layers", "diff_ids": [oci::sha256_digest(&layer)]},
        "history": [{"created": release.created, "created_by": "cargo xtask dist"}],
    });
    let annotations = release.image_annotations("svclab-webhook");
    let image = Image::container(&config, gzip(&layer), annotations);
    let digest = image.write(&out.join("webhook"), VERSION, release.epoch)?;
    let artifact = Artifact {
        file: "webhook.oci.tar".into(),
        packages: &["svclab-host"],
        target: HOST_TRIPLE,
        debian,
    };
    Ok((artifact, digest))
}

/// The Debian package that installed `path`: (name, version, architecture).
fn debian_package(path: &str) -> anyhow::Result<(String, String, String)> {
    let output = Command::new("dpkg-query").args(["-S", path]).output()?;
    ensure!(output.status.success(), "no Debian package owns {path}");
    // `libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6`
    let text = String::from_utf8_lossy(&output.stdout);
    let name = text.split([':', ' ']).next().unwrap_or_default().to_owned();
    let (version, architecture) = debian_version(&name)?;
    Ok((name, version, architecture))
}

/// The installed version and architecture of Debian package `name`.
fn debian_version(name: &str) -> anyhow::Result<(String, String)> {
    let output = Command::new("dpkg-query")
        .args(["-W", "-f", "${Version} ${Architecture}", name])
        .output()?;
    ensure!(output.status.success(), "Debian package {name} is not installed");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (version, architecture) = text.split_once(' ').context("dpkg-query's answer")?;
    Ok((version.to_owned(), architecture.to_owned()))
}

/// `npm pack` of the package around the dist-built component (npm fixes every entry's time).
fn npm_pack(out: &Path, component: &Path) -> anyhow::Result<Artifact> {
    crate::npm::package(component)?;
    run(
        Command::new("npm")
            .current_dir(crate::npm::package_dir())
            .args(["pack", "--silent", "--pack-destination"])
            .arg(out),
        "npm pack",
    )?;
    let file = format!("svclab-{VERSION}.tgz");
    ensure!(out.join(&file).exists(), "npm pack wrote no {file}");
    Ok(Artifact { file, packages: &["svclab-plugin"], target: "wasm32-wasip2", debian: Vec::new() })
}

/// The playground at the root and the guide under `guide/`, as `cargo xtask serve` serves them.
fn site(release: &Release, out: &Path) -> anyhow::Result<Artifact> {
    crate::playground::build_with(&release.build_dir, &release.config)?;
    crate::docs::render()?;
    let mut tar = Tar::default();
    let name = format!("svclab-site-{VERSION}");
    for (dir, under) in [(crate::playground::site_dir(), ""), (crate::docs::guide_dir(), "guide/")]
    {
        for file in crate::files::find_files(&dir, "") {
            let relative = file.strip_prefix(&dir)?.to_string_lossy().replace('\\', "/");
            tar.file(&format!("{name}/{under}{relative}"), std::fs::read(&file)?, false)?;
        }
    }
    let file = format!("{name}.tar.gz");
    std::fs::write(out.join(&file), gzip(&tar.finish(release.epoch)?))?;
    Ok(Artifact {
        file,
        packages: &["svclab-playground", "svclab-plugin"],
        target: "wasm32-unknown-unknown",
        debian: Vec::new(),
    })
}

/// Seconds since the Unix epoch as RFC 3339 UTC (`1970-01-01T00:00:00Z`), by Howard Hinnant's
/// `civil_from_days`.
fn rfc3339(epoch: u64) -> String {
    let days = epoch / 86_400;
    let seconds = epoch % 86_400;
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds / 3_600,
        seconds % 3_600 / 60,
        seconds % 60
    )
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn dates_from_epoch_seconds() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_764_892_800 + 3_661), "2025-12-05T01:01:01Z");
    }
}
