//! A bake loaded for playback: the container's records, the source model it
//! was made from, and every texture decoded into what the runtime reference
//! (`rigbake_core::runtime`) reads. Shared by `rigbake verify` and
//! `rigbake preview`.
//!
//! Primitives in the records are matched to the source by node name, mesh
//! name and primitive index (the k-th record naming a node takes the k-th
//! node of that name); clips by position when the clip table lists the
//! source's animations in order, else by name.

mod source;
mod textures;

use std::path::{Path, PathBuf};

use glam::Vec3;
use rayon::prelude::*;
use rigbake_core::Model;
use rigbake_core::bake::anchors;
use rigbake_core::bake::bones::bone_sets;
use rigbake_core::bake::vat::NormalConvention;
use rigbake_core::bake::vertices::FrameVertices;
use rigbake_core::fold::Fold;
use rigbake_core::layout::MatrixLayout;
use rigbake_core::model::Primitive;
use rigbake_core::runtime::ClipInfo;
use rigbake_core::runtime::bone_path::BoneTextureView;
use rigbake_core::runtime::vat_path::VatAddress;
use rigbake_core::timeline::ClipSource;
use rigbake_format::container::Container;
use rigbake_format::meta::{self, Metadata};

use crate::records;

pub use source::{SourceModel, find_source};
pub use textures::{Decode, VatPages, VatTexture};

/// Why a bake could not be loaded. What a caller makes of it (an exit
/// code, a message) is the caller's business.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// An input the bake needs is not where the bake recorded it, was
    /// changed since, or is not a regular file (the source model, a LOD
    /// file, `--source`): the message says what was tried and what to give.
    NotFound(String),
    /// A file is damaged, inconsistent or unreadable.
    Damaged(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFound(m) | Self::Damaged(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for LoadError {}

/// One clip of the clip table, ready to play and to evaluate directly.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedClip {
    /// Clip name.
    pub name: String,
    /// The runtime's view of the clip.
    pub info: ClipInfo,
    /// What it samples: a (range of an) animation of the source, two
    /// animations blended, or the rest pose.
    pub source: ClipSource,
    /// The root motion taken out of the clip when it was baked in place
    /// (`None`: the clip keeps its motion).
    pub root_motion: Option<LoadedRootMotion>,
}

/// A clip's recorded root-motion track (see
/// [`rigbake_core::runtime::root_motion`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedRootMotion {
    /// Per frame, `[x, y, z, yaw]`.
    pub frames: Vec<[f64; 4]>,
    /// The motion at the clip's end.
    pub end: [f64; 4],
}

impl LoadedRootMotion {
    /// The track as the runtime reads it.
    pub fn track(&self) -> rigbake_core::runtime::root_motion::RootMotionTrack<'_> {
        rigbake_core::runtime::root_motion::RootMotionTrack {
            frames: &self.frames,
            end: self.end,
        }
    }
}

/// One bone-matrix texture (one bone set).
#[derive(Debug, Clone)]
pub struct BoneTexture {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Timeline rows.
    pub rows: u32,
    /// Where each timeline row is (the layout record's fold, or unfolded).
    pub fold: Fold,
    /// Matrix layout.
    pub layout: MatrixLayout,
    /// RGBA floats.
    pub texels: Vec<f32>,
    /// Recorded encoding error (matrix-entry units).
    pub max_error: f64,
    /// The mesh node whose space the matrices are in.
    pub space_node: usize,
    /// For `qts` at `unorm16`, the range of the normalised channels (the
    /// bone-range record's); `None` for float textures.
    pub range: Option<rigbake_types::qts::Range>,
}

impl BoneTexture {
    /// The texture as the runtime reference (a shader) sees it.
    pub fn view(&self) -> BoneTextureView<'_> {
        BoneTextureView {
            width: self.width,
            height: self.height,
            rows: self.rows,
            fold: self.fold,
            layout: self.layout,
            texels: &self.texels,
            range: self.range,
        }
    }
}

/// The fold a layout record gives `texture`, or `unfolded` when it lists none.
pub fn fold_of(
    layout: Option<&meta::LayoutMetadata>,
    texture: meta::FoldedTexture,
    unfolded: Fold,
) -> Fold {
    layout
        .and_then(|l| l.folds.iter().find(|f| f.texture == texture))
        .map_or(unfolded, |f| Fold {
            rows_per_block: f.rows_per_block,
            row_height: f.row_height,
            block_width: f.block_width,
            blocks_per_page: f.blocks_per_page,
            pages: f.pages,
        })
}

