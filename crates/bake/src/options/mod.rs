//! Every bake option, declared once. Each field below, with its doc
//! comment and default, is at the same time:
//!
//! - a manifest key (a field of [`Options`], the table `[defaults]` and
//!   `[[model]]` entries are read into, or of its `vat` table
//!   [`VatOptions`]), with serde's errors naming the key;
//! - a command-line flag, when it has `#[flag]` (with the `clap` feature:
//!   [`SettingFlags`] for `bake` and `vat`, [`BakeFlags`] for `bake`
//!   only), its help made of the same doc comment and default;
//! - a row of the option table of docs/manifest.md ([`markdown_table`];
//!   a test keeps the committed table equal to it).
//!
//! A model's settings are layers, each over the one before ([`Layer`]):
//! built-in defaults < the manifest's `[defaults]` < every `[[model]]`
//! entry that matches, in file order < the flags (`Options::from` a flags
//! struct). [`Options::resolve`] turns the layers' result into the
//! validated [`crate::settings::BakeSettings`] a bake runs with; the bake
//! key's canonical form is that of the resolved settings
//! ([`crate::incremental::canonical_settings`]).
//!
//! A flag and a key that differ in meaning are two fields: `--anchor`
//! (replaces `anchors` and asks for the anchors output), `--anchors auto`
//! (`auto_anchors`), `--vat` and `--output` (add to `outputs`), `--lod`
//! (`lod` and `lod_files`), `--blend` (adds to `blend`).

mod declare;
mod resolve;
#[cfg(test)]
mod tests;
mod values;

use std::path::PathBuf;

use rigbake_types::{
    AnchorsMode, DirectionEncoding, ErrorBudget, LodSpec, MatrixLayout, NormalConvention,
    OutputKind, PngCompression, Precision, Props, RootMotionMode, SampleRule, TextureCompression,
    TextureContainer, VatEncoding, VatLayoutMode,
};

use declare::options;
pub use declare::{Layer, OptionDoc, help_of, help_text, markdown_table};
pub use resolve::{MAX_TEXTURE_SIZE, SettingsError, check_max_texture_size, parse_blend};
use values::png_directions;
pub use values::{
    BlendEntry, ClipEntry, Influences, LodArg, parse_clip, parse_error_budget, parse_influences,
    parse_lod,
};

options! {
    /// VAT options: the `vat` table of a manifest entry and the VAT flags
    /// of `bake --vat` and `vat` (all optional: see [`Options`]).
    pub struct VatOptions for "bake, vat" {
        /// VAT sample encoding: `exr16` or `exr32` (EXR half or full
        /// floats), or `png16` (16-bit PNG normalised to bounds the
        /// metadata records).
        #[default("\"exr16\"")]
        #[flag("format", value_enum)]
        format: Option<VatEncoding>,
        /// Also bake VAT normals.
        #[default("false")]
        #[flag("normals", num_args = 0, default_missing_value = "true")]
        normals: Option<bool>,
        /// Also bake VAT tangents.
        #[default("false")]
        #[flag("tangents", num_args = 0, default_missing_value = "true")]
        tangents: Option<bool>,
        /// How VAT normals are transformed: `inverse-transpose` of the
        /// blended matrix (exact), or the `blended-matrix` itself (what
        /// most GPU shaders do).
        #[default("\"inverse-transpose\"")]
        #[flag("normal-convention", value_enum)]
        normal_convention: Option<NormalConvention>,
        /// How PNG VAT stores normals and tangents: `octahedral` or
        /// `bounds`, or `packed`: normals as two 8-bit octahedral
        /// coordinates in the positions texture's alpha (one texture per
        /// frame instead of two; within 0.63 degrees; tangents stay
        /// octahedral).
        #[default("\"octahedral\"")]
        #[serde(default, deserialize_with = "png_directions")]
        #[flag("direction-encoding", value_enum)]
        direction_encoding: Option<DirectionEncoding>,
        /// Pad VAT textures to power-of-two sizes.
        #[default("false")]
        #[flag("power-of-two", num_args = 0, default_missing_value = "true")]
        power_of_two: Option<bool>,
        /// How VAT primitives share textures: `atlas`, one texture set per
        /// model, or `per-primitive`, one set each.
        #[default("\"atlas\"")]
        #[flag("vat-layout", id = "vat_layout", value_name = "VAT_LAYOUT", value_enum)]
        layout: Option<VatLayoutMode>,
        /// Compress VAT EXRs with ZIP: the same as compression `zip`
        /// (which wins when one table gives both).
        #[default("false")]
        #[flag("zip", num_args = 0, default_missing_value = "true", conflicts_with = "compression")]
        zip: Option<bool>,
        /// VAT EXR compression: `none`; `zip` and `piz` are lossless;
        /// `pxr24` is lossless for exr16 and keeps 24 of 32 bits for exr32
        /// (the loss is recorded as the texture's max_error). Blocks are
        /// compressed in parallel with the bake. PNG is always deflate, and
        /// KTX2 and DDS store texels uncompressed: a manifest's compression
        /// does not apply to them, the flag is an error with them.
        #[default("\"none\"")]
        #[flag("compression", value_enum, value_name = "MODE")]
        compression: Option<TextureCompression>,
        /// PNG VAT compression: `fast` filters rows and deflates them with
        /// fdeflate; `none` stores them in uncompressed deflate blocks
        /// (still a plain PNG), which skips the costliest step of a PNG
        /// bake at the price of larger files (BrainStem's packed VAT: 0.7x
        /// the time, 1.09x the size; docs/performance.md). A manifest's
        /// value does not apply to models that write no PNG; the flag is
        /// an error where no model can (KTX2 and DDS, other formats).
        #[default("\"fast\"")]
        #[flag("png-compression", value_enum, value_name = "MODE")]
        png_compression: Option<PngCompression>,
        /// Put the VAT lookup UV in TEXCOORD set N of the playback mesh;
        /// the source's sets from N on move up by one (docs/engines.md).
        #[default("(the lowest free set)")]
        #[serde(skip)]
        #[flag("lookup-uv-set", value_name = "N", value_parser = clap::value_parser!(u16).range(0..32))]
        lookup_uv_set: Option<u16>,
    }
}

