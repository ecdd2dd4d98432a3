//! Root motion: baking travelling clips in place, with the travel kept as a
//! separate track (issue 18; `docs/root-motion.md`).
//!
//! The **motion root** is the skeleton's root joint (the first joint of the
//! first skin with no joint above it) or a node the user names. For a clip
//! baked with [`RootMotionMode::Extract`], every sampled pose is corrected
//! so the root's horizontal position (glTF's ground plane, XZ of the scene
//! root) stays where it was at the clip's first frame; with
//! [`RootMotionMode::ExtractYaw`] its yaw (the twist of its rotation about
//! +Y) stays too. The correction is a scene-space rigid transform `C(t)`
//! applied to the globals of the root and everything under it, so bone
//! textures, VAT and anchors all see the same in-place pose:
//!
//! ```text
//! C(t) = T(p0) * Ry(-dyaw) * T(-p(t))      p: the root's horizontal position
//! M(t) = C(t)^-1 = T(m) * Ry(dyaw)         m = p(t) - Ry(dyaw) * p0
//! ```
//!
//! The **track** records, per baked row, `M(t)` as a translation `m` (y is
//! always 0) and a yaw `dyaw` (radians, unwrapped along the clip so a full
//! turn reads 2π): an engine moves the instance by `M(t)`, applied outside
//! the model's own node transforms, and gets back exactly the source
//! motion. Rows of clips that keep their motion hold the identity.

use glam::{DMat4, DQuat, DVec3};

pub use rigbake_types::RootMotionMode;

use crate::error::{Error, Result};
use crate::eval::evaluate::Evaluator;
use crate::model::Model;

/// How a bake treats root motion: the default mode, and the motion root.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct RootMotionRequest {
    /// Mode of every clip that does not set its own.
    pub mode: RootMotionMode,
    /// The motion root by node name (default: the skeleton's root joint).
    pub node: Option<String>,
}

/// Where a clip's root is, as the extraction measures it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RootPlacement {
    /// Horizontal position in the scene root's space (`y` is 0).
    pub position: DVec3,
    /// Yaw in radians, in `(-π, π]`: the twist of the root's global rotation
    /// about +Y (`2 atan2(q.y, q.w)`); 0 when the rotation is degenerate.
    pub yaw: f64,
}

impl RootPlacement {
    /// The placement read from the root's global matrix.
    pub fn of(global: &DMat4) -> Self {
        let p = global.w_axis.truncate();
        Self {
            position: DVec3::new(p.x, 0.0, p.z),
            yaw: yaw_of(global),
        }
    }
}

/// The yaw of a global matrix: its rotation's twist about +Y, in `(-π, π]`.
fn yaw_of(m: &DMat4) -> f64 {
    let (_, rotation, _) = m.to_scale_rotation_translation();
    if !rotation.is_finite() || (rotation.y == 0.0 && rotation.w == 0.0) {
        return 0.0;
    }
    wrap(2.0 * rotation.y.atan2(rotation.w))
}

/// An angle wrapped into `(-π, π]`.
fn wrap(a: f64) -> f64 {
    let tau = std::f64::consts::TAU;
    let w = a - tau * (a / tau).round();
    if w <= -std::f64::consts::PI {
        w + tau
    } else {
        w
    }
}

/// One clip's extraction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipRootMotion {
    /// What the clip does with its root motion.
    pub mode: RootMotionMode,
    /// The root at the clip's first frame (what in-place frames keep).
    pub start: RootPlacement,
}

/// The motion of one baked row: `M = T(translation) * Ry(yaw)` in the
/// scene root's space.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RootMotionSample {
    /// Horizontal translation (`y` is 0).
    pub translation: DVec3,
    /// Yaw in radians since the clip's first frame (unwrapped).
    pub yaw: f64,
}

impl RootMotionSample {
    /// The motion as a matrix, `T(translation) * Ry(yaw)`.
    pub fn matrix(&self) -> DMat4 {
        DMat4::from_rotation_translation(DQuat::from_rotation_y(self.yaw), self.translation)
    }
}

/// The extraction planned for a timeline: the motion root, the nodes that
/// follow it, and each clip's mode and start.
#[derive(Debug, Clone, PartialEq)]
pub struct RootMotionPlan {
    /// The motion root node.
    pub node: usize,
    /// The root and every node under it, parents first.
    subtree: Vec<usize>,
    /// One entry per timeline clip, in order.
    pub clips: Vec<ClipRootMotion>,
}

impl RootMotionPlan {
    /// Whether any clip extracts.
    pub fn extracts(&self) -> bool {
        self.clips.iter().any(|c| c.mode.extracts())
    }

    /// The correction `C` of clip `c` for a pose whose root global is
    /// `root`; `None` when the clip keeps its motion.
    pub fn correction(&self, c: usize, root: &DMat4) -> Option<DMat4> {
        let clip = self.clips.get(c)?;
        let m = self.motion(clip, &RootPlacement::of(root))?;
        Some(m.matrix().inverse())
    }

