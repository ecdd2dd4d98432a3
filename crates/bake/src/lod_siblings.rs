//! LOD files found beside their model: in a baked folder, `hero_LOD1.glb`,
//! `hero_LOD2.glb` beside `hero.glb` are levels 1 and 2 of `hero.glb`
//! (the `_LOD<n>` rule of node names, `rigbake_core::lod::split_suffix`:
//! case-insensitive `lod`, separator `_`, `-`, `.` or space). Level 0 is
//! `<stem>.glb`/`.gltf`, or `<stem>_LOD0.glb` when there is no plain one;
//! the other files are ordered by `n` and numbered by position. Level files
//! are baked as levels, not as models of their own (`docs/lods.md`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A model and the files of its levels 1, 2, ... (indices into the list
/// given to [`find`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Siblings {
    /// The model (level 0).
    pub base: usize,
    /// Its level files, level 1 first.
    pub levels: Vec<usize>,
}

fn stem(path: &Path) -> Option<String> {
    Some(path.file_stem()?.to_string_lossy().into_owned())
}

/// The LOD groups of files among `paths`: files in one folder whose stems
/// are `<stem>_LOD<n>` beside `<stem>` (or `<stem>_LOD0`). A stem with no
/// level 0, or no level above it, is no group; two files with the same
/// level number (`hero_LOD1.glb` and `hero_lod1.gltf`) leave the group
/// out (each is baked as a model).
pub fn find(paths: &[PathBuf]) -> Vec<Siblings> {
    // (folder, prefix) -> level number -> files; plain stems by (folder, stem).
    let mut levels: BTreeMap<(PathBuf, String), BTreeMap<u32, Vec<usize>>> = BTreeMap::new();
    let mut plain: BTreeMap<(PathBuf, String), Vec<usize>> = BTreeMap::new();
    for (i, path) in paths.iter().enumerate() {
        let (Some(name), Some(dir)) = (stem(path), path.parent()) else {
            continue;
        };
        match rigbake_core::lod::split_suffix(&name) {
            Some((prefix, n)) => levels
                .entry((dir.to_path_buf(), prefix.to_owned()))
                .or_default()
                .entry(n)
                .or_default()
                .push(i),
            None => plain.entry((dir.to_path_buf(), name)).or_default().push(i),
        }
    }
    let mut out = Vec::new();
    for (key, mut by_level) in levels {
        if let Some(base) = plain.get(&key) {
            if base.len() != 1 {
                continue;
            }
            if by_level.contains_key(&0) {
                continue; // `hero.glb` and `hero_LOD0.glb`: which is level 0?
            }
            by_level.insert(0, base.clone());
        }
        if !by_level.contains_key(&0)
            || by_level.len() < 2
            || by_level.values().any(|files| files.len() != 1)
        {
            continue;
        }
        let mut files = by_level.into_values().map(|f| f[0]);
        let Some(base) = files.next() else { continue };
        out.push(Siblings {
            base,
            levels: files.collect(),
        });
    }
    out.sort_by_key(|s| s.base);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn level_files_beside_their_model_are_found_in_level_order() {
        let p = paths(&[
            "m/hero.glb",
            "m/hero_LOD2.glb",
            "m/hero_lod1.gltf",
            "m/other/hero_LOD1.glb",
            "m/lonely_LOD1.glb",
            "m/cap_LOD0.glb",
            "m/cap_LOD3.glb",
            "m/twice.glb",
            "m/twice_LOD1.glb",
            "m/twice-LOD1.glb",
        ]);
        assert_eq!(
            find(&p),
            [
                Siblings {
                    base: 0,
                    levels: vec![2, 1]
                },
                Siblings {
                    base: 5,
                    levels: vec![6]
                },
            ]
        );
    }
}
