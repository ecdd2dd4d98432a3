// What both vertex stages of bevy_rigbake share: the instance's animation
// state (one storage buffer per bake, read by the entity's `MeshTag`), the
// vertex as Bevy's mesh pipeline lays it out, and the rest of Bevy's mesh
// vertex shader (bevy_pbr's mesh.wgsl) after the deformation.

#define_import_path bevy_rigbake::instance

#import bevy_pbr::{
    mesh_bindings::mesh,
    mesh_functions,
    view_transformations::position_world_to_clip,
    forward_io::VertexOutput,
}
#import rigbake::runtime::{AnimationState, Deformed}

@group(#{MATERIAL_BIND_GROUP}) @binding(111) var<storage, read> states: array<AnimationState>;

struct MeshVertex {
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

// The state of the instance drawing `v` (the plugin keeps tags within the
// buffer; the clamp guards a frame where they are not yet).
fn instance_state(v: MeshVertex) -> AnimationState {
    let slot = min(mesh_functions::get_tag(v.instance_index), arrayLength(&states) - 1u);
    return states[slot];
}

// The vertex's index in its own mesh: Bevy packs meshes into shared
// buffers, so `vertex_index` counts from the mesh's first vertex.
fn vertex_in_mesh(v: MeshVertex) -> u32 {
    return v.index - mesh[v.instance_index].first_vertex_index;
}

// Bevy's mesh vertex output for `v` deformed to `d`.
fn vertex_output(v: MeshVertex, d: Deformed) -> VertexOutput {
    var out: VertexOutput;
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
