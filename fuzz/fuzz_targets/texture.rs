//! The texture readers `verify`, `preview`, `view` and playback use on the
//! files beside a container: arbitrary bytes as an EXR (even first byte) or
//! a 16-bit PNG (odd), the rest being the file. Errors, never panics or huge
//! allocations.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rigbake_format::texture::{exr, png};

fuzz_target!(|input: &[u8]| {
    let Some((&kind, bytes)) = input.split_first() else {
        return;
    };
    let reader = std::io::Cursor::new(bytes);
    if kind & 1 == 0 {
        let _ = exr::read(reader);
    } else {
        let _ = png::read(reader);
    }
});