/// One skinned primitive with its bone-weight channels.
#[derive(Debug, Clone)]
pub struct BonePrimitive {
    /// Source node instancing the mesh.
    pub node: usize,
    /// Primitive index in the node's mesh.
    pub primitive: usize,
    /// Bone set (index into [`BonePlayback::textures`]).
    pub set: usize,
    /// `channels` RGBA channels per vertex, vertex by vertex.
    pub channels: Vec<[f32; 4]>,
    /// Recorded truncation error in model units.
    pub position_error: f64,
    /// Whether weight was dropped from any vertex (max influences).
    pub truncated: bool,
    /// For a rigid prop bound to its joint: the vertices in the joint's bind
    /// space, which the weights mesh carries instead of the source's (see
    /// `rigbake_core::bake::anchors::bind_prop`).
    pub bound: Option<FrameVertices>,
}

impl BonePrimitive {
    /// The position and normal of vertex `v` as the weights mesh gives them
    /// to a shader: the bound prop's, else the source primitive's.
    pub fn vertex(&self, src: &Primitive, v: usize) -> (Vec3, Option<Vec3>) {
        match &self.bound {
            Some(b) => (
                Vec3::from(b.positions[v]),
                b.normals.as_ref().map(|n| Vec3::from(n[v])),
            ),
            None => (src.positions[v], src.normals.as_ref().map(|n| n[v])),
        }
    }
}

/// The bone-matrix path of a bake.
#[derive(Debug, Clone)]
pub struct BonePlayback {
    /// Channels per vertex.
    pub channels: usize,
    /// One texture per bone set, in `skins[]` order.
    pub textures: Vec<BoneTexture>,
    /// Every skinned primitive of the weights record.
    pub primitives: Vec<BonePrimitive>,
}

/// One baked VAT primitive.
#[derive(Debug, Clone)]
pub struct VatPrimitive {
    /// Source node instancing the mesh.
    pub node: usize,
    /// Primitive index in the node's mesh.
    pub primitive: usize,
    /// Texel addressing.
    pub address: VatAddress,
    /// Positions (one texture per page).
    pub positions: VatPages,
    /// Normals, if baked (one texture per page).
    pub normals: Option<VatPages>,
}

/// The VAT path of a bake.
#[derive(Debug, Clone)]
pub struct VatPlayback {
    /// Node whose space the values are in (`None`: the scene root).
    pub reference_node: Option<usize>,
    /// Normal convention the bake used.
    pub convention: NormalConvention,
    /// Every baked primitive.
    pub primitives: Vec<VatPrimitive>,
}

impl VatPlayback {
    /// Whether any texture is read on demand ([`Decode::Rows`]): then
    /// only what [`VatPlayback::window`] decoded can be played.
    pub fn is_deferred(&self) -> bool {
        self.streams()
            .any(|(_, pages)| pages.pages.iter().any(VatTexture::is_deferred))
    }

    /// Bytes one timeline row takes decoded, over every deferred texture
    /// (each file counted once): what a window of `n` rows costs is about
    /// `n` times this.
    pub fn row_bytes(&self) -> u64 {
        let mut seen = std::collections::BTreeSet::new();
        let mut total = 0u64;
        for (address, pages) in self.streams() {
            for page in &pages.pages {
                if let Some(key) = page.deferred_key()
                    && seen.insert(key)
                {
                    let rows_per_frame = u64::from(address.bands.max(1));
                    total = total.saturating_add(page.row_bytes().saturating_mul(rows_per_frame));
                }
            }
        }
        total
    }

    /// Every stream (positions, normals) of every primitive with its
    /// address.
    fn streams(&self) -> impl Iterator<Item = (&VatAddress, &VatPages)> {
        self.primitives.iter().flat_map(|p| {
            std::iter::once((&p.address, &p.positions))
                .chain(p.normals.as_ref().map(|n| (&p.address, n)))
        })
    }

