//! Triangles into a frame: fixed-point coverage (1/256 pixel) with the
//! top-left fill rule, so shared edges are drawn exactly once; a depth test
//! (nearer wins, the first drawn wins ties); back faces culled (glTF front
//! faces are counter-clockwise as seen by the viewer); shaded by normal.
//!
//! Shading: the normal (interpolated from the vertices when given, else the
//! face normal turned towards the viewer) in view space `(right, up,
//! towards the viewer)`, mapped from `[-1, 1]` to `[0, 255]` per channel.
//! Pixels no triangle covers keep [`BACKGROUND`].

use glam::{DVec3, Vec3};

use crate::camera::Camera;

/// Colour of uncovered pixels.
pub const BACKGROUND: [u8; 3] = [38, 40, 46];

/// Fixed-point steps per pixel.
const SUB: i64 = 256;

/// Largest pixel coordinate accepted (keeps fixed-point products in i64).
const LIMIT: f64 = (1u64 << 24) as f64;

/// Triangles to draw, in the frame's world space.
#[derive(Debug, Clone, Copy)]
pub struct MeshRef<'a> {
    /// Vertex positions.
    pub positions: &'a [Vec3],
    /// Vertex normals (same length), if any.
    pub normals: Option<&'a [Vec3]>,
    /// Triangles as vertex indices, front faces counter-clockwise.
    pub triangles: &'a [[u32; 3]],
    /// The mesh is mirrored (its placement has a negative determinant), so
    /// front faces are clockwise.
    pub mirrored: bool,
}

/// A rendered square image with its coverage.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Width and height in pixels.
    pub size: u32,
    /// RGB bytes, row-major, top row first.
    pub rgb: Vec<u8>,
    /// Whether a triangle covers each pixel.
    pub covered: Vec<bool>,
    depth: Vec<f64>,
}

/// A projected vertex: fixed-point screen position and depth.
#[derive(Debug, Clone, Copy)]
struct Screen {
    x: i64,
    y: i64,
    z: f64,
}

/// Twice the signed area of `(a, b, p)` in fixed point (positive when the
/// three run clockwise on the y-down screen).
fn edge(a: Screen, b: Screen, px: i64, py: i64) -> i64 {
    (b.x - a.x) * (py - a.y) - (b.y - a.y) * (px - a.x)
}

/// Top-left rule for an edge of a positive-area triangle: 0 when pixels on
/// it are inside, -1 when they are not.
fn bias(a: Screen, b: Screen) -> i64 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    if dy < 0 || (dy == 0 && dx > 0) { 0 } else { -1 }
}

fn colour(camera: &Camera, n: DVec3) -> [u8; 3] {
    let view = [
        n.dot(camera.right),
        n.dot(camera.up),
        -n.dot(camera.forward),
    ];
    view.map(|c| ((c.clamp(-1.0, 1.0) * 0.5 + 0.5) * 255.0).round() as u8)
}

impl Frame {
    /// An empty `size` x `size` frame.
    pub fn new(size: u32) -> Self {
        let n = size as usize * size as usize;
        Self {
            size,
            rgb: BACKGROUND.repeat(n),
            covered: vec![false; n],
            depth: vec![f64::INFINITY; n],
        }
    }

    /// Number of covered pixels.
    pub fn covered_count(&self) -> usize {
        self.covered.iter().filter(|c| **c).count()
    }

    /// Draws `mesh` as seen by `camera` (whose size must be the frame's).
    /// Triangles with out-of-range indices or non-finite vertices are
    /// skipped.
    pub fn draw(&mut self, mesh: &MeshRef<'_>, camera: &Camera) {
        let screen: Vec<Option<Screen>> = mesh
            .positions
            .iter()
            .map(|p| {
                let (x, y, z) = camera.project(*p);
                let ok = x.abs() < LIMIT && y.abs() < LIMIT && z.is_finite();
                ok.then(|| Screen {
                    x: (x * SUB as f64).round() as i64,
                    y: (y * SUB as f64).round() as i64,
                    z,
                })
            })
            .collect();
        for tri in mesh.triangles {
            let idx = tri.map(|i| i as usize);
            let (Some(Some(a)), Some(Some(b)), Some(Some(c))) =
                (screen.get(idx[0]), screen.get(idx[1]), screen.get(idx[2]))
            else {
                continue;
            };
            let area = edge(*a, *b, c.x, c.y);
            // Counter-clockwise as seen = negative area on the y-down screen.
            let front = if mesh.mirrored { area > 0 } else { area < 0 };
            if area == 0 || !front {
                continue;
            }
            // Reorder to positive area; keep the vertex indices in step.
            let (v, s) = if area < 0 {
                ([idx[0], idx[2], idx[1]], [*a, *c, *b])
            } else {
                (idx, [*a, *b, *c])
            };
            self.fill(mesh, camera, v, s);
        }
    }

