//! How a 4x4 matrix is laid out in RGBA pixels: the bone-matrix textures,
//! the anchor tracks and the runtime's texture views all share this leaf
//! (SPEC section 4, `formats/bone-matrix-texture.md`).
//!
//! With `m[row][col]` the matrix of joint `j`:
//! - [`MatrixLayout::Mat4`]: pixel `4j + c` holds column `c`:
//!   `(m[0][c], m[1][c], m[2][c], m[3][c])`.
//! - [`MatrixLayout::Mat3x4`]: pixel `3j + r` holds row `r`:
//!   `(m[r][0], m[r][1], m[r][2], m[r][3])`; the last row is `(0, 0, 0, 1)`.

pub use rigbake_types::MatrixLayout;
