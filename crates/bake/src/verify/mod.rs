//! The verification measurement: a bake played through the runtime
//! reference (either path it holds) compared with a direct evaluation of its
//! source, at frame times and at mid-frame times, and the verdict of each
//! clip against tolerances. Semantics and tolerances: `docs/runtime.md`.
//!
//! Modules, each using only those listed before it: `stats` (the figures
//! and the verdict), `play` (one instant: the paths played and compared
//! vertex by vertex), `measure` (every instant, in parallel, streamed
//! windows of VAT rows), `records` (recorded numbers recomputed) and
//! `report` (what `rigbake verify` prints).

mod measure;
mod play;
pub mod records;
pub mod report;
mod stats;

pub use measure::{WINDOW_BYTES, measure, measure_windowed};
pub use play::{Path, Subject};
pub use stats::{
    ABSURD_BOUND_FLOOR, ClipStats, DEFAULT_RELATIVE_TOLERANCE, Output, OutputStats, Stats,
    Tolerances, judge, max_nan,
};
