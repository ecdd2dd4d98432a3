// rigbake runtime reference, GLSL (#version 450; GLSL ES 3.00 needs only
// precision qualifiers and its own uniform declarations).
//
// Line-by-line parallel to rigbake.wgsl (which the test suite parses and
// validates with naga) and to the CPU reference in crates/core/src/runtime.
// CI compiles this file with glslangValidator (both example entry points,
// crates/core/tests/shaders.rs) and checks that every shared function takes
// the WGSL's parameters; the bodies are kept in step with the WGSL by hand,
// function for function. As a library of functions it has no
// main(); the example entry points at the end show the two vertex stages
// (compile one of them with -DBONE_PATH or -DVAT_PATH).
//
// Textures are data: texelFetch with integer texel coordinates, linear, no mips.
//   Bone-matrix texture: RGBA 32-bit (or 16-bit) float. Joint j, row r:
//     mat4   layout: texels (4j + c, r), c = 0..3, hold the matrix COLUMNS;
//     mat3x4 layout: texels (3j + i, r), i = 0..2, hold the matrix ROWS.
//     Folded textures (rows over the maximum size): texel (x, r) is at
//     (b * block_width + x, r mod rows_per_block), b = r div rows_per_block;
//     unfolded, rows_per_block = rows and block_width = width (b = 0).
//   VAT textures: float (EXR) or RGBA16 unorm (PNG16, decoded below).
//     Vertex v (set vertex s = first_vertex + v) at row r is texel
//     (s mod width, r * bands + s div width) of the only page; folded
//     (frames over the maximum size), row r is in block
//     b = r div rows_per_block on page b div blocks_per_page, at
//     ((b mod blocks_per_page) * width + s mod width,
//      (r mod rows_per_block) * bands + s div width). Pages are the
//     layers of a texture array.
#version 450

// ---------------------------------------------------------------- state

struct AnimationState {
    vec4 rows[4]; // (blend weight, fraction, frame row, reserved)
    uint enabled; // 0: draw the mesh as it is
};

// ----------------------------------------------------------------- math

// A 3x4 affine matrix as its three rows (x, y, z, translation).
struct Affine {
    vec4 r0;
    vec4 r1;
    vec4 r2;
};

struct Deformed {
    vec3 position;
    vec3 normal;
};

Affine affine_zero() {
    return Affine(vec4(0.0), vec4(0.0), vec4(0.0));
}

Affine add_weighted(Affine acc, Affine m, float w) {
    return Affine(acc.r0 + m.r0 * w, acc.r1 + m.r1 * w, acc.r2 + m.r2 * w);
}

vec3 transform_point(Affine m, vec3 p) {
    vec4 p4 = vec4(p, 1.0);
    return vec3(dot(m.r0, p4), dot(m.r1, p4), dot(m.r2, p4));
}

// Direction of inverse-transpose(upper 3x3) * n: the cofactor matrix (rows
// are cross products of the columns) times the sign of the determinant.
vec3 cofactor_normal(Affine m, vec3 n) {
    vec3 c0 = vec3(m.r0.x, m.r1.x, m.r2.x);
    vec3 c1 = vec3(m.r0.y, m.r1.y, m.r2.y);
    vec3 c2 = vec3(m.r0.z, m.r1.z, m.r2.z);
    vec3 k0 = cross(c1, c2);
    vec3 k1 = cross(c2, c0);
    vec3 k2 = cross(c0, c1);
    float det = dot(c0, k0);
    float s = det >= 0.0 ? 1.0 : -1.0;
    return (k0 * n.x + k1 * n.y + k2 * n.z) * s;
}

vec3 safe_normalize(vec3 v) {
    float l = length(v);
    return l > 0.0 ? v / l : v;
}

// a + (b - a) * t, written out (mix() rounds differently across languages).
vec3 lerp3(vec3 a, vec3 b, float t) {
    return a + (b - a) * t;
}

// ---------------------------------------------------------- root motion

// A clip baked in place (docs/root-motion.md) moves by its root-motion
// track: motion = (x, y, z, yaw), the track lerped at the instance's time on
// the CPU (rigbake_core::runtime::root_motion), applied as T(x, y, z) * Ry(yaw)
// in the bake's scene space, before the instance's world transform. A zero
// motion is the identity.
Deformed root_motion_apply(vec4 motion, Deformed d) {
    float c = cos(motion.w);
    float s = sin(motion.w);
    vec3 p = d.position;
    vec3 n = d.normal;
    vec3 moved = vec3(c * p.x + s * p.z, p.y, c * p.z - s * p.x) + motion.xyz;
    return Deformed(moved, vec3(c * n.x + s * n.z, n.y, c * n.z - s * n.x));
}

// ------------------------------------------------------ bone-matrix path

const uint LAYOUT_MAT4 = 0u;
const uint LAYOUT_MAT3X4 = 1u;

layout(binding = 0) uniform sampler2D bone_texture;

vec4 bone_texel(uint x, uint y) {
    return texelFetch(bone_texture, ivec2(x, y), 0);
}