    /// This playback holding the texture rows that timeline rows `rows`
    /// need decoded (every band, on the page each row is on): deferred
    /// textures are read (each file once, however many primitives share
    /// it), textures decoded whole are shared as they are. A timeline row
    /// outside the window reads as zero samples.
    pub fn window(&self, rows: &[u32]) -> Result<VatPlayback, LoadError> {
        use std::collections::{BTreeMap, BTreeSet};
        // Pass 1: the texture rows every deferred file must give.
        let mut wanted: BTreeMap<usize, (&VatTexture, BTreeSet<u32>)> = BTreeMap::new();
        for (address, pages) in self.streams() {
            for (k, page) in pages.pages.iter().enumerate() {
                let Some(key) = page.deferred_key() else {
                    continue;
                };
                let entry = wanted.entry(key).or_insert_with(|| (page, BTreeSet::new()));
                let height = page.height();
                for &row in rows {
                    let (on, ys) = address.texture_rows(row);
                    if on as usize == k {
                        entry.1.extend(ys.start.min(height)..ys.end.min(height));
                    }
                }
            }
        }
        // Pass 2: each file read once, the files in parallel.
        let wanted: Vec<(usize, &VatTexture, Vec<u32>)> = wanted
            .into_iter()
            .map(|(key, (page, ys))| (key, page, ys.into_iter().collect()))
            .collect();
        let decoded: BTreeMap<usize, VatTexture> = wanted
            .par_iter()
            .map(|(key, page, ys)| Ok((*key, page.with_rows(ys)?)))
            .collect::<Result<_, LoadError>>()?;
        // Pass 3: the primitives on the decoded windows.
        let window = |pages: &VatPages| VatPages {
            pages: pages
                .pages
                .iter()
                .map(|p| match p.deferred_key().and_then(|k| decoded.get(&k)) {
                    Some(d) => d.clone(),
                    None => p.clone(),
                })
                .collect(),
        };
        Ok(VatPlayback {
            reference_node: self.reference_node,
            convention: self.convention,
            primitives: self
                .primitives
                .iter()
                .map(|p| VatPrimitive {
                    positions: window(&p.positions),
                    normals: p.normals.as_ref().map(window),
                    ..p.clone()
                })
                .collect(),
        })
    }
}

/// A bake and its source, loaded.
#[derive(Debug)]
pub struct Loaded {
    /// The container file.
    pub file: PathBuf,
    /// The bake metadata.
    pub metadata: Metadata,
    /// The source model.
    pub source: SourceModel,
    /// The clip table.
    pub clips: Vec<LoadedClip>,
    /// The bone-matrix path, when the bake has bone textures and weights.
    pub bones: Option<BonePlayback>,
    /// The VAT path, when the bake has one.
    pub vat: Option<VatPlayback>,
    /// Per node of the source model, its level in a LOD group of the bake
    /// (`None`: in no group), so a picture can draw one level.
    pub lod_levels: Vec<Option<usize>>,
    /// Texture files whose bytes differ from the recorded checksum (they
    /// are still decoded so the comparison can show the damage).
    pub checksum_mismatches: Vec<String>,
    /// Every optional record of the container, as read (the placement
    /// record, format 1.11 and later, says where the outputs' spaces stand
    /// in the scene).
    pub records: rigbake_format::records::Records,
}

/// Which playback paths to load (decoded VAT textures can be large).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paths {
    /// Every path the bake holds.
    All,
    /// The bone-matrix path only.
    Bones,
    /// The VAT path only.
    Vat,
    /// The bone-matrix path when the bake has one, else the VAT path.
    BonesElseVat,
}

/// Opens `file`, finds and imports its source (`source` or the recorded file
/// name beside the container) and decodes the textures of `paths`, whole.
pub fn load(file: &Path, source: Option<&Path>, paths: Paths) -> Result<Loaded, LoadError> {
    load_with(file, source, paths, Decode::Whole)
}

