//! The texture readers `verify`, `preview`, `view` and playback use on the
//! files beside a container: arbitrary bytes as an EXR, a 16-bit PNG, or a
//! KTX2 / Zstandard KTX2 / DDS file (the first byte picks; for the latter
//! the next four give the shape the records would expect: width, height,
//! layers, and the sample type, one of all five), the rest being the file.
//! Errors, never panics or huge allocations.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rigbake_format::texture::gpu::{self, TextureContainer};
use rigbake_format::texture::gpu_spec::{GpuSpec, SampleType};
use rigbake_format::texture::{exr, png};

fuzz_target!(|input: &[u8]| {
    let Some((&kind, bytes)) = input.split_first() else {
        return;
    };
    let reader = std::io::Cursor::new(bytes);
    match kind % 5 {
        0 => drop(exr::read(reader)),
        1 => drop(png::read(reader)),
        k => {
            let Some((shape, file)) = bytes.split_first_chunk::<4>() else {
                return;
            };
            let container = [
                TextureContainer::Ktx2,
                TextureContainer::Ktx2Zstd,
                TextureContainer::Dds,
            ][usize::from(k - 2)];
            let spec = GpuSpec {
                width: 1 + usize::from(shape[0]),
                height: 1 + usize::from(shape[1]),
                layers: 1 + usize::from(shape[2] % 8),
                sample: [
                    SampleType::F32,
                    SampleType::F16,
                    SampleType::Unorm16,
                    SampleType::Unorm8,
                    SampleType::Unorm10,
                ][usize::from(shape[3] % 5)],
            };
            let _ = gpu::read(file, container, &spec);
        }
    }
});
