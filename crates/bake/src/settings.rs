//! What one model's bake writes and how: the validated settings a bake
//! runs with. [`crate::options`] declares the options they are resolved
//! from (defaults, manifest, flags); this is the result.

use rigbake_core::bake::vat::VatOptions;
use rigbake_core::import::ImportOptions;
use rigbake_core::layout::MatrixLayout;
use rigbake_core::timeline::root_motion::RootMotionRequest;
use rigbake_core::timeline::{ClipSpec, Sampling};
use rigbake_format::meta;
use rigbake_format::texture::Precision;
use rigbake_format::texture::exr::TextureCompression;
use rigbake_format::texture::gpu::TextureContainer;
use rigbake_format::texture::png::PngCompression;
use rigbake_types::{OutputKind, OutputKinds};
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

/// Options of vertex animation textures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VatSettings {
    /// Sample encoding.
    pub encoding: meta::VatEncoding,
    /// PNG direction encoding.
    pub direction_encoding: meta::DirectionEncoding,
    /// EXR compression (PNG is always deflate).
    pub compression: TextureCompression,
    /// How PNG files deflate (left out of the bake key at its default).
    #[serde(skip_serializing_if = "PngCompression::is_fast")]
    pub png_compression: PngCompression,
    /// What the core bakes (normals, tangents, convention, sizes).
    pub options: VatOptions,
}

/// Which socket tracks to bake.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AnchorSettings {
    /// Nodes named by the user.
    pub nodes: Vec<String>,
    /// Also choose sockets automatically.
    pub auto: bool,
    /// Also write `anchors.exr`.
    pub exr: bool,
}

/// Everything that decides one model's outputs (part of its bake key, in
/// the canonical form of [`crate::incremental::canonical_settings`], which
/// its `Serialize` impl writes).
#[derive(Debug, Clone, PartialEq)]
pub struct BakeSettings {
    /// Frame rate and rule.
    pub sampling: Sampling,
    /// Clips to bake, in order (empty: every animation of the model).
    pub clips: Vec<ClipSpec>,
    /// Blends to bake after the clips.
    pub blends: Vec<ClipSpec>,
    /// The kinds of output to write.
    pub outputs: OutputKinds,
    /// Bone texture layout.
    pub layout: MatrixLayout,
    /// Bone texture precision.
    pub precision: Precision,
    /// Bone-weight pairs kept per vertex (level 0 of LOD groups and every
    /// mesh that is no LOD level).
    pub max_influences: usize,
    /// Bone-weight pairs kept per vertex at LOD levels 1, 2, ...; the last
    /// entry also applies to deeper levels; empty: `max_influences` at
    /// every level (`max_influences = [4, 2, 1]`, `--max-influences 4,2,1`).
    pub lod_influences: Vec<usize>,
    /// Largest texture width or height.
    pub max_texture_size: usize,
    /// Embed textures in the container instead of writing files beside it.
    pub embed_textures: bool,
    /// Anchors: nodes by name, plus automatic choice.
    pub anchors: AnchorSettings,
    /// Bind rigid props to their joints (else report them as anchors).
    pub bind_props: bool,
    /// VAT options.
    pub vat: VatSettings,
    /// Import options (limits, file access).
    pub import: ImportOptions,
    /// Nodes or meshes left out of the bake (exact names or globs; see
    /// [`crate::exclude`]).
    pub exclude: Vec<String>,
    /// LOD groups named by the manifest (`[[model.lod]]`) or `--lod`, on
    /// top of those the model declares (see `rigbake_core::lod`).
    pub lods: Vec<rigbake_core::lod::LodSpec>,
    /// Files holding lower LOD levels of the model's skinned meshes, level
    /// 1 first (`lod_files` in the manifest, `--lod MODEL=LOD1.glb,...`,
    /// or `<stem>_LOD<n>.glb` beside a model in a baked folder; see
    /// `rigbake_core::lod_files`).
    pub lod_files: Vec<std::path::PathBuf>,
    /// The TEXCOORD set of the VAT playback mesh that holds the lookup UV;
    /// `None`: each primitive's lowest free set (`--lookup-uv-set`).
    pub lookup_uv_set: Option<usize>,
    /// Also write the bone-weight channels into the weights mesh as
    /// TEXCOORD sets after the source's own (`--weights-as-uv`).
    pub weights_as_uv: bool,
    /// Root motion: the mode of clips that set none, and the motion root
    /// (`--root-motion`, `--root-node`; see `docs/root-motion.md`).
    pub root_motion: RootMotionRequest,
    /// The file container of every texture (`--texture-container`): EXR
    /// (and PNG) by default, or KTX2 / DDS with the same samples. Left out
    /// of the canonical settings at its default, so the key of a bake that
    /// does not use it is computed as before the setting existed.
    pub texture_container: TextureContainer,
    /// The matrix layout a lossy `layout` (`qts`) falls back to for a
    /// model whose skin matrices it cannot hold (`--layout-fallback`);
    /// `None`: such a model fails. Left out of the key when `None`.
    pub layout_fallback: Option<MatrixLayout>,
    /// The error budget that picks the encodings (`--max-error`); `None`:
    /// the encodings asked for. Left out of the key when `None`.
    pub max_error: Option<rigbake_types::ErrorBudget>,
}

