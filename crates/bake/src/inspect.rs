//! What a container holds, for people and scripts: a report (serialised as
//! the `inspect --json` document, `formats/inspect.schema.json`) and its
//! readable summary. Reads only the header, the section table and the
//! metadata unless asked to check every checksum.

use std::fmt::Write as _;
use std::path::Path;

use rigbake_format::container::{Container, Section};
use rigbake_format::meta::{
    ClipOrigin, Metadata, RigMetadata, Storage, VatCompressionMetadata, VatMetadata,
    WeightsMetadata,
};
use schemars::JsonSchema;
use serde::Serialize;

use crate::report::count;

use rigbake_format::FormatError;

/// Version of the `inspect --json` document layout.
pub const INSPECT_SCHEMA_VERSION: u32 = 1;

/// The document `rigbake inspect FILE.rigbake --json` prints: what a
/// `.rigbake` container (format 1.x) holds (`formats/inspect.md`). Fields
/// may be added in later schema versions; existing fields keep their
/// meaning, and `schema_version` changes when a field changes meaning or
/// disappears.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct InspectReport {
    /// The document layout's version: it changes when a field changes
    /// meaning or disappears.
    #[schemars(extend("const" = INSPECT_SCHEMA_VERSION))]
    pub schema_version: u32,
    /// The container path as given on the command line.
    pub file: String,
    /// Container-level facts.
    pub container: ContainerInfo,
    /// The bake metadata, field for field.
    pub metadata: Metadata,
    /// The VAT record (container section kind 3, format 1.1+), field for
    /// field; `null` when the bake has none.
    pub vat: Option<VatMetadata>,
    /// The bone-weight record (container section kind 4, format 1.2+),
    /// field for field; `null` when the bake has none.
    pub weights: Option<WeightsMetadata>,
    /// The rig record (container section kind 6, format 1.3+): anchors,
    /// props and clip origins; `null` when the bake has none.
    pub rig: Option<RigMetadata>,
    /// The layout record (container section kind 11, format 1.7+): VAT
    /// atlas placement and folded textures; `null`: per-primitive VAT,
    /// nothing folded.
    pub texture_layout: Option<rigbake_format::meta::LayoutMetadata>,
    /// The VAT compression record (container section kind 10, format
    /// 1.6+): how each VAT texture is compressed; `null` without VAT or in
    /// older containers.
    pub vat_compression: Option<VatCompressionMetadata>,
    /// The LOD record (container section kind 17, format 1.8+): the
    /// model's LOD groups and where each level's outputs are; `null` when
    /// the model has none or in older containers.
    pub lods: Option<rigbake_format::meta::LodsMetadata>,
    /// The LOD detail record (container section kind 18, format 1.9+): per
    /// group and level of `lods`, the file the level came from, the
    /// influences it keeps and their loss; `null` without LOD groups or in
    /// older containers.
    pub lod_details: Option<rigbake_format::meta::LodDetailsMetadata>,
    /// The texture-container record (container section kind 19, format
    /// 1.10+): every texture of the bake is a KTX2 or DDS file; `null`: EXR
    /// (and PNG) files.
    pub texture_container: Option<rigbake_format::meta::TextureContainerMetadata>,
    /// The placement record (container section kind 20, format 1.11+): the
    /// rest-pose global matrices of the reference node and of every bone
    /// set's space node, and the lookup UV's encoding; `null` in older
    /// containers.
    pub placement: Option<rigbake_format::meta::PlacementMetadata>,
    /// The clip-error record (container section kind 22, format 1.14+):
    /// per texture and clip, the maximum and 99th percentile of the error
    /// its encoding costs; `null` in older containers.
    pub clip_errors: Option<rigbake_format::meta::ClipErrorsMetadata>,
    /// Sums over the metadata.
    pub totals: Totals,
    /// `true` or `false` after `--verify` (every checksum read and
    /// compared), `null` without it.
    pub verified: Option<bool>,
    /// The engine-facing sidecar of this container (`formats/sidecar.md`,
    /// `sidecar.schema.json`): the same document a bake writes beside it as
    /// `<stem>.rigbake.json`.
    pub sidecar: crate::sidecar::Sidecar,
}

