//! Errors of one model's bake: the stage that failed, what was being done,
//! and the source (a core error, a format error, or I/O with its path).
//!
//! A [`BakeError`] does not name the model file: whoever runs the job knows
//! it and attaches it once, with [`BakeError::in_file`].

use std::fmt;
use std::path::{Path, PathBuf};

use rigbake_format::FormatError;

/// The step of a model's bake that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Computing the bake key (reading external buffers).
    Key,
    /// Importing the model.
    Import,
    /// Choosing the clips and frame times.
    Timeline,
    /// Preparing the output folder and the container file.
    Prepare,
    /// Bone-matrix textures.
    Bones,
    /// Bone-weight channels and the weights mesh.
    Weights,
    /// Anchors, props and the rig record.
    Rig,
    /// Vertex animation textures and the playback mesh.
    Vat,
    /// Writing the container's records.
    Container,
    /// Renaming the outputs into place.
    Commit,
    /// A panic inside the job (a bug).
    Internal,
}

/// What went wrong underneath a [`BakeError`].
#[derive(Debug, thiserror::Error)]
pub enum Source {
    /// The core crate refused the model or a bake (names the glTF object;
    /// boxed to keep results small).
    #[error(transparent)]
    Core(Box<rigbake_core::Error>),
    /// Encoding or writing a file format failed.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// Reading or writing a file failed.
    #[error("{source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A skinned mesh node has no bone texture (an inconsistent bake).
    #[error("nodes[{node}] has no bone texture")]
    MissingBoneTexture {
        /// The node.
        node: usize,
    },
    /// The job panicked; the text is the panic message.
    #[error("internal error (please report it with this file): {0}")]
    Panic(String),
}

impl From<rigbake_core::Error> for Source {
    fn from(e: rigbake_core::Error) -> Self {
        Self::Core(Box::new(e))
    }
}

/// A failure of some step: what was being done (when there is something to
/// add to the source's own words) and the source.
#[derive(Debug)]
pub struct StepError {
    /// What was being done, e.g. "cannot write bones.skin0.exr".
    pub context: Option<String>,
    /// The cause.
    pub source: Source,
}

impl StepError {
    /// A failure with no context beyond the source.
    pub fn bare(source: impl Into<Source>) -> Self {
        Self {
            context: None,
            source: source.into(),
        }
    }

    /// A failure while doing `context`.
    pub fn during(context: impl Into<String>, source: impl Into<Source>) -> Self {
        Self {
            context: Some(context.into()),
            source: source.into(),
        }
    }

    /// An I/O failure on `path` while doing `context`.
    pub fn io(context: impl Into<String>, path: &Path, source: std::io::Error) -> Self {
        Self::during(
            context,
            Source::Io {
                path: path.to_path_buf(),
                source,
            },
        )
    }

    /// An I/O failure on `path` with nothing to add to the I/O error.
    pub fn io_bare(path: &Path, source: std::io::Error) -> Self {
        Self::bare(Source::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Says what was being done, unless the failure already does.
    pub fn or_context(mut self, context: impl Into<String>) -> Self {
        if self.context.is_none() {
            self.context = Some(context.into());
        }
        self
    }

    /// The same failure, in `stage`.
    pub fn at(self, stage: Stage) -> BakeError {
        BakeError {
            stage,
            context: self.context,
            source: self.source,
        }
    }
}

/// Why a model's bake failed.
#[derive(Debug)]
pub struct BakeError {
    /// The step that failed.
    pub stage: Stage,
    /// What was being done, when the source alone does not say it.
    pub context: Option<String>,
    /// The cause.
    pub source: Source,
}

impl BakeError {
    /// A failure in `stage` with no context beyond the source.
    pub fn new(stage: Stage, source: impl Into<Source>) -> Self {
        StepError::bare(source).at(stage)
    }

    /// The message for a user, naming the model `file` once (a core error
    /// that already names a file, such as an external buffer, keeps it).
    pub fn in_file(&self, file: &Path) -> String {
        match (&self.context, &self.source) {
            (None, Source::Core(e)) => (**e).clone().with_file(file).to_string(),
            _ => format!("{}: {self}", file.display()),
        }
    }
}

impl fmt::Display for BakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(context) = &self.context {
            write!(f, "{context}: ")?;
        }
        write!(f, "{}", self.source)
    }
}

impl std::error::Error for BakeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Conversions for `?` inside one stage: `.map_err(at(Stage::Bones))`.
pub fn at<E: Into<Source>>(stage: Stage) -> impl Fn(E) -> BakeError {
    move |e| BakeError::new(stage, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_named_once_in_front() {
        let core = rigbake_core::Error::invalid("skins[0]", "no joints");
        let e = BakeError::new(Stage::Import, core.clone());
        assert_eq!(e.in_file(Path::new("a.glb")), "a.glb: skins[0]: no joints");
        let elsewhere = BakeError::new(Stage::Import, core.with_file(Path::new("a.bin")));
        assert_eq!(
            elsewhere.in_file(Path::new("a.glb")),
            "a.bin: skins[0]: no joints"
        );
        let io = StepError::io(
            "cannot write bones.skin0.exr",
            Path::new("out/bones.skin0.exr"),
            std::io::Error::other("disk full"),
        )
        .at(Stage::Bones);
        assert_eq!(
            io.in_file(Path::new("m.glb")),
            "m.glb: cannot write bones.skin0.exr: disk full"
        );
        assert!(
            matches!(io.source, Source::Io { ref path, .. } if path.ends_with("bones.skin0.exr"))
        );
    }
}
