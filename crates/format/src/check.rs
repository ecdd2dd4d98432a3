//! Semantic checks of decoded metadata records: every count, index, size,
//! name and number a reader will later use to allocate, loop, open a file or
//! compute a verdict is checked here, once, when a container is opened.
//!
//! The codec only proves that the bytes decode; these checks prove that the
//! records agree with each other (clip rows inside the textures, indices in
//! range, texture sizes consistent with the layout) and that they are sane
//! (finite, non-negative numbers; texture names that stay inside the bake's
//! folder). A reader that passed them can size buffers from the metadata
//! without trusting the file. Normative list: `formats/container.md`,
//! "What a reader checks".

use crate::error::{FormatError, Result};
use crate::meta::MatrixLayout;
use crate::meta::{
    BoundsMetadata, ClipOrigin, FoldMeta, FoldedTexture, LayoutMetadata, Metadata, OutputsMetadata,
    RigMetadata, RootMotionMetadata, RootMotionMode, SourceLocation, TextureCompression,
    VatCompressionMetadata, VatEncoding, VatMetadata, WeightsMetadata,
};
use crate::texture::Precision;

/// Largest texture width or height any record may declare (and the largest
/// `max_texture_size` a bake may record). GPUs cap textures far lower.
pub const MAX_TEXTURE_SIZE: u32 = rigbake_types::TEXTURE_SIZE_LIMIT;

/// Most timeline rows a bake may hold (the baker's own limit,
/// `rigbake_core::timeline::MAX_ROWS`).
pub const MAX_ROWS: u64 = 1 << 20;

/// Longest texture, mesh or track file name (bytes), as most file systems.
pub const MAX_FILE_NAME_BYTES: usize = 255;

/// Bone-weight pairs per vertex a record may declare.
pub const MAX_INFLUENCES: u32 = 8;

fn invalid(msg: String) -> FormatError {
    FormatError::Invalid(msg)
}

/// Checks that `value` is finite and not negative.
fn non_negative(what: &str, value: f64) -> Result<()> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(invalid(format!(
            "{what} is {value}: it must be a finite, non-negative number"
        )))
    }
}

/// Checks that `value` is finite and strictly positive.
fn positive(what: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(invalid(format!(
            "{what} is {value}: it must be a finite, positive number"
        )))
    }
}

/// Checks an index against the length of what it points into.
fn index(what: &str, i: u32, len: usize) -> Result<()> {
    if (i as usize) < len {
        Ok(())
    } else {
        Err(invalid(format!("{what} is {i}, but there are only {len}")))
    }
}

/// Checks one texture dimension against the record's maximum size.
fn dimension(what: &str, value: u32, max: u32) -> Result<()> {
    if (1..=max).contains(&value) {
        Ok(())
    } else {
        Err(invalid(format!("{what} is {value}, outside 1..={max}")))
    }
}

/// Whether `name` is a plain file name: no folders, nothing special.
pub fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_FILE_NAME_BYTES
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0'])
        && !name.chars().any(char::is_control)
}

/// Extensions of shared bone textures: one per texture container.
pub const SHARED_STORE_EXTENSIONS: [&str; 3] = ["exr", "ktx2", "dds"];

/// Whether `name` is a path into the documented shared bone store:
/// `../` repeated (at most 64 times), then `_shared/bones/<64 hex>.EXT`,
/// EXT one of [`SHARED_STORE_EXTENSIONS`] (the reader checks the file's
/// header against the bake's texture container).
pub fn is_shared_store_name(name: &str) -> bool {
    let mut rest = name;
    let mut ups = 0;
    while let Some(r) = rest.strip_prefix("../") {
        rest = r;
        ups += 1;
        if ups > 64 {
            return false;
        }
    }
    let Some(file) = rest.strip_prefix("_shared/bones/") else {
        return false;
    };
    file.split_once('.').is_some_and(|(hex, ext)| {
        hex.len() == 64
            && hex.bytes().all(|b| b.is_ascii_hexdigit())
            && SHARED_STORE_EXTENSIONS.contains(&ext)
    })
}

fn plain_name(what: &str, name: &str) -> Result<()> {
    if is_plain_file_name(name) {
        Ok(())
    } else {
        Err(invalid(format!(
            "{what} {:?} is not a plain file name beside the container",
            shorten(name)
        )))
    }
}

/// At most 80 characters of `s`, for messages about hostile names.
fn shorten(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s.to_owned(),
    }
}

/// Rows of the bake's timeline: the end of the last clip block. Checks each
/// clip's numbers on the way.
fn timeline_rows(m: &Metadata) -> Result<u64> {
    positive("the bake's fps", m.options.fps)?;
    let mut rows = 0u64;
    for (i, c) in m.clips.iter().enumerate() {
        let what = format!("clips[{i}]");
        positive(&format!("{what}.fps"), c.fps)?;
        non_negative(&format!("{what}.duration"), c.duration)?;
        if c.frames == 0 {
            return Err(invalid(format!("{what} has no frames")));
        }
        let end = u64::from(c.start_row) + u64::from(c.frames);
        rows = rows.max(end);
    }
    if m.clips.is_empty() {
        return Err(invalid("the bake has no clips".to_owned()));
    }
    // Bakes never hold more rows than the timeline allows, so readers can
    // size per-row work from this number even when no texture bounds it.
    if rows > MAX_ROWS {
        return Err(invalid(format!(
            "the clips cover {rows} rows, more than the limit of {MAX_ROWS}"
        )));
    }
    Ok(rows)
}

/// Checks one fold of the layout record: positive counts, one page unless
/// `pages` are allowed, the page exactly `width x height`, room for `rows`
/// timeline rows. Returns the block width.
fn fold(what: &str, f: &FoldMeta, width: u32, height: u32, rows: u64, pages: bool) -> Result<u32> {
    fold_padded(what, f, (width, height), rows, pages, false)
}

