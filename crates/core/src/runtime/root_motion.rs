//! Root motion at runtime: where the instance of a clip baked in place
//! stands at some instant (`docs/root-motion.md`).
//!
//! A clip baked with root-motion extraction plays in place; its track
//! holds, per frame, the motion `M = T(x, y, z) * Ry(yaw)` that was taken
//! out, in the scene root's space. At an instant the runtime interpolates
//! the track with the same [`FrameSample`] the textures are read with:
//! between two frames it lerps translation and (unwrapped) yaw; across a
//! loop's wrap, after the last frame, it heads from the last entry to the
//! clip's `end` motion (the motion of one whole cycle), so the instance
//! keeps moving forward while the pose blends back to the first frame. An
//! engine draws the instance at `instance * M * model`, and at every
//! completed loop multiplies its own base transform by `M(end)`.

use glam::{DMat4, DQuat, DVec3, Vec3};

use crate::runtime::RuntimeVertex;
use crate::runtime::state::{ClipInfo, FrameSample};

/// One clip's track as the container and the sidecar record it.
#[derive(Debug, Clone, Copy)]
pub struct RootMotionTrack<'a> {
    /// Per frame of the clip, `[x, y, z, yaw]` (frame 0 is all zero).
    pub frames: &'a [[f64; 4]],
    /// The motion at the clip's end, `[x, y, z, yaw]`.
    pub end: [f64; 4],
}

impl RootMotionTrack<'_> {
    /// The motion `[x, y, z, yaw]` at `sample` of clip `info` (zero when
    /// the track is empty or the sample lies outside the clip).
    pub fn at(&self, info: &ClipInfo, sample: &FrameSample) -> [f64; 4] {
        let local = |row: u32| row.checked_sub(info.start_row).map(|r| r as usize);
        let entry = |row: u32| {
            local(row)
                .and_then(|r| self.frames.get(r))
                .copied()
                .unwrap_or([0.0; 4])
        };
        let from = entry(sample.row);
        if sample.fraction <= 0.0 || sample.next_row == sample.row {
            return from;
        }
        // Across a loop's wrap the next row is the clip's first: head for
        // the end of the cycle instead of back to the start.
        let to = if sample.next_row == info.start_row && sample.row != info.start_row {
            self.end
        } else {
            entry(sample.next_row)
        };
        let f = f64::from(sample.fraction);
        std::array::from_fn(|k| from[k] + (to[k] - from[k]) * f)
    }
}

/// The motion `[x, y, z, yaw]` as a matrix, `T(x, y, z) * Ry(yaw)`.
pub fn motion_matrix(m: [f64; 4]) -> DMat4 {
    DMat4::from_rotation_translation(DQuat::from_rotation_y(m[3]), DVec3::new(m[0], m[1], m[2]))
}

/// A vertex moved by a motion `[x, y, z, yaw]` in `f32`, as the shaders'
/// `root_motion_apply` writes it: turned by `yaw` about +Y, then moved.
pub fn apply(motion: [f32; 4], v: RuntimeVertex) -> RuntimeVertex {
    let (s, c) = motion[3].sin_cos();
    let p = v.position;
    let turn = |d: Vec3| Vec3::new(c * d.x + s * d.z, d.y, c * d.z - s * d.x);
    RuntimeVertex {
        position: turn(p) + Vec3::new(motion[0], motion[1], motion[2]),
        normal: v.normal.map(turn),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::state::PlayMode;
    use crate::timeline::SampleRule;

    fn info() -> ClipInfo {
        // 3 frames at 1 fps over 2.5 s: a loop with a half-frame wrap.
        ClipInfo {
            start_row: 10,
            frames: 3,
            fps: 1.0,
            duration: 2.5,
            looping: true,
            rule: SampleRule::FixedRate,
        }
    }

    #[test]
    fn interpolates_between_frames_and_heads_for_the_end_across_the_wrap() {
        let frames = [[0.0; 4], [1.0, 0.0, 0.0, 0.5], [2.0, 0.0, 0.0, 1.0]];
        let track = RootMotionTrack {
            frames: &frames,
            end: [2.5, 0.0, 0.0, 1.25],
        };
        let i = info();
        let mid = track.at(&i, &i.sample(0.5, PlayMode::Loop));
        assert_eq!(mid, [0.5, 0.0, 0.0, 0.25]);
        // 2.25 s: halfway from the last frame (2 s) to the end (2.5 s).
        let wrap = track.at(&i, &i.sample(2.25, PlayMode::Loop));
        assert!(
            (wrap[0] - 2.25).abs() < 1e-6 && (wrap[3] - 1.125).abs() < 1e-6,
            "{wrap:?}"
        );
        // Played once, the last frame holds.
        assert_eq!(track.at(&i, &i.sample(2.4, PlayMode::Once)), frames[2]);
    }

    #[test]
    fn apply_agrees_with_the_motion_matrix() {
        let m = [0.5f32, 0.0, -2.0, 1.1];
        let v = RuntimeVertex {
            position: Vec3::new(0.3, 1.2, -0.7),
            normal: Some(Vec3::new(0.0, 0.6, 0.8)),
        };
        let got = apply(m, v);
        let want = motion_matrix(m.map(f64::from));
        let p = want.transform_point3(v.position.as_dvec3());
        let n = want.transform_vector3(v.normal.unwrap().as_dvec3());
        assert!(
            (got.position.as_dvec3() - p).length() < 1e-6,
            "{got:?} vs {p}"
        );
        assert!((got.normal.unwrap().as_dvec3() - n).length() < 1e-6);
    }

    #[test]
    fn motion_matrix_turns_then_moves() {
        let m = motion_matrix([1.0, 0.0, 2.0, std::f64::consts::FRAC_PI_2]);
        let p = m.transform_point3(DVec3::X);
        assert!((p - DVec3::new(1.0, 0.0, 1.0)).length() < 1e-12, "{p}");
    }
}
