#version 450 core
// GLSL 4.50, entry point `bone_vertex`, generated from docs/shaders/rigbake.wgsl by naga 28.0.0
// (`just shaders`, or RIGBAKE_BLESS=1 cargo test --test shaders). Do not
// edit: change rigbake.wgsl and generate again.
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

uniform sampler2D _group_0_binding_0_vs;

layout(std140) uniform Instance_block_0Vertex { Instance _group_1_binding_0_vs; };

layout(std140) uniform Params_block_1Vertex { Params _group_1_binding_1_vs; };

layout(location = 0) in vec3 _p2vs_location0;
layout(location = 1) in vec3 _p2vs_location1;
layout(location = 2) in vec4 _p2vs_location2;
layout(location = 3) in vec4 _p2vs_location3;
layout(location = 4) in vec4 _p2vs_location4;
layout(location = 5) in vec4 _p2vs_location5;
layout(location = 0) smooth out vec3 _vs2fs_location0;

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

vec4 bone_texel(uint x, uint y) {
    vec4 _e7 = texelFetch(_group_0_binding_0_vs, ivec2(int(x), int(y)), 0);
    return _e7;
}

vec4 bone_block_texel(uint x_1, uint row, uint rows_per_block, uint block_width) {
    if ((x_1 >= block_width)) {
        return vec4(0.0);
    }
    uint per_block = max(rows_per_block, 1u);
    uint b_1 = (row / per_block);
    vec4 _e13 = bone_texel(((b_1 * block_width) + x_1), (row % per_block));
    return _e13;
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

Affine bone_matrix(uint joint, uint row_1, uint matrix_layout, uint rows_per_block_1, uint block_width_1, BoneRange bone_range) {
    if ((matrix_layout == LAYOUT_MAT4_COLUMNS)) {
        uint x_4 = (joint * 4u);
        vec4 _e10 = bone_block_texel(x_4, row_1, rows_per_block_1, block_width_1);
        vec4 _e13 = bone_block_texel((x_4 + 1u), row_1, rows_per_block_1, block_width_1);
        vec4 _e16 = bone_block_texel((x_4 + 2u), row_1, rows_per_block_1, block_width_1);
        vec4 _e19 = bone_block_texel((x_4 + 3u), row_1, rows_per_block_1, block_width_1);
        return Affine(vec4(_e10.x, _e13.x, _e16.x, _e19.x), vec4(_e10.y, _e13.y, _e16.y, _e19.y), vec4(_e10.z, _e13.z, _e16.z, _e19.z));
    }
    if ((matrix_layout == LAYOUT_QTS)) {
        uint x_5 = (joint * 2u);
        vec4 _e40 = bone_block_texel(x_5, row_1, rows_per_block_1, block_width_1);
        vec4 _e43 = bone_block_texel((x_5 + 1u), row_1, rows_per_block_1, block_width_1);
        Affine _e44 = qts_matrix(_e40, _e43);
        return _e44;
    }
    if ((matrix_layout == LAYOUT_QTS_UNORM)) {
        uint x_6 = (joint * 2u);
        vec4 _e49 = bone_block_texel(x_6, row_1, rows_per_block_1, block_width_1);
        vec4 q_1 = ((_e49 * 2.0) - vec4(1.0));
        vec4 _e57 = bone_block_texel((x_6 + 1u), row_1, rows_per_block_1, block_width_1);
        Affine _e64 = qts_matrix(q_1, (bone_range.min_ + (_e57 * (bone_range.max_ - bone_range.min_))));
        return _e64;
    }
    uint x_7 = (joint * 3u);
    vec4 _e67 = bone_block_texel(x_7, row_1, rows_per_block_1, block_width_1);
    vec4 _e70 = bone_block_texel((x_7 + 1u), row_1, rows_per_block_1, block_width_1);
    vec4 _e73 = bone_block_texel((x_7 + 2u), row_1, rows_per_block_1, block_width_1);
    return Affine(_e67, _e70, _e73);
}

Affine blend_bones(vec4 uv[4], uint channels, uint row_2, uint matrix_layout_1, uint rows_per_block_2, uint block_width_2, BoneRange bone_range_1) {
    vec4 ch[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
    Affine acc_1 = Affine(vec4(0.0), vec4(0.0), vec4(0.0));
    uint c = 0u;
    ch = uv;
    Affine _e8 = affine_zero();
    acc_1 = _e8;
    bool loop_init = true;
    while(true) {
        if (!loop_init) {
            uint _e35 = c;
            c = (_e35 + 1u);
        }
        loop_init = false;
        uint _e12 = c;
        if ((_e12 < channels)) {
        } else {
            break;
        }
        {
            uint _e14 = c;
            vec4 pair = ch[_e14];
            if ((pair.y != 0.0)) {
                Affine _e20 = acc_1;
                Affine _e23 = bone_matrix(uint(pair.x), row_2, matrix_layout_1, rows_per_block_2, block_width_2, bone_range_1);
                Affine _e25 = add_weighted(_e20, _e23, pair.y);
                acc_1 = _e25;
            }
            if ((pair.w != 0.0)) {
                Affine _e29 = acc_1;
                Affine _e32 = bone_matrix(uint(pair.z), row_2, matrix_layout_1, rows_per_block_2, block_width_2, bone_range_1);
                Affine _e34 = add_weighted(_e29, _e32, pair.w);
                acc_1 = _e34;
            }
        }
    }
    Affine _e38 = acc_1;
    return _e38;
}

Deformed skin(Affine m_3, vec3 p_1, vec3 n_1) {
    vec3 _e3 = transform_point(m_3, p_1);
    vec3 _e4 = cofactor_normal(m_3, n_1);
    vec3 _e5 = safe_normalize(_e4);
    return Deformed(_e3, _e5);
}

Deformed bone_deform(AnimationState state, vec4 uv_1[4], uint channels_1, vec3 p_2, vec3 n_2, uint matrix_layout_2, uint height, uint rows_per_block_3, uint block_width_3, BoneRange bone_range_2) {
    vec4 rows[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
    vec3 pos = vec3(0.0);
    vec3 nrm = vec3(0.0);
    uint k = 0u;
    Deformed d_1 = Deformed(vec3(0.0), vec3(0.0));
    if ((state.enabled == 0u)) {
        return Deformed(p_2, n_2);
    }
    rows = state.rows;
    uint last_row = (max(height, 1u) - 1u);
    bool loop_init_1 = true;
    while(true) {
        if (!loop_init_1) {
            uint _e71 = k;
            k = (_e71 + 1u);
        }
        loop_init_1 = false;
        uint _e28 = k;
        if ((_e28 < 4u)) {
        } else {
            break;
        }
        {
            uint _e31 = k;
            vec4 s_3 = rows[_e31];
            if (!((s_3.x > 0.0))) {
                continue;
            }
            float weight = s_3.x;
            float fraction = s_3.y;
            uint row_6 = uint(s_3.z);
            Affine _e42 = blend_bones(uv_1, channels_1, row_6, matrix_layout_2, rows_per_block_3, block_width_3, bone_range_2);
            Deformed _e43 = skin(_e42, p_2, n_2);
            d_1 = _e43;
            if ((fraction > 0.0)) {
                Affine _e50 = blend_bones(uv_1, channels_1, min((row_6 + 1u), last_row), matrix_layout_2, rows_per_block_3, block_width_3, bone_range_2);
                Deformed _e51 = skin(_e50, p_2, n_2);
                vec3 _e53 = d_1.position;
                vec3 _e55 = lerp_vec3_(_e53, _e51.position, fraction);
                vec3 _e57 = d_1.normal;
                vec3 _e59 = lerp_vec3_(_e57, _e51.normal, fraction);
                d_1 = Deformed(_e55, _e59);
            }
            vec3 _e61 = pos;
            vec3 _e63 = d_1.position;
            pos = (_e61 + (_e63 * weight));
            vec3 _e66 = nrm;
            vec3 _e68 = d_1.normal;
            nrm = (_e66 + (_e68 * weight));
        }
    }
    vec3 _e74 = pos;
    vec3 _e75 = nrm;
    vec3 _e76 = safe_normalize(_e75);
    return Deformed(_e74, _e76);
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
    uint s_4 = (uint(roundEven(uv_2.x)) + (2048u * uint(roundEven(uv_2.y))));
    uvec3 _e12 = vat_texel(s_4, row_5, vat_2);
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
        float x_8 = n_3.x;
        float y_2 = n_3.y;
        float _e24 = sign_not_zero(x_8);
        n_3.x = ((1.0 - abs(y_2)) * _e24);
        float _e30 = sign_not_zero(y_2);
        n_3.y = ((1.0 - abs(x_8)) * _e30);
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

void main() {
    BoneVertex v = BoneVertex(_p2vs_location0, _p2vs_location1, _p2vs_location2, _p2vs_location3, _p2vs_location4, _p2vs_location5);
    vec4 uv_3[4] = vec4[4](v.uv1_, v.uv2_, v.uv3_, v.uv4_);
    AnimationState _e8 = _group_1_binding_0_vs.state;
    uint _e11 = _group_1_binding_1_vs.channels;
    uint _e16 = _group_1_binding_1_vs.bone_layout;
    uint _e19 = _group_1_binding_1_vs.bone_height;
    uint _e22 = _group_1_binding_1_vs.bone_rows_per_block;
    uint _e25 = _group_1_binding_1_vs.bone_block_width;
    BoneRange _e28 = _group_1_binding_1_vs.bone_range;
    Deformed _e29 = bone_deform(_e8, uv_3, _e11, v.position, v.normal, _e16, _e19, _e22, _e25, _e28);
    vec4 _e32 = _group_1_binding_0_vs.root_motion;
    Deformed _e33 = root_motion_apply(_e32, _e29);
    mat4x4 _e36 = _group_1_binding_0_vs.world_view_projection;
    VertexOut _tmp_return = VertexOut((_e36 * vec4(_e33.position, 1.0)), _e33.normal);
    gl_Position = _tmp_return.clip;
    _vs2fs_location0 = _tmp_return.normal;
    gl_Position.yz = vec2(-gl_Position.y, gl_Position.z * 2.0 - gl_Position.w);
    return;
}

