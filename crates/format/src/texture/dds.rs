//! DirectDraw Surface headers with the DX10 extension: what rigbake writes
//! (uncompressed RGBA, one mip level, optional array) and the checks a
//! reader makes before touching the data. Normative description:
//! `formats/textures.md`, "DDS".

use super::gpu_spec::{GpuSpec, SampleType};
use crate::error::{FormatError, Result};

/// `"DDS "`, the first four bytes.
pub const MAGIC: [u8; 4] = *b"DDS ";
/// Magic, `DDS_HEADER` (124 bytes) and `DDS_HEADER_DXT10` (20 bytes).
pub const HEADER_LEN: usize = 4 + 124 + 20;

/// `DXGI_FORMAT_R32G32B32A32_FLOAT`.
pub const DXGI_R32G32B32A32_FLOAT: u32 = 2;
/// `DXGI_FORMAT_R16G16B16A16_FLOAT`.
pub const DXGI_R16G16B16A16_FLOAT: u32 = 10;
/// `DXGI_FORMAT_R16G16B16A16_UNORM`.
pub const DXGI_R16G16B16A16_UNORM: u32 = 11;
/// `DXGI_FORMAT_R10G10B10A2_UNORM`.
pub const DXGI_R10G10B10A2_UNORM: u32 = 24;
/// `DXGI_FORMAT_R8G8B8A8_UNORM`.
pub const DXGI_R8G8B8A8_UNORM: u32 = 28;

/// `DDSD_CAPS | DDSD_HEIGHT | DDSD_WIDTH | DDSD_PITCH | DDSD_PIXELFORMAT`.
const FLAGS: u32 = 0x1 | 0x2 | 0x4 | 0x8 | 0x1000;
/// `DDPF_FOURCC`.
const PF_FOURCC: u32 = 0x4;
/// `DDSCAPS_TEXTURE`.
const CAPS_TEXTURE: u32 = 0x1000;
/// `D3D10_RESOURCE_DIMENSION_TEXTURE2D`.
const TEXTURE2D: u32 = 3;

/// The DXGI format of a sample type.
pub fn dxgi_format(sample: SampleType) -> u32 {
    match sample {
        SampleType::F32 => DXGI_R32G32B32A32_FLOAT,
        SampleType::F16 => DXGI_R16G16B16A16_FLOAT,
        SampleType::Unorm16 => DXGI_R16G16B16A16_UNORM,
        SampleType::Unorm8 => DXGI_R8G8B8A8_UNORM,
        SampleType::Unorm10 => DXGI_R10G10B10A2_UNORM,
    }
}

/// The 148 header bytes of a DDS file of `spec` (data follows, row 0 first,
/// layer after layer).
pub fn header(spec: &GpuSpec) -> Vec<u8> {
    let mut words = [0u32; 37];
    words[0] = u32::from_le_bytes(MAGIC);
    words[1] = 124; // dwSize
    words[2] = FLAGS;
    words[3] = spec.height as u32;
    words[4] = spec.width as u32;
    words[5] = (spec.width * spec.texel_bytes()) as u32; // pitch
    words[7] = 1; // dwMipMapCount
    // Pixel format (words 19..27): size, flags, FourCC.
    words[19] = 32;
    words[20] = PF_FOURCC;
    words[21] = u32::from_le_bytes(*b"DX10");
    words[27] = CAPS_TEXTURE;
    // DDS_HEADER_DXT10 (words 32..37).
    words[32] = dxgi_format(spec.sample);
    words[33] = TEXTURE2D;
    words[34] = 0; // miscFlag
    words[35] = spec.layers as u32; // arraySize
    words[36] = 0; // miscFlags2: alpha mode unknown
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Checks the header of `file` against `spec` and returns its data.
pub fn data<'a>(file: &'a [u8], spec: &GpuSpec) -> Result<&'a [u8]> {
    if file.len() < HEADER_LEN || file[..4] != MAGIC {
        return Err(FormatError::Invalid(
            "not a DDS file (no `DDS ` magic, or shorter than the 148-byte DX10 header)".to_owned(),
        ));
    }
    let word = |i: usize| {
        u32::from_le_bytes([
            file[4 * i],
            file[4 * i + 1],
            file[4 * i + 2],
            file[4 * i + 3],
        ])
    };
    let expected: [(&str, usize, u32); 9] = [
        ("dwSize", 1, 124),
        ("dwHeight", 3, spec.height as u32),
        ("dwWidth", 4, spec.width as u32),
        ("ddspf.dwFlags", 20, PF_FOURCC),
        ("ddspf.dwFourCC", 21, u32::from_le_bytes(*b"DX10")),
        ("dxgiFormat", 32, dxgi_format(spec.sample)),
        ("resourceDimension", 33, TEXTURE2D),
        ("miscFlag", 34, 0),
        ("arraySize", 35, spec.layers as u32),
    ];
    for (name, at, want) in expected {
        let got = word(at);
        if got != want {
            return Err(FormatError::Invalid(format!(
                "DDS header field `{name}` is {got}, the container's records say {want}"
            )));
        }
    }
    if word(7) > 1 {
        return Err(FormatError::Invalid(format!(
            "DDS header field `dwMipMapCount` is {}, rigbake textures have one level",
            word(7)
        )));
    }
    let len = (file.len() - HEADER_LEN) as u64;
    if len != spec.data_bytes() {
        return Err(FormatError::Invalid(format!(
            "DDS data is {len} bytes, the header's {} x {} x {} texels need {}",
            spec.width,
            spec.height,
            spec.layers,
            spec.data_bytes()
        )));
    }
    Ok(&file[HEADER_LEN..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_names_fields() {
        let spec = GpuSpec {
            width: 7,
            height: 3,
            layers: 1,
            sample: SampleType::Unorm16,
        };
        let mut file = header(&spec);
        assert_eq!(file.len(), HEADER_LEN);
        file.resize(HEADER_LEN + spec.data_bytes() as usize, 0);
        assert_eq!(data(&file, &spec).unwrap().len(), 7 * 3 * 8);
        let half = GpuSpec {
            sample: SampleType::F16,
            ..spec
        };
        let e = data(&file, &half).unwrap_err().to_string();
        assert!(
            e.contains("`dxgiFormat` is 11") && e.contains("say 10"),
            "{e}"
        );
        file.truncate(file.len() - 1);
        let e = data(&file, &spec).unwrap_err().to_string();
        assert!(e.contains("DDS data is 167 bytes"), "{e}");
    }
}
