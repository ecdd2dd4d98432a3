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

/// Device, inode and (off Unix) canonical path.
type Identity = (u64, u64, PathBuf);

/// A file's identity, or its path when it has none (cannot be read).
type Key = Result<Identity, PathBuf>;

/// A file's identity for LOD checks: device and inode on Unix (a symbolic
/// or hard link to a file is that file), the canonical path elsewhere;
/// `None` for a file that cannot be read (compared by path then).
fn identity(path: &Path) -> Option<Identity> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some((m.dev(), m.ino(), PathBuf::new()))
    }
    #[cfg(not(unix))]
    {
        Some((0, 0, path.canonicalize().ok()?))
    }
}

/// Checks the LOD groups of a run as a graph, before any model leaves it:
/// `groups` holds each model (level 0) with its level files. A level that
/// is its own model (by path or by file identity: a symbolic or hard link
/// counts as the file), a file given twice in one group, a file that is a
/// level of two models, and a level that has levels of its own (chains
/// `a=b, b=c` and cycles `a=b, b=a`) are errors naming the files. Groups
/// without levels take part as models only.
pub fn check_groups(groups: &[(PathBuf, Vec<PathBuf>)]) -> Result<(), String> {
    let key = |p: &Path| -> Key { identity(p).ok_or_else(|| p.to_path_buf()) };
    // Every level file: its identity, its path, its model.
    let mut levels: Vec<(Key, &Path, &Path)> = Vec::new();
    for (model, files) in groups {
        let model_key = key(model);
        for file in files {
            let file_key = key(file);
            if file_key == model_key {
                return Err(format!(
                    "`{}` is given as a LOD level of `{}`, which is the same file; a model cannot be its own level",
                    file.display(),
                    model.display()
                ));
            }
            if let Some((_, other, owner)) = levels.iter().find(|(k, _, _)| *k == file_key) {
                return Err(if *owner == model.as_path() {
                    format!(
                        "`{}` and `{}` are the same file, given twice as LOD levels of `{}`",
                        other.display(),
                        file.display(),
                        model.display()
                    )
                } else {
                    format!(
                        "`{}` is a LOD level of both `{}` and `{}`; a level file belongs to one model",
                        file.display(),
                        owner.display(),
                        model.display()
                    )
                });
            }
            levels.push((file_key, file, model));
        }
    }
    for (model, files) in groups.iter().filter(|(_, f)| !f.is_empty()) {
        let model_key = key(model);
        if let Some((_, level, owner)) = levels.iter().find(|(k, _, _)| *k == model_key) {
            return Err(format!(
                "`{}` is a LOD level of `{}` and has LOD levels of its own (`{}`); levels do not chain: give every level to the model itself",
                level.display(),
                owner.display(),
                files[0].display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lod_groups_are_checked_as_a_graph() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, name).unwrap();
            p
        };
        let (a, b, c) = (file("a.glb"), file("b.glb"), file("c.glb"));
        let group =
            |m: &PathBuf, l: &[&PathBuf]| (m.clone(), l.iter().map(|p| (*p).clone()).collect());
        let fine = [group(&a, &[&b, &c])];
        assert_eq!(check_groups(&fine), Ok(()));
        type Groups = Vec<(PathBuf, Vec<PathBuf>)>;
        let cases: Vec<(Groups, &str)> = vec![
            (vec![group(&a, &[&a])], "its own level"),
            (
                vec![group(&a, &[&b]), group(&b, &[&a])],
                "levels of its own",
            ),
            (
                vec![group(&a, &[&b]), group(&b, &[&c])],
                "levels of its own",
            ),
            (vec![group(&a, &[&c]), group(&b, &[&c])], "both"),
            (vec![group(&a, &[&b, &b])], "given twice"),
        ];
        for (groups, words) in cases {
            let err = check_groups(&groups).unwrap_err();
            assert!(err.contains(words), "{groups:?}: {err}");
        }
        #[cfg(unix)]
        {
            let soft = dir.path().join("a_LOD1.glb");
            std::os::unix::fs::symlink(&a, &soft).unwrap();
            let err = check_groups(&[group(&a, &[&soft])]).unwrap_err();
            assert!(err.contains("same file"), "{err}");
            let hard = dir.path().join("a_LOD2.glb");
            std::fs::hard_link(&a, &hard).unwrap();
            let err = check_groups(&[group(&a, &[&hard])]).unwrap_err();
            assert!(err.contains("same file"), "{err}");
            let err = check_groups(&[group(&a, &[&b, &c]), group(&c, &[])]);
            assert_eq!(
                err,
                Ok(()),
                "a level that is also given as a model, without levels"
            );
        }
    }

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