/// [`load`], with the vertex animation textures decoded as `decode` says:
/// with [`Decode::Rows`] they stay on disk until
/// [`VatPlayback::window`] reads the rows a caller plays (`verify` and
/// `preview` never hold a large bake whole).
pub fn load_with(
    file: &Path,
    source: Option<&Path>,
    paths: Paths,
    decode: Decode,
) -> Result<Loaded, LoadError> {
    let fail =
        |e: rigbake_format::FormatError| LoadError::Damaged(format!("{}: {e}", file.display()));
    let mut container = Container::open(file).map_err(fail)?;
    let metadata = container.metadata().clone();
    let records = container.records().clone();
    let mut source = source::load_source(file, &metadata, records.source.as_ref(), source)?;
    source::attach_lod_files(
        file,
        &mut source,
        records.lods.as_ref(),
        records.lod_details.as_ref(),
    )?;
    let model = &source.model;
    let mut clips = load_clips(file, &metadata, records.rig.as_ref(), model)?;
    if let Some(record) = &records.root_motion {
        for (clip, motion) in clips.iter_mut().zip(&record.clips) {
            clip.root_motion = motion.mode.extracts().then(|| LoadedRootMotion {
                frames: motion.track.clone(),
                end: motion.end,
            });
        }
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    let weights = records
        .weights
        .as_ref()
        .filter(|_| !metadata.textures.is_empty());
    let texture_layout = records.layout.as_ref();
    let placement = texture_layout.and_then(|l| l.vat.as_ref());
    let (want_bones, want_vat) = match paths {
        Paths::All => (true, true),
        Paths::Bones => (true, false),
        Paths::Vat => (false, true),
        Paths::BonesElseVat => (weights.is_some(), weights.is_none()),
    };
    let mut reader = textures::TextureReader {
        file,
        dir,
        container: &mut container,
        mismatches: Vec::new(),
        layered: None,
    };
    let bones = match weights.filter(|_| want_bones) {
        Some(w) => Some(load_bones(
            &mut reader,
            &metadata,
            w,
            texture_layout,
            model,
        )?),
        None => None,
    };
    let vat = match records.vat.as_ref().filter(|_| want_vat) {
        Some(v) => Some(load_vat(
            &mut reader,
            v,
            placement,
            texture_layout,
            model,
            decode,
        )?),
        None => None,
    };
    let mismatches = reader.mismatches;
    let lod_levels = lod_levels(records.lods.as_ref(), model);
    Ok(Loaded {
        file: file.to_path_buf(),
        metadata,
        source,
        clips,
        bones,
        vat,
        lod_levels,
        checksum_mismatches: mismatches,
        records,
    })
}

/// The LOD level of every node of `model`: from the bake's LOD record
/// (its groups whichever way they were declared, the manifest's included;
/// levels name their mesh nodes), else, for containers without one, as
/// the source itself declares them (`MSFT_lod`, `_LOD<n>` names).
fn lod_levels(record: Option<&meta::LodsMetadata>, model: &Model) -> Vec<Option<usize>> {
    let Some(record) = record else {
        return rigbake_core::lod::level_of(model)
            .into_iter()
            .map(|l| l.map(|(_, level)| level))
            .collect();
    };
    let mut out = vec![None; model.nodes.len()];
    for group in &record.groups {
        for (level, l) in group.levels.iter().enumerate() {
            let node = model
                .nodes
                .iter()
                .position(|n| n.name == l.node && n.mesh.is_some());
            if let Some(slot) = node.and_then(|n| out.get_mut(n)) {
                *slot = Some(level);
            }
        }
    }
    out
}

fn load_clips(
    file: &Path,
    metadata: &Metadata,
    rig: Option<&meta::RigMetadata>,
    model: &Model,
) -> Result<Vec<LoadedClip>, LoadError> {
    let in_order = metadata.clips.len() == model.clips.len()
        && metadata
            .clips
            .iter()
            .zip(&model.clips)
            .all(|(a, b)| a.name == b.name);
    let origins = rig.map(|r| r.clip_origins.as_slice()).unwrap_or_default();
    let animation = |name: &str| {
        model
            .clips
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| {
                LoadError::Damaged(format!(
                    "{}: clip `{name}` is not an animation of the source model",
                    file.display()
                ))
            })
    };
    metadata
        .clips
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let origin = origins.iter().find(|o| match o {
                meta::ClipOrigin::Range { clip, .. } | meta::ClipOrigin::Blend { clip, .. } => {
                    *clip as usize == i
                }
            });
            let source = match origin {
                Some(o) => records::clip_source(o, animation)?,
                None if in_order => whole(model, i),
                None if c.name == "rest" && model.clips.is_empty() => ClipSource::Rest,
                None => whole(model, animation(&c.name)?),
            };
            Ok(LoadedClip {
                name: c.name.clone(),
                info: records::clip_info(c, metadata.options.sampling),
                source,
                root_motion: None,
            })
        })
        .collect()
}

/// All of animation `clip`.
fn whole(model: &Model, clip: usize) -> ClipSource {
    ClipSource::Animation {
        clip,
        start: 0.0,
        end: model.clips[clip].duration,
    }
}

/// Matches record entries to source nodes: the k-th entry naming a node
/// gets the k-th node of that name holding a mesh of that name.
#[derive(Debug, Default)]
struct Matcher {
    used: Vec<(usize, usize)>,
}