// Texel x of timeline row `row` in its (folded) block; zero past the block.
vec4 bone_block_texel(uint x, uint row, uint rows_per_block, uint block_width) {
    if (x >= block_width) {
        return vec4(0.0);
    }
    uint per_block = max(rows_per_block, 1u);
    uint b = row / per_block;
    return bone_texel(b * block_width + x, row % per_block);
}

Affine bone_matrix(uint joint, uint row, uint matrix_layout, uint rows_per_block, uint block_width) {
    if (matrix_layout == LAYOUT_MAT4) {
        uint x = joint * 4u;
        vec4 c0 = bone_block_texel(x, row, rows_per_block, block_width);
        vec4 c1 = bone_block_texel(x + 1u, row, rows_per_block, block_width);
        vec4 c2 = bone_block_texel(x + 2u, row, rows_per_block, block_width);
        vec4 c3 = bone_block_texel(x + 3u, row, rows_per_block, block_width);
        return Affine(
            vec4(c0.x, c1.x, c2.x, c3.x),
            vec4(c0.y, c1.y, c2.y, c3.y),
            vec4(c0.z, c1.z, c2.z, c3.z));
    }
    uint x = joint * 3u;
    return Affine(bone_block_texel(x, row, rows_per_block, block_width), bone_block_texel(x + 1u, row, rows_per_block, block_width), bone_block_texel(x + 2u, row, rows_per_block, block_width));
}

// Linear blend skinning's matrix from UV1..UV4 = (bone, weight, bone, weight).
Affine blend_bones(vec4 uv[4], uint channels, uint row, uint matrix_layout, uint rows_per_block, uint block_width) {
    Affine acc = affine_zero();
    for (uint c = 0u; c < channels; c = c + 1u) {
        vec4 pair = uv[c];
        if (pair.y != 0.0) {
            acc = add_weighted(acc, bone_matrix(uint(pair.x), row, matrix_layout, rows_per_block, block_width), pair.y);
        }
        if (pair.w != 0.0) {
            acc = add_weighted(acc, bone_matrix(uint(pair.z), row, matrix_layout, rows_per_block, block_width), pair.w);
        }
    }
    return acc;
}

Deformed skin(Affine m, vec3 p, vec3 n) {
    return Deformed(transform_point(m, p), safe_normalize(cofactor_normal(m, n)));
}

// One vertex in its bind pose (p, n) with its channels, through the state.
Deformed bone_deform(
    AnimationState state,
    vec4 uv[4],
    uint channels,
    vec3 p,
    vec3 n,
    uint matrix_layout,
    uint height,
    uint rows_per_block,
    uint block_width)
{
    if (state.enabled == 0u) {
        return Deformed(p, n);
    }
    uint last_row = max(height, 1u) - 1u;
    vec3 pos = vec3(0.0);
    vec3 nrm = vec3(0.0);
    for (uint k = 0u; k < 4u; k = k + 1u) {
        vec4 s = state.rows[k];
        if (!(s.x > 0.0)) {
            continue;
        }
        float weight = s.x;
        float fraction = s.y;
        uint row = uint(s.z);
        Affine m0 = blend_bones(uv, channels, row, matrix_layout, rows_per_block, block_width);
        Deformed d = skin(m0, p, n);
        if (fraction > 0.0) {
            Affine m1 = blend_bones(uv, channels, min(row + 1u, last_row), matrix_layout, rows_per_block, block_width);
            Deformed d1 = skin(m1, p, n);
            d = Deformed(lerp3(d.position, d1.position, fraction), lerp3(d.normal, d1.normal, fraction));
        }
        pos = pos + d.position * weight;
        nrm = nrm + d.normal * weight;
    }
    return Deformed(pos, safe_normalize(nrm));
}

// ------------------------------------------- vertex animation texture path

const uint ENCODING_FLOAT = 0u;      // EXR: values as stored
const uint ENCODING_BOUNDS = 1u;     // PNG16: min + q * (max - min)
const uint ENCODING_OCTAHEDRAL = 2u; // PNG16 directions: octahedral R, G; sign in A

struct VatStream {
    uint encoding;
    vec4 bounds_min;
    vec4 bounds_max;
};

// One layer per page: an unfolded set has one layer (formats/vat.md).
layout(binding = 1) uniform sampler2DArray vat_positions;
layout(binding = 2) uniform sampler2DArray vat_normals;

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
uvec3 vat_place(uint x, uint band, uint row, VatLayout vat) {
    if (vat.rows_per_block == 0u) {
        return uvec3(x, row * vat.bands + band, 0u);
    }
    uint block = row / vat.rows_per_block;
    uint per_page = max(vat.blocks_per_page, 1u);
    return uvec3((block % per_page) * vat.width + x, (row % vat.rows_per_block) * vat.bands + band, block / per_page);
}

uvec3 vat_texel(uint vertex, uint row, VatLayout vat) {
    return vat_place(vertex % vat.width, vertex / vat.width, row, vat);
}