/// Container-level facts.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ContainerInfo {
    /// Format version, `major.minor`.
    #[schemars(regex(pattern = r"^1\.[0-9]+$"))]
    pub format_version: String,
    /// File size in bytes.
    #[schemars(range(min = rigbake_format::container::HEADER_LEN))]
    pub bytes: u64,
    /// The section table.
    pub sections: Vec<SectionInfo>,
    /// The bake key (SHA-256 hex of inputs and settings), container 1.4+;
    /// `null` when not recorded.
    pub bake_key: Option<String>,
    /// The source model's path relative to the container's folder
    /// (`formats/metadata.md`, SourceLocation), container 1.6+; `null` when
    /// not recorded.
    pub source_location: Option<String>,
}

/// One section table entry.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SectionInfo {
    /// `metadata`, `texture` or `unknown(<code>)`.
    #[schemars(regex(
        pattern = r"^(metadata|texture|vat|weights|vertex_data|rig|track_data|key|outputs|vat_compression|layout|bounds|source|morphs|uv_sets|root_motion|lods|lod_details|texture_container|placement|bone_ranges|clip_errors|unknown\([0-9]+\))$"
    ))]
    pub kind: String,
    /// Byte offset.
    #[schemars(range(min = rigbake_format::container::HEADER_LEN))]
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
    /// CRC-32 of the payload.
    pub crc32: u32,
}

/// Sums over the metadata.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Totals {
    /// Number of clips.
    pub clips: usize,
    /// Rows of every texture (frames of all clips).
    pub frames: u64,
    /// Number of textures.
    pub textures: usize,
    /// Encoded bytes of all textures.
    pub texture_bytes: u64,
    /// Encoded bytes of the textures embedded in the container.
    pub embedded_texture_bytes: u64,
    /// Largest `max_error` over the bone textures.
    #[schemars(range(min = 0))]
    pub max_error: f64,
    /// Number of vertex animation texture files (packed normals share
    /// their positions' file: one file, two entries of the VAT record).
    pub vat_textures: usize,
    /// Encoded bytes of all vertex animation texture files, each once.
    pub vat_texture_bytes: u64,
}

fn section_info(s: &Section) -> SectionInfo {
    SectionInfo {
        kind: s.kind.name(),
        offset: s.offset,
        length: s.length,
        crc32: s.crc32,
    }
}

fn totals(m: &Metadata, vat: Option<&VatMetadata>) -> Totals {
    // One entry per file (packed normals name their positions' file).
    let vat_textures: std::collections::BTreeMap<&str, u64> = vat
        .map(|v| v.textures.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|t| (t.name.as_str(), t.bytes))
        .collect();
    Totals {
        clips: m.clips.len(),
        frames: m.clips.iter().map(|c| u64::from(c.frames)).sum(),
        textures: m.textures.len(),
        texture_bytes: m.textures.iter().map(|t| t.bytes).sum(),
        embedded_texture_bytes: m
            .textures
            .iter()
            .filter(|t| matches!(t.storage, Storage::Section(_)))
            .map(|t| t.bytes)
            .sum(),
        max_error: m.textures.iter().map(|t| t.max_error).fold(0.0, f64::max),
        vat_textures: vat_textures.len(),
        vat_texture_bytes: vat_textures.values().sum(),
    }
}

