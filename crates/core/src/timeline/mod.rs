//! The timeline: which clip and time every baked row holds, made in two
//! passes over plain data:
//!
//! - [`plan`]: resolves what to bake against the model and stacks the clips,
//!   one row per sampled frame (SPEC section 2); loop flags start `false`;
//! - [`loops`]: the loop pass over the planned timeline, which evaluates the
//!   poses at each clip's start and end and sets its loop flag.
//!
//! [`Timeline::all_clips`], [`Timeline::named_clips`] and
//! [`Timeline::build`] run both, then apply the user's loop overrides.

pub mod loops;
pub mod plan;

pub use plan::{
    ClipRequest, ClipSource, ClipSpec, FRAME_COUNT_EPSILON, MAX_NODE_EVALUATIONS, MAX_ROWS,
    SampleRule, Sampling, Timeline, TimelineClip, check_evaluations, frame_count, frame_time,
};

use crate::error::Result;
use crate::model::Model;

impl Timeline {
    /// Every animation of `model`, in glTF order, whole; a single one-frame
    /// `rest` clip when the model has none. Loop flags are detected.
    pub fn all_clips(model: &Model, sampling: Sampling) -> Result<Self> {
        let mut timeline = Self::plan_all(model, sampling)?;
        // Loop detection evaluates at most five poses per clip of two or
        // more rows and two for a clip of one row: at most 2.5 poses per
        // row, within a small multiple of the bake's own work that this
        // limit bounds.
        check_evaluations(timeline.rows, model)?;
        loops::detect_loops(&mut timeline, model);
        Ok(timeline)
    }

    /// The animations named in `names`, in that order (every animation when
    /// `names` is empty), with loop flags detected. Unknown names are errors
    /// listing the clips the model has.
    pub fn named_clips(model: &Model, sampling: Sampling, names: &[String]) -> Result<Self> {
        if names.is_empty() {
            return Self::all_clips(model, sampling);
        }
        let specs: Vec<ClipSpec> = names.iter().map(|n| ClipSpec::whole(n)).collect();
        Self::build(model, sampling, &specs)
    }

    /// The clips described by `specs`, in order ([`Timeline::plan`]), with
    /// loop flags detected unless overridden.
    pub fn build(model: &Model, sampling: Sampling, specs: &[ClipSpec]) -> Result<Self> {
        let mut timeline = Self::plan(model, sampling, specs)?;
        loops::detect_loops(&mut timeline, model);
        for (clip, spec) in timeline.clips.iter_mut().zip(specs) {
            if let Some(looping) = spec.looping {
                clip.looping = looping;
            }
        }
        Ok(timeline)
    }
}
