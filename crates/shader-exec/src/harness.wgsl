
// ------------------------------------------------ shader-exec test harness
//
// Appended by crates/shader-exec to docs/shaders/rigbake.wgsl as shipped.
// WebGPU forbids storage writes from vertex shaders, so these two compute
// entry points stand in for `bone_vertex` and `vat_vertex`: they read the
// same per-vertex inputs (here from storage buffers instead of vertex
// attributes), call `bone_deform` / `vat_deform` with the same arguments the
// shipped entry points pass, and store the model-space result (before the
// world-view-projection, which only places the mesh on screen).

// Vertex v: position and normal at 3v..3v+2, channels at v * params.channels.
@group(2) @binding(0) var<storage, read> harness_positions: array<f32>;
@group(2) @binding(1) var<storage, read> harness_normals: array<f32>;
@group(2) @binding(2) var<storage, read> harness_channels: array<vec4<f32>>;
// Vertex v: (deformed position, 1) at 2v, (normal, 0) at 2v + 1.
@group(2) @binding(3) var<storage, read_write> harness_out: array<vec4<f32>>;

fn harness_vec3(data_index: u32, normal: bool) -> vec3<f32> {
    let i = 3u * data_index;
    if (normal) {
        return vec3<f32>(harness_normals[i], harness_normals[i + 1u], harness_normals[i + 2u]);
    }
    return vec3<f32>(harness_positions[i], harness_positions[i + 1u], harness_positions[i + 2u]);
}

fn harness_store(v: u32, d: Deformed) {
    harness_out[2u * v] = vec4<f32>(d.position, 1.0);
    harness_out[2u * v + 1u] = vec4<f32>(d.normal, 0.0);
}

@compute @workgroup_size(64)
fn bone_compute(@builtin(global_invocation_id) id: vec3<u32>) {
    let v = id.x;
    if (v >= arrayLength(&harness_out) / 2u) {
        return;
    }
    // UV1..UV4 as `bone_vertex` receives them; unused channels stay zero.
    var uv = array<vec4<f32>, 4>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    for (var c = 0u; c < min(params.channels, 4u); c = c + 1u) {
        uv[c] = harness_channels[v * params.channels + c];
    }
    let d = bone_deform(instance.state, uv, params.channels, harness_vec3(v, false), harness_vec3(v, true), params.bone_layout, params.bone_height, params.bone_rows_per_block, params.bone_block_width, params.bone_range);
    harness_store(v, d);
}

@compute @workgroup_size(64)
fn vat_compute(@builtin(global_invocation_id) id: vec3<u32>) {
    let index = id.x;
    if (index >= arrayLength(&harness_out) / 2u) {
        return;
    }
    let d = vat_deform(instance.state, index, harness_vec3(index, false), harness_vec3(index, true), params.vat, params.vat_positions, params.vat_normals);
    harness_store(index, d);
}
