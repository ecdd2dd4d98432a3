//! Keyframe interpolation of one channel at one time (glTF 2.0 rules).
//!
//! STEP holds the previous key; LINEAR lerps (rotations: spherical linear
//! interpolation on the shortest path); CUBICSPLINE is the Hermite spline with
//! in/out tangents scaled by the key interval. Before the first key and after
//! the last, the end value is held. All arithmetic is f64. Rotation results
//! are renormalised here so callers always get unit quaternions.

use glam::DQuat;

use crate::model::{Channel, Interpolation, Property};

/// Where `t` falls among `times`: the key segment and the fraction into it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyPosition {
    /// Hold key `k` (before the first key, after the last, or a single key).
    Hold(usize),
    /// Between key `k` and `k + 1`, at fraction `u` in `[0, 1)`, with the key
    /// interval `dt` in seconds.
    Between {
        /// Index of the earlier key.
        k: usize,
        /// Fraction into the interval.
        u: f64,
        /// Length of the interval in seconds.
        dt: f64,
    },
}

/// Locates `t` among strictly increasing key `times` (binary search).
pub fn locate(times: &[f32], t: f64) -> KeyPosition {
    let n = times.len();
    // Number of keys at or before t.
    let after = times.partition_point(|&x| f64::from(x) <= t);
    if after == 0 {
        return KeyPosition::Hold(0);
    }
    if after >= n {
        return KeyPosition::Hold(n - 1);
    }
    between(times, after - 1, t)
}

/// `t` as a fraction into the segment from key `k` to key `k + 1`.
fn between(times: &[f32], k: usize, t: f64) -> KeyPosition {
    let t0 = f64::from(times[k]);
    let dt = f64::from(times[k + 1]) - t0;
    KeyPosition::Between {
        k,
        u: (t - t0) / dt,
        dt,
    }
}

/// What sampling one channel remembers between calls: the key segment it
/// last fell in and that segment's slerp constants. Purely a speed-up for
/// callers that sample the same channel at nearby times (a bake walking its
/// frames): results never depend on it, since the constants are a function
/// of the segment alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChannelCursor {
    /// Index of the earlier key of the last segment sampled.
    segment: Option<usize>,
    /// Slerp constants of a rotation segment, with the segment's index.
    slerp: Option<(usize, Slerp)>,
}

impl ChannelCursor {
    /// `locate` that first tries the segment of the last call and the one
    /// after it; the same answer as [`locate`], found without a search when
    /// times advance steadily.
    fn locate(&mut self, times: &[f32], t: f64) -> KeyPosition {
        if let Some(k) = self.segment {
            for k in [k, k + 1] {
                if k + 1 < times.len() && f64::from(times[k]) <= t && t < f64::from(times[k + 1]) {
                    self.segment = Some(k);
                    return between(times, k, t);
                }
            }
        }
        let at = locate(times, t);
        if let KeyPosition::Between { k, .. } = at {
            self.segment = Some(k);
        }
        at
    }
}

/// Evaluates `channel` at time `t` (seconds) into `out` (`channel.width`
/// values). Rotations come out as unit quaternions (x, y, z, w).
pub fn sample(channel: &Channel, t: f64, out: &mut [f64]) {
    sample_with(channel, t, out, &mut ChannelCursor::default());
}

