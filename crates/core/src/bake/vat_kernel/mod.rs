//! The hot loop of the VAT bake: blend each vertex's matrices, transform its
//! position and normal, over flat planar arrays (one plane per component,
//! the layout EXR stores scanlines in).
//!
//! [`deform_portable`] is the reference: plain scalar Rust, one vertex at a
//! time, for every CPU. [`deform`] runs the same arithmetic eight vertices at
//! a time with AVX2 where the CPU has it (picked at run time, so shipped
//! builds stay portable) and the reference for the rest. Both give
//! bit-identical results: the same operations in the same order, no fused
//! multiply-adds, no approximate reciprocals or square roots, so outputs do
//! not depend on the machine. A test holds them to that.
//!
//! Nothing here allocates.

#[cfg(target_arch = "x86_64")]
mod x86;

/// A 3x4 affine matrix as four columns `(x, y, z, w)`: columns 0..2 are the
/// linear part with `w = 0`, column 3 the translation with `w = 1`.
pub type Columns = [f32; 16];

/// The columns of an f64 matrix, rounded to f32, with an exact affine last
/// row.
pub fn columns(m: &glam::DMat4) -> Columns {
    let a = m.to_cols_array();
    let mut c = [0.0f32; 16];
    for (i, v) in c.iter_mut().enumerate() {
        *v = a[i] as f32;
    }
    c[3] = 0.0;
    c[7] = 0.0;
    c[11] = 0.0;
    c[15] = 1.0;
    c
}

/// Three planes (x, y, z) of equal length.
pub type Planes<'a> = [&'a [f32]; 3];

/// Three mutable planes (x, y, z) of equal length.
pub type PlanesMut<'a> = [&'a mut [f32]; 3];

/// The vertices to deform: planar positions and normals and `slots`
/// (palette index, weight) influences per vertex, weights summing to 1.
#[derive(Debug, Clone, Copy)]
pub struct Span<'a> {
    /// Position planes.
    pub positions: Planes<'a>,
    /// Normal planes (read when normals are written).
    pub normals: Planes<'a>,
    /// Palette indices, `slots` per vertex.
    pub joints: &'a [u16],
    /// Weights, `slots` per vertex.
    pub weights: &'a [f32],
    /// Influences per vertex.
    pub slots: usize,
}

/// A zero matrix (for out-of-range palette indices, which validation
/// prevents; it keeps every path total).
const ZERO: Columns = [0.0; 16];

/// Deforms every vertex of `span` with `palette` into the planes `out_pos`
/// and, when given, `out_nrm` (unit normals: the exact inverse transpose of
/// the blended matrix when `exact`, else the blended matrix itself; zero when
/// degenerate). The vertex count is the length of the output planes. Uses
/// the widest instruction set the CPU has; the results are those of
/// [`deform_portable`], bit for bit.
pub fn deform(
    palette: &[Columns],
    span: Span<'_>,
    out_pos: PlanesMut<'_>,
    out_nrm: Option<PlanesMut<'_>>,
    exact: bool,
) {
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        let [ox, oy, oz] = out_pos;
        let mut nrm = out_nrm;
        let done = x86::deform_groups(
            palette,
            span,
            [&mut *ox, &mut *oy, &mut *oz],
            nrm.as_mut().map(|[a, b, c]| [&mut **a, &mut **b, &mut **c]),
            exact,
        );
        let rest = rest_of(span, done);
        let nrm_rest = nrm.map(|[a, b, c]| [&mut a[done..], &mut b[done..], &mut c[done..]]);
        deform_portable(
            palette,
            rest,
            [&mut ox[done..], &mut oy[done..], &mut oz[done..]],
            nrm_rest,
            exact,
        );
        return;
    }
    deform_portable(palette, span, out_pos, out_nrm, exact);
}

