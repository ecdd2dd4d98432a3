//! Local pose -> global (model-root) matrices, parents before children.

use glam::DMat4;

use crate::eval::sample::LocalPose;
use crate::model::Model;

/// Local matrix of node `n`: the exact rest matrix unless animated, else `T * R * S`.
pub fn local_matrix(model: &Model, pose: &LocalPose, n: usize) -> DMat4 {
    if pose.animated[n] {
        pose.transforms[n].to_matrix()
    } else {
        model.nodes[n].rest_matrix
    }
}

/// Fills `globals` (one per node) with `parent global * local`, walking the
/// model's parents-first order.
pub fn compute_globals(model: &Model, pose: &LocalPose, globals: &mut [DMat4]) {
    for &n in &model.topological_order {
        let local = local_matrix(model, pose, n);
        globals[n] = match model.nodes[n].parent {
            Some(p) => crate::eval::skin::mul_affine(&globals[p], &local),
            None => local,
        };
    }
}