/// [`fold`], where with `pad` the page is the fold's size rounded up to
/// powers of two (a VAT baked with `--power-of-two`).
fn fold_padded(
    what: &str,
    f: &FoldMeta,
    (width, height): (u32, u32),
    rows: u64,
    pages: bool,
    pad: bool,
) -> Result<u32> {
    let counts = [
        f.rows_per_block,
        f.row_height,
        f.block_width,
        f.blocks_per_page,
        f.pages,
    ];
    if counts.contains(&0) || (!pages && f.pages != 1) {
        return Err(invalid(format!(
            "{what}: fold {f:?} has a zero count or pages where none are allowed"
        )));
    }
    let padded = |n: u64| if pad { n.next_power_of_two() } else { n };
    let page = (
        padded(u64::from(f.blocks_per_page) * u64::from(f.block_width)),
        padded(u64::from(f.rows_per_block) * u64::from(f.row_height)),
    );
    if page != (u64::from(width), u64::from(height)) {
        return Err(invalid(format!(
            "{what}: its fold makes {} x {} pages, but the texture is {width} x {height}",
            page.0, page.1
        )));
    }
    let capacity = u64::from(f.rows_per_block) * u64::from(f.blocks_per_page) * u64::from(f.pages);
    if capacity < rows {
        return Err(invalid(format!(
            "{what}: its fold holds {capacity} rows, but the clips need {rows}"
        )));
    }
    Ok(f.block_width)
}

/// Checks the main metadata record (no texture folded).
pub fn metadata(m: &Metadata) -> Result<u64> {
    metadata_folded(m, &[])
}

/// Checks the main metadata record, bone textures placed by `folds` (the
/// layout record's; a texture not listed is unfolded).
pub fn metadata_folded(m: &Metadata, folds: &[FoldMeta]) -> Result<u64> {
    let rows = timeline_rows(m)?;
    let max = m.options.max_texture_size;
    dimension("options.max_texture_size", max, MAX_TEXTURE_SIZE)?;
    let mut block_widths = Vec::with_capacity(m.textures.len());
    for (i, t) in m.textures.iter().enumerate() {
        let what = format!("textures[{i}]");
        if !(is_plain_file_name(&t.name) || is_shared_store_name(&t.name)) {
            return Err(invalid(format!(
                "{what}.name {:?} is neither a file beside the container nor in the shared store",
                shorten(&t.name)
            )));
        }
        dimension(&format!("{what}.width"), t.width, max)?;
        dimension(&format!("{what}.height"), t.height, max)?;
        non_negative(&format!("{what}.max_error"), t.max_error)?;
        let listed = folds
            .iter()
            .find(|f| f.texture == FoldedTexture::Bones(i as u32));
        if let Some(f) = listed {
            block_widths.push(fold(&what, f, t.width, t.height, rows, false)?);
        } else if u64::from(t.height) < rows {
            return Err(invalid(format!(
                "{what} has {} rows, but the clips need {rows}",
                t.height
            )));
        } else {
            block_widths.push(t.width);
        }
    }
    for (s, skin) in m.skins.iter().enumerate() {
        let what = format!("skins[{s}]");
        index(&format!("{what}.texture"), skin.texture, m.textures.len())?;
        if skin.parents.len() != skin.joints.len() {
            return Err(invalid(format!(
                "{what} has {} joints but {} parents",
                skin.joints.len(),
                skin.parents.len()
            )));
        }
        for (j, &p) in skin.parents.iter().enumerate() {
            if p < -1 || p >= skin.joints.len() as i32 {
                return Err(invalid(format!(
                    "{what}.parents[{j}] is {p}, not a joint or -1"
                )));
            }
        }
        let tex = &m.textures[skin.texture as usize];
        let width = block_widths[skin.texture as usize];
        let per_joint = tex.layout.pixels_per_joint() as u64;
        if u64::from(width) != skin.joints.len() as u64 * per_joint {
            return Err(invalid(format!(
                "{what}: its texture is {} pixels wide, but {} joints need {}",
                width,
                skin.joints.len(),
                skin.joints.len() as u64 * per_joint
            )));
        }
    }
    Ok(rows)
}

