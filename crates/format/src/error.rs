//! Errors of the format crate: I/O, invalid data, unsupported versions.

/// Result alias of the format crate.
pub type Result<T, E = FormatError> = std::result::Result<T, E>;

/// What went wrong while encoding or decoding.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// Reading or writing failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The data is damaged or inconsistent.
    #[error("{0}")]
    Invalid(String),
    /// The data uses something this version cannot read.
    #[error("{0}")]
    Unsupported(String),
    /// The values cannot be represented in the requested encoding.
    #[error("{0}")]
    Unrepresentable(String),
}

impl From<exr::error::Error> for FormatError {
    fn from(e: exr::error::Error) -> Self {
        match e {
            exr::error::Error::Io(io) => Self::Io(io),
            exr::error::Error::NotSupported(s) => Self::Unsupported(format!("EXR: {s}")),
            other => Self::Invalid(format!("EXR: {other}")),
        }
    }
}
