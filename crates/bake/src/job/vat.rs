//! The VAT output: plan, bake row batches, stream them into one file per
//! stream and texture set (the model's atlas, or each primitive), stage or
//! embed, describe.

use std::path::PathBuf;

use rigbake_core::bake::bounds::{RowBoxes, StaticPart, planar_bounds};
use rigbake_core::bake::vat::{self, VatBaker, VatBatch};
use rigbake_core::timeline::Timeline;
use rigbake_core::{ErrorKind, Model};
use rigbake_format::glb;
use rigbake_format::meta::{self, VatStream};
use rigbake_format::texture::gpu::TextureContainer;
use rigbake_format::vat::{
    EMPTY_BOUNDS, VatFileSpec, VatFileWriter, pack_normal_rows, stream_floats,
};

use super::Observer;
use super::common::{Part, bounded_stem, file_safe, node_name};
use super::mesh;
use super::placement::RestPlacements;
use super::vat_errors::{NormalsIn, VatErrorTally, stored_normals};
use crate::error::StepError;
use crate::records;
use crate::settings::{BakeSettings, VatSettings};
use crate::sink::Sink;

/// Texels per row batch: large enough to keep both cores busy, small enough
/// to keep memory flat. A multiple of 16 rows (an EXR ZIP block).
const BATCH_TEXELS: usize = 1 << 18;

/// The extension of VAT files: the container's (`ktx2`, `dds`), else
/// `png` or `exr` by encoding.
fn extension(settings: &VatSettings, container: TextureContainer) -> &'static str {
    match (container.extension(), settings.encoding) {
        (Some(ext), _) => ext,
        (None, e) if e.is_normalised() => "png",
        (None, _) => "exr",
    }
}

fn stream_name(stream: VatStream) -> &'static str {
    match stream {
        VatStream::Positions => "positions",
        VatStream::Normals => "normals",
        VatStream::Tangents => "tangents",
    }
}

/// The file of page `page` of `pages` of a stream of the texture set
/// `base`: `<base>.<stream>.<ext>` when the set has one page (unfolded, or
/// folded into column blocks of one texture) or its pages are the layers of
/// one file (KTX2, DDS: called with `pages` 1), else
/// `<base>.<stream>.page<k>.<ext>` for every page, `k` from 0.
fn page_file_name(base: &str, stream: VatStream, page: usize, pages: usize, ext: &str) -> String {
    if pages > 1 {
        format!("{base}.{}.page{page}.{ext}", stream_name(stream))
    } else {
        format!("{base}.{}.{ext}", stream_name(stream))
    }
}

/// Rows per batch for a texture `width` texels wide.
fn batch_rows(width: usize) -> usize {
    (BATCH_TEXELS / width.max(1)).max(1).div_ceil(16) * 16
}

/// Batch buffers done with, kept to be refilled (stale contents) so that a
/// bake allocates and page-faults its batch memory once, not per batch.
type Pool = Vec<Vec<f32>>;

/// Buffers kept in a [`Pool`], at most (the rest are freed).
const POOL_MAX: usize = 12;

/// Calls `each(first_row, rows, batch)` for every row batch of texture set
/// `index`, in buffers from `pool`, with positions and the other streams
/// `wanted` (normals, tangents) of those the set bakes. The buffers
/// move into `each` (which may hand them to writer threads); the buffers it
/// returns go back to the pool.
fn for_each_batch(
    baker: &VatBaker<'_>,
    index: usize,
    pool: &mut Pool,
    wanted: (bool, bool),
    mut each: impl FnMut(
        usize,
        usize,
        Vec<f32>,
        Option<Vec<f32>>,
        Option<Vec<f32>>,
    ) -> Result<Vec<Vec<f32>>, StepError>,
) -> Result<(), StepError> {
    let p = &baker.plan().sets[index];
    // The unfolded rows: a folded set's pages are cut from these.
    let width = p.layout.width;
    let height = if p.layout.is_folded() {
        p.layout.frames * p.layout.bands
    } else {
        p.layout.height
    };
    let step = batch_rows(width);
    let mut first = 0;
    while first < height {
        let rows = step.min(height - first);
        // Every element is overwritten by `fill` (padding included); new
        // buffers get room for the largest batch of any primitive.
        let mut buffer = |floats: usize| {
            let mut v = pool
                .pop()
                .unwrap_or_else(|| Vec::with_capacity((BATCH_TEXELS + 16 * width) * 4));
            v.resize(rows * width * floats, 0.0);
            v
        };
        let mut positions = buffer(3);
        let mut normals = (p.normals && wanted.0).then(|| buffer(3));
        let mut tangents = (p.tangents && wanted.1).then(|| buffer(4));
        baker
            .fill(
                index,
                first,
                rows,
                VatBatch {
                    positions: &mut positions,
                    normals: normals.as_deref_mut(),
                    tangents: tangents.as_deref_mut(),
                },
            )
            .map_err(StepError::bare)?;
        pool.extend(each(first, rows, positions, normals, tangents)?);
        pool.truncate(POOL_MAX);
        first += rows;
    }
    Ok(())
}

