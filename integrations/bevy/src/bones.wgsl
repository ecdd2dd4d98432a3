// bevy_rigbake's vertex stage for the bone-matrix path: Bevy's mesh vertex
// shader with the position and normal skinned by `bone_deform` of
// docs/shaders/rigbake.wgsl (the module `rigbake::runtime`), the weight
// channels read from a storage buffer by vertex (the container's own,
// formats/weights.md).

#import bevy_pbr::forward_io::VertexOutput
#import rigbake::runtime::{BoneRange, bone_deform}
#import bevy_rigbake::instance::{MeshVertex, instance_state, vertex_in_mesh, vertex_output}

struct BoneParams {
    matrix_layout: u32,
    height: u32,
    rows_per_block: u32,
    block_width: u32,
    channels: u32,
    range: BoneRange,
}

@group(#{MATERIAL_BIND_GROUP}) @binding(110) var<uniform> params: BoneParams;
@group(#{MATERIAL_BIND_GROUP}) @binding(112) var<storage, read> weights: array<vec4<f32>>;

@vertex
fn vertex(v: MeshVertex) -> VertexOutput {
    let index = vertex_in_mesh(v);
    let channels = min(params.channels, 4u);
    var uv = array<vec4<f32>, 4>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    let count = arrayLength(&weights);
    for (var c = 0u; c < channels; c = c + 1u) {
        let at = index * channels + c;
        if (at < count) {
            uv[c] = weights[at];
        }
    }
    let d = bone_deform(instance_state(v), uv, channels, v.position, v.normal, params.matrix_layout, params.height, params.rows_per_block, params.block_width, params.range);
    return vertex_output(v, d);
}
