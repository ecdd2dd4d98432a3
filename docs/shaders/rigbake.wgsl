// rigbake runtime reference, WGSL.
//
// Both playback paths of a rigbake bake (docs/runtime.md), written to match
// the CPU reference in crates/core/src/runtime (math.rs, bone_path.rs,
// vat_path.rs) operation for operation. It is the one source: the GLSL and
// HLSL in generated/ are what naga writes from it (`just shaders`; see
// README.md); change the CPU reference and this file together.
//
// Textures are data: point-sampled with textureLoad, linear, no mipmaps.
//   Bone-matrix texture: RGBA 32-bit (or 16-bit) float. Joint j, row r:
//     mat4   layout: texels (4j + c, r), c = 0..3, hold the matrix COLUMNS;
//     mat3x4 layout: texels (3j + i, r), i = 0..2, hold the matrix ROWS;
//     qts    layout: texel (2j, r) the rotation quaternion (x, y, z, w),
//                    texel (2j + 1, r) the translation and uniform scale
//                    (tx, ty, tz, s); the matrix is [s R(q / |q|) | t].
//     qts at 16-bit normalised precision (RGBA16 UNORM, `unorm16`): the
//                    same texels, read as raw = sample / 65535:
//                    q = raw * 2 - 1, and (t, s) = min + raw * (max - min)
//                    with the texture's range (BoneRange, from the
//                    container's bone-range record).
//     Folded textures (rows over the maximum size): texel (x, r) is at
//     (b * block_width + x, r mod rows_per_block), b = r div rows_per_block;
//     unfolded, rows_per_block = rows and block_width = width (b = 0).
//   VAT textures: float (EXR) or normalised: 16-bit (PNG16, RGBA16 UNORM),
//     8-bit (RGBA8 UNORM) or 10-bit (RGB10A2 UNORM), all decoded below from
//     what the UNORM fetch returns, whatever the bit depth. With
//     packed normals (format 1.13) there is no normals texture: bind the
//     positions texture as vat_normals too; the normals' encoding
//     ENCODING_PACKED reads its alpha.
//     Vertex v (set vertex s = first_vertex + v) at row r is texel
//     (s mod width, r * bands + s div width) of the only page; folded
//     (frames over the maximum size), row r is in block
//     b = r div rows_per_block on page b div blocks_per_page, at
//     ((b mod blocks_per_page) * width + s mod width,
//      (r mod rows_per_block) * bands + s div width). Pages are the
//     layers of a texture array.
//
// The animation state (4 rows of (blend weight, fraction, frame row,
// reserved) plus an enable flag) comes from the CPU every frame; it never
// asks for a fraction across a clip boundary, so row + 1 (clamped to the
// last row) is always the right next frame.

// ---------------------------------------------------------------- state

struct AnimationState {
    rows: array<vec4<f32>, 4>, // (blend weight, fraction, frame row, reserved)
    enabled: u32,              // 0: draw the mesh as it is
}

// ----------------------------------------------------------------- math

// A 3x4 affine matrix as its three rows (x, y, z, translation).
struct Affine {
    row_x: vec4<f32>,
    row_y: vec4<f32>,
    row_z: vec4<f32>,
}

struct Deformed {
    position: vec3<f32>,
    normal: vec3<f32>,
}