/// Calls `each(positions, normals, tangents)` for every row batch of page
/// `page` of folded texture set `index` (every stream the set bakes): each
/// column block's rows are baked unfolded into buffers from `pool` and
/// copied to their place in the page's planar rows; texels no row reaches
/// (the last block's tail, padding) are zero. `observers` hear every
/// baked row.
fn for_each_page_batch(
    baker: &VatBaker<'_>,
    index: usize,
    page: usize,
    pool: &mut Pool,
    observers: &mut Observers<'_>,
    mut each: impl FnMut(
        Vec<f32>,
        Option<Vec<f32>>,
        Option<Vec<f32>>,
    ) -> Result<Vec<Vec<f32>>, StepError>,
) -> Result<(), StepError> {
    let set = &baker.plan().sets[index];
    let l = set.layout;
    let (bw, pw, ph) = (l.width, l.page_width, l.height);
    let per_page = l.fold.blocks_per_page as usize;
    let (block_height, unfolded) = (l.block_height(), l.frames * l.bands);
    let step = batch_rows(pw);
    let mut first = 0;
    while first < ph {
        let rows = step.min(ph - first);
        let zeroed = |floats: usize, pool: &mut Pool| {
            let mut v = pool.pop().unwrap_or_default();
            v.clear();
            v.resize(rows * pw * floats, 0.0);
            v
        };
        let mut out = [
            Some(zeroed(3, pool)),
            set.normals.then(|| zeroed(3, pool)),
            set.tangents.then(|| zeroed(4, pool)),
        ];
        for slot in 0..per_page {
            let block = page * per_page + slot;
            let start = block * block_height + first;
            if first >= block_height || start >= unfolded {
                continue;
            }
            let n = rows.min(block_height - first).min(unfolded - start);
            let temp = |floats: usize, wanted: bool, pool: &mut Pool| {
                wanted.then(|| {
                    let mut v = pool.pop().unwrap_or_default();
                    v.resize(n * bw * floats, 0.0);
                    v
                })
            };
            let mut pos = temp(3, true, pool).unwrap_or_default();
            let mut nrm = temp(3, set.normals, pool);
            let mut tan = temp(4, set.tangents, pool);
            baker
                .fill(
                    index,
                    start,
                    n,
                    VatBatch {
                        positions: &mut pos,
                        normals: nrm.as_deref_mut(),
                        tangents: tan.as_deref_mut(),
                    },
                )
                .map_err(StepError::bare)?;
            let len = n * bw * 3;
            observers.rows(&l, start, &pos[..len], nrm.as_deref().map(|v| &v[..len]));
            let [o_pos, o_nrm, o_tan] = &mut out;
            for (src, dst, floats) in [
                (Some(&pos), o_pos.as_mut(), 3),
                (nrm.as_ref(), o_nrm.as_mut(), 3),
                (tan.as_ref(), o_tan.as_mut(), 4),
            ] {
                let (Some(src), Some(dst)) = (src, dst) else {
                    continue;
                };
                for r in 0..n {
                    for c in 0..floats {
                        let from = (r * floats + c) * bw;
                        let to = (r * floats + c) * pw + slot * bw;
                        dst[to..to + bw].copy_from_slice(&src[from..from + bw]);
                    }
                }
            }
            pool.extend([Some(pos), nrm, tan].into_iter().flatten());
        }
        let [pos, nrm, tan] = out;
        pool.extend(each(pos.unwrap_or_default(), nrm, tan)?);
        pool.truncate(POOL_MAX);
        first += rows;
    }
    Ok(())
}

/// Bounds of the real (non-padding) texels of positions and of the other
/// streams `wanted` (normals, tangents) of texture set `index`, for the
/// normalised encodings: positions alone through the culled pass
/// ([`VatBaker::position_bounds`]), otherwise a first pass over every
/// batch. Streams not wanted (octahedral directions need no bounds) are
/// not computed.
fn bounds(
    baker: &VatBaker<'_>,
    index: usize,
    pool: &mut Pool,
    wanted: (bool, bool),
) -> Result<[[[f32; 4]; 2]; 3], StepError> {
    let p = &baker.plan().sets[index];
    let layout = p.layout;
    let mut acc = [EMPTY_BOUNDS; 3];
    if wanted == (false, false) {
        // Positions alone: most chunks of vertices are culled.
        let [lo, hi] = baker.position_bounds(index);
        for c in 0..3 {
            (acc[0][0][c], acc[0][1][c]) = (lo[c], hi[c]);
        }
        return Ok(acc);
    }
    for_each_batch(baker, index, pool, wanted, |first, rows, pos, nrm, tan| {
        for r in 0..rows {
            let y = first + r;
            let (frame, band) = (y / layout.bands, y % layout.bands);
            if frame >= layout.frames {
                continue;
            }
            let real = (layout.vertices - band * layout.width).min(layout.width);
            let streams = [
                (Some(&pos), 0, 3),
                (nrm.as_ref(), 1, 3),
                (tan.as_ref(), 2, 4),
            ];
            for (values, s, floats) in streams {
                if let Some(v) = values {
                    let row = &v[r * layout.width * floats..(r + 1) * layout.width * floats];
                    planar_bounds(row, layout.width, floats, real, &mut acc[s]);
                }
            }
        }
        Ok([Some(pos), nrm, tan].into_iter().flatten().collect())
    })?;
    Ok(acc)
}

