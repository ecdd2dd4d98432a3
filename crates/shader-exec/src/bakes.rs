//! In-memory bakes of a model through the same library calls the CLI makes
//! (`crates/cli/src/job`): bone-matrix textures with each skinned
//! primitive's bind pose and bone-weight channels, and `f32` vertex
//! animation textures (positions and normals) with each primitive's
//! playback-mesh vertices. Nothing is written to disk; the GPU and the CPU
//! reference then read the very same texels.

use std::path::Path;

use rigbake_core::Model;
use rigbake_core::bake::vat::{self, VatBaker, VatBatch, VatOptions};
use rigbake_core::bake::vertices::FrameVertices;
use rigbake_core::bake::weights::{self, channel_count};
use rigbake_core::bake::{self, BoneBakeOptions, BoneTexture};
use rigbake_core::import::{self, ImportOptions};
use rigbake_core::layout::MatrixLayout;
use rigbake_core::runtime::ClipInfo;
use rigbake_core::timeline::{Sampling, Timeline};

/// A model with its timeline (every animation, 30 fps, fixed rate, loops
/// detected: the CLI's defaults).
#[derive(Debug)]
pub struct Loaded {
    /// Display name.
    pub name: String,
    /// The imported model.
    pub model: Model,
    /// Its timeline.
    pub timeline: Timeline,
}

impl Loaded {
    /// Imports `bytes` (a GLB or self-contained glTF named `name`) with the
    /// animations named in `clips` (every one when empty).
    pub fn from_bytes(name: &str, bytes: &[u8], clips: &[&str]) -> Result<Self, String> {
        let model = import::import_bytes(Path::new(name), bytes, &ImportOptions::default())
            .map_err(|e| e.to_string())?;
        let names: Vec<String> = clips.iter().map(|c| (*c).to_owned()).collect();
        let timeline = Timeline::named_clips(&model, Sampling::default(), &names)
            .map_err(|e| format!("{name}: {e}"))?;
        Ok(Self {
            name: name.to_owned(),
            model,
            timeline,
        })
    }

    /// Imports the file at `path`.
    pub fn from_file(path: &Path) -> Result<Self, String> {
        let model =
            import::import_file(path, &ImportOptions::default()).map_err(|e| e.to_string())?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self::with_timeline(&name, model)
    }

    fn with_timeline(name: &str, model: Model) -> Result<Self, String> {
        let timeline =
            Timeline::all_clips(&model, Sampling::default()).map_err(|e| format!("{name}: {e}"))?;
        Ok(Self {
            name: name.to_owned(),
            model,
            timeline,
        })
    }

    /// The clip table as the runtime sees it.
    pub fn clips(&self) -> Vec<ClipInfo> {
        let sampling = self.timeline.sampling;
        self.timeline
            .clips
            .iter()
            .map(|c| ClipInfo {
                start_row: c.start_row as u32,
                frames: c.frames as u32,
                fps: sampling.fps,
                duration: c.duration,
                looping: c.looping,
                rule: sampling.rule,
            })
            .collect()
    }
}

/// One skinned primitive as the bone-matrix shader sees it.
#[derive(Debug, Clone)]
pub struct BonePrimitive {
    /// `node name / primitive index`, for messages.
    pub name: String,
    /// Index of its texture in [`BoneBake::textures`].
    pub texture: usize,
    /// Bind-pose positions (the weights mesh).
    pub positions: Vec<[f32; 3]>,
    /// Bind-pose normals, when the primitive has them.
    pub normals: Option<Vec<[f32; 3]>>,
    /// `channels` vec4s per vertex: `(bone, weight, bone, weight)`.
    pub channels: Vec<[f32; 4]>,
}

/// A model's bone-matrix bake.
#[derive(Debug)]
pub struct BoneBake {
    /// One texture per bone set.
    pub textures: Vec<BoneTexture>,
    /// Every skinned primitive instance.
    pub primitives: Vec<BonePrimitive>,
    /// UV channels per vertex (`channel_count(max_influences)`).
    pub channels: usize,
}

/// Bakes bone textures in `layout` and reduces every skinned primitive to
/// `max_influences` (as `rigbake bake --layout --max-influences` does).
pub fn bone_bake(
    loaded: &Loaded,
    layout: MatrixLayout,
    max_influences: usize,
) -> Result<BoneBake, String> {
    let max = BoneBakeOptions::default().max_texture_size;
    bone_bake_within(loaded, layout, max_influences, max)
}

/// [`bone_bake`] within `max_texture_size` texels per side (as
/// `--max-texture-size`): textures with more rows fold into column blocks.
pub fn bone_bake_within(
    loaded: &Loaded,
    layout: MatrixLayout,
    max_influences: usize,
    max_texture_size: usize,
) -> Result<BoneBake, String> {
    let (model, name) = (&loaded.model, &loaded.name);
    let options = BoneBakeOptions {
        layout,
        max_texture_size,
        ..BoneBakeOptions::default()
    };
    let textures = bake::bake_bone_textures(model, &loaded.timeline, &options)
        .map_err(|e| format!("{name}: {e}"))?;
    let mut primitives = Vec::new();
    for (node, p) in weights::skinned_primitives(model) {
        let texture = textures
            .iter()
            .position(|t| t.set.members.contains(&node))
            .ok_or_else(|| format!("{name}: nodes[{node}] has no bone texture"))?;
        let reduced = weights::reduce_primitive(model, node, p, max_influences)
            .map_err(|e| format!("{name}: {e}"))?;
        let src = &model.meshes[reduced.mesh].primitives[p];
        let bind = FrameVertices::bind_pose(src);
        primitives.push(BonePrimitive {
            name: format!("{}/{p}", model.nodes[node].name),
            texture,
            positions: bind.positions,
            normals: bind.normals,
            channels: reduced.channels(),
        });
    }
    Ok(BoneBake {
        textures,
        primitives,
        channels: channel_count(max_influences),
    })
}