/// [`sample`] with a cursor kept by the caller between calls on the same
/// channel (see [`ChannelCursor`]); the results are identical.
pub fn sample_with(channel: &Channel, t: f64, out: &mut [f64], cursor: &mut ChannelCursor) {
    let w = channel.width;
    debug_assert_eq!(out.len(), w);
    let values = &channel.values;
    // Index of key k's value within `values`.
    let stride = if channel.interpolation == Interpolation::CubicSpline {
        3 * w
    } else {
        w
    };
    let value_at = |k: usize| -> &[f32] {
        let base = k * stride
            + if channel.interpolation == Interpolation::CubicSpline {
                w
            } else {
                0
            };
        &values[base..base + w]
    };
    match cursor.locate(&channel.times, t) {
        KeyPosition::Hold(k) => copy(value_at(k), out),
        KeyPosition::Between { k, u, dt } => match channel.interpolation {
            Interpolation::Step => copy(value_at(k), out),
            Interpolation::Linear => {
                let (a, b) = (value_at(k), value_at(k + 1));
                if channel.property == Property::Rotation {
                    let segment = match cursor.slerp {
                        Some((s, segment)) if s == k => segment,
                        _ => {
                            let segment = Slerp::new(quat(a), quat(b));
                            cursor.slerp = Some((k, segment));
                            segment
                        }
                    };
                    // Slerp between unit quaternions is unit already.
                    out.copy_from_slice(&segment.at(u).to_array());
                    return;
                }
                for i in 0..w {
                    let (a, b) = (f64::from(a[i]), f64::from(b[i]));
                    out[i] = a + (b - a) * u;
                }
            }
            Interpolation::CubicSpline => {
                let v0 = &values[k * stride + w..k * stride + 2 * w];
                let b0 = &values[k * stride + 2 * w..k * stride + 3 * w];
                let a1 = &values[(k + 1) * stride..(k + 1) * stride + w];
                let v1 = &values[(k + 1) * stride + w..(k + 1) * stride + 2 * w];
                let (u2, u3) = (u * u, u * u * u);
                let h00 = 2.0 * u3 - 3.0 * u2 + 1.0;
                let h10 = u3 - 2.0 * u2 + u;
                let h01 = -2.0 * u3 + 3.0 * u2;
                let h11 = u3 - u2;
                for i in 0..w {
                    out[i] = h00 * f64::from(v0[i])
                        + h10 * dt * f64::from(b0[i])
                        + h01 * f64::from(v1[i])
                        + h11 * dt * f64::from(a1[i]);
                }
            }
        },
    }
    if channel.property == Property::Rotation {
        let q = DQuat::from_xyzw(out[0], out[1], out[2], out[3]);
        let len = q.length();
        if len > 0.0 {
            for v in out.iter_mut() {
                *v /= len;
            }
        } else {
            out.copy_from_slice(&DQuat::IDENTITY.to_array());
        }
    }
}

fn copy(src: &[f32], out: &mut [f64]) {
    for (o, s) in out.iter_mut().zip(src) {
        *o = f64::from(*s);
    }
}

fn quat(v: &[f32]) -> DQuat {
    DQuat::from_xyzw(
        f64::from(v[0]),
        f64::from(v[1]),
        f64::from(v[2]),
        f64::from(v[3]),
    )
}

/// One slerp segment, its constants computed once: both ends normalised in
/// f64, the second flipped onto the first's hemisphere (shortest path), the
/// angle between them and the reciprocal of its sine.
#[derive(Debug, Clone, Copy)]
struct Slerp {
    a: DQuat,
    b: DQuat,
    /// `cos(theta)`, the dot product of the ends.
    cos: f64,
    /// The angle between the ends; 0 where they nearly coincide, which
    /// interpolates by normalised lerp instead.
    theta: f64,
    /// `1 / sin(theta)`.
    inv_sin: f64,
}

impl Slerp {
    fn new(a: DQuat, b: DQuat) -> Self {
        let unit = |q: DQuat| {
            let n = q.normalize();
            if n.is_finite() { n } else { DQuat::IDENTITY }
        };
        let (a, mut b) = (unit(a), unit(b));
        let mut d = a.dot(b);
        if d < 0.0 {
            b = -b;
            d = -d;
        }
        let d = d.min(1.0);
        if d > 1.0 - 1e-12 {
            return Self {
                a,
                b,
                cos: d,
                theta: 0.0,
                inv_sin: 0.0,
            };
        }
        // sin(theta) = sqrt((1 - d)(1 + d)): exact where d is near 1.
        Self {
            a,
            b,
            cos: d,
            theta: d.acos(),
            inv_sin: 1.0 / ((1.0 - d) * (1.0 + d)).sqrt(),
        }
    }