/// What hears every baked batch of unfolded rows before it is encoded: the
/// animated bounds and the set's clip errors.
struct Observers<'a> {
    boxes: &'a mut RowBoxes,
    errors: &'a mut VatErrorTally,
}

impl Observers<'_> {
    /// Unfolded rows `first..` of a set laid out as `layout` (positions,
    /// and normals when baked, as whole planar rows of three planes).
    fn rows(
        &mut self,
        layout: &vat::VatLayout,
        first: usize,
        positions: &[f32],
        normals: Option<&[f32]>,
    ) {
        self.boxes.add_rows(layout, first, positions);
        self.errors.add_positions(first, positions);
        if let Some(n) = normals {
            self.errors.add_normals(first, NormalsIn::Exact(n));
        }
    }
}

/// What the VAT output gives the rest of the job.
pub(super) struct VatOutput {
    /// The VAT record.
    pub metadata: meta::VatMetadata,
    /// Where each primitive's vertices sit in its texture set.
    pub placement: meta::VatPlacement,
    /// The fold of every folded texture's first page.
    pub folds: Vec<meta::FoldMeta>,
    /// The animated bounds' parts, measured on the baked positions.
    pub bounds: (StaticPart, RowBoxes),
    /// Which TEXCOORD sets each primitive of the playback mesh uses.
    pub uv_sets: Vec<meta::PrimitiveUvSets>,
    /// Per texture set, what its encoding costs per clip.
    pub clip_errors: Vec<meta::TextureClipErrors>,
    /// What `--max-error` chose and why, when it was given.
    pub choice: Option<String>,
    /// Directions asked for that some primitives cannot bake
    /// ([`missing_directions`]).
    pub warnings: Vec<String>,
}

/// Warnings for `--normals` / `--tangents` asked of primitives that have no
/// `NORMAL` / `TANGENT` attribute: those directions are not baked, which
/// would otherwise pass unnoticed (no normals texture at all when no
/// primitive has them).
fn missing_directions(
    model: &Model,
    plan: &vat::VatPlan,
    options: &vat::VatOptions,
) -> Vec<String> {
    let mut warnings = Vec::new();
    /// Whether a primitive bakes the stream.
    type Baked = fn(&vat::VatPrimitive) -> bool;
    let streams: [(bool, &str, &str, Baked); 2] = [
        (options.normals, "normals", "NORMAL", |p| p.normals),
        (options.tangents, "tangents", "TANGENT", |p| p.tangents),
    ];
    for (asked, stream, attribute, baked) in streams {
        if !asked {
            continue;
        }
        let missing: Vec<String> = plan
            .primitives
            .iter()
            .filter(|p| !baked(p))
            .map(|p| format!("`{}` p{}", node_name(model, p.node), p.primitive))
            .collect();
        if missing.is_empty() {
            continue;
        }
        let shown = match missing.len() {
            n if n <= 3 => missing.join(", "),
            n => format!("{} and {} more", missing[..3].join(", "), n - 3),
        };
        let outcome = if plan.primitives.iter().any(baked) {
            format!("they read zero in the {stream} texture")
        } else {
            format!("no {stream} texture is written")
        };
        warnings.push(format!(
            "--{stream} (or `{stream}` in the manifest's vat table): {} of {} VAT primitives have no {attribute} attribute ({shown}), so their {stream} are not baked; {outcome}",
            missing.len(),
            plan.primitives.len()
        ));
    }
    warnings
}

/// The texture indices of one set's streams: (positions, normals,
/// tangents).
type SetTextures = (u32, Option<u32>, Option<u32>);

/// The file name base of texture set `index`: `<model>.vat` for an atlas,
/// else `<node>.p<primitive>` (`.n<node>` added when two nodes share a
/// name).
fn set_file_base(
    model: &Model,
    baker: &VatBaker<'_>,
    index: usize,
    used_names: &mut std::collections::BTreeSet<String>,
) -> String {
    match baker.plan().mode {
        vat::VatLayoutMode::Atlas => format!("{}.vat", bounded_stem(&file_safe(&model.name))),
        vat::VatLayoutMode::PerPrimitive => {
            let set = &baker.plan().sets[index];
            let p = &baker.plan().primitives[set.members[0]];
            let node_part = bounded_stem(&file_safe(&node_name(model, p.node)));
            let mut base = format!("{node_part}.p{}", p.primitive);
            if !used_names.insert(base.clone()) {
                base = format!("{base}.n{}", p.node);
                used_names.insert(base.clone());
            }
            base
        }
    }
}

