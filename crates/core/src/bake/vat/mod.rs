//! Vertex animation textures (SPEC section 7): for every timeline row, the
//! fully deformed position (and optionally normal and tangent) of every
//! vertex of every primitive that moves.
//!
//! **Model space.** All VAT values of a model are in the space of its
//! reference node: the mesh node of its first skinned instance (the space of
//! its bone-matrix texture), or the scene root when nothing is skinned. A
//! vertex's value is `inverse(reference_global) * world`, where `world` is
//! where glTF renders it: `sum_i w_i * joint_global_i * inverse_bind_i * p`
//! for skinned vertices (morph targets applied first), `node_global * p` for
//! rigid ones.
//!
//! **Layout.** Primitives are grouped into texture sets: one set for the
//! whole model (an atlas, the default) or one per primitive. A set's
//! vertices are its primitives' vertices one after the other (primitive `k`
//! starts at set vertex `first_vertex_k`); set vertex `v` of timeline row `r`
//! lives at texel `(v mod width, r * bands + v div width)`, where
//! `width = min(vertices, max size)` and `bands = ceil(vertices / width)`
//! (wrapping keeps every texture within the maximum size). Optional
//! power-of-two padding rounds width and height up; padding texels are zero.
//!
//! The work is split for speed: per-row matrix palettes are computed once in
//! f64 and stored as f32 3x4 matrices, then the per-vertex kernel runs in f32
//! over row batches in parallel. Nothing here allocates per vertex or per
//! frame.
//!
//! Split by job: `layout` says where a texel lives ([`VatLayout`]), `plan`
//! chooses the primitives and their texture sets ([`plan()`]), `baker`
//! computes the texels ([`VatBaker`]).

mod baker;
mod layout;
mod plan;

pub use baker::{CulledBounds, FrameBounds, VatBaker, VatBatch, all_finite};
pub use layout::{LOOKUP_SPLIT, MAX_SET_VERTICES, VatLayout, lookup_uv};
pub use plan::{Deformation, VatPlan, VatPrimitive, VatSet, plan};
pub use rigbake_types::{NormalConvention, VatLayoutMode};

/// Options of the VAT bake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct VatOptions {
    /// Bake normals (of primitives that have them).
    pub normals: bool,
    /// Bake tangents (of primitives that have them).
    pub tangents: bool,
    /// Normal transformation convention.
    pub convention: NormalConvention,
    /// Largest texture width and height.
    pub max_texture_size: usize,
    /// Round texture sizes up to powers of two.
    pub power_of_two: bool,
    /// One texture set per model (atlas) or per primitive.
    pub layout: VatLayoutMode,
}

impl Default for VatOptions {
    fn default() -> Self {
        Self {
            normals: false,
            tangents: false,
            convention: NormalConvention::InverseTranspose,
            max_texture_size: 8192,
            power_of_two: false,
            layout: VatLayoutMode::Atlas,
        }
    }
}

/// Most pages (textures per stream) a folded VAT texture set may take.
pub const MAX_VAT_PAGES: u32 = 256;