/// `span` without its first `done` vertices.
#[cfg(target_arch = "x86_64")]
fn rest_of(span: Span<'_>, done: usize) -> Span<'_> {
    fn cut(p: Planes<'_>, done: usize) -> Planes<'_> {
        p.map(|plane| plane.get(done..).unwrap_or(&[]))
    }
    Span {
        positions: cut(span.positions, done),
        normals: cut(span.normals, done),
        joints: &span.joints[done * span.slots..],
        weights: &span.weights[done * span.slots..],
        slots: span.slots,
    }
}

/// [`deform`] in plain scalar Rust, one vertex at a time: the reference the
/// vector paths reproduce exactly, and the path on CPUs without them.
///
/// Per vertex: the blended matrix `sum_s w_s * palette[j_s]` (from zero, slot
/// by slot), the position `((c0 x + c1 y) + c2 z) + c3`, and for normals
/// either the cofactor matrix (the inverse transpose up to a positive scale,
/// whose columns are cross products of the matrix's columns) times the sign
/// of the determinant, or the blended matrix itself; then `r * (1 /
/// sqrt(|r|^2))`, or zero when `|r|^2` is zero or not finite.
pub fn deform_portable(
    palette: &[Columns],
    span: Span<'_>,
    out_pos: PlanesMut<'_>,
    out_nrm: Option<PlanesMut<'_>>,
    exact: bool,
) {
    let [ox, oy, oz] = out_pos;
    let n = ox.len().min(oy.len()).min(oz.len());
    let slots = span.slots;
    let mut nrm = out_nrm;
    for v in 0..n {
        let mut m = [0.0f32; 16];
        for s in v * slots..(v + 1) * slots {
            let c = palette.get(usize::from(span.joints[s])).unwrap_or(&ZERO);
            let w = span.weights[s];
            for e in 0..16 {
                m[e] += w * c[e];
            }
        }
        let [px, py, pz] = span.positions.map(|plane| plane[v]);
        ox[v] = m[0] * px + m[4] * py + m[8] * pz + m[12];
        oy[v] = m[1] * px + m[5] * py + m[9] * pz + m[13];
        oz[v] = m[2] * px + m[6] * py + m[10] * pz + m[14];
        if let Some([nx, ny, nz]) = nrm.as_mut() {
            let t = normal(&m, span.normals.map(|plane| plane[v]), exact);
            nx[v] = t[0];
            ny[v] = t[1];
            nz[v] = t[2];
        }
    }
}

/// The deformed unit normal of `n` under the matrix `m` (see
/// [`deform_portable`]).
fn normal(m: &Columns, n: [f32; 3], exact: bool) -> [f32; 3] {
    let c0 = [m[0], m[1], m[2]];
    let c1 = [m[4], m[5], m[6]];
    let c2 = [m[8], m[9], m[10]];
    let r = if exact {
        let k0 = cross(c1, c2);
        let k1 = cross(c2, c0);
        let k2 = cross(c0, c1);
        let det = c0[0] * k0[0] + c0[1] * k0[1] + c0[2] * k0[2];
        let s = if det < 0.0 { -1.0 } else { 1.0 };
        [
            (k0[0] * n[0] + k1[0] * n[1] + k2[0] * n[2]) * s,
            (k0[1] * n[0] + k1[1] * n[1] + k2[1] * n[2]) * s,
            (k0[2] * n[0] + k1[2] * n[1] + k2[2] * n[2]) * s,
        ]
    } else {
        [
            c0[0] * n[0] + c1[0] * n[1] + c2[0] * n[2],
            c0[1] * n[0] + c1[1] * n[1] + c2[1] * n[2],
            c0[2] * n[0] + c1[2] * n[1] + c2[2] * n[2],
        ]
    };
    let len2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    // 1 / sqrt, both exactly rounded on every instruction set.
    let inv = if len2 > 0.0 && len2 < f32::INFINITY {
        1.0 / len2.sqrt()
    } else {
        0.0
    };
    [r[0] * inv, r[1] * inv, r[2] * inv]
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DMat4, DQuat, DVec3};

    /// Planes from interleaved triples.
    fn planes(v: &[[f32; 3]]) -> [Vec<f32>; 3] {
        [0, 1, 2].map(|c| v.iter().map(|p| p[c]).collect())
    }

    #[test]
    fn matches_a_direct_f64_evaluation() {
        let mats = [
            DMat4::from_scale_rotation_translation(
                DVec3::new(1.0, 3.0, 0.5),
                DQuat::from_rotation_z(0.4),
                DVec3::new(1.0, 2.0, 3.0),
            ),
            DMat4::from_rotation_y(1.1) * DMat4::from_translation(DVec3::new(-2.0, 0.5, 0.0)),
        ];
        let palette: Vec<Columns> = mats.iter().map(columns).collect();
        let nd = DVec3::new(0.2, 0.9, -0.4).normalize();
        let p = planes(&[[0.3, -0.7, 1.5]]);
        let q = planes(&[[nd.x as f32, nd.y as f32, nd.z as f32]]);
        let span = Span {
            positions: [&p[0], &p[1], &p[2]],
            normals: [&q[0], &q[1], &q[2]],
            joints: &[0, 1],
            weights: &[0.25, 0.75],
            slots: 2,
        };
        let (mut op, mut on) = ([[0f32; 1]; 3], [[0f32; 1]; 3]);
        let [a, b, c] = &mut op;
        let [d, e, f] = &mut on;
        deform(&palette, span, [a, b, c], Some([d, e, f]), true);
        let blended = mats[0] * 0.25 + mats[1] * 0.75;
        let want = blended.transform_point3(DVec3::new(0.3, -0.7, 1.5));
        let want_n = (crate::eval::skin::normal_matrix(&blended) * nd).normalize();
        let got = DVec3::new(
            f64::from(op[0][0]),
            f64::from(op[1][0]),
            f64::from(op[2][0]),
        );
        let got_n = DVec3::new(
            f64::from(on[0][0]),
            f64::from(on[1][0]),
            f64::from(on[2][0]),
        );
        assert!(got.distance(want) < 1e-5, "{got:?} vs {want:?}");
        assert!(got_n.distance(want_n) < 1e-6, "{got_n:?} vs {want_n:?}");
        // The blended-matrix convention.
        let [d, e, f] = &mut on;
        let [a, b, c] = &mut op;
        deform(&palette, span, [a, b, c], Some([d, e, f]), false);
        let want_b = (glam::DMat3::from_mat4(blended) * nd).normalize();
        let got_b = DVec3::new(
            f64::from(on[0][0]),
            f64::from(on[1][0]),
            f64::from(on[2][0]),
        );
        assert!(got_b.distance(want_b) < 1e-6);
    }

    /// A palette with uniform and non-uniform scales, rotations, a mirror
    /// (negative determinant: the exact normal's sign flip) and a zero
    /// matrix (degenerate: the zero-normal branch).
    fn parity_palette() -> Vec<Columns> {
        let mut palette: Vec<Columns> = (0..8)
            .map(|i| {
                let f = f64::from(i);
                columns(&DMat4::from_scale_rotation_translation(
                    DVec3::new(1.0 + f * 0.1, 1.0 - f * 0.05, 0.7 + f * 0.2),
                    DQuat::from_rotation_x(f) * DQuat::from_rotation_y(0.3 * f),
                    DVec3::new(f, 1.0, -2.0),
                ))
            })
            .collect();
        palette.push(columns(&DMat4::from_scale(DVec3::new(-1.0, 1.0, 1.0))));
        palette.push([0.0; 16]);
        palette
    }

    /// Runs `f` on six output planes of `n` zeros (positions, normals).
    fn outputs(n: usize) -> [Vec<f32>; 6] {
        std::array::from_fn(|_| vec![0f32; n])
    }

    #[test]
    fn every_instruction_set_variant_gives_identical_bits() {
        // The AVX2 groups and the portable reference must agree exactly (no
        // fused multiply-adds anywhere), for 1 to 8 influences (4 and 8 have
        // their own unrolled blends, the others the generic one) and both
        // normal conventions. 37 vertices: four full groups of eight and a
        // tail the dispatcher leaves to the portable path.
        let palette = parity_palette();
        let n = 37;
        let full = n / 8 * 8;
        let p: [Vec<f32>; 3] =
            [0, 1, 2].map(|c| (0..n).map(|i| ((i * 3 + c) as f32 * 0.37).sin()).collect());
        let q: [Vec<f32>; 3] =
            [0, 1, 2].map(|c| (0..n).map(|i| ((i * 3 + c) as f32 * 0.11).cos()).collect());
        #[cfg(target_arch = "x86_64")]
        let has_avx2 = std::arch::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        let has_avx2 = false;
        if !has_avx2 {
            // Said past the harness's capture; CI's x86-64 runners have
            // AVX2, where the assertions below run the vector path.
            let line = "vat_kernel: this CPU lacks AVX2; only the portable kernel was checked\n";
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
            assert!(
                std::env::var_os("RIGBAKE_REQUIRE_AVX2").is_none(),
                "RIGBAKE_REQUIRE_AVX2 is set but this CPU lacks AVX2"
            );
        }
        for slots in 1..=8usize {
            // Weights summing to 1, some zero; every palette entry used,
            // including the mirror (8) and the zero matrix (9), the latter
            // alone on some vertices with one slot.
            let joints: Vec<u16> = (0..n * slots)
                .map(|i| ((i * 7 + i / slots) % palette.len()) as u16)
                .collect();
            let weights: Vec<f32> = (0..n)
                .flat_map(|v| {
                    let raw: Vec<f32> = (0..slots)
                        .map(|s| {
                            if (v + s) % 5 == 4 {
                                0.0
                            } else {
                                1.0 + (v * slots + s) as f32 * 0.13
                            }
                        })
                        .collect();
                    let total: f32 = raw.iter().sum();
                    raw.into_iter()
                        .map(move |w| if total > 0.0 { w / total } else { 1.0 })
                })
                .collect();
            let span = Span {
                positions: [&p[0], &p[1], &p[2]],
                normals: [&q[0], &q[1], &q[2]],
                joints: &joints,
                weights: &weights,
                slots,
            };
            for exact in [true, false] {
                let what = format!("{slots} slots, exact normals {exact}");
                let mut want = outputs(n);
                {
                    let [b0, b1, b2, b3, b4, b5] = &mut want;
                    deform_portable(&palette, span, [b0, b1, b2], Some([b3, b4, b5]), exact);
                }
                assert!(want[3].iter().any(|v| *v != 0.0), "{what}");
                // The dispatcher: bit for bit, tail included.
                let mut got = outputs(n);
                {
                    let [a0, a1, a2, a3, a4, a5] = &mut got;
                    deform(&palette, span, [a0, a1, a2], Some([a3, a4, a5]), exact);
                }
                let bits = |v: &[Vec<f32>; 6]| -> Vec<Vec<u32>> {
                    v.iter()
                        .map(|p| p.iter().map(|x| x.to_bits()).collect())
                        .collect()
                };
                assert_eq!(bits(&got), bits(&want), "{what}: dispatched");
                // The AVX2 groups themselves, so a dispatcher that quietly
                // fell back to the portable path cannot pass.
                #[cfg(target_arch = "x86_64")]
                if has_avx2 {
                    let mut vector = outputs(n);
                    let done = {
                        let [a0, a1, a2, a3, a4, a5] = &mut vector;
                        x86::deform_groups(&palette, span, [a0, a1, a2], Some([a3, a4, a5]), exact)
                    };
                    assert_eq!(
                        done, full,
                        "{what}: the CPU has AVX2 but the AVX2 path did {done} of {full} vertices"
                    );
                    let head = |v: &[Vec<f32>; 6]| -> Vec<Vec<u32>> {
                        v.iter()
                            .map(|p| p[..full].iter().map(|x| x.to_bits()).collect())
                            .collect()
                    };
                    assert_eq!(head(&vector), head(&want), "{what}: AVX2 vs portable");
                    // Positions only (no normal planes) as well.
                    let mut pos_only = outputs(n);
                    let [a0, a1, a2, ..] = &mut pos_only;
                    let done = x86::deform_groups(&palette, span, [a0, a1, a2], None, exact);
                    assert_eq!(done, full, "{what}: positions only");
                    assert_eq!(
                        head(&pos_only)[..3],
                        head(&want)[..3],
                        "{what}: positions only"
                    );
                }
            }
        }
    }
}
