//! The preview camera: orthographic, looking at the model from the front
//! (glTF's +Z side), [`AZIMUTH_DEGREES`] to the right (towards +X) and
//! [`ELEVATION_DEGREES`] above, with +Y up; fitted so that every given point
//! fits in a square image with a [`MARGIN`] on each side.

use glam::{DVec3, Vec3};

/// Degrees the camera is turned from the front (+Z) towards +X.
pub const AZIMUTH_DEGREES: f64 = 30.0;
/// Degrees the camera looks down from the horizontal.
pub const ELEVATION_DEGREES: f64 = 20.0;
/// Fraction of the image left empty on each side.
pub const MARGIN: f64 = 0.05;

/// An orthographic camera over a square image.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Screen right, in world space (unit).
    pub right: DVec3,
    /// Screen up, in world space (unit).
    pub up: DVec3,
    /// Viewing direction, from the camera into the scene (unit).
    pub forward: DVec3,
    /// World point at the image centre.
    pub center: DVec3,
    /// World units from the image centre to its edge.
    pub half_extent: f64,
    /// Image width and height in pixels.
    pub size: u32,
}

/// The extent of points along a view's screen axes (right, up).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extent {
    /// Smallest (right, up) coordinates.
    pub lo: [f64; 2],
    /// Largest (right, up) coordinates.
    pub hi: [f64; 2],
}

impl Extent {
    /// No points yet.
    pub const EMPTY: Self = Self {
        lo: [f64::INFINITY; 2],
        hi: [f64::NEG_INFINITY; 2],
    };

    /// The extent of `points` (non-finite ones ignored) along `axes`.
    pub fn of(axes: &Axes, points: impl Iterator<Item = Vec3>) -> Self {
        let mut e = Self::EMPTY;
        for p in points {
            let p = p.as_dvec3();
            if !p.is_finite() {
                continue;
            }
            for (i, axis) in [axes.right, axes.up].iter().enumerate() {
                let v = p.dot(*axis);
                e.lo[i] = e.lo[i].min(v);
                e.hi[i] = e.hi[i].max(v);
            }
        }
        e
    }

    /// Both extents together (exact: order does not matter).
    pub fn merge(self, o: Self) -> Self {
        Self {
            lo: [self.lo[0].min(o.lo[0]), self.lo[1].min(o.lo[1])],
            hi: [self.hi[0].max(o.hi[0]), self.hi[1].max(o.hi[1])],
        }
    }
}

/// A view's directions in world space (unit vectors).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axes {
    /// Screen right.
    pub right: DVec3,
    /// Screen up.
    pub up: DVec3,
    /// Viewing direction, from the camera into the scene.
    pub forward: DVec3,
}

impl Axes {
    /// The view from `azimuth` degrees right of the front (+Z, towards +X)
    /// and `elevation` degrees above, +Y up.
    pub fn looking_from(azimuth: f64, elevation: f64) -> Self {
        let (az, el) = (azimuth.to_radians(), elevation.to_radians());
        let toward_camera = DVec3::new(el.cos() * az.sin(), el.sin(), el.cos() * az.cos());
        let forward = -toward_camera;
        let right = forward.cross(DVec3::Y).normalize();
        let up = right.cross(forward);
        Self { right, up, forward }
    }

    /// The default view ([`AZIMUTH_DEGREES`], [`ELEVATION_DEGREES`]).
    pub fn default_view() -> Self {
        Self::looking_from(AZIMUTH_DEGREES, ELEVATION_DEGREES)
    }
}

impl Camera {
    /// The default camera fitted to `points`, for `size` x `size` pixels.
    pub fn fit(points: impl Iterator<Item = Vec3>, size: u32) -> Self {
        Self::fit_from(AZIMUTH_DEGREES, ELEVATION_DEGREES, points, size)
    }

    /// A camera at `azimuth` / `elevation` (degrees) fitted to `points`.
    pub fn fit_from(
        azimuth: f64,
        elevation: f64,
        points: impl Iterator<Item = Vec3>,
        size: u32,
    ) -> Self {
        let axes = Axes::looking_from(azimuth, elevation);
        Self::fit_extent(&axes, &Extent::of(&axes, points), size)
    }

    /// The camera along `axes` whose square view holds `extent` with a
    /// [`MARGIN`] on each side (a unit view around the origin when empty).
    pub fn fit_extent(axes: &Axes, extent: &Extent, size: u32) -> Self {
        let (lo, hi) = (extent.lo, extent.hi);
        let (center, half) = if lo[0] <= hi[0] {
            let c = [(lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0];
            let half = (hi[0] - lo[0]).max(hi[1] - lo[1]) / 2.0;
            (axes.right * c[0] + axes.up * c[1], half)
        } else {
            (DVec3::ZERO, 0.0)
        };
        let half = if half > 0.0 { half } else { 1.0 };
        Self {
            right: axes.right,
            up: axes.up,
            forward: axes.forward,
            center,
            half_extent: half / (1.0 - 2.0 * MARGIN),
            size,
        }
    }

    /// Pixel coordinates `(x, y)` of a world point (x right, y down, pixel
    /// `(i, j)` covering `[i, i + 1) x [j, j + 1)`) and its depth along the
    /// view (larger is farther).
    pub fn project(&self, p: Vec3) -> (f64, f64, f64) {
        let d = p.as_dvec3() - self.center;
        let s = f64::from(self.size) / 2.0;
        (
            s + d.dot(self.right) / self.half_extent * s,
            s - d.dot(self.up) / self.half_extent * s,
            d.dot(self.forward),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_camera_axes_and_fit() {
        let c = Camera::fit_from(
            0.0,
            0.0,
            [Vec3::new(-1.0, 0.0, 0.0), Vec3::new(1.0, 4.0, 0.0)].into_iter(),
            100,
        );
        assert!(c.right.distance(DVec3::X) < 1e-12);
        assert!(c.up.distance(DVec3::Y) < 1e-12);
        assert!(c.forward.distance(-DVec3::Z) < 1e-12);
        // Height 4 fills 90% of the image: the top point lands 5 px in.
        let (x, y, _) = c.project(Vec3::new(1.0, 4.0, 0.0));
        assert!((y - 5.0).abs() < 1e-9, "{y}");
        assert!((x - 72.5).abs() < 1e-9, "{x}");
        // Nearer points have smaller depth.
        assert!(c.project(Vec3::Z).2 < c.project(-Vec3::Z).2);
        // The default looks from the front-right, above.
        let d = Camera::fit(std::iter::once(Vec3::ZERO), 10);
        assert!(d.forward.z < 0.0 && d.forward.x < 0.0 && d.forward.y < 0.0);
        assert_eq!(d.half_extent, 1.0 / 0.9);
    }
}