/// The texture indices of `set`'s streams, numbered on from `next` (each
/// stream takes one texture per page, pages in order); advances `next`.
fn set_texture_indices(set: &vat::VatSet, next: &mut u32) -> SetTextures {
    let pages = set.layout.pages() as u32;
    let first = *next;
    let mut take = |present: bool| {
        present.then(|| {
            *next += pages;
            *next - pages
        })
    };
    let positions = take(true).unwrap_or(first);
    let normals = take(set.normals);
    let tangents = take(set.tangents);
    (positions, normals, tangents)
}

/// The fold records of a folded set's streams (none when it is unfolded).
fn set_folds(
    set: &vat::VatSet,
    (positions, normals, tangents): SetTextures,
) -> Vec<meta::FoldMeta> {
    if !set.layout.is_folded() {
        return Vec::new();
    }
    let f = set.layout.fold;
    [Some(positions), normals, tangents]
        .into_iter()
        .flatten()
        .map(|t| meta::FoldMeta {
            texture: meta::FoldedTexture::Vat(t),
            rows_per_block: f.rows_per_block,
            row_height: f.row_height,
            block_width: f.block_width,
            blocks_per_page: f.blocks_per_page,
            pages: f.pages,
        })
        .collect()
}

/// The VAT record of every baked primitive, on its set's textures.
fn primitive_records(
    model: &Model,
    baker: &VatBaker<'_>,
    set_textures: &[SetTextures],
) -> Vec<meta::VatPrimitiveMeta> {
    baker
        .plan()
        .primitives
        .iter()
        .enumerate()
        .map(|(index, p)| {
            let (positions, normals, tangents) = set_textures[p.set];
            meta::VatPrimitiveMeta {
                node: node_name(model, p.node),
                mesh: model.meshes[p.mesh].name.clone(),
                primitive: p.primitive as u32,
                deformation: records::deformation(p.deformation),
                morphed: p.morphed,
                vertices: p.vertices as u32,
                frames: p.layout.frames as u32,
                width: p.layout.width as u32,
                bands: p.layout.bands as u32,
                height: p.layout.height as u32,
                positions,
                normals: normals.filter(|_| p.normals),
                tangents: tangents.filter(|_| p.tangents),
                playback_mesh: index as u32,
            }
        })
        .collect()
}