/// Checks every section checksum and every texture file beside the
/// container; returns the first problem found.
fn verify(
    container: &mut Container<impl std::io::Read + std::io::Seek>,
    dir: &Path,
) -> Option<String> {
    if let Err(e) = container.verify() {
        return Some(e.to_string());
    }
    // Every file beside the container that a record checksums: bone and
    // VAT textures, and (since format 1.5) the meshes and `anchors.exr`.
    let mut files: Vec<(String, u64, u32)> = Vec::new();
    let bones = container.metadata().textures.iter();
    files.extend(
        bones
            .filter(|t| t.storage == Storage::File)
            .map(|t| (t.name.clone(), t.bytes, t.crc32)),
    );
    if let Some(vat) = container.records().vat.as_ref() {
        files.extend(
            vat.textures
                .iter()
                .filter(|t| t.storage == Storage::File)
                .map(|t| (t.name.clone(), t.bytes, t.crc32)),
        );
    }
    if let Some(outputs) = container.records().outputs.as_ref() {
        files.extend(
            outputs
                .files
                .iter()
                .map(|f| (f.name.clone(), f.bytes, f.crc32)),
        );
    }
    // A file two records name (packed normals) is read once.
    let mut seen = std::collections::BTreeSet::new();
    files.retain(|f| seen.insert(f.0.clone()));
    for (name, bytes, crc32) in files {
        let file = dir.join(&name);
        match rigbake_format::fsread::checksum_regular(&file, bytes) {
            Err(e) => return Some(e.to_string()),
            Ok(found) if found != (bytes, crc32) => {
                return Some(format!(
                    "{}: size or checksum differs from the metadata",
                    file.display()
                ));
            }
            Ok(_) => {}
        }
    }
    None
}

/// A container that cannot be opened.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", file.display())]
pub struct InspectError {
    /// The container file.
    pub file: std::path::PathBuf,
    /// Why it cannot be read.
    pub source: FormatError,
}

/// Opens `file` and builds its report; with `verify`, also reads every
/// payload and texture file and records whether every checksum matched (the
/// first mismatch is returned as the second value).
pub fn load_report(
    file: &Path,
    verify_all: bool,
) -> Result<(InspectReport, Option<String>), InspectError> {
    let mut container = Container::open(file).map_err(|source| InspectError {
        file: file.to_path_buf(),
        source,
    })?;
    let mut problem = None;
    let verified = if verify_all {
        let dir = file.parent().unwrap_or(Path::new("."));
        problem = verify(&mut container, dir).map(|e| format!("{}: {e}", file.display()));
        Some(problem.is_none())
    } else {
        None
    };
    let report = InspectReport {
        schema_version: INSPECT_SCHEMA_VERSION,
        file: file.display().to_string(),
        container: ContainerInfo {
            format_version: container.version().to_string(),
            bytes: container.file_len(),
            sections: container.sections().iter().map(section_info).collect(),
            bake_key: container.bake_key().map(str::to_owned),
            source_location: container
                .records()
                .source
                .as_ref()
                .map(|s| s.relative_path.clone()),
        },
        totals: totals(container.metadata(), container.records().vat.as_ref()),
        metadata: container.metadata().clone(),
        vat: container.records().vat.as_ref().cloned(),
        weights: container.records().weights.as_ref().cloned(),
        rig: container.records().rig.as_ref().cloned(),
        texture_layout: container.records().layout.as_ref().cloned(),
        vat_compression: container.records().vat_compression.as_ref().cloned(),
        lods: container.records().lods.as_ref().cloned(),
        lod_details: container.records().lod_details.as_ref().cloned(),
        texture_container: container.records().texture_container.as_ref().copied(),
        placement: container.records().placement.as_ref().cloned(),
        clip_errors: container.records().clip_errors.as_ref().cloned(),
        verified,
        sidecar: crate::sidecar::Sidecar::build(crate::sidecar::Records {
            container: &file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            metadata: container.metadata(),
            records: container.records(),
        }),
    };
    Ok((report, problem))
}

/// The serde (snake_case) name of an enum value, as in the JSON output.
pub(crate) fn name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn error_text(e: f64) -> String {
    if e == 0.0 {
        "0 (lossless)".to_owned()
    } else {
        format!("{e:.3e}")
    }
}

