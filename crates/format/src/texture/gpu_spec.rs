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
    /// 8-bit unsigned normalised integers (value / 255): `R8G8B8A8_UNORM`.
    /// Since format 1.15.
    Unorm8,
    /// 10-bit unsigned normalised R, G, B (value / 1023) and a 2-bit A
    /// (value / 3) packed in one little-endian 32-bit word, R in the low
    /// bits: `A2B10G10R10_UNORM_PACK32` (Vulkan) or `R10G10B10A2_UNORM`
    /// (DXGI). Since format 1.15.
    Unorm10,
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

    /// Bytes of the format's data type (KTX2 `typeSize`): one sample, or
    /// the packed 32-bit word of [`Self::Unorm10`].
    pub fn type_size(self) -> usize {
        match self {
            Self::F32 | Self::Unorm10 => 4,
            Self::F16 | Self::Unorm16 => 2,
            Self::Unorm8 => 1,
        }
    }

    /// Bytes of one RGBA texel.
    pub fn texel_bytes(self) -> usize {
        match self {
            Self::F32 => 16,
            Self::F16 | Self::Unorm16 => 8,
            Self::Unorm8 | Self::Unorm10 => 4,
        }
    }

    /// Bits of each channel, R, G, B, A.
    pub fn channel_bits(self) -> [u32; 4] {
        match self {
            Self::F32 => [32; 4],
            Self::F16 | Self::Unorm16 => [16; 4],
            Self::Unorm8 => [8; 4],
            Self::Unorm10 => [10, 10, 10, 2],
        }
    }

    /// The largest code of each channel of a UNORM type (the code that
    /// reads as 1.0); None for floats.
    pub fn unorm_max(self) -> Option<[u16; 4]> {
        match self {
            Self::F32 | Self::F16 => None,
            Self::Unorm16 => Some([u16::MAX; 4]),
            Self::Unorm8 => Some([255; 4]),
            Self::Unorm10 => Some([1023, 1023, 1023, 3]),
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
        self.sample.texel_bytes()
    }

    /// Bytes of all texels of all layers.
    pub fn data_bytes(&self) -> u64 {
        self.width as u64 * self.height as u64 * self.layers as u64 * self.texel_bytes() as u64
    }
}
