//! Executes the WGSL runtime shaders of `docs/shaders/rigbake.wgsl` on a
//! software GPU (wgpu on Mesa's lavapipe) and compares the vertices they
//! produce with the CPU runtime reference (`rigbake_core::runtime`), for
//! both playback paths (bone matrices with bone weights, and vertex
//! animation textures).
//!
//! - [`gpu`]: the lavapipe device, or a visible skip;
//! - [`kernel`]: the shipped WGSL plus a compute harness, and one run;
//! - [`render`]: the shipped vertex entry points in a render pipeline;
//! - [`uniforms`]: the shader's uniform blocks at naga's offsets;
//! - [`bakes`]: in-memory bakes through the libraries the CLI uses;
//! - [`states`]: the animation states the shaders are run with;
//! - [`encode`]: VAT textures in each encoding;
//! - [`compare`]: GPU against CPU, with the stated tolerances;
//! - [`render_check`]: the render path's drawings against the reference.
//!
//! The tests live in `tests/lavapipe.rs`; this crate is never published.

pub mod bakes;
pub mod compare;
pub mod encode;
pub mod gpu;
pub mod kernel;
pub mod render;
pub mod render_check;
pub mod states;
pub mod uniforms;