    /// The unit quaternion at fraction `u` from `a` to `b`.
    #[inline]
    fn at(&self, u: f64) -> DQuat {
        if self.theta == 0.0 {
            return (self.a + (self.b - self.a) * u).normalize();
        }
        // sin((1 - u) theta) / sin(theta) = cos(u theta) - cos(theta) sin(u
        // theta) / sin(theta): one sine-cosine pair instead of two sines.
        let (sin_u, cos_u) = (u * self.theta).sin_cos();
        let wb = sin_u * self.inv_sin;
        let wa = cos_u - self.cos * wb;
        self.a * wa + self.b * wb
    }
}

/// Spherical linear interpolation on the shortest path between two
/// quaternions (normalised first); normalised lerp where they nearly
/// coincide. The result is a unit quaternion.
pub fn slerp(a: DQuat, b: DQuat, u: f64) -> DQuat {
    Slerp::new(a, b).at(u)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::FRAC_PI_2;

    fn channel(
        property: Property,
        interpolation: Interpolation,
        times: &[f32],
        values: &[f32],
        width: usize,
    ) -> Channel {
        Channel {
            node: 0,
            property,
            interpolation,
            times: times.to_vec(),
            values: values.to_vec(),
            width,
        }
    }

    #[test]
    fn locate_holds_ends_and_finds_segments() {
        let times = [1.0f32, 2.0, 4.0];
        assert_eq!(locate(&times, 0.0), KeyPosition::Hold(0));
        assert_eq!(locate(&times, 5.0), KeyPosition::Hold(2));
        assert_eq!(locate(&times, 4.0), KeyPosition::Hold(2));
        assert_eq!(
            locate(&times, 1.0),
            KeyPosition::Between {
                k: 0,
                u: 0.0,
                dt: 1.0
            }
        );
        assert_eq!(
            locate(&times, 3.0),
            KeyPosition::Between {
                k: 1,
                u: 0.5,
                dt: 2.0
            }
        );
    }

    #[test]
    fn step_holds_previous_key_and_linear_lerps() {
        let step = channel(
            Property::Translation,
            Interpolation::Step,
            &[0.0, 1.0],
            &[0.0, 0.0, 0.0, 10.0, 20.0, 30.0],
            3,
        );
        let mut out = [0.0; 3];
        sample(&step, 0.999, &mut out);
        assert_eq!(out, [0.0, 0.0, 0.0]);
        sample(&step, 1.0, &mut out);
        assert_eq!(out, [10.0, 20.0, 30.0]);
        let lin = Channel {
            interpolation: Interpolation::Linear,
            ..step
        };
        sample(&lin, 0.25, &mut out);
        assert_eq!(out, [2.5, 5.0, 7.5]);
    }

    #[test]
    fn linear_rotation_is_shortest_path_slerp() {
        // 0 to 90 degrees about Z, second key stored with flipped sign.
        let h = (FRAC_PI_2 / 2.0) as f32;
        let ch = channel(
            Property::Rotation,
            Interpolation::Linear,
            &[0.0, 1.0],
            &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -h.sin(), -h.cos()],
            4,
        );
        let mut out = [0.0; 4];
        sample(&ch, 0.5, &mut out);
        let q = DQuat::from_array(out);
        let expected = DQuat::from_rotation_z(FRAC_PI_2 / 2.0);
        assert!(q.dot(expected).abs() > 1.0 - 1e-12, "{q:?}");
        assert!((q.length() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_cursor_never_changes_results() {
        // Five rotation keys (one pair on opposite hemispheres, one pair
        // nearly equal) and a translation channel in every interpolation
        // mode; sampled forward, backward and jumping about, with one cursor
        // carried along, and each result compared bit for bit with a fresh
        // sample.
        let times = [0.0f32, 0.5, 1.0, 1.25, 2.0];
        let q = |angle: f64, flip: f64| {
            let r = DQuat::from_rotation_y(angle) * flip;
            [r.x as f32, r.y as f32, r.z as f32, r.w as f32]
        };
        let rot: Vec<f32> = [
            q(0.0, 1.0),
            q(1.0, -1.0),
            q(2.5, 1.0),
            q(2.5 + 1e-7, 1.0),
            q(0.3, 1.0),
        ]
        .concat();
        let mut channels = vec![channel(
            Property::Rotation,
            Interpolation::Linear,
            &times,
            &rot,
            4,
        )];
        for interpolation in [
            Interpolation::Step,
            Interpolation::Linear,
            Interpolation::CubicSpline,
        ] {
            let per_key = if interpolation == Interpolation::CubicSpline {
                9
            } else {
                3
            };
            let values: Vec<f32> = (0..times.len() * per_key)
                .map(|i| (i * i % 7) as f32)
                .collect();
            channels.push(channel(
                Property::Translation,
                interpolation,
                &times,
                &values,
                3,
            ));
        }
        let mut walk: Vec<f64> = (-5..=45).map(|i| f64::from(i) * 0.05).collect();
        walk.extend(walk.clone().iter().rev());
        walk.extend([1.9, 0.1, 1.1, 1.1, 0.6, 2.0, 0.0, 1.25, 1.2499]);
        for ch in &channels {
            let mut cursor = ChannelCursor::default();
            for &t in &walk {
                let (mut fresh, mut carried) = ([0.0; 4], [0.0; 4]);
                sample(ch, t, &mut fresh[..ch.width]);
                sample_with(ch, t, &mut carried[..ch.width], &mut cursor);
                assert_eq!(
                    fresh.map(f64::to_bits),
                    carried.map(f64::to_bits),
                    "{:?} at {t}",
                    ch.interpolation
                );
                if ch.property == Property::Rotation {
                    assert!(
                        (DQuat::from_array(fresh).length() - 1.0).abs() < 1e-15,
                        "at {t}"
                    );
                }
            }
        }
    }

    #[test]
    fn slerp_takes_the_shortest_path_at_constant_speed() {
        // 0 and 160 degrees about X, the second stored negated: the short
        // way is 160 degrees forward, so at u the angle is 160 u.
        let a = DQuat::IDENTITY;
        let b = -DQuat::from_rotation_x(160f64.to_radians());
        for i in 0..=8 {
            let u = f64::from(i) / 8.0;
            let expected = DQuat::from_rotation_x((160.0 * u).to_radians());
            let got = slerp(a, b, u);
            assert!(got.dot(expected).abs() > 1.0 - 1e-15, "u {u}: {got:?}");
            assert!((got.length() - 1.0).abs() < 1e-15);
        }
    }

    #[test]
    fn cubic_spline_matches_hand_worked_hermite() {
        // Scalar-like translation.x: keys at t=1 and t=3 (dt = 2),
        // v0 = 1, out-tangent b0 = 2, v1 = 5, in-tangent a1 = -1.
        // At t = 2: u = 0.5, h00 = 0.5, h10 = 0.125, h01 = 0.5, h11 = -0.125.
        // p = 0.5*1 + 0.125*2*2 + 0.5*5 + (-0.125)*2*(-1) = 0.5 + 0.5 + 2.5 + 0.25 = 3.75
        let ch = channel(
            Property::Translation,
            Interpolation::CubicSpline,
            &[1.0, 3.0],
            &[
                9.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, // key 0: in, value, out
                -1.0, 0.0, 0.0, 5.0, 0.0, 0.0, 9.0, 0.0, 0.0, // key 1
            ],
            3,
        );
        let mut out = [0.0; 3];
        sample(&ch, 2.0, &mut out);
        assert!((out[0] - 3.75).abs() < 1e-12, "{out:?}");
        // Before the first key and after the last: hold the values, not tangents.
        sample(&ch, 0.0, &mut out);
        assert_eq!(out[0], 1.0);
        sample(&ch, 7.0, &mut out);
        assert_eq!(out[0], 5.0);
    }
}
