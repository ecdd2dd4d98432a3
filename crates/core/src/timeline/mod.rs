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
pub mod root_motion;

pub use plan::{
    ClipRequest, ClipSource, ClipSpec, FRAME_COUNT_EPSILON, MAX_NODE_EVALUATIONS, MAX_ROWS,
    SampleRule, Sampling, Timeline, TimelineClip, check_evaluations, frame_count, frame_time,
};

use crate::error::Result;
use crate::model::Model;
use root_motion::{ClipTrack, RootMotionMode, RootMotionRequest};

impl Timeline {
    /// Every animation of `model`, in glTF order, whole; a single one-frame
    /// `rest` clip when the model has none. Loop flags are detected.
    pub fn all_clips(model: &Model, sampling: Sampling) -> Result<Self> {
        Self::all_clips_with(model, sampling, &RootMotionRequest::default())
    }

    /// [`Timeline::all_clips`] with root motion treated as `root` says.
    pub fn all_clips_with(
        model: &Model,
        sampling: Sampling,
        root: &RootMotionRequest,
    ) -> Result<Self> {
        let mut timeline = Self::plan_all(model, sampling)?;
        let modes = vec![root.mode; timeline.clips.len()];
        timeline.plan_root_motion(model, root, &modes)?;
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
        Self::build_with(model, sampling, specs, &RootMotionRequest::default())
    }

    /// [`Timeline::build`] with root motion treated as `root` says (each
    /// spec may set its own mode).
    pub fn build_with(
        model: &Model,
        sampling: Sampling,
        specs: &[ClipSpec],
        root: &RootMotionRequest,
    ) -> Result<Self> {
        let mut timeline = Self::plan(model, sampling, specs)?;
        let modes: Vec<RootMotionMode> = specs
            .iter()
            .map(|s| s.root_motion.unwrap_or(root.mode))
            .collect();
        timeline.plan_root_motion(model, root, &modes)?;
        loops::detect_loops(&mut timeline, model);
        for (clip, spec) in timeline.clips.iter_mut().zip(specs) {
            if let Some(looping) = spec.looping {
                clip.looping = looping;
            }
        }
        Ok(timeline)
    }
}

impl Timeline {
    /// Plans root-motion extraction for clips with the given modes (before
    /// the loop pass, so loops are judged in place).
    fn plan_root_motion(
        &mut self,
        model: &Model,
        root: &RootMotionRequest,
        modes: &[RootMotionMode],
    ) -> Result<()> {
        let planned = root_motion::plan(model, root, modes, |ev, c| {
            self.evaluate_source_time(ev, c, 0.0);
        })?;
        self.root_motion = planned;
        Ok(())
    }

    /// The root-motion track of every clip (an empty one for clips that
    /// keep their motion); `None` when no clip extracts.
    pub fn root_motion_track(&self, model: &Model) -> Option<Vec<ClipTrack>> {
        let plan = self.root_motion.as_ref()?;
        let times: Vec<Vec<f64>> = self
            .clips
            .iter()
            .map(|c| {
                (0..c.frames)
                    .map(|f| c.frame_time(f, self.sampling))
                    .collect()
            })
            .collect();
        let ends: Vec<f64> = self.clips.iter().map(|c| c.duration).collect();
        Some(root_motion::track(
            model,
            plan,
            &times,
            &ends,
            |ev, c, t| {
                self.evaluate_source_time(ev, c, t);
            },
        ))
    }
}
