//! KTX 2.0 headers: what rigbake writes (uncompressed or Zstandard
//! supercompressed RGBA, one mip level, optional array layers) and the
//! checks a reader makes before touching the level data. Normative
//! description: `formats/textures.md`, "KTX2".

use super::gpu_spec::{GpuSpec, SampleType};
use crate::error::{FormatError, Result};

/// The 12-byte KTX 2.0 file identifier (`«KTX 20»\r\n\x1A\n`).
pub const IDENTIFIER: [u8; 12] = [
    0xAB, 0x4B, 0x54, 0x58, 0x20, 0x32, 0x30, 0xBB, 0x0D, 0x0A, 0x1A, 0x0A,
];

/// `VK_FORMAT_R8G8B8A8_UNORM`.
pub const VK_R8G8B8A8_UNORM: u32 = 37;
/// `VK_FORMAT_A2B10G10R10_UNORM_PACK32`.
pub const VK_A2B10G10R10_UNORM_PACK32: u32 = 64;
/// `VK_FORMAT_R16G16B16A16_UNORM`.
pub const VK_R16G16B16A16_UNORM: u32 = 91;
/// `VK_FORMAT_R16G16B16A16_SFLOAT`.
pub const VK_R16G16B16A16_SFLOAT: u32 = 97;
/// `VK_FORMAT_R32G32B32A32_SFLOAT`.
pub const VK_R32G32B32A32_SFLOAT: u32 = 109;

/// `supercompressionScheme` of Zstandard.
pub const SCHEME_ZSTD: u32 = 2;

/// Bytes before the level index: identifier, 9 header words, the index.
const FIXED: usize = 80;
/// Where the level index (one level: 3 u64) starts.
pub(crate) const LEVEL_INDEX_AT: u64 = FIXED as u64;
/// Size of the Data Format Descriptor rigbake writes: the total size word
/// and one basic block with 4 samples.
const DFD_LEN: usize = 4 + 24 + 4 * 16;
/// Largest key/value data a reader accepts (rigbake writes about 60 bytes).
const MAX_KVD: u32 = 64 << 10;

/// The Vulkan format of a sample type.
pub fn vk_format(sample: SampleType) -> u32 {
    match sample {
        SampleType::F32 => VK_R32G32B32A32_SFLOAT,
        SampleType::F16 => VK_R16G16B16A16_SFLOAT,
        SampleType::Unorm16 => VK_R16G16B16A16_UNORM,
        SampleType::Unorm8 => VK_R8G8B8A8_UNORM,
        SampleType::Unorm10 => VK_A2B10G10R10_UNORM_PACK32,
    }
}

/// The key/value data: `KTXorientation` `rd` (texel x grows right, row y
/// grows down: row 0, the first timeline row, is the first stored) and
/// `KTXwriter`, sorted by key, each padded to 4 bytes.
fn key_values() -> Vec<u8> {
    let writer = format!("rigbake {}", env!("CARGO_PKG_VERSION"));
    let mut out = Vec::new();
    for (key, value) in [("KTXorientation", "rd"), ("KTXwriter", writer.as_str())] {
        let len = key.len() + 1 + value.len() + 1;
        out.extend_from_slice(&(len as u32).to_le_bytes());
        out.extend_from_slice(key.as_bytes());
        out.push(0);
        out.extend_from_slice(value.as_bytes());
        out.push(0);
        out.resize(out.len().next_multiple_of(4), 0);
    }
    out
}