/// Plans, bakes and stages the vertex animation textures of `model` (the
/// observer hears nothing: the bake has one stage).
pub(super) fn bake(
    model: &Model,
    rest: &RestPlacements,
    timeline: &Timeline,
    settings: &BakeSettings,
    sink: &mut dyn Sink,
    _: &dyn Observer,
) -> Result<Part<VatOutput>, StepError> {
    let vs = &settings.vat;
    if vs.compression == meta::TextureCompression::Deflate {
        // What a PNG file is compressed with, never a choice to make: the
        // container's record would say an EXR mode was asked for.
        return Err(StepError::bare(rigbake_format::FormatError::Invalid(
            "VAT compression `deflate` is not a choice: PNG files are always deflate (leave the compression at none); EXR takes none, zip, piz or pxr24".to_owned(),
        )));
    }
    let plan = match vat::plan(model, timeline, &vs.options) {
        Ok(p) => p,
        Err(e) if e.kind == ErrorKind::NothingToBake => return Ok(Part::Skipped(e.message)),
        Err(e) => return Err(StepError::bare(e)),
    };
    let warnings = missing_directions(model, &plan, &vs.options);
    let reference_node = plan.reference_node.map(|n| node_name(model, n));
    let static_primitives = plan
        .static_primitives
        .iter()
        .map(|&(n, m, p)| meta::StaticPrimitiveMeta {
            node: node_name(model, n),
            mesh: model.meshes[m].name.clone(),
            primitive: p as u32,
        })
        .collect();
    let statics = StaticPart::of_plan(&plan);
    let mut boxes = RowBoxes::new(timeline.rows);
    let baker =
        VatBaker::new(model, timeline, plan, vs.options.convention).map_err(StepError::bare)?;
    let mut pool = Pool::new();
    // `--max-error`: the encoding chosen from the positions' bounds, which
    // a 16-bit bake then takes instead of measuring them again.
    let (chosen, known_bounds, choice) = match settings.max_error {
        Some(budget) => {
            let sets = baker.plan().sets.len();
            let known = (0..sets)
                .map(|i| bounds(&baker, i, &mut pool, (false, false)).map(|b| b[0]))
                .collect::<Result<Vec<_>, _>>()?;
            let boxes: Vec<[[f32; 3]; 2]> = known
                .iter()
                .map(|b| [[b[0][0], b[0][1], b[0][2]], [b[1][0], b[1][1], b[1][2]]])
                .collect();
            let normals = baker.plan().sets.iter().any(|s| s.normals);
            let (form, message) = super::budget::choose_vat(
                model,
                &boxes,
                (vs.compression, settings.texture_container),
                normals,
                budget,
            )?;
            let chosen = VatSettings {
                encoding: form.encoding,
                direction_encoding: form.directions,
                ..*vs
            };
            (chosen, known, Some(message))
        }
        None => (*vs, Vec::new(), None),
    };
    let vs = &chosen;
    let mut textures = Vec::new();
    let mut used_names = std::collections::BTreeSet::new();
    let mut pending: Option<StagedPrimitive> = None;
    let mut next_texture = 0u32;
    // Per set: the texture indices of its positions, normals and tangents.
    let mut set_textures = Vec::with_capacity(baker.plan().sets.len());
    // The fold of every folded texture's first page.
    let mut folds = Vec::new();
    let mut clip_errors = Vec::with_capacity(baker.plan().sets.len());
    for index in 0..baker.plan().sets.len() {
        let set = &baker.plan().sets[index];
        let base = set_file_base(model, &baker, index, &mut used_names);
        let (staged, errors) = bake_primitive(
            &baker,
            (index, timeline, known_bounds.get(index).copied()),
            &base,
            (vs, settings.texture_container),
            sink,
            &mut pool,
            &mut boxes,
        )?;
        // The previous set's writers finished their tails while this one
        // baked; its textures come first in the table.
        if let Some(previous) = pending.replace(staged) {
            textures.extend(finish_primitive(previous, sink, &mut pool)?);
        }
        let indices = set_texture_indices(set, &mut next_texture);
        clip_errors.push(meta::TextureClipErrors {
            subject: meta::ErrorSubject::Vat,
            texture: indices.0,
            clips: errors,
        });
        folds.extend(set_folds(set, indices));
        set_textures.push(indices);
    }
    let primitives = primitive_records(model, &baker, &set_textures);
    let placement = meta::VatPlacement {
        layout: baker.plan().mode,
        first_vertex: baker
            .plan()
            .primitives
            .iter()
            .map(|p| p.first_vertex as u32)
            .collect(),
    };
    let playback_name = format!("{}.vat.glb", model.name);
    let (document, lookups) = playback_document(model, rest, &baker, settings.lookup_uv_set);
    let uv_sets = lookups
        .into_iter()
        .enumerate()
        .map(|(i, (source_sets, lookup))| meta::PrimitiveUvSets {
            file: playback_name.clone(),
            mesh: i as u32,
            primitive: 0,
            source_sets: source_sets as u32,
            lookup: Some(lookup as u32),
            weights_first: None,
            weights_sets: 0,
        })
        .collect();
    if let Some(last) = pending.take() {
        textures.extend(finish_primitive(last, sink, &mut pool)?);
    }
    debug_assert_eq!(textures.len(), next_texture as usize);
    sink.write_file_streamed(&playback_name, &mut |out| {
        glb::write_glb_to(&document, out).map_err(|e| StepError::during("VAT playback mesh", e))
    })?;
    Ok(Part::Done(VatOutput {
        metadata: meta::VatMetadata {
            reference_node,
            normal_convention: vs.options.convention,
            encoding: vs.encoding,
            direction_encoding: vs.direction_encoding,
            max_texture_size: vs.options.max_texture_size as u32,
            power_of_two: vs.options.power_of_two,
            playback_file: Some(playback_name),
            primitives,
            static_primitives,
            textures,
        },
        placement,
        folds,
        bounds: (statics, boxes),
        uv_sets,
        clip_errors,
        choice,
        warnings,
    }))
}

/// The VAT compression record of `vat`: the compression asked for, and per
/// texture the one its file has (`deflate` for PNG, the asked EXR mode
/// for EXR, none for KTX2 and DDS, as
/// [`VatFileSpec::effective_compression`] applies it).
pub(super) fn compression_record(
    vat: &meta::VatMetadata,
    settings: &VatSettings,
    container: TextureContainer,
) -> meta::VatCompressionMetadata {
    meta::VatCompressionMetadata {
        requested: settings.compression,
        textures: vat
            .textures
            .iter()
            .map(|t| {
                rigbake_format::vat::effective_compression(
                    container,
                    t.encoding,
                    settings.compression,
                )
            })
            .collect(),
    }
}

