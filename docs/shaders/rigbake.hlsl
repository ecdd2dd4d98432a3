// rigbake runtime reference, HLSL (Shader Model 5 and later).
//
// Line-by-line parallel to rigbake.wgsl (which the test suite parses and
// validates with naga) and to the CPU reference in crates/core/src/runtime.
// CI compiles this file with glslangValidator (both vertex entry points,
// crates/core/tests/shaders.rs) and checks that every shared function takes
// the WGSL's parameters; the bodies are kept in step with the WGSL by hand,
// function for function.
//
// Textures are data: Load() with integer texel coordinates, linear, no mips.
//   Bone-matrix texture: RGBA 32-bit (or 16-bit) float. Joint j, row r:
//     mat4   layout: texels (4j + c, r), c = 0..3, hold the matrix COLUMNS;
//     mat3x4 layout: texels (3j + i, r), i = 0..2, hold the matrix ROWS.
//     Folded textures (rows over the maximum size): texel (x, r) is at
//     (b * block_width + x, r mod rows_per_block), b = r div rows_per_block;
//     unfolded, rows_per_block = rows and block_width = width (b = 0).
//   VAT textures: float (EXR) or R16G16B16A16_UNORM (PNG16, decoded below).
//     Vertex v (set vertex s = first_vertex + v) at row r is texel
//     (s mod width, r * bands + s div width) of the only page; folded
//     (frames over the maximum size), row r is in block
//     b = r div rows_per_block on page b div blocks_per_page, at
//     ((b mod blocks_per_page) * width + s mod width,
//      (r mod rows_per_block) * bands + s div width). Pages are the
//     layers of a texture array.

// ---------------------------------------------------------------- state

struct AnimationState {
    float4 rows[4]; // (blend weight, fraction, frame row, reserved)
    uint enabled;   // 0: draw the mesh as it is
};

// ----------------------------------------------------------------- math

// A 3x4 affine matrix as its three rows (x, y, z, translation).
struct Affine {
    float4 r0;
    float4 r1;
    float4 r2;
};

struct Deformed {
    float3 position;
    float3 normal;
};

Affine affine_zero() {
    Affine m; m.r0 = float4(0, 0, 0, 0); m.r1 = float4(0, 0, 0, 0); m.r2 = float4(0, 0, 0, 0); return m;
}

Affine add_weighted(Affine acc, Affine m, float w) {
    Affine o; o.r0 = acc.r0 + m.r0 * w; o.r1 = acc.r1 + m.r1 * w; o.r2 = acc.r2 + m.r2 * w; return o;
}

float3 transform_point(Affine m, float3 p) {
    float4 p4 = float4(p, 1.0);
    return float3(dot(m.r0, p4), dot(m.r1, p4), dot(m.r2, p4));
}

// Direction of inverse-transpose(upper 3x3) * n: the cofactor matrix (rows
// are cross products of the columns) times the sign of the determinant.
float3 cofactor_normal(Affine m, float3 n) {
    float3 c0 = float3(m.r0.x, m.r1.x, m.r2.x);
    float3 c1 = float3(m.r0.y, m.r1.y, m.r2.y);
    float3 c2 = float3(m.r0.z, m.r1.z, m.r2.z);
    float3 k0 = cross(c1, c2);
    float3 k1 = cross(c2, c0);
    float3 k2 = cross(c0, c1);
    float det = dot(c0, k0);
    float s = det >= 0.0 ? 1.0 : -1.0;
    return (k0 * n.x + k1 * n.y + k2 * n.z) * s;
}

float3 safe_normalize(float3 v) {
    float l = length(v);
    return l > 0.0 ? v / l : v;
}

// a + (b - a) * t, written out (lerp() rounds differently across languages).
float3 lerp3(float3 a, float3 b, float t) {
    return a + (b - a) * t;
}

// ---------------------------------------------------------- root motion

