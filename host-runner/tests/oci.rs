//! `svclab oci check` against each host's rules: every artifact `cargo xtask dist` wrote is
//! accepted by its host, and deliberately wrong layouts (Kubewarden's offered to Istio, two
//! layers of the wrong types, a missing annotation, a compat layer without `plugin.wasm`, a
//! Traefik manifest without its summary) are refused with the host's own words. Then a real
//! registry on loopback (Debian's `docker-registry`, TLS from a throwaway CA made by openssl):
//! each OCI artifact pushed with skopeo, pulled back, and the digests compared (the policy's
//! pulled bytes are left in `target/dist-pulled/` for `scripts/test` to run through
//! tests/kubewarden's waPC host; the filter fetched again as Istio's image fetcher does it, for
//! `scripts/test` to load into the real Envoy), each signed by digest with cosign and a key pair the test
//! makes and verified by `cosign verify` against the registry, and `svclab oci check REF`
//! pulling each from the registry judged as its layout (also where the registry asks for basic
//! credentials or a bearer token, lacks the tag, or shows a CA not trusted). And the webhook
//! image unpacked and run by runc as its config says (entrypoint, non-root user, environment):
//! `/healthz` answers and AdmissionReviews get the verdicts `svclab serve`'s routes give.
//!
//! The dist artifacts come from `target/dist/` (`cargo xtask dist`, which `scripts/test` runs
//! first); the tools from `scripts/setup.d/48-distribution.sh`. A missing one fails the test and
//! says how to get it; runc needs root, as CI has.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::json;
use sha2::{Digest as _, Sha256};

/// Runs `svclab oci check PATH --host HOST` in-process: exit code and standard output with
/// PATH shown as `LAYOUT`.
#[track_caller]
fn check(path: &Path, host: &str) -> (u8, String) {
    check_with(&path.display().to_string(), host, &[])
}

/// `svclab oci check TARGET --host HOST FLAGS…` in-process, TARGET shown as `LAYOUT`.
#[track_caller]
fn check_with(target: &str, host: &str, flags: &[&str]) -> (u8, String) {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut io = svclab_host::Io { stdin: &mut &b""[..], stdout: &mut stdout, stderr: &mut stderr };
    let args =
        ["svclab", "oci", "check", target, "--host", host].into_iter().chain(flags.iter().copied());
    let code = svclab_host::run_args(args, &mut io);
    let text = String::from_utf8_lossy(&stdout).replace(target, "LAYOUT");
    let text = text + &String::from_utf8_lossy(&stderr);
    (code, text)
}

// ---------------------------------------------------------------------------------------------
// Hand-made layouts

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", data_encoding::HEXLOWER.encode(&Sha256::digest(bytes)))
}

/// A folder of its own under cargo's temporary directory for integration tests, emptied
/// first: a run leaves its last folders for a look after a failure, and the next run reuses
/// them rather than piling up copies of the webhook bundle and the registries.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("svclab-oci-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("creates a scratch folder");
    dir
}

/// Writes an OCI image layout of `config` and `layers` (media type, bytes) into `dir`.
fn layout(
    dir: &Path,
    config: (&str, &[u8]),
    layers: &[(&str, Vec<u8>)],
    annotations: &BTreeMap<&str, &str>,
) {
    let blobs = dir.join("blobs/sha256");
    std::fs::create_dir_all(&blobs).expect("creates blobs/");
    let put = |media_type: &str, bytes: &[u8]| {
        let digest = sha256(bytes);
        std::fs::write(blobs.join(&digest[7..]), bytes).expect("writes a blob");
        json!({"mediaType": media_type, "digest": digest, "size": bytes.len()})
    };
    let config = put(config.0, config.1);
    let layers: Vec<_> = layers.iter().map(|(media_type, bytes)| put(media_type, bytes)).collect();
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config,
        "layers": layers,
        "annotations": annotations,
    })
    .to_string();
    let entry = put("application/vnd.oci.image.manifest.v1+json", manifest.as_bytes());
    std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).expect("writes");
    let index = json!({"schemaVersion": 2, "manifests": [entry]}).to_string();
    std::fs::write(dir.join("index.json"), index).expect("writes index.json");
}

/// A valid core module of one empty function exported as `export`, then `custom` sections.
fn module(export: &str, custom: &[(&str, &[u8])]) -> Vec<u8> {
    let mut wasm = b"\0asm\x01\0\0\0".to_vec();
    wasm.extend([1, 4, 1, 0x60, 0, 0]); // type section: () -> ()
    wasm.extend([3, 2, 1, 0]); // function section: one function of type 0
    let mut exports = vec![1, u8::try_from(export.len()).expect("short name")];
    exports.extend(export.as_bytes());
    exports.extend([0, 0]); // function 0
    wasm.extend([7, u8::try_from(exports.len()).expect("short section")]);
    wasm.extend(exports);
    wasm.extend([10, 4, 1, 2, 0, 0x0b]); // code section: an empty body
    for (name, payload) in custom {
        let mut body = vec![u8::try_from(name.len()).expect("short name")];
        body.extend(name.as_bytes());
        body.extend(*payload);
        wasm.extend([0, u8::try_from(body.len()).expect("short section")]);
        wasm.extend(body);
    }
    wasm
}

