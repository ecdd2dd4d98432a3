//! Finding the models of a folder: every `.glb`/`.gltf` below it, hidden
//! folders, output roots and links to folders left out, problems reported
//! per path so that a batch goes on past them ([`discover`]).

use std::path::{Path, PathBuf};

/// Why a folder cannot be searched.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// The folder itself cannot be listed.
    #[error("{}: {source}", dir.display())]
    Walk {
        /// The folder searched.
        dir: PathBuf,
        /// Why.
        source: walkdir::Error,
    },
    /// A path below it could not be searched or used (the text names it).
    #[error("{0}")]
    Problem(String),
}

/// Whether `p` names a model file (`.glb` or `.gltf`, any case).
pub fn is_model(p: &Path) -> bool {
    matches!(
        p.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("glb" | "gltf")
    )
}

/// Every .glb/.gltf under `dir` (skipping hidden folders), as (path, id
/// relative to `dir`), sorted by id; the first folder that cannot be read
/// is an error. See [`discover`] for the rules.
pub fn find_models(dir: &Path) -> Result<Vec<(PathBuf, String)>, DiscoverError> {
    let found = discover(dir, None)?;
    match found.problems.into_iter().next() {
        Some(problem) => Err(DiscoverError::Problem(problem)),
        None => Ok(found.models),
    }
}

/// What folder discovery found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Discovery {
    /// Models as (path, id relative to the folder searched), sorted by id.
    pub models: Vec<(PathBuf, String)>,
    /// What could not be searched or used, one line each naming the path
    /// (an unreadable folder, a link to nothing). The run goes on with the
    /// other models and fails at the end.
    pub problems: Vec<String>,
}

/// Searches `dir` for .glb/.gltf files.
///
/// - Hidden folders are skipped, and so are the output root `skip` (when
///   it lies inside `dir`; compared by canonical path) and any folder
///   holding a `.rigbake.lock` (another output root): their GLBs are
///   outputs, not inputs.
/// - A symbolic link to a regular model file is followed; linked folders
///   are not (no loops).
/// - A folder that cannot be read, or a link to nothing, is a problem
///   reported in [`Discovery::problems`]; only `dir` itself being
///   unreadable is an error.
pub fn discover(dir: &Path, skip: Option<&Path>) -> Result<Discovery, DiscoverError> {
    let skip = skip.and_then(|s| s.canonicalize().ok());
    let mut found = Discovery::default();
    let walker = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            if e.depth() == 0 {
                return true;
            }
            if e.file_name().to_string_lossy().starts_with('.') {
                return false;
            }
            if !e.file_type().is_dir() {
                return true;
            }
            let is_out = skip
                .as_deref()
                .is_some_and(|s| e.path().canonicalize().is_ok_and(|c| c == s));
            let is_lock =
                std::fs::symlink_metadata(e.path().join(crate::staging::LOCK_FILE)).is_ok();
            !(is_out || is_lock)
        });
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(source) if source.depth() == 0 => {
                return Err(DiscoverError::Walk {
                    dir: dir.to_path_buf(),
                    source,
                });
            }
            Err(e) => {
                let path = e.path().unwrap_or(dir);
                found.problems.push(format!(
                    "{}: cannot search this folder: {e}",
                    path.display()
                ));
                continue;
            }
        };
        if !is_model(entry.path()) {
            continue;
        }
        if entry.file_type().is_symlink() {
            match std::fs::metadata(entry.path()) {
                Ok(m) if m.is_file() => {}
                Ok(m) if m.is_dir() => continue, // linked folders are not followed
                Ok(_) => {
                    found.problems.push(format!(
                        "{}: a link to something that is not a regular file",
                        entry.path().display()
                    ));
                    continue;
                }
                Err(e) => {
                    found.problems.push(format!(
                        "{}: a link that cannot be followed: {e}",
                        entry.path().display()
                    ));
                    continue;
                }
            }
        } else if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        let id = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        found.models.push((entry.path().to_path_buf(), id));
    }
    found.models.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(found)
}
