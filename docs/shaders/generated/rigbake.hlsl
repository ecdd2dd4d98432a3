// HLSL, Shader Model 5.1, both entry points, generated from docs/shaders/rigbake.wgsl by naga 28.0.0
// (`just shaders`, or RIGBAKE_BLESS=1 cargo test --test shaders). Do not
// edit: change rigbake.wgsl and generate again.
struct AnimationState {
    float4 rows[4];
    uint enabled;
    int _end_pad_0;
    int _end_pad_1;
    int _end_pad_2;
};

struct Affine {
    float4 row_x;
    float4 row_y;
    float4 row_z;
};

struct Deformed {
    float3 position;
    int _pad1_0;
    float3 normal;
    int _end_pad_0;
};

struct BoneRange {
    float4 min_;
    float4 max_;
};

struct VatStream {
    uint encoding;
    int _pad1_0;
    int _pad1_1;
    int _pad1_2;
    float4 bounds_min;
    float4 bounds_max;
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
    row_major float4x4 world_view_projection;
    float4 root_motion;
};

struct Params {
    VatStream vat_positions;
    VatStream vat_normals;
    uint bone_layout;
    uint bone_height;
    uint channels;
    uint bone_rows_per_block;
    uint bone_block_width;
    int _pad7_0;
    int _pad7_1;
    int _pad7_2;
    BoneRange bone_range;
    VatLayout vat;
    int _end_pad_0;
    int _end_pad_1;
};

struct BoneVertex {
    float3 position : LOC0;
    float3 normal : LOC1;
    float4 uv1_ : LOC2;
    float4 uv2_ : LOC3;
    float4 uv3_ : LOC4;
    float4 uv4_ : LOC5;
};

struct VertexOut {
    float4 clip_ : SV_Position;
    float3 normal : LOC0;
};

static const uint LAYOUT_MAT4_COLUMNS = 0u;
static const uint LAYOUT_MAT3X4_ROWS = 1u;
static const uint LAYOUT_QTS = 2u;
static const uint LAYOUT_QTS_UNORM = 3u;
static const uint ENCODING_FLOAT = 0u;
static const uint ENCODING_BOUNDS = 1u;
static const uint ENCODING_OCTAHEDRAL = 2u;
static const uint ENCODING_PACKED = 3u;

Texture2D<float4> bone_texture : register(t0);
Texture2DArray<float4> vat_positions : register(t1);
Texture2DArray<float4> vat_normals : register(t2);
cbuffer instance : register(b0, space1) { Instance instance; }
cbuffer params : register(b1, space1) { Params params; }

struct VertexOutput_bone_vertex {
    float3 normal_1 : LOC0;
    float4 clip_ : SV_Position;
};

struct VertexOutput_vat_vertex {
    float3 normal_2 : LOC0;
    float4 clip_1 : SV_Position;
};

Affine ConstructAffine(float4 arg0, float4 arg1, float4 arg2) {
    Affine ret = (Affine)0;
    ret.row_x = arg0;
    ret.row_y = arg1;
    ret.row_z = arg2;
    return ret;
}

Affine affine_zero()
{
    const Affine affine = ConstructAffine((0.0).xxxx, (0.0).xxxx, (0.0).xxxx);
    return affine;
}

Affine add_weighted(Affine acc, Affine m, float w)
{
    const Affine affine_1 = ConstructAffine((acc.row_x + (m.row_x * w)), (acc.row_y + (m.row_y * w)), (acc.row_z + (m.row_z * w)));
    return affine_1;
}

float3 transform_point(Affine m_1, float3 p)
{
    float4 p4_ = float4(p, 1.0);
    return float3(dot(m_1.row_x, p4_), dot(m_1.row_y, p4_), dot(m_1.row_z, p4_));
}

