//! The software GPU: a wgpu device on Mesa's lavapipe (the Vulkan driver of
//! Debian's `mesa-vulkan-drivers`), or a visible skip when there is none.
//!
//! Only the Vulkan backend is compiled in, and only a CPU adapter
//! (`DeviceType::Cpu`, which is what lavapipe reports) is accepted, so the
//! results do not depend on whatever hardware GPU a machine happens to have.

use std::io::Write;

/// Set to `1` to make a missing lavapipe a failure instead of a skip (CI).
pub const REQUIRE_ENV: &str = "RIGBAKE_REQUIRE_LAVAPIPE";

/// A device and queue on the software Vulkan driver.
#[derive(Debug)]
pub struct Gpu {
    /// The logical device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// What the adapter says it is (driver name and version).
    pub description: String,
}

/// What a run needs beyond the WebGPU defaults: 16-bit unorm textures (the
/// PNG16 VAT encodings, sampled as unorm exactly as D3D, Vulkan and OpenGL
/// sample them) and the adapter's own size limits (VAT textures can be
/// large).
fn required_features() -> wgpu::Features {
    wgpu::Features::TEXTURE_FORMAT_16BIT_NORM
}

impl Gpu {
    /// Opens lavapipe; the error says why there is none.
    pub fn lavapipe() -> Result<Self, String> {
        let instance = wgpu::Instance::new(&wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            flags: wgpu::InstanceFlags::empty(),
            ..Default::default()
        });
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
        let seen: Vec<String> = adapters
            .iter()
            .map(|a| {
                let i = a.get_info();
                format!("{} ({:?})", i.name, i.device_type)
            })
            .collect();
        let adapter = adapters
            .into_iter()
            .find(|a| a.get_info().device_type == wgpu::DeviceType::Cpu)
            .ok_or_else(|| {
                format!(
                    "no software Vulkan adapter (lavapipe; Debian package mesa-vulkan-drivers); \
                     Vulkan adapters found: [{}]",
                    seen.join(", ")
                )
            })?;
        let info = adapter.get_info();
        let description = format!("{} ({} {})", info.name, info.driver, info.driver_info);
        if !adapter.features().contains(required_features()) {
            return Err(format!(
                "{description} lacks {:?}",
                required_features() - adapter.features()
            ));
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("rigbake shader-exec"),
            required_features: required_features(),
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| format!("{description}: cannot open a device: {e}"))?;
        Ok(Self {
            device,
            queue,
            description,
        })
    }
}

/// Whether [`REQUIRE_ENV`] asks for lavapipe.
pub fn required() -> bool {
    std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1")
}

/// Writes a line to the process's real standard error, past the test
/// harness's capture (which swallows `eprintln!` of passing tests).
pub fn say(line: &str) {
    let written = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/stderr")
        .and_then(|mut f| writeln!(f, "{line}"));
    if written.is_err() {
        eprintln!("{line}");
    }
}
