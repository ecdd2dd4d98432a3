//! Exit codes of the `rigbake` command.

/// Exit code when every model succeeded (or was skipped with a reason).
pub const EXIT_OK: u8 = 0;
/// Exit code when at least one model failed.
pub const EXIT_FAILED: u8 = 1;
/// Exit code for usage errors (bad arguments).
pub const EXIT_USAGE: u8 = 2;
