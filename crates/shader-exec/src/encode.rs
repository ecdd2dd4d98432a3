//! VAT textures encoded as the CLI's `--format` choices store them: as
//! uploaded to the GPU, and as the CPU reference reads them.

use half::f16;
use rigbake_core::fold::Fold;
use rigbake_core::runtime::vat_path::{VatAddress, VatDecode, VatSamples, VatTextureView};
use rigbake_format::texture::gpu_spec::SampleType;
use rigbake_format::texture::quantize::{octahedral_encode, pack_normal, to_unorm, to_unorm16};

use crate::bakes::VatPrimitive;
use crate::kernel::Texels;
use crate::uniforms::StreamDecode;

/// How VAT textures are stored (the CLI's `--format` and
/// `--direction-encoding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VatEncoding {
    /// EXR, 32-bit floats.
    Exr32,
    /// EXR, half floats.
    Exr16,
    /// PNG16: positions to bounds, normals octahedral.
    Png16Octahedral,
    /// PNG16: positions and normals to bounds.
    Png16Bounds,
    /// PNG16: positions to bounds, normals packed into their alpha
    /// (`--direction-encoding packed`, [`encode_packed`]).
    Png16Packed,
    /// `unorm8` (RGBA8 UNORM in KTX2/DDS): positions to bounds, normals
    /// octahedral.
    Unorm8,
    /// `unorm10` (RGB10A2 UNORM in KTX2/DDS): positions to bounds,
    /// normals octahedral.
    Unorm10,
}

impl VatEncoding {
    /// The GPU sample type of a narrow UNORM encoding (None otherwise).
    fn narrow(self) -> Option<SampleType> {
        match self {
            Self::Unorm8 => Some(SampleType::Unorm8),
            Self::Unorm10 => Some(SampleType::Unorm10),
            _ => None,
        }
    }
}

/// A VAT texture as uploaded and as the CPU reference reads it.
pub struct Encoded {
    /// `rgba32float` texels (EXR32), else empty.
    pub gpu_f32: Vec<f32>,
    /// `rgba16float` texels (EXR16), else empty.
    pub gpu_f16: Vec<f16>,
    /// `rgba16unorm` samples (PNG16), or the codes of a narrow UNORM
    /// texture (`narrow`), else empty.
    pub gpu_q: Vec<u16>,
    /// The sample type of narrow UNORM codes in `gpu_q` (RGBA8, RGB10A2).
    pub narrow: Option<SampleType>,
    /// The float texels the CPU reads (the halves widened), for EXR.
    pub cpu_f32: Vec<f32>,
    /// How the shader decodes them.
    pub decode: StreamDecode,
    /// Largest absolute decoded value.
    pub scale: f32,
}

impl Encoded {
    /// What the GPU gets.
    pub fn texels(&self) -> Texels<'_> {
        if let Some(sample) = self.narrow {
            Texels::Narrow(&self.gpu_q, sample)
        } else if !self.gpu_q.is_empty() {
            Texels::Unorm16(&self.gpu_q)
        } else if !self.gpu_f16.is_empty() {
            Texels::F16(&self.gpu_f16)
        } else {
            Texels::F32(&self.gpu_f32)
        }
    }

    /// What the CPU reference reads.
    pub fn view(&self, p: &VatPrimitive) -> VatTextureView<'_> {
        self.view_of(p.width, p.height)
    }

    /// The view of these samples as a `width x height` texture (a first
    /// page when there are more).
    fn view_of(&self, width: u32, height: u32) -> VatTextureView<'_> {
        let samples = match self.narrow.and_then(SampleType::unorm_max) {
            Some(max) => VatSamples::Unorm(&self.gpu_q, max),
            None if self.gpu_q.is_empty() => VatSamples::Float(&self.cpu_f32),
            None => VatSamples::Unorm16(&self.gpu_q),
        };
        let decode = match self.decode.encoding {
            1 => VatDecode::Bounds {
                min: self.decode.min,
                max: self.decode.max,
            },
            2 => VatDecode::Octahedral,
            3 => VatDecode::Packed,
            _ => VatDecode::Float,
        };
        VatTextureView {
            width,
            height,
            channels: 4,
            samples,
            decode,
            rows: None,
        }
    }
}

