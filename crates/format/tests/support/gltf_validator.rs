//! The Khronos glTF-Validator (npm package pinned in `tools/node`), run
//! through `validate_gltf.mjs` beside these tests; shared by the format and
//! CLI test suites, which include this file.

use std::path::Path;
use std::process::Command;

/// Validates `file` and returns the validator's whole JSON report, or `None`
/// with a SKIPPED message when node or the package is missing and
/// `RIGBAKE_REQUIRE_GLTF_VALIDATOR` is not set (CI sets it).
pub fn validate(file: &Path) -> Option<serde_json::Value> {
    // From either crate's folder (crates/format or crates/cli).
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../format/tests/validate_gltf.mjs");
    let out = Command::new("node").arg(script).arg(file).output();
    let required = std::env::var_os("RIGBAKE_REQUIRE_GLTF_VALIDATOR").is_some();
    match out {
        Ok(o) if o.status.success() => {
            Some(serde_json::from_slice(&o.stdout).expect("JSON from the validator script"))
        }
        Ok(o) if o.status.code() == Some(3) && !required => {
            eprintln!("SKIPPED: gltf-validator is not installed (npm ci --prefix tools/node)");
            None
        }
        Ok(o) => panic!(
            "glTF-Validator failed on {}: {}",
            file.display(),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) if !required => {
            eprintln!("SKIPPED: cannot run node: {e}");
            None
        }
        Err(e) => panic!("cannot run node: {e}"),
    }
}