    /// The motion of a clip whose root is at `now` (yaw wrapped into
    /// `(-π, π]`); `None` when the clip keeps its motion.
    fn motion(&self, clip: &ClipRootMotion, now: &RootPlacement) -> Option<RootMotionSample> {
        let yaw = match clip.mode {
            RootMotionMode::Keep => return None,
            RootMotionMode::Extract => 0.0,
            RootMotionMode::ExtractYaw => wrap(now.yaw - clip.start.yaw),
        };
        let turn = DQuat::from_rotation_y(yaw);
        Some(RootMotionSample {
            translation: now.position - turn * clip.start.position,
            yaw,
        })
    }

    /// Applies clip `c`'s correction to `globals` (the root's subtree only).
    pub fn apply(&self, c: usize, globals: &mut [DMat4]) {
        let Some(root) = globals.get(self.node) else {
            return;
        };
        let Some(correction) = self.correction(c, root) else {
            return;
        };
        for &n in &self.subtree {
            globals[n] = correction * globals[n];
        }
    }
}

/// Finds the motion root: the node named `name`, else the first joint of
/// the first skin with joints that has no joint of its skin above it.
pub fn find_root(model: &Model, name: Option<&str>) -> Result<usize> {
    if let Some(name) = name {
        return crate::node_lookup::NodeNames::new(&model.nodes)
            .resolve(name, "the motion root")
            .map_err(|mut e| {
                e.object = "root motion".to_owned();
                e
            });
    }
    model
        .skins
        .iter()
        .find_map(|s| {
            let parents = s.joint_parents(&model.nodes);
            parents
                .iter()
                .position(Option::is_none)
                .map(|j| s.joints[j])
        })
        .ok_or_else(|| {
            Error::invalid(
                "root motion",
                "the model has no skin, so it has no skeleton root to extract motion from",
            )
            .with_hint("name the node that carries the motion with --root-node")
        })
}

/// The error for the first joint that carries vertex weight but is not under
/// the motion root `root` (`inside` marks its subtree): the bake removes the
/// root's motion from that subtree only, while the track moves the whole
/// mesh, so such a joint's vertices would travel twice (found by fuzzing: a
/// skin whose second joint was a root of its own baked off by 1.6 units).
/// Joints without weight (IK targets, sockets beside the hips) may sit
/// anywhere.
fn weighted_joint_outside(model: &Model, inside: &[bool], root: usize) -> Option<Error> {
    for node in &model.nodes {
        let (Some(mesh), Some(skin)) = (node.mesh, node.skin) else {
            continue;
        };
        let joints = &model.skins[skin].joints;
        for prim in &model.meshes[mesh].primitives {
            let Some(inf) = &prim.influences else {
                continue;
            };
            let outside = inf.joints.iter().zip(&inf.weights).find_map(|(&j, &w)| {
                let joint = *joints.get(usize::from(j))?;
                (w > 0.0 && !inside[joint]).then_some(joint)
            });
            if let Some(joint) = outside {
                return Some(
                    Error::invalid(
                        format!("nodes[{joint}] `{}`", model.nodes[joint].name),
                        format!(
                            "this joint of the skin of `{}` carries vertex weight but is not under the motion root `{}`: the bake would remove the root's motion from the root's joints only, while the track moves the whole mesh",
                            node.name, model.nodes[root].name
                        ),
                    )
                    .with_hint("name a node above every weighted joint as the motion root with --root-node, or keep the motion"),
                );
            }
        }
    }
    None
}

/// Plans the extraction of `modes` (one per timeline clip; none extracting
/// gives `None`): finds the root, checks that no skinned mesh moves with
/// it, and measures each extracting clip's start with `first_frame`, which
/// must evaluate a clip's first frame into the evaluator without any
/// extraction.
pub fn plan(
    model: &Model,
    request: &RootMotionRequest,
    modes: &[RootMotionMode],
    mut first_frame: impl FnMut(&mut Evaluator<'_>, usize),
) -> Result<Option<RootMotionPlan>> {
    if !modes.iter().any(|m| m.extracts()) {
        return Ok(None);
    }
    let node = find_root(model, request.node.as_deref())?;
    let mut inside = vec![false; model.nodes.len()];
    let mut subtree = Vec::new();
    for &n in &model.topological_order {
        let under = n == node || model.nodes[n].parent.is_some_and(|p| inside[p]);
        if under {
            inside[n] = true;
            subtree.push(n);
        }
    }
    if let Some(mesh_node) = model
        .nodes
        .iter()
        .enumerate()
        .find(|(n, node)| inside[*n] && node.mesh.is_some() && node.skin.is_some())
    {
        return Err(Error::invalid(
            format!("nodes[{}] `{}`", mesh_node.0, mesh_node.1.name),
            format!(
                "this skinned mesh node is under the motion root `{}`, so its vertices move with the root in their own space and there is no motion to extract",
                model.nodes[node].name
            ),
        )
        .with_hint("name a motion root above the skeleton's root joint but not above the mesh with --root-node, or keep the motion"));
    }
    if let Some(error) = weighted_joint_outside(model, &inside, node) {
        return Err(error);
    }
    let mut ev = Evaluator::new(model);
    let clips = modes
        .iter()
        .enumerate()
        .map(|(c, &mode)| {
            let start = if mode.extracts() {
                first_frame(&mut ev, c);
                RootPlacement::of(&ev.globals[node])
            } else {
                RootPlacement::default()
            };
            ClipRootMotion { mode, start }
        })
        .collect();
    Ok(Some(RootMotionPlan {
        node,
        subtree,
        clips,
    }))
}

/// The motion taken out of one clip: per frame, and at the clip's end.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClipTrack {
    /// One sample per frame (empty for a clip that keeps its motion).
    pub frames: Vec<RootMotionSample>,
    /// The motion at the clip's end time (its duration): what one full
    /// play of the clip moves the instance by, and where the track heads
    /// across a loop's wrap after the last frame.
    pub end: RootMotionSample,
}