/// `data` (RGBA texels of `p`'s unfolded layout, `T` per sample) placed by
/// `fold`: every page after the other (the layers of a texture array).
fn fold_layers<T: Copy + Default>(data: &[T], p: &VatPrimitive, fold: &Fold) -> Vec<T> {
    if data.is_empty() {
        return Vec::new();
    }
    let (page_w, page_h) = (fold.width() as usize, fold.height() as usize);
    let page = page_w * page_h * 4;
    let mut out = vec![T::default(); page * fold.pages as usize];
    let line = p.width as usize * 4;
    for r in 0..p.frames {
        for band in 0..p.bands {
            let (k, x, y) = fold.texel(0, band, r);
            let from = ((r * p.bands + band) as usize) * line;
            let to = k as usize * page + (y as usize * page_w + x as usize) * 4;
            out[to..to + line].copy_from_slice(&data[from..from + line]);
        }
    }
    out
}

impl Encoded {
    /// The same texture folded by `fold` into pages (layers).
    pub fn folded(&self, p: &VatPrimitive, fold: &Fold) -> Encoded {
        Encoded {
            gpu_f32: fold_layers(&self.gpu_f32, p, fold),
            gpu_f16: fold_layers(&self.gpu_f16, p, fold),
            gpu_q: fold_layers(&self.gpu_q, p, fold),
            narrow: self.narrow,
            cpu_f32: fold_layers(&self.cpu_f32, p, fold),
            decode: self.decode,
            scale: self.scale,
        }
    }

    /// What the CPU reference reads from a texture of `pages` layers of
    /// `width x height`: one view per page.
    pub fn page_views(&self, width: u32, height: u32, pages: u32) -> Vec<VatTextureView<'_>> {
        let page = (width * height * 4) as usize;
        let single = self.view_of(width, height);
        (0..pages as usize)
            .map(|k| VatTextureView {
                samples: match single.samples {
                    VatSamples::Float(f) => VatSamples::Float(&f[k * page..(k + 1) * page]),
                    VatSamples::Unorm16(q) => VatSamples::Unorm16(&q[k * page..(k + 1) * page]),
                    VatSamples::Unorm(q, max) => {
                        VatSamples::Unorm(&q[k * page..(k + 1) * page], max)
                    }
                },
                ..single
            })
            .collect()
    }
}

/// Per-channel bounds of the real texels (vertices of real frames) of `data`.
fn bounds(p: &VatPrimitive, data: &[f32]) -> ([f32; 4], [f32; 4]) {
    let address = VatAddress {
        width: p.width,
        bands: p.bands,
        frames: p.frames,
        first_vertex: p.first_vertex,
        ..VatAddress::default()
    };
    let (mut lo, mut hi) = ([f32::INFINITY; 4], [f32::NEG_INFINITY; 4]);
    for row in 0..p.frames {
        for v in 0..p.vertices {
            let (_, x, y) = address.texel(v, row);
            let at = ((y * p.width + x) * 4) as usize;
            for c in 0..3 {
                lo[c] = lo[c].min(data[at + c]);
                hi[c] = hi[c].max(data[at + c]);
            }
        }
    }
    for c in 0..4 {
        if lo[c] > hi[c] || c == 3 {
            (lo[c], hi[c]) = (0.0, 0.0);
        }
    }
    (lo, hi)
}

