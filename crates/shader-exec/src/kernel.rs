//! The shipped WGSL (`docs/shaders/rigbake.wgsl`, included as it is) plus
//! the compute harness (`harness.wgsl`), compiled once into two compute
//! pipelines, and one call that runs a path over a primitive's vertices for
//! a list of animation states and reads the deformed vertices back.

use glam::Vec3;
use rigbake_core::runtime::GpuState;
use wgpu::util::DeviceExt;

use crate::gpu::Gpu;
use crate::uniforms::{self, Layouts, ParamValues};

/// The runtime shader exactly as the documentation ships it.
pub const SHIPPED_WGSL: &str = include_str!("../../../docs/shaders/rigbake.wgsl");

/// The compute entry points appended to it (see the file's comment).
pub const HARNESS_WGSL: &str = include_str!("harness.wgsl");

/// Invocations per workgroup of the harness entry points.
const WORKGROUP: u32 = 64;

/// The module the GPU compiles: the shipped text, then the harness.
pub fn source() -> String {
    format!("{SHIPPED_WGSL}\n{HARNESS_WGSL}")
}

/// Which path to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `bone_deform`, through `bone_compute`.
    Bones,
    /// `vat_deform`, through `vat_compute`.
    Vat,
}

/// RGBA texels, row-major, row 0 first, as uploaded.
#[derive(Debug, Clone, Copy)]
pub enum Texels<'a> {
    /// `rgba32float`.
    F32(&'a [f32]),
    /// `rgba16float`.
    F16(&'a [half::f16]),
    /// `rgba16unorm`: `textureLoad` returns `q / 65535`.
    Unorm16(&'a [u16]),
    /// RGBA codes of a narrow UNORM type, uploaded as the format crate's
    /// writer packs them: `rgba8unorm` for [`SampleType::Unorm8`](rigbake_format::texture::gpu_spec::SampleType::Unorm8),
    /// `rgb10a2unorm` for [`SampleType::Unorm10`](rigbake_format::texture::gpu_spec::SampleType::Unorm10) (`textureLoad` returns
    /// `q / 255`, or `q / 1023` and `a / 3`).
    Narrow(&'a [u16], rigbake_format::texture::gpu_spec::SampleType),
}

/// One texture to bind.
#[derive(Debug, Clone, Copy)]
pub struct TextureData<'a> {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Layers (VAT pages; 1 for the bone texture and unfolded VATs).
    pub layers: u32,
    /// `width * height * layers` RGBA texels, layer after layer.
    pub texels: Texels<'a>,
}

/// The three textures of binding group 0 (`None`: a 1x1 zero texture).
#[derive(Debug, Clone, Copy, Default)]
pub struct Textures<'a> {
    /// `bone_texture`.
    pub bones: Option<TextureData<'a>>,
    /// `vat_positions`.
    pub vat_positions: Option<TextureData<'a>>,
    /// `vat_normals`.
    pub vat_normals: Option<TextureData<'a>>,
}

/// A primitive's vertices as the entry points receive them.
#[derive(Debug, Clone, Copy)]
pub struct VertexInput<'a> {
    /// Positions (bind pose, or what the VAT playback mesh holds).
    pub positions: &'a [[f32; 3]],
    /// Normals, when the primitive has them.
    pub normals: Option<&'a [[f32; 3]]>,
    /// Bone-weight channels, `params.channels` per vertex (bone path).
    pub channels: &'a [[f32; 4]],
}

/// What the GPU returned for one vertex.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuVertex {
    /// Deformed position.
    pub position: Vec3,
    /// Deformed normal (meaningless when the input had none).
    pub normal: Vec3,
}

/// The compiled pipelines and their binding layouts.
#[derive(Debug)]
pub struct Kernels {
    /// Struct layouts of the module (uniform offsets).
    pub layouts: Layouts,
    bones: wgpu::ComputePipeline,
    vat: wgpu::ComputePipeline,
    groups: [wgpu::BindGroupLayout; 3],
}

fn texture_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
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

fn buffer_entry(binding: u32, ty: wgpu::BufferBindingType) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Runs `f` inside a validation error scope; wgpu's validation errors
/// become `Err` instead of a panic in its default handler.
fn scoped<T>(gpu: &Gpu, what: &str, f: impl FnOnce() -> T) -> Result<T, String> {
    let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = f();
    match pollster::block_on(scope.pop()) {
        None => Ok(value),
        Some(e) => Err(format!("{what}: {e}")),
    }
}

impl Kernels {
    /// Compiles the module (naga, then the driver) and both pipelines.
    pub fn new(gpu: &Gpu) -> Result<Self, String> {
        Self::with_source(gpu, source())
    }

