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
use crate::runtime::state::{AnimationState, ClipInfo, FrameSample, PlayMode};

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

/// `a` then `b`: the motion `M(a) * M(b)` as `[x, y, z, yaw]` (the form is
/// closed under products: `T(a) Ry(a) T(b) Ry(b) = T(a + Ry(a) b) Ry(a + b)`).
pub fn compose(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let (s, c) = a[3].sin_cos();
    [
        a[0] + c * b[0] + s * b[2],
        a[1] + b[1],
        a[2] + c * b[2] - s * b[0],
        a[3] + b[3],
    ]
}

/// The inverse motion: `M(inverse(a)) = M(a)^-1`.
pub fn inverse(a: [f64; 4]) -> [f64; 4] {
    let (s, c) = (-a[3]).sin_cos();
    [-(c * a[0] + s * a[2]), -a[1], -(c * a[2] - s * a[0]), -a[3]]
}

/// Loops counted at most per update by [`motion_during`]: a clip far
/// shorter than the step (or a huge speed) moves by this many cycles.
pub const MAX_LOOPS_PER_UPDATE: i64 = 1024;

/// The motion an instance makes during one [`AnimationState::update`] of
/// `dt` seconds from `before` to `after`, to multiply onto its base
/// transform (step 4 of docs/root-motion.md done continuously): per playing
/// clip, `M(t0)^-1 * M(end)^k * M(t1)` with `k` the loops it completed
/// (negative backwards), then the clips' motions weighted by their weights
/// in `after`. `track` gives a clip's track (None: the clip keeps its
/// motion in the textures). A clip that stopped playing during the update
/// (the end of a crossfade) adds nothing.
pub fn motion_during<'a>(
    track: impl Fn(&ClipInfo) -> Option<RootMotionTrack<'a>>,
    before: &AnimationState,
    after: &AnimationState,
    dt: f64,
) -> [f64; 4] {
    let dt = if dt.is_finite() { dt } else { 0.0 };
    let mut total = [0.0; 4];
    for (b, a) in before.layers().zip(after.layers()) {
        if b.clip != a.clip || a.weight <= 0.0 {
            continue;
        }
        let Some(t) = track(&a.clip) else {
            continue;
        };
        let at = |time: f64| t.at(&a.clip, &a.clip.sample(time, a.mode));
        let length = a.clip.length();
        let loops = if a.mode == PlayMode::Loop && length > 0.0 {
            let raw = ((b.time + dt * a.speed) / length).floor();
            if raw.is_finite() {
                (raw as i64).clamp(-MAX_LOOPS_PER_UPDATE, MAX_LOOPS_PER_UPDATE)
            } else {
                0
            }
        } else {
            0
        };
        let cycle = if loops >= 0 { t.end } else { inverse(t.end) };
        let mut m = inverse(at(b.time));
        for _ in 0..loops.unsigned_abs() {
            m = compose(m, cycle);
        }
        let m = compose(m, at(a.time));
        for k in 0..4 {
            total[k] += a.weight * m[k];
        }
    }
    total
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
    fn compose_and_inverse_agree_with_the_matrices() {
        let (a, b) = ([0.5, 0.1, -2.0, 1.1], [-1.0, 0.0, 3.0, -0.4]);
        let m = motion_matrix(compose(a, b));
        let want = motion_matrix(a) * motion_matrix(b);
        assert!(m.abs_diff_eq(want, 1e-12), "{m} vs {want}");
        let i = motion_matrix(inverse(a)) * motion_matrix(a);
        assert!(i.abs_diff_eq(DMat4::IDENTITY, 1e-12), "{i}");
    }

    #[test]
    fn motion_during_an_update_adds_up_across_loops() {
        // A straight walk: 1 unit a second along +X, 2.5 s a cycle.
        let frames = [[0.0; 4], [1.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]];
        let end = [2.5, 0.0, 0.0, 0.0];
        let i = info();
        let track = |c: &ClipInfo| {
            (c.start_row == 10).then_some(RootMotionTrack {
                frames: &frames,
                end,
            })
        };
        let mut state = AnimationState::new();
        state.play(i, PlayMode::Loop, 1.0);
        state.seek(0.5);
        // 0.5 s to 5.5 s: two whole cycles, 5 units, in one update.
        let before = state;
        state.update(5.0);
        let m = motion_during(track, &before, &state, 5.0);
        assert!((m[0] - 5.0).abs() < 1e-9 && m[3] == 0.0, "{m:?}");
        // Backwards by 1 s from 0.5 s: across the wrap to 2.0 s.
        let mut back = AnimationState::new();
        back.play(i, PlayMode::Loop, -1.0);
        back.seek(0.5);
        let before = back;
        back.update(1.0);
        let m = motion_during(track, &before, &back, 1.0);
        assert!((m[0] + 1.0).abs() < 1e-9, "{m:?}");
        // A clip without a track does not move.
        let none = motion_during(|_: &ClipInfo| None, &before, &back, 1.0);
        assert_eq!(none, [0.0; 4]);
    }

    #[test]
    fn motion_matrix_turns_then_moves() {
        let m = motion_matrix([1.0, 0.0, 2.0, std::f64::consts::FRAC_PI_2]);
        let p = m.transform_point3(DVec3::X);
        assert!((p - DVec3::new(1.0, 0.0, 1.0)).length() < 1e-12, "{p}");
    }
}