/// A tar of one file (ustar, as Go's archive/tar reads it), gzipped.
fn tar_gz(name: &str, content: &[u8]) -> Vec<u8> {
    let mut header = [0u8; 512];
    header[..name.len()].copy_from_slice(name.as_bytes());
    for (range, value) in [(100..108, 0o644), (108..116, 0), (116..124, 0), (136..148, 0)] {
        let width = range.len() - 1;
        header[range.start..range.start + width]
            .copy_from_slice(format!("{value:0width$o}").as_bytes());
    }
    header[124..135].copy_from_slice(format!("{:011o}", content.len()).as_bytes());
    header[156] = b'0';
    header[257..263].copy_from_slice(b"ustar\0");
    header[263..265].copy_from_slice(b"00");
    header[148..156].fill(b' ');
    let sum: u32 = header.iter().map(|&b| u32::from(b)).sum();
    header[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    let mut tar = header.to_vec();
    tar.extend(content);
    tar.resize(tar.len().next_multiple_of(512) + 1024, 0);
    let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    gz.extend(miniz_oxide::deflate::compress_to_vec(&tar, 6));
    gz.extend(crc32(&tar).to_le_bytes());
    gz.extend(u32::try_from(tar.len()).expect("small").to_le_bytes());
    gz
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in data {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

const KUBEWARDEN_LAYER: &str = "application/vnd.wasm.content.layer.v1+wasm";
const KUBEWARDEN_CONFIG: &str = "application/vnd.wasm.config.v1+json";
const OCI_LAYER: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
const OCI_CONFIG: &str = "application/vnd.oci.image.config.v1+json";

fn kubewarden_annotations() -> BTreeMap<&'static str, &'static str> {
    [
        ("io.kubewarden.policy.title", "t"),
        ("io.kubewarden.policy.version", "0.1.0"),
        ("io.kubewarden.policy.description", "d"),
        ("io.kubewarden.policy.author", "a"),
        ("io.kubewarden.policy.url", "u"),
        ("io.kubewarden.policy.source", "s"),
        ("io.kubewarden.policy.license", "Apache-2.0"),
    ]
    .into()
}

/// A policy in Kubewarden's format: one wasm layer with its metadata section.
fn kubewarden_layout(name: &str, annotations: &BTreeMap<&str, &str>) -> PathBuf {
    let dir = scratch(name);
    let metadata =
        br#"{"protocolVersion":"v1","annotations":{"io.kubewarden.policy.version":"0.1.0"}}"#;
    let wasm = module("__guest_call", &[("io.kubewarden.metadata", metadata)]);
    layout(&dir, (KUBEWARDEN_CONFIG, b"{}"), &[(KUBEWARDEN_LAYER, wasm)], annotations);
    dir
}

/// A proxy-wasm filter in the compat variant, the module named `file` in the layer.
fn compat_layout(name: &str, file: &str) -> PathBuf {
    let dir = scratch(name);
    let layer = tar_gz(file, &module("proxy_abi_version_0_2_1", &[]));
    layout(&dir, (OCI_CONFIG, b"{}"), &[(OCI_LAYER, layer)], &BTreeMap::new());
    dir
}

#[test]
fn hand_made_layouts_are_accepted_by_their_hosts() {
    let policy = kubewarden_layout("policy", &kubewarden_annotations());
    let (code, out) = check(&policy, "kubewarden");
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("LAYOUT: kubewarden accepts it (manifest sha256:"), "{out}");
    let filter = compat_layout("filter", "plugin.wasm");
    for host in ["istio", "envoy-gateway"] {
        let (code, out) = check(&filter, host);
        assert_eq!(code, 0, "{out}");
        assert!(out.ends_with(", 53 bytes of proxy-wasm module)\n"), "{out}");
    }
}

#[test]
fn kubewarden_layout_offered_to_istio_and_envoy_gateway() {
    let policy = kubewarden_layout("offered", &kubewarden_annotations());
    assert_eq!(
        check(&policy, "istio"),
        (
            1,
            "LAYOUT: istio refuses it:
  - the given image is in invalid format as an OCI image: 2 errors occurred:
    \t* could not parse as compat variant: invalid media type application/vnd.wasm.content.layer.v1+wasm (expect application/vnd.oci.image.layer.v1.tar+gzip)
    \t* could not parse as oci variant: number of layers must be 2 but got 1
"
            .into()
        )
    );
    assert_eq!(
        check(&policy, "envoy-gateway"),
        (
            1,
            "LAYOUT: envoy-gateway refuses it:
  - the given image is in invalid format as an OCI image: could not parse as compat variant: invalid media type application/vnd.wasm.content.layer.v1+wasm (expect application/vnd.oci.image.layer.v1.tar+gzip)
    could not parse as oci variant: number of layers must be 2 but got 1
"
            .into()
        )
    );
    assert_eq!(
        check(&policy, "traefik"),
        (1, "LAYOUT: traefik refuses it:\n  - Traefik loads a plugin from its local folder (plugins-local/src/<moduleName>/ with .traefik.yml and the module) or its plugin catalogue, not from an OCI image\n".into())
    );
}

#[test]
fn compat_layout_offered_to_kubewarden() {
    let filter = compat_layout("compat-to-kubewarden", "plugin.wasm");
    let (code, out) = check(&filter, "kubewarden");
    assert_eq!(code, 1);
    let reasons: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        reasons[..2],
        [
            "  - Incompatible layer media type: application/vnd.oci.image.layer.v1.tar+gzip (oci-client's pull, which policy-fetcher calls accepting only application/vnd.wasm.content.layer.v1+wasm)",
            "  - config media type application/vnd.oci.image.config.v1+json: Kubewarden's format (kwctl push) has application/vnd.wasm.config.v1+json",
        ]
    );
    assert_eq!(reasons.len(), 2 + 7, "and the seven missing annotations: {out}");
}

#[test]
fn two_layers_of_the_wrong_media_types() {
    let dir = scratch("two-layers");
    let wasm = module("proxy_abi_version_0_2_1", &[]);
    let layers = [("application/octet-stream", b"x".to_vec()), ("application/wasm", wasm)];
    layout(&dir, (OCI_CONFIG, b"{}"), &layers, &kubewarden_annotations());
    assert_eq!(
        check(&dir, "istio"),
        (
            1,
            "LAYOUT: istio refuses it:
  - the given image is in invalid format as an OCI image: 2 errors occurred:
    \t* could not parse as compat variant: invalid media type application/wasm (expect application/vnd.oci.image.layer.v1.tar+gzip)
    \t* could not parse as oci variant: could not find the layer of type application/vnd.module.wasm.content.layer.v1+wasm
"
            .into()
        )
    );
    let (code, out) = check(&dir, "kubewarden");
    assert_eq!(code, 1);
    assert!(out.contains(
        "  - Incompatible layer media type: application/octet-stream (oci-client's pull"
    ));
    assert!(out.contains("  - Incompatible layer media type: application/wasm (oci-client's pull"));
    assert!(out.contains(
        "  - 2 layers: policy-fetcher keeps only the first, Kubewarden's format has one\n"
    ));
}

#[test]
fn missing_annotation_and_disagreeing_metadata() {
    let mut annotations = kubewarden_annotations();
    annotations.remove("io.kubewarden.policy.title");
    annotations.insert("io.kubewarden.policy.version", "9.9.9");
    let policy = kubewarden_layout("annotations", &annotations);
    assert_eq!(
        check(&policy, "kubewarden"),
        (
            1,
            "LAYOUT: kubewarden refuses it:
  - the annotation io.kubewarden.policy.version is \"9.9.9\" on the manifest but \"0.1.0\" in the module's metadata
  - the manifest lacks the annotation io.kubewarden.policy.title (svclab's rule: Artifact Hub and kwctl scaffold artifacthub read it)
"
            .into()
        )
    );
}

#[test]
fn compat_layer_without_plugin_wasm() {
    let filter = compat_layout("no-plugin-wasm", "filter.wasm");
    let (code, out) = check(&filter, "istio");
    assert_eq!(code, 1);
    assert!(
        out.contains("\t* could not parse as compat variant: could not extract wasm binary: plugin.wasm not found in the archive\n"),
        "{out}"
    );
}

#[test]
fn traefik_manifest_without_summary_and_test_data() {
    let dir = scratch("traefik");
    std::fs::write(dir.join(".traefik.yml"), "displayName: x\ntype: middleware\nruntime: wasm\n")
        .expect("writes");
    std::fs::write(dir.join("plugin.wasm"), module("handle_request", &[])).expect("writes");
    assert_eq!(
        check(&dir, "traefik"),
        (1, "LAYOUT: traefik refuses it:\n  - missing Summary\n  - missing TestData\n".into())
    );
    std::fs::write(
        dir.join(".traefik.yml"),
        "displayName: x\ntype: middleware\nruntime: wasm\nsummary: s\ntestData: {}\n",
    )
    .expect("writes");
    assert_eq!(
        check(&dir, "traefik"),
        (0, "LAYOUT: traefik accepts it (44 bytes of http-wasm module at plugin.wasm)\n".into())
    );
}

#[test]
fn a_blob_that_is_not_its_digest_is_an_error() {
    let policy = kubewarden_layout("tampered", &kubewarden_annotations());
    let blobs = policy.join("blobs/sha256");
    for entry in std::fs::read_dir(&blobs).expect("lists blobs").flatten() {
        if std::fs::read(entry.path()).expect("reads") == b"{}" {
            std::fs::write(entry.path(), b"[]").expect("writes");
        }
    }
    let (code, out) = check(&policy, "kubewarden");
    assert_eq!(code, 2);
    assert!(out.contains("holds 2 bytes of digest sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945, not the 2 bytes its descriptor says"), "{out}");
}

// ---------------------------------------------------------------------------------------------
// The artifacts of `cargo xtask dist`

fn dist_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).map_or_else(
        || root.join("target"),
        |dir| if dir.is_absolute() { dir } else { root.join(dir) },
    );
    let dist = target.join("dist");
    assert!(
        dist.join("SHA256SUMS").is_file(),
        "{} has no SHA256SUMS: run `cargo xtask dist` first (scripts/test does)",
        dist.display()
    );
    dist
}