/// Checks the VAT record against the timeline's `rows`, the layout
/// record's `folds` (a folded stream: every page of the same stream and
/// size, one fold per stream of the primitive, all alike) and the bake's
/// texture `container` (8 and 10-bit samples live in KTX2 or DDS only).
pub fn vat(
    v: &VatMetadata,
    rows: u64,
    folds: &[FoldMeta],
    container: crate::texture::gpu::TextureContainer,
) -> Result<()> {
    let max = v.max_texture_size;
    dimension("vat.max_texture_size", max, MAX_TEXTURE_SIZE)?;
    if let Some(name) = &v.playback_file {
        plain_name("vat.playback_file", name)?;
    }
    for (i, t) in v.textures.iter().enumerate() {
        let what = format!("vat.textures[{i}]");
        plain_name(&format!("{what}.name"), &t.name)?;
        dimension(&format!("{what}.width"), t.width, max)?;
        dimension(&format!("{what}.height"), t.height, max)?;
        if !matches!(t.channels, 3 | 4) {
            return Err(invalid(format!(
                "{what} has {} channels, not 3 or 4",
                t.channels
            )));
        }
        non_negative(&format!("{what}.max_error"), t.max_error)?;
        if t.encoding.needs_gpu_container() && container.is_exr() {
            return Err(invalid(format!(
                "{what} is {:?}, whose samples only KTX2 and DDS hold, but the bake has no texture-container record (EXR and PNG files)",
                t.encoding
            )));
        }
        if t.encoding.is_normalised()
            && t.direction_encoding != crate::meta::DirectionEncoding::Octahedral
            && t.direction_encoding != crate::meta::DirectionEncoding::Packed
            && t.bounds.is_none()
        {
            return Err(invalid(format!(
                "{what} is {:?} normalised to bounds but records none",
                t.encoding
            )));
        }
        if let Some(bounds) = &t.bounds
            && bounds.iter().flatten().any(|b| !b.is_finite())
        {
            return Err(invalid(format!("{what}.bounds are not finite")));
        }
    }
    for (i, p) in v.primitives.iter().enumerate() {
        let what = format!("vat.primitives[{i}]");
        if u64::from(p.frames) != rows {
            return Err(invalid(format!(
                "{what} has {} frames, but the clips cover {rows} rows",
                p.frames
            )));
        }
        dimension(&format!("{what}.width"), p.width, max)?;
        dimension(&format!("{what}.height"), p.height, max)?;
        if p.bands == 0 || u64::from(p.width) * u64::from(p.bands) < u64::from(p.vertices) {
            return Err(invalid(format!(
                "{what}: {} bands of {} texels cannot hold {} vertices",
                p.bands, p.width, p.vertices
            )));
        }
        let fold_of = |t: u32| folds.iter().find(|f| f.texture == FoldedTexture::Vat(t));
        let folded = fold_of(p.positions);
        let page_width = match folded {
            None => {
                if u64::from(p.frames) * u64::from(p.bands) > u64::from(p.height) {
                    return Err(invalid(format!(
                        "{what}: {} frames of {} bands do not fit {} rows",
                        p.frames, p.bands, p.height
                    )));
                }
                p.width
            }
            Some(f) => {
                if (f.block_width, f.row_height) != (p.width, p.bands) {
                    return Err(invalid(format!(
                        "{what}: its textures fold blocks of {} x {} texels, but it has {} bands of {} texels",
                        f.block_width, f.row_height, p.bands, p.width
                    )));
                }
                let tex = v.textures.get(p.positions as usize).ok_or_else(|| {
                    invalid(format!("{what}.positions: no texture {}", p.positions))
                })?;
                fold_padded(
                    &format!("{what} (folded)"),
                    f,
                    (tex.width, p.height),
                    rows,
                    true,
                    v.power_of_two,
                )?;
                tex.width
            }
        };
        let streams = [Some(p.positions), p.normals, p.tangents];
        for (name, t) in ["positions", "normals", "tangents"].iter().zip(streams) {
            let Some(t) = t else { continue };
            index(&format!("{what}.{name}"), t, v.textures.len())?;
            let fold = fold_of(t);
            let same = match (folded, fold) {
                (None, None) => true,
                (Some(a), Some(b)) => {
                    (a.rows_per_block, a.blocks_per_page, a.pages)
                        == (b.rows_per_block, b.blocks_per_page, b.pages)
                }
                _ => false,
            };
            if !same {
                return Err(invalid(format!(
                    "{what}.{name}: folded unlike the primitive's positions"
                )));
            }
            let pages = fold.map_or(1, |f| f.pages);
            if u64::from(t) + u64::from(pages) > v.textures.len() as u64 {
                return Err(invalid(format!(
                    "{what}.{name}: {pages} pages from texture {t}, but there are {}",
                    v.textures.len()
                )));
            }
            let first = &v.textures[t as usize];
            for k in 0..pages {
                let at = u64::from(t) + u64::from(k);
                let Some(tex) = v.textures.get(at as usize) else {
                    return Err(invalid(format!(
                        "{what}.{name}: page {k} would be texture {at}, but there are {}",
                        v.textures.len()
                    )));
                };
                if (tex.width, tex.height) != (page_width, p.height)
                    || tex.stream != first.stream
                    || tex.channels != first.channels
                {
                    return Err(invalid(if folded.is_none() {
                        format!(
                            "{what}.{name}: texture is {} x {} but the primitive says {} x {}",
                            tex.width, tex.height, p.width, p.height
                        )
                    } else {
                        format!(
                            "{what}.{name}: texture {at} is a {} x {} {:?} page, but the primitive's pages are {page_width} x {} {:?}",
                            tex.width, tex.height, tex.stream, p.height, first.stream
                        )
                    }));
                }
            }
        }
        packed_normals(&what, v, p, folded.map_or(1, |f| f.pages))?;
    }
    Ok(())
}

/// A primitive's packed normals (formats/vat.md) live in its positions'
/// alpha: each of the `pages` normals textures names the positions page of
/// the same index, a four-channel PNG16 texture; normals of any other
/// encoding name files of their own. (Indices and pages checked before.)
fn packed_normals(
    what: &str,
    v: &VatMetadata,
    p: &crate::meta::VatPrimitiveMeta,
    pages: u32,
) -> Result<()> {
    let Some(n) = p.normals else { return Ok(()) };
    for k in 0..pages as usize {
        let (pos, nrm) = (
            &v.textures[p.positions as usize + k],
            &v.textures[n as usize + k],
        );
        let packed = nrm.direction_encoding == crate::meta::DirectionEncoding::Packed;
        let shared = nrm.name == pos.name;
        let png16 = pos.channels == 4 && pos.encoding == VatEncoding::Png16;
        if packed != shared || (packed && !png16) {
            return Err(invalid(format!(
                "{what}.normals: page {k} ({}) is {}packed but {} the positions' file {} ({} channels, {:?})",
                nrm.name,
                if packed { "" } else { "not " },
                if shared { "names" } else { "does not name" },
                pos.name,
                pos.channels,
                pos.encoding
            )));
        }
    }
    Ok(())
}

