//! Preview posing: which (clip, frame) cells a preview shows, every
//! primitive posed at each (from the bake through the runtime reference, or
//! directly from the source), the default camera fitted to them, and the
//! pictures rendered by `rigbake-preview`. Writing the PNG is the caller's
//! business.

pub mod picture;
pub mod scene;

use rayon::prelude::*;
use rigbake_preview::{Axes, Camera, Extent, Frame, MeshRef};

use crate::playback::Loaded;
use scene::{PathChoice, PosedMesh, Producer, Topology};

/// What to render: a grid of (clip, frame) cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The path shown.
    pub path: PathChoice,
    /// Cells in reading order.
    pub cells: Vec<(usize, u32)>,
    /// Cells per row.
    pub columns: u32,
    /// Pixels per cell side.
    pub size: u32,
}

/// The frames of a clip of `frames` frames shown in `columns` columns:
/// `round(j * (frames - 1) / (columns - 1))` for column `j`.
pub fn spaced_frames(frames: u32, columns: u32) -> Vec<u32> {
    let last = frames.max(1) - 1;
    if columns <= 1 {
        return vec![0];
    }
    (0..columns)
        .map(|j| (f64::from(j) * f64::from(last) / f64::from(columns - 1)).round() as u32)
        .collect()
}

/// Largest number of pixels a sheet or an animation may have (3 bytes each).
pub const MAX_PIXELS: u64 = 1 << 28;

/// Poses every cell of `plan`, from the bake or directly from the source.
pub fn pose_cells(
    loaded: &Loaded,
    plan: &Plan,
    topology: &Topology,
    producer: Producer,
) -> Vec<Vec<PosedMesh>> {
    plan.cells
        .par_iter()
        .map(|&(clip, frame)| scene::pose(loaded, topology, plan.path, producer, clip, frame))
        .collect()
}

fn extent_of(axes: &Axes, meshes: &[PosedMesh]) -> Extent {
    Extent::of(
        axes,
        meshes.iter().flat_map(|m| m.positions.iter().copied()),
    )
}

/// The default camera fitted to every position of every posed cell.
pub fn fit_camera(cells: &[Vec<PosedMesh>], size: u32) -> Camera {
    let axes = Axes::default_view();
    let extent = cells
        .iter()
        .map(|c| extent_of(&axes, c))
        .fold(Extent::EMPTY, Extent::merge);
    Camera::fit_extent(&axes, &extent, size)
}

/// The default camera fitted to every cell of `plan`, posing the cells in
/// parallel without keeping them (the same camera as [`fit_camera`]).
pub fn fit_plan_camera(
    loaded: &Loaded,
    plan: &Plan,
    topology: &Topology,
    producer: Producer,
) -> Camera {
    let axes = Axes::default_view();
    let extents: Vec<Extent> = plan
        .cells
        .par_iter()
        .map(|&(clip, frame)| {
            extent_of(
                &axes,
                &scene::pose(loaded, topology, plan.path, producer, clip, frame),
            )
        })
        .collect();
    let extent = extents.into_iter().fold(Extent::EMPTY, Extent::merge);
    Camera::fit_extent(&axes, &extent, plan.size)
}

/// Renders one posed cell with `camera`.
pub fn render(meshes: &[PosedMesh], topology: &Topology, camera: &Camera) -> Frame {
    let mut frame = Frame::new(camera.size);
    for m in meshes {
        frame.draw(
            &MeshRef {
                positions: &m.positions,
                normals: m.normals.as_deref(),
                triangles: &topology.triangles[m.topology],
                mirrored: m.mirrored,
            },
            camera,
        );
    }
    frame
}

/// Renders each posed cell with `camera`.
pub fn render_cells(cells: &[Vec<PosedMesh>], topology: &Topology, camera: &Camera) -> Vec<Frame> {
    cells
        .par_iter()
        .map(|meshes| render(meshes, topology, camera))
        .collect()
}

/// Poses and renders cells `first..first + count` of `plan`, in parallel,
/// keeping only their pixels.
pub fn render_range(
    loaded: &Loaded,
    plan: &Plan,
    topology: &Topology,
    camera: &Camera,
    first: usize,
    count: usize,
) -> Vec<Frame> {
    plan.cells[first..(first + count).min(plan.cells.len())]
        .par_iter()
        .map(|&(clip, frame)| {
            let meshes = scene::pose(loaded, topology, plan.path, Producer::Bake, clip, frame);
            render(&meshes, topology, camera)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_spaced_evenly_from_first_to_last() {
        assert_eq!(spaced_frames(61, 5), [0, 15, 30, 45, 60]);
        assert_eq!(spaced_frames(1, 4), [0, 0, 0, 0]);
        assert_eq!(spaced_frames(10, 1), [0]);
        assert_eq!(spaced_frames(4, 8), [0, 0, 1, 1, 2, 2, 3, 3]);
    }
}
