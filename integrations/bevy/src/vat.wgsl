// bevy_rigbake's vertex stage for the vertex-animation path: Bevy's own
// mesh vertex shader with the position and normal taken through
// `vat_deform` of docs/shaders/rigbake.wgsl (imported as the module
// `rigbake::runtime`, not copied). StandardMaterial's fragment stage shades
// the result.

#import bevy_pbr::forward_io::VertexOutput
#import rigbake::runtime::{VatLayout, VatStream, vat_deform}
#import bevy_rigbake::instance::{MeshVertex, instance_state, vertex_in_mesh, vertex_output}

struct VatParams {
    positions: VatStream,
    normals: VatStream,
    addressing: VatLayout,
}

@group(#{MATERIAL_BIND_GROUP}) @binding(110) var<uniform> params: VatParams;

@vertex
fn vertex(v: MeshVertex) -> VertexOutput {
    let d = vat_deform(instance_state(v), vertex_in_mesh(v), v.position, v.normal, params.addressing, params.positions, params.normals);
    return vertex_output(v, d);
}