#[test]
fn every_dist_artifact_is_accepted_by_its_host() {
    let dist = dist_dir();
    let cases = [
        ("kubewarden", "kubewarden"),
        ("kubewarden.oci.tar", "kubewarden"),
        ("proxy-wasm", "istio"),
        ("proxy-wasm", "envoy-gateway"),
        ("proxy-wasm.oci.tar", "istio"),
        ("traefik/plugins-local/src/svclab.dev/svclab", "traefik"),
    ];
    for (artifact, host) in cases {
        let (code, out) = check(&dist.join(artifact), host);
        assert_eq!(code, 0, "{artifact} for {host}: {out}");
    }
    // And each refused by the hosts of the other format.
    for (artifact, host) in
        [("kubewarden", "istio"), ("proxy-wasm", "kubewarden"), ("kubewarden", "traefik")]
    {
        let (code, out) = check(&dist.join(artifact), host);
        assert_eq!(code, 1, "{artifact} for {host}: {out}");
    }
}

/// `artifacthub-pkg.yml` carries the Kubewarden image's manifest digest.
#[test]
fn artifacthub_package_names_the_image_digest() {
    let dist = dist_dir();
    let index: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dist.join("kubewarden/index.json")).expect("reads index.json"),
    )
    .expect("JSON");
    let digest = index["manifests"][0]["digest"].as_str().expect("a digest");
    let package = std::fs::read_to_string(dist.join("artifacthub-pkg.yml")).expect("reads");
    assert!(package.contains(&format!("\ndigest: {digest}\n")), "{package}");
}

