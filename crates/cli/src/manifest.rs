//! The TOML manifest: global defaults and per-model entries selected by
//! path or glob. Schema: docs/manifest.md; a commented example lives in
//! `fixtures/rigbake.toml`. Unknown keys and wrong types are errors naming
//! the file, line and key.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::settings::Overrides;

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
    pub defaults: Overrides,
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
    /// Its settings.
    pub overrides: Overrides,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    out: Option<String>,
    models: Option<String>,
    defaults: Option<Overrides>,
    #[serde(default, rename = "model")]
    entries: Vec<Overrides>,
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

impl Manifest {
    /// Reads and parses the manifest at `path`.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the manifest: {e}", path.display()))?;
        Self::parse(path, &text)
    }

    /// Parses manifest `text` read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, String> {
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| line_col(text, s.start));
            match at {
                Some((line, col)) => format!("{}:{line}:{col}: {}", path.display(), e.message()),
                None => format!("{}: {}", path.display(), e.message()),
            }
        })?;
        let dir = path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let root = raw
            .models
            .as_ref()
            .map_or_else(|| dir.clone(), |m| dir.join(m));
        if let Some(p) = raw.defaults.as_ref().and_then(|d| d.path.as_ref()) {
            let (line, col) = line_col(text, p.span().start);
            return Err(format!(
                "{}:{line}:{col}: `path` belongs in [[model]] entries, not in [defaults]",
                path.display()
            ));
        }
        let mut models = Vec::with_capacity(raw.entries.len());
        for (i, mut m) in raw.entries.into_iter().enumerate() {
            let Some(p) = m.path.take() else {
                return Err(format!(
                    "{}: [[model]] entry {} has no `path`",
                    path.display(),
                    i + 1
                ));
            };
            models.push(ModelEntry {
                line: line_col(text, p.span().start).0,
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
        let e =
            Manifest::parse(Path::new("m.toml"), "[defaults]\nfps = 30\nfsp = 3\n").unwrap_err();
        assert!(e.starts_with("m.toml:3:"), "{e}");
        assert!(e.contains("fsp"), "{e}");
        let e = Manifest::parse(
            Path::new("m.toml"),
            "[[model]]\npath = \"a.glb\"\nfps = \"fast\"\n",
        )
        .unwrap_err();
        assert!(e.starts_with("m.toml:3:"), "{e}");
        let e = Manifest::parse(
            Path::new("m.toml"),
            "[[model]]\npath = \"a.glb\"\n[model.vat]\nformat = \"jpeg\"\n",
        )
        .unwrap_err();
        assert!(e.starts_with("m.toml:4:") && e.contains("jpeg"), "{e}");
    }
}