// A clip baked in place (docs/root-motion.md) moves by its root-motion
// track: motion = (x, y, z, yaw), the track lerped at the instance's time on
// the CPU (rigbake_core::runtime::root_motion), applied as T(x, y, z) * Ry(yaw)
// in the bake's scene space, before the instance's world transform. A zero
// motion is the identity.
Deformed root_motion_apply(float4 motion, Deformed d) {
    float c = cos(motion.w);
    float s = sin(motion.w);
    float3 p = d.position;
    float3 n = d.normal;
    Deformed o;
    o.position = float3(c * p.x + s * p.z, p.y, c * p.z - s * p.x) + motion.xyz;
    o.normal = float3(c * n.x + s * n.z, n.y, c * n.z - s * n.x);
    return o;
}

// ------------------------------------------------------ bone-matrix path

static const uint LAYOUT_MAT4 = 0u;
static const uint LAYOUT_MAT3X4 = 1u;

Texture2D<float4> bone_texture : register(t0);

float4 bone_texel(uint x, uint y) {
    return bone_texture.Load(int3(x, y, 0));
}

// Texel x of timeline row `row` in its (folded) block; zero past the block.
float4 bone_block_texel(uint x, uint row, uint rows_per_block, uint block_width) {
    if (x >= block_width) {
        return float4(0.0, 0.0, 0.0, 0.0);
    }
    uint per_block = max(rows_per_block, 1u);
    uint b = row / per_block;
    return bone_texel(b * block_width + x, row % per_block);
}

Affine bone_matrix(uint joint, uint row, uint matrix_layout, uint rows_per_block, uint block_width) {
    Affine m;
    if (matrix_layout == LAYOUT_MAT4) {
        uint x = joint * 4u;
        float4 c0 = bone_block_texel(x, row, rows_per_block, block_width);
        float4 c1 = bone_block_texel(x + 1u, row, rows_per_block, block_width);
        float4 c2 = bone_block_texel(x + 2u, row, rows_per_block, block_width);
        float4 c3 = bone_block_texel(x + 3u, row, rows_per_block, block_width);
        m.r0 = float4(c0.x, c1.x, c2.x, c3.x);
        m.r1 = float4(c0.y, c1.y, c2.y, c3.y);
        m.r2 = float4(c0.z, c1.z, c2.z, c3.z);
        return m;
    }
    uint x = joint * 3u;
    m.r0 = bone_block_texel(x, row, rows_per_block, block_width); m.r1 = bone_block_texel(x + 1u, row, rows_per_block, block_width); m.r2 = bone_block_texel(x + 2u, row, rows_per_block, block_width);
    return m;
}

// Linear blend skinning's matrix from UV1..UV4 = (bone, weight, bone, weight).
Affine blend_bones(float4 uv[4], uint channels, uint row, uint matrix_layout, uint rows_per_block, uint block_width) {
    Affine acc = affine_zero();
    for (uint c = 0u; c < channels; c = c + 1u) {
        float4 pair = uv[c];
        if (pair.y != 0.0) {
            acc = add_weighted(acc, bone_matrix((uint)pair.x, row, matrix_layout, rows_per_block, block_width), pair.y);
        }
        if (pair.w != 0.0) {
            acc = add_weighted(acc, bone_matrix((uint)pair.z, row, matrix_layout, rows_per_block, block_width), pair.w);
        }
    }
    return acc;
}

Deformed skin(Affine m, float3 p, float3 n) {
    Deformed d; d.position = transform_point(m, p); d.normal = safe_normalize(cofactor_normal(m, n)); return d;
}