/// `target/dist/deploy/` names each image by the digest `cargo xtask dist` gave it.
#[test]
fn deploy_manifests_pin_the_dist_digests() {
    let dist = dist_dir();
    let read = |file: &str| std::fs::read_to_string(dist.join("deploy").join(file)).expect(file);
    let digest = |image: &str| layout_digest(&dist.join(image));
    let kubewarden = read("kubewarden/cluster-admission-policy.yaml");
    assert!(
        kubewarden.contains(&format!(
            "module: registry://registry.example.invalid/svclab/service-policy@{}\n",
            digest("kubewarden")
        )),
        "{kubewarden}"
    );
    let filter = digest("proxy-wasm");
    for file in ["istio/wasmplugin.yaml", "envoy-gateway/envoyextensionpolicy.yaml"] {
        assert!(read(file).contains(&format!("sha256: {}\n", &filter[7..])), "{file}");
    }
    let webhook = read("webhook/deployment.yaml");
    assert!(webhook.contains(&format!("image: registry.example.invalid/svclab/webhook@{}\n          imagePullPolicy: IfNotPresent\n", digest("webhook"))), "{webhook}");
}

// ---------------------------------------------------------------------------------------------
// A real registry on loopback

/// A tool the registry test runs, or a failure naming the setup script that installs it.
fn tool(name: &str) -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path).map(|dir| dir.join(name)).find(|file| file.is_file())
    });
    found.unwrap_or_else(|| {
        panic!("{name} is missing: run `bash scripts/setup.d/48-distribution.sh` (Debian's docker-registry, skopeo, openssl, runc)")
    })
}

/// cosign, which `scripts/setup.d/49-cosign.sh` builds from its Go module into svclab's cache.
fn cosign() -> PathBuf {
    let cache = std::env::var_os("SVCLAB_CACHE_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/svclab")
    });
    let built = cache.join("bin/cosign");
    assert!(
        built.is_file(),
        "{} is missing: run `bash scripts/setup.d/49-cosign.sh` (cosign built from its Go module)",
        built.display()
    );
    built
}

