//! The runtime reference (SPEC section 6): what an engine does with a bake,
//! written out on the CPU so that bakes can be verified and shaders checked.
//!
//! - [`state`]: the per-instance animation state (clip, time, speed, loop
//!   or once, crossfades) and the 4x4 float block it hands the GPU.
//! - [`bone_path`]: the bone-matrix shader: bone-weight channels, matrices
//!   fetched from the texture, linear blend skinning, frame lerp, row blend.
//! - [`vat_path`]: the vertex-animation-texture shader: texel addressing,
//!   decoding (EXR floats, PNG16 bounds or octahedral), frame lerp, row blend.
//! - [`anchor_path`]: props on sockets: the anchor tracks sampled between
//!   two rows with the state's time mapping (translation and scale lerp,
//!   rotation slerp).
//! - [`root_motion`]: where an instance of a clip baked in place stands:
//!   its root-motion track sampled with the state's time mapping.
//! - [`rows`]: the frame lerp and row blend both paths end with, over
//!   what a path computes at one timeline row.
//! - [`math`]: the small f32 helpers both paths share (3x4 matrices, the
//!   cofactor normal matrix, lerp), written as the shaders write them.
//!
//! Everything here works on plain slices and numbers in `f32` (the anchor
//! path decomposes its matrices in `f64`), in the same
//! order of operations as the shaders in `docs/shaders/`, and never panics
//! on odd input: out-of-range texels read as zero, as `Texture.Load` does.

pub mod anchor_path;
pub mod bone_path;
pub mod math;
pub mod root_motion;
pub mod rows;
pub mod state;
pub mod vat_path;

pub use state::{AnimationState, ClipInfo, FrameSample, GpuState, PlayMode, PlayingClip, StateRow};

use glam::Vec3;

/// A vertex as a runtime path outputs it, in the bake's model space.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RuntimeVertex {
    /// Position.
    pub position: Vec3,
    /// Unit normal (zero when degenerate), when the vertex has one.
    pub normal: Option<Vec3>,
}
