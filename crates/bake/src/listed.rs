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

/// The file kinds rigbake writes beside a container (textures, meshes,
/// sidecars): a listed name with another extension is never removed.
const OUTPUT_EXTENSIONS: [&str; 6] = ["exr", "png", "ktx2", "dds", "glb", "json"];

/// What a commit does with the previous bake's files that the new bake no
/// longer writes ([`stale_files`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stale {
    /// Provably rigbake's own: removed.
    pub remove: Vec<PathBuf>,
    /// Listed but not provably rigbake's (an input of the run, another kind
    /// of file, or changed since it was written): kept, with the reason.
    pub keep: Vec<(PathBuf, String)>,
}

/// The files of the previous bake in `out_dir` whose names `kept` does not
/// hold, and which are still regular files there (never a link, a folder,
/// or a file outside `out_dir`), sorted: those provably rigbake's own (a
/// kind of file rigbake writes, not an input of the run, and still of the
/// recorded size and CRC-32) to remove, the others to keep with a reason.
pub fn stale_files(
    previous: &[ListedFile],
    kept: &[String],
    out_dir: &Path,
    protected: &crate::staging::Protected,
) -> Stale {
    let kept: std::collections::HashSet<&str> = kept.iter().map(String::as_str).collect();
    let mut stale = Stale::default();
    for f in previous {
        if !is_own_file(&f.name) || kept.contains(f.name.as_str()) {
            continue;
        }
        let path = out_dir.join(&f.name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.file_type().is_file() {
            continue;
        }
        match why_not_ours(f, &path, meta.len(), protected) {
            None => stale.remove.push(path),
            Some(reason) => stale.keep.push((path, reason)),
        }
    }
    stale
}

/// Why the regular file `path` (of `len` bytes), which the previous
/// container listed as `f`, is not provably rigbake's own; `None` when it
/// is.
fn why_not_ours(
    f: &ListedFile,
    path: &Path,
    len: u64,
    protected: &crate::staging::Protected,
) -> Option<String> {
    if let Some(input) = protected.input_at(path) {
        return Some(format!("it is the input `{}` of this run", input.display()));
    }
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if !extension.is_some_and(|e| OUTPUT_EXTENSIONS.contains(&e.as_str())) {
        return Some("it is not a kind of file rigbake writes".to_owned());
    }
    if len != f.bytes {
        return Some(format!(
            "it is {len} bytes, not the {} bytes rigbake wrote",
            f.bytes
        ));
    }
    match crc32_of(path) {
        Ok(crc) if crc == f.crc32 => None,
        Ok(_) => Some("its content changed since rigbake wrote it".to_owned()),
        Err(e) => Some(format!("it cannot be read ({e})")),
    }
}

/// The CRC-32 of the file at `path`, read in blocks.
fn crc32_of(path: &Path) -> std::io::Result<u32> {
    use std::io::Read as _;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = crc32fast::Hasher::new();
    let mut block = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut block)?;
        if n == 0 {
            return Ok(hasher.finalize());
        }
        hasher.update(&block[..n]);
    }
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
            crc32: crc32fast::hash(b"x"),
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
        let stale = stale_files(
            &previous,
            &["kept.exr".to_owned()],
            dir.path(),
            &crate::staging::Protected::default(),
        );
        assert_eq!(stale.remove, vec![dir.path().join("old.exr")]);
        assert!(stale.keep.is_empty());
    }

    #[test]
    fn only_provably_own_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            std::fs::write(dir.path().join(name), bytes).unwrap();
            ListedFile {
                name: name.to_owned(),
                bytes: bytes.len() as u64,
                crc32: crc32fast::hash(bytes),
            }
        };
        let ours = write("ours.exr", b"texels");
        // The user's README, listed with its true size and CRC-32.
        let readme = write("README.md", b"# my project");
        // A source model now where an earlier export stood.
        let model = write("Fox.glb", b"glTF model");
        let mut edited = write("edited.glb", b"mesh");
        edited.crc32 ^= 1;
        let mut grown = write("grown.json", b"{}");
        grown.bytes = 1;
        let mut protected = crate::staging::Protected::default();
        protected.add(&dir.path().join("Fox.glb"));
        let stale = stale_files(
            &[ours, readme, model, edited, grown],
            &[],
            dir.path(),
            &protected,
        );
        assert_eq!(stale.remove, vec![dir.path().join("ours.exr")]);
        let kept: Vec<(String, &str)> = stale
            .keep
            .iter()
            .map(|(p, why)| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, why.as_str())
            })
            .collect();
        assert_eq!(kept.len(), 4, "{kept:?}");
        assert!(kept[0].0 == "README.md" && kept[0].1.contains("not a kind of file"));
        assert!(kept[1].0 == "Fox.glb" && kept[1].1.contains("input"));
        assert!(kept[2].0 == "edited.glb" && kept[2].1.contains("content changed"));
        assert!(kept[3].0 == "grown.json" && kept[3].1.contains("not the 1 bytes"));
    }
}