    fn fill(&mut self, mesh: &MeshRef<'_>, camera: &Camera, v: [usize; 3], s: [Screen; 3]) {
        let [a, b, c] = s;
        let area = edge(a, b, c.x, c.y) as f64;
        let size = i64::from(self.size);
        // Pixels whose centre (i * SUB + SUB / 2) lies in the bounding box.
        let first = |lo: i64| ((lo - SUB / 2) as f64 / SUB as f64).ceil() as i64;
        let last = |hi: i64| ((hi - SUB / 2) as f64 / SUB as f64).floor() as i64;
        let x0 = first(a.x.min(b.x).min(c.x)).max(0);
        let x1 = last(a.x.max(b.x).max(c.x)).min(size - 1);
        let y0 = first(a.y.min(b.y).min(c.y)).max(0);
        let y1 = last(a.y.max(b.y).max(c.y)).min(size - 1);
        let (b0, b1, b2) = (bias(b, c), bias(c, a), bias(a, b));
        let p = v.map(|i| mesh.positions[i].as_dvec3());
        let face = {
            let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
            if n.dot(camera.forward) > 0.0 { -n } else { n }
        };
        let normals = mesh
            .normals
            .and_then(|n| {
                Some(v.map(|i| n.get(i).map(|x| x.as_dvec3())))
                    .filter(|n| n.iter().all(Option::is_some))
            })
            .map(|n| n.map(Option::unwrap_or_default));
        for py in y0..=y1 {
            for px in x0..=x1 {
                let (cx, cy) = (px * SUB + SUB / 2, py * SUB + SUB / 2);
                let w0 = edge(b, c, cx, cy);
                let w1 = edge(c, a, cx, cy);
                let w2 = edge(a, b, cx, cy);
                if w0 + b0 < 0 || w1 + b1 < 0 || w2 + b2 < 0 {
                    continue;
                }
                let l = [w0 as f64 / area, w1 as f64 / area, w2 as f64 / area];
                let z = l[0] * a.z + l[1] * b.z + l[2] * c.z;
                let at = (py * size + px) as usize;
                if z >= self.depth[at] {
                    continue;
                }
                self.depth[at] = z;
                self.covered[at] = true;
                let n = match normals {
                    Some(n) => {
                        let i = n[0] * l[0] + n[1] * l[1] + n[2] * l[2];
                        let i = i.normalize_or_zero();
                        if i == DVec3::ZERO { face } else { i }
                    }
                    None => face,
                };
                self.rgb[at * 3..at * 3 + 3].copy_from_slice(&colour(camera, n));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A front-facing camera over `[-1, 1]^2` at 8 x 8 pixels.
    fn camera() -> Camera {
        Camera::fit_from(
            0.0,
            0.0,
            [Vec3::new(-0.9, -0.9, 0.0), Vec3::new(0.9, 0.9, 0.0)].into_iter(),
            8,
        )
    }

    /// Two triangles covering the square `[-0.5, 0.5]^2` at depth `z`.
    fn quad(z: f32) -> Vec<Vec3> {
        vec![
            Vec3::new(-0.5, -0.5, z),
            Vec3::new(0.5, -0.5, z),
            Vec3::new(0.5, 0.5, z),
            Vec3::new(-0.5, 0.5, z),
        ]
    }

    #[test]
    fn shared_edges_cover_each_pixel_once_and_back_faces_are_culled() {
        let cam = camera();
        let pos = quad(0.0);
        // The square spans 4 of 8 pixels (1 unit of 2 at 90%: 3.6 px, the
        // centres of 4 columns inside), and the diagonal is drawn once.
        let front = [[0, 1, 2], [0, 2, 3]];
        let mut f = Frame::new(8);
        f.draw(
            &MeshRef {
                positions: &pos,
                normals: None,
                triangles: &front,
                mirrored: false,
            },
            &cam,
        );
        assert_eq!(f.covered_count(), 16);
        // Facing the camera: view-space normal (0, 0, 1) -> (128, 128, 255).
        let centre = (4 * 8 + 4) * 3;
        assert_eq!(&f.rgb[centre..centre + 3], &[128, 128, 255]);
        let back = [[0, 2, 1], [0, 3, 2]];
        let mut f = Frame::new(8);
        f.draw(
            &MeshRef {
                positions: &pos,
                normals: None,
                triangles: &back,
                mirrored: false,
            },
            &cam,
        );
        assert_eq!(f.covered_count(), 0, "back faces are culled");
        f.draw(
            &MeshRef {
                positions: &pos,
                normals: None,
                triangles: &back,
                mirrored: true,
            },
            &cam,
        );
        assert_eq!(f.covered_count(), 16, "mirrored meshes flip the front side");
    }

    #[test]
    fn nearer_triangles_win_whatever_the_order() {
        let cam = camera();
        let (near, far) = (quad(0.5), quad(-0.5));
        let tris = [[0, 1, 2], [0, 2, 3]];
        let up = [Vec3::Y; 4];
        let draw = |first: &[Vec3], second: &[Vec3], n1: Option<&[Vec3]>, n2: Option<&[Vec3]>| {
            let mut f = Frame::new(8);
            f.draw(
                &MeshRef {
                    positions: first,
                    normals: n1,
                    triangles: &tris,
                    mirrored: false,
                },
                &cam,
            );
            f.draw(
                &MeshRef {
                    positions: second,
                    normals: n2,
                    triangles: &tris,
                    mirrored: false,
                },
                &cam,
            );
            f
        };
        // The near quad carries +Y normals: (128, 255, 128) wherever it is drawn.
        let a = draw(&near, &far, Some(&up), None);
        let b = draw(&far, &near, None, Some(&up));
        assert_eq!(a, b);
        let centre = (4 * 8 + 4) * 3;
        assert_eq!(&a.rgb[centre..centre + 3], &[128, 255, 128]);
        assert_eq!(&a.rgb[0..3], &BACKGROUND);
    }

    #[test]
    fn bad_input_is_skipped() {
        let cam = camera();
        let pos = vec![Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 0.0), Vec3::X];
        let mut f = Frame::new(8);
        f.draw(
            &MeshRef {
                positions: &pos,
                normals: None,
                triangles: &[[0, 1, 2], [0, 2, 9]],
                mirrored: false,
            },
            &cam,
        );
        assert_eq!(f.covered_count(), 0);
    }
}