/// The playback mesh: every baked primitive as a mesh of its own (in plan
/// order, so mesh `i` is `primitives[i]`), at the first frame, in model space,
/// with the source's vertex order, UVs, indices and materials, plus one more
/// TEXCOORD set holding each vertex's lookup UV, its set vertex `s =
/// first_vertex + v` split into two integers below 2048 (`(s mod 2048,
/// floor(s / 2048))`, [`vat::lookup_uv`]: exact when an importer stores UVs
/// as half floats), in set `lookup_set` or the lowest free one
/// ([`mesh::lookup_set`]). Every mesh stands on the reference node's rest
/// matrix. Also returns, per mesh, the source's UV set count and the
/// lookup's set.
fn playback_document(
    model: &Model,
    rest: &RestPlacements,
    baker: &VatBaker<'_>,
    lookup_set: Option<usize>,
) -> (glb::GlbDocument, Vec<(usize, usize)>) {
    let mut sets = Vec::new();
    let placed = rest.matrix(baker.plan().reference_node);
    let meshes = baker
        .plan()
        .primitives
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let prim = &model.meshes[p.mesh].primitives[p.primitive];
            let first = baker.vertices_at(i, 0);
            let mut out = mesh::base(prim);
            out.positions = first.positions;
            out.tangents = first.tangents.filter(|_| first.normals.is_some());
            out.normals = first.normals;
            let set = mesh::lookup_set(prim.tex_coords.len(), lookup_set);
            sets.push((prim.tex_coords.len(), set));
            mesh::insert_uv_set(
                &mut out,
                set,
                (p.first_vertex..p.first_vertex + p.vertices)
                    .map(vat::lookup_uv)
                    .collect(),
            );
            glb::GlbMesh {
                name: format!("{}.p{}", node_name(model, p.node), p.primitive),
                primitives: vec![out],
                matrix: Some(placed),
            }
        })
        .collect();
    let mut doc = mesh::document(model, meshes);
    if let Some(at) = lookup_set {
        mesh::shift_material_uv_sets(&mut doc, at);
    }
    (doc, sets)
}

/// The textures of one primitive, every row pushed to their writers, which
/// may still be encoding the last batches: [`finish_primitive`] waits for
/// them. Keeping one primitive in this state while the next one bakes keeps
/// both cores busy across primitive boundaries.
struct StagedPrimitive {
    base: String,
    /// Per file: what it holds (its `layers` pages).
    specs: Vec<VatFileSpec>,
    writers: Vec<VatFileWriter>,
    /// Per file: its name and where it is being written.
    files: Vec<(String, PathBuf)>,
    /// Normals packed into the positions files: the largest angle the
    /// packing cost, degrees (their records name the positions files).
    packed: Option<f64>,
}

/// With packed normals, the positions batch and the normals batch of one
/// row batch become one batch of four planes per row (the normals' code
/// in the fourth: [`pack_normal_rows`]), the worst angle kept in `worst`;
/// the buffers done with go to `spare`, each texel's cosine to `cosines`.
/// Otherwise the batches as they are.
fn pack_batches(
    packed: Option<&mut f64>,
    width: usize,
    [pos, nrm, tan]: [Option<Vec<f32>>; 3],
    (spare, cosines): (&mut Pool, &mut Vec<f32>),
) -> [Option<Vec<f32>>; 3] {
    let (Some(worst), Some(p), Some(n)) = (packed, pos.as_ref(), nrm.as_ref()) else {
        return [pos, nrm, tan];
    };
    let mut out = spare.pop().unwrap_or_default();
    *worst = worst.max(pack_normal_rows(p, n, width, &mut out, cosines));
    spare.extend([pos, nrm].into_iter().flatten());
    [Some(out), None, tan]
}

/// Gives the specs of set `index` that need bounds (PNG16 positions, and
/// directions stored over bounds) the bounds of their stream, measured in
/// a pass over the set's batches, or the positions' `known` ones when
/// nothing else is needed.
fn set_bounds(
    baker: &VatBaker<'_>,
    (index, known): (usize, Option<[[f32; 4]; 2]>),
    pool: &mut Pool,
    specs: &mut [VatFileSpec],
) -> Result<(), StepError> {
    if !specs.iter().any(VatFileSpec::needs_bounds) {
        return Ok(());
    }
    let wanted = |stream| specs.iter().any(|s| s.stream == stream && s.needs_bounds());
    let directions = (wanted(VatStream::Normals), wanted(VatStream::Tangents));
    let all = match known {
        Some(positions) if directions == (false, false) => [positions, EMPTY_BOUNDS, EMPTY_BOUNDS],
        _ => bounds(baker, index, pool, directions)?,
    };
    for spec in specs.iter_mut().filter(|s| s.needs_bounds()) {
        let slot = match spec.stream {
            VatStream::Positions => 0,
            VatStream::Normals => 1,
            VatStream::Tangents => 2,
        };
        let mut b = all[slot];
        let used = stream_floats(spec.stream);
        b[0][used..].fill(0.0);
        b[1][used..].fill(0.0);
        if spec.packed_normals {
            // The packed code: 0 to 1 is 0 to 65535.
            b[1][3] = 1.0;
        }
        spec.bounds = Some(b);
    }
    Ok(())
}