/// The track of every clip, measured from the source poses that
/// `source_time(ev, c, t)` evaluates (without extraction) at each frame
/// time `frame_times[c]` and at each clip's end `ends[c]`; yaws unwrapped
/// along each clip, so a clip turning past π reads on.
pub fn track(
    model: &Model,
    plan: &RootMotionPlan,
    frame_times: &[Vec<f64>],
    ends: &[f64],
    mut source_time: impl FnMut(&mut Evaluator<'_>, usize, f64),
) -> Vec<ClipTrack> {
    let mut ev = Evaluator::new(model);
    let mut out = Vec::with_capacity(frame_times.len());
    for (c, (times, clip)) in frame_times.iter().zip(&plan.clips).enumerate() {
        if !clip.mode.extracts() {
            out.push(ClipTrack::default());
            continue;
        }
        let mut previous = 0.0;
        let mut at = |t: f64, first: bool, previous: &mut f64| {
            source_time(&mut ev, c, t);
            let now = RootPlacement::of(&ev.globals[plan.node]);
            let mut sample = plan.motion(clip, &now).unwrap_or_default();
            if !first {
                sample.yaw = *previous + wrap(sample.yaw - *previous);
            }
            *previous = sample.yaw;
            sample
        };
        let frames: Vec<RootMotionSample> = times
            .iter()
            .enumerate()
            .map(|(i, &t)| at(t, i == 0, &mut previous))
            .collect();
        let end = at(
            ends.get(c).copied().unwrap_or(0.0),
            frames.is_empty(),
            &mut previous,
        );
        out.push(ClipTrack { frames, end });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_angles_in_the_half_open_interval() {
        use std::f64::consts::PI;
        assert_eq!(wrap(PI), PI);
        assert!((wrap(-PI) - PI).abs() < 1e-15);
        assert!((wrap(3.0 * PI / 2.0) + PI / 2.0).abs() < 1e-12);
        assert!((wrap(0.25) - 0.25).abs() < 1e-15);
    }

    #[test]
    fn yaw_reads_the_twist_about_y_under_a_tilt() {
        // Ry(0.7) * Rx(-π/2): a Z-up armature turned 0.7 rad about +Y.
        let r = DQuat::from_rotation_y(0.7) * DQuat::from_rotation_x(-std::f64::consts::FRAC_PI_2);
        let m = DMat4::from_scale_rotation_translation(
            DVec3::splat(2.0),
            r,
            DVec3::new(1.0, 5.0, -3.0),
        );
        let p = RootPlacement::of(&m);
        assert!((p.yaw - 0.7).abs() < 1e-12, "{}", p.yaw);
        assert_eq!(p.position, DVec3::new(1.0, 0.0, -3.0));
    }

    #[test]
    fn motion_times_correction_is_identity_and_correction_keeps_the_start() {
        let plan = RootMotionPlan {
            node: 0,
            subtree: vec![0],
            clips: vec![ClipRootMotion {
                mode: RootMotionMode::ExtractYaw,
                start: RootPlacement {
                    position: DVec3::new(0.5, 0.0, 0.25),
                    yaw: 0.3,
                },
            }],
        };
        let root = DMat4::from_rotation_translation(
            DQuat::from_rotation_y(1.2),
            DVec3::new(2.0, 0.9, -1.0),
        );
        let c = plan.correction(0, &root).unwrap();
        let fixed = RootPlacement::of(&(c * root));
        assert!((fixed.position - DVec3::new(0.5, 0.0, 0.25)).length() < 1e-12);
        assert!((fixed.yaw - 0.3).abs() < 1e-12);
        // Height is untouched.
        assert!(((c * root).w_axis.y - 0.9).abs() < 1e-12);
    }
}
