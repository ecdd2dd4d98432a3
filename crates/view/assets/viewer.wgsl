// rigbake view's shaders: the page's bindings and entry points around the
// runtime reference. naga compiles docs/shaders/rigbake.wgsl followed by
// this file into the WebGL2 (GLSL ES 3.00) sources of shaders.js
// (`just shaders`; crates/core/tests/shaders.rs fails when shaders.js is
// not what naga writes). Skinning and the VAT lookup are the reference's
// functions (bone_deform, vat_texel, vat_decode, vat_position, ...); what
// is here is only what the page adds: per-instance attributes, placement,
// the lookup UV of older bakes, 16-bit UNORM textures read through
// unsigned samplers (WebGL2 has no UNORM16 textures without an extension)
// and the shading.

// Per draw (one uniform block, std140, every member 16 bytes or a matrix;
// shaders.js lists the offsets naga gives them, which viewer.js writes).
struct Viewer {
    view_projection: mat4x4<f32>,
    // The space node's rest-pose global matrix (the placement record).
    placement: mat4x4<f32>,
    base_factor: vec4<f32>,   // linear base-colour factor
    position_min: vec4<f32>,  // VAT position bounds (PNG16 encodings)
    position_max: vec4<f32>,
    normal_min: vec4<f32>,
    normal_max: vec4<f32>,
    bones: vec4<u32>,         // matrix layout (0 mat4, 1 mat3x4, 2 qts, 3 qts unorm16), timeline rows, channels, 0
    bone_fold: vec4<u32>,     // rows per column block (the rows when unfolded), block width, 0, 0
    vat: vec4<u32>,           // width, bands, frames, texel rows of a page
    vat_fold: vec4<u32>,      // rows per block (0: unfolded), blocks per page, page width, 0
    // Lookup UV (1 split index, format 1.11; 0 the normalised texel centre
    // of older bakes), unsigned streams (bit 0 positions, bit 1 normals),
    // has a normals texture (1), 0.
    vat_modes: vec4<u32>,
    encodings: vec4<u32>,     // position encoding, normal encoding, 0, 0
    flags: vec4<u32>,         // mesh normals (0: face normals), mask (1: white silhouette), 0, 0
    bone_range_min: vec4<f32>, // unorm16 qts bone textures: the range of texel 2j + 1
    bone_range_max: vec4<f32>,
}

@group(2) @binding(0) var<uniform> viewer: Viewer;

// 16-bit UNORM VAT streams (KTX2 and DDS unorm16), as unsigned integers.
@group(0) @binding(3) var vat_positions_u: texture_2d_array<u32>;
@group(0) @binding(4) var vat_normals_u: texture_2d_array<u32>;

// The material's sRGB base-colour texture (1 x 1 white without one).
@group(3) @binding(0) var base_texture: texture_2d<f32>;
@group(3) @binding(1) var base_sampler: sampler;

// Per instance: (x, z, yaw in radians, scale) and the animation state's four
// rows (blend weight, fraction, frame row, 0), written by state.js.
struct ViewerInstance {
    @location(7) transform: vec4<f32>,
    @location(8) state0: vec4<f32>,
    @location(9) state1: vec4<f32>,
    @location(10) state2: vec4<f32>,
    @location(11) state3: vec4<f32>,
}

struct ViewerOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) world: vec3<f32>,
    @location(2) uv: vec2<f32>,
}

// The instance's state; disabled (the mesh as it is) when no row weighs.
fn viewer_state(i: ViewerInstance) -> AnimationState {
    let rows = array<vec4<f32>, 4>(i.state0, i.state1, i.state2, i.state3);
    let total = max(i.state0.x, 0.0) + max(i.state1.x, 0.0) + max(i.state2.x, 0.0) + max(i.state3.x, 0.0);
    return AnimationState(rows, select(0u, 1u, total > 0.0));
}

// The placement, then the instance's scale, yaw and position on the ground.
// The normal goes through the placement's cofactor matrix (the direction of
// its inverse transpose).
fn viewer_place(d: Deformed, i: ViewerInstance, uv: vec2<f32>) -> ViewerOut {
    let m = viewer.placement;
    let placed = m * vec4<f32>(d.position, 1.0);
    let rows = Affine(
        vec4<f32>(m[0].x, m[1].x, m[2].x, m[3].x),
        vec4<f32>(m[0].y, m[1].y, m[2].y, m[3].y),
        vec4<f32>(m[0].z, m[1].z, m[2].z, m[3].z),
    );
    let n = safe_normalize(cofactor_normal(rows, d.normal));
    let c = cos(i.transform.z);
    let s = sin(i.transform.z);
    let yaw = mat3x3<f32>(vec3<f32>(c, 0.0, -s), vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(s, 0.0, c));
    let world = yaw * (placed.xyz * i.transform.w) + vec3<f32>(i.transform.x, 0.0, i.transform.y);
    return ViewerOut(viewer.view_projection * vec4<f32>(world, 1.0), yaw * n, world, uv);
}

struct ViewerBoneVertex {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) uv1: vec4<f32>,
    @location(4) uv2: vec4<f32>,
    @location(5) uv3: vec4<f32>,
    @location(6) uv4: vec4<f32>,
}

@vertex
fn viewer_bone_vertex(v: ViewerBoneVertex, i: ViewerInstance) -> ViewerOut {
    let uv = array<vec4<f32>, 4>(v.uv1, v.uv2, v.uv3, v.uv4);
    let b = viewer.bones;
    let d = bone_deform(viewer_state(i), uv, b.z, v.position, v.normal, b.x, b.y, viewer.bone_fold.x, viewer.bone_fold.y, BoneRange(viewer.bone_range_min, viewer.bone_range_max));
    return viewer_place(d, i, v.uv);
}