/// The basic Data Format Descriptor of an RGBA format of `sample`, as the
/// Khronos tools write it (RGBSDA model, BT.709 primaries, linear transfer;
/// float samples bounded -1.0..1.0, UNORM 0 to the largest code), one
/// sample per channel at its bit offset in the texel (R lowest).
fn dfd(sample: SampleType) -> Vec<u8> {
    let mut words: Vec<u32> = vec![
        DFD_LEN as u32,
        0,                                  // vendor Khronos, basic descriptor type
        2 | (((DFD_LEN - 4) as u32) << 16), // version 1.3, block size
        1 | (1 << 8) | (1 << 16),           // RGBSDA, BT709, linear, straight alpha
        0,                                  // texel block 1x1x1x1
        sample.texel_bytes() as u32,        // bytesPlane0
        0,                                  // bytesPlane4..7
    ];
    let max = sample.unorm_max();
    let mut offset = 0;
    for (i, (channel, bits)) in [0u32, 1, 2, 15]
        .into_iter()
        .zip(sample.channel_bits())
        .enumerate()
    {
        let qualifiers = if max.is_none() { 0x80 | 0x40 } else { 0 };
        words.push(offset | ((bits - 1) << 16) | ((channel | qualifiers) << 24));
        words.push(0);
        match max {
            None => {
                words.push((-1.0f32).to_bits());
                words.push(1.0f32.to_bits());
            }
            Some(max) => {
                words.push(0);
                words.push(u32::from(max[i]));
            }
        }
        offset += bits;
    }
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Alignment of the level data: `lcm(texel block size, 4)` uncompressed, 1
/// supercompressed.
fn level_alignment(spec: &GpuSpec, zstd: bool) -> usize {
    if zstd { 1 } else { spec.texel_bytes().max(4) }
}

/// The header (everything before the level data, padding included) of a
/// KTX2 file of `spec`. With `zstd`, the level's byte length is
/// `compressed` (patched in once the data is written: see
/// `level_index`).
pub fn header(spec: &GpuSpec, zstd: bool, compressed: u64) -> Vec<u8> {
    let dfd = dfd(spec.sample);
    let kvd = key_values();
    let dfd_at = FIXED + 24;
    let kvd_at = dfd_at + dfd.len();
    let data_at = (kvd_at + kvd.len()).next_multiple_of(level_alignment(spec, zstd));
    let mut h = Vec::with_capacity(data_at);
    h.extend_from_slice(&IDENTIFIER);
    let layer_count = if spec.layers > 1 {
        spec.layers as u32
    } else {
        0
    };
    for word in [
        vk_format(spec.sample),
        spec.sample.type_size() as u32,
        spec.width as u32,
        spec.height as u32,
        0,
        layer_count,
        1,
        1,
        if zstd { SCHEME_ZSTD } else { 0 },
        dfd_at as u32,
        dfd.len() as u32,
        kvd_at as u32,
        kvd.len() as u32,
    ] {
        h.extend_from_slice(&word.to_le_bytes());
    }
    h.extend_from_slice(&[0u8; 16]); // no supercompression global data
    h.extend_from_slice(&level_index(
        spec,
        data_at as u64,
        zstd.then_some(compressed),
    ));
    h.extend_from_slice(&dfd);
    h.extend_from_slice(&kvd);
    h.resize(data_at, 0);
    h
}

/// The one entry of the level index: offset, stored length (`compressed`
/// for supercompressed data) and uncompressed length.
pub(crate) fn level_index(spec: &GpuSpec, offset: u64, compressed: Option<u64>) -> [u8; 24] {
    let raw = spec.data_bytes();
    let mut out = [0u8; 24];
    out[..8].copy_from_slice(&offset.to_le_bytes());
    out[8..16].copy_from_slice(&compressed.unwrap_or(raw).to_le_bytes());
    out[16..].copy_from_slice(&raw.to_le_bytes());
    out
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from(u32_at(b, at)) | (u64::from(u32_at(b, at + 4)) << 32)
}

/// A header field that disagrees with the records.
fn field(name: &str, got: impl std::fmt::Display, want: impl std::fmt::Display) -> FormatError {
    FormatError::Invalid(format!(
        "KTX2 header field `{name}` is {got}, the container's records say {want}"
    ))
}

/// Checks the header of `file` against `spec` and returns the level's
/// stored bytes (still supercompressed when `zstd`). Every offset and
/// length is checked against the file's size before it is used.
pub fn level_data<'a>(file: &'a [u8], spec: &GpuSpec, zstd: bool) -> Result<&'a [u8]> {
    if file.len() < FIXED + 24 || file[..12] != IDENTIFIER {
        return Err(FormatError::Invalid(
            "not a KTX2 file (no KTX 2.0 identifier, or shorter than its header)".to_owned(),
        ));
    }
    let word = |i: usize| u32_at(file, 12 + 4 * i);
    let layer_count = if spec.layers > 1 {
        spec.layers as u32
    } else {
        0
    };
    let expected: [(&str, u32); 9] = [
        ("vkFormat", vk_format(spec.sample)),
        ("typeSize", spec.sample.type_size() as u32),
        ("pixelWidth", spec.width as u32),
        ("pixelHeight", spec.height as u32),
        ("pixelDepth", 0),
        ("layerCount", layer_count),
        ("faceCount", 1),
        ("levelCount", 1),
        ("supercompressionScheme", if zstd { SCHEME_ZSTD } else { 0 }),
    ];
    for (i, (name, want)) in expected.into_iter().enumerate() {
        let got = word(i);
        if got != want {
            return Err(field(name, got, want));
        }
    }
    let len = file.len() as u64;
    let (dfd_at, dfd_len) = (u64::from(word(9)), u64::from(word(10)));
    if dfd_len < DFD_LEN as u64 || dfd_at + dfd_len > len {
        return Err(field(
            "dfdByteOffset/dfdByteLength",
            format!("{dfd_at}/{dfd_len}"),
            format!("a descriptor of at least {DFD_LEN} bytes inside the {len}-byte file"),
        ));
    }
    let d = &file[dfd_at as usize..(dfd_at + dfd_len) as usize];
    if u64::from(u32_at(d, 0)) != dfd_len
        || d[12] != 1
        || u32_at(d, 20) != spec.texel_bytes() as u32
    {
        return Err(field(
            "dataFormatDescriptor",
            format!(
                "total size {}, colour model {}, {} bytes a texel",
                u32_at(d, 0),
                d[12],
                u32_at(d, 20)
            ),
            format!(
                "total size {dfd_len}, colour model 1 (RGBSDA), {} bytes a texel",
                spec.texel_bytes()
            ),
        ));
    }
    let (kvd_at, kvd_len) = (u64::from(word(11)), word(12));
    if kvd_len > MAX_KVD || kvd_at + u64::from(kvd_len) > len {
        return Err(field(
            "kvdByteOffset/kvdByteLength",
            format!("{kvd_at}/{kvd_len}"),
            format!("at most {MAX_KVD} bytes inside the {len}-byte file"),
        ));
    }
    let (offset, stored, raw) = (u64_at(file, 80), u64_at(file, 88), u64_at(file, 96));
    if raw != spec.data_bytes() {
        return Err(field(
            "levels[0].uncompressedByteLength",
            raw,
            spec.data_bytes(),
        ));
    }
    if !zstd && stored != raw {
        return Err(field("levels[0].byteLength", stored, raw));
    }
    match offset.checked_add(stored) {
        Some(end) if end == len && offset >= FIXED as u64 + 24 => {}
        _ => {
            return Err(field(
                "levels[0].byteOffset/byteLength",
                format!("{offset}/{stored}"),
                format!("data that ends the {len}-byte file"),
            ));
        }
    }
    Ok(&file[offset as usize..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_sizes_and_alignment() {
        let spec = GpuSpec {
            width: 3,
            height: 2,
            layers: 1,
            sample: SampleType::F32,
        };
        let h = header(&spec, false, 0);
        assert_eq!(h.len() % 16, 0, "RGBA32F level data starts on 16 bytes");
        assert_eq!(u64_at(&h, 80), h.len() as u64);
        assert_eq!(u64_at(&h, 96), 3 * 2 * 16);
        let mut file = h.clone();
        file.resize(h.len() + 96, 0);
        assert_eq!(level_data(&file, &spec, false).unwrap().len(), 96);
        // One byte short: the level no longer ends the file.
        file.pop();
        let e = level_data(&file, &spec, false).unwrap_err().to_string();
        assert!(e.contains("levels[0].byteOffset/byteLength"), "{e}");
    }

    #[test]
    fn a_header_that_disagrees_names_the_field() {
        let spec = GpuSpec {
            width: 4,
            height: 4,
            layers: 2,
            sample: SampleType::F16,
        };
        let mut file = header(&spec, false, 0);
        file.resize(file.len() + spec.data_bytes() as usize, 0);
        assert!(level_data(&file, &spec, false).is_ok());
        let wider = GpuSpec { width: 5, ..spec };
        let e = level_data(&file, &wider, false).unwrap_err().to_string();
        assert!(
            e.contains("`pixelWidth` is 4") && e.contains("say 5"),
            "{e}"
        );
        let plain = GpuSpec { layers: 1, ..spec };
        let e = level_data(&file, &plain, false).unwrap_err().to_string();
        assert!(e.contains("`layerCount` is 2"), "{e}");
        let e = level_data(&file, &spec, true).unwrap_err().to_string();
        assert!(e.contains("`supercompressionScheme` is 0"), "{e}");
    }
}