#[track_caller]
fn run(command: &mut Command) -> String {
    let output = command.output().unwrap_or_else(|err| panic!("cannot run {command:?}: {err}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The registry process, stopped when the test ends.
struct Registry(Child);

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A throwaway CA and a certificate for 127.0.0.1 it signs, in `dir`: (ca.crt, server cert,
/// server key).
fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let openssl = tool("openssl");
    let file = |name: &str| dir.join(name);
    run(Command::new(&openssl)
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"])
        .args(["-subj", "/CN=svclab throwaway test CA", "-keyout"])
        .arg(file("ca.key"))
        .arg("-out")
        .arg(file("ca.crt")));
    run(Command::new(&openssl)
        .args(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout"])
        .arg(file("registry.key"))
        .arg("-out")
        .arg(file("registry.csr")));
    std::fs::write(file("san.cnf"), "subjectAltName=IP:127.0.0.1\n").expect("writes");
    run(Command::new(&openssl)
        .args(["x509", "-req", "-days", "1", "-in"])
        .arg(file("registry.csr"))
        .arg("-CA")
        .arg(file("ca.crt"))
        .arg("-CAkey")
        .arg(file("ca.key"))
        .args(["-CAcreateserial", "-out"])
        .arg(file("registry.crt"))
        .arg("-extfile")
        .arg(file("san.cnf")));
    (file("ca.crt"), file("registry.crt"), file("registry.key"))
}

/// What the registry tests trust, in `dir`: a throwaway CA and the registry's certificate and
/// key it signs, the CA in a `certs.d` folder for skopeo, and a signature policy for skopeo,
/// which refuses to copy without one (the tests trust what they pushed).
struct Trust {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
    certs: PathBuf,
    policy: PathBuf,
}

fn trust(dir: &Path) -> Trust {
    let (ca, cert, key) = certificates(dir);
    let certs = dir.join("certs.d");
    std::fs::create_dir_all(&certs).expect("creates certs.d");
    std::fs::copy(&ca, certs.join("ca.crt")).expect("copies the CA");
    let policy = dir.join("policy.json");
    std::fs::write(&policy, r#"{"default":[{"type":"insecureAcceptAnything"}]}"#).expect("writes");
    Trust { ca, cert, key, certs, policy }
}

/// Starts `docker-registry` on a free loopback port with TLS and the `auth` section given (YAML,
/// empty for none); the process and its address.
fn start_registry(dir: &Path, cert: &Path, key: &Path, auth: &str) -> (Registry, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let address = format!("127.0.0.1:{port}");
    let config = format!(
        "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {address}\n  tls:\n    certificate: {}\n    key: {}\n{auth}",
        dir.join("storage").display(),
        cert.display(),
        key.display()
    );
    std::fs::write(dir.join("config.yml"), config).expect("writes the registry config");
    let child = Command::new(tool("docker-registry"))
        .arg("serve")
        .arg(dir.join("config.yml"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("registry.log")).expect("a log file"))
        .spawn()
        .expect("starts docker-registry");
    let registry = Registry(child);
    for _ in 0..100 {
        if std::net::TcpStream::connect(&address).is_ok() {
            return (registry, address);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!(
        "docker-registry did not listen on {address}: {}",
        std::fs::read_to_string(dir.join("registry.log")).unwrap_or_default()
    );
}

/// The manifest digest `index.json` of a layout names.
fn layout_digest(dir: &Path) -> String {
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("index.json")).expect("reads index.json"))
            .expect("JSON");
    index["manifests"][0]["digest"].as_str().expect("a digest").to_owned()
}

#[test]
fn dist_images_are_pushed_signed_verified_and_pulled_back() {
    let dist = dist_dir();
    let skopeo = tool("skopeo");
    let dir = scratch("registry");
    let Trust { ca, cert, key, certs, policy } = trust(&dir);
    let (_registry, address) = start_registry(&dir, &cert, &key, "");
    // A signing key made for this test, and another one that did not sign.
    let cosign = cosign();
    let cosign_in = |dir: &Path| {
        let mut command = Command::new(&cosign);
        // cosign (Go) trusts the throwaway CA through SSL_CERT_FILE; the keys have no password.
        command.current_dir(dir).env("SSL_CERT_FILE", &ca).env("COSIGN_PASSWORD", "");
        command
    };
    let stranger = dir.join("stranger");
    std::fs::create_dir_all(&stranger).expect("creates a folder");
    for keys in [&dir, &stranger] {
        run(cosign_in(keys).arg("generate-key-pair"));
    }
    for (name, host) in [("kubewarden", "kubewarden"), ("proxy-wasm", "istio"), ("webhook", "")] {
        let local = dist.join(name);
        let reference = format!("docker://{address}/svclab/{name}:{}", env!("CARGO_PKG_VERSION"));
        let tagged = format!("oci:{}:{}", local.display(), env!("CARGO_PKG_VERSION"));
        run(Command::new(&skopeo)
            .arg("--policy")
            .arg(&policy)
            .args(["copy", "--dest-cert-dir"])
            .arg(&certs)
            .args([&tagged, &reference]));
        // What the registry serves is the manifest we built, byte for byte.
        let raw = run(Command::new(&skopeo)
            .args(["inspect", "--raw", "--cert-dir"])
            .arg(&certs)
            .arg(&reference));
        assert_eq!(sha256(raw.as_bytes()), layout_digest(&local), "{name}: the served manifest");
        // Signed by digest with the test's key (no transparency log: nothing leaves loopback),
        // then verified against the registry; a key that did not sign does not verify.
        let pinned = format!("{address}/svclab/{name}@{}", layout_digest(&local));
        run(cosign_in(&dir)
            .args(["sign", "--yes", "--tlog-upload=false", "--key", "cosign.key"])
            .arg(&pinned));
        let verified = run(cosign_in(&dir)
            .args([
                "verify",
                "--insecure-ignore-tlog=true",
                "--key",
                "cosign.pub",
                "--output",
                "json",
            ])
            .arg(&pinned));
        let verified: serde_json::Value = serde_json::from_str(&verified).expect("JSON");
        assert_eq!(
            verified[0]["critical"]["image"]["docker-manifest-digest"],
            layout_digest(&local),
            "{name}: the signature covers the manifest's digest"
        );
        let foreign = cosign_in(&stranger)
            .args(["verify", "--insecure-ignore-tlog=true", "--key", "cosign.pub"])
            .arg(&pinned)
            .output()
            .expect("runs cosign verify");
        assert!(!foreign.status.success(), "{name}: verified with a key that never signed it");
        let pulled = dir.join(format!("pulled-{name}"));
        run(Command::new(&skopeo)
            .arg("--policy")
            .arg(&policy)
            .args(["copy", "--src-cert-dir"])
            .arg(&certs)
            .arg(&reference)
            .arg(format!("oci:{}:pulled", pulled.display())));
        assert_eq!(layout_digest(&pulled), layout_digest(&local), "{name}: pulled back");
        if !host.is_empty() {
            let (code, out) = check(&pulled, host);
            assert_eq!(code, 0, "{name} pulled back, for {host}: {out}");
            // `svclab oci check REF` pulls it as the hosts do, and judges it as the layout it
            // was pushed from: accepted by its host, refused by the others in the same words.
            let schemes = [("kubewarden", "registry://"), ("istio", "oci://")];
            let scheme = schemes.iter().find(|(h, _)| *h == host).map_or("", |(_, s)| s);
            let reference =
                format!("{scheme}{address}/svclab/{name}:{}", env!("CARGO_PKG_VERSION"));
            let ca_flags = ["--ca-file", ca.to_str().expect("a UTF-8 path")];
            for judge in ["kubewarden", "istio", "envoy-gateway"] {
                assert_eq!(
                    check_with(&reference, judge, &ca_flags),
                    check(&local, judge),
                    "{reference} judged by {judge}"
                );
            }
        }
        if name == "proxy-wasm" {
            fetch_as_istio(&dist, &address, &ca, &local);
        }
        if name == "kubewarden" {
            // The policy's bytes as the registry gave them back, for `scripts/test` to run
            // tests/kubewarden's waPC host on (SVCLAB_KUBEWARDEN_WASM).
            let manifest: serde_json::Value = serde_json::from_slice(
                &std::fs::read(pulled.join("blobs/sha256").join(&layout_digest(&pulled)[7..]))
                    .expect("reads the pulled manifest"),
            )
            .expect("JSON");
            let layer = manifest["layers"][0]["digest"].as_str().expect("one layer");
            let wasm = std::fs::read(pulled.join("blobs/sha256").join(&layer[7..])).expect("reads");
            let out = dist.with_file_name("dist-pulled");
            std::fs::create_dir_all(&out).expect("creates dist-pulled/");
            std::fs::write(out.join("svclab-kubewarden.wasm"), wasm).expect("writes the policy");
        }
    }
}

/// `svclab oci check REF` where a registry asks who pulls: basic authentication (an htpasswd
/// registry: refused without credentials, accepted with the authfile skopeo and docker keep)
/// and bearer tokens (a registry with `auth: token`, whose realm is a token server on loopback
/// handing out a JWT signed by openssl, as public registries do); and where it cannot pull: an
/// unknown tag, a CA it does not trust.
#[test]
fn registries_that_ask_who_pulls() {
    let skopeo = tool("skopeo");
    let openssl = tool("openssl");
    let dir = scratch("registry-auth");
    let Trust { ca, cert, key, certs, policy } = trust(&dir);
    let filter = compat_layout("auth-filter", "plugin.wasm");
    let push = |address: &str, creds: &[&str]| {
        run(Command::new(&skopeo)
            .arg("--policy")
            .arg(&policy)
            .args(["copy", "--dest-cert-dir"])
            .arg(&certs)
            .args(creds)
            .arg(format!("oci:{}", filter.display()))
            .arg(format!("docker://{address}/svclab/filter:1")));
    };
    let ca_flag = ca.to_str().expect("a UTF-8 path");
    let (expected_code, expected) = check(&filter, "istio");
    assert_eq!(expected_code, 0, "{expected}");

    // Basic: a bcrypt hash (cost 4) of the test's own password.
    let basic = dir.join("basic");
    std::fs::create_dir_all(&basic).expect("creates a folder");
    std::fs::write(
        basic.join("htpasswd"),
        "svclab:$2b$04$9d4PuB2sEzZYau1U9RdcZewrD5Vvq5s6Wzr8q6g53aHYCWAnQswVy\n",
    )
    .expect("writes htpasswd");
    let auth = format!(
        "auth:\n  htpasswd:\n    realm: svclab-test\n    path: {}\n",
        basic.join("htpasswd").display()
    );
    let (_basic_registry, address) = start_registry(&basic, &cert, &key, &auth);
    push(&address, &["--dest-creds", "svclab:svclab-test-password"]);
    let reference = format!("{address}/svclab/filter:1");
    let authfile = dir.join("auth.json");
    let encoded = data_encoding::BASE64.encode(b"svclab:svclab-test-password");
    std::fs::write(&authfile, format!(r#"{{"auths":{{"{address}":{{"auth":"{encoded}"}}}}}}"#))
        .expect("writes the authfile");
    let empty = dir.join("empty-auth.json");
    std::fs::write(&empty, r#"{"auths":{}}"#).expect("writes an empty authfile");
    let authfile_flag = authfile.to_str().expect("a UTF-8 path");
    assert_eq!(
        check_with(&reference, "istio", &["--ca-file", ca_flag, "--authfile", authfile_flag]),
        (expected_code, expected.clone())
    );
    let (code, out) = check_with(
        &reference,
        "istio",
        &["--ca-file", ca_flag, "--authfile", empty.to_str().expect("a UTF-8 path")],
    );
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains(&format!(
            "GET https://{address}/v2/svclab/filter/manifests/1: 401 Unauthorized: UNAUTHORIZED \
             authentication required; the registry asks for a user and password and the \
             authfile has none for 127.0.0.1"
        )),
        "{out}"
    );

    // Bearer: the registry trusts tokens signed by a key whose certificate it has; the token
    // server answers every request with one token for pulling and pushing svclab/filter.
    let bearer = dir.join("bearer");
    std::fs::create_dir_all(&bearer).expect("creates a folder");
    let file = |name: &str| bearer.join(name);
    run(Command::new(&openssl)
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"])
        .args(["-subj", "/CN=svclab test token issuer", "-keyout"])
        .arg(file("token.key"))
        .arg("-out")
        .arg(file("token.crt")));
    let der = run(Command::new(&openssl)
        .args(["x509", "-outform", "DER", "-in"])
        .arg(file("token.crt"))
        .arg("-out")
        .arg(file("token.der")));
    assert!(der.is_empty());
    let url64 = |bytes: &[u8]| data_encoding::BASE64URL_NOPAD.encode(bytes);
    let x5c = data_encoding::BASE64.encode(&std::fs::read(file("token.der")).expect("reads"));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let header = json!({"typ": "JWT", "alg": "RS256", "x5c": [x5c]});
    let claims = json!({
        "iss": "svclab-test-issuer", "sub": "svclab", "aud": "svclab-test-registry",
        "exp": now + 3600, "nbf": now - 60, "iat": now - 60, "jti": "svclab-test",
        "access": [{"type": "repository", "name": "svclab/filter", "actions": ["pull", "push"]}],
    });
    let signed = format!(
        "{}.{}",
        url64(header.to_string().as_bytes()),
        url64(claims.to_string().as_bytes())
    );
    std::fs::write(file("signed"), &signed).expect("writes");
    run(Command::new(&openssl)
        .args(["dgst", "-sha256", "-sign"])
        .arg(file("token.key"))
        .arg("-out")
        .arg(file("signature"))
        .arg(file("signed")));
    let token = format!("{signed}.{}", url64(&std::fs::read(file("signature")).expect("reads")));
    let (realm, asked) = token_server(token);
    let auth = format!(
        "auth:\n  token:\n    realm: {realm}\n    service: svclab-test-registry\n    issuer: svclab-test-issuer\n    rootcertbundle: {}\n",
        file("token.crt").display()
    );
    let (_bearer_registry, address) = start_registry(&bearer, &cert, &key, &auth);
    push(&address, &[]);
    let reference = format!("registry://{address}/svclab/filter:1");
    let asked_before = asked.lock().expect("the token server's log").len();
    assert_eq!(
        check_with(
            &reference,
            "istio",
            &["--ca-file", ca_flag, "--authfile", empty.to_str().expect("UTF-8")]
        ),
        (expected_code, expected)
    );
    let asked = asked.lock().expect("the token server's log")[asked_before..].to_vec();
    assert_eq!(
        asked,
        [
            "GET /token?service=svclab-test-registry&scope=repository%3Asvclab%2Ffilter%3Apull HTTP/1.1"
        ],
        "svclab asks the realm once, for pulling"
    );

    // Where it cannot pull: a tag the registry lacks, and a CA it was not told to trust.
    let (code, out) =
        check_with(&format!("{address}/svclab/filter:2"), "istio", &["--ca-file", ca_flag]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("/v2/svclab/filter/manifests/2: 404 Not Found: MANIFEST_UNKNOWN"),
        "{out}"
    );
    let (code, out) = check_with(&reference, "istio", &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("TLS: invalid peer certificate: UnknownIssuer"), "{out}");
}

/// A token realm on loopback: answers every GET with `{"token": TOKEN}`; its URL, and the
/// request lines it was sent.
fn token_server(token: String) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let realm = format!("http://{}/token", listener.local_addr().expect("an address"));
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&asked);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = std::io::BufReader::new(&stream);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            log.lock().expect("the log").push(line.trim_end().to_owned());
            // The rest of the request's head.
            let mut rest = String::new();
            while reader.read_line(&mut rest).is_ok_and(|n| n > 2) {
                rest.clear();
            }
            let body = json!({"token": token}).to_string();
            let _ = write!(
                &stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (realm, asked)
}

/// Pulls the filter image as Istio's fetcher does (`wasm-fetch/`, go-containerregistry's remote
/// pull with Istio's compat-then-oci steps), checks the digest and the module against the
/// local layout, and leaves the module with the dist Traefik guest in `target/dist-pulled/
/// gateway-plugins/` for `scripts/test` to load into the real Envoy and Traefik
/// (`SVCLAB_GATEWAY_PLUGINS` of tests/integration/gateways).
fn fetch_as_istio(dist: &Path, address: &str, ca: &Path, local: &Path) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wasm-fetch");
    let binary = dist.with_file_name("wasm-fetch").join("wasm-fetch");
    run(Command::new(tool("go"))
        .current_dir(&source)
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=readonly -buildvcs=false")
        .args(["build", "-trimpath", "-o"])
        .arg(&binary)
        .arg("."));
    let out = dist.with_file_name("dist-pulled").join("gateway-plugins");
    std::fs::create_dir_all(&out).expect("creates gateway-plugins/");
    let wasm = out.join("svclab_plugin_proxy_wasm.wasm");
    let reference = format!("{address}/svclab/proxy-wasm:{}", env!("CARGO_PKG_VERSION"));
    let digest = run(Command::new(&binary).env("SSL_CERT_FILE", ca).arg(&reference).arg(&wasm));
    assert_eq!(digest.trim(), layout_digest(local), "the digest Istio's fetcher sees");
    // The module in the local layout's one layer: a tar whose first entry is plugin.wasm.
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(local.join("blobs/sha256").join(&layout_digest(local)[7..]))
            .expect("reads the manifest"),
    )
    .expect("JSON");
    let layer = manifest["layers"][0]["digest"].as_str().expect("a layer");
    let gz = std::fs::read(local.join("blobs/sha256").join(&layer[7..])).expect("reads");
    let tar = miniz_oxide::inflate::decompress_to_vec(&gz[10..gz.len() - 8]).expect("inflates");
    let size = usize::from_str_radix(
        std::str::from_utf8(&tar[124..135]).expect("an octal size").trim_start_matches('0'),
        8,
    )
    .expect("a size");
    assert_eq!(&tar[..11], b"plugin.wasm");
    assert_eq!(std::fs::read(&wasm).expect("reads the fetched module"), &tar[512..512 + size]);
    let traefik = dist.join("traefik/plugins-local/src/svclab.dev/svclab/plugin.wasm");
    std::fs::copy(traefik, out.join("svclab_plugin_http_wasm.wasm")).expect("copies");
}

// ---------------------------------------------------------------------------------------------
// The webhook image under a real OCI runtime

/// A container run by runc, deleted when the test ends.
struct Container {
    runc: PathBuf,
    id: String,
    child: Child,
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new(&self.runc).args(["kill", &self.id, "KILL"]).output();
        let _ = self.child.wait();
        let _ = Command::new(&self.runc).args(["delete", "--force", &self.id]).output();
    }
}

/// One HTTP/1.1 exchange over plain TCP: the status line's code and the body.
fn http(address: &str, method: &str, path: &str, body: &str) -> std::io::Result<(u16, String)> {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(address)?;
    stream.set_read_timeout(Some(std::time::Duration::from_secs(20)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let code = answer.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body).to_owned();
    Ok((code, body))
}

/// An AdmissionReview creating Service `web` with `port`.
fn admission_review(uid: &str, port: u32) -> String {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Service"},
            "resource": {"group": "", "version": "v1", "resource": "services"},
            "operation": "CREATE",
            "namespace": "shop",
            "name": "web",
            "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
            "object": {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": port, "targetPort": 8080}]}},
        }
    })
    .to_string()
}

/// The image's manifest and config, and its one layer unpacked as the bundle's root file system.
fn unpack_webhook(image: &Path, bundle: &Path) -> serde_json::Value {
    let blob = |digest: &str| image.join("blobs/sha256").join(&digest[7..]);
    let read_json = |path: PathBuf| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(&path).expect("reads a blob")).expect("JSON")
    };
    let manifest = read_json(blob(&layout_digest(image)));
    let config = read_json(blob(manifest["config"]["digest"].as_str().expect("a config")));
    assert_eq!(
        (config["os"].as_str(), config["architecture"].as_str()),
        (Some("linux"), Some("amd64"))
    );
    let layers = manifest["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 1);
    let rootfs = bundle.join("rootfs");
    std::fs::create_dir_all(&rootfs).expect("creates rootfs");
    run(Command::new("tar")
        .args(["--numeric-owner", "-xzf"])
        .arg(blob(layers[0]["digest"].as_str().expect("a digest")))
        .arg("-C")
        .arg(&rootfs));
    config
}

/// runc's spec for the image config: its entrypoint with `args`, its user and environment, a
/// read-only root, the host's network (the test talks to it on loopback) and no cgroup limits
/// (the runtime may run inside a container whose cgroups it cannot manage).
fn runc_spec(config: &serde_json::Value, args: &[&str]) -> serde_json::Value {
    let image = &config["config"];
    let mut argv: Vec<serde_json::Value> =
        image["Entrypoint"].as_array().expect("an entrypoint").clone();
    argv.extend(args.iter().map(|arg| json!(arg)));
    let user = image["User"].as_str().expect("a user");
    let (uid, gid) = user.split_once(':').expect("uid:gid");
    json!({
        "ociVersion": "1.0.2",
        "process": {
            "terminal": false,
            "user": {"uid": uid.parse::<u32>().expect("uid"), "gid": gid.parse::<u32>().expect("gid")},
            "args": argv,
            "env": image["Env"],
            "cwd": image["WorkingDir"],
            "noNewPrivileges": true,
            "capabilities": {"bounding": [], "effective": [], "permitted": []},
        },
        "root": {"path": "rootfs", "readonly": true},
        "hostname": "svclab-webhook",
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc"},
            {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
            {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777"]},
        ],
        "linux": {
            "namespaces": [{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}],
            "maskedPaths": ["/proc/kcore", "/proc/keys", "/sys/firmware"],
            "readonlyPaths": ["/proc/sys", "/proc/sysrq-trigger"],
        },
    })
}

#[test]
fn webhook_image_serves_under_runc_as_svclab_serve_does() {
    let dist = dist_dir();
    let runc = tool("runc");
    let bundle = scratch("webhook-bundle");
    let config = unpack_webhook(&dist.join("webhook"), &bundle);
    assert_eq!(config["config"]["User"], "65532:65532", "a non-root user");
    assert_eq!(config["config"]["Entrypoint"], json!(["/usr/local/bin/svclab", "serve"]));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let address = format!("127.0.0.1:{port}");
    let spec = runc_spec(&config, &[&format!("--listen={address}")]);
    std::fs::write(bundle.join("config.json"), spec.to_string()).expect("writes config.json");
    let id = format!("svclab-webhook-{}", std::process::id());
    let log = std::fs::File::create(bundle.join("container.log")).expect("a log file");
    let child = Command::new(&runc)
        .args(["run", "--bundle"])
        .arg(&bundle)
        .arg(&id)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("a log file"))
        .stderr(log)
        .spawn()
        .expect("starts runc");
    let _container = Container { runc, id, child };
    let mut health = None;
    for _ in 0..300 {
        if let Ok(answer) = http(&address, "GET", "/healthz", "") {
            health = Some(answer);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let log = || std::fs::read_to_string(bundle.join("container.log")).unwrap_or_default();
    assert_eq!(health, Some((200, "ok\n".to_owned())), "the container: {}", log());
    // The same verdicts, byte for byte, as the webhook's routes in this process.
    let options = svclab_core::AdmissionOptions::default();
    for (uid, port, allowed) in [("accepted", 80, true), ("refused", 70_000, false)] {
        let body = admission_review(uid, port);
        let (code, answer) = http(&address, "POST", "/validate", &body).expect("a review");
        let expected = svclab_host::route(
            &svclab_host::Engine::Native,
            svclab_host::FailurePolicy::Fail,
            &options,
            "POST",
            "/validate",
            &body,
        );
        assert_eq!((code, answer.as_str()), (expected.status, expected.body.as_str()), "{}", log());
        let review: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
        assert_eq!(review["response"]["allowed"], allowed, "{answer}");
    }
}