float3 cofactor_normal(Affine m_2, float3 n)
{
    float3 c0_ = float3(m_2.row_x.x, m_2.row_y.x, m_2.row_z.x);
    float3 c1_ = float3(m_2.row_x.y, m_2.row_y.y, m_2.row_z.y);
    float3 c2_ = float3(m_2.row_x.z, m_2.row_y.z, m_2.row_z.z);
    float3 k0_ = cross(c1_, c2_);
    float3 k1_ = cross(c2_, c0_);
    float3 k2_ = cross(c0_, c1_);
    float det = dot(c0_, k0_);
    float s = ((det >= 0.0) ? 1.0 : -1.0);
    return ((((k0_ * n.x) + (k1_ * n.y)) + (k2_ * n.z)) * s);
}

float3 safe_normalize(float3 v_1)
{
    float l = length(v_1);
    return ((l > 0.0) ? (v_1 / (l).xxx) : v_1);
}

float3 lerp_vec3_(float3 a, float3 b, float t)
{
    return (a + ((b - a) * t));
}

Deformed ConstructDeformed(float3 arg0, float3 arg1) {
    Deformed ret = (Deformed)0;
    ret.position = arg0;
    ret.normal = arg1;
    return ret;
}

Deformed root_motion_apply(float4 motion, Deformed d)
{
    float c_1 = cos(motion.w);
    float s_1 = sin(motion.w);
    float3 p_4 = d.position;
    float3 n_5 = d.normal;
    float3 moved = (float3(((c_1 * p_4.x) + (s_1 * p_4.z)), p_4.y, ((c_1 * p_4.z) - (s_1 * p_4.x))) + motion.xyz);
    const Deformed deformed = ConstructDeformed(moved, float3(((c_1 * n_5.x) + (s_1 * n_5.z)), n_5.y, ((c_1 * n_5.z) - (s_1 * n_5.x))));
    return deformed;
}

float4 bone_texel(uint x, uint y)
{
    float4 _e7 = bone_texture.Load(int3(int2(int(x), int(y)), int(0)));
    return _e7;
}

uint naga_div(uint lhs, uint rhs) {
    return lhs / (rhs == 0u ? 1u : rhs);
}

uint naga_mod(uint lhs, uint rhs) {
    return lhs % (rhs == 0u ? 1u : rhs);
}

float4 bone_block_texel(uint x_1, uint row, uint rows_per_block, uint block_width)
{
    if ((x_1 >= block_width)) {
        return (0.0).xxxx;
    }
    uint per_block = max(rows_per_block, 1u);
    uint b_1 = naga_div(row, per_block);
    const float4 _e13 = bone_texel(((b_1 * block_width) + x_1), naga_mod(row, per_block));
    return _e13;
}

Affine qts_matrix(float4 q_in, float4 ts)
{
    float4 q = (0.0).xxxx;

    float d_2 = dot(q_in, q_in);
    if ((d_2 > 0.0)) {
        q = (q_in * (1.0 / sqrt(d_2)));
    }
    float x_3 = q.x;
    float y_1 = q.y;
    float z = q.z;
    float w_1 = q.w;
    float s_2 = ts.w;
    const Affine affine_2 = ConstructAffine(float4(((1.0 - (2.0 * ((y_1 * y_1) + (z * z)))) * s_2), ((2.0 * ((x_3 * y_1) - (w_1 * z))) * s_2), ((2.0 * ((x_3 * z) + (w_1 * y_1))) * s_2), ts.x), float4(((2.0 * ((x_3 * y_1) + (w_1 * z))) * s_2), ((1.0 - (2.0 * ((x_3 * x_3) + (z * z)))) * s_2), ((2.0 * ((y_1 * z) - (w_1 * x_3))) * s_2), ts.y), float4(((2.0 * ((x_3 * z) - (w_1 * y_1))) * s_2), ((2.0 * ((y_1 * z) + (w_1 * x_3))) * s_2), ((1.0 - (2.0 * ((x_3 * x_3) + (y_1 * y_1)))) * s_2), ts.z));
    return affine_2;
}

