//! Values of options that are more than one word: the manifest's clip and
//! blend entries, `max_influences`, and the text of flags that take a list
//! (`--lod`, `--max-influences`, `--clip`).

use std::path::PathBuf;

use rigbake_types::{DirectionEncoding, LodSpec, RootMotionMode};
use serde::Deserialize;

/// One clip of a manifest entry: a whole animation or a range of it, under a
/// name, with an optional loop flag.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipEntry {
    /// The animation to take.
    pub source: String,
    /// The baked clip's name (default: the source's).
    pub name: Option<String>,
    /// `[first, last]` frames at the bake's fps (frame `f` is `f / fps` s).
    pub frames: Option<[u32; 2]>,
    /// `[start, end]` in seconds.
    pub time: Option<[f64; 2]>,
    /// Loop flag override.
    #[serde(rename = "loop")]
    pub looping: Option<bool>,
    /// Root-motion mode of this clip (`keep`, `extract`, `extract-yaw`).
    pub root_motion: Option<RootMotionMode>,
}

impl ClipEntry {
    /// The whole animation `source` under its own name (`--clip NAME`).
    pub fn whole(source: &str) -> Self {
        Self {
            source: source.to_owned(),
            name: None,
            frames: None,
            time: None,
            looping: None,
            root_motion: None,
        }
    }
}

/// Blends of two animations at fixed weights, baked as clips of their own.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlendEntry {
    /// First animation.
    pub a: String,
    /// Second animation.
    pub b: String,
    /// Weights of `b`, each giving a clip `A+B@W`.
    pub weights: Vec<f64>,
    /// Loop flag override for every blended clip.
    #[serde(rename = "loop")]
    pub looping: Option<bool>,
    /// Root-motion mode of every blended clip.
    pub root_motion: Option<RootMotionMode>,
}

/// `max_influences`: one count for every level, or one per LOD level.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Influences {
    /// The same count at every level.
    One(usize),
    /// Level 0, 1, ...; the last also for deeper levels.
    PerLevel(Vec<usize>),
}

impl Influences {
    /// The counts, level 0 first.
    pub fn levels(&self) -> Vec<usize> {
        match self {
            Self::One(n) => vec![*n],
            Self::PerLevel(v) => v.clone(),
        }
    }
}

/// `--lod`: a group of the model's nodes, or a model file and its level
/// files.
#[derive(Debug, Clone, PartialEq)]
pub enum LodArg {
    /// Node names (`Body=Body_low,Body_lowest`).
    Nodes(LodSpec),
    /// A model file and the files of levels 1, 2, ... (paths as given).
    Files {
        /// The model (one of the inputs).
        model: PathBuf,
        /// Its level files.
        levels: Vec<PathBuf>,
    },
}

impl LodArg {
    /// The node group, when it is one.
    pub fn nodes(&self) -> Option<&LodSpec> {
        match self {
            Self::Nodes(spec) => Some(spec),
            Self::Files { .. } => None,
        }
    }
}

/// Parses `--clip NAME`: the whole animation.
pub fn parse_clip(text: &str) -> Result<ClipEntry, String> {
    Ok(ClipEntry::whole(text))
}

/// Parses `--max-influences N[,N...]`.
pub fn parse_influences(text: &str) -> Result<Influences, String> {
    let levels = text
        .split(',')
        .map(|n| n.trim().parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| format!("`{text}`: expected a count or counts per LOD level (4,2,1)"))?;
    Ok(match levels[..] {
        [one] => Influences::One(one),
        _ => Influences::PerLevel(levels),
    })
}

/// Whether `name` names a model file (ends in .glb or .gltf).
fn is_model_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".glb") || lower.ends_with(".gltf")
}

/// Parses `--lod BASE=LOD1,LOD2`: level files when every level names a
/// model file, else node names.
pub fn parse_lod(text: &str) -> Result<LodArg, String> {
    let spec = parse_lod_nodes(text)?;
    Ok(if spec.levels.iter().all(|l| is_model_file(l)) {
        LodArg::Files {
            model: PathBuf::from(spec.base),
            levels: spec.levels.into_iter().map(PathBuf::from).collect(),
        }
    } else {
        LodArg::Nodes(spec)
    })
}

fn parse_lod_nodes(text: &str) -> Result<LodSpec, String> {
    let (base, levels) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: expected BASE=LOD1,LOD2 (node names)"))?;
    let levels: Vec<String> = levels.split(',').map(|l| l.trim().to_owned()).collect();
    if base.trim().is_empty() || levels.iter().any(String::is_empty) {
        return Err(format!(
            "`{text}`: a node name is empty; expected BASE=LOD1,LOD2"
        ));
    }
    Ok(LodSpec {
        base: base.trim().to_owned(),
        levels,
    })
}

/// `--max-error`'s value ([`rigbake_types::ErrorBudget`]'s text).
pub fn parse_error_budget(text: &str) -> Result<rigbake_types::ErrorBudget, String> {
    text.parse()
}

/// A PNG direction encoding: `float` is what EXR stores, not a choice.
pub(super) fn png_directions<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<DirectionEncoding>, D::Error> {
    match Option::<DirectionEncoding>::deserialize(d)? {
        Some(DirectionEncoding::Float) => Err(serde::de::Error::unknown_variant(
            "float",
            &["bounds", "octahedral"],
        )),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lod_flags_name_nodes_or_files() {
        assert_eq!(
            parse_lod("Body=Body_low, Body_lowest").unwrap(),
            LodArg::Nodes(LodSpec {
                base: "Body".into(),
                levels: vec!["Body_low".into(), "Body_lowest".into()],
            })
        );
        assert_eq!(
            parse_lod("hero.glb=hero_LOD1.GLB,b/hero_LOD2.gltf").unwrap(),
            LodArg::Files {
                model: "hero.glb".into(),
                levels: vec!["hero_LOD1.GLB".into(), "b/hero_LOD2.gltf".into()],
            }
        );
        for bad in ["Body", "=a", "Body=a,,b", "Body="] {
            assert!(parse_lod(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_influences("4").unwrap(), Influences::One(4));
        assert_eq!(
            parse_influences("4, 2,1").unwrap(),
            Influences::PerLevel(vec![4, 2, 1])
        );
        assert!(parse_influences("4,x").is_err());
    }
}
