//! Evaluation: a model's pose at a time, from keyframes to skin matrices.
//!
//! ```text
//! interpolate  Channel + time   -> one keyed value (glTF 2.0 rules)
//! sample       Clip + time      -> LocalPose (per-node TRS, morph weights)
//! pose         LocalPose        -> global matrices, parents first
//! skin         globals          -> skin matrices; linear blend skinning
//! evaluate     Evaluator        -> the above with buffers reused per worker
//! ```
//!
//! Imports run one way: `evaluate` uses `pose`, `sample` and `interpolate`;
//! `pose` uses `sample` and `skin`'s affine product; `sample` uses
//! `interpolate`. Nothing here knows about timelines, bakes or the runtime.

pub mod evaluate;
pub mod interpolate;
pub mod pose;
pub mod sample;
pub mod skin;
