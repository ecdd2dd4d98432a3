#version 300 es
// GLSL ES 3.00 (WebGL2), entry point `vat_vertex`, generated from docs/shaders/rigbake.wgsl by naga 28.0.0
// (`just shaders`, or RIGBAKE_BLESS=1 cargo test --test shaders). Do not
// edit: change rigbake.wgsl and generate again.

precision highp float;
precision highp int;

struct AnimationState {
    vec4 rows[4];
    uint enabled;
};
struct Affine {
    vec4 row_x;
    vec4 row_y;
    vec4 row_z;
};
struct Deformed {
    vec3 position;
    vec3 normal;
};
struct BoneRange {
    vec4 min_;
    vec4 max_;
};
struct VatStream {
    uint encoding;
    vec4 bounds_min;
    vec4 bounds_max;
};
struct VatLayout {
    uint width;
    uint bands;
    uint frames;
    uint first_vertex;
    uint rows_per_block;
    uint blocks_per_page;
};
struct Instance {
    AnimationState state;
    mat4x4 world_view_projection;
    vec4 root_motion;
};
struct Params {
    VatStream vat_positions;
    VatStream vat_normals;
    uint bone_layout;
    uint bone_height;
    uint channels;
    uint bone_rows_per_block;
    uint bone_block_width;
    BoneRange bone_range;
    VatLayout vat;
};
struct BoneVertex {
    vec3 position;
    vec3 normal;
    vec4 uv1_;
    vec4 uv2_;
    vec4 uv3_;
    vec4 uv4_;
};
struct VertexOut {
    vec4 clip;
    vec3 normal;
};
const uint LAYOUT_MAT4_COLUMNS = 0u;
const uint LAYOUT_MAT3X4_ROWS = 1u;
const uint LAYOUT_QTS = 2u;
const uint LAYOUT_QTS_UNORM = 3u;
const uint ENCODING_FLOAT = 0u;
const uint ENCODING_BOUNDS = 1u;
const uint ENCODING_OCTAHEDRAL = 2u;
const uint ENCODING_PACKED = 3u;

uniform highp sampler2DArray _group_0_binding_1_vs;

uniform highp sampler2DArray _group_0_binding_2_vs;

layout(std140) uniform Instance_block_0Vertex { Instance _group_1_binding_0_vs; };

layout(std140) uniform Params_block_1Vertex { Params _group_1_binding_1_vs; };

layout(location = 0) in vec3 _p2vs_location0;
layout(location = 1) in vec3 _p2vs_location1;
smooth out vec3 _vs2fs_location0;

Affine affine_zero() {
    return Affine(vec4(0.0), vec4(0.0), vec4(0.0));
}

Affine add_weighted(Affine acc, Affine m, float w) {
    return Affine((acc.row_x + (m.row_x * w)), (acc.row_y + (m.row_y * w)), (acc.row_z + (m.row_z * w)));
}

vec3 transform_point(Affine m_1, vec3 p) {
    vec4 p4_ = vec4(p, 1.0);
    return vec3(dot(m_1.row_x, p4_), dot(m_1.row_y, p4_), dot(m_1.row_z, p4_));
}

vec3 cofactor_normal(Affine m_2, vec3 n) {
    vec3 c0_ = vec3(m_2.row_x.x, m_2.row_y.x, m_2.row_z.x);
    vec3 c1_ = vec3(m_2.row_x.y, m_2.row_y.y, m_2.row_z.y);
    vec3 c2_ = vec3(m_2.row_x.z, m_2.row_y.z, m_2.row_z.z);
    vec3 k0_ = cross(c1_, c2_);
    vec3 k1_ = cross(c2_, c0_);
    vec3 k2_ = cross(c0_, c1_);
    float det = dot(c0_, k0_);
    float s = ((det >= 0.0) ? 1.0 : -1.0);
    return ((((k0_ * n.x) + (k1_ * n.y)) + (k2_ * n.z)) * s);
}

vec3 safe_normalize(vec3 v_1) {
    float l = length(v_1);
    return ((l > 0.0) ? (v_1 / vec3(l)) : v_1);
}

vec3 lerp_vec3_(vec3 a, vec3 b, float t) {
    return (a + ((b - a) * t));
}

