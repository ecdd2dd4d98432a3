//! The shape and sample type of a GPU-ready texture (KTX2, DDS): the leaf
//! that the container writer ([`super::gpu`]) and both header writers
//! ([`super::ktx2`], [`super::dds`]) share.

/// The sample type of a GPU texture (the same for all four channels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SampleType {
    /// 32-bit IEEE floats.
    F32,
    /// 16-bit IEEE half floats.
    F16,
    /// 16-bit unsigned normalised integers (value / 65535).
    Unorm16,
}

impl SampleType {
    /// The float sample type of bone-matrix and anchor textures of
    /// `precision`.
    pub fn of_precision(precision: super::Precision) -> Self {
        match precision {
            super::Precision::F32 => Self::F32,
            super::Precision::F16 => Self::F16,
            super::Precision::Unorm16 => Self::Unorm16,
        }
    }

    /// Bytes of one sample.
    pub fn bytes(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::F16 | Self::Unorm16 => 2,
        }
    }
}

/// Shape and sample type of a GPU texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuSpec {
    /// Width in texels.
    pub width: usize,
    /// Height in texels.
    pub height: usize,
    /// Array layers (1: a plain 2D texture; folded VAT pages otherwise).
    pub layers: usize,
    /// Sample type.
    pub sample: SampleType,
}

impl GpuSpec {
    /// Bytes of one RGBA texel.
    pub fn texel_bytes(&self) -> usize {
        4 * self.sample.bytes()
    }

    /// Bytes of all texels of all layers.
    pub fn data_bytes(&self) -> u64 {
        self.width as u64 * self.height as u64 * self.layers as u64 * self.texel_bytes() as u64
    }
}