options! {
    /// One layer of a model's settings: a manifest's `[defaults]` table or
    /// `[[model]]` entry, or the flags given (through `From`). Every field
    /// is optional; see the module docs.
    pub struct Options;

    /// The setting flags of `bake` and `vat`.
    flags SettingFlags for "bake, vat" {
        /// Frames sampled per second of animation.
        #[default("30")]
        #[flag("fps")]
        fps: Option<f64>,
        /// How frame times are spread over a clip: `fixed-rate` samples at
        /// `min(i / fps, duration)`, `even-spread` puts the last frame on
        /// the clip's end.
        #[default("\"fixed-rate\"")]
        #[flag("sampling", value_enum)]
        sampling: Option<SampleRule>,
        /// Clips to bake, in order: `--clip NAME` (repeatable) bakes whole
        /// animations; a manifest's `[[model.clip]]` tables also take
        /// ranges, renames, loop flags and root motion (docs/manifest.md,
        /// "Clips").
        #[default("(every animation)")]
        #[serde(default)]
        #[flag("clip", value_name = "NAME", value_parser = parse_clip)]
        clip: Vec<ClipEntry>,
        /// Also bake blends of two clips at fixed weights, as clips named
        /// `A+B@W` (repeatable; added to the manifest's `blend` entries),
        /// e.g. `--blend Walk,Run,0,0.25,0.5,0.75,1`.
        #[serde(skip)]
        #[flag("blend", value_name = "A,B,W[,W...]")]
        blend_args: Vec<String>,
        /// Largest texture width or height in pixels, bone and VAT (1 to
        /// 65,536).
        #[default("8192")]
        #[flag("max-texture-size", alias = "max-size", value_name = "PIXELS")]
        max_texture_size: Option<usize>,
        /// Bake this scene of the file (an index); nodes outside it are
        /// not baked (docs/limits.md, scenes).
        #[default("(the file's `scene`, else 0)")]
        #[flag("scene", value_name = "N")]
        scene: Option<usize>,
        /// Leave this node's or mesh's geometry out of the bake, and that
        /// of every node below it (repeatable; an exact name or a glob
        /// such as `*_Shield`, matched against node names and the names of
        /// the meshes nodes instance; the skeleton, sockets and clips
        /// stay). A later layer replaces the list. A pattern that matches
        /// nothing fails the model with an error suggesting close names.
        #[default("[]")]
        #[flag("exclude", value_name = "NAME")]
        exclude: Option<Vec<String>>,
        /// A LOD group: node BASE (level 0) and the nodes of levels 1, 2,
        /// ... (repeatable; `--lod Body=Body_low,Body_lowest`, as `lod`
        /// does), or a model file and the files of its levels (`--lod
        /// hero.glb=hero_LOD1.glb,hero_LOD2.glb`: every level ends in .glb
        /// or .gltf, as `lod_files` does). Each level gets its own weights
        /// mesh and shares BASE's bone texture; the model's own groups
        /// (MSFT_lod, `_LOD<n>` names) and `<stem>_LOD<n>.glb` files
        /// beside a model in a baked folder need no flag (docs/lods.md).
        #[serde(skip)]
        #[flag("lod", value_name = "BASE=LOD1,LOD2", value_parser = parse_lod)]
        lod_args: Vec<LodArg>,
        /// Store textures inside the container instead of as files beside
        /// it.
        #[default("false")]
        #[flag("embed-textures", num_args = 0, default_missing_value = "true")]
        embed_textures: Option<bool>,
        /// The file container of every texture (bone-matrix, VAT,
        /// anchors): `exr` (and PNG for png16 VAT), or `ktx2`, `ktx2-zstd`
        /// (Zstandard supercompressed) or `dds` holding the same samples
        /// as RGBA; the precision and VAT format keep the sample type
        /// (formats/textures.md, "Texture containers").
        #[default("\"exr\"")]
        #[flag("texture-container", value_enum, value_name = "CONTAINER")]
        texture_container: Option<TextureContainer>,
        /// VAT options, used when the outputs include `vat`: a table
        /// (`[defaults.vat]`, `vat = { format = "png16" }`) of the keys
        /// below.
        #[serde(default)]
        #[command(flatten)]
        vat: VatOptions,
        /// Root motion of the clips that set none: `keep`; `extract`
        /// bakes every clip in place (the root's horizontal travel removed
        /// and recorded as a track); `extract-yaw` also removes its
        /// turning. A clip or blend entry's own `root_motion` wins
        /// (docs/root-motion.md).
        #[default("\"keep\"")]
        #[flag("root-motion", value_enum, value_name = "MODE")]
        root_motion: Option<RootMotionMode>,
        /// The motion root: the node whose travel root motion extracts.
        #[default("(the skeleton's root joint)")]
        #[flag("root-node", value_name = "NODE")]
        root_node: Option<String>,
    }

    /// The setting flags of `bake` alone.
    flags BakeFlags for "bake" {
        /// Bone texture layout: `mat4` (4 pixels per joint), `mat3x4` (3)
        /// or `qts` (2: rotation quaternion, then translation and uniform
        /// scale; refused for a model whose skin matrices it cannot hold,
        /// see `layout_fallback`).
        #[default("\"mat4\"")]
        #[flag("layout", value_enum)]
        layout: Option<MatrixLayout>,
        /// The layout a model's bone textures take instead when `qts`
        /// cannot hold its skin matrices (non-uniform scale, shear, a
        /// mirror): `mat4` or `mat3x4`, with a warning naming the joint.
        #[default("(none: the model fails, naming the joint)")]
        #[flag("layout-fallback", value_enum, value_name = "LAYOUT")]
        layout_fallback: Option<MatrixLayout>,
        /// Bone texture sample precision: `f32` or `f16`, or with the
        /// `qts` layout `unorm16` (16-bit normalised samples over recorded
        /// ranges: a 16-bit PNG, or RGBA16 UNORM in KTX2 and DDS).
        #[default("\"f32\"")]
        #[flag("precision", value_enum)]
        precision: Option<Precision>,
        /// The largest vertex position error the texture encodings may
        /// cost on any clip: `0.1mm`, `2cm`, `0.001` (model units: glTF's
        /// metres) or `0.01%` (of the model's size). The bake picks the
        /// smallest encoding that fits, for the bone textures (instead of
        /// `layout` and `precision`) and for the VAT (instead of
        /// `vat.format` and `vat.direction_encoding`), says which on the
        /// model's line and in the report, and fails the model with the
        /// best figure reached when none fits (docs/encodings.md).
        #[default("(none: the encodings asked for)")]
        #[flag("max-error", value_name = "ERROR", value_parser = parse_error_budget)]
        max_error: Option<ErrorBudget>,
        /// Bone-weight pairs kept per vertex, 1 to 8; with LODs, one per
        /// level (`[4, 2, 1]`, `--max-influences 4,2,1`: level 0 and
        /// meshes that are no level keep the first, the last also applies
        /// to deeper levels; docs/lods.md, "Influences per level").
        #[default("6")]
        #[flag("max-influences", value_name = "N[,N...]", value_parser = parse_influences)]
        max_influences: Option<Influences>,
        /// Do not write bone-weight channels and the weights mesh (takes
        /// `weights` out of the outputs).
        #[serde(skip)]
        #[flag("no-weights")]
        no_weights: bool,
        /// Also write the bone-weight channels into the weights mesh as
        /// TEXCOORD sets after the source's own (two per channel), which
        /// every importer keeps.
        #[serde(skip)]
        #[flag("weights-as-uv")]
        weights_as_uv: bool,
        /// Bake the model-space track of this socket node (repeatable):
        /// replaces `anchors` and adds `anchors` to the outputs.
        #[serde(skip)]
        #[flag("anchor", value_name = "NODE")]
        anchor: Vec<String>,
        /// `auto`: also choose sockets automatically (as `auto_anchors`)
        /// and add `anchors` to the outputs.
        #[serde(skip)]
        #[flag("anchors", value_enum, value_name = "MODE")]
        anchors_mode: Option<AnchorsMode>,
        /// Also write the anchor tracks as anchors.exr (4 pixels per
        /// anchor) whenever the bake has any: named or automatic sockets,
        /// or props baked as anchors.
        #[default("false")]
        #[flag("anchors-exr", num_args = 0, default_missing_value = "true")]
        anchors_exr: Option<bool>,
        /// Rigid meshes under joints: `bind` them to the joint (weight 1)
        /// so they play from the bone texture, or report them as
        /// `anchors`.
        #[default("\"bind\"")]
        #[flag("props", value_enum)]
        props: Option<Props>,
        /// Also bake vertex animation textures (adds `vat` to the
        /// outputs).
        #[serde(skip)]
        #[flag("vat")]
        add_vat: bool,
        /// Also write this kind of output (repeatable): a name of the
        /// `outputs` list (`--output vat` is `--vat`).
        #[serde(skip)]
        #[flag("output", value_enum, value_name = "KIND")]
        output: Vec<OutputKind>,
    }

    keys {
        /// Which model files a `[[model]]` entry applies to: a path or
        /// glob (`chars/*.glb`, `**/*.gltf`) relative to `models`; an
        /// absolute one is taken relative to `models` when it starts with
        /// that folder's path (as given or canonical), else it is an error
        /// that says paths are relative to `models`; a path that matches
        /// no `.glb`/`.gltf` is an error.
        #[default("(required in `[[model]]`)")]
        path: Option<toml::Spanned<String>>,
        /// Outputs to write: any of `bones`, `weights`, `vat`, `anchors`,
        /// `openvat` (the OpenVAT export, docs/openvat.md; it rides on a
        /// VAT pass of its own and alone bakes nothing); `[]` skips the
        /// model without reading it.
        #[default("[\"bones\", \"weights\"]")]
        outputs: Option<Vec<OutputKind>>,
        /// Socket nodes to track (with `anchors` in the outputs; none
        /// named: automatic).
        #[default("[]")]
        anchors: Option<Vec<String>>,
        /// Also pick sockets automatically.
        #[default("false")]
        auto_anchors: Option<bool>,
        /// LOD groups (`[[model.lod]]` tables): `base` (the level-0 node)
        /// and `levels` (the nodes of levels 1, 2, ...), node names of the
        /// model; each level shares the base's bone texture and VAT atlas
        /// and gets its own weights mesh. A later layer that lists groups
        /// replaces the list. Groups the model declares (`MSFT_lod`,
        /// `_LOD<n>` names) need none (docs/lods.md).
        #[default("(none)")]
        #[serde(default)]
        lod: Vec<LodSpec>,
        /// `[[model]]` only: files holding LOD levels 1, 2, ... of the
        /// model's skinned meshes, relative to `models`; matched to the
        /// model's skinned meshes by node name and checked joint by joint;
        /// baked as levels, not as models of their own; their bytes enter
        /// the bake key (docs/lods.md, "Levels in extra files").
        #[default("(`<stem>_LOD<n>` files beside a model found in a folder)")]
        lod_files: Option<Vec<PathBuf>>,
        /// Blends to bake after the clips (`[[model.blend]]` tables,
        /// "Blends" below).
        #[default("(none)")]
        #[serde(default)]
        blend: Vec<BlendEntry>,
    }
}

impl Layer for VatOptions {
    /// Within one layer `compression` wins over `zip`; across layers the
    /// later layer's choice wins, whichever of the two keys made it.
    fn over(self, lower: Self) -> Self {
        self.folded().merge_fields(lower.folded())
    }
}

impl VatOptions {
    /// `zip` as the compression it stands for, unless `compression` is
    /// given too.
    fn folded(mut self) -> Self {
        if self.compression.is_none() {
            self.compression = self.zip.map(|z| {
                if z {
                    TextureCompression::Zip
                } else {
                    TextureCompression::None
                }
            });
        }
        self
    }
}

impl Layer for Options {
    fn over(self, lower: Self) -> Self {
        self.merge_fields(lower)
    }
}

impl Options {
    /// The flags of `bake` as one layer.
    pub fn from_bake_flags(settings: SettingFlags, bake: BakeFlags) -> Self {
        Self::from(settings).over(Self::from(bake))
    }

    /// The option table of docs/manifest.md: every key and flag.
    pub fn table() -> String {
        markdown_table(Self::OPTIONS)
    }
}