/// One primitive's vertex animation textures, decoded to RGBA `f32`.
#[derive(Debug, Clone)]
pub struct VatPrimitive {
    /// `node name / primitive index`, for messages.
    pub name: String,
    /// Texture width.
    pub width: u32,
    /// Texture rows per frame.
    pub bands: u32,
    /// Timeline rows.
    pub frames: u32,
    /// Texture height (`frames * bands`, or more when padded).
    pub height: u32,
    /// Vertices.
    pub vertices: u32,
    /// First vertex in the texture set (0: the bake is per primitive).
    pub first_vertex: u32,
    /// Positions texture, RGBA (`w` = 0).
    pub positions: Vec<f32>,
    /// Normals texture, RGBA (`w` = 0), when baked.
    pub normals: Option<Vec<f32>>,
    /// What the playback mesh holds (row 0).
    pub rest_positions: Vec<[f32; 3]>,
    /// Its normals.
    pub rest_normals: Option<Vec<[f32; 3]>>,
}

/// Planar rows (3 planes of `width` per row) to RGBA texels.
fn planar_to_rgba(planar: &[f32], width: usize, rows: usize) -> Vec<f32> {
    let mut out = vec![0.0; width * rows * 4];
    for r in 0..rows {
        let row = &planar[r * width * 3..(r + 1) * width * 3];
        for x in 0..width {
            let at = (r * width + x) * 4;
            for c in 0..3 {
                out[at + c] = row[c * width + x];
            }
        }
    }
    out
}

/// VAT texture size limits (the CLI's `--max-texture-size` and
/// `--power-of-two` for VATs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VatShape {
    /// Largest width and height.
    pub max_texture_size: usize,
    /// Round sizes up to powers of two (padding texels and rows).
    pub power_of_two: bool,
    /// One texture set for every primitive (`--vat-layout atlas`; each
    /// primitive then carries a copy of the atlas and its first vertex).
    pub atlas: bool,
}

impl VatShape {
    /// The CLI's defaults.
    pub fn cli_default() -> Self {
        let d = VatOptions::default();
        Self {
            max_texture_size: d.max_texture_size,
            power_of_two: d.power_of_two,
            atlas: false,
        }
    }
}

/// Texel rows of `l` unfolded: its height, or `frames * bands` when the
/// plan folds it (the harness folds textures itself,
/// `compare::vat_path_folded`).
fn unfolded_height(l: &vat::VatLayout) -> usize {
    if l.is_folded() {
        l.frames * l.bands
    } else {
        l.height
    }
}

/// Bakes the VAT of every primitive (positions and normals, the exact
/// normal convention, wrapped within `shape`), as `f32` texels of the
/// unfolded layout.
pub fn vat_bake(loaded: &Loaded, shape: VatShape) -> Result<Vec<VatPrimitive>, String> {
    let (model, name) = (&loaded.model, &loaded.name);
    let options = VatOptions {
        normals: true,
        max_texture_size: shape.max_texture_size,
        power_of_two: shape.power_of_two,
        layout: if shape.atlas {
            vat::VatLayoutMode::Atlas
        } else {
            vat::VatLayoutMode::PerPrimitive
        },
        ..VatOptions::default()
    };
    let plan = vat::plan(model, &loaded.timeline, &options).map_err(|e| format!("{name}: {e}"))?;
    let baker = VatBaker::new(model, &loaded.timeline, plan, options.convention)
        .map_err(|e| format!("{name}: {e}"))?;
    // Every texture set's textures, filled once.
    let mut sets = Vec::new();
    for (index, set) in baker.plan().sets.iter().enumerate() {
        let l = set.layout;
        let height = unfolded_height(&l);
        let mut positions = vec![0.0; l.width * height * 3];
        let mut normals = set.normals.then(|| vec![0.0; l.width * height * 3]);
        baker
            .fill(
                index,
                0,
                height,
                VatBatch {
                    positions: &mut positions,
                    normals: normals.as_deref_mut(),
                    tangents: None,
                },
            )
            .expect("the test bakes are finite");
        sets.push((
            planar_to_rgba(&positions, l.width, height),
            normals.map(|n| planar_to_rgba(&n, l.width, height)),
        ));
    }
    let mut out = Vec::new();
    for (index, p) in baker.plan().primitives.iter().enumerate() {
        let l = p.layout;
        let (positions, normals) = &sets[p.set];
        let rest = baker.vertices_at(index, 0);
        out.push(VatPrimitive {
            name: format!("{}/{}", model.nodes[p.node].name, p.primitive),
            width: l.width as u32,
            bands: l.bands as u32,
            frames: l.frames as u32,
            height: unfolded_height(&l) as u32,
            vertices: p.vertices as u32,
            first_vertex: p.first_vertex as u32,
            positions: positions.clone(),
            normals: normals.clone().filter(|_| p.normals),
            rest_positions: rest.positions,
            rest_normals: rest.normals.filter(|_| p.normals),
        });
    }
    Ok(out)
}
