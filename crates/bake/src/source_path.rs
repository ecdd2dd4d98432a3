//! Where the source model is, relative to the container: recorded at bake
//! time (the source record, formats/metadata.md) and followed by `verify`
//! and `preview` so they work right after `bake --out` without `--source`.

use std::path::{Component, Path, PathBuf};

use rigbake_format::check::MAX_SOURCE_PATH;

/// The path of `input` relative to the folder `out_dir` the container goes
/// to, `/`-separated, both taken with symbolic links resolved (`out_dir`
/// may not exist yet: its deepest existing ancestor is resolved and the
/// rest appended). `None` when it cannot be expressed (not UTF-8, on
/// another drive, over [`MAX_SOURCE_PATH`] bytes, or unreadable paths):
/// the bake then records no location and readers need `--source`.
pub fn relative_source(input: &Path, out_dir: &Path) -> Option<String> {
    let source = std::fs::canonicalize(input).ok()?;
    let dir = resolved_dir(out_dir)?;
    let relative = relative_to(&source, &dir)?;
    let parts: Vec<&str> = relative
        .components()
        .map(|c| match c {
            Component::ParentDir => Some(".."),
            Component::Normal(name) => name.to_str().filter(|n| !n.contains(['/', '\\'])),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let text = parts.join("/");
    let check = rigbake_format::meta::SourceLocation {
        relative_path: text.clone(),
    };
    (text.len() <= MAX_SOURCE_PATH && rigbake_format::check::source(&check).is_ok()).then_some(text)
}

/// The recorded `relative` path followed from the container at `container`
/// (its folder with links resolved, as at bake time).
pub fn follow(container: &Path, relative: &str) -> Option<PathBuf> {
    let container = std::fs::canonicalize(container).ok()?;
    let mut path = container.parent()?.to_path_buf();
    for part in relative.split('/') {
        if part == ".." {
            path.pop();
        } else {
            path.push(part);
        }
    }
    Some(path)
}

/// `dir` with links resolved, allowing a tail that does not exist yet.
fn resolved_dir(dir: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(dir).ok()?;
    let mut existing = absolute.as_path();
    let mut tail = Vec::new();
    loop {
        if let Ok(found) = std::fs::canonicalize(existing) {
            let mut path = found;
            for part in tail.iter().rev() {
                path.push(part);
            }
            return Some(path);
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                tail.push(name.to_owned());
                existing = parent;
            }
            _ => return None,
        }
    }
}

/// `path` relative to `base` (both absolute and free of `.`/`..`).
fn relative_to(path: &Path, base: &Path) -> Option<PathBuf> {
    let (p, b): (Vec<Component<'_>>, Vec<Component<'_>>) =
        (path.components().collect(), base.components().collect());
    if p.first() != b.first() {
        return None; // another root or drive
    }
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for part in &b[common..] {
        if !matches!(part, Component::Normal(_)) {
            return None;
        }
        out.push("..");
    }
    for part in &p[common..] {
        out.push(part.as_os_str());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_relative_to_the_container_folder_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let models = dir.path().join("models/chars");
        std::fs::create_dir_all(&models).unwrap();
        let model = models.join("knight.glb");
        std::fs::write(&model, b"glb").unwrap();
        // The output folder does not exist yet.
        let out = dir.path().join("out/chars/knight");
        let relative = relative_source(&model, &out).unwrap();
        assert_eq!(relative, "../../../models/chars/knight.glb");
        std::fs::create_dir_all(&out).unwrap();
        let container = out.join("knight.rigbake");
        std::fs::write(&container, b"c").unwrap();
        assert_eq!(
            follow(&container, &relative).unwrap(),
            std::fs::canonicalize(&model).unwrap()
        );
        // Beside the container: just the name.
        let beside = out.join("m.glb");
        std::fs::write(&beside, b"glb").unwrap();
        assert_eq!(relative_source(&beside, &out).unwrap(), "m.glb");
        // A missing source records nothing.
        assert_eq!(relative_source(&dir.path().join("none.glb"), &out), None);
    }
}
