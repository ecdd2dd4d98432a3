//! Exit codes of the `rigbake` command, and the one way a command fails:
//! it returns a [`Failure`], and [`crate::run`] prints it, once.

use rigbake::playback::LoadError;

use crate::error::UsageError;

/// Exit code when every model succeeded (or was skipped with a reason).
pub const EXIT_OK: u8 = 0;
/// Exit code when at least one model failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code for usage errors (bad arguments).
pub const EXIT_USAGE: u8 = 2;

/// Why a command stopped before its report: printed by [`crate::run`] as
/// `error: <message>`, which exits with its code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Bad arguments, or an input that is not there (exit code 2).
    Usage(String),
    /// A damaged, unreadable or unwritable file (exit code 1).
    Failed(String),
}

impl Failure {
    /// The exit code.
    pub fn code(&self) -> u8 {
        match self {
            Self::Usage(_) => EXIT_USAGE,
            Self::Failed(_) => EXIT_FAILED,
        }
    }

    /// What is printed after `error: `.
    pub fn message(&self) -> &str {
        match self {
            Self::Usage(m) | Self::Failed(m) => m,
        }
    }
}

impl From<UsageError> for Failure {
    fn from(e: UsageError) -> Self {
        Self::Usage(e.to_string())
    }
}

impl From<LoadError> for Failure {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::NotFound(m) => Self::Usage(m),
            LoadError::Damaged(m) => Self::Failed(m),
        }
    }
}

/// What a command returns: its exit code once it has reported (0, or 1 for
/// a failed verdict or model), or why it stopped.
pub type Outcome = Result<u8, Failure>;