Affine bone_matrix(uint joint, uint row_1, uint matrix_layout, uint rows_per_block_1, uint block_width_1, BoneRange bone_range)
{
    if ((matrix_layout == LAYOUT_MAT4_COLUMNS)) {
        uint x_4 = (joint * 4u);
        const float4 _e10 = bone_block_texel(x_4, row_1, rows_per_block_1, block_width_1);
        const float4 _e13 = bone_block_texel((x_4 + 1u), row_1, rows_per_block_1, block_width_1);
        const float4 _e16 = bone_block_texel((x_4 + 2u), row_1, rows_per_block_1, block_width_1);
        const float4 _e19 = bone_block_texel((x_4 + 3u), row_1, rows_per_block_1, block_width_1);
        const Affine affine_3 = ConstructAffine(float4(_e10.x, _e13.x, _e16.x, _e19.x), float4(_e10.y, _e13.y, _e16.y, _e19.y), float4(_e10.z, _e13.z, _e16.z, _e19.z));
        return affine_3;
    }
    if ((matrix_layout == LAYOUT_QTS)) {
        uint x_5 = (joint * 2u);
        const float4 _e40 = bone_block_texel(x_5, row_1, rows_per_block_1, block_width_1);
        const float4 _e43 = bone_block_texel((x_5 + 1u), row_1, rows_per_block_1, block_width_1);
        const Affine _e44 = qts_matrix(_e40, _e43);
        const Affine affine_4 = _e44;
        return affine_4;
    }
    if ((matrix_layout == LAYOUT_QTS_UNORM)) {
        uint x_6 = (joint * 2u);
        const float4 _e49 = bone_block_texel(x_6, row_1, rows_per_block_1, block_width_1);
        float4 q_1 = ((_e49 * 2.0) - (1.0).xxxx);
        const float4 _e57 = bone_block_texel((x_6 + 1u), row_1, rows_per_block_1, block_width_1);
        const Affine _e64 = qts_matrix(q_1, (bone_range.min_ + (_e57 * (bone_range.max_ - bone_range.min_))));
        const Affine affine_5 = _e64;
        return affine_5;
    }
    uint x_7 = (joint * 3u);
    const float4 _e67 = bone_block_texel(x_7, row_1, rows_per_block_1, block_width_1);
    const float4 _e70 = bone_block_texel((x_7 + 1u), row_1, rows_per_block_1, block_width_1);
    const float4 _e73 = bone_block_texel((x_7 + 2u), row_1, rows_per_block_1, block_width_1);
    const Affine affine_6 = ConstructAffine(_e67, _e70, _e73);
    return affine_6;
}

uint naga_f2u32(float value) {
    return uint(clamp(value, 0.0, 4294967000.0));
}

Affine blend_bones(float4 uv[4], uint channels, uint row_2, uint matrix_layout_1, uint rows_per_block_2, uint block_width_2, BoneRange bone_range_1)
{
    float4 ch[4] = (float4[4])0;
    Affine acc_1 = (Affine)0;
    uint c = 0u;

    ch = uv;
    const Affine _e8 = affine_zero();
    acc_1 = _e8;
    uint2 loop_bound = uint2(4294967295u, 4294967295u);
    bool loop_init = true;
    while(true) {
        if (all(loop_bound == uint2(0u, 0u))) { break; }
        loop_bound -= uint2(loop_bound.y == 0u, 1u);
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
            float4 pair = ch[min(uint(_e14), 3u)];
            if ((pair.y != 0.0)) {
                Affine _e20 = acc_1;
                const Affine _e23 = bone_matrix(naga_f2u32(pair.x), row_2, matrix_layout_1, rows_per_block_2, block_width_2, bone_range_1);
                const Affine _e25 = add_weighted(_e20, _e23, pair.y);
                acc_1 = _e25;
            }
            if ((pair.w != 0.0)) {
                Affine _e29 = acc_1;
                const Affine _e32 = bone_matrix(naga_f2u32(pair.z), row_2, matrix_layout_1, rows_per_block_2, block_width_2, bone_range_1);
                const Affine _e34 = add_weighted(_e29, _e32, pair.w);
                acc_1 = _e34;
            }
        }
    }
    Affine _e38 = acc_1;
    const Affine affine_7 = _e38;
    return affine_7;
}

