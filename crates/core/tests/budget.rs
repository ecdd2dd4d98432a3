//! The per-model work budget against real models: every shared model, baked
//! with every output at 30 fps, fits the default budget, and the estimate
//! grows with the plan as the documented formulas say.

use std::path::{Path, PathBuf};

use rigbake_core::budget::{BonesPlan, Budget, Plan, VatPlan, estimate};
use rigbake_core::import::{ImportOptions, import_file};

/// The shared third-party models (`RIGBAKE_MODELS`, else `../shared/models`
/// beside the repository), or `None` with a visible skip unless
/// `RIGBAKE_REQUIRE_MODELS` is set.
fn shared_models() -> Option<PathBuf> {
    let dir = std::env::var_os("RIGBAKE_MODELS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"),
        PathBuf::from,
    );
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("RIGBAKE_REQUIRE_MODELS").is_none(),
        "RIGBAKE_REQUIRE_MODELS is set but {} is missing",
        dir.display()
    );
    println!("SKIPPED: no shared models at {}", dir.display());
    None
}

fn models(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for group in std::fs::read_dir(dir).unwrap() {
        let group = group.unwrap().path();
        if !group.is_dir() || group.ends_with("unsupported") || group.ends_with("tools") {
            continue;
        }
        for file in std::fs::read_dir(&group).unwrap() {
            let file = file.unwrap().path();
            if matches!(
                file.extension().and_then(|e| e.to_str()),
                Some("glb" | "gltf")
            ) {
                out.push(file);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_shared_model_fits_the_default_budget_with_every_output() {
    let Some(dir) = shared_models() else { return };
    for file in models(&dir) {
        let model = import_file(&file, &ImportOptions::default()).unwrap();
        // 30 fps, every clip: frames = ceil(duration * 30) + 1.
        let rows: usize = model
            .clips
            .iter()
            .map(|c| (c.duration * 30.0).ceil() as usize + 1)
            .sum();
        let plan = Plan {
            rows,
            bones: Some(BonesPlan::per_skin(&model, 4)),
            vat: Some(VatPlan {
                normals: true,
                tangents: true,
                bytes_per_texel: 16,
            }),
            weights: true,
            anchors: model.nodes.len(),
        };
        let e = Budget::default()
            .check_plan(&model, &plan)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(e.output_bytes > 0 || rows == 0, "{}", file.display());
        // Twice the rows, at least twice the per-row work.
        let double = estimate(
            &model,
            &Plan {
                rows: rows * 2,
                ..plan.clone()
            },
        );
        assert!(
            double.evaluations >= 2 * e.evaluations,
            "{}",
            file.display()
        );
    }
}