    /// The same from another module text (the shipped one deliberately
    /// broken, to show that the comparison notices).
    pub fn with_source(gpu: &Gpu, text: String) -> Result<Self, String> {
        let layouts = Layouts::parse(&text)?;
        let device = &gpu.device;
        scoped(gpu, "compiling docs/shaders/rigbake.wgsl + harness", || {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("rigbake.wgsl + harness"),
                source: wgpu::ShaderSource::Wgsl(text.as_str().into()),
            });
            let uniform = wgpu::BufferBindingType::Uniform;
            let read = wgpu::BufferBindingType::Storage { read_only: true };
            let write = wgpu::BufferBindingType::Storage { read_only: false };
            let make = |label: &str, entries: &[wgpu::BindGroupLayoutEntry]| {
                device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some(label),
                    entries,
                })
            };
            let groups = [
                make(
                    "textures",
                    &[texture_entry(0), texture_entry(1), texture_entry(2)],
                ),
                make(
                    "uniforms",
                    &[buffer_entry(0, uniform), buffer_entry(1, uniform)],
                ),
                make(
                    "harness",
                    &[
                        buffer_entry(0, read),
                        buffer_entry(1, read),
                        buffer_entry(2, read),
                        buffer_entry(3, write),
                    ],
                ),
            ];
            let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("rigbake"),
                bind_group_layouts: &[&groups[0], &groups[1], &groups[2]],
                immediate_size: 0,
            });
            let pipeline = |entry: &str| {
                device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(entry),
                    layout: Some(&layout),
                    module: &module,
                    entry_point: Some(entry),
                    compilation_options: Default::default(),
                    cache: None,
                })
            };
            Self {
                bones: pipeline("bone_compute"),
                vat: pipeline("vat_compute"),
                groups,
                layouts,
            }
        })
    }

    /// Runs `entry` over every vertex of `input` once per state; returns
    /// the vertices per state, in vertex order.
    pub fn run(
        &self,
        gpu: &Gpu,
        entry: Entry,
        textures: &Textures<'_>,
        params: &ParamValues,
        input: &VertexInput<'_>,
        states: &[GpuState],
    ) -> Result<Vec<Vec<GpuVertex>>, String> {
        let n = input.positions.len();
        if n == 0 || states.is_empty() {
            return Ok(vec![Vec::new(); states.len()]);
        }
        let groups = (n as u32).div_ceil(WORKGROUP);
        let max_groups = gpu.device.limits().max_compute_workgroups_per_dimension;
        if groups > max_groups {
            return Err(format!(
                "{n} vertices need {groups} workgroups, more than {max_groups}"
            ));
        }
        let readback = scoped(gpu, "running the harness", || {
            self.dispatch(gpu, entry, textures, params, input, states, groups)
        })??;
        Ok(readback)
    }

    #[allow(clippy::too_many_arguments)]
    fn dispatch(
        &self,
        gpu: &Gpu,
        entry: Entry,
        textures: &Textures<'_>,
        params: &ParamValues,
        input: &VertexInput<'_>,
        states: &[GpuState],
        groups: u32,
    ) -> Result<Vec<Vec<GpuVertex>>, String> {
        let device = &gpu.device;
        let n = input.positions.len();
        let limits = device.limits();
        let views = texture_views(gpu, textures);
        let group0 = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("textures"),
            layout: &self.groups[0],
            entries: &[0, 1, 2].map(|i| wgpu::BindGroupEntry {
                binding: i,
                resource: wgpu::BindingResource::TextureView(&views[i as usize]),
            }),
        });

        let storage = |label: &str, bytes: &[u8]| {
            // Bindings may not be empty: pad absent inputs to one vec4.
            let mut contents = bytes.to_vec();
            contents.resize(contents.len().max(16), 0);
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: &contents,
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let zeros;
        let normals = match input.normals {
            Some(n) => n,
            None => {
                zeros = vec![[0.0f32; 3]; n];
                &zeros
            }
        };
        let inputs = [
            storage("positions", bytemuck::cast_slice(input.positions)),
            storage("normals", bytemuck::cast_slice(normals)),
            storage("channels", bytemuck::cast_slice(input.channels)),
        ];

        // One output slice and one Instance block per state.
        let out_bytes = (n * 32) as u64;
        let out_stride =
            out_bytes.next_multiple_of(u64::from(limits.min_storage_buffer_offset_alignment));
        let total = out_stride * states.len() as u64;
        let output = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("deformed"),
            size: total,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: total,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let params_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: &uniforms::params(&self.layouts, params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let instance_size = u64::from(self.layouts.size("Instance"));
        let instance_stride =
            instance_size.next_multiple_of(u64::from(limits.min_uniform_buffer_offset_alignment));
        let mut instances = vec![0u8; (instance_stride * states.len() as u64) as usize];
        for (k, s) in states.iter().enumerate() {
            let block = uniforms::instance(&self.layouts, s);
            let at = k * instance_stride as usize;
            instances[at..at + block.len()].copy_from_slice(&block);
        }
        let instance_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("instances"),
            contents: &instances,
            usage: wgpu::BufferUsages::UNIFORM,
        });

        let pipeline = match entry {
            Entry::Bones => &self.bones,
            Entry::Vat => &self.vat,
        };
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &group0, &[]);
            for k in 0..states.len() as u64 {
                let group1 = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("uniforms"),
                    layout: &self.groups[1],
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &instance_buffer,
                                offset: k * instance_stride,
                                size: wgpu::BufferSize::new(instance_size),
                            }),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: params_buffer.as_entire_binding(),
                        },
                    ],
                });
                let group2 = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("harness"),
                    layout: &self.groups[2],
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: inputs[0].as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: inputs[1].as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: inputs[2].as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 3,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &output,
                                offset: k * out_stride,
                                size: wgpu::BufferSize::new(out_bytes),
                            }),
                        },
                    ],
                });
                pass.set_bind_group(1, &group1, &[]);
                pass.set_bind_group(2, &group2, &[]);
                pass.dispatch_workgroups(groups, 1, 1);
            }
        }
        encoder.copy_buffer_to_buffer(&output, 0, &read, 0, total);
        gpu.queue.submit([encoder.finish()]);

        read_back(gpu, &read, states.len(), out_stride, n)
    }
}

