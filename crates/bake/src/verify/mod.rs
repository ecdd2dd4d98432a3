//! The verification measurement: a bake played through the runtime
//! reference (either path it holds) compared with a direct evaluation of its
//! source, at frame times and at mid-frame times, and the verdict of each
//! clip against tolerances. Semantics and tolerances: `docs/runtime.md`.
//!
//! Modules, each using only those listed before it: `stats` (the figures
//! and the verdict), `play` (one instant: the paths played and compared
//! vertex by vertex), `measure` (every instant, in parallel, streamed
//! windows of VAT rows) and `records` (recorded numbers recomputed). What
//! `rigbake verify` prints of them is [`crate::verify_report`]'s.

mod measure;
mod play;
pub mod records;
mod stats;

pub use measure::{WINDOW_BYTES, measure, measure_windowed};
pub use play::{Path, Subject, angle_degrees, encoded_matrix_bound};
pub use stats::{
    ABSURD_BOUND_FLOOR, ClipStats, DEFAULT_RELATIVE_TOLERANCE, Output, OutputStats, Stats, Tally,
    Tolerances, judge, max_nan,
};