fn affine_zero() -> Affine {
    return Affine(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
}

fn add_weighted(acc: Affine, m: Affine, w: f32) -> Affine {
    return Affine(acc.row_x + m.row_x * w, acc.row_y + m.row_y * w, acc.row_z + m.row_z * w);
}

fn transform_point(m: Affine, p: vec3<f32>) -> vec3<f32> {
    let p4 = vec4<f32>(p, 1.0);
    return vec3<f32>(dot(m.row_x, p4), dot(m.row_y, p4), dot(m.row_z, p4));
}

// Direction of inverse-transpose(upper 3x3) * n: the cofactor matrix (rows
// are cross products of the columns) times the sign of the determinant.
fn cofactor_normal(m: Affine, n: vec3<f32>) -> vec3<f32> {
    let c0 = vec3<f32>(m.row_x.x, m.row_y.x, m.row_z.x);
    let c1 = vec3<f32>(m.row_x.y, m.row_y.y, m.row_z.y);
    let c2 = vec3<f32>(m.row_x.z, m.row_y.z, m.row_z.z);
    let k0 = cross(c1, c2);
    let k1 = cross(c2, c0);
    let k2 = cross(c0, c1);
    let det = dot(c0, k0);
    let s = select(-1.0, 1.0, det >= 0.0);
    return (k0 * n.x + k1 * n.y + k2 * n.z) * s;
}

fn safe_normalize(v: vec3<f32>) -> vec3<f32> {
    let l = length(v);
    return select(v, v / l, l > 0.0);
}

// a + (b - a) * t, written out (mix() rounds differently across languages).
fn lerp_vec3(a: vec3<f32>, b: vec3<f32>, t: f32) -> vec3<f32> {
    return a + (b - a) * t;
}

// ---------------------------------------------------------- root motion

// A clip baked in place (docs/root-motion.md) moves by its root-motion
// track: motion = (x, y, z, yaw), the track lerped at the instance's time on
// the CPU (rigbake_core::runtime::root_motion), applied as T(x, y, z) * Ry(yaw)
// in the bake's scene space, before the instance's world transform. A zero
// motion is the identity.
fn root_motion_apply(motion: vec4<f32>, d: Deformed) -> Deformed {
    let c = cos(motion.w);
    let s = sin(motion.w);
    let p = d.position;
    let n = d.normal;
    let moved = vec3<f32>(c * p.x + s * p.z, p.y, c * p.z - s * p.x) + motion.xyz;
    return Deformed(moved, vec3<f32>(c * n.x + s * n.z, n.y, c * n.z - s * n.x));
}

// ------------------------------------------------------ bone-matrix path

const LAYOUT_MAT4_COLUMNS: u32 = 0u;
const LAYOUT_MAT3X4_ROWS: u32 = 1u;
const LAYOUT_QTS: u32 = 2u;
// qts stored at 16-bit normalised precision: a shader code, not a layout of
// the container (which records the qts layout and the unorm16 precision).
const LAYOUT_QTS_UNORM: u32 = 3u;

// The range of a unorm16 qts texture's second texel (translation, scale);
// any value for the other layouts, which ignore it.
struct BoneRange {
    min: vec4<f32>,
    max: vec4<f32>,
}

@group(0) @binding(0) var bone_texture: texture_2d<f32>;

fn bone_texel(x: u32, y: u32) -> vec4<f32> {
    return textureLoad(bone_texture, vec2<i32>(i32(x), i32(y)), 0);
}

// Texel x of timeline row `row` in its (folded) block; zero past the block.
fn bone_block_texel(x: u32, row: u32, rows_per_block: u32, block_width: u32) -> vec4<f32> {
    if (x >= block_width) {
        return vec4<f32>(0.0);
    }
    let per_block = max(rows_per_block, 1u);
    let b = row / per_block;
    return bone_texel(b * block_width + x, row % per_block);
}

fn bone_matrix(joint: u32, row: u32, matrix_layout: u32, rows_per_block: u32, block_width: u32, bone_range: BoneRange) -> Affine {
    if (matrix_layout == LAYOUT_MAT4_COLUMNS) {
        let x = joint * 4u;
        let c0 = bone_block_texel(x, row, rows_per_block, block_width);
        let c1 = bone_block_texel(x + 1u, row, rows_per_block, block_width);
        let c2 = bone_block_texel(x + 2u, row, rows_per_block, block_width);
        let c3 = bone_block_texel(x + 3u, row, rows_per_block, block_width);
        return Affine(
            vec4<f32>(c0.x, c1.x, c2.x, c3.x),
            vec4<f32>(c0.y, c1.y, c2.y, c3.y),
            vec4<f32>(c0.z, c1.z, c2.z, c3.z),
        );
    }
    if (matrix_layout == LAYOUT_QTS) {
        let x = joint * 2u;
        return qts_matrix(
            bone_block_texel(x, row, rows_per_block, block_width),
            bone_block_texel(x + 1u, row, rows_per_block, block_width),
        );
    }
    if (matrix_layout == LAYOUT_QTS_UNORM) {
        let x = joint * 2u;
        let q = bone_block_texel(x, row, rows_per_block, block_width) * 2.0 - 1.0;
        let raw = bone_block_texel(x + 1u, row, rows_per_block, block_width);
        return qts_matrix(q, bone_range.min + raw * (bone_range.max - bone_range.min));
    }
    let x = joint * 3u;
    return Affine(
        bone_block_texel(x, row, rows_per_block, block_width),
        bone_block_texel(x + 1u, row, rows_per_block, block_width),
        bone_block_texel(x + 2u, row, rows_per_block, block_width),
    );
}

// The matrix [s R | t] of a qts joint: the quaternion normalised first
// (half floats round it off the unit sphere); zero texels (past a folded
// block) give the zero matrix, as with the matrix layouts.
fn qts_matrix(q_in: vec4<f32>, ts: vec4<f32>) -> Affine {
    let d = dot(q_in, q_in);
    var q = vec4<f32>(0.0);
    if (d > 0.0) {
        q = q_in * (1.0 / sqrt(d));
    }
    let x = q.x;
    let y = q.y;
    let z = q.z;
    let w = q.w;
    let s = ts.w;
    return Affine(
        vec4<f32>((1.0 - 2.0 * (y * y + z * z)) * s, 2.0 * (x * y - w * z) * s, 2.0 * (x * z + w * y) * s, ts.x),
        vec4<f32>(2.0 * (x * y + w * z) * s, (1.0 - 2.0 * (x * x + z * z)) * s, 2.0 * (y * z - w * x) * s, ts.y),
        vec4<f32>(2.0 * (x * z - w * y) * s, 2.0 * (y * z + w * x) * s, (1.0 - 2.0 * (x * x + y * y)) * s, ts.z),
    );
}

// Linear blend skinning's matrix from UV1..UV4 = (bone, weight, bone, weight).
fn blend_bones(uv: array<vec4<f32>, 4>, channels: u32, row: u32, matrix_layout: u32, rows_per_block: u32, block_width: u32, bone_range: BoneRange) -> Affine {
    var ch = uv;
    var acc = affine_zero();
    for (var c = 0u; c < channels; c = c + 1u) {
        let pair = ch[c];
        if (pair.y != 0.0) {
            acc = add_weighted(acc, bone_matrix(u32(pair.x), row, matrix_layout, rows_per_block, block_width, bone_range), pair.y);
        }
        if (pair.w != 0.0) {
            acc = add_weighted(acc, bone_matrix(u32(pair.z), row, matrix_layout, rows_per_block, block_width, bone_range), pair.w);
        }
    }
    return acc;
}

fn skin(m: Affine, p: vec3<f32>, n: vec3<f32>) -> Deformed {
    return Deformed(transform_point(m, p), safe_normalize(cofactor_normal(m, n)));
}

// One vertex in its bind pose (p, n) with its channels, through the state.
fn bone_deform(
    state: AnimationState,
    uv: array<vec4<f32>, 4>,
    channels: u32,
    p: vec3<f32>,
    n: vec3<f32>,
    matrix_layout: u32,
    height: u32,
    rows_per_block: u32,
    block_width: u32,
    bone_range: BoneRange,
) -> Deformed {
    if (state.enabled == 0u) {
        return Deformed(p, n);
    }
    var rows = state.rows;
    let last_row = max(height, 1u) - 1u;
    var pos = vec3<f32>(0.0);
    var nrm = vec3<f32>(0.0);
    for (var k = 0u; k < 4u; k = k + 1u) {
        let s = rows[k];
        if (!(s.x > 0.0)) {
            continue;
        }
        let weight = s.x;
        let fraction = s.y;
        let row = u32(s.z);
        let m0 = blend_bones(uv, channels, row, matrix_layout, rows_per_block, block_width, bone_range);
        var d = skin(m0, p, n);
        if (fraction > 0.0) {
            let m1 = blend_bones(uv, channels, min(row + 1u, last_row), matrix_layout, rows_per_block, block_width, bone_range);
            let d1 = skin(m1, p, n);
            d = Deformed(lerp_vec3(d.position, d1.position, fraction), lerp_vec3(d.normal, d1.normal, fraction));
        }
        pos = pos + d.position * weight;
        nrm = nrm + d.normal * weight;
    }
    return Deformed(pos, safe_normalize(nrm));
}

// ------------------------------------------- vertex animation texture path

const ENCODING_FLOAT: u32 = 0u;      // EXR: values as stored
const ENCODING_BOUNDS: u32 = 1u;     // normalised: min + raw * (max - min)
const ENCODING_OCTAHEDRAL: u32 = 2u; // normalised directions: octahedral R, G; sign in A
const ENCODING_PACKED: u32 = 3u;     // PNG16 normals in the positions' A: u = 256 ux + uy, 8-bit octahedral

struct VatStream {
    encoding: u32,
    bounds_min: vec4<f32>,
    bounds_max: vec4<f32>,
}

// One layer per page: an unfolded set has one layer (formats/vat.md).
@group(0) @binding(1) var vat_positions: texture_2d_array<f32>;
@group(0) @binding(2) var vat_normals: texture_2d_array<f32>;

struct VatLayout {
    width: u32,
    bands: u32,
    frames: u32,
    first_vertex: u32,
    rows_per_block: u32,  // folded sets: rows per column block; 0: unfolded
    blocks_per_page: u32, // folded sets: blocks side by side (0 or 1: one)
}

// Texel (x, y, page) of `x` and `band` of timeline row `row`: unfolded,
// row r's bands start at r * bands; folded, row r is in column block
// b = r / rows_per_block, on page b / blocks_per_page.
fn vat_place(x: u32, band: u32, row: u32, vat: VatLayout) -> vec3<u32> {
    if (vat.rows_per_block == 0u) {
        return vec3<u32>(x, row * vat.bands + band, 0u);
    }
    let block = row / vat.rows_per_block;
    let per_page = max(vat.blocks_per_page, 1u);
    return vec3<u32>((block % per_page) * vat.width + x, (row % vat.rows_per_block) * vat.bands + band, block / per_page);
}

fn vat_texel(vertex: u32, row: u32, vat: VatLayout) -> vec3<u32> {
    return vat_place(vertex % vat.width, vertex / vat.width, row, vat);
}

// For meshes whose vertices were reordered (or merged): the texel from the
// playback mesh's lookup UV (format 1.11), which holds the set vertex s as
// (s mod 2048, s div 2048), two integers exact in half floats, so it
// survives importers that store UVs as half floats (Godot 3, Unity).
fn vat_texel_from_uv(uv: vec2<f32>, row: u32, vat: VatLayout) -> vec3<u32> {
    let s = u32(round(uv.x)) + 2048u * u32(round(uv.y));
    return vat_texel(s, row, vat);
}

fn sign_not_zero(a: f32) -> f32 {
    return select(-1.0, 1.0, a >= 0.0);
}

fn octahedral_decode(e: vec2<f32>) -> vec3<f32> {
    var n = vec3<f32>(e.x, e.y, 1.0 - abs(e.x) - abs(e.y));
    if (n.z < 0.0) {
        let x = n.x;
        let y = n.y;
        n.x = (1.0 - abs(y)) * sign_not_zero(x);
        n.y = (1.0 - abs(x)) * sign_not_zero(y);
    }
    return safe_normalize(n);
}

// `raw` is what textureLoad returns: floats for EXR, q / 65535 for unorm16,
// q / 255 for RGBA8 and q / 1023 (alpha a / 3) for RGB10A2 UNORM.
fn vat_decode(raw: vec4<f32>, stream: VatStream) -> vec4<f32> {
    if (stream.encoding == ENCODING_BOUNDS) {
        return stream.bounds_min + raw * (stream.bounds_max - stream.bounds_min);
    }
    if (stream.encoding == ENCODING_OCTAHEDRAL) {
        return vec4<f32>(octahedral_decode(raw.xy * 2.0 - 1.0), raw.w * 2.0 - 1.0);
    }
    if (stream.encoding == ENCODING_PACKED) {
        // The normals "texture" is the positions texture (format 1.13):
        // its alpha's 16 bits are two bytes of octahedral coordinates.
        let code = round(raw.w * 65535.0);
        let ux = floor(code / 256.0);
        let uy = code - ux * 256.0;
        return vec4<f32>(octahedral_decode(vec2<f32>(ux, uy) / 255.0 * 2.0 - 1.0), 1.0);
    }
    return raw;
}

fn vat_position(texel: vec3<u32>, stream: VatStream) -> vec3<f32> {
    let raw = textureLoad(vat_positions, vec2<i32>(texel.xy), i32(texel.z), 0);
    return vat_decode(raw, stream).xyz;
}

fn vat_normal(texel: vec3<u32>, stream: VatStream) -> vec3<f32> {
    let raw = textureLoad(vat_normals, vec2<i32>(texel.xy), i32(texel.z), 0);
    return vat_decode(raw, stream).xyz;
}

// Vertex `vertex` through the state; (p, n) is what the playback mesh holds.
fn vat_deform(
    state: AnimationState,
    vertex: u32,
    p: vec3<f32>,
    n: vec3<f32>,
    vat: VatLayout,
    positions: VatStream,
    normals: VatStream,
) -> Deformed {
    if (state.enabled == 0u) {
        return Deformed(p, n);
    }
    var rows = state.rows;
    let last_row = max(vat.frames, 1u) - 1u;
    var pos = vec3<f32>(0.0);
    var nrm = vec3<f32>(0.0);
    for (var k = 0u; k < 4u; k = k + 1u) {
        let s = rows[k];
        if (!(s.x > 0.0)) {
            continue;
        }
        let weight = s.x;
        let fraction = s.y;
        let row = u32(s.z);
        let next = min(row + 1u, last_row);
        let t0 = vat_texel(vertex + vat.first_vertex, row, vat);
        let t1 = vat_texel(vertex + vat.first_vertex, next, vat);
        var p_row = vat_position(t0, positions);
        var n_row = vat_normal(t0, normals);
        if (fraction > 0.0) {
            p_row = lerp_vec3(p_row, vat_position(t1, positions), fraction);
            n_row = lerp_vec3(n_row, vat_normal(t1, normals), fraction);
        }
        pos = pos + p_row * weight;
        nrm = nrm + n_row * weight;
    }
    return Deformed(pos, safe_normalize(nrm));
}

// ------------------------------------------------------ example entry points

struct Instance {
    state: AnimationState,
    world_view_projection: mat4x4<f32>,
    // (x, y, z, yaw); zero: none.
    root_motion: vec4<f32>,
}

// Uniform layout: structure members start on 16 bytes, as the uniform
// address space requires.
struct Params {
    vat_positions: VatStream,
    vat_normals: VatStream,
    bone_layout: u32,
    bone_height: u32,
    channels: u32,
    bone_rows_per_block: u32,
    bone_block_width: u32,
    bone_range: BoneRange,
    @align(16) vat: VatLayout,
}

@group(1) @binding(0) var<uniform> instance: Instance;
@group(1) @binding(1) var<uniform> params: Params;

struct BoneVertex {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv1: vec4<f32>,
    @location(3) uv2: vec4<f32>,
    @location(4) uv3: vec4<f32>,
    @location(5) uv4: vec4<f32>,
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
}

@vertex
fn bone_vertex(v: BoneVertex) -> VertexOut {
    let uv = array<vec4<f32>, 4>(v.uv1, v.uv2, v.uv3, v.uv4);
    let d = bone_deform(instance.state, uv, params.channels, v.position, v.normal, params.bone_layout, params.bone_height, params.bone_rows_per_block, params.bone_block_width, params.bone_range);
    let m = root_motion_apply(instance.root_motion, d);
    return VertexOut(instance.world_view_projection * vec4<f32>(m.position, 1.0), m.normal);
}

@vertex
fn vat_vertex(
    @builtin(vertex_index) index: u32,
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
) -> VertexOut {
    let d = vat_deform(instance.state, index, position, normal, params.vat, params.vat_positions, params.vat_normals);
    let m = root_motion_apply(instance.root_motion, d);
    return VertexOut(instance.world_view_projection * vec4<f32>(m.position, 1.0), m.normal);
}
