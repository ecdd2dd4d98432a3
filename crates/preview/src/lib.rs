//! rigbake-preview: a small software renderer that lets people see a bake.
//!
//! - [`camera`]: the documented default camera, orthographic, fitted to
//!   bounds;
//! - [`raster`]: triangles into a frame with a depth test and back-face
//!   culling, shaded by normal;
//! - [`sheet`]: frames laid out in a grid (the contact sheet).
//!
//! Everything is single-threaded per frame, with integer (fixed-point)
//! coverage and a fixed drawing order, so the same inputs always give the
//! same pixels. It knows nothing about bakes or files: callers hand it
//! positions, normals and triangles.

pub mod camera;
pub mod label;
pub mod raster;
pub mod sheet;

pub use camera::{Axes, Camera, Extent};
pub use raster::{Frame, MeshRef};