/// Encodes one stream's `f32` texels as `encoding` stores them (the format
/// crate's own quantisers for PNG16).
pub fn encode(p: &VatPrimitive, data: &[f32], encoding: VatEncoding, direction: bool) -> Encoded {
    let max_abs = |d: &[f32]| d.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    match encoding {
        VatEncoding::Exr32 => Encoded {
            gpu_f32: data.to_vec(),
            gpu_f16: Vec::new(),
            gpu_q: Vec::new(),
            narrow: None,
            cpu_f32: data.to_vec(),
            decode: StreamDecode::FLOAT,
            scale: max_abs(data),
        },
        VatEncoding::Exr16 => {
            let halves: Vec<f16> = data.iter().map(|&v| f16::from_f32(v)).collect();
            let cpu: Vec<f32> = halves.iter().map(|h| h.to_f32()).collect();
            Encoded {
                scale: max_abs(&cpu),
                gpu_f32: Vec::new(),
                gpu_f16: halves,
                gpu_q: Vec::new(),
                narrow: None,
                cpu_f32: cpu,
                decode: StreamDecode::FLOAT,
            }
        }
        VatEncoding::Unorm8 | VatEncoding::Unorm10 => {
            let sample = encoding.narrow().unwrap_or(SampleType::Unorm8);
            let codes = sample.unorm_max().unwrap_or([255; 4]);
            let mut q = vec![0u16; data.len()];
            let (decode, scale) = if direction {
                for (t, out) in data.chunks_exact(4).zip(q.chunks_exact_mut(4)) {
                    let e = octahedral_encode([t[0], t[1], t[2]]);
                    out[0] = to_unorm(e[0], -1.0, 1.0, codes[0]);
                    out[1] = to_unorm(e[1], -1.0, 1.0, codes[1]);
                }
                (
                    StreamDecode {
                        encoding: 2,
                        min: [0.0; 4],
                        max: [0.0; 4],
                    },
                    1.0,
                )
            } else {
                let (min, max) = bounds(p, data);
                for (t, out) in data.chunks_exact(4).zip(q.chunks_exact_mut(4)) {
                    for c in 0..4 {
                        out[c] = to_unorm(t[c], min[c], max[c], codes[c]);
                    }
                }
                let scale = min.iter().chain(&max).fold(0.0f32, |m, v| m.max(v.abs()));
                (
                    StreamDecode {
                        encoding: 1,
                        min,
                        max,
                    },
                    scale,
                )
            };
            Encoded {
                gpu_f32: Vec::new(),
                gpu_f16: Vec::new(),
                gpu_q: q,
                narrow: Some(sample),
                cpu_f32: Vec::new(),
                decode,
                scale,
            }
        }
        VatEncoding::Png16Octahedral if direction => {
            let mut q = vec![0u16; data.len()];
            for (t, out) in data.chunks_exact(4).zip(q.chunks_exact_mut(4)) {
                let e = octahedral_encode([t[0], t[1], t[2]]);
                out[0] = to_unorm16(e[0], -1.0, 1.0);
                out[1] = to_unorm16(e[1], -1.0, 1.0);
            }
            Encoded {
                gpu_f32: Vec::new(),
                gpu_f16: Vec::new(),
                gpu_q: q,
                narrow: None,
                cpu_f32: Vec::new(),
                decode: StreamDecode {
                    encoding: 2,
                    min: [0.0; 4],
                    max: [0.0; 4],
                },
                scale: 1.0,
            }
        }
        VatEncoding::Png16Octahedral | VatEncoding::Png16Bounds | VatEncoding::Png16Packed => {
            let (min, max) = bounds(p, data);
            let mut q = vec![0u16; data.len()];
            for (t, out) in data.chunks_exact(4).zip(q.chunks_exact_mut(4)) {
                for c in 0..4 {
                    out[c] = to_unorm16(t[c], min[c], max[c]);
                }
            }
            let scale = min.iter().chain(&max).fold(0.0f32, |m, v| m.max(v.abs()));
            Encoded {
                gpu_f32: Vec::new(),
                gpu_f16: Vec::new(),
                gpu_q: q,
                narrow: None,
                cpu_f32: Vec::new(),
                decode: StreamDecode {
                    encoding: 1,
                    min,
                    max,
                },
                scale,
            }
        }
    }
}

/// PNG16 positions with packed normals (`--direction-encoding packed`,
/// format 1.13): the positions to bounds, each texel's alpha the normal's
/// 8 + 8-bit octahedral code (the format crate's packer); the normals
/// stream reads the very same samples (the shader binds the positions
/// texture as the normals texture too).
pub fn encode_packed(p: &VatPrimitive, positions: &[f32], normals: &[f32]) -> (Encoded, Encoded) {
    let mut pos = encode(p, positions, VatEncoding::Png16Bounds, false);
    for (q, n) in pos.gpu_q.chunks_exact_mut(4).zip(normals.chunks_exact(4)) {
        q[3] = pack_normal([n[0], n[1], n[2]]);
    }
    let nrm = Encoded {
        gpu_f32: Vec::new(),
        gpu_f16: Vec::new(),
        gpu_q: pos.gpu_q.clone(),
        narrow: None,
        cpu_f32: Vec::new(),
        decode: StreamDecode {
            encoding: 3,
            min: [0.0; 4],
            max: [0.0; 4],
        },
        scale: 1.0,
    };
    (pos, nrm)
}