/// The canonical form the bake key hashes (formats/bake-key.md): the
/// fields in this fixed order, whatever the struct's order; the outputs as
/// four flags and the OpenVAT export as `openvat`, as in key version 1;
/// paths as text (a path that is not UTF-8 keeps its readable part; the
/// level files' bytes enter the key too). A new setting goes at the end,
/// left out at its default (as `texture_container` is), or comes with a
/// new key version; an output kind added after key version 1 enters the
/// key by name in `more_outputs`, left out when none is asked for.
/// The output kinds key version 1 writes as flags.
const KEY_V1_OUTPUTS: [OutputKind; 5] = [
    OutputKind::Bones,
    OutputKind::Weights,
    OutputKind::Vat,
    OutputKind::Anchors,
    OutputKind::OpenVat,
];

impl Serialize for BakeSettings {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Every field, by name: a field added to the struct does not
        // compile until it is given its place in the key (below).
        let Self {
            sampling,
            clips,
            blends,
            outputs,
            layout,
            precision,
            max_influences,
            lod_influences,
            max_texture_size,
            embed_textures,
            anchors,
            bind_props,
            vat,
            import,
            exclude,
            lods,
            lod_files,
            lookup_uv_set,
            weights_as_uv,
            root_motion,
            texture_container,
            layout_fallback,
            max_error,
        } = self;
        #[derive(Serialize)]
        struct Flags {
            bones: bool,
            weights: bool,
            vat: bool,
            anchors: bool,
        }
        let has = |k| outputs.has(k);
        let flags = Flags {
            bones: has(OutputKind::Bones),
            weights: has(OutputKind::Weights),
            vat: has(OutputKind::Vat),
            anchors: has(OutputKind::Anchors),
        };
        let lod_file_names: Vec<_> = lod_files.iter().map(|p| p.to_string_lossy()).collect();
        let mut s = serializer.serialize_struct("BakeSettings", 22)?;
        s.serialize_field("sampling", sampling)?;
        s.serialize_field("clips", clips)?;
        s.serialize_field("blends", blends)?;
        s.serialize_field("outputs", &flags)?;
        s.serialize_field("layout", layout)?;
        s.serialize_field("precision", precision)?;
        s.serialize_field("max_influences", max_influences)?;
        s.serialize_field("lod_influences", lod_influences)?;
        s.serialize_field("max_texture_size", max_texture_size)?;
        s.serialize_field("embed_textures", embed_textures)?;
        s.serialize_field("anchors", anchors)?;
        s.serialize_field("bind_props", bind_props)?;
        s.serialize_field("vat", vat)?;
        s.serialize_field("import", import)?;
        s.serialize_field("exclude", exclude)?;
        s.serialize_field("lods", lods)?;
        s.serialize_field("lod_files", &lod_file_names)?;
        s.serialize_field("openvat", &has(OutputKind::OpenVat))?;
        s.serialize_field("lookup_uv_set", lookup_uv_set)?;
        s.serialize_field("weights_as_uv", weights_as_uv)?;
        s.serialize_field("root_motion", root_motion)?;
        if !texture_container.is_exr() {
            s.serialize_field("texture_container", texture_container)?;
        }
        if let Some(fallback) = layout_fallback {
            s.serialize_field("layout_fallback", fallback)?;
        }
        if let Some(budget) = max_error {
            s.serialize_field("max_error", budget)?;
        }
        let more: Vec<OutputKind> = outputs
            .iter()
            .filter(|k| !KEY_V1_OUTPUTS.contains(k))
            .collect();
        if !more.is_empty() {
            s.serialize_field("more_outputs", &more)?;
        }
        s.end()
    }
}

impl BakeSettings {
    /// Bone-weight pairs kept per vertex at LOD level `level` (0 for meshes
    /// that are no LOD level).
    pub fn influences_at(&self, level: usize) -> usize {
        match level {
            0 => self.max_influences,
            _ => self
                .lod_influences
                .get(level - 1)
                .or(self.lod_influences.last())
                .copied()
                .unwrap_or(self.max_influences),
        }
    }

    /// The most pairs any level keeps: the weight channels of every
    /// primitive are sized for it.
    pub fn most_influences(&self) -> usize {
        self.lod_influences
            .iter()
            .fold(self.max_influences, |m, &k| m.max(k))
    }
}

impl Default for BakeSettings {
    fn default() -> Self {
        Self {
            sampling: Sampling::default(),
            clips: Vec::new(),
            blends: Vec::new(),
            outputs: OutputKinds::of(&[OutputKind::Bones, OutputKind::Weights]),
            layout: MatrixLayout::Mat4,
            precision: Precision::F32,
            max_influences: 6,
            lod_influences: Vec::new(),
            max_texture_size: 8192,
            embed_textures: false,
            anchors: AnchorSettings::default(),
            bind_props: true,
            vat: VatSettings {
                encoding: meta::VatEncoding::Exr16,
                direction_encoding: meta::DirectionEncoding::Octahedral,
                compression: TextureCompression::None,
                png_compression: PngCompression::Fast,
                options: VatOptions::default(),
            },
            import: ImportOptions {
                images: true,
                ..ImportOptions::default()
            },
            exclude: Vec::new(),
            lods: Vec::new(),
            lod_files: Vec::new(),
            lookup_uv_set: None,
            weights_as_uv: false,
            root_motion: RootMotionRequest::default(),
            texture_container: TextureContainer::Exr,
            layout_fallback: None,
            max_error: None,
        }
    }
}
