//! The shipped vertex entry points themselves (`bone_vertex`, `vat_vertex`)
//! in a render pipeline: the WGSL alone, compiled for the vertex stage,
//! fed through vertex buffers, drawing the vertices as points into a depth
//! buffer. Point depths are the vertices' own (no interpolation), so the
//! smallest depth in the image is the smallest depth of any vertex, and no
//! pixel is deeper than the deepest vertex: a check that the render path
//! deforms as the compute harness does, without reading vertex outputs.

use rigbake_core::runtime::GpuState;
use wgpu::util::DeviceExt;

use crate::gpu::Gpu;
use crate::kernel::{Entry, SHIPPED_WGSL, Textures, VertexInput};
use crate::uniforms::{self, Layouts, ParamValues, Placement};

/// Side of the square depth target, in pixels.
pub const SIZE: u32 = 256;

/// Depths of a point drawing: `SIZE * SIZE` values, 1.0 where nothing drew.
#[derive(Debug, Clone)]
pub struct DepthImage {
    /// Row-major depths.
    pub depths: Vec<f32>,
}

impl DepthImage {
    /// Depths of the covered pixels.
    pub fn covered(&self) -> impl Iterator<Item = f32> + '_ {
        self.depths.iter().copied().filter(|d| *d < 1.0)
    }
}

/// Draws `input` with the shipped entry point of `entry`, in `state`,
/// placed by `placement` (root motion, then world-view-projection).
#[allow(clippy::too_many_arguments)]
pub fn draw_points(
    gpu: &Gpu,
    entry: Entry,
    textures: &Textures<'_>,
    params: &ParamValues,
    input: &VertexInput<'_>,
    state: &GpuState,
    placement: &Placement,
) -> Result<DepthImage, String> {
    let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let image = draw(gpu, entry, textures, params, input, state, placement);
    match pollster::block_on(scope.pop()) {
        None => image,
        Some(e) => Err(format!("drawing with the shipped vertex shader: {e}")),
    }
}

fn texture_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable: false },
            // The bone texture is 2D; the VAT streams are 2D arrays (a
            // layer per page).
            view_dimension: if binding == 0 {
                wgpu::TextureViewDimension::D2
            } else {
                wgpu::TextureViewDimension::D2Array
            },
            multisampled: false,
        },
        count: None,
    }
}

fn uniform_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// One buffer per attribute, with its format: positions, normals, then
/// (bone path) UV1..UV4.
fn attribute_bytes(
    entry: Entry,
    params: &ParamValues,
    input: &VertexInput<'_>,
) -> Vec<(Vec<u8>, wgpu::VertexFormat)> {
    let n = input.positions.len();
    let zeros3 = vec![[0.0f32; 3]; n];
    let mut buffers: Vec<(Vec<u8>, wgpu::VertexFormat)> = vec![
        (
            bytemuck::cast_slice(input.positions).to_vec(),
            wgpu::VertexFormat::Float32x3,
        ),
        (
            bytemuck::cast_slice(input.normals.unwrap_or(&zeros3)).to_vec(),
            wgpu::VertexFormat::Float32x3,
        ),
    ];
    if entry == Entry::Bones {
        let channels = params.channels as usize;
        for c in 0..4 {
            let uv: Vec<[f32; 4]> = (0..n)
                .map(|v| {
                    if c < channels {
                        input.channels[v * channels + c]
                    } else {
                        [0.0; 4]
                    }
                })
                .collect();
            buffers.push((
                bytemuck::cast_slice(&uv).to_vec(),
                wgpu::VertexFormat::Float32x4,
            ));
        }
    }
    buffers
}

