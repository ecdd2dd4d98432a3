//! Vertices ready for a mesh file: positions plus unit normals and tangents
//! (glTF requires unit directions and a tangent `w` of exactly +-1).

use glam::Vec3;

use crate::model::Primitive;

/// The vertices of one primitive at one frame, in vertex order.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameVertices {
    /// Positions in model space.
    pub positions: Vec<[f32; 3]>,
    /// Unit normals, when the source has normals.
    pub normals: Option<Vec<[f32; 3]>>,
    /// Unit tangents with handedness +-1, when the source has tangents.
    pub tangents: Option<Vec<[f32; 4]>>,
}

impl FrameVertices {
    /// From flat floats (3 per position and normal, 4 per tangent), making
    /// directions unit length: degenerate normals become +Z and tangents +X,
    /// and tangent `w` becomes exactly +-1, so the result is valid glTF.
    pub fn from_flat(positions: &[f32], normals: Option<&[f32]>, tangents: Option<&[f32]>) -> Self {
        let unit = |d: &[f32], fallback: Vec3| {
            let d = Vec3::from_slice(d);
            if d.length() > 0.5 {
                d.normalize()
            } else {
                fallback
            }
        };
        Self {
            positions: positions
                .chunks_exact(3)
                .map(|c| [c[0], c[1], c[2]])
                .collect(),
            normals: normals.map(|n| {
                n.chunks_exact(3)
                    .map(|c| unit(c, Vec3::Z).to_array())
                    .collect()
            }),
            tangents: tangents.map(|t| {
                t.chunks_exact(4)
                    .map(|c| {
                        unit(&c[..3], Vec3::X)
                            .extend(if c[3] < 0.0 { -1.0 } else { 1.0 })
                            .to_array()
                    })
                    .collect()
            }),
        }
    }

    /// A primitive's own bind-pose vertices (see [`FrameVertices::from_flat`]).
    pub fn bind_pose(prim: &Primitive) -> Self {
        let flat3 = |v: &[Vec3]| v.iter().flat_map(|x| x.to_array()).collect::<Vec<f32>>();
        let positions = flat3(&prim.positions);
        let normals = prim.normals.as_deref().map(flat3);
        let tangents: Option<Vec<f32>> = prim
            .tangents
            .as_ref()
            .map(|t| t.iter().flat_map(|x| x.to_array()).collect());
        Self::from_flat(&positions, normals.as_deref(), tangents.as_deref())
    }
}
