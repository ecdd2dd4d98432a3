//! The bakes a viewer shows and the files it may serve.
//!
//! A target is one `.rigbake` container or a folder searched for them (at
//! most [`MAX_DEPTH`] levels deep, at most [`MAX_BAKES`] containers, links
//! not followed). For each container the catalog keeps its `inspect --json`
//! report and an allow-list of plain file names beside it: the container
//! itself, every texture stored as a file, the weights mesh and the VAT
//! playback mesh. Names come from the records and must be one plain path
//! component, so nothing outside the bake's folder can ever be listed.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use glam::DMat4;
use rigbake::inspect::{InspectReport, load_report};
use rigbake_format::meta::Storage;
use serde_json::value::RawValue;

/// Deepest folder level searched below a target folder.
pub const MAX_DEPTH: usize = 8;
/// Most containers one viewer shows.
pub const MAX_BAKES: usize = 256;
/// Most bytes the bakes' `inspect --json` reports may add up to: the
/// catalog keeps each report as its JSON text only (built once, the
/// report's records dropped), and the page's index holds them all.
pub const MAX_REPORT_BYTES: usize = 64 << 20;

/// Why a target cannot be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogError {
    /// The target is unusable as given (missing, not a container or
    /// folder, no bakes in it, too many); the message says why.
    Unusable(String),
    /// A container or its source model is damaged or unreadable.
    Unreadable(String),
}

impl std::fmt::Display for CatalogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unusable(m) | Self::Unreadable(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CatalogError {}

/// One bake: its container, its report and the files it may serve.
#[derive(Debug)]
pub struct Bake {
    /// Display name: the container's path relative to the target folder.
    pub name: String,
    /// The container file.
    pub file: PathBuf,
    /// The folder holding the container and its files.
    pub dir: PathBuf,
    /// That folder, opened when the catalog was built: every served file is
    /// opened relative to it ([`Bake::open_file`]), so replacing the folder
    /// (by a link, say) afterwards changes nothing that is served.
    pub dir_handle: std::fs::File,
    /// The `inspect --json` report, as its JSON text (the records are not
    /// kept: a few KiB per bake instead of the decoded records).
    pub report: Box<RawValue>,
    /// Plain file names (no folders) the server may hand out, mapped to
    /// their paths in [`Bake::dir`].
    pub files: BTreeMap<String, PathBuf>,
    /// Rest-pose global matrices of the nodes whose space the bake's values
    /// are in (bone sets' mesh nodes, the VAT reference node), by node
    /// name, from the source model when it was found.
    pub placements: BTreeMap<String, DMat4>,
    /// Why placements are missing, when the source was not found.
    pub placement_note: Option<String>,
}

impl Bake {
    /// Opens file `name` of the allow-list for reading, relative to
    /// [`Bake::dir_handle`] (`openat` with `O_NOFOLLOW` and `O_NONBLOCK`:
    /// a link at the name, a FIFO or a device is never opened as a file);
    /// `None` unless it is a regular file now.
    pub fn open_file(&self, name: &str) -> Option<std::fs::File> {
        if !self.files.contains_key(name) || !plain_name(name) {
            return None;
        }
        #[cfg(unix)]
        let file = {
            use rustix::fs::{Mode, OFlags, openat};
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            std::fs::File::from(openat(&self.dir_handle, name, flags, Mode::empty()).ok()?)
        };
        #[cfg(not(unix))]
        let file = {
            let path = self.dir.join(name);
            let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
            regular.then(|| std::fs::File::open(&path).ok()).flatten()?
        };
        file.metadata().is_ok_and(|m| m.is_file()).then_some(file)
    }
}

/// Opens folder `dir` as a handle (following a link given as the target
/// itself: that is the user's choice, made once at start).
fn open_dir(dir: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use rustix::fs::{Mode, OFlags, open};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(std::fs::File::from(open(dir, flags, Mode::empty())?))
    }
    #[cfg(not(unix))]
    {
        std::fs::File::open(dir)
    }
}