/// Maps the readback buffer once the GPU is done and splits it into the
/// deformed vertices of each of `states` states (`n` vertices each, a
/// state's slice `out_stride` bytes apart).
fn read_back(
    gpu: &Gpu,
    read: &wgpu::Buffer,
    states: usize,
    out_stride: u64,
    n: usize,
) -> Result<Vec<Vec<GpuVertex>>, String> {
    let device = &gpu.device;
    let slice = read.slice(..);
    slice.map_async(wgpu::MapMode::Read, |_| {});
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| format!("waiting for the GPU: {e}"))?;
    let mapped = slice.get_mapped_range();
    let floats: &[f32] = bytemuck::cast_slice(&mapped);
    let per_state = (0..states)
        .map(|k| {
            let base = k * out_stride as usize / 4;
            (0..n)
                .map(|v| {
                    let at = base + v * 8;
                    GpuVertex {
                        position: Vec3::from_slice(&floats[at..at + 3]),
                        normal: Vec3::from_slice(&floats[at + 4..at + 7]),
                    }
                })
                .collect()
        })
        .collect();
    drop(mapped);
    read.unmap();
    Ok(per_state)
}

/// Uploads the three textures of binding group 0 and returns their views.
pub fn texture_views(gpu: &Gpu, textures: &Textures<'_>) -> [wgpu::TextureView; 3] {
    let bones = upload_texture(gpu, textures.bones).create_view(&Default::default());
    let array = |t| {
        upload_texture(gpu, t).create_view(&wgpu::TextureViewDescriptor {
            dimension: Some(wgpu::TextureViewDimension::D2Array),
            ..Default::default()
        })
    };
    [
        bones,
        array(textures.vat_positions),
        array(textures.vat_normals),
    ]
}

/// Uploads `data` (or a 1x1 zero `rgba32float` texture).
fn upload_texture(gpu: &Gpu, data: Option<TextureData<'_>>) -> wgpu::Texture {
    let zero = [0.0f32; 4];
    let data = data.unwrap_or(TextureData {
        width: 1,
        height: 1,
        layers: 1,
        texels: Texels::F32(&zero),
    });
    let packed;
    let (format, bytes): (_, &[u8]) = match data.texels {
        Texels::F32(t) => (wgpu::TextureFormat::Rgba32Float, bytemuck::cast_slice(t)),
        Texels::F16(t) => (wgpu::TextureFormat::Rgba16Float, bytemuck::cast_slice(t)),
        Texels::Unorm16(t) => (wgpu::TextureFormat::Rgba16Unorm, bytemuck::cast_slice(t)),
        Texels::Narrow(codes, sample) => {
            use rigbake_format::texture::gpu::interleave_narrow;
            use rigbake_format::texture::gpu_spec::SampleType;
            let mut out = vec![0u8; codes.len() / 4 * sample.texel_bytes()];
            for (texel, code) in out
                .chunks_exact_mut(sample.texel_bytes())
                .zip(codes.chunks_exact(4))
            {
                interleave_narrow(code, 1, 4, sample, texel);
            }
            packed = out;
            let format = if sample == SampleType::Unorm10 {
                wgpu::TextureFormat::Rgb10a2Unorm
            } else {
                wgpu::TextureFormat::Rgba8Unorm
            };
            (format, &packed[..])
        }
    };
    let size = wgpu::Extent3d {
        width: data.width,
        height: data.height,
        depth_or_array_layers: data.layers.max(1),
    };
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("data"),
        size,
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    let texel = format.block_copy_size(None).unwrap_or(16);
    gpu.queue.write_texture(
        wgpu::TexelCopyTextureInfo {
            texture: &texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        bytes,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(data.width * texel),
            rows_per_image: Some(data.height),
        },
        size,
    );
    texture
}
