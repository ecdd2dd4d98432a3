//! The TOML manifest: global defaults and per-model entries selected by
//! path or glob, each table an [`Options`] layer (the keys are declared
//! once, in [`crate::options`]). Schema: docs/manifest.md; a commented
//! example lives in `fixtures/rigbake.toml`. Unknown keys and wrong types
//! are errors naming the file, line and key.
//!
//! The format has this one reader, in the library, so that a tool of a
//! team's own reads a manifest exactly as `rigbake bake` does; the binary
//! loads it and layers its entries and flags into each model's settings.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::options::Options;

/// Why a manifest cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The manifest cannot be read.
    #[error("{}: cannot read the manifest: {source}", path.display())]
    Read {
        /// The manifest.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The manifest is not valid TOML or breaks the schema; `at` is
    /// `:line:col` when known.
    #[error("{}{at}: {message}", path.display())]
    Invalid {
        /// The manifest.
        path: PathBuf,
        /// `:line:col`, or empty.
        at: String,
        /// What is wrong.
        message: String,
    },
}

/// A parsed manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The manifest file.
    pub path: PathBuf,
    /// Folder that model paths are relative to: the manifest's `models`, or
    /// the manifest's own folder.
    pub root: PathBuf,
    /// Output folder, if the manifest names one.
    pub out: Option<PathBuf>,
    /// Defaults for every model.
    pub defaults: Options,
    /// Model entries, in file order.
    pub models: Vec<ModelEntry>,
}

/// One `[[model]]` entry.
#[derive(Debug, Clone)]
pub struct ModelEntry {
    /// Path or glob (relative to the manifest's folder, `/` separators).
    pub pattern: String,
    /// Line of the entry's `path`, for messages.
    pub line: usize,
    /// Its settings (`lod_files` joined to [`Manifest::root`]).
    pub overrides: Options,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    out: Option<String>,
    models: Option<String>,
    defaults: Option<Options>,
    #[serde(default, rename = "model")]
    entries: Vec<Options>,
}

/// Where each line of a text starts, found in one pass, so that any number
/// of byte offsets turn into lines and columns in O(log n) each (the text
/// is never rescanned per lookup).
struct LineStarts {
    starts: Vec<usize>,
    len: usize,
}

impl LineStarts {
    fn new(text: &str) -> Self {
        rigbake_core::work::add(
            rigbake_core::work::Counter::TextBytesScanned,
            text.len() as u64,
        );
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self {
            starts,
            len: text.len(),
        }
    }

    /// 1-based line and column (in bytes) of byte `offset`.
    fn at(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.len);
        let line = self.starts.partition_point(|&s| s <= offset);
        (line, offset - self.starts[line - 1] + 1)
    }
}

/// Largest manifest file read.
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;

impl Manifest {
    /// Reads and parses the manifest at `path`.
    pub fn load(path: &Path) -> Result<Self, ManifestError> {
        // A regular file of at most 16 MiB (a FIFO or device is refused
        // without blocking).
        let bytes =
            rigbake_format::fsread::read_regular(path, MAX_MANIFEST_BYTES).map_err(|e| {
                ManifestError::Read {
                    path: path.to_path_buf(),
                    source: match e {
                        rigbake_format::FormatError::Io(io) => io,
                        other => std::io::Error::other(other.to_string()),
                    },
                }
            })?;
        let text = String::from_utf8(bytes).map_err(|_| ManifestError::Read {
            path: path.to_path_buf(),
            source: std::io::Error::other("the manifest is not UTF-8 text"),
        })?;
        Self::parse(path, &text)
    }

