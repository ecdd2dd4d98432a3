//! Our side: a bake read back only from its output files (container
//! records, bone-matrix EXR, weights mesh GLB, VAT EXR), played through the
//! shaders' CPU reference (`rigbake_core::runtime`). Nothing here imports
//! the source model or evaluates its animation.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use glam::Vec3;
use rigbake_core::layout::MatrixLayout;
use rigbake_core::runtime::GpuState;
use rigbake_core::runtime::bone_path::{self, BoneTextureView};
use rigbake_core::runtime::vat_path::{self, VatAddress, VatDecode, VatSamples, VatTextureView};
use rigbake_format::container::Container;
use rigbake_format::meta::{self, ClipMeta, Metadata, SamplingRule, Storage};

// The exr crate's own reader (not ours), shared with the other CLI tests.
use crate::common::read_exr;

/// A texture file beside the container (the tests bake without
/// `--embed-textures`).
fn texture_file(dir: &Path, name: &str, storage: &Storage) -> PathBuf {
    assert_eq!(*storage, Storage::File, "{name}: expected a texture file");
    dir.join(name)
}

/// The container `<dir>/<stem>.rigbake`, if the bake wrote one.
pub fn open(dir: &Path, stem: &str) -> Option<Container<BufReader<File>>> {
    let path = dir.join(format!("{stem}.rigbake"));
    path.is_file()
        .then(|| Container::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// The clip name and time of timeline row `row` of `metadata`'s clip table
/// (SPEC section 2, formats/metadata.md).
pub fn row_time(metadata: &Metadata, row: u32) -> (String, f64) {
    let clip: &ClipMeta = metadata
        .clips
        .iter()
        .rev()
        .find(|c| c.start_row <= row)
        .expect("row inside the clip table");
    let f = f64::from(row - clip.start_row);
    let t = match metadata.options.sampling {
        SamplingRule::FixedRate => (f / clip.fps).min(clip.duration),
        SamplingRule::EvenSpread if clip.frames > 1 => {
            f * clip.duration / f64::from(clip.frames - 1)
        }
        SamplingRule::EvenSpread => 0.0,
    };
    (clip.name.clone(), t)
}

/// One playback path of a bake, as the comparison sees it.
pub trait Played {
    /// The bake's metadata (its clip table).
    fn metadata(&self) -> &Metadata;
    /// The primitives it plays, in record order.
    fn named(&self) -> Vec<&Named>;
    /// Vertex positions of primitive `k` at timeline row `row`, as the
    /// shader computes them.
    fn vertices(&self, k: usize, row: u32) -> Vec<Vec3>;
    /// The node whose space primitive `k`'s vertices are in (`None`: the
    /// scene root).
    fn space_node(&self, k: usize) -> Option<&str>;
}

/// A primitive a bake plays, named as the records name it.
#[derive(Debug, Clone)]
pub struct Named {
    /// Source node name.
    pub node: String,
    /// Source mesh name.
    pub mesh: String,
    /// Primitive index in the mesh.
    pub primitive: u32,
}

/// One skinned (or bound) primitive of the bone-matrix path.
pub struct BonePrimitive {
    /// Which source primitive.
    pub named: Named,
    /// Bone set (index into the textures).
    set: usize,
    /// Bind-pose positions from the weights mesh.
    positions: Vec<Vec3>,
    /// `channels` RGBA channels per vertex from the weights mesh.
    channels: Vec<[f32; 4]>,
    per_vertex: usize,
}

/// One bone texture.
struct BoneTexture {
    width: u32,
    height: u32,
    layout: MatrixLayout,
    texels: Vec<f32>,
}

/// The bone-matrix path of a bake.
pub struct Bones {
    /// The bake's metadata (clip table).
    pub metadata: Metadata,
    textures: Vec<BoneTexture>,
    /// Name of each bone set's space node (its first mesh node).
    pub space_nodes: Vec<String>,
    /// The primitives.
    pub primitives: Vec<BonePrimitive>,
}

impl Bones {
    /// Reads a bone bake from `dir` (container, bone textures, weights mesh).
    pub fn read(dir: &Path, stem: &str) -> Option<Self> {
        let container = open(dir, stem)?;
        let metadata = container.metadata().clone();
        let weights = container.records().weights.as_ref()?.clone();
        let textures = metadata
            .skins
            .iter()
            .map(|s| {
                let t = &metadata.textures[s.texture as usize];
                let img = read_exr(&texture_file(dir, &t.name, &t.storage));
                assert_eq!((img.width as u32, img.height as u32), (t.width, t.height));
                BoneTexture {
                    width: t.width,
                    height: t.height,
                    layout: t.layout,
                    texels: img.data,
                }
            })
            .collect();
        let space_nodes = metadata
            .skins
            .iter()
            .map(|s| s.mesh_nodes.first().cloned().unwrap_or_default())
            .collect();
        let mesh_file = dir.join(weights.mesh_file.as_deref().expect("a weights mesh"));
        let glb = gltf::Gltf::from_slice(&std::fs::read(&mesh_file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", mesh_file.display()));
        let blob = glb.blob.clone().expect("a GLB binary chunk");
        let per_vertex = weights.channels as usize;
        let primitives = weights
            .primitives
            .iter()
            .map(|p| {
                let mesh = glb.document.meshes().nth(p.mesh_index as usize).unwrap();
                let prim = mesh.primitives().nth(p.mesh_primitive as usize).unwrap();
                let reader = prim.reader(|_| Some(&blob[..]));
                let positions: Vec<Vec3> = reader
                    .read_positions()
                    .expect("weights mesh positions")
                    .map(Vec3::from)
                    .collect();
                let sets: Vec<Vec<[f32; 4]>> = (0..per_vertex)
                    .map(|c| {
                        let semantic = gltf::mesh::Semantic::Extras(format!("RIGBAKE_UV{}", c + 1));
                        let accessor = prim.get(&semantic).expect("a _RIGBAKE_UV channel");
                        gltf::accessor::Iter::<[f32; 4]>::new(accessor, |_| Some(&blob[..]))
                            .expect("float channel")
                            .collect()
                    })
                    .collect();
                let mut channels = Vec::with_capacity(positions.len() * per_vertex);
                for v in 0..positions.len() {
                    channels.extend(sets.iter().map(|s| s[v]));
                }
                BonePrimitive {
                    named: Named {
                        node: p.node.clone(),
                        mesh: p.mesh.clone(),
                        primitive: p.primitive,
                    },
                    set: p.skin as usize,
                    positions,
                    channels,
                    per_vertex,
                }
            })
            .collect();
        Some(Self {
            metadata,
            textures,
            space_nodes,
            primitives,
        })
    }
}

impl Played for Bones {
    fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    fn named(&self) -> Vec<&Named> {
        self.primitives.iter().map(|p| &p.named).collect()
    }

    /// In the bone set's space: the bone-matrix shader's result.
    fn vertices(&self, k: usize, row: u32) -> Vec<Vec3> {
        let prim = &self.primitives[k];
        let t = &self.textures[prim.set];
        // The oracle's bakes fit the maximum size: nothing is folded.
        let view = BoneTextureView {
            width: t.width,
            height: t.height,
            rows: t.height,
            fold: rigbake_core::fold::Fold::unfolded(t.width, 1, t.height),
            layout: t.layout,
            texels: &t.texels,
            range: None,
        };
        let state = at_row(row);
        prim.positions
            .iter()
            .enumerate()
            .map(|(v, &position)| {
                let channels = &prim.channels[v * prim.per_vertex..(v + 1) * prim.per_vertex];
                bone_path::deform_vertex(&view, &state, channels, position, None).position
            })
            .collect()
    }

    fn space_node(&self, k: usize) -> Option<&str> {
        Some(&self.space_nodes[self.primitives[k].set])
    }
}

/// The animation state that plays exactly timeline row `row`.
fn at_row(row: u32) -> GpuState {
    GpuState {
        rows: [[1.0, 0.0, row as f32, 0.0], [0.0; 4], [0.0; 4], [0.0; 4]],
        enabled: true,
    }
}

/// One baked VAT primitive (positions only).
pub struct VatPrimitive {
    /// Which source primitive.
    pub named: Named,
    address: VatAddress,
    width: u32,
    height: u32,
    texels: Vec<f32>,
    vertices: u32,
}

/// The VAT path of a bake (`exr32` positions).
pub struct Vat {
    /// The bake's metadata (clip table).
    pub metadata: Metadata,
    /// The node whose space the values are in (`None`: scene root).
    pub reference_node: Option<String>,
    /// The baked primitives.
    pub primitives: Vec<VatPrimitive>,
}

impl Vat {
    /// Reads a VAT bake from `dir`.
    pub fn read(dir: &Path, stem: &str) -> Option<Self> {
        let container = open(dir, stem)?;
        let metadata = container.metadata().clone();
        let vat = container.records().vat.as_ref()?.clone();
        assert_eq!(vat.encoding, meta::VatEncoding::Exr32, "{stem}: exr32 VAT");
        let placement = container
            .records()
            .layout
            .as_ref()
            .and_then(|l| l.vat.clone());
        assert!(
            container.records().layout.as_ref().is_none_or(|l| l
                .folds
                .iter()
                .all(|f| !matches!(f.texture, rigbake_format::meta::FoldedTexture::Vat(_)))),
            "this oracle reads unfolded VATs (baked at the default size)"
        );
        let primitives = vat
            .primitives
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let first_vertex = placement.as_ref().map_or(0, |l| l.first_vertex[k]);
                let t = &vat.textures[p.positions as usize];
                let img = read_exr(&texture_file(dir, &t.name, &t.storage));
                VatPrimitive {
                    named: Named {
                        node: p.node.clone(),
                        mesh: p.mesh.clone(),
                        primitive: p.primitive,
                    },
                    // Baked at the default size: unfolded, one page.
                    address: VatAddress {
                        width: p.width,
                        bands: p.bands,
                        frames: p.frames,
                        first_vertex,
                        ..VatAddress::default()
                    },
                    width: img.width as u32,
                    height: img.height as u32,
                    texels: img.data,
                    vertices: p.vertices,
                }
            })
            .collect();
        Some(Self {
            metadata,
            reference_node: vat.reference_node.clone(),
            primitives,
        })
    }
}

impl Played for Vat {
    fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    fn named(&self) -> Vec<&Named> {
        self.primitives.iter().map(|p| &p.named).collect()
    }

    /// In the reference node's space: the VAT shader's result.
    fn vertices(&self, k: usize, row: u32) -> Vec<Vec3> {
        let prim = &self.primitives[k];
        let view = VatTextureView {
            width: prim.width,
            height: prim.height,
            channels: 4,
            samples: VatSamples::Float(&prim.texels),
            decode: VatDecode::Float,
            rows: None,
        };
        let state = at_row(row);
        (0..prim.vertices)
            .map(|v| {
                vat_path::deform_vertex(
                    &prim.address,
                    std::slice::from_ref(&view),
                    None,
                    &state,
                    v,
                    Vec3::ZERO,
                    None,
                )
                .position
            })
            .collect()
    }

    fn space_node(&self, _k: usize) -> Option<&str> {
        self.reference_node.as_deref()
    }
}
