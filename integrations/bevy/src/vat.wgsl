// bevy_rigbake's vertex stage for the vertex-animation path: Bevy's own
// mesh vertex shader (bevy_pbr's mesh.wgsl) with the position and normal
// taken through `vat_deform` of docs/shaders/rigbake.wgsl (imported as the
// module `rigbake::runtime`, not copied), the instance's animation state
// read from a storage buffer by the entity's `MeshTag`. StandardMaterial's
// fragment stage shades the result.

#import bevy_pbr::{
    mesh_bindings::mesh,
    mesh_functions,
    view_transformations::position_world_to_clip,
    forward_io::VertexOutput,
}
#import rigbake::runtime::{AnimationState, VatLayout, VatStream, vat_deform}

struct VatParams {
    positions: VatStream,
    normals: VatStream,
    addressing: VatLayout,
}

@group(#{MATERIAL_BIND_GROUP}) @binding(110) var<uniform> params: VatParams;
@group(#{MATERIAL_BIND_GROUP}) @binding(111) var<storage, read> states: array<AnimationState>;

struct VatVertex {
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
fn vertex(v: VatVertex) -> VertexOutput {
    var out: VertexOutput;
    // The entity's slot in `states` (the plugin keeps tags within it).
    let slot = min(mesh_functions::get_tag(v.instance_index), arrayLength(&states) - 1u);
    // The vertex's index in its own mesh: Bevy packs meshes into shared
    // buffers, so `vertex_index` counts from the mesh's first vertex.
    let index = v.index - mesh[v.instance_index].first_vertex_index;
    let d = vat_deform(states[slot], index, v.position, v.normal, params.addressing, params.positions, params.normals);
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
