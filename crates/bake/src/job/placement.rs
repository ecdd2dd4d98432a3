//! The placement record: where the bake's spaces stand in the source scene
//! (the rest-pose global matrices of the reference node and of every bone
//! set's space node), which every mesh file also carries as its node
//! transform, so a loader stands the model where the source stands it.

use glam::DMat4;
use rigbake_core::Model;
use rigbake_core::eval::evaluate::Evaluator;
use rigbake_format::meta::{LookupUv, Placement, PlacementMetadata};

/// The rest-pose globals of a model's nodes, evaluated once per bake (in
/// its plan) for every mesh writer and the record.
pub(super) struct RestPlacements {
    globals: Vec<DMat4>,
}

impl RestPlacements {
    /// Evaluates the rest pose of `model`.
    pub fn new(model: &Model) -> Self {
        Self {
            globals: Evaluator::new(model).globals,
        }
    }

    /// Refuses a placement that 32-bit floats cannot hold: every mesh file
    /// stands the model on its space node's matrix as f32, so a finite
    /// f64 entry past `f32::MAX` (finite node transforms multiplied down
    /// the hierarchy) would be written as infinity. Checked at plan time
    /// for the reference node and every bone set's space node (`nodes`),
    /// before any output exists; the error names the node and the value.
    pub fn check(
        &self,
        model: &Model,
        nodes: impl IntoIterator<Item = usize>,
    ) -> rigbake_core::Result<()> {
        for n in nodes {
            let matrix = self.matrix(Some(n));
            let Some(value) = matrix.iter().find(|v| !(**v as f32).is_finite()) else {
                continue;
            };
            return Err(rigbake_core::Error::invalid(
                format!("nodes[{n}]"),
                format!(
                    "the rest-pose global matrix of node `{}` holds {value:e}, past the range of 32-bit floats, in which every mesh file places the model: its transforms and its ancestors' multiply past that range",
                    model.nodes[n].name
                ),
            )
            .with_hint("check the model for absurdly large scales or translations"));
        }
        Ok(())
    }

    /// The rest-pose global matrix of `node` as recorded (the identity for
    /// the scene root, `None`).
    pub fn matrix(&self, node: Option<usize>) -> [f64; 16] {
        node.map_or(Placement::ROOT.matrix, |n| affine(self.globals[n]))
    }

    /// The placement of `node` of `model` (the scene root when `None`).
    pub fn of(&self, model: &Model, node: Option<usize>) -> Placement {
        Placement {
            node: node.map(|n| model.nodes[n].name.clone()),
            matrix: self.matrix(node),
        }
    }

    /// The reference node's matrix: where VAT positions, anchors and
    /// bounds stand.
    pub fn reference(&self, model: &Model) -> [f64; 16] {
        self.matrix(rigbake_core::bake::bounds::reference_node(model))
    }

    /// The record: the reference node's placement, one per bone set (its
    /// space node, in the metadata's `skins` order), and the lookup UV
    /// encoding this version writes.
    pub fn record(&self, model: &Model, space_nodes: &[usize]) -> PlacementMetadata {
        PlacementMetadata {
            reference: self.of(model, rigbake_core::bake::bounds::reference_node(model)),
            skins: space_nodes
                .iter()
                .map(|&n| self.of(model, Some(n)))
                .collect(),
            lookup_uv: LookupUv::SplitIndex,
        }
    }
}

/// A global matrix as recorded: column-major, with the bottom row exactly
/// `0 0 0 1` (products of glTF's affine node transforms are affine; this
/// only removes rounding a projective product could leave).
fn affine(m: DMat4) -> [f64; 16] {
    let mut a = m.to_cols_array();
    a[3] = 0.0;
    a[7] = 0.0;
    a[11] = 0.0;
    a[15] = 1.0;
    a
}
