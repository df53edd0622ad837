//! The embedded plugin's cache key.

use sha2::{Digest as _, Sha256};

use crate::plugin::{EMBEDDED_PLUGIN, EMBEDDED_PLUGIN_SHA256};

#[test]
fn build_rs_digest_is_the_embedded_plugins_sha256() {
    // The embedded plugin's cache key is read from build.rs's file, not hashed at start:
    // it must be the key a `--plugin` of the same bytes gets.
    let digest = data_encoding::HEXLOWER.encode(&Sha256::digest(EMBEDDED_PLUGIN));
    assert_eq!(EMBEDDED_PLUGIN_SHA256, digest);
}