Deformed skin(Affine m_3, float3 p_1, float3 n_1)
{
    const float3 _e3 = transform_point(m_3, p_1);
    const float3 _e4 = cofactor_normal(m_3, n_1);
    const float3 _e5 = safe_normalize(_e4);
    const Deformed deformed_1 = ConstructDeformed(_e3, _e5);
    return deformed_1;
}

Deformed bone_deform(AnimationState state, float4 uv_1[4], uint channels_1, float3 p_2, float3 n_2, uint matrix_layout_2, uint height, uint rows_per_block_3, uint block_width_3, BoneRange bone_range_2)
{
    float4 rows[4] = (float4[4])0;
    float3 pos = (0.0).xxx;
    float3 nrm = (0.0).xxx;
    uint k = 0u;
    Deformed d_1 = (Deformed)0;

    if ((state.enabled == 0u)) {
        const Deformed deformed_2 = ConstructDeformed(p_2, n_2);
        return deformed_2;
    }
    rows = state.rows;
    uint last_row = (max(height, 1u) - 1u);
    uint2 loop_bound_1 = uint2(4294967295u, 4294967295u);
    bool loop_init_1 = true;
    while(true) {
        if (all(loop_bound_1 == uint2(0u, 0u))) { break; }
        loop_bound_1 -= uint2(loop_bound_1.y == 0u, 1u);
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
            float4 s_3 = rows[min(uint(_e31), 3u)];
            if (!((s_3.x > 0.0))) {
                continue;
            }
            float weight = s_3.x;
            float fraction = s_3.y;
            uint row_6 = naga_f2u32(s_3.z);
            const Affine _e42 = blend_bones(uv_1, channels_1, row_6, matrix_layout_2, rows_per_block_3, block_width_3, bone_range_2);
            const Deformed _e43 = skin(_e42, p_2, n_2);
            d_1 = _e43;
            if ((fraction > 0.0)) {
                const Affine _e50 = blend_bones(uv_1, channels_1, min((row_6 + 1u), last_row), matrix_layout_2, rows_per_block_3, block_width_3, bone_range_2);
                const Deformed _e51 = skin(_e50, p_2, n_2);
                float3 _e53 = d_1.position;
                const float3 _e55 = lerp_vec3_(_e53, _e51.position, fraction);
                float3 _e57 = d_1.normal;
                const float3 _e59 = lerp_vec3_(_e57, _e51.normal, fraction);
                d_1 = ConstructDeformed(_e55, _e59);
            }
            float3 _e61 = pos;
            float3 _e63 = d_1.position;
            pos = (_e61 + (_e63 * weight));
            float3 _e66 = nrm;
            float3 _e68 = d_1.normal;
            nrm = (_e66 + (_e68 * weight));
        }
    }
    float3 _e74 = pos;
    float3 _e75 = nrm;
    const float3 _e76 = safe_normalize(_e75);
    const Deformed deformed_3 = ConstructDeformed(_e74, _e76);
    return deformed_3;
}

uint3 vat_place(uint x_2, uint band, uint row_3, VatLayout vat)
{
    if ((vat.rows_per_block == 0u)) {
        return uint3(x_2, ((row_3 * vat.bands) + band), 0u);
    }
    uint block = naga_div(row_3, vat.rows_per_block);
    uint per_page = max(vat.blocks_per_page, 1u);
    return uint3(((naga_mod(block, per_page) * vat.width) + x_2), ((naga_mod(row_3, vat.rows_per_block) * vat.bands) + band), naga_div(block, per_page));
}

uint3 vat_texel(uint vertex, uint row_4, VatLayout vat_1)
{
    const uint3 _e7 = vat_place(naga_mod(vertex, vat_1.width), naga_div(vertex, vat_1.width), row_4, vat_1);
    return _e7;
}