impl Matcher {
    fn find(
        &mut self,
        file: &Path,
        model: &Model,
        node: &str,
        mesh: &str,
        primitive: u32,
    ) -> Result<(usize, usize), LoadError> {
        let primitive = primitive as usize;
        let found = model.nodes.iter().enumerate().find(|(i, n)| {
            n.name == node
                && n.mesh.is_some_and(|m| {
                    model.meshes[m].name == mesh && primitive < model.meshes[m].primitives.len()
                })
                && !self.used.contains(&(*i, primitive))
        });
        match found {
            Some((i, _)) => {
                self.used.push((i, primitive));
                Ok((i, primitive))
            }
            None => Err(LoadError::Damaged(format!(
                "{}: the source has no node `{node}` with mesh `{mesh}` primitive {primitive} (is it the model the bake was made from?)",
                file.display()
            ))),
        }
    }
}

/// Why a record's space node cannot be found in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpaceNodeError {
    /// No node of that name holds a mesh.
    Missing,
    /// Several nodes of that name hold a mesh (their indices, in node
    /// order): the record does not say which one.
    Ambiguous(Vec<usize>),
}

impl std::fmt::Display for SpaceNodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing => f.write_str("no mesh node of the source has that name"),
            Self::Ambiguous(nodes) => {
                let listed: Vec<String> = nodes
                    .iter()
                    .take(5)
                    .map(|n| format!("nodes[{n}]"))
                    .collect();
                write!(
                    f,
                    "{} mesh nodes of the source share that name ({}{}); the record does not say which",
                    nodes.len(),
                    listed.join(", "),
                    if nodes.len() > 5 { ", ..." } else { "" }
                )
            }
        }
    }
}

/// The space node a record names (a placement's node, a bone set's or the
/// VAT's space): the one node called `name` that holds a mesh. A space is
/// always a mesh node, so a bone or an empty of the same name never
/// matches; a name that several mesh nodes share is an error listing
/// them, never resolved to the first silently.
pub fn space_node(model: &Model, name: &str) -> Result<usize, SpaceNodeError> {
    let mut found = model
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.name == name && n.mesh.is_some())
        .map(|(i, _)| i);
    let Some(first) = found.next() else {
        return Err(SpaceNodeError::Missing);
    };
    let rest: Vec<usize> = found.collect();
    if rest.is_empty() {
        Ok(first)
    } else {
        Err(SpaceNodeError::Ambiguous(
            std::iter::once(first).chain(rest).collect(),
        ))
    }
}

/// The node named `name` that holds a mesh (a bone set's or VAT space node).
fn mesh_node(file: &Path, model: &Model, name: &str) -> Result<usize, LoadError> {
    model
        .nodes
        .iter()
        .position(|n| n.name == name && n.mesh.is_some())
        .ok_or_else(|| {
            LoadError::Damaged(format!(
                "{}: the source has no mesh node `{name}`",
                file.display()
            ))
        })
}

fn vertex_count_matches(
    file: &Path,
    model: &Model,
    node: usize,
    primitive: usize,
    vertices: u32,
) -> Result<(), LoadError> {
    let mesh = model.nodes[node].mesh.unwrap_or_default();
    let have = model.meshes[mesh].primitives[primitive].vertex_count();
    if have == vertices as usize {
        Ok(())
    } else {
        Err(LoadError::Damaged(format!(
            "{}: node `{}` primitive {primitive} has {have} vertices in the source but {vertices} in the bake",
            file.display(),
            model.nodes[node].name
        )))
    }
}

