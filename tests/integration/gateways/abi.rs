//! The gateway artifacts themselves: core modules (not components), under 1.5 MB, importing
//! only their host's ABI and the WASI subset gateways provide (no filesystem: Envoy refuses
//! modules that import `path_open` or `fd_prestat_get`), exporting what the host calls.

use super::host::guests;

/// The WASI functions both gateways provide (Envoy's "Logging", "Clocks", "Randomness" and
/// argument/environment sections of the proxy-wasm ABI; wazero's preview1 for Traefik).
const WASI: &[&str] = &[
    "fd_write",
    "clock_time_get",
    "random_get",
    "environ_get",
    "environ_sizes_get",
    "args_get",
    "args_sizes_get",
    "proc_exit",
];

/// (imports as `module.name`, exports) of a core module; panics on a component.
fn interface(file: &str) -> (Vec<String>, Vec<String>) {
    let path = guests().join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    // xtask/src/plugins.rs `MAX_SIZE`: 1.5 MB until the upstream oracle's fixes (issue 35).
    assert!(bytes.len() < 1_600 * 1024, "{file} is {} bytes, over 1600 KiB", bytes.len());
    let (mut imports, mut exports) = (Vec::new(), Vec::new());
    for payload in wasmparser::Parser::new(0).parse_all(&bytes) {
        match payload.unwrap_or_else(|err| panic!("{file}: {err}")) {
            wasmparser::Payload::Version { encoding, .. } => {
                assert_eq!(encoding, wasmparser::Encoding::Module, "{file} is not a core module")
            }
            wasmparser::Payload::ImportSection(section) => {
                for import in section.into_imports() {
                    let import = import.expect("import");
                    imports.push(format!("{}.{}", import.module, import.name));
                }
            }
            wasmparser::Payload::ExportSection(section) => {
                for export in section {
                    exports.push(export.expect("export").name.to_owned());
                }
            }
            _ => {}
        }
    }
    (imports, exports)
}

#[track_caller]
fn check(file: &str, host_module: &str, host_prefix: &str, required_exports: &[&str]) {
    let (imports, exports) = interface(file);
    let forbidden: Vec<&String> = imports
        .iter()
        .filter(|import| {
            let (module, name) = import.split_once('.').unwrap_or_default();
            !((module == host_module && name.starts_with(host_prefix))
                || (module == "wasi_snapshot_preview1" && WASI.contains(&name)))
        })
        .collect();
    assert!(forbidden.is_empty(), "{file} imports outside the allow-list: {forbidden:?}");
    assert!(
        imports.iter().any(|import| import.starts_with(&format!("{host_module}."))),
        "{file} imports nothing from {host_module}: {imports:?}"
    );
    let missing: Vec<&&str> =
        required_exports.iter().filter(|name| !exports.iter().any(|e| e == **name)).collect();
    assert!(missing.is_empty(), "{file} does not export {missing:?}: {exports:?}");
}

#[test]
fn proxy_wasm_filter_imports_only_proxy_abi_and_wasi_subset() {
    check(
        "svclab_plugin_proxy_wasm.wasm",
        "env",
        "proxy_",
        &[
            "memory",
            "_initialize",
            "proxy_abi_version_0_2_1",
            "proxy_on_memory_allocate",
            "proxy_on_context_create",
            "proxy_on_configure",
            "proxy_on_request_headers",
            "proxy_on_request_body",
            "proxy_on_response_headers",
        ],
    );
}

#[test]
fn http_wasm_middleware_imports_only_http_handler_and_wasi_subset() {
    let file = "svclab_plugin_http_wasm.wasm";
    check(file, "http_handler", "", &["memory", "handle_request", "handle_response"]);
    // Traefik 3.7's wazero runs every bulk-memory instruction through Go's `memmove`, which
    // clobbers a register its compiled code relies on (xtask/src/plugins/lower.rs):
    // `cargo xtask plugins` lowers them all into plain loads and stores.
    let bytes = std::fs::read(guests().join(file)).expect("the http-wasm guest");
    let mut bulk = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(&bytes) {
        if let Ok(wasmparser::Payload::CodeSectionEntry(body)) = payload {
            for operator in body.get_operators_reader().expect("operators") {
                use wasmparser::Operator as O;
                if let op @ (O::MemoryCopy { .. }
                | O::MemoryFill { .. }
                | O::MemoryInit { .. }
                | O::TableCopy { .. }
                | O::TableFill { .. }
                | O::TableInit { .. }) = operator.expect("operator")
                {
                    bulk.push(format!("{op:?}"));
                }
            }
        }
    }
    assert_eq!(bulk, Vec::<String>::new(), "{file} still has bulk-memory instructions");
}
