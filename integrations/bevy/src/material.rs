//! The vertex-animation material: Bevy's `StandardMaterial` extended with
//! a vertex stage that reads the VAT (`vat.wgsl`, over docs/shaders'
//! `vat_deform`), and the per-material buffer of instance states.

use bevy::pbr::{ExtendedMaterial, MaterialExtension};
use bevy::prelude::*;
use bevy::render::render_resource::{AsBindGroup, ShaderType};
use bevy::render::storage::ShaderBuffer;
use bevy::shader::ShaderRef;

/// The material of a VAT primitive: StandardMaterial's shading over the
/// animated vertices.
pub type VatMaterial = ExtendedMaterial<StandardMaterial, VatExtension>;

/// How one VAT stream decodes (rigbake.wgsl's `VatStream`).
#[derive(Debug, Clone, Copy, Default, PartialEq, ShaderType, Reflect)]
pub struct VatStreamUniform {
    /// 0 floats, 1 bounds, 2 octahedral, 3 packed (rigbake.wgsl's
    /// `ENCODING_*`).
    pub encoding: u32,
    /// Per-channel minimum of bounds-normalised samples.
    pub bounds_min: Vec4,
    /// Per-channel maximum.
    pub bounds_max: Vec4,
}

/// Where a primitive's texels are (rigbake.wgsl's `VatLayout`).
#[derive(Debug, Clone, Copy, Default, PartialEq, ShaderType, Reflect)]
pub struct VatLayoutUniform {
    /// Texels per band.
    pub width: u32,
    /// Texel rows per frame.
    pub bands: u32,
    /// Timeline rows.
    pub frames: u32,
    /// The primitive's first vertex in its texture set (atlas).
    pub first_vertex: u32,
    /// Folded sets: timeline rows per column block; 0 unfolded.
    pub rows_per_block: u32,
    /// Folded sets: column blocks side by side on a page.
    pub blocks_per_page: u32,
}

/// The uniform of `vat.wgsl` (`VatParams`).
#[derive(Debug, Clone, Copy, Default, PartialEq, ShaderType, Reflect)]
pub struct VatParams {
    /// The positions' decoding.
    pub positions: VatStreamUniform,
    /// The normals' decoding.
    pub normals: VatStreamUniform,
    /// The primitive's addressing.
    pub addressing: VatLayoutUniform,
}

/// One instance's animation state as the shader reads it (rigbake.wgsl's
/// `AnimationState`: four rows of blend weight, fraction, frame row, 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, ShaderType, Reflect)]
pub struct GpuAnimationState {
    /// Active rows first; weight 0 ends them.
    pub rows: [Vec4; 4],
    /// 0: draw the playback mesh as it is.
    pub enabled: u32,
}

/// The VAT part of the material: textures, decoding and the states of
/// every instance drawn with it (indexed by the entity's `MeshTag`).
#[derive(Asset, AsBindGroup, Reflect, Debug, Clone, Default)]
pub struct VatExtension {
    /// Positions, one array layer per page (rigbake.wgsl's binding 1).
    #[texture(
        101,
        dimension = "2d_array",
        sample_type = "float",
        filterable = false,
        visibility(vertex)
    )]
    pub positions: Handle<Image>,
    /// Normals (packed normals: the positions texture). A bake without
    /// normals binds its positions here: shading is then meaningless, the
    /// silhouette right (bake with `--normals` to light it).
    #[texture(
        102,
        dimension = "2d_array",
        sample_type = "float",
        filterable = false,
        visibility(vertex)
    )]
    pub normals: Handle<Image>,
    /// Decoding and addressing.
    #[uniform(110, visibility(vertex))]
    pub params: VatParams,
    /// The states of the instances (`array<AnimationState>`).
    #[storage(111, visibility(vertex), read_only)]
    pub states: Handle<ShaderBuffer>,
}

impl MaterialExtension for VatExtension {
    fn vertex_shader() -> ShaderRef {
        crate::shader::VAT_SHADER.into()
    }
}

/// The material of a skinned primitive on the bone-matrix path:
/// StandardMaterial's shading over vertices skinned from the bone texture.
pub type BoneMaterial = ExtendedMaterial<StandardMaterial, BoneExtension>;

/// The range of a `qts` `unorm16` texture's second texel (rigbake.wgsl's
/// `BoneRange`).
#[derive(Debug, Clone, Copy, Default, PartialEq, ShaderType, Reflect)]
pub struct BoneRangeUniform {
    /// Translation and scale minimum.
    pub min: Vec4,
    /// Translation and scale maximum.
    pub max: Vec4,
}

/// The uniform of `bones.wgsl` (`BoneParams`).
#[derive(Debug, Clone, Copy, Default, PartialEq, ShaderType, Reflect)]
pub struct BoneParams {
    /// rigbake.wgsl's `LAYOUT_*`: 0 mat4, 1 mat3x4, 2 qts, 3 qts unorm16.
    pub matrix_layout: u32,
    /// Timeline rows.
    pub height: u32,
    /// Rows per column block (unfolded: every row, one block).
    pub rows_per_block: u32,
    /// Texel columns of one block (the unfolded width).
    pub block_width: u32,
    /// Weight channels a vertex (1 to 4).
    pub channels: u32,
    /// The `qts` `unorm16` range.
    pub range: BoneRangeUniform,
}

/// The bone part of the material: the texture, the primitive's weight
/// channels and the instances' states.
#[derive(Asset, AsBindGroup, Reflect, Debug, Clone, Default)]
pub struct BoneExtension {
    /// The bone-matrix texture (rigbake.wgsl's binding 0).
    #[texture(100, sample_type = "float", filterable = false, visibility(vertex))]
    pub texture: Handle<Image>,
    /// Layout, rows, fold, channels.
    #[uniform(110, visibility(vertex))]
    pub params: BoneParams,
    /// The states of the instances (`array<AnimationState>`).
    #[storage(111, visibility(vertex), read_only)]
    pub states: Handle<ShaderBuffer>,
    /// `channels` RGBA weight channels a vertex (`array<vec4<f32>>`).
    #[storage(112, visibility(vertex), read_only)]
    pub weights: Handle<ShaderBuffer>,
}

impl MaterialExtension for BoneExtension {
    fn vertex_shader() -> ShaderRef {
        crate::shader::BONE_SHADER.into()
    }
}
