//! CPU reference of anchor playback (SPEC section 8): how an engine places
//! a prop on a socket between two baked rows. The anchor tracks hold, per
//! timeline row and per socket, the socket's model-space 4x4 matrix column
//! by column (the `mat4` layout, `formats/rig.md`); a sample takes the rows
//! and fraction the animation state gives a shader ([`ClipInfo::sample`])
//! and interpolates the two matrices after decomposing them: translation
//! and scale lerp, rotation slerp on the shortest path.

use glam::{DMat4, Mat4};

use super::state::{AnimationState, ClipInfo, PlayMode};
use crate::eval::interpolate::slerp;
use crate::layout::MatrixLayout;

/// Anchor tracks as the runtime reads them: plain floats, as stored in a
/// bake's anchor section.
#[derive(Debug, Clone, Copy)]
pub struct AnchorTrackView<'a> {
    /// Sockets per row.
    pub anchors: usize,
    /// Per row, per socket, 16 floats: the matrix column by column.
    pub data: &'a [f32],
}

impl AnchorTrackView<'_> {
    /// The matrix of socket `anchor` at `row`; zero outside the tracks, as
    /// the texture paths read out-of-range texels.
    pub fn matrix(&self, row: usize, anchor: usize) -> Mat4 {
        if anchor >= self.anchors {
            return Mat4::ZERO;
        }
        let at = row
            .checked_mul(self.anchors)
            .and_then(|i| i.checked_add(anchor))
            .and_then(|i| i.checked_mul(16));
        match at.and_then(|at| self.data.get(at..at.checked_add(16)?)) {
            Some(floats) => MatrixLayout::Mat4.decode(floats),
            None => Mat4::ZERO,
        }
    }

    /// The transform of `anchor` at time `t` of `clip` played in `mode`,
    /// with the runtime's time mapping ([`ClipInfo::sample`]: the same rows
    /// and fraction a shader gets), interpolated between the two rows:
    /// translation and scale lerp, rotation slerp (on the shortest path),
    /// after decomposing both matrices.
    pub fn sample(&self, anchor: usize, clip: &ClipInfo, t: f64, mode: PlayMode) -> DMat4 {
        let at = clip.sample(t, mode);
        let (r0, r1, u) = (
            at.row as usize,
            at.next_row as usize,
            f64::from(at.fraction),
        );
        let (s0, q0, t0) = self
            .matrix(r0, anchor)
            .as_dmat4()
            .to_scale_rotation_translation();
        let (s1, q1, t1) = self
            .matrix(r1, anchor)
            .as_dmat4()
            .to_scale_rotation_translation();
        let q = slerp(q0.normalize(), q1.normalize(), u);
        DMat4::from_scale_rotation_translation(s0.lerp(s1, u), q, t0.lerp(t1, u))
    }

    /// The transform of `anchor` for an instance in `state`: each playing
    /// clip sampled at its own time ([`AnchorTrackView::sample`]), then
    /// blended by the clips' weights as the textures blend them:
    /// translation and scale weighted, rotation slerped toward each further
    /// clip by its share of the weight so far. `None` when nothing plays.
    pub fn sample_state(&self, anchor: usize, state: &AnimationState) -> Option<DMat4> {
        let mut blended: Option<(glam::DVec3, glam::DQuat, glam::DVec3, f64)> = None;
        for layer in state.layers().filter(|l| l.weight > 0.0) {
            let (s, q, t) = self
                .sample(anchor, &layer.clip, layer.time, layer.mode)
                .to_scale_rotation_translation();
            let w = layer.weight;
            blended = Some(match blended {
                None => (s * w, q, t * w, w),
                Some((sa, qa, ta, wa)) => {
                    (sa + s * w, slerp(qa, q, w / (wa + w)), ta + t * w, wa + w)
                }
            });
        }
        let (s, q, t, w) = blended?;
        Some(DMat4::from_scale_rotation_translation(s / w, q, t / w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DQuat, DVec3};

    /// One anchor's track of these rows, as stored.
    fn tracks_of(rows: &[DMat4]) -> Vec<f32> {
        let mut data = Vec::new();
        for m in rows {
            let mut px = [0f32; 16];
            MatrixLayout::Mat4.encode(m, &mut px);
            data.extend(px);
        }
        data
    }

    #[test]
    fn sampling_interpolates_rotation_translation_and_scale() {
        let m0 = DMat4::from_scale_rotation_translation(DVec3::ONE, DQuat::IDENTITY, DVec3::ZERO);
        let m1 = DMat4::from_scale_rotation_translation(
            DVec3::splat(3.0),
            DQuat::from_rotation_z(1.0),
            DVec3::new(2.0, 0.0, 0.0),
        );
        let data = tracks_of(&[m0, m1]);
        let tracks = AnchorTrackView {
            anchors: 1,
            data: &data,
        };
        let clip = ClipInfo {
            start_row: 0,
            frames: 2,
            fps: 1.0,
            duration: 1.0,
            looping: false,
            rule: crate::timeline::SampleRule::FixedRate,
        };
        let (s, q, t) = tracks
            .sample(0, &clip, 0.5, PlayMode::Once)
            .to_scale_rotation_translation();
        assert!((t - DVec3::new(1.0, 0.0, 0.0)).length() < 1e-6);
        assert!((s - DVec3::splat(2.0)).length() < 1e-6);
        assert!((q.angle_between(DQuat::IDENTITY) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn a_state_samples_its_clip_and_blends_a_crossfade_by_weight() {
        // Two one-frame clips holding two poses: rows 0 and 1.
        let m0 = DMat4::from_translation(DVec3::new(0.0, 0.0, 0.0));
        let m1 = DMat4::from_scale_rotation_translation(
            DVec3::ONE,
            DQuat::from_rotation_y(1.0),
            DVec3::new(4.0, 0.0, 0.0),
        );
        let data = tracks_of(&[m0, m1]);
        let tracks = AnchorTrackView {
            anchors: 1,
            data: &data,
        };
        let clip = |start_row| ClipInfo {
            start_row,
            frames: 1,
            fps: 30.0,
            duration: 0.0,
            looping: false,
            rule: crate::timeline::SampleRule::FixedRate,
        };
        let mut state = AnimationState::new();
        assert!(tracks.sample_state(0, &state).is_none(), "nothing plays");
        state.play(clip(1), PlayMode::Once, 1.0);
        let alone = tracks.sample_state(0, &state).unwrap();
        assert!(alone.abs_diff_eq(m1, 1e-6), "{alone}");
        // A quarter into a crossfade from clip 1 to clip 0: 3/4 of m1.
        state.crossfade(clip(0), PlayMode::Once, 1.0, 1.0);
        state.update(0.25);
        let (_, q, t) = tracks
            .sample_state(0, &state)
            .unwrap()
            .to_scale_rotation_translation();
        assert!((t - DVec3::new(3.0, 0.0, 0.0)).length() < 1e-6, "{t}");
        assert!((q.angle_between(DQuat::IDENTITY) - 0.75).abs() < 1e-6);
    }

    #[test]
    fn reads_outside_the_tracks_are_zero() {
        let data = [1.0f32; 32];
        let tracks = AnchorTrackView {
            anchors: 2,
            data: &data,
        };
        assert_eq!(tracks.matrix(0, 1), Mat4::from_cols_array(&[1.0; 16]));
        assert_eq!(tracks.matrix(1, 0), Mat4::ZERO);
        assert_eq!(tracks.matrix(0, 2), Mat4::ZERO);
        assert_eq!(tracks.matrix(usize::MAX, 1), Mat4::ZERO);
    }
}
