//! The rehearsal's tests.

use crate::{Input, UpgradeOptions, Version, upgrade};

#[test]
fn explore() {
    let text = std::fs::read_to_string("/tmp/up/s1.yaml").unwrap();
    for (to, mode) in [("1.30", None), ("1.33", Some(crate::ProxyMode::Nftables)), ("1.24", None)] {
        let options =
            UpgradeOptions { proxy_mode: mode, ..UpgradeOptions::new(Version::parse(to).unwrap()) };
        let report = upgrade(&[Input::new("s1.yaml", text.clone())], &options).unwrap();
        println!("{}", report.to_text());
    }
}