uint3 vat_texel_from_uv(float2 uv_2, uint row_5, VatLayout vat_2)
{
    uint s_4 = (naga_f2u32(round(uv_2.x)) + (2048u * naga_f2u32(round(uv_2.y))));
    const uint3 _e12 = vat_texel(s_4, row_5, vat_2);
    return _e12;
}

float sign_not_zero(float a_1)
{
    return ((a_1 >= 0.0) ? 1.0 : -1.0);
}

float3 octahedral_decode(float2 e)
{
    float3 n_3 = (float3)0;

    n_3 = float3(e.x, e.y, ((1.0 - abs(e.x)) - abs(e.y)));
    float _e13 = n_3.z;
    if ((_e13 < 0.0)) {
        float x_8 = n_3.x;
        float y_2 = n_3.y;
        const float _e24 = sign_not_zero(x_8);
        n_3.x = ((1.0 - abs(y_2)) * _e24);
        const float _e30 = sign_not_zero(y_2);
        n_3.y = ((1.0 - abs(x_8)) * _e30);
    }
    float3 _e32 = n_3;
    const float3 _e33 = safe_normalize(_e32);
    return _e33;
}

float4 vat_decode(float4 raw, VatStream stream)
{
    if ((stream.encoding == ENCODING_BOUNDS)) {
        return (stream.bounds_min + (raw * (stream.bounds_max - stream.bounds_min)));
    }
    if ((stream.encoding == ENCODING_OCTAHEDRAL)) {
        const float3 _e20 = octahedral_decode(((raw.xy * 2.0) - (1.0).xx));
        return float4(_e20, ((raw.w * 2.0) - 1.0));
    }
    if ((stream.encoding == ENCODING_PACKED)) {
        float code = round((raw.w * 65535.0));
        float ux = floor((code / 256.0));
        float uy = (code - (ux * 256.0));
        const float3 _e49 = octahedral_decode((((float2(ux, uy) / (255.0).xx) * 2.0) - (1.0).xx));
        return float4(_e49, 1.0);
    }
    return raw;
}

float3 vat_position(uint3 texel, VatStream stream_1)
{
    float4 raw_1 = vat_positions.Load(int4(int2(texel.xy), int(texel.z), int(0)));
    const float4 _e9 = vat_decode(raw_1, stream_1);
    return _e9.xyz;
}

float3 vat_normal(uint3 texel_1, VatStream stream_2)
{
    float4 raw_2 = vat_normals.Load(int4(int2(texel_1.xy), int(texel_1.z), int(0)));
    const float4 _e9 = vat_decode(raw_2, stream_2);
    return _e9.xyz;
}

