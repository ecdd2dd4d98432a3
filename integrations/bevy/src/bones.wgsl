// bevy_rigbake's vertex stage for the bone-matrix path: Bevy's mesh vertex
// shader with the position and normal skinned by `bone_deform` of
// docs/shaders/rigbake.wgsl (the module `rigbake::runtime`), the weight
// channels read from a storage buffer by vertex (the container's own,
// formats/weights.md), the instance's state by `MeshTag`.

#import bevy_pbr::{
    mesh_bindings::mesh,
    mesh_functions,
    view_transformations::position_world_to_clip,
    forward_io::VertexOutput,
}
#import rigbake::runtime::{AnimationState, BoneRange, bone_deform}

struct BoneParams {
    matrix_layout: u32,
    height: u32,
    rows_per_block: u32,
    block_width: u32,
    channels: u32,
    range: BoneRange,
}

@group(#{MATERIAL_BIND_GROUP}) @binding(110) var<uniform> params: BoneParams;
@group(#{MATERIAL_BIND_GROUP}) @binding(111) var<storage, read> states: array<AnimationState>;
@group(#{MATERIAL_BIND_GROUP}) @binding(112) var<storage, read> weights: array<vec4<f32>>;

struct BoneVertex {
    @builtin(instance_index) instance_index: u32,
    @builtin(vertex_index) index: u32,
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
#ifdef VERTEX_UVS_A
    @location(2) uv: vec2<f32>,
#endif
#ifdef VERTEX_UVS_B
    @location(3) uv_b: vec2<f32>,
#endif
#ifdef VERTEX_COLORS
    @location(5) color: vec4<f32>,
#endif
}

@vertex
fn vertex(v: BoneVertex) -> VertexOutput {
    var out: VertexOutput;
    let slot = min(mesh_functions::get_tag(v.instance_index), arrayLength(&states) - 1u);
    let index = v.index - mesh[v.instance_index].first_vertex_index;
    let channels = min(params.channels, 4u);
    var uv = array<vec4<f32>, 4>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    let count = arrayLength(&weights);
    for (var c = 0u; c < channels; c = c + 1u) {
        let at = index * channels + c;
        if (at < count) {
            uv[c] = weights[at];
        }
    }
    let d = bone_deform(states[slot], uv, channels, v.position, v.normal, params.matrix_layout, params.height, params.rows_per_block, params.block_width, params.range);
    let world_from_local = mesh_functions::get_world_from_local(v.instance_index);
    out.world_normal = mesh_functions::mesh_normal_local_to_world(d.normal, v.instance_index);
    out.world_position = mesh_functions::mesh_position_local_to_world(world_from_local, vec4<f32>(d.position, 1.0));
    out.position = position_world_to_clip(out.world_position.xyz);
#ifdef VERTEX_UVS_A
    out.uv = v.uv;
#endif
#ifdef VERTEX_UVS_B
    out.uv_b = v.uv_b;
#endif
#ifdef VERTEX_COLORS
    out.color = v.color;
#endif
#ifdef VERTEX_OUTPUT_INSTANCE_INDEX
    out.instance_index = v.instance_index;
#endif
    return out;
}