// One vertex in its bind pose (p, n) with its channels, through the state.
Deformed bone_deform(
    AnimationState state,
    float4 uv[4],
    uint channels,
    float3 p,
    float3 n,
    uint matrix_layout,
    uint height,
    uint rows_per_block,
    uint block_width)
{
    Deformed result; result.position = p; result.normal = n;
    if (state.enabled == 0u) {
        return result;
    }
    uint last_row = max(height, 1u) - 1u;
    float3 pos = float3(0, 0, 0);
    float3 nrm = float3(0, 0, 0);
    for (uint k = 0u; k < 4u; k = k + 1u) {
        float4 s = state.rows[k];
        if (!(s.x > 0.0)) {
            continue;
        }
        float weight = s.x;
        float fraction = s.y;
        uint row = (uint)s.z;
        Affine m0 = blend_bones(uv, channels, row, matrix_layout, rows_per_block, block_width);
        Deformed d = skin(m0, p, n);
        if (fraction > 0.0) {
            Affine m1 = blend_bones(uv, channels, min(row + 1u, last_row), matrix_layout, rows_per_block, block_width);
            Deformed d1 = skin(m1, p, n);
            d.position = lerp3(d.position, d1.position, fraction); d.normal = lerp3(d.normal, d1.normal, fraction);
        }
        pos = pos + d.position * weight;
        nrm = nrm + d.normal * weight;
    }
    result.position = pos; result.normal = safe_normalize(nrm);
    return result;
}

// ------------------------------------------- vertex animation texture path

static const uint ENCODING_FLOAT = 0u;      // EXR: values as stored
static const uint ENCODING_BOUNDS = 1u;     // PNG16: min + q * (max - min)
static const uint ENCODING_OCTAHEDRAL = 2u; // PNG16 directions: octahedral R, G; sign in A

struct VatStream {
    uint encoding;
    float4 bounds_min;
    float4 bounds_max;
};

// One slice per page: an unfolded set has one slice (formats/vat.md).
Texture2DArray<float4> vat_positions : register(t1);
Texture2DArray<float4> vat_normals : register(t2);

struct VatLayout {
    uint width;
    uint bands;
    uint frames;
    uint first_vertex;
    uint rows_per_block;  // folded sets: rows per column block; 0: unfolded
    uint blocks_per_page; // folded sets: blocks side by side (0 or 1: one)
};

// Texel (x, y, page) of `x` and `band` of timeline row `row`: unfolded,
// row r's bands start at r * bands; folded, row r is in column block
// b = r / rows_per_block, on page b / blocks_per_page.
uint3 vat_place(uint x, uint band, uint row, VatLayout vat) {
    if (vat.rows_per_block == 0u) {
        return uint3(x, row * vat.bands + band, 0u);
    }
    uint block = row / vat.rows_per_block;
    uint per_page = max(vat.blocks_per_page, 1u);
    return uint3((block % per_page) * vat.width + x, (row % vat.rows_per_block) * vat.bands + band, block / per_page);
}

uint3 vat_texel(uint vertex, uint row, VatLayout vat) {
    return vat_place(vertex % vat.width, vertex / vat.width, row, vat);
}

// For meshes whose vertices were reordered (or merged): the texel from the
// playback mesh's lookup UV (format 1.11), which holds the set vertex s as
// (s mod 2048, s div 2048), two integers exact in half floats, so it
// survives importers that store UVs as half floats (Godot 3, Unity).
uint3 vat_texel_from_uv(float2 uv, uint row, VatLayout vat) {
    uint s = (uint)round(uv.x) + 2048u * (uint)round(uv.y);
    return vat_texel(s, row, vat);
}

float sign_not_zero(float a) {
    return a >= 0.0 ? 1.0 : -1.0;
}

float3 octahedral_decode(float2 e) {
    float3 n = float3(e.x, e.y, 1.0 - abs(e.x) - abs(e.y));
    if (n.z < 0.0) {
        float x = n.x;
        float y = n.y;
        n.x = (1.0 - abs(y)) * sign_not_zero(x);
        n.y = (1.0 - abs(x)) * sign_not_zero(y);
    }
    return safe_normalize(n);
}

// `raw` is what Load returns: floats for EXR, q / 65535 for UNORM16.
float4 vat_decode(float4 raw, VatStream stream) {
    if (stream.encoding == ENCODING_BOUNDS) {
        return stream.bounds_min + raw * (stream.bounds_max - stream.bounds_min);
    }
    if (stream.encoding == ENCODING_OCTAHEDRAL) {
        return float4(octahedral_decode(raw.xy * 2.0 - 1.0), raw.w * 2.0 - 1.0);
    }
    return raw;
}