/// A number for reading: at most three decimals, trailing zeros dropped
/// (`0.7083333134651184` -> `0.708`, `0.25` -> `0.25`, `30.0` -> `30`).
/// The JSON document keeps full precision.
fn short(x: f64) -> String {
    let text = format!("{x:.3}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    if text == "-0" {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}

/// `(1.25, -0.5, 3)`: a vector of stored f32 values, each in the shortest
/// text that reads back to the same f32 (bounds decode samples, so they are
/// shown exactly).
fn vector(values: &[f32]) -> String {
    let parts: Vec<String> = values.iter().map(|x| x.to_string()).collect();
    format!("({})", parts.join(", "))
}

fn kib(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

/// The longest name shown in full in the text summary, in characters;
/// longer ones are cut and end in `…` (the JSON document has them whole).
pub const SHOWN_NAME_CHARS: usize = 80;

/// A name from the container as the text summary shows it: control
/// characters (escape sequences, CR, NUL...) escaped as `\u{..}` / `\n`,
/// and cut to [`SHOWN_NAME_CHARS`] characters plus `…`, so a hostile name
/// can neither drive the terminal nor blow up column widths.
pub fn shown(text: &str) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == SHOWN_NAME_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// [`shown`] for each name, joined with `, `.
fn shown_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| shown(n))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The LOD groups: per level its node, size, weights mesh and VAT entries,
/// and (format 1.9) its file, influences and their loss.
fn render_lods(
    s: &mut String,
    l: &rigbake_format::meta::LodsMetadata,
    details: Option<&rigbake_format::meta::LodDetailsMetadata>,
) {
    let _ = writeln!(
        s,
        "\nLODs ({})",
        count(l.groups.len() as u64, "group", None)
    );
    for (gi, g) in l.groups.iter().enumerate() {
        let _ = writeln!(
            s,
            "  {} ({}, from {})",
            g.levels
                .first()
                .map_or_else(String::new, |b| shown(&b.node)),
            count(g.levels.len() as u64, "level", None),
            name(&g.source)
        );
        for (k, level) in g.levels.iter().enumerate() {
            let coverage = level
                .screen_coverage
                .map_or_else(String::new, |c| format!("  coverage {c}"));
            let weights = level.weights_file.as_deref().map_or_else(String::new, |f| {
                format!("  weights {} {:?}", shown(f), level.weights_primitives)
            });
            let vat = if level.vat_primitives.is_empty() {
                String::new()
            } else {
                format!("  vat {:?}", level.vat_primitives)
            };
            let detail = details.and_then(|d| d.groups.get(gi)?.get(k));
            let kept = detail.map_or_else(String::new, |d| {
                format!(
                    "  {} (dropped weight max {:.4}, position error {})",
                    count(u64::from(d.max_influences), "influence", None),
                    d.dropped_max,
                    error_text(d.position_error)
                )
            });
            let file = detail
                .and_then(|d| d.file.as_ref())
                .map_or_else(String::new, |f| {
                    format!("  from {} (node {})", shown(&f.file_name), shown(&f.node))
                });
            let _ = writeln!(
                s,
                "    LOD{k} {}  {}  {}{coverage}{weights}{vat}{kept}{file}",
                shown(&level.node),
                count(u64::from(level.vertices), "vertex", Some("vertices")),
                count(u64::from(level.triangles), "triangle", None),
            );
        }
    }
}

/// The width of a column of the clips' shown names (at least 4).
pub(crate) fn clip_name_width(m: &Metadata) -> usize {
    m.clips
        .iter()
        .map(|c| shown(&c.name).chars().count())
        .max()
        .unwrap_or(4)
        .max(4)
}

/// The human-readable summary, section by section.
pub fn render(r: &InspectReport) -> String {
    let mut s = String::new();
    render_header(&mut s, r);
    let width = render_clips(&mut s, r);
    render_root_motion(&mut s, r, width);
    render_skins_and_textures(&mut s, r);
    render_rig(&mut s, r);
    render_weights(&mut s, r);
    if let Some(l) = &r.lods {
        render_lods(&mut s, l, r.lod_details.as_ref());
    }
    render_vat(&mut s, r);
    if let Some(e) = &r.clip_errors {
        let context = crate::inspect_errors::Context {
            metadata: &r.metadata,
            vat: r.vat.as_ref(),
            shown,
            width: clip_name_width(&r.metadata),
        };
        crate::inspect_errors::render(&mut s, e, &context);
    }
    render_placement(&mut s, r);
    render_totals(&mut s, r);
    s
}

/// Where the meshes stand: each space's node and whole rest-pose transform.
fn render_placement(s: &mut String, r: &InspectReport) {
    let Some(p) = &r.placement else { return };
    let _ = writeln!(
        s,
        "
placement (each mesh's node matrix; lookup UV {})",
        name(&p.lookup_uv)
    );
    let spaces = std::iter::once(("reference".to_owned(), &p.reference)).chain(
        p.skins
            .iter()
            .enumerate()
            .map(|(i, k)| (format!("skin {i}"), k)),
    );
    for (what, placed) in spaces {
        let _ = writeln!(
            s,
            "  {what:<10} {}  {}",
            placed
                .node
                .as_deref()
                .map_or("(scene root)".to_owned(), shown),
            if placed.is_identity() {
                "identity".to_owned()
            } else {
                transform_text(&placed.matrix)
            }
        );
    }
}

/// A column-major affine matrix in words: translation, rotation (degrees
/// about a unit axis) and scale when it is such a product (within 1e-9 of
/// its largest entry), else its rows.
fn transform_text(m: &[f64; 16]) -> String {
    let matrix = glam::DMat4::from_cols_array(m);
    let (scale, rotation, translation) = matrix.to_scale_rotation_translation();
    let rebuilt = glam::DMat4::from_scale_rotation_translation(scale, rotation, translation);
    let size = m.iter().fold(1.0f64, |a, v| a.max(v.abs()));
    let exact = (matrix - rebuilt)
        .to_cols_array()
        .iter()
        .all(|d| d.abs() <= 1e-9 * size);
    if !exact {
        let rows: Vec<String> = (0..3)
            .map(|r| format!("({}, {}, {}, {})", m[r], m[4 + r], m[8 + r], m[12 + r]))
            .collect();
        return format!("matrix rows {}", rows.join(" "));
    }
    let t = translation;
    let mut text = format!("translation ({}, {}, {})", t.x, t.y, t.z);
    // The angle in (-180, 180] degrees about an axis whose largest
    // component is positive: -90 degrees about X, not 270 or about -X.
    let (mut axis, mut angle) = rotation.to_axis_angle();
    if angle > std::f64::consts::PI {
        angle -= std::f64::consts::TAU;
    }
    let major = axis.abs().max_element();
    if [axis.x, axis.y, axis.z].iter().any(|&c| c == -major) {
        (axis, angle) = (-axis, -angle);
    }
    if angle.abs() > 1e-12 {
        let round = |v: f64| (v * 1e6).round() / 1e6 + 0.0;
        text.push_str(&format!(
            ", rotation {}° about ({}, {}, {})",
            round(angle.to_degrees()),
            round(axis.x),
            round(axis.y),
            round(axis.z)
        ));
    }
    if (scale - glam::DVec3::ONE).abs().max_element() > 1e-12 {
        if (scale - glam::DVec3::splat(scale.x)).abs().max_element() <= 1e-12 * scale.x.abs() {
            text.push_str(&format!(", scale {}", scale.x));
        } else {
            text.push_str(&format!(", scale ({}, {}, {})", scale.x, scale.y, scale.z));
        }
    }
    text
}

/// Where the bake comes from and how it was made.
fn render_header(s: &mut String, r: &InspectReport) {
    let m = &r.metadata;
    let _ = writeln!(
        s,
        "model     {} ({} bytes, sha256 {})",
        shown(&m.source.file_name),
        m.source.bytes,
        m.source.sha256
    );
    if let Some(location) = &r.container.source_location {
        let _ = writeln!(
            s,
            "source at {} (relative to the container)",
            shown(location)
        );
    }
    let _ = writeln!(
        s,
        "written   by {} {}, container format {} ({})",
        shown(&m.tool.name),
        shown(&m.tool.version),
        r.container.format_version,
        kib(r.container.bytes)
    );
    let _ = writeln!(
        s,
        "options   {} fps {}, layout {}, precision {}, max texture {}",
        short(m.options.fps),
        name(&m.options.sampling),
        name(&m.options.layout),
        name(&m.options.precision),
        m.options.max_texture_size
    );
}

/// The clip table and the clips' origins (ranges, blends); returns the
/// name column's width.
fn render_clips(s: &mut String, r: &InspectReport) -> usize {
    let m = &r.metadata;
    let _ = writeln!(
        s,
        "\nclips ({}, {} frames)",
        r.totals.clips, r.totals.frames
    );
    let width = clip_name_width(m);
    let _ = writeln!(
        s,
        "  {:>3}  {:<width$}  {:>6}  {:>6}  {:>9}  loop",
        "#", "name", "row", "frames", "duration"
    );
    for (i, c) in m.clips.iter().enumerate() {
        let _ = writeln!(
            s,
            "  {:>3}  {:<width$}  {:>6}  {:>6}  {:>7.3} s  {}",
            i,
            shown(&c.name),
            c.start_row,
            c.frames,
            c.duration,
            if c.looping { "yes" } else { "no" }
        );
    }
    if let Some(rig) = &r.rig {
        for origin in &rig.clip_origins {
            let text = match origin {
                ClipOrigin::Range {
                    clip,
                    source,
                    start,
                    end,
                } => format!(
                    "clip {clip}: {} from {} s to {} s",
                    shown(source),
                    short(*start),
                    short(*end)
                ),
                ClipOrigin::Blend {
                    clip,
                    first,
                    second,
                    weight,
                } => format!(
                    "clip {clip}: blend of {} and {} at weight {}",
                    shown(first),
                    shown(second),
                    short(*weight)
                ),
            };
            let _ = writeln!(s, "  {text}");
        }
    }
    width
}

/// Root motion per clip, in the clip table's `width`.
fn render_root_motion(s: &mut String, r: &InspectReport, width: usize) {
    let m = &r.metadata;
    if let Some(motion) = &r.sidecar.root_motion {
        let _ = writeln!(
            s,
            "\nroot motion (root {}, scene-root space; per clip: travel x, z and turn over the clip)",
            shown(&motion.node)
        );
        for (i, (c, clip)) in motion.clips.iter().zip(&m.clips).enumerate() {
            let _ = writeln!(
                s,
                "  {:>3}  {:<width$}  {}",
                i,
                shown(&clip.name),
                if c.mode.extracts() {
                    let [x, _, z] = c.displacement;
                    format!(
                        "{}: travels ({}, {}), {} units; turns {} degrees",
                        name(&c.mode),
                        short(x),
                        short(z),
                        short(x.hypot(z)),
                        short(c.rotation.to_degrees())
                    )
                } else {
                    "keep: baked as it moves".to_owned()
                }
            );
        }
    }
}

/// Bone sets and their textures.
fn render_skins_and_textures(s: &mut String, r: &InspectReport) {
    let m = &r.metadata;
    let _ = writeln!(s, "\nskins ({})", m.skins.len());
    for (i, k) in m.skins.iter().enumerate() {
        let _ = writeln!(
            s,
            "  {:>3}  {}  {}  texture {}  meshes: {}",
            i,
            shown(&k.name),
            count(k.joints.len() as u64, "joint", None),
            k.texture,
            shown_list(&k.mesh_nodes)
        );
    }
    let _ = writeln!(
        s,
        "\ntextures ({}, {}{})",
        r.totals.textures,
        kib(r.totals.texture_bytes),
        r.texture_container
            .map(|t| format!(", every texture in {} files", name(&t.container)))
            .unwrap_or_default()
    );
    for (i, t) in m.textures.iter().enumerate() {
        let place = match t.storage {
            Storage::File => "file".to_owned(),
            Storage::Section(n) => format!("section {n}"),
        };
        let _ = writeln!(
            s,
            "  {:>3}  {}  {}  {} x {}  {} {} {}  {}  {}  max error {}",
            i,
            name(&t.kind),
            shown(&t.name),
            t.width,
            t.height,
            name(&t.layout),
            name(&t.precision),
            r.texture_container
                .map_or_else(|| name(&t.encoding), |c| name(&c.container)),
            kib(t.bytes),
            place,
            error_text(t.max_error)
        );
    }
}

/// Anchors and props.
fn render_rig(s: &mut String, r: &InspectReport) {
    if let Some(rig) = &r.rig {
        if !rig.anchors.is_empty() {
            let _ = writeln!(
                s,
                "\nanchors ({}, model space: {}{})",
                rig.anchors.len(),
                rig.reference_node
                    .as_deref()
                    .map_or_else(|| "scene root".to_owned(), shown),
                rig.anchor_texture
                    .as_deref()
                    .map(|t| format!(", texture {}", shown(t)))
                    .unwrap_or_default()
            );
            for a in &rig.anchors {
                let mesh = a
                    .mesh
                    .as_deref()
                    .map(|m| format!("  mesh {}", shown(m)))
                    .unwrap_or_default();
                let _ = writeln!(s, "  {}  ({}){mesh}", shown(&a.node), name(&a.reason));
            }
        }
        if !rig.props.is_empty() {
            let _ = writeln!(s, "\nprops ({})", rig.props.len());
            for p in &rig.props {
                let _ = writeln!(
                    s,
                    "  {} (mesh {}) under {}: {}",
                    shown(&p.node),
                    shown(&p.mesh),
                    shown(&p.joint),
                    name(&p.mode)
                );
            }
        }
    }
}

/// The bone-weight record.
fn render_weights(s: &mut String, r: &InspectReport) {
    if let Some(w) = &r.weights {
        let _ = writeln!(
            s,
            "\nbone weights ({} per vertex in {} UV1..UV{}; mesh {})",
            count(u64::from(w.max_influences), "pair", None),
            count(u64::from(w.channels), "channel", None),
            w.channels,
            w.mesh_file
                .as_deref()
                .map_or_else(|| "none".to_owned(), shown)
        );
        for p in &w.primitives {
            let _ = writeln!(
                s,
                "  {} p{}  {}  skin {}  dropped weight max {:.4} mean {:.4}  position error {}",
                shown(&p.node),
                p.primitive,
                count(u64::from(p.vertices), "vertex", Some("vertices")),
                p.skin,
                p.dropped_max,
                p.dropped_mean,
                error_text(p.position_error)
            );
        }
    }
}

/// The VAT record.
fn render_vat(s: &mut String, r: &InspectReport) {
    if let Some(v) = &r.vat {
        let _ = writeln!(
            s,
            "\nvertex animation ({}, {}{}, normals {}, model space: {})",
            count(v.primitives.len() as u64, "primitive", None),
            name(&v.encoding),
            if v.encoding.is_normalised() {
                format!(" with {} directions", name(&v.direction_encoding))
            } else {
                String::new()
            },
            name(&v.normal_convention),
            v.reference_node
                .as_deref()
                .map_or_else(|| "scene root".to_owned(), shown)
        );
        let placement = r.texture_layout.as_ref().and_then(|l| l.vat.as_ref());
        if let Some(l) = placement {
            let _ = writeln!(s, "  layout: {}", name(&l.layout));
        }
        for (k, p) in v.primitives.iter().enumerate() {
            let first = placement
                .and_then(|l| l.first_vertex.get(k))
                .filter(|&&f| f > 0)
                .map_or_else(String::new, |f| format!(" from vertex {f}"));
            let streams: Vec<String> = [Some(p.positions), p.normals, p.tangents]
                .into_iter()
                .flatten()
                .map(|i| {
                    usize::try_from(i)
                        .ok()
                        .and_then(|i| v.textures.get(i))
                        .map_or_else(|| format!("<no texture {i}>"), |t| shown(&t.name))
                })
                .collect();
            let _ = writeln!(
                s,
                "  {} p{} ({}, {}{}{})  {} x {} ({} band{})  {}",
                shown(&p.node),
                p.primitive,
                name(&p.deformation),
                if p.morphed { "morphed, " } else { "" },
                count(u64::from(p.vertices), "vertex", Some("vertices")),
                first,
                p.width,
                p.height,
                p.bands,
                if p.bands == 1 { "" } else { "s" },
                streams.join(", ")
            );
            let fold = r.texture_layout.as_ref().and_then(|l| {
                l.folds
                    .iter()
                    .find(|f| f.texture == rigbake_format::meta::FoldedTexture::Vat(p.positions))
            });
            if let Some(f) = fold {
                let _ = writeln!(
                    s,
                    "    folded: {} rows per column block of {} x {} texels, {} per page, {} per stream (page k: the stream's first texture + k)",
                    f.rows_per_block,
                    f.block_width,
                    f.rows_per_block.saturating_mul(f.row_height),
                    count(u64::from(f.blocks_per_page), "block", None),
                    count(u64::from(f.pages), "page", None),
                );
            }
        }
        // PNG16 textures store samples normalised to per-channel bounds;
        // an engine needs them to decode (docs/engines.md).
        for t in &v.textures {
            if let Some([min, max]) = &t.bounds {
                let _ = writeln!(
                    s,
                    "  bounds {}: min {}  max {}",
                    shown(&t.name),
                    vector(&min[..usize::from(t.channels).min(4)]),
                    vector(&max[..usize::from(t.channels).min(4)])
                );
            }
        }
        let worst = |stream: rigbake_format::meta::VatStream| {
            v.textures
                .iter()
                .filter(|t| t.stream == stream)
                .map(|t| t.max_error)
                .reduce(f64::max)
        };
        let positions = worst(rigbake_format::meta::VatStream::Positions).unwrap_or(0.0);
        let directions = [
            worst(rigbake_format::meta::VatStream::Normals),
            worst(rigbake_format::meta::VatStream::Tangents),
        ]
        .into_iter()
        .flatten()
        .reduce(f64::max);
        let _ = writeln!(
            s,
            "  largest error: positions {} model units, {}",
            error_text(positions),
            match directions {
                Some(e) => format!("normals/tangents {} degrees", error_text(e)),
                None => "no normal or tangent textures".to_owned(),
            }
        );
        if !v.static_primitives.is_empty() {
            let names: Vec<String> = v
                .static_primitives
                .iter()
                .map(|p| format!("{} p{}", shown(&p.node), p.primitive))
                .collect();
            let _ = writeln!(s, "  static (not baked): {}", names.join(", "));
        }
    }
}

/// Sums, and the checksum verdict.
fn render_totals(s: &mut String, r: &InspectReport) {
    let _ = writeln!(
        s,
        "\ntotals    {}, {} ({} embedded), largest encoding error {}; {}, {}",
        count(r.totals.textures as u64, "bone texture", None),
        kib(r.totals.texture_bytes),
        kib(r.totals.embedded_texture_bytes),
        error_text(r.totals.max_error),
        count(r.totals.vat_textures as u64, "VAT texture", None),
        kib(r.totals.vat_texture_bytes)
    );
    if let Some(v) = r.verified {
        let _ = writeln!(
            s,
            "verified  {}",
            if v { "all checksums match" } else { "FAILED" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::transform_text;

    #[test]
    fn placement_text_shows_the_whole_transform() {
        // CesiumMan's placement: -90 degrees about X (y -> -z, z -> y).
        let turn = [
            1.0, 0.0, 0.0, 0.0, //
            0.0, 0.0, -1.0, 0.0, //
            0.0, 1.0, 0.0, 0.0, //
            1.0, 2.0, 3.0, 1.0,
        ];
        assert_eq!(
            transform_text(&turn),
            "translation (1, 2, 3), rotation -90° about (1, 0, 0)"
        );
        let mut scaled = [0.0; 16];
        for i in [0, 5, 10] {
            scaled[i] = 2.0;
        }
        scaled[15] = 1.0;
        assert_eq!(transform_text(&scaled), "translation (0, 0, 0), scale 2");
        let mut sheared = scaled;
        sheared[4] = 0.5;
        assert!(transform_text(&sheared).starts_with("matrix rows (2, 0.5, 0, 0)"));
    }
}