Deformed root_motion_apply(vec4 motion, Deformed d) {
    float c_1 = cos(motion.w);
    float s_1 = sin(motion.w);
    vec3 p_4 = d.position;
    vec3 n_5 = d.normal;
    vec3 moved = (vec3(((c_1 * p_4.x) + (s_1 * p_4.z)), p_4.y, ((c_1 * p_4.z) - (s_1 * p_4.x))) + motion.xyz);
    return Deformed(moved, vec3(((c_1 * n_5.x) + (s_1 * n_5.z)), n_5.y, ((c_1 * n_5.z) - (s_1 * n_5.x))));
}

Affine qts_matrix(vec4 q_in, vec4 ts) {
    vec4 q = vec4(0.0);
    float d_2 = dot(q_in, q_in);
    if ((d_2 > 0.0)) {
        q = (q_in * (1.0 / sqrt(d_2)));
    }
    float x_3 = q.x;
    float y_1 = q.y;
    float z = q.z;
    float w_1 = q.w;
    float s_2 = ts.w;
    return Affine(vec4(((1.0 - (2.0 * ((y_1 * y_1) + (z * z)))) * s_2), ((2.0 * ((x_3 * y_1) - (w_1 * z))) * s_2), ((2.0 * ((x_3 * z) + (w_1 * y_1))) * s_2), ts.x), vec4(((2.0 * ((x_3 * y_1) + (w_1 * z))) * s_2), ((1.0 - (2.0 * ((x_3 * x_3) + (z * z)))) * s_2), ((2.0 * ((y_1 * z) - (w_1 * x_3))) * s_2), ts.y), vec4(((2.0 * ((x_3 * z) - (w_1 * y_1))) * s_2), ((2.0 * ((y_1 * z) + (w_1 * x_3))) * s_2), ((1.0 - (2.0 * ((x_3 * x_3) + (y_1 * y_1)))) * s_2), ts.z));
}

Deformed skin(Affine m_3, vec3 p_1, vec3 n_1) {
    vec3 _e3 = transform_point(m_3, p_1);
    vec3 _e4 = cofactor_normal(m_3, n_1);
    vec3 _e5 = safe_normalize(_e4);
    return Deformed(_e3, _e5);
}

uvec3 vat_place(uint x_2, uint band, uint row_3, VatLayout vat) {
    if ((vat.rows_per_block == 0u)) {
        return uvec3(x_2, ((row_3 * vat.bands) + band), 0u);
    }
    uint block = (row_3 / vat.rows_per_block);
    uint per_page = max(vat.blocks_per_page, 1u);
    return uvec3((((block % per_page) * vat.width) + x_2), (((row_3 % vat.rows_per_block) * vat.bands) + band), (block / per_page));
}

uvec3 vat_texel(uint vertex, uint row_4, VatLayout vat_1) {
    uvec3 _e7 = vat_place((vertex % vat_1.width), (vertex / vat_1.width), row_4, vat_1);
    return _e7;
}

uvec3 vat_texel_from_uv(vec2 uv_2, uint row_5, VatLayout vat_2) {
    uint s_3 = (uint(roundEven(uv_2.x)) + (2048u * uint(roundEven(uv_2.y))));
    uvec3 _e12 = vat_texel(s_3, row_5, vat_2);
    return _e12;
}

float sign_not_zero(float a_1) {
    return ((a_1 >= 0.0) ? 1.0 : -1.0);
}

vec3 octahedral_decode(vec2 e) {
    vec3 n_3 = vec3(0.0);
    n_3 = vec3(e.x, e.y, ((1.0 - abs(e.x)) - abs(e.y)));
    float _e13 = n_3.z;
    if ((_e13 < 0.0)) {
        float x_4 = n_3.x;
        float y_2 = n_3.y;
        float _e24 = sign_not_zero(x_4);
        n_3.x = ((1.0 - abs(y_2)) * _e24);
        float _e30 = sign_not_zero(y_2);
        n_3.y = ((1.0 - abs(x_4)) * _e30);
    }
    vec3 _e32 = n_3;
    vec3 _e33 = safe_normalize(_e32);
    return _e33;
}

vec4 vat_decode(vec4 raw, VatStream stream) {
    if ((stream.encoding == ENCODING_BOUNDS)) {
        return (stream.bounds_min + (raw * (stream.bounds_max - stream.bounds_min)));
    }
    if ((stream.encoding == ENCODING_OCTAHEDRAL)) {
        vec3 _e20 = octahedral_decode(((raw.xy * 2.0) - vec2(1.0)));
        return vec4(_e20, ((raw.w * 2.0) - 1.0));
    }
    if ((stream.encoding == ENCODING_PACKED)) {
        float code = roundEven((raw.w * 65535.0));
        float ux = floor((code / 256.0));
        float uy = (code - (ux * 256.0));
        vec3 _e49 = octahedral_decode((((vec2(ux, uy) / vec2(255.0)) * 2.0) - vec2(1.0)));
        return vec4(_e49, 1.0);
    }
    return raw;
}

