//! The shipped shader's uniform blocks (`Instance`, `Params`) written byte
//! by byte at the offsets naga computes from the WGSL itself, so a change
//! of the structures in `docs/shaders/rigbake.wgsl` cannot silently shift
//! what the tests upload.

use rigbake_core::runtime::GpuState;

/// A WGSL module's struct layouts, looked up by type and member name.
#[derive(Debug)]
pub struct Layouts {
    module: naga::Module,
}

/// A uniform block being filled: its bytes and the layouts to place values.
#[derive(Debug)]
pub struct Block<'a> {
    layouts: &'a Layouts,
    ty: &'static str,
    /// The bytes, as large as the structure.
    pub bytes: Vec<u8>,
}

impl Layouts {
    /// Parses `source` (WGSL); the error is naga's message.
    pub fn parse(source: &str) -> Result<Self, String> {
        naga::front::wgsl::parse_str(source)
            .map(|module| Self { module })
            .map_err(|e| e.emit_to_string(source))
    }

    fn struct_named(&self, name: &str) -> Option<(&[naga::StructMember], u32)> {
        self.module.types.iter().find_map(|(_, t)| match &t.inner {
            naga::TypeInner::Struct { members, span } if t.name.as_deref() == Some(name) => {
                Some((members.as_slice(), *span))
            }
            _ => None,
        })
    }

    /// Size in bytes of struct `name`.
    pub fn size(&self, name: &str) -> u32 {
        self.struct_named(name)
            .unwrap_or_else(|| panic!("the shader has no struct `{name}`"))
            .1
    }

    /// Byte offset of `path` (member names, nested structs followed) inside
    /// struct `ty`.
    pub fn offset(&self, ty: &str, path: &[&str]) -> usize {
        let mut offset = 0;
        let mut current = ty.to_owned();
        for (depth, field) in path.iter().enumerate() {
            let (members, _) = self
                .struct_named(&current)
                .unwrap_or_else(|| panic!("the shader has no struct `{current}`"));
            let member = members
                .iter()
                .find(|m| m.name.as_deref() == Some(*field))
                .unwrap_or_else(|| panic!("struct `{current}` has no member `{field}`"));
            offset += member.offset as usize;
            if depth + 1 < path.len() {
                current = self.module.types[member.ty]
                    .name
                    .clone()
                    .unwrap_or_else(|| panic!("`{field}` of `{current}` is not a named struct"));
            }
        }
        offset
    }

    /// A zeroed block of struct `ty`.
    pub fn block(&self, ty: &'static str) -> Block<'_> {
        Block {
            layouts: self,
            ty,
            bytes: vec![0; self.size(ty) as usize],
        }
    }
}

impl Block<'_> {
    /// Writes `values` (4-byte scalars) at `path`.
    pub fn put(&mut self, path: &[&str], values: &[[u8; 4]]) -> &mut Self {
        let at = self.layouts.offset(self.ty, path);
        for (i, v) in values.iter().enumerate() {
            self.bytes[at + 4 * i..at + 4 * i + 4].copy_from_slice(v);
        }
        self
    }

    /// Writes one `u32` at `path`.
    pub fn u32(&mut self, path: &[&str], value: u32) -> &mut Self {
        self.put(path, &[value.to_le_bytes()])
    }

    /// Writes `f32`s at `path`.
    pub fn f32s(&mut self, path: &[&str], values: &[f32]) -> &mut Self {
        let v: Vec<[u8; 4]> = values.iter().map(|f| f.to_le_bytes()).collect();
        self.put(path, &v)
    }
}

/// Where the shipped entry points put a deformed vertex: its root motion
/// `(x, y, z, yaw)` (zero: none), then `world_view_projection`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// The instance's world-view-projection matrix.
    pub world_view_projection: glam::Mat4,
    /// The root motion applied before it ([`rigbake_core::runtime::root_motion`]).
    pub root_motion: [f32; 4],
}

impl Placement {
    /// Placed by `world_view_projection` alone, with no root motion.
    pub fn new(world_view_projection: glam::Mat4) -> Self {
        Self {
            world_view_projection,
            root_motion: [0.0; 4],
        }
    }
}