/// Checks the bone-weight record against the number of bone sets.
pub fn weights(w: &WeightsMetadata, skins: usize) -> Result<()> {
    if !(1..=MAX_INFLUENCES).contains(&w.max_influences) {
        return Err(invalid(format!(
            "weights.max_influences is {}, outside 1..={MAX_INFLUENCES}",
            w.max_influences
        )));
    }
    if w.channels != w.max_influences.div_ceil(2) {
        return Err(invalid(format!(
            "weights.channels is {}, but {} influences need {}",
            w.channels,
            w.max_influences,
            w.max_influences.div_ceil(2)
        )));
    }
    if let Some(name) = &w.mesh_file {
        plain_name("weights.mesh_file", name)?;
    }
    for (i, p) in w.primitives.iter().enumerate() {
        let what = format!("weights.primitives[{i}]");
        index(&format!("{what}.skin"), p.skin, skins)?;
        for (name, value) in [
            ("dropped_max", p.dropped_max),
            ("dropped_mean", p.dropped_mean),
            ("position_error", p.position_error),
        ] {
            non_negative(&format!("{what}.{name}"), value)?;
        }
        if p.dropped_max > 1.0 || p.dropped_mean > 1.0 {
            return Err(invalid(format!(
                "{what}: a dropped weight fraction is above 1"
            )));
        }
    }
    Ok(())
}

/// Checks the rig record against the clip and bone-set counts.
pub fn rig(r: &RigMetadata, clips: usize, skins: usize) -> Result<()> {
    if let Some(name) = &r.anchor_texture {
        plain_name("rig.anchor_texture", name)?;
    }
    for (i, p) in r.props.iter().enumerate() {
        index(&format!("rig.props[{i}].skin"), p.skin, skins)?;
    }
    for (i, o) in r.clip_origins.iter().enumerate() {
        let what = format!("rig.clip_origins[{i}]");
        match o {
            ClipOrigin::Range {
                clip, start, end, ..
            } => {
                index(&format!("{what}.clip"), *clip, clips)?;
                non_negative(&format!("{what}.start"), *start)?;
                non_negative(&format!("{what}.end"), *end)?;
            }
            ClipOrigin::Blend { clip, weight, .. } => {
                index(&format!("{what}.clip"), *clip, clips)?;
                if !weight.is_finite() {
                    return Err(invalid(format!("{what}.weight is {weight}, not finite")));
                }
            }
        }
    }
    Ok(())
}

/// Longest recorded source path, in bytes.
pub const MAX_SOURCE_PATH: usize = 4096;

/// Checks the source record: a relative `/`-separated path of `..` and
/// plain names (no root, `.`, empty part, `\`, NUL or control character),
/// at most [`MAX_SOURCE_PATH`] bytes, ending in a name.
pub fn source(s: &SourceLocation) -> Result<()> {
    let path = &s.relative_path;
    let bad = |why: &str| invalid(format!("source.relative_path {path:?}: {why}"));
    if path.is_empty() || path.len() > MAX_SOURCE_PATH {
        return Err(bad("empty or longer than 4096 bytes"));
    }
    if path.chars().any(|c| c == '\\' || c.is_control()) {
        return Err(bad("contains `\\` or a control character"));
    }
    let parts: Vec<&str> = path.split('/').collect();
    if parts.iter().any(|p| p.is_empty() || *p == ".") {
        return Err(bad("has an empty or `.` part (or is absolute)"));
    }
    if parts.last().is_some_and(|p| *p == "..") {
        return Err(bad("does not end in a file name"));
    }
    Ok(())
}

/// Checks the VAT compression record against the VAT record: one entry per
/// VAT texture, `deflate` exactly for PNG textures, and only EXR modes
/// asked for.
pub fn vat_compression(
    c: &VatCompressionMetadata,
    vat: Option<&VatMetadata>,
    container: crate::meta::TextureContainer,
) -> Result<()> {
    let Some(vat) = vat else {
        return Err(invalid(
            "a VAT compression record without a VAT record".to_owned(),
        ));
    };
    if c.requested == TextureCompression::Deflate {
        return Err(invalid(
            "vat_compression.requested is deflate, not an EXR mode".to_owned(),
        ));
    }
    if c.textures.len() != vat.textures.len() {
        return Err(invalid(format!(
            "vat_compression lists {} textures but the VAT record has {}",
            c.textures.len(),
            vat.textures.len()
        )));
    }
    let gpu = !container.is_exr();
    for (i, (mode, t)) in c.textures.iter().zip(&vat.textures).enumerate() {
        if gpu {
            // KTX2 and DDS: no EXR or PNG compression (supercompression is
            // the container's own).
            if *mode != TextureCompression::None {
                return Err(invalid(format!(
                    "vat_compression.textures[{i}] is {mode:?} for a {container:?} texture"
                )));
            }
            continue;
        }
        let png = t.encoding.is_normalised();
        if png != (*mode == TextureCompression::Deflate) {
            return Err(invalid(format!(
                "vat_compression.textures[{i}] is {mode:?} for a {:?} texture",
                t.encoding
            )));
        }
    }
    Ok(())
}

/// Checks the texture-container record: a GPU container (EXR is the
/// record's absence), and every folded VAT stream's pages in one file
/// (the same name, size, checksum and storage: page `k` is layer `k`).
pub fn texture_container(
    t: &crate::meta::TextureContainerMetadata,
    vat: Option<&VatMetadata>,
    layout: Option<&crate::meta::LayoutMetadata>,
) -> Result<()> {
    if t.container.is_exr() {
        return Err(invalid(
            "texture_container.container is exr: EXR bakes have no texture-container record"
                .to_owned(),
        ));
    }
    let (Some(vat), Some(layout)) = (vat, layout) else {
        return Ok(());
    };
    for (f, fold) in layout.folds.iter().enumerate() {
        let crate::meta::FoldedTexture::Vat(first) = fold.texture else {
            continue;
        };
        let first = first as usize;
        let Some(pages) = vat
            .textures
            .get(first..first.saturating_add(fold.pages as usize))
        else {
            // The layout check reports pages beyond the table.
            continue;
        };
        let one = &pages[0];
        if let Some(k) = pages.iter().position(|p| {
            (&p.name, p.bytes, p.crc32, p.storage) != (&one.name, one.bytes, one.crc32, one.storage)
        }) {
            return Err(invalid(format!(
                "layout.folds[{f}]: page {k} (vat.textures[{}]) is not in the file of page 0 (`{}`): a {:?} bake keeps a folded stream's pages as the layers of one file",
                first + k,
                one.name,
                t.container
            )));
        }
    }
    Ok(())
}