/// Every bake a viewer shows.
#[derive(Debug)]
pub struct Catalog {
    /// The bakes, sorted by name.
    pub bakes: Vec<Bake>,
}

fn is_container(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "rigbake")
}

/// Whether `name` is one plain path component (no folders, no `..`).
pub fn plain_name(name: &str) -> bool {
    let mut parts = Path::new(name).components();
    matches!(parts.next(), Some(Component::Normal(_)))
        && parts.next().is_none()
        && !name.contains(['/', '\\', '\0'])
}

impl Catalog {
    /// The bakes at `target` (a container or a folder). `source` is the
    /// model of a single container, used for placements; otherwise each
    /// container's recorded source file is looked for beside it.
    pub fn open(target: &Path, source: Option<&Path>) -> Result<Self, CatalogError> {
        Self::open_with(target, source, MAX_REPORT_BYTES)
    }

    /// [`Catalog::open`] with another bound on the reports' total size
    /// (tests use a small one).
    pub fn open_with(
        target: &Path,
        source: Option<&Path>,
        max_report_bytes: usize,
    ) -> Result<Self, CatalogError> {
        let meta = std::fs::metadata(target)
            .map_err(|e| CatalogError::Unusable(format!("{}: {e}", target.display())))?;
        let files: Vec<PathBuf> = if meta.is_file() {
            if !is_container(target) {
                return Err(CatalogError::Unusable(format!(
                    "{}: not a .rigbake container or a folder",
                    target.display()
                )));
            }
            vec![target.to_path_buf()]
        } else if meta.is_dir() {
            find_containers(target)?
        } else {
            return Err(CatalogError::Unusable(format!(
                "{}: not a regular file or a folder",
                target.display()
            )));
        };
        if files.is_empty() {
            return Err(CatalogError::Unusable(format!(
                "{}: no .rigbake containers found (searched {MAX_DEPTH} levels deep)",
                target.display()
            )));
        }
        if source.is_some() && files.len() > 1 {
            return Err(CatalogError::Unusable(format!(
                "--source names one model, but {} holds {} bakes; put each source beside its container instead",
                target.display(),
                files.len()
            )));
        }
        let root = if meta.is_dir() {
            target
        } else {
            target.parent().unwrap_or(Path::new("."))
        };
        let mut bakes = Vec::with_capacity(files.len());
        let mut report_bytes = 0usize;
        for f in &files {
            let b = bake(root, f, source)?;
            report_bytes += b.report.get().len();
            if report_bytes > max_report_bytes {
                return Err(CatalogError::Unusable(format!(
                    "{}: the reports of the first {} bakes add up to more than {max_report_bytes} bytes (the viewer's limit); point view at fewer bakes",
                    target.display(),
                    bakes.len() + 1,
                )));
            }
            bakes.push(b);
        }
        bakes.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Self { bakes })
    }
}

fn find_containers(dir: &Path) -> Result<Vec<PathBuf>, CatalogError> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .max_depth(MAX_DEPTH)
        .follow_links(false)
        .sort_by_file_name()
    {
        let entry =
            entry.map_err(|e| CatalogError::Unreadable(format!("{}: {e}", dir.display())))?;
        if entry.file_type().is_file() && is_container(entry.path()) {
            if out.len() == MAX_BAKES {
                return Err(CatalogError::Unusable(format!(
                    "{}: more than {MAX_BAKES} .rigbake containers; point view at a smaller folder",
                    dir.display()
                )));
            }
            out.push(entry.into_path());
        }
    }
    Ok(out)
}