/// The `Instance` block for `state`: its 16 floats, its enable flag, an
/// identity world-view-projection and no root motion (the compute harness
/// stores model space).
pub fn instance(layouts: &Layouts, state: &GpuState) -> Vec<u8> {
    instance_placed(layouts, state, &Placement::new(glam::Mat4::IDENTITY))
}

/// The `Instance` block for `state`, placed by `placement`.
pub fn instance_placed(layouts: &Layouts, state: &GpuState, placement: &Placement) -> Vec<u8> {
    let mut b = layouts.block("Instance");
    b.f32s(&["state", "rows"], &state.to_floats())
        .u32(&["state", "enabled"], u32::from(state.enabled))
        .f32s(
            &["world_view_projection"],
            &placement.world_view_projection.to_cols_array(),
        )
        .f32s(&["root_motion"], &placement.root_motion);
    b.bytes
}

/// How a VAT stream decodes (the shader's `VatStream`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamDecode {
    /// `ENCODING_FLOAT`, `ENCODING_BOUNDS` or `ENCODING_OCTAHEDRAL`.
    pub encoding: u32,
    /// Per-channel minimum (bounds encoding).
    pub min: [f32; 4],
    /// Per-channel maximum (bounds encoding).
    pub max: [f32; 4],
}

impl StreamDecode {
    /// Floats as stored.
    pub const FLOAT: Self = Self {
        encoding: 0,
        min: [0.0; 4],
        max: [0.0; 4],
    };
}

/// Everything of `Params`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamValues {
    /// `vat_positions`.
    pub vat_positions: StreamDecode,
    /// `vat_normals`.
    pub vat_normals: StreamDecode,
    /// `bone_layout` (`LAYOUT_MAT4_COLUMNS` = 0, `LAYOUT_MAT3X4_ROWS` = 1).
    pub bone_layout: u32,
    /// `bone_height`: timeline rows (the bone texture's height unfolded).
    pub bone_height: u32,
    /// `channels`: UV channels per vertex.
    pub channels: u32,
    /// `bone_rows_per_block`: timeline rows per column block of the bone
    /// texture (its height when unfolded).
    pub bone_rows_per_block: u32,
    /// `bone_block_width`: texels per block row (its width when unfolded).
    pub bone_block_width: u32,
    /// `bone_range`: `[min, max]` of a unorm16 qts texture's second texel.
    pub bone_range: [[f32; 4]; 2],
    /// `vat`: `(width, bands, frames, first_vertex, rows_per_block,
    /// blocks_per_page)`; `rows_per_block` 0: unfolded.
    pub vat: [u32; 6],
}

/// The `Params` block.
pub fn params(layouts: &Layouts, v: &ParamValues) -> Vec<u8> {
    let mut b = layouts.block("Params");
    for (name, s) in [
        ("vat_positions", v.vat_positions),
        ("vat_normals", v.vat_normals),
    ] {
        b.u32(&[name, "encoding"], s.encoding)
            .f32s(&[name, "bounds_min"], &s.min)
            .f32s(&[name, "bounds_max"], &s.max);
    }
    b.u32(&["bone_layout"], v.bone_layout)
        .u32(&["bone_height"], v.bone_height)
        .u32(&["channels"], v.channels)
        .u32(&["bone_rows_per_block"], v.bone_rows_per_block)
        .u32(&["bone_block_width"], v.bone_block_width)
        .f32s(&["bone_range", "min"], &v.bone_range[0])
        .f32s(&["bone_range", "max"], &v.bone_range[1])
        .u32(&["vat", "width"], v.vat[0])
        .u32(&["vat", "bands"], v.vat[1])
        .u32(&["vat", "frames"], v.vat[2])
        .u32(&["vat", "first_vertex"], v.vat[3])
        .u32(&["vat", "rows_per_block"], v.vat[4])
        .u32(&["vat", "blocks_per_page"], v.vat[5]);
    b.bytes
}