/// Streams every texture of one primitive to its writers, growing `boxes`
/// by the positions baked; see [`finish_primitive`]. Returns, with the
/// staged files, what the encoding costs per clip of `timeline`. The
/// positions' bounds, when `known`, are not measured again.
fn bake_primitive(
    baker: &VatBaker<'_>,
    (index, timeline, known): (usize, &Timeline, Option<[[f32; 4]; 2]>),
    base: &str,
    (vs, container): (&VatSettings, TextureContainer),
    sink: &mut dyn Sink,
    pool: &mut Pool,
    boxes: &mut RowBoxes,
) -> Result<(StagedPrimitive, Vec<meta::ClipErrorMeta>), StepError> {
    let p = &baker.plan().sets[index];
    let pages = p.layout.pages();
    // KTX2 and DDS keep a stream's pages as the layers of one file.
    let layers = if container.is_exr() { 1 } else { pages };
    // Packed normals live in the positions files' alpha: no file of their
    // own, a record naming the positions file (`finish_primitive`).
    let packed = p.normals
        && vs.encoding == meta::VatEncoding::Png16
        && vs.direction_encoding == meta::DirectionEncoding::Packed;
    let mut streams = vec![VatStream::Positions];
    if p.normals && !packed {
        streams.push(VatStream::Normals);
    }
    if p.tangents {
        streams.push(VatStream::Tangents);
    }
    let spec_of = |stream: VatStream| VatFileSpec {
        stream,
        width: p.layout.page_width,
        height: p.layout.height,
        encoding: vs.encoding,
        direction_encoding: vs.direction_encoding,
        compression: vs.compression,
        png_compression: vs.png_compression,
        bounds: None,
        container,
        layers,
        packed_normals: packed && stream == VatStream::Positions,
    };
    let mut specs: Vec<VatFileSpec> = streams.iter().map(|s| spec_of(*s)).collect();
    set_bounds(baker, (index, known), pool, &mut specs)?;
    let fail = |e| StepError::during(format!("VAT of {base}"), e);
    let ext = extension(vs, container);
    // One file per stream and page (or per stream, its pages as layers),
    // stream after stream, pages in order (the texture table's order).
    let files_per_stream = pages / layers;
    let specs: Vec<VatFileSpec> = specs
        .iter()
        .flat_map(|spec| std::iter::repeat_n(*spec, files_per_stream))
        .collect();
    let mut files = Vec::with_capacity(specs.len());
    let mut writers = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let name = page_file_name(
            base,
            spec.stream,
            i % files_per_stream,
            files_per_stream,
            ext,
        );
        let file = sink.stream_target(&name)?;
        writers.push(VatFileWriter::create(&file, *spec).map_err(fail)?);
        files.push((name, file));
    }
    let mut errors = VatErrorTally::new(
        p.layout,
        timeline,
        specs[0],
        stored_normals(&specs, p.normals),
    );
    // Unfolded sets measure stored streams (quantised, half floats) on what
    // their writers decode.
    let decoded_by_writer = |stream| {
        specs
            .iter()
            .any(|s| s.stream == stream && s.writer_decodes())
    };
    let (positions_decoded, normals_decoded) = (
        decoded_by_writer(VatStream::Positions),
        decoded_by_writer(VatStream::Normals),
    );
    let mut observers = Observers {
        boxes,
        errors: &mut errors,
    };
    let mut worst_angle = packed.then_some(0.0f64);
    let mut cosines = Vec::new();
    let width = p.layout.page_width;
    if p.layout.is_folded() {
        for page in 0..pages {
            for_each_page_batch(baker, index, page, pool, &mut observers, |pos, nrm, tan| {
                // This page's writer of every stream, in stream order (one
                // writer a stream when pages are layers).
                let of_page = writers
                    .iter_mut()
                    .skip(page % files_per_stream)
                    .step_by(files_per_stream);
                let mut spare = Vec::new();
                let batches = pack_batches(
                    worst_angle.as_mut(),
                    width,
                    [Some(pos), nrm, tan],
                    (&mut spare, &mut Vec::new()),
                );
                spare.extend(push_batches(of_page, batches, |_, _, _| {}).map_err(fail)?);
                Ok(spare)
            })?;
        }
    } else {
        for_each_batch(
            baker,
            index,
            pool,
            (true, true),
            |first, rows, positions, normals, tangents| {
                let len = rows * p.layout.width * 3;
                observers
                    .boxes
                    .add_rows(&p.layout, first, &positions[..len]);
                // Stored streams (quantised, half floats) are measured on
                // what their writer decoded (below); exact f32 here.
                if !positions_decoded {
                    observers.errors.add_positions(first, &positions[..len]);
                }
                let mut spare = Vec::new();
                // Packed normals are measured by the scores the packing
                // keeps (no second search for each texel's code).
                let exact = normals.as_deref().map(|n| &n[..len]);
                if let (Some(n), None, false) = (exact, worst_angle, normals_decoded) {
                    observers.errors.add_normals(first, NormalsIn::Exact(n));
                }
                let batches = pack_batches(
                    worst_angle.as_mut(),
                    width,
                    [Some(positions), normals, tangents],
                    (&mut spare, &mut cosines),
                );
                if worst_angle.is_some() {
                    observers
                        .errors
                        .add_normals(first, NormalsIn::Cosines(&cosines));
                }
                let errors = &mut *observers.errors;
                let packed = worst_angle.is_some();
                let measure = |spec: &VatFileSpec, exact: &[f32], decoded: &[f32]| {
                    // The batch's `rows` rows of the file's planes.
                    let n = rows * p.layout.width * spec.channels();
                    let (exact, decoded) = (
                        &exact[..n.min(exact.len())],
                        &decoded[..n.min(decoded.len())],
                    );
                    match spec.stream {
                        VatStream::Positions => errors.add_stored_positions(
                            first,
                            exact,
                            spec.channels(),
                            Some(decoded),
                        ),
                        VatStream::Normals if !packed => {
                            errors.add_normals(first, NormalsIn::Decoded(exact, decoded));
                        }
                        _ => {}
                    }
                };
                spare.extend(push_batches(writers.iter_mut(), batches, measure).map_err(fail)?);
                Ok(spare)
            },
        )?;
    }
    Ok((
        StagedPrimitive {
            base: base.to_owned(),
            specs,
            writers,
            files,
            packed: worst_angle,
        },
        errors.figures(),
    ))
}

