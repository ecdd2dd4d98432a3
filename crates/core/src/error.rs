//! The one error type of the core crate.
//!
//! Every error names the glTF object it concerns (a JSON path such as
//! `animations[2].channels[5]`) and says what is wrong in plain words; the
//! file is attached by whoever knows it. Never used for control flow.

use std::fmt;
use std::path::{Path, PathBuf};

/// Result alias used throughout the core crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What class of problem an [`Error`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The file could not be read.
    Io,
    /// The bytes are not a well-formed glTF (JSON syntax, GLB framing, schema).
    Malformed,
    /// Well-formed, but uses something rigbake cannot decode (an extension).
    Unsupported,
    /// Well-formed, but the data breaks a rule of glTF or of the bake
    /// (indices out of range, NaN, key times not increasing, ...).
    Invalid,
    /// The input exceeds a documented limit (sizes, counts, depths).
    Limit,
    /// The model has nothing the requested bake applies to (for example no
    /// skinned mesh for a bone-matrix bake).
    NothingToBake,
}

/// An error with the file, the glTF object and the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    /// What class of problem this is.
    pub kind: ErrorKind,
    /// The input file, when known.
    pub file: Option<PathBuf>,
    /// The glTF object path (`meshes[3].primitives[0].attributes.WEIGHTS_0`),
    /// empty when the error concerns the whole file.
    pub object: String,
    /// What is wrong, in plain words.
    pub message: String,
    /// What the user can do about it, when there is something to say.
    pub hint: Option<String>,
}

impl Error {
    /// A new error about `object`.
    pub fn new(kind: ErrorKind, object: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind,
            file: None,
            object: object.into(),
            message: message.into(),
            hint: None,
        }
    }

    /// Shorthand for an [`ErrorKind::Invalid`] error.
    pub fn invalid(object: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, object, message)
    }

    /// Shorthand for an [`ErrorKind::Limit`] error.
    pub fn limit(object: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Limit, object, message)
    }

    /// Attaches the input file (keeps an existing one).
    pub fn with_file(mut self, file: &Path) -> Self {
        if self.file.is_none() {
            self.file = Some(file.to_path_buf());
        }
        self
    }

    /// Attaches advice for the user.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        if !self.object.is_empty() {
            write!(f, "{}: ", self.object)?;
        }
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, " ({hint})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_object_reason_and_hint() {
        let e = Error::invalid("animations[2].channels[5]", "key times are not increasing")
            .with_file(Path::new("a/b.glb"))
            .with_hint("re-export the clip");
        assert_eq!(
            e.to_string(),
            "a/b.glb: animations[2].channels[5]: key times are not increasing (re-export the clip)"
        );
        let bare = Error::new(ErrorKind::Io, "", "cannot read");
        assert_eq!(bare.to_string(), "cannot read");
    }
}
