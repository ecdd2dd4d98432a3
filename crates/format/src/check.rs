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
use crate::meta::{
    ClipOrigin, MatrixLayout, Metadata, OutputsMetadata, RigMetadata, VatMetadata, WeightsMetadata,
};

/// Largest texture width or height any record may declare (and the largest
/// `max_texture_size` a bake may record). GPUs cap textures far lower.
pub const MAX_TEXTURE_SIZE: u32 = 65_536;

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

/// Whether `name` is a path into the documented shared bone store:
/// `../` repeated (at most 64 times), then `_shared/bones/<64 hex>.exr`.
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
    rest.strip_prefix("_shared/bones/")
        .and_then(|r| r.strip_suffix(".exr"))
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
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

/// Checks the main metadata record.
pub fn metadata(m: &Metadata) -> Result<u64> {
    let rows = timeline_rows(m)?;
    let max = m.options.max_texture_size;
    dimension("options.max_texture_size", max, MAX_TEXTURE_SIZE)?;
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
        if u64::from(t.height) < rows {
            return Err(invalid(format!(
                "{what} has {} rows, but the clips need {rows}",
                t.height
            )));
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
        let per_joint = match tex.layout {
            MatrixLayout::Mat4 => 4,
            MatrixLayout::Mat3x4 => 3,
        };
        if u64::from(tex.width) != skin.joints.len() as u64 * per_joint {
            return Err(invalid(format!(
                "{what}: its texture is {} pixels wide, but {} joints need {}",
                tex.width,
                skin.joints.len(),
                skin.joints.len() as u64 * per_joint
            )));
        }
    }
    Ok(rows)
}

/// Checks the VAT record against the timeline's `rows`.
pub fn vat(v: &VatMetadata, rows: u64) -> Result<()> {
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
        if u64::from(p.frames) * u64::from(p.bands) > u64::from(p.height) {
            return Err(invalid(format!(
                "{what}: {} frames of {} bands do not fit {} rows",
                p.frames, p.bands, p.height
            )));
        }
        let streams = [Some(p.positions), p.normals, p.tangents];
        for (name, t) in ["positions", "normals", "tangents"].iter().zip(streams) {
            let Some(t) = t else { continue };
            index(&format!("{what}.{name}"), t, v.textures.len())?;
            let tex = &v.textures[t as usize];
            if (tex.width, tex.height) != (p.width, p.height) {
                return Err(invalid(format!(
                    "{what}.{name}: texture is {} x {} but the primitive says {} x {}",
                    tex.width, tex.height, p.width, p.height
                )));
            }
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

#[cfg(test)]
mod tests {
    use super::*;

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
        for bad in [
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