/// Pushes one batch per stream (positions, then normals and tangents when
/// present) to `writers`, in order, hands `measure` each batch a writer
/// quantised with what a reader decodes of it (its spec, the exact and
/// the decoded planar rows), and returns the buffers they are done with.
fn push_batches<'w>(
    writers: impl Iterator<Item = &'w mut VatFileWriter>,
    batches: [Option<Vec<f32>>; 3],
    mut measure: impl FnMut(&VatFileSpec, &[f32], &[f32]),
) -> rigbake_format::Result<Vec<Vec<f32>>> {
    let mut batches = batches.into_iter().flatten();
    let mut spare = Vec::new();
    for w in writers {
        w.push_rows(batches.next().unwrap_or_default())?;
        if let Some((exact, decoded)) = w.last_rows() {
            measure(w.spec(), exact, decoded);
        }
        spare.extend(w.take_spare());
    }
    Ok(spare)
}

/// Waits for the writers of a staged primitive and returns the metadata of
/// its textures in stream order (positions, normals, tangents), embedding
/// them in the container when asked.
fn finish_primitive(
    staged: StagedPrimitive,
    sink: &mut dyn Sink,
    pool: &mut Pool,
) -> Result<Vec<meta::VatTextureMeta>, StepError> {
    let StagedPrimitive {
        base,
        specs,
        writers,
        files,
        packed,
    } = staged;
    let fail = |e| StepError::during(format!("VAT of {base}"), e);
    let mut out = Vec::with_capacity(specs.len());
    for ((writer, spec), (name, file)) in writers.into_iter().zip(&specs).zip(files) {
        let done = writer.finish(pool).map_err(fail)?;
        pool.truncate(POOL_MAX);
        let (max_error, bytes, crc32) = (done.max_error, done.bytes, done.crc32);
        let storage = sink
            .place_stream(&file, bytes, crc32)
            .map_err(|e| match e.source {
                // Embedding failed while writing the container section.
                crate::error::Source::Format(f) if e.context.is_none() => fail(f),
                _ => e,
            })?;
        // One record a page: the layers of one file all name it.
        out.extend(std::iter::repeat_n(
            meta::VatTextureMeta {
                stream: spec.stream,
                name,
                width: spec.width as u32,
                height: spec.height as u32,
                channels: spec.channels() as u8,
                encoding: spec.encoding,
                direction_encoding: spec.effective_direction_encoding(),
                bounds: spec.bounds,
                bytes,
                crc32,
                storage,
                max_error,
            },
            spec.layers,
        ));
    }
    if let Some(angle) = packed {
        // Packed normals: one record a page like the other streams, each
        // naming its page's positions file (the same bytes), after the
        // positions' records (the texture table's stream order).
        let positions = out
            .iter()
            .take_while(|t| t.stream == VatStream::Positions)
            .count();
        let normals: Vec<meta::VatTextureMeta> = out[..positions]
            .iter()
            .map(|t| meta::VatTextureMeta {
                stream: VatStream::Normals,
                direction_encoding: meta::DirectionEncoding::Packed,
                bounds: None,
                max_error: angle,
                ..t.clone()
            })
            .collect();
        out.splice(positions..positions, normals);
    }
    Ok(out)
}