vec3 vat_position(uvec3 texel, VatStream stream_1) {
    vec4 raw_1 = texelFetch(_group_0_binding_1_vs, ivec3(ivec2(texel.xy), int(texel.z)), 0);
    vec4 _e9 = vat_decode(raw_1, stream_1);
    return _e9.xyz;
}

vec3 vat_normal(uvec3 texel_1, VatStream stream_2) {
    vec4 raw_2 = texelFetch(_group_0_binding_2_vs, ivec3(ivec2(texel_1.xy), int(texel_1.z)), 0);
    vec4 _e9 = vat_decode(raw_2, stream_2);
    return _e9.xyz;
}

Deformed vat_deform(AnimationState state_1, uint vertex_1, vec3 p_3, vec3 n_4, VatLayout vat_3, VatStream positions, VatStream normals) {
    vec4 rows_1[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
    vec3 pos_1 = vec3(0.0);
    vec3 nrm_1 = vec3(0.0);
    uint k_1 = 0u;
    vec3 p_row = vec3(0.0);
    vec3 n_row = vec3(0.0);
    if ((state_1.enabled == 0u)) {
        return Deformed(p_3, n_4);
    }
    rows_1 = state_1.rows;
    uint last_row = (max(vat_3.frames, 1u) - 1u);
    bool loop_init = true;
    while(true) {
        if (!loop_init) {
            uint _e69 = k_1;
            k_1 = (_e69 + 1u);
        }
        loop_init = false;
        uint _e26 = k_1;
        if ((_e26 < 4u)) {
        } else {
            break;
        }
        {
            uint _e29 = k_1;
            vec4 s_4 = rows_1[_e29];
            if (!((s_4.x > 0.0))) {
                continue;
            }
            float weight = s_4.x;
            float fraction = s_4.y;
            uint row_6 = uint(s_4.z);
            uint next = min((row_6 + 1u), last_row);
            uvec3 _e45 = vat_texel((vertex_1 + vat_3.first_vertex), row_6, vat_3);
            uvec3 _e48 = vat_texel((vertex_1 + vat_3.first_vertex), next, vat_3);
            vec3 _e49 = vat_position(_e45, positions);
            p_row = _e49;
            vec3 _e51 = vat_normal(_e45, normals);
            n_row = _e51;
            if ((fraction > 0.0)) {
                vec3 _e55 = p_row;
                vec3 _e56 = vat_position(_e48, positions);
                vec3 _e57 = lerp_vec3_(_e55, _e56, fraction);
                p_row = _e57;
                vec3 _e58 = n_row;
                vec3 _e59 = vat_normal(_e48, normals);
                vec3 _e60 = lerp_vec3_(_e58, _e59, fraction);
                n_row = _e60;
            }
            vec3 _e61 = pos_1;
            vec3 _e62 = p_row;
            pos_1 = (_e61 + (_e62 * weight));
            vec3 _e65 = nrm_1;
            vec3 _e66 = n_row;
            nrm_1 = (_e65 + (_e66 * weight));
        }
    }
    vec3 _e72 = pos_1;
    vec3 _e73 = nrm_1;
    vec3 _e74 = safe_normalize(_e73);
    return Deformed(_e72, _e74);
}

void main() {
    uint index = uint(gl_VertexID);
    vec3 position = _p2vs_location0;
    vec3 normal = _p2vs_location1;
    AnimationState _e5 = _group_1_binding_0_vs.state;
    VatLayout _e8 = _group_1_binding_1_vs.vat;
    VatStream _e11 = _group_1_binding_1_vs.vat_positions;
    VatStream _e14 = _group_1_binding_1_vs.vat_normals;
    Deformed _e15 = vat_deform(_e5, index, position, normal, _e8, _e11, _e14);
    vec4 _e18 = _group_1_binding_0_vs.root_motion;
    Deformed _e19 = root_motion_apply(_e18, _e15);
    mat4x4 _e22 = _group_1_binding_0_vs.world_view_projection;
    VertexOut _tmp_return = VertexOut((_e22 * vec4(_e19.position, 1.0)), _e19.normal);
    gl_Position = _tmp_return.clip;
    _vs2fs_location0 = _tmp_return.normal;
    gl_Position.yz = vec2(-gl_Position.y, gl_Position.z * 2.0 - gl_Position.w);
    return;
}

