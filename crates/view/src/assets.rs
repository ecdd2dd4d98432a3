//! The page, embedded in the binary: HTML and JavaScript modules written
//! for this project (no third-party code), served under `/` and `/app/`.
//!
//! - `index.html`: layout and controls;
//! - `viewer.js`: loads `/bakes.json`, builds the crowd, draws every frame;
//! - `exr.js`, `png.js`: decode the scanline EXR (uncompressed, ZIPS, ZIP)
//!   and 16-bit PNG textures rigbake writes (half-float EXRs as their half
//!   bits);
//! - `decode_worker.js`: the module Web Worker that runs those decoders off
//!   the page's main thread;
//! - `ktx2.js`: parses the headers of the uncompressed KTX2 and DDS
//!   textures (`--texture-container`) and hands their texel bytes to WebGL
//!   as they are;
//! - `glb.js`: reads the weights and VAT playback meshes;
//! - `state.js`: the animation state of SPEC section 6, a port of
//!   `rigbake_core::runtime::state`;
//! - `shaders.js`: the WebGL2 vertex and fragment shaders, after
//!   `docs/shaders/rigbake.wgsl` (kept by hand: `docs/shaders/README.md`).

/// The page.
pub const INDEX_HTML: &str = include_str!("../assets/index.html");

/// Every script by name.
pub const SCRIPTS: &[(&str, &str)] = &[
    ("viewer.js", include_str!("../assets/viewer.js")),
    ("exr.js", include_str!("../assets/exr.js")),
    ("png.js", include_str!("../assets/png.js")),
    (
        "decode_worker.js",
        include_str!("../assets/decode_worker.js"),
    ),
    ("ktx2.js", include_str!("../assets/ktx2.js")),
    ("glb.js", include_str!("../assets/glb.js")),
    ("state.js", include_str!("../assets/state.js")),
    ("shaders.js", include_str!("../assets/shaders.js")),
];

/// The script called `name`, if there is one.
pub fn script(name: &str) -> Option<&'static str> {
    SCRIPTS.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}
