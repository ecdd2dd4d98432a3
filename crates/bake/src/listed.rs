//! The files a container lists beside it: bone and VAT textures stored as
//! files (through their records) and every file of the outputs record
//! (meshes, sidecar, `anchors.exr`, OpenVAT files). One list serves the
//! up-to-date check, the report of an up-to-date model, and the removal of
//! a previous bake's files that a rebake no longer writes.

use std::path::{Component, Path, PathBuf};

use rigbake_format::container::Container;
use rigbake_format::meta::Storage;

/// One file a container lists: its name relative to the container's
/// folder (a shared bone texture is `../_shared/bones/<sha>.exr`), its
/// recorded size and CRC-32.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedFile {
    /// The name as recorded, relative to the container's folder.
    pub name: String,
    /// Recorded size in bytes.
    pub bytes: u64,
    /// Recorded CRC-32 (IEEE).
    pub crc32: u32,
}

/// Every file `c` lists beside it, in record order (bone textures, VAT
/// textures, the outputs record), each name once.
pub fn listed_files<R: std::io::Read + std::io::Seek>(c: &Container<R>) -> Vec<ListedFile> {
    let mut files: Vec<ListedFile> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut add = |name: &str, bytes: u64, crc32: u32| {
        if seen.insert(name.to_owned()) {
            files.push(ListedFile {
                name: name.to_owned(),
                bytes,
                crc32,
            });
        }
    };
    for t in &c.metadata().textures {
        if t.storage == Storage::File {
            add(&t.name, t.bytes, t.crc32);
        }
    }
    if let Some(vat) = c.records().vat.as_ref() {
        for t in &vat.textures {
            if t.storage == Storage::File {
                add(&t.name, t.bytes, t.crc32);
            }
        }
    }
    if let Some(outputs) = c.records().outputs.as_ref() {
        for f in &outputs.files {
            add(&f.name, f.bytes, f.crc32);
        }
    }
    files
}

/// Every file a reader of the bake at `container` reads: the container,
/// the files it lists beside it, and its `source` model. What a command
/// that writes next to a bake (`preview --out`) must never replace.
pub fn bake_inputs(container: &Path, source: &Path) -> crate::staging::Protected {
    let mut inputs = crate::staging::Protected::default();
    inputs.add(container);
    inputs.add(source);
    let dir = container.parent().unwrap_or(Path::new("."));
    if let Ok(c) = Container::open(container) {
        for f in listed_files(&c) {
            inputs.add(&dir.join(&f.name));
        }
    }
    inputs
}

/// Whether `name` is a plain file name in the container's own folder (no
/// separator, not `.` or `..`): only such a file is ever removed as stale
/// (a shared bone texture, `../_shared/...`, may serve other models).
pub fn is_own_file(name: &str) -> bool {
    let mut parts = Path::new(name).components();
    matches!(
        (parts.next(), parts.next()),
        (Some(Component::Normal(_)), None)
    ) && !name.contains('\\')
}

/// `path` with `.` dropped and each `..` taking back the component before
/// it, without touching the file system (`out/a/../_shared/x` becomes
/// `out/_shared/x`).
pub fn normalised(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The files of the previous bake in `out_dir` whose names `kept` does not
/// hold, and which are still regular files there (never a link, a folder,
/// or a file outside `out_dir`): what a commit of a new bake removes.
pub fn stale_files(previous: &[ListedFile], kept: &[String], out_dir: &Path) -> Vec<PathBuf> {
    let kept: std::collections::HashSet<&str> = kept.iter().map(String::as_str).collect();
    previous
        .iter()
        .filter(|f| is_own_file(&f.name) && !kept.contains(f.name.as_str()))
        .map(|f| out_dir.join(&f.name))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_are_own_files() {
        for own in ["Fox.vat.glb", "bones.skin0.exr", "a b.exr"] {
            assert!(is_own_file(own), "{own}");
        }
        for other in [
            "../_shared/bones/x.exr",
            "sub/x.exr",
            "/etc/passwd",
            "..",
            ".",
            "",
            "a\\b",
        ] {
            assert!(!is_own_file(other), "{other}");
        }
    }

    #[test]
    fn normalising_resolves_dots_lexically() {
        assert_eq!(
            normalised(Path::new("./out/a/../_shared/x.exr")),
            PathBuf::from("out/_shared/x.exr")
        );
        assert_eq!(
            normalised(Path::new("../out/./m")),
            PathBuf::from("../out/m")
        );
    }

    #[test]
    fn stale_files_are_the_previous_own_regular_files_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["old.exr", "kept.exr"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        std::fs::create_dir(dir.path().join("folder.exr")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("link.exr")).unwrap();
        let listed = |name: &str| ListedFile {
            name: name.to_owned(),
            bytes: 1,
            crc32: 0,
        };
        let previous: Vec<ListedFile> = [
            "old.exr",
            "kept.exr",
            "gone.exr",
            "folder.exr",
            "link.exr",
            "../outside.exr",
        ]
        .iter()
        .map(|n| listed(n))
        .collect();
        let stale = stale_files(&previous, &["kept.exr".to_owned()], dir.path());
        assert_eq!(stale, vec![dir.path().join("old.exr")]);
    }
}