// For meshes whose vertices were reordered (or merged): the texel from the
// playback mesh's lookup UV (format 1.11), which holds the set vertex s as
// (s mod 2048, s div 2048), two integers exact in half floats, so it
// survives importers that store UVs as half floats (Godot 3, Unity).
uvec3 vat_texel_from_uv(vec2 uv, uint row, VatLayout vat) {
    uint s = uint(round(uv.x)) + 2048u * uint(round(uv.y));
    return vat_texel(s, row, vat);
}

float sign_not_zero(float a) {
    return a >= 0.0 ? 1.0 : -1.0;
}

vec3 octahedral_decode(vec2 e) {
    vec3 n = vec3(e.x, e.y, 1.0 - abs(e.x) - abs(e.y));
    if (n.z < 0.0) {
        float x = n.x;
        float y = n.y;
        n.x = (1.0 - abs(y)) * sign_not_zero(x);
        n.y = (1.0 - abs(x)) * sign_not_zero(y);
    }
    return safe_normalize(n);
}

// `raw` is what texelFetch returns: floats for EXR, q / 65535 for unorm16.
vec4 vat_decode(vec4 raw, VatStream stream) {
    if (stream.encoding == ENCODING_BOUNDS) {
        return stream.bounds_min + raw * (stream.bounds_max - stream.bounds_min);
    }
    if (stream.encoding == ENCODING_OCTAHEDRAL) {
        return vec4(octahedral_decode(raw.xy * 2.0 - 1.0), raw.w * 2.0 - 1.0);
    }
    return raw;
}

vec3 vat_position(uvec3 texel, VatStream stream) {
    vec4 raw = texelFetch(vat_positions, ivec3(texel), 0);
    return vat_decode(raw, stream).xyz;
}

vec3 vat_normal(uvec3 texel, VatStream stream) {
    vec4 raw = texelFetch(vat_normals, ivec3(texel), 0);
    return vat_decode(raw, stream).xyz;
}

// Vertex `vertex` through the state; (p, n) is what the playback mesh holds.
Deformed vat_deform(
    AnimationState state,
    uint vertex,
    vec3 p,
    vec3 n,
    VatLayout vat,
    VatStream positions,
    VatStream normals)
{
    if (state.enabled == 0u) {
        return Deformed(p, n);
    }
    uint last_row = max(vat.frames, 1u) - 1u;
    vec3 pos = vec3(0.0);
    vec3 nrm = vec3(0.0);
    for (uint k = 0u; k < 4u; k = k + 1u) {
        vec4 s = state.rows[k];
        if (!(s.x > 0.0)) {
            continue;
        }
        float weight = s.x;
        float fraction = s.y;
        uint row = uint(s.z);
        uint next = min(row + 1u, last_row);
        uvec3 t0 = vat_texel(vertex + vat.first_vertex, row, vat);
        uvec3 t1 = vat_texel(vertex + vat.first_vertex, next, vat);
        vec3 p_row = vat_position(t0, positions);
        vec3 n_row = vat_normal(t0, normals);
        if (fraction > 0.0) {
            p_row = lerp3(p_row, vat_position(t1, positions), fraction);
            n_row = lerp3(n_row, vat_normal(t1, normals), fraction);
        }
        pos = pos + p_row * weight;
        nrm = nrm + n_row * weight;
    }
    return Deformed(pos, safe_normalize(nrm));
}

// ------------------------------------------------------ example entry points

layout(std140, binding = 3) uniform Instance {
    AnimationState instance_state;
    mat4 world_view_projection;
    vec4 instance_root_motion; // (x, y, z, yaw); zero: none
};

layout(std140, binding = 4) uniform Params {
    VatStream params_vat_positions;
    VatStream params_vat_normals;
    uint params_bone_layout;
    uint params_bone_height;
    uint params_channels;
    uint params_bone_rows_per_block;
    uint params_bone_block_width;
    VatLayout params_vat;
};

layout(location = 0) out vec3 out_normal;

#ifdef BONE_PATH
layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec4 in_uv1;
layout(location = 3) in vec4 in_uv2;
layout(location = 4) in vec4 in_uv3;
layout(location = 5) in vec4 in_uv4;

void main() {
    vec4 uv[4] = vec4[4](in_uv1, in_uv2, in_uv3, in_uv4);
    Deformed d = bone_deform(instance_state, uv, params_channels, in_position, in_normal, params_bone_layout, params_bone_height, params_bone_rows_per_block, params_bone_block_width);
    d = root_motion_apply(instance_root_motion, d);
    gl_Position = world_view_projection * vec4(d.position, 1.0);
    out_normal = d.normal;
}
#endif

#ifdef VAT_PATH
layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;

void main() {
    Deformed d = vat_deform(instance_state, uint(gl_VertexIndex), in_position, in_normal, params_vat, params_vat_positions, params_vat_normals);
    d = root_motion_apply(instance_root_motion, d);
    gl_Position = world_view_projection * vec4(d.position, 1.0);
    out_normal = d.normal;
}
#endif