/// The allow-list of one bake: names from its records, kept when they are
/// plain names of regular files (not links) in `dir`.
fn allowed_files(file: &Path, dir: &Path, report: &InspectReport) -> BTreeMap<String, PathBuf> {
    let mut names: Vec<&str> = Vec::new();
    if let Some(n) = file.file_name().and_then(|n| n.to_str()) {
        names.push(n);
    }
    for t in &report.metadata.textures {
        if t.storage == Storage::File {
            names.push(&t.name);
        }
    }
    if let Some(v) = &report.vat {
        names.extend(v.playback_file.as_deref());
        for t in &v.textures {
            if t.storage == Storage::File {
                names.push(&t.name);
            }
        }
    }
    if let Some(w) = &report.weights {
        names.extend(w.mesh_file.as_deref());
    }
    // LOD levels' own weights meshes (`lod=N`).
    for g in report.lods.iter().flat_map(|l| &l.groups) {
        names.extend(g.levels.iter().filter_map(|l| l.weights_file.as_deref()));
    }
    names
        .into_iter()
        .filter(|n| plain_name(n))
        .filter_map(|n| {
            let path = dir.join(n);
            let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
            regular.then(|| (n.to_owned(), path))
        })
        .collect()
}

fn bake(root: &Path, file: &Path, source: Option<&Path>) -> Result<Bake, CatalogError> {
    let (report, _) =
        load_report(file, false).map_err(|e| CatalogError::Unreadable(e.to_string()))?;
    let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let name = file
        .strip_prefix(root)
        .unwrap_or(file)
        .to_string_lossy()
        .replace('\\', "/");
    let files = allowed_files(file, &dir, &report);
    let dir_handle = open_dir(&dir).map_err(|e| {
        CatalogError::Unreadable(format!("{}: cannot open the folder: {e}", dir.display()))
    })?;
    let (placements, placement_note) = match placements(file, &report, source) {
        Ok(found) => found,
        Err(note) if source.is_some() => return Err(CatalogError::Unusable(note)),
        Err(note) => (BTreeMap::new(), Some(note)),
    };
    let report = serde_json::value::to_raw_value(&report).map_err(|e| {
        CatalogError::Unreadable(format!("{}: cannot describe the bake: {e}", file.display()))
    })?;
    Ok(Bake {
        name,
        file: file.to_path_buf(),
        dir,
        dir_handle,
        report,
        files,
        placements,
        placement_note,
    })
}

/// Rest-pose globals of the space nodes, from the source model (the same
/// placement `rigbake preview` uses), with a note naming the spaces that
/// could not be placed (no mesh node of the name, or several); an
/// explanation when the source is missing. Only bakes before format 1.11
/// need them: later ones record their placements, which the page uses.
fn placements(
    file: &Path,
    report: &InspectReport,
    source: Option<&Path>,
) -> Result<(BTreeMap<String, DMat4>, Option<String>), String> {
    use rigbake_core::eval::sample::LocalPose;
    use rigbake_core::import::{self, ImportOptions};
    use rigbake_core::reference::direct_global;

    let location =
        report
            .container
            .source_location
            .as_ref()
            .map(|p| rigbake_format::meta::SourceLocation {
                relative_path: p.clone(),
            });
    let path = rigbake::playback::find_source(file, &report.metadata, location.as_ref(), source)
        .map_err(|e| e.to_string())?;
    let options = ImportOptions::default();
    let bytes = import::read_file(&path, &options.limits).map_err(|e| e.to_string())?;
    let model = import::import_bytes(&path, &bytes, &options).map_err(|e| e.to_string())?;
    let rest = LocalPose::rest(&model);
    let mut wanted: Vec<&str> = report
        .metadata
        .skins
        .iter()
        .filter_map(|s| s.mesh_nodes.first().map(String::as_str))
        .collect();
    if let Some(v) = &report.vat {
        wanted.extend(v.reference_node.as_deref());
    }
    let mut out = BTreeMap::new();
    let mut unplaced = Vec::new();
    for name in wanted {
        // A space is a mesh node: the one of its name, never the first
        // node of that name; an ambiguous name is left unplaced and said.
        match rigbake::playback::space_node(&model, name) {
            Ok(n) => {
                out.insert(name.to_owned(), direct_global(&model, &rest, n));
            }
            Err(e) => unplaced.push(format!("`{name}`: {e}")),
        }
    }
    let note = (!unplaced.is_empty()).then(|| unplaced.join("; "));
    Ok((out, note))
}
