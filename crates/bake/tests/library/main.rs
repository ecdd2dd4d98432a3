//! The library's tests: fixtures and shared models baked, inspected,
//! verified and played back through the `rigbake` crate's API, with no
//! binary. One test binary (each one links the whole library); the
//! command line's own tests (arguments, exit codes, printed text, reports)
//! stay in `crates/cli/tests`.
//!
//! Tests that need the third-party models (`../shared/models`) skip with a
//! notice when the folder is missing and fail when
//! `RIGBAKE_REQUIRE_MODELS` is set (`rigbake_fixtures::testkit::models`).

mod common;

mod bones;
mod budget;
mod clip_errors;
mod compression;
mod inspect;
mod morphs;
mod openvat_progress;
mod packed;
mod preview;
mod scenes;
mod settings;
mod uv_sets;
mod verdicts;
mod verify;
mod weights;