// The set vertex a lookup UV names: the split index (s mod 2048,
// s div 2048) of format 1.11, or (older bakes) the normalised centre of
// the vertex's texel at row 0 of the first page.
fn viewer_set_vertex(uv: vec2<f32>) -> u32 {
    if (viewer.vat_modes.x == 1u) {
        return u32(round(uv.x)) + 2048u * u32(round(uv.y));
    }
    let x = u32(floor(uv.x * f32(viewer.vat_fold.z)));
    let band = u32(floor(uv.y * f32(viewer.vat.w)));
    return x + band * viewer.vat.x;
}

// vat_position and vat_normal, or their 16-bit UNORM twins: the unsigned
// texel divided by 65535 is what a UNORM fetch returns.
fn viewer_vat_position(t: vec3<u32>, stream: VatStream) -> vec3<f32> {
    if ((viewer.vat_modes.y & 1u) != 0u) {
        let q = textureLoad(vat_positions_u, vec2<i32>(t.xy), i32(t.z), 0);
        return vat_decode(vec4<f32>(q) / 65535.0, stream).xyz;
    }
    return vat_position(t, stream);
}

fn viewer_vat_normal(t: vec3<u32>, stream: VatStream) -> vec3<f32> {
    if ((viewer.vat_modes.y & 2u) != 0u) {
        let q = textureLoad(vat_normals_u, vec2<i32>(t.xy), i32(t.z), 0);
        return vat_decode(vec4<f32>(q) / 65535.0, stream).xyz;
    }
    return vat_normal(t, stream);
}

// vat_deform through the fetches above; without a normals texture the
// mesh's normal stands.
fn viewer_vat_deform(state: AnimationState, s: u32, p: vec3<f32>, n: vec3<f32>, vat: VatLayout, positions: VatStream, normals: VatStream) -> Deformed {
    if (state.enabled == 0u) {
        return Deformed(p, n);
    }
    let has_normals = viewer.vat_modes.z == 1u;
    var rows = state.rows;
    let last_row = max(vat.frames, 1u) - 1u;
    var pos = vec3<f32>(0.0);
    var nrm = vec3<f32>(0.0);
    for (var k = 0u; k < 4u; k = k + 1u) {
        let r = rows[k];
        if (!(r.x > 0.0)) {
            continue;
        }
        let row = u32(r.z);
        let t0 = vat_texel(s, row, vat);
        let t1 = vat_texel(s, min(row + 1u, last_row), vat);
        var p_row = viewer_vat_position(t0, positions);
        var n_row = n;
        if (has_normals) {
            n_row = viewer_vat_normal(t0, normals);
        }
        if (r.y > 0.0) {
            p_row = lerp_vec3(p_row, viewer_vat_position(t1, positions), r.y);
            if (has_normals) {
                n_row = lerp_vec3(n_row, viewer_vat_normal(t1, normals), r.y);
            }
        }
        pos = pos + p_row * r.x;
        nrm = nrm + n_row * r.x;
    }
    return Deformed(pos, safe_normalize(nrm));
}

struct ViewerVatVertex {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) lookup: vec2<f32>,
}

@vertex
fn viewer_vat_vertex(v: ViewerVatVertex, i: ViewerInstance) -> ViewerOut {
    let w = viewer.vat;
    let f = viewer.vat_fold;
    let texels = VatLayout(w.x, w.y, w.z, 0u, f.x, f.y);
    let e = viewer.encodings;
    let positions = VatStream(e.x, viewer.position_min, viewer.position_max);
    let normals = VatStream(e.y, viewer.normal_min, viewer.normal_max);
    let d = viewer_vat_deform(viewer_state(i), viewer_set_vertex(v.lookup), v.position, v.normal, texels, positions, normals);
    return viewer_place(d, i, v.uv);
}

@fragment
fn viewer_mesh_fragment(v: ViewerOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    if (viewer.flags.y == 1u) {
        return vec4<f32>(1.0);
    }
    let face = normalize(cross(dpdx(v.world), dpdy(v.world)));
    let albedo = (textureSample(base_texture, base_sampler, v.uv) * viewer.base_factor).xyz;
    let mesh = viewer.flags.x == 1u;
    var n = select(face, normalize(v.normal), mesh);
    if (!front && mesh) {
        n = -n;
    }
    let light = normalize(vec3<f32>(0.4, 0.9, 0.5));
    let lit = 0.35 + 0.65 * max(dot(n, light), 0.0);
    return vec4<f32>(pow(albedo * lit, vec3<f32>(1.0 / 2.2)), 1.0);
}

// The ground grid.
struct Ground {
    view_projection: mat4x4<f32>,
    sizes: vec4<f32>, // extent, cell, 0, 0
}

@group(2) @binding(1) var<uniform> ground: Ground;

struct GroundOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) at: vec2<f32>,
}

@vertex
fn ground_vertex(@location(0) corner: vec2<f32>) -> GroundOut {
    let at = corner * ground.sizes.x;
    return GroundOut(ground.view_projection * vec4<f32>(at.x, 0.0, at.y, 1.0), at);
}

@fragment
fn ground_fragment(v: GroundOut) -> @location(0) vec4<f32> {
    let cells = v.at / ground.sizes.y;
    let g = abs(fract(cells - 0.5) - 0.5) / fwidth(cells);
    let line = 1.0 - min(min(g.x, g.y), 1.0);
    return vec4<f32>(mix(vec3<f32>(0.20, 0.21, 0.24), vec3<f32>(0.36, 0.38, 0.43), line), 1.0);
}