/// Checks the placement record: one placement per bone set, every matrix
/// finite and affine (bottom row `0 0 0 1`), the identity for the scene
/// root.
pub fn placement(p: &crate::meta::PlacementMetadata, skins: usize) -> Result<()> {
    if p.skins.len() != skins {
        return Err(invalid(format!(
            "placement.skins has {} entries for {skins} bone set(s)",
            p.skins.len()
        )));
    }
    let all = std::iter::once(("placement.reference".to_owned(), &p.reference)).chain(
        p.skins
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("placement.skins[{i}]"), s)),
    );
    for (at, placed) in all {
        let m = &placed.matrix;
        if let Some(i) = m.iter().position(|v| !v.is_finite()) {
            return Err(invalid(format!(
                "{at}.matrix[{i}] is {} (not finite)",
                m[i]
            )));
        }
        if [m[3], m[7], m[11], m[15]] != [0.0, 0.0, 0.0, 1.0] {
            return Err(invalid(format!(
                "{at}.matrix has bottom row {:?}: a placement is affine (0, 0, 0, 1)",
                [m[3], m[7], m[11], m[15]]
            )));
        }
        if placed.node.is_none() && !placed.is_identity() {
            return Err(invalid(format!(
                "{at} places the scene root with a matrix that is not the identity"
            )));
        }
    }
    Ok(())
}

/// Largest TEXCOORD set index the UV-set record may name.
pub const MAX_UV_SET: u32 = 255;

/// Checks the UV-set record: plain file names, set indices at most
/// [`MAX_UV_SET`], two weight sets per channel (an even count, none without
/// a first set).
pub fn uv_sets(u: &crate::meta::UvSetsMetadata) -> Result<()> {
    for (i, p) in u.primitives.iter().enumerate() {
        let at = format!("uv_sets.primitives[{i}]");
        plain_name(&format!("{at}.file"), &p.file)?;
        let sets = [Some(p.source_sets), p.lookup, p.weights_first];
        if sets.into_iter().flatten().any(|s| s > MAX_UV_SET) || p.weights_sets > MAX_UV_SET {
            return Err(FormatError::Invalid(format!(
                "{at}: a UV set index or count is above {MAX_UV_SET}"
            )));
        }
        if p.weights_sets % 2 != 0 || (p.weights_sets > 0) != p.weights_first.is_some() {
            return Err(FormatError::Invalid(format!(
                "{at}: weights_sets must be an even count, with weights_first exactly when it is not 0"
            )));
        }
    }
    Ok(())
}

/// Most levels a LOD group may record (level 0 included).
pub const MAX_LOD_LEVELS: usize = 16;

