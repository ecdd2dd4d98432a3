//! Manifest parsing (`rigbake bake --manifest`) of arbitrary text: a
//! manifest or a usage error naming the line and column, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = rigbake::manifest::Manifest::parse(std::path::Path::new("fuzz/rigbake.toml"), text);
});