fn load_bones(
    reader: &mut textures::TextureReader<'_>,
    metadata: &Metadata,
    weights: &meta::WeightsMetadata,
    layout: Option<&meta::LayoutMetadata>,
    model: &Model,
) -> Result<BonePlayback, LoadError> {
    let file = reader.file;
    let rows = metadata
        .clips
        .iter()
        .map(|c| c.start_row.saturating_add(c.frames))
        .max()
        .unwrap_or(0);
    let mut textures = Vec::with_capacity(metadata.skins.len());
    for skin in &metadata.skins {
        let Some(tex) = metadata.textures.get(skin.texture as usize) else {
            return Err(LoadError::Damaged(format!(
                "{}: skin `{}` refers to texture {}, which does not exist",
                file.display(),
                skin.name,
                skin.texture
            )));
        };
        let space = skin.mesh_nodes.first().map(String::as_str).unwrap_or("");
        let space_node = mesh_node(file, model, space)?;
        let per_joint = tex.layout.pixels_per_joint() as u64;
        let need = textures::Need {
            texels: (skin.joints.len() as u64 * per_joint).saturating_mul(u64::from(rows)),
            vertices: 0,
            rows: u64::from(rows),
        };
        let mut texture = textures::bone_texture(reader, tex, space_node, &need)?;
        // Checked on open: a unorm16 texture has its range.
        texture.range = reader
            .container
            .records()
            .bone_ranges
            .as_ref()
            .and_then(|r| r.textures.get(skin.texture as usize).copied().flatten());
        // Checked on open: the clips' rows fit the texture through its fold.
        texture.rows = rows;
        texture.fold = fold_of(
            layout,
            meta::FoldedTexture::Bones(skin.texture),
            Fold::unfolded(tex.width, 1, tex.height),
        );
        textures.push(texture);
    }
    let channels = weights.channels as usize;
    let mut matcher = Matcher::default();
    let sets = bone_sets(model);
    let props = anchors::find_props(model, &sets);
    let mut primitives = Vec::with_capacity(weights.primitives.len());
    for p in &weights.primitives {
        let (node, primitive) = matcher.find(file, model, &p.node, &p.mesh, p.primitive)?;
        vertex_count_matches(file, model, node, primitive, p.vertices)?;
        if p.skin as usize >= textures.len() {
            return Err(LoadError::Damaged(format!(
                "{}: weights of node `{}` refer to bone set {}, which does not exist",
                file.display(),
                p.node,
                p.skin
            )));
        }
        let bytes = reader
            .container
            .read_section(p.section as usize)
            .map_err(|e| LoadError::Damaged(format!("{}: {e}", file.display())))?;
        let values: Vec<[f32; 4]> = bytes
            .chunks_exact(16)
            .map(|b| {
                let f = |i: usize| f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                [f(0), f(4), f(8), f(12)]
            })
            .collect();
        if values.len() != p.vertices as usize * channels {
            return Err(LoadError::Damaged(format!(
                "{}: weights of node `{}` hold {} channels, expected {}",
                file.display(),
                p.node,
                values.len(),
                p.vertices as usize * channels
            )));
        }
        let bound = match &p.bound_to {
            None => None,
            Some(joint) => {
                let prop = props
                    .iter()
                    .find(|prop| prop.node == node && model.nodes[prop.joint_node].name == *joint);
                let Some(prop) = prop else {
                    return Err(LoadError::Damaged(format!(
                        "{}: weights of node `{}` are bound to joint `{joint}`, but the source has no such prop",
                        file.display(),
                        p.node
                    )));
                };
                let bound = anchors::bind_prop(model, &sets, prop)
                    .map_err(|e| LoadError::Damaged(format!("{}: {e}", file.display())))?;
                bound.primitives.into_iter().nth(primitive)
            }
        };
        primitives.push(BonePrimitive {
            node,
            primitive,
            set: p.skin as usize,
            channels: values,
            position_error: p.position_error,
            truncated: p.dropped_max > 0.0,
            bound,
        });
    }
    Ok(BonePlayback {
        channels,
        textures,
        primitives,
    })
}

/// What the model's data needs of each VAT stream (keyed by its first
/// texture): the vertices of every primitive the stream serves (their
/// counts already matched with the source) times its frames.
fn vat_needs(vat: &meta::VatMetadata) -> std::collections::BTreeMap<u32, textures::Need> {
    let mut needs: std::collections::BTreeMap<u32, textures::Need> = Default::default();
    for p in &vat.primitives {
        for first in [Some(p.positions), p.normals, p.tangents]
            .into_iter()
            .flatten()
        {
            let need = needs.entry(first).or_default();
            need.texels = need
                .texels
                .saturating_add(u64::from(p.vertices).saturating_mul(u64::from(p.frames)));
            need.vertices = need.vertices.saturating_add(u64::from(p.vertices));
            need.rows = need.rows.max(u64::from(p.frames));
        }
    }
    needs
}