/// Draws `n` points with `pipeline` into a cleared depth target and reads
/// the depths back.
fn render_points(
    gpu: &Gpu,
    pipeline: &wgpu::RenderPipeline,
    [group0, group1]: [&wgpu::BindGroup; 2],
    vertex_buffers: &[wgpu::Buffer],
    n: usize,
) -> Result<DepthImage, String> {
    let device = &gpu.device;
    let size = wgpu::Extent3d {
        width: SIZE,
        height: SIZE,
        depth_or_array_layers: 1,
    };
    let depth = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("depth"),
        size,
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Depth32Float,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let depth_view = depth.create_view(&Default::default());
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("depth readback"),
        size: u64::from(SIZE * SIZE * 4),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("points"),
            color_attachments: &[],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth_view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Store,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, group0, &[]);
        pass.set_bind_group(1, group1, &[]);
        for (slot, buffer) in vertex_buffers.iter().enumerate() {
            pass.set_vertex_buffer(slot as u32, buffer.slice(..));
        }
        pass.draw(0..n as u32, 0..1);
    }
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture: &depth,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::DepthOnly,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &read,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(SIZE * 4),
                rows_per_image: Some(SIZE),
            },
        },
        size,
    );
    gpu.queue.submit([encoder.finish()]);
    let slice = read.slice(..);
    slice.map_async(wgpu::MapMode::Read, |_| {});
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| format!("waiting for the GPU: {e}"))?;
    let depths = bytemuck::cast_slice::<u8, f32>(&slice.get_mapped_range()).to_vec();
    read.unmap();
    Ok(DepthImage { depths })
}

#[allow(clippy::too_many_arguments)]
fn draw(
    gpu: &Gpu,
    entry: Entry,
    textures: &Textures<'_>,
    params: &ParamValues,
    input: &VertexInput<'_>,
    state: &GpuState,
    placement: &Placement,
) -> Result<DepthImage, String> {
    let device = &gpu.device;
    let layouts = Layouts::parse(SHIPPED_WGSL)?;
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("docs/shaders/rigbake.wgsl"),
        source: wgpu::ShaderSource::Wgsl(SHIPPED_WGSL.into()),
    });
    let group_layouts = [
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("textures"),
            entries: &[texture_entry(0), texture_entry(1), texture_entry(2)],
        }),
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("uniforms"),
            entries: &[uniform_entry(0), uniform_entry(1)],
        }),
    ];
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("rigbake render"),
        bind_group_layouts: &[&group_layouts[0], &group_layouts[1]],
        immediate_size: 0,
    });

    let n = input.positions.len();
    let buffers = attribute_bytes(entry, params, input);
    let attributes: Vec<[wgpu::VertexAttribute; 1]> = buffers
        .iter()
        .enumerate()
        .map(|(i, (_, format))| {
            [wgpu::VertexAttribute {
                format: *format,
                offset: 0,
                shader_location: i as u32,
            }]
        })
        .collect();
    let vertex_layouts: Vec<wgpu::VertexBufferLayout<'_>> = buffers
        .iter()
        .zip(&attributes)
        .map(|((_, format), attrs)| wgpu::VertexBufferLayout {
            array_stride: format.size(),
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: attrs,
        })
        .collect();
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("shipped vertex entry point"),
        layout: Some(&pipeline_layout),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some(match entry {
                Entry::Bones => "bone_vertex",
                Entry::Vat => "vat_vertex",
            }),
            compilation_options: Default::default(),
            buffers: &vertex_layouts,
        },
        primitive: wgpu::PrimitiveState {
            topology: wgpu::PrimitiveTopology::PointList,
            ..Default::default()
        },
        depth_stencil: Some(wgpu::DepthStencilState {
            format: wgpu::TextureFormat::Depth32Float,
            depth_write_enabled: true,
            depth_compare: wgpu::CompareFunction::Less,
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        fragment: None,
        multiview_mask: None,
        cache: None,
    });

    let vertex_buffers: Vec<wgpu::Buffer> = buffers
        .iter()
        .map(|(bytes, _)| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("attribute"),
                contents: bytes,
                usage: wgpu::BufferUsages::VERTEX,
            })
        })
        .collect();
    let views = crate::kernel::texture_views(gpu, textures);
    let group0 = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("textures"),
        layout: &group_layouts[0],
        entries: &[0, 1, 2].map(|i| wgpu::BindGroupEntry {
            binding: i,
            resource: wgpu::BindingResource::TextureView(&views[i as usize]),
        }),
    });
    let uniform = |label: &str, bytes: Vec<u8>| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: &bytes,
            usage: wgpu::BufferUsages::UNIFORM,
        })
    };
    let instance = uniform(
        "instance",
        uniforms::instance_placed(&layouts, state, placement),
    );
    let params_buffer = uniform("params", uniforms::params(&layouts, params));
    let group1 = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("uniforms"),
        layout: &group_layouts[1],
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: instance.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: params_buffer.as_entire_binding(),
            },
        ],
    });

    render_points(gpu, &pipeline, [&group0, &group1], &vertex_buffers, n)
}
