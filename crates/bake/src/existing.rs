//! The bakes already under an output root, by the SHA-256 of their source
//! model: a model whose bake would land in one folder while a bake of the
//! same source stands in another (a folder bake of `models/` put
//! `khronos/CesiumMan.glb` in `OUT/khronos/CesiumMan/`; baking the file
//! alone goes to `OUT/CesiumMan/`) is warned about, so a model's outputs
//! are never split between two folders without the user knowing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rigbake_format::container::Container;

/// At most this many containers are read while scanning an output root;
/// past it the scan stops (the warning is a convenience, not a check).
pub const MAX_SCANNED: usize = 4096;

/// Folders deeper than this below the output root are not scanned.
pub const MAX_DEPTH: usize = 16;

/// The containers under an output root, by source SHA-256 (lowercase hex).
#[derive(Debug, Clone, Default)]
pub struct ExistingBakes {
    by_source: HashMap<String, Vec<PathBuf>>,
}

impl ExistingBakes {
    /// Reads the metadata of every `.rigbake` file under `root` (links not
    /// followed, at most [`MAX_SCANNED`] containers, [`MAX_DEPTH`]
    /// folders deep); a container that does not read is left out.
    pub fn scan(root: &Path) -> Self {
        let mut by_source: HashMap<String, Vec<PathBuf>> = HashMap::new();
        let containers = walkdir::WalkDir::new(root)
            .follow_links(false)
            .max_depth(MAX_DEPTH)
            .sort_by_file_name()
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "rigbake")
            })
            .take(MAX_SCANNED);
        for entry in containers {
            if let Ok(c) = Container::open(entry.path()) {
                by_source
                    .entry(c.metadata().source.sha256.clone())
                    .or_default()
                    .push(entry.into_path());
            }
        }
        Self { by_source }
    }

    /// A container of a bake of the source whose SHA-256 is `sha256` in
    /// another folder than `out_dir`, if any.
    pub fn elsewhere(&self, sha256: &str, out_dir: &Path) -> Option<&Path> {
        let here = crate::listed::normalised(out_dir);
        self.by_source.get(sha256)?.iter().find_map(|c| {
            let folder = crate::listed::normalised(c.parent()?);
            (folder != here).then_some(c.as_path())
        })
    }
}
