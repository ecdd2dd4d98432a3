//! glTF/GLB import of arbitrary bytes: an `Ok` model or an error, never a
//! panic, an abort, a hang or a huge allocation (libFuzzer's `-rss_limit_mb`
//! and `-timeout` catch the last two).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rigbake_core::import::{self, ImportOptions, Source};

fuzz_target!(|bytes: &[u8]| {
    let source = Source {
        name: "fuzz",
        dir: None,
    };
    let options = ImportOptions {
        images: true,
        ..ImportOptions::default()
    };
    let _ = import::import_slice(bytes, &source, &options);
});