    /// Parses manifest `text` read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ManifestError> {
        let error = |at: String, message: &str| ManifestError::Invalid {
            path: path.to_path_buf(),
            at,
            message: message.to_owned(),
        };
        let lines = LineStarts::new(text);
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| lines.at(s.start));
            let at = at.map_or_else(String::new, |(line, col)| format!(":{line}:{col}"));
            error(at, e.message())
        })?;
        // A bare name (`rigbake.toml`) has an empty parent: its folder is the
        // current one.
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let root = raw
            .models
            .as_ref()
            .map_or_else(|| dir.clone(), |m| dir.join(m));
        if let Some(p) = raw.defaults.as_ref().and_then(|d| d.path.as_ref()) {
            let (line, col) = lines.at(p.span().start);
            return Err(error(
                format!(":{line}:{col}"),
                "`path` belongs in [[model]] entries, not in [defaults]",
            ));
        }
        if raw.defaults.as_ref().is_some_and(|d| d.lod_files.is_some()) {
            return Err(error(
                String::new(),
                "`lod_files` belongs in [[model]] entries (the files are one model's levels), not in [defaults]",
            ));
        }
        let mut models = Vec::with_capacity(raw.entries.len());
        for (i, mut m) in raw.entries.into_iter().enumerate() {
            let Some(p) = m.path.take() else {
                return Err(error(
                    String::new(),
                    &format!("[[model]] entry {} has no `path`", i + 1),
                ));
            };
            if let Some(files) = &mut m.lod_files {
                for f in files {
                    *f = root.join(&*f);
                }
            }
            models.push(ModelEntry {
                line: lines.at(p.span().start).0,
                pattern: p.into_inner(),
                overrides: m,
            });
        }
        Ok(Self {
            path: path.to_path_buf(),
            out: raw.out.map(|o| dir.join(o)),
            root,
            defaults: raw.defaults.unwrap_or_default(),
            models,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_come_from_one_scan_of_the_text() {
        let lines = LineStarts::new("ab\ncd\n\nx");
        assert_eq!(lines.at(0), (1, 1));
        assert_eq!(lines.at(2), (1, 3), "the newline ends its line");
        assert_eq!(lines.at(3), (2, 1));
        assert_eq!(lines.at(7), (4, 1));
        assert_eq!(lines.at(99), (4, 2), "past the end: the end");
        // Each entry's line used to rescan the text before it: quadratic in
        // the entries. Now the text is scanned once, whatever their count.
        use rigbake_core::work::{Counter, take};
        let manifest = |n: usize| -> String {
            (0..n)
                .map(|i| format!("[[model]]\npath = \"m{i}.glb\"\n"))
                .collect()
        };
        let mut scanned = Vec::new();
        for n in [2_000, 8_000] {
            let text = manifest(n);
            take(Counter::TextBytesScanned);
            let m = Manifest::parse(Path::new("rigbake.toml"), &text).unwrap();
            assert_eq!(m.models.len(), n);
            assert_eq!(m.models[n - 1].line, 2 * n);
            scanned.push((take(Counter::TextBytesScanned), text.len() as u64));
        }
        for (work, len) in &scanned {
            assert_eq!(work, len, "one pass over the text");
        }
        assert!(scanned[1].0 < 5 * scanned[0].0, "{scanned:?}");
    }

    #[test]
    fn parses_defaults_and_entries() {
        let text = r#"
out = "baked"
[defaults]
fps = 24
outputs = ["bones", "weights", "vat"]
vat = { format = "png16", normals = true }

[[model]]
path = "chars/*.glb"
max_influences = 4
[[model.clip]]
source = "Take 001"
name = "idle"
frames = [0, 48]
loop = true
[[model.blend]]
a = "Walk"
b = "Run"
weights = [0, 0.5, 1]
"#;
        let m = Manifest::parse(Path::new("dir/rigbake.toml"), text).unwrap();
        assert_eq!(m.out, Some(PathBuf::from("dir/baked")));
        assert_eq!(m.defaults.fps, Some(24.0));
        assert_eq!(m.models.len(), 1);
        assert_eq!(m.models[0].pattern, "chars/*.glb");
        assert_eq!(m.models[0].line, 9, "line 1 is the empty first line");
        assert_eq!(m.models[0].overrides.clip[0].frames, Some([0, 48]));
        assert_eq!(m.models[0].overrides.blend[0].weights, [0.0, 0.5, 1.0]);
    }

    #[test]
    fn unknown_keys_and_wrong_types_name_file_line_and_key() {
        let e = Manifest::parse(Path::new("m.toml"), "[defaults]\nfps = 30\nfsp = 3\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.toml:3:"), "{e}");
        assert!(e.contains("fsp"), "{e}");
        let e = Manifest::parse(
            Path::new("m.toml"),
            "[[model]]\npath = \"a.glb\"\nfps = \"fast\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("m.toml:3:"), "{e}");
        let e = Manifest::parse(
            Path::new("m.toml"),
            "[[model]]\npath = \"a.glb\"\n[model.vat]\nformat = \"jpeg\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("m.toml:4:") && e.contains("jpeg"), "{e}");
    }
}