fn load_vat(
    reader: &mut textures::TextureReader<'_>,
    vat: &meta::VatMetadata,
    placement: Option<&meta::VatPlacement>,
    layout: Option<&meta::LayoutMetadata>,
    model: &Model,
    how: Decode,
) -> Result<VatPlayback, LoadError> {
    let file = reader.file;
    let reference_node = match &vat.reference_node {
        Some(name) => Some(mesh_node(file, model, name)?),
        None => None,
    };
    let texture = |i: u32| {
        vat.textures.get(i as usize).ok_or_else(|| {
            LoadError::Damaged(format!(
                "{}: VAT texture {i} does not exist",
                file.display()
            ))
        })
    };
    let mut matcher = Matcher::default();
    // Every primitive matched to the source first: the vertex counts the
    // textures are bounded by are the source's own.
    let found = vat
        .primitives
        .iter()
        .map(|p| {
            let (node, primitive) = matcher.find(file, model, &p.node, &p.mesh, p.primitive)?;
            vertex_count_matches(file, model, node, primitive, p.vertices)?;
            Ok((node, primitive))
        })
        .collect::<Result<Vec<_>, LoadError>>()?;
    let needs = vat_needs(vat);
    let mut primitives = Vec::with_capacity(vat.primitives.len());
    // Decoded once per texture: an atlas is shared by every primitive.
    let mut decoded: std::collections::BTreeMap<u32, VatTexture> = Default::default();
    let mut decode = |reader: &mut textures::TextureReader<'_>, first: u32, k: u32, pages: u32| {
        let i = first.saturating_add(k);
        if let Some(t) = decoded.get(&i) {
            return Ok(t.clone());
        }
        let need = needs.get(&first).cloned().unwrap_or_default();
        let t = textures::vat_texture(reader, texture(i)?, (k, pages), how, &need)?;
        decoded.insert(i, t.clone());
        Ok::<_, LoadError>(t)
    };
    for (k, (p, &(node, primitive))) in vat.primitives.iter().zip(&found).enumerate() {
        // Checked on open: one placement per primitive.
        let first_vertex = placement.map_or(0, |l| l.first_vertex[k]);
        // Checked on open: a folded stream's pages follow its first texture.
        let fold = layout.and_then(|l| {
            l.folds
                .iter()
                .find(|f| f.texture == meta::FoldedTexture::Vat(p.positions))
        });
        let pages = fold.map_or(1, |f| f.pages);
        let mut stream = |reader: &mut textures::TextureReader<'_>, first: u32| {
            let pages = (0..pages)
                .map(|k| decode(reader, first, k, pages))
                .collect::<Result<Vec<_>, _>>()?;
            Ok::<_, LoadError>(VatPages { pages })
        };
        let positions = stream(reader, p.positions)?;
        let normals = match p.normals {
            Some(i) => Some(stream(reader, i)?),
            None => None,
        };
        primitives.push(VatPrimitive {
            node,
            primitive,
            address: VatAddress {
                width: p.width,
                bands: p.bands,
                frames: p.frames,
                first_vertex,
                rows_per_block: fold.map_or(0, |f| f.rows_per_block),
                blocks_per_page: fold.map_or(1, |f| f.blocks_per_page),
            },
            positions,
            normals,
        });
    }
    Ok(VatPlayback {
        reference_node,
        convention: vat.normal_convention,
        primitives,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(b: &rigbake_fixtures::builder::Builder) -> Model {
        let options = rigbake_core::import::ImportOptions::default();
        rigbake_core::import::import_bytes(Path::new("twin.glb"), &b.to_glb(), &options).unwrap()
    }

    #[test]
    fn a_space_is_the_one_mesh_node_of_its_name_never_the_first_node() {
        let mut b = rigbake_fixtures::models::two_joint();
        let mesh = b.first_mesh_node();
        // The joint `root` comes first and shares the mesh node's name.
        let root = b.node_named("root");
        b.get_mut("nodes", root)
            .insert("name".into(), serde_json::json!("mesh"));
        assert_eq!(space_node(&import(&b), "mesh"), Ok(mesh));
        assert_eq!(space_node(&import(&b), "tip"), Err(SpaceNodeError::Missing));
        // A second mesh node of the name: ambiguous, both listed.
        let twin = b.node(serde_json::json!({"name": "mesh", "mesh": 0, "skin": 0}));
        b.scene(&[root, mesh, twin]);
        let err = space_node(&import(&b), "mesh").unwrap_err();
        assert_eq!(err, SpaceNodeError::Ambiguous(vec![mesh, twin]));
        assert!(err.to_string().contains("2 mesh nodes"), "{err}");
    }
}