float3 vat_position(uint3 texel, VatStream stream) {
    float4 raw = vat_positions.Load(int4(texel, 0));
    return vat_decode(raw, stream).xyz;
}

float3 vat_normal(uint3 texel, VatStream stream) {
    float4 raw = vat_normals.Load(int4(texel, 0));
    return vat_decode(raw, stream).xyz;
}

// Vertex `vertex` through the state; (p, n) is what the playback mesh holds.
Deformed vat_deform(
    AnimationState state,
    uint vertex,
    float3 p,
    float3 n,
    VatLayout vat,
    VatStream positions,
    VatStream normals)
{
    Deformed result; result.position = p; result.normal = n;
    if (state.enabled == 0u) {
        return result;
    }
    uint last_row = max(vat.frames, 1u) - 1u;
    float3 pos = float3(0, 0, 0);
    float3 nrm = float3(0, 0, 0);
    for (uint k = 0u; k < 4u; k = k + 1u) {
        float4 s = state.rows[k];
        if (!(s.x > 0.0)) {
            continue;
        }
        float weight = s.x;
        float fraction = s.y;
        uint row = (uint)s.z;
        uint next = min(row + 1u, last_row);
        uint3 t0 = vat_texel(vertex + vat.first_vertex, row, vat);
        uint3 t1 = vat_texel(vertex + vat.first_vertex, next, vat);
        float3 p_row = vat_position(t0, positions);
        float3 n_row = vat_normal(t0, normals);
        if (fraction > 0.0) {
            p_row = lerp3(p_row, vat_position(t1, positions), fraction);
            n_row = lerp3(n_row, vat_normal(t1, normals), fraction);
        }
        pos = pos + p_row * weight;
        nrm = nrm + n_row * weight;
    }
    result.position = pos; result.normal = safe_normalize(nrm);
    return result;
}

// ------------------------------------------------------ example entry points

cbuffer Instance : register(b0) {
    AnimationState instance_state;
    float4x4 world_view_projection; // column vectors: mul(M, v)
    float4 instance_root_motion; // (x, y, z, yaw); zero: none
};

cbuffer Params : register(b1) {
    VatStream params_vat_positions;
    VatStream params_vat_normals;
    uint params_bone_layout;
    uint params_bone_height;
    uint params_channels;
    uint params_bone_rows_per_block;
    uint params_bone_block_width;
    VatLayout params_vat;
};

struct BoneVertex {
    float3 position : POSITION;
    float3 normal : NORMAL;
    float4 uv1 : TEXCOORD1;
    float4 uv2 : TEXCOORD2;
    float4 uv3 : TEXCOORD3;
    float4 uv4 : TEXCOORD4;
};

struct VertexOut {
    float4 clip : SV_Position;
    float3 normal : NORMAL;
};

VertexOut bone_vertex(BoneVertex v) {
    float4 uv[4] = { v.uv1, v.uv2, v.uv3, v.uv4 };
    Deformed d = bone_deform(instance_state, uv, params_channels, v.position, v.normal, params_bone_layout, params_bone_height, params_bone_rows_per_block, params_bone_block_width);
    d = root_motion_apply(instance_root_motion, d);
    VertexOut o; o.clip = mul(world_view_projection, float4(d.position, 1.0)); o.normal = d.normal; return o;
}

VertexOut vat_vertex(uint index : SV_VertexID, float3 position : POSITION, float3 normal : NORMAL) {
    Deformed d = vat_deform(instance_state, index, position, normal, params_vat, params_vat_positions, params_vat_normals);
    d = root_motion_apply(instance_root_motion, d);
    VertexOut o; o.clip = mul(world_view_projection, float4(d.position, 1.0)); o.normal = d.normal; return o;
}