Deformed vat_deform(AnimationState state_1, uint vertex_1, float3 p_3, float3 n_4, VatLayout vat_3, VatStream positions, VatStream normals)
{
    float4 rows_1[4] = (float4[4])0;
    float3 pos_1 = (0.0).xxx;
    float3 nrm_1 = (0.0).xxx;
    uint k_1 = 0u;
    float3 p_row = (float3)0;
    float3 n_row = (float3)0;

    if ((state_1.enabled == 0u)) {
        const Deformed deformed_4 = ConstructDeformed(p_3, n_4);
        return deformed_4;
    }
    rows_1 = state_1.rows;
    uint last_row_1 = (max(vat_3.frames, 1u) - 1u);
    uint2 loop_bound_2 = uint2(4294967295u, 4294967295u);
    bool loop_init_2 = true;
    while(true) {
        if (all(loop_bound_2 == uint2(0u, 0u))) { break; }
        loop_bound_2 -= uint2(loop_bound_2.y == 0u, 1u);
        if (!loop_init_2) {
            uint _e69 = k_1;
            k_1 = (_e69 + 1u);
        }
        loop_init_2 = false;
        uint _e26 = k_1;
        if ((_e26 < 4u)) {
        } else {
            break;
        }
        {
            uint _e29 = k_1;
            float4 s_5 = rows_1[min(uint(_e29), 3u)];
            if (!((s_5.x > 0.0))) {
                continue;
            }
            float weight_1 = s_5.x;
            float fraction_1 = s_5.y;
            uint row_7 = naga_f2u32(s_5.z);
            uint next = min((row_7 + 1u), last_row_1);
            const uint3 _e45 = vat_texel((vertex_1 + vat_3.first_vertex), row_7, vat_3);
            const uint3 _e48 = vat_texel((vertex_1 + vat_3.first_vertex), next, vat_3);
            const float3 _e49 = vat_position(_e45, positions);
            p_row = _e49;
            const float3 _e51 = vat_normal(_e45, normals);
            n_row = _e51;
            if ((fraction_1 > 0.0)) {
                float3 _e55 = p_row;
                const float3 _e56 = vat_position(_e48, positions);
                const float3 _e57 = lerp_vec3_(_e55, _e56, fraction_1);
                p_row = _e57;
                float3 _e58 = n_row;
                const float3 _e59 = vat_normal(_e48, normals);
                const float3 _e60 = lerp_vec3_(_e58, _e59, fraction_1);
                n_row = _e60;
            }
            float3 _e61 = pos_1;
            float3 _e62 = p_row;
            pos_1 = (_e61 + (_e62 * weight_1));
            float3 _e65 = nrm_1;
            float3 _e66 = n_row;
            nrm_1 = (_e65 + (_e66 * weight_1));
        }
    }
    float3 _e72 = pos_1;
    float3 _e73 = nrm_1;
    const float3 _e74 = safe_normalize(_e73);
    const Deformed deformed_5 = ConstructDeformed(_e72, _e74);
    return deformed_5;
}

typedef float4 ret_Constructarray4_float4_[4];
ret_Constructarray4_float4_ Constructarray4_float4_(float4 arg0, float4 arg1, float4 arg2, float4 arg3) {
    float4 ret[4] = { arg0, arg1, arg2, arg3 };
    return ret;
}

VertexOut ConstructVertexOut(float4 arg0, float3 arg1) {
    VertexOut ret = (VertexOut)0;
    ret.clip_ = arg0;
    ret.normal = arg1;
    return ret;
}

VertexOutput_bone_vertex bone_vertex(BoneVertex v)
{
    float4 uv_3[4] = Constructarray4_float4_(v.uv1_, v.uv2_, v.uv3_, v.uv4_);
    AnimationState _e8 = instance.state;
    uint _e11 = params.channels;
    uint _e16 = params.bone_layout;
    uint _e19 = params.bone_height;
    uint _e22 = params.bone_rows_per_block;
    uint _e25 = params.bone_block_width;
    BoneRange _e28 = params.bone_range;
    const Deformed _e29 = bone_deform(_e8, uv_3, _e11, v.position, v.normal, _e16, _e19, _e22, _e25, _e28);
    float4 _e32 = instance.root_motion;
    const Deformed _e33 = root_motion_apply(_e32, _e29);
    float4x4 _e36 = instance.world_view_projection;
    const VertexOut vertexout = ConstructVertexOut(mul(float4(_e33.position, 1.0), _e36), _e33.normal);
    const VertexOutput_bone_vertex vertexout_1 = { vertexout.normal, vertexout.clip_ };
    return vertexout_1;
}

VertexOutput_vat_vertex vat_vertex(uint index : SV_VertexID, float3 position : LOC0, float3 normal : LOC1)
{
    AnimationState _e5 = instance.state;
    VatLayout _e8 = params.vat;
    VatStream _e11 = params.vat_positions;
    VatStream _e14 = params.vat_normals;
    const Deformed _e15 = vat_deform(_e5, index, position, normal, _e8, _e11, _e14);
    float4 _e18 = instance.root_motion;
    const Deformed _e19 = root_motion_apply(_e18, _e15);
    float4x4 _e22 = instance.world_view_projection;
    const VertexOut vertexout_2 = ConstructVertexOut(mul(float4(_e19.position, 1.0), _e22), _e19.normal);
    const VertexOutput_vat_vertex vertexout_2_ = { vertexout_2.normal, vertexout_2.clip_ };
    return vertexout_2_;
}