/// Checks the LOD record: 2 to [`MAX_LOD_LEVELS`] levels per group, plain
/// weights file names, primitive indices within the weights record's
/// (`weights`) and the VAT record's (`vat`) primitive counts, each listed
/// by at most one level, coverage finite.
pub fn lods(l: &crate::meta::LodsMetadata, weights: usize, vat: usize) -> Result<()> {
    let mut weights_seen = vec![false; weights];
    let mut vat_seen = vec![false; vat];
    for (g, group) in l.groups.iter().enumerate() {
        let at = format!("lods.groups[{g}]");
        if group.levels.len() < 2 || group.levels.len() > MAX_LOD_LEVELS {
            return Err(invalid(format!(
                "{at}: {} levels; a group has 2 to {MAX_LOD_LEVELS}",
                group.levels.len()
            )));
        }
        for (k, level) in group.levels.iter().enumerate() {
            let at = format!("{at}.levels[{k}]");
            if let Some(file) = &level.weights_file {
                plain_name(&format!("{at}.weights_file"), file)?;
            }
            if level.screen_coverage.is_some_and(|c| !c.is_finite()) {
                return Err(invalid(format!("{at}: screen_coverage is not finite")));
            }
            for (list, seen, what) in [
                (&level.weights_primitives, &mut weights_seen, "weights"),
                (&level.vat_primitives, &mut vat_seen, "vat"),
            ] {
                for &p in list {
                    match seen.get_mut(p as usize) {
                        Some(s) if !*s => *s = true,
                        Some(_) => {
                            return Err(invalid(format!(
                                "{at}: {what} primitive {p} belongs to another level already"
                            )));
                        }
                        None => {
                            return Err(invalid(format!(
                                "{at}: {what} primitive {p} does not exist (the {what} record has {})",
                                seen.len()
                            )));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Checks the LOD detail record against the LOD record: one entry per
/// group and level, influences 1 to [`MAX_INFLUENCES`], errors finite and
/// not negative, file names plain, relative paths as the source record's,
/// SHA-256 64 lowercase hex digits.
pub fn lod_details(
    d: &crate::meta::LodDetailsMetadata,
    lods: Option<&crate::meta::LodsMetadata>,
) -> Result<()> {
    let Some(lods) = lods else {
        return Err(invalid(
            "a LOD detail record without a LOD record".to_owned(),
        ));
    };
    if d.groups.len() != lods.groups.len() {
        return Err(invalid(format!(
            "lod_details: {} groups, the LOD record has {}",
            d.groups.len(),
            lods.groups.len()
        )));
    }
    for (g, (levels, group)) in d.groups.iter().zip(&lods.groups).enumerate() {
        if levels.len() != group.levels.len() {
            return Err(invalid(format!(
                "lod_details.groups[{g}]: {} levels, the LOD record has {}",
                levels.len(),
                group.levels.len()
            )));
        }
        for (k, level) in levels.iter().enumerate() {
            let at = format!("lod_details.groups[{g}][{k}]");
            if !(1..=MAX_INFLUENCES).contains(&level.max_influences) {
                return Err(invalid(format!(
                    "{at}: max_influences is {}, outside 1..={MAX_INFLUENCES}",
                    level.max_influences
                )));
            }
            non_negative(&format!("{at}.dropped_max"), level.dropped_max)?;
            non_negative(&format!("{at}.position_error"), level.position_error)?;
            let Some(file) = &level.file else { continue };
            plain_name(&format!("{at}.file.file_name"), &file.file_name)?;
            if let Some(path) = &file.relative_path {
                source(&SourceLocation {
                    relative_path: path.clone(),
                })
                .map_err(|e| invalid(format!("{at}.file: {e}")))?;
            }
            if file.sha256.len() != 64
                || !file
                    .sha256
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            {
                return Err(invalid(format!(
                    "{at}.file.sha256 is not 64 lowercase hex digits"
                )));
            }
            if file.node.is_empty() || file.node.len() > MAX_SOURCE_PATH {
                return Err(invalid(format!(
                    "{at}.file.node is empty or longer than {MAX_SOURCE_PATH} bytes"
                )));
            }
        }
    }
    Ok(())
}

/// Checks the outputs record: plain, distinct file names.
pub fn outputs(o: &OutputsMetadata) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for (i, f) in o.files.iter().enumerate() {
        plain_name(&format!("outputs.files[{i}].name"), &f.name)?;
        if !seen.insert(f.name.as_str()) {
            return Err(invalid(format!(
                "outputs.files[{i}]: {:?} is listed twice",
                shorten(&f.name)
            )));
        }
    }
    Ok(())
}

/// Checks the bounds record: one box per clip, finite, `min <= max`.
pub fn bounds(b: &BoundsMetadata, clips: usize) -> Result<()> {
    if b.clips.len() != clips {
        return Err(invalid(format!(
            "bounds: {} boxes for {clips} clips",
            b.clips.len()
        )));
    }
    for (i, c) in b.clips.iter().enumerate() {
        let ok =
            (0..3).all(|k| c.min[k].is_finite() && c.max[k].is_finite() && c.min[k] <= c.max[k]);
        if !ok {
            return Err(invalid(format!(
                "bounds.clips[{i}]: min {:?} and max {:?} are not a finite box",
                c.min, c.max
            )));
        }
    }
    Ok(())
}

/// Largest total travel or turn a root-motion record may claim: far beyond
/// any real clip, small enough that every derived number stays finite.
pub const MAX_ROOT_MOTION: f64 = 1e9;

/// Checks the clip-error record: finite, non-negative figures with the
/// percentile at most the maximum, one entry per clip, each entry naming a
/// bone texture of the metadata's table or a positions texture of the VAT
/// record's (`vat_textures` of them), virtual vertices for bone textures
/// only.
pub fn clip_errors(
    e: &crate::meta::ClipErrorsMetadata,
    m: &Metadata,
    vat_textures: usize,
) -> Result<()> {
    use crate::meta::{ErrorFigure, ErrorSubject, TextureKind};
    let number = |what: &str, v: f64| {
        if v.is_finite() && v >= 0.0 {
            Ok(())
        } else {
            Err(invalid(format!(
                "the clip-error record's {what} is {v}, not a finite number at least 0"
            )))
        }
    };
    number("model_size", e.model_size)?;
    number("virtual_vertex_distance", e.virtual_vertex_distance)?;
    let figure = |what: String, f: &ErrorFigure| {
        number(&format!("{what}.max"), f.max)?;
        number(&format!("{what}.p99"), f.p99)?;
        if f.p99 > f.max {
            return Err(invalid(format!(
                "the clip-error record's {what} has a 99th percentile {} above its maximum {}",
                f.p99, f.max
            )));
        }
        Ok(())
    };
    for (i, t) in e.textures.iter().enumerate() {
        let known = match t.subject {
            ErrorSubject::BoneMatrices => m
                .textures
                .get(t.texture as usize)
                .is_some_and(|x| x.kind == TextureKind::BoneMatrices),
            ErrorSubject::Vat => (t.texture as usize) < vat_textures,
        };
        if !known {
            return Err(invalid(format!(
                "the clip-error record's textures[{i}] names {:?} texture {}, which the bake does not have",
                t.subject, t.texture
            )));
        }
        if t.clips.len() != m.clips.len() {
            return Err(invalid(format!(
                "the clip-error record's textures[{i}] has {} clips, but the metadata has {}",
                t.clips.len(),
                m.clips.len()
            )));
        }
        for (c, clip) in t.clips.iter().enumerate() {
            let at = format!("textures[{i}].clips[{c}]");
            figure(format!("{at}.positions"), &clip.positions)?;
            if let Some(n) = &clip.normals_degrees {
                figure(format!("{at}.normals_degrees"), n)?;
                if n.max > 180.0 {
                    return Err(invalid(format!(
                        "the clip-error record's {at}.normals_degrees is above 180 degrees"
                    )));
                }
            }
            match (&clip.virtual_vertices, t.subject) {
                (Some(v), ErrorSubject::BoneMatrices) => {
                    figure(format!("{at}.virtual_vertices"), v)?
                }
                (None, ErrorSubject::BoneMatrices) => {
                    return Err(invalid(format!(
                        "the clip-error record's {at} is a bone texture's but has no virtual_vertices"
                    )));
                }
                (Some(_), ErrorSubject::Vat) => {
                    return Err(invalid(format!(
                        "the clip-error record's {at} is a VAT's but has virtual_vertices"
                    )));
                }
                (None, ErrorSubject::Vat) => {}
            }
        }
    }
    Ok(())
}

/// Checks the bone-range record (or its absence) against the texture table:
/// one entry per texture, a range exactly for the textures at precision
/// `unorm16`, which must be bone textures in the `qts` layout, and each
/// range finite with `min <= max`.
pub fn bone_ranges(r: Option<&crate::meta::BoneRangesMetadata>, m: &Metadata) -> Result<()> {
    let normalised = |t: &crate::meta::TextureMeta| t.precision == Precision::Unorm16;
    let Some(r) = r else {
        return match m.textures.iter().position(normalised) {
            Some(i) => Err(invalid(format!(
                "textures[{i}] is stored at precision unorm16, but the container has no bone-range record to decode it"
            ))),
            None => Ok(()),
        };
    };
    if r.textures.len() != m.textures.len() {
        return Err(invalid(format!(
            "the bone-range record lists {} textures, but the metadata has {}",
            r.textures.len(),
            m.textures.len()
        )));
    }
    for (i, (t, range)) in m.textures.iter().zip(&r.textures).enumerate() {
        match (normalised(t), range) {
            (false, None) => {}
            (false, Some(_)) => {
                return Err(invalid(format!(
                    "the bone-range record gives textures[{i}] a range, but it is not stored at precision unorm16"
                )));
            }
            (true, None) => {
                return Err(invalid(format!(
                    "textures[{i}] is stored at precision unorm16, but the bone-range record gives it no range"
                )));
            }
            (true, Some([lo, hi])) => {
                if t.layout != MatrixLayout::Qts || t.kind != crate::meta::TextureKind::BoneMatrices
                {
                    return Err(invalid(format!(
                        "textures[{i}] is stored at precision unorm16, which only bone textures in the qts layout can be"
                    )));
                }
                if lo
                    .iter()
                    .zip(hi)
                    .any(|(a, b)| !(a.is_finite() && b.is_finite() && a <= b))
                {
                    return Err(invalid(format!(
                        "the bone-range record's range of textures[{i}] is not finite with min <= max: {lo:?} to {hi:?}"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Checks the root-motion record: one entry per clip; a `keep` clip has no
/// track and no motion; an extracting clip has one finite track entry per
/// frame, starting at the identity, with `y` 0 and no yaw unless the mode
/// removes yaw.
pub fn root_motion(r: &RootMotionMetadata, m: &Metadata) -> Result<()> {
    if r.clips.len() != m.clips.len() {
        return Err(invalid(format!(
            "root_motion: {} entries for {} clips",
            r.clips.len(),
            m.clips.len()
        )));
    }
    let sane = |v: f64| v.is_finite() && v.abs() <= MAX_ROOT_MOTION;
    for (i, (c, clip)) in r.clips.iter().zip(&m.clips).enumerate() {
        let what = format!("root_motion.clips[{i}] (clip `{}`)", shorten(&clip.name));
        if !c.displacement.iter().all(|v| sane(*v))
            || !sane(c.rotation)
            || !c.end.iter().all(|v| sane(*v))
            || c.end[1] != 0.0
            || c.end[3] != c.rotation
        {
            return Err(invalid(format!(
                "{what}: displacement {:?} or rotation {} is not finite or absurdly large",
                c.displacement, c.rotation
            )));
        }
        let expected = if c.mode.extracts() {
            clip.frames as usize
        } else {
            0
        };
        if c.track.len() != expected {
            return Err(invalid(format!(
                "{what}: {} track entries, expected {expected} ({:?})",
                c.track.len(),
                c.mode
            )));
        }
        let turns = c.mode == RootMotionMode::ExtractYaw;
        if !c.mode.extracts() && (c.displacement != [0.0; 3] || c.end != [0.0; 4]) {
            return Err(invalid(format!(
                "{what}: a clip that keeps its motion records a displacement"
            )));
        }
        if !turns && c.rotation != 0.0 {
            return Err(invalid(format!(
                "{what}: a rotation without yaw extraction"
            )));
        }
        for (f, e) in c.track.iter().enumerate() {
            let bad = !e.iter().all(|v| sane(*v))
                || e[1] != 0.0
                || (!turns && e[3] != 0.0)
                || (f == 0 && *e != [0.0; 4]);
            if bad {
                return Err(invalid(format!(
                    "{what}: track entry {f} {e:?} is not a finite horizontal motion of this mode"
                )));
            }
        }
    }
    Ok(())
}

/// Checks the layout record against the other records: one placement per
/// VAT primitive, each primitive's vertices inside its set's texels. A VAT
/// record without a layout record is per-primitive (every `first_vertex` 0).
pub fn layout(
    l: Option<&LayoutMetadata>,
    m: &Metadata,
    v: Option<&VatMetadata>,
    rig: Option<&RigMetadata>,
    rows: u64,
) -> Result<()> {
    let Some(l) = l else { return Ok(()) };
    let mut seen = std::collections::HashSet::new();
    let mut vat_pages = std::collections::HashSet::new();
    for (i, f) in l.folds.iter().enumerate() {
        let what = format!("layout.folds[{i}]");
        if !seen.insert(f.texture) {
            return Err(invalid(format!("{what}: its texture is folded twice")));
        }
        match f.texture {
            // Checked with the metadata record (metadata_folded).
            FoldedTexture::Bones(t) => index(&format!("{what}.texture"), t, m.textures.len())?,
            FoldedTexture::Vat(t) => {
                // Sizes and pages are checked with the VAT record (vat);
                // here: a stream some primitive reads, pages not shared.
                let Some(v) = v else {
                    return Err(invalid(format!(
                        "{what}: folds a VAT texture, but the container has no VAT"
                    )));
                };
                let used = v
                    .primitives
                    .iter()
                    .any(|p| [Some(p.positions), p.normals, p.tangents].contains(&Some(t)));
                if !used {
                    return Err(invalid(format!(
                        "{what}: VAT texture {t} is no primitive's positions, normals or tangents"
                    )));
                }
                if u64::from(t) + u64::from(f.pages) > v.textures.len() as u64 {
                    return Err(invalid(format!(
                        "{what}: {} pages from VAT texture {t}, but there are {} textures",
                        f.pages,
                        v.textures.len()
                    )));
                }
                for k in 0..u64::from(f.pages) {
                    let page = u64::from(t) + k;
                    if !vat_pages.insert(page) {
                        return Err(invalid(format!(
                            "{what}: page {k} (VAT texture {page}) belongs to another fold too"
                        )));
                    }
                }
            }
            FoldedTexture::Anchors => {
                let anchors = rig
                    .filter(|r| r.anchor_texture.is_some())
                    .map(|r| r.anchors.len());
                let Some(anchors) = anchors else {
                    return Err(invalid(format!(
                        "{what}: folds an anchor texture the rig record does not have"
                    )));
                };
                if u64::from(f.block_width) != anchors as u64 * 4
                    || f.row_height != 1
                    || f.pages != 1
                {
                    return Err(invalid(format!(
                        "{what}: an anchor texture of {anchors} anchors has blocks of {} pixels, one row and one page",
                        anchors * 4
                    )));
                }
                let (w, h) = (
                    f.block_width.saturating_mul(f.blocks_per_page),
                    f.rows_per_block,
                );
                fold(&what, f, w, h, rows, false)?;
            }
        }
    }
    match (&l.vat, v) {
        (Some(_), None) => {
            return Err(invalid(
                "layout.vat describes a VAT the container does not have".to_owned(),
            ));
        }
        (Some(placement), Some(v)) => {
            if placement.first_vertex.len() != v.primitives.len() {
                return Err(invalid(format!(
                    "layout.vat places {} primitives, but the VAT record has {}",
                    placement.first_vertex.len(),
                    v.primitives.len()
                )));
            }
            for (i, (p, &first)) in v.primitives.iter().zip(&placement.first_vertex).enumerate() {
                let end = u64::from(first) + u64::from(p.vertices);
                if end > u64::from(p.width) * u64::from(p.bands) {
                    return Err(invalid(format!(
                        "vat.primitives[{i}]: vertices {first}..{end} do not fit {} bands of {} texels",
                        p.bands, p.width
                    )));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_paths_are_relative_slash_separated_and_end_in_a_name() {
        let ok = |p: &str| {
            source(&SourceLocation {
                relative_path: p.to_owned(),
            })
            .is_ok()
        };
        for good in [
            "m.glb",
            "../m.glb",
            "../../models/chars/knight.glb",
            "a b/ü.gltf",
        ] {
            assert!(ok(good), "{good}");
        }
        let long = "a/".repeat(2100) + "m.glb";
        for bad in [
            "",
            "/abs/m.glb",
            "./m.glb",
            "a//m.glb",
            "a/./m.glb",
            "..",
            "a/..",
            "a\\m.glb",
            "a/m\n.glb",
            "m.glb/",
            &long,
        ] {
            assert!(!ok(bad), "{bad:?}");
        }
    }

    #[test]
    fn plain_names_stay_in_the_folder() {
        for ok in [
            "bones.skin0.exr",
            "a b.p0.positions.exr",
            "ünïcode.exr",
            "..x",
        ] {
            assert!(is_plain_file_name(ok), "{ok}");
        }
        let long = "a".repeat(256);
        for bad in [
            "",
            ".",
            "..",
            "../x.exr",
            "/dev/zero",
            "a/b",
            "a\\b",
            "a\0b",
            "a\nb",
            &long,
        ] {
            assert!(!is_plain_file_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn only_the_documented_shared_store_layout_is_accepted() {
        let hex = "0123456789abcdef".repeat(4);
        assert!(is_shared_store_name(&format!("../_shared/bones/{hex}.exr")));
        assert!(is_shared_store_name(&format!(
            "../../_shared/bones/{hex}.exr"
        )));
        assert!(is_shared_store_name(&format!("_shared/bones/{hex}.exr")));
        assert!(is_shared_store_name(&format!(
            "../_shared/bones/{hex}.ktx2"
        )));
        assert!(is_shared_store_name(&format!("../_shared/bones/{hex}.dds")));
        for bad in [
            format!("../_shared/bones/{hex}.png"),
            format!("../_shared/bones/{hex}.ktx2.exr"),
            format!("../_shared/bones/{hex}"),
            format!("../_shared/bones/{}.exr", &hex[1..]),
            format!("../_shared/bones/{hex}.exr/../../x"),
            format!("../_shared/other/{hex}.exr"),
            format!("..//_shared/bones/{hex}.exr"),
            format!("{}_shared/bones/{hex}.exr", "../".repeat(65)),
            "../../etc/passwd".to_owned(),
        ] {
            assert!(!is_shared_store_name(&bad), "{bad}");
        }
    }

    #[test]
    fn numbers_must_be_finite_and_in_range() {
        assert!(non_negative("x", 0.0).is_ok());
        for bad in [f64::NAN, f64::INFINITY, -1e-300, f64::NEG_INFINITY] {
            assert!(non_negative("x", bad).is_err(), "{bad}");
        }
        assert!(positive("fps", 0.0).is_err());
        assert!(positive("fps", f64::NAN).is_err());
        assert!(positive("fps", 30.0).is_ok());
        assert!(dimension("w", 0, 10).is_err());
        assert!(dimension("w", 11, 10).is_err());
        assert!(dimension("w", 10, 10).is_ok());
    }

    #[test]
    fn uv_set_records_are_checked() {
        use crate::meta::{PrimitiveUvSets, UvSetsMetadata};
        let good = PrimitiveUvSets {
            file: "m.weights.glb".into(),
            mesh: 0,
            primitive: 0,
            source_sets: 2,
            lookup: None,
            weights_first: Some(2),
            weights_sets: 6,
        };
        let record = |p: PrimitiveUvSets| UvSetsMetadata {
            primitives: vec![p],
        };
        assert!(uv_sets(&record(good.clone())).is_ok());
        for bad in [
            PrimitiveUvSets {
                weights_sets: 5,
                ..good.clone()
            },
            PrimitiveUvSets {
                weights_first: None,
                ..good.clone()
            },
            PrimitiveUvSets {
                lookup: Some(256),
                ..good.clone()
            },
            PrimitiveUvSets {
                file: "../x.glb".into(),
                ..good.clone()
            },
        ] {
            assert!(uv_sets(&record(bad.clone())).is_err(), "{bad:?}");
        }
    }
}
