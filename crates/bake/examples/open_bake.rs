//! Opens a bake and samples a clip's skin matrices at a time `t`, the way
//! an engine tool using the `rigbake` library would.
//!
//! ```text
//! cargo run -p rigbake --example open_bake [FILE.rigbake [CLIP [T]]]   (T defaults to 0.55 s)
//! ```
//!
//! Without a container it first bakes `fixtures/tentacle.glb` into a
//! temporary folder. The source model must lie beside the container under
//! the file name the bake recorded. `cargo test` runs it that way too (no
//! harness); arguments starting with `--` (the harness flags `cargo test --
//! ...` passes on) are ignored.

use std::error::Error;
use std::path::{Path, PathBuf};

use rigbake::playback::{self, Paths};
use rigbake::{BakeSettings, Baked, ModelInput, ModelJob, bake_key, bake_model, job::Silent};
use rigbake_core::runtime::PlayMode;

/// Bakes `fixtures/tentacle.glb` (with default settings) into `dir`; returns
/// the container.
fn bake_fixture(dir: &Path) -> Result<PathBuf, Box<dyn Error>> {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tentacle.glb");
    let settings = BakeSettings::default();
    // Read and parsed once: the key hashes it, the job imports it.
    let input = ModelInput::read(&model, &settings)?;
    let out_dir = dir.join("tentacle");
    // Recorded so that playback finds the model without being told.
    let location = rigbake::source_path::relative_source(&model, &out_dir);
    let key = bake_key(&input, &settings, false, location.as_deref())?;
    let job = ModelJob {
        input: &input,
        out_dir: &out_dir,
        settings: &settings,
        key: &key,
        shared: None,
        observer: &Silent,
        source_location: location.as_deref(),
        protected: None,
    };
    match bake_model(&job).map_err(|e| e.in_file(&model))? {
        Baked::Written { files, .. } => {
            println!("baked {} files into {}", files.len(), out_dir.display())
        }
        Baked::Skipped(reason) => return Err(reason.into()),
    }
    // `verify` and playback find the source beside the container.
    std::fs::copy(&model, out_dir.join("tentacle.glb"))?;
    Ok(rigbake::sink::container_path(&model, &out_dir))
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let scratch = tempfile::tempdir()?;
    let container = match args.first() {
        Some(file) => PathBuf::from(file),
        None => bake_fixture(scratch.path())?,
    };
    let t: f64 = args.get(2).map_or(Ok(0.55), |s| s.parse())?;

    let loaded = playback::load(&container, None, Paths::Bones)?;
    let bones = loaded
        .bones
        .as_ref()
        .ok_or("the bake has no bone-matrix textures with bone weights")?;
    let clip = match args.get(1) {
        Some(name) => loaded
            .clips
            .iter()
            .find(|c| &c.name == name)
            .ok_or_else(|| format!("no clip named `{name}`"))?,
        None => loaded.clips.first().ok_or("the bake has no clips")?,
    };
    let at = clip.info.sample(t, PlayMode::of(&clip.info));
    println!(
        "clip `{}` ({} frames at {} fps) at t = {t} s: row {} -> {} (fraction {:.3})",
        clip.name, clip.info.frames, clip.info.fps, at.row, at.next_row, at.fraction
    );

    let skin = &loaded.metadata.skins[0];
    let texture = &bones.textures[skin.texture as usize];
    let view = texture.view();
    for (joint, name) in skin.joints.iter().enumerate().take(4) {
        // What a shader does: fetch both rows and blend by the fraction.
        let a = view.bone_matrix(joint as u32, at.row);
        let b = view.bone_matrix(joint as u32, at.next_row);
        let rows: Vec<[f32; 4]> = a
            .iter()
            .zip(&b)
            .map(|(a, b)| a.lerp(*b, at.fraction).to_array())
            .collect();
        println!(
            "  joint {joint} `{name}`: translation ({:.4}, {:.4}, {:.4})",
            rows[0][3], rows[1][3], rows[2][3]
        );
    }
    Ok(())
}
