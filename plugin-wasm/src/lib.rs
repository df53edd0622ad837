//! The svclab core as a WebAssembly component: a thin adapter that decodes the WIT arguments,
//! calls `svclab_core` and encodes its answer. No logic lives here, so the plugin and the native
//! engine give the same bytes (the host's parity tests hold both to that).

use svclab_core::{CheckOptions, Input, IpFamily, ProxyMode, RenderOptions, TraceRequest};

use bindings as types;

/// The bindings generated from `wit/policy.wit`.
#[allow(unsafe_code, reason = "wit-bindgen's generated glue is unsafe by nature")]
#[allow(missing_docs, unreachable_pub, reason = "generated code")]
mod bindings {
    wit_bindgen::generate!({ path: "../wit/policy.wit", world: "policy" });

    use super::Plugin;
    export!(Plugin);
}

/// The ABI version of `wit/policy.wit` this adapter implements.
const ABI_VERSION: u32 = 1;

struct Plugin;

impl bindings::Guest for Plugin {
    fn abi_version() -> u32 {
        ABI_VERSION
    }

    fn check(
        inputs: Vec<types::Input>,
        options: types::CheckOptions,
    ) -> Result<String, types::Error> {
        let options = CheckOptions { no_defaults: options.no_defaults };
        Ok(svclab_core::check(&decode_inputs(inputs), &options).to_json())
    }

    fn render(
        inputs: Vec<types::Input>,
        options: types::RenderOptions,
    ) -> Result<String, types::Error> {
        let options = RenderOptions {
            mode: match options.proxy_mode {
                types::ProxyMode::Iptables => ProxyMode::Iptables,
                types::ProxyMode::Nftables => ProxyMode::Nftables,
            },
            family: options.ip_family.map(|family| match family {
                types::IpFamily::Ipv4 => IpFamily::V4,
                types::IpFamily::Ipv6 => IpFamily::V6,
            }),
            node: options.node,
            standalone: options.standalone,
        };
        let (world, _) = svclab_core::evaluate(&decode_inputs(inputs), &CheckOptions::default());
        svclab_core::render(&world, &options).map_err(|err| types::Error::Failed(err.to_string()))
    }

    fn trace(
        inputs: Vec<types::Input>,
        options: types::TraceOptions,
    ) -> Result<String, types::Error> {
        let request = TraceRequest {
            src: options.src,
            dst: options.dst,
            dport: options.dport,
            protocol: options.protocol,
            node: options.node,
            in_interface: options.in_interface,
        };
        let (world, _) = svclab_core::evaluate(&decode_inputs(inputs), &CheckOptions::default());
        let report = svclab_core::trace(&world, &request);
        let mut json = serde_json::to_string_pretty(&report)
            .map_err(|err| types::Error::Failed(err.to_string()))?;
        json.push('\n');
        Ok(json)
    }

    fn validate_admission(review: String) -> Result<String, types::Error> {
        svclab_core::validate_admission(&review)
            .map_err(|err| types::Error::BadInput(err.to_string()))
    }
}

fn decode_inputs(inputs: Vec<types::Input>) -> Vec<Input> {
    inputs.into_iter().map(|input| Input::new(input.name, input.text)).collect()
}
