//! `--scene N` (and the manifest's `scene`): only the chosen scene of a file
//! is baked; by default the file's own `scene`, else scene 0.

use std::process::Command;

use rigbake_format::container::Container;

fn bake(model: &std::path::Path, out: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let r = Command::new(env!("CARGO_BIN_EXE_rigbake"))
        .arg("bake")
        .arg(model)
        .arg("--out")
        .arg(out)
        .args(["--json", "--quiet"])
        .args(extra)
        .output()
        .unwrap();
    serde_json::from_slice(&r.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&r.stderr)))
}

#[test]
fn only_the_chosen_scene_is_baked() {
    let dir = tempfile::tempdir().unwrap();
    // Scene 0 (the default) holds an unskinned mesh; scene 1 a skinned one
    // with clips `move_b`, `both` and `bend` (`move_a` animates scene 0 only).
    let model = dir.path().join("scenes.glb");
    std::fs::write(&model, rigbake_fixtures::spec_cases::two_scenes().to_glb()).unwrap();

    let r = bake(&model, &dir.path().join("default"), &[]);
    assert_eq!(r["models"][0]["status"], "skipped", "{r:#}");

    let out = dir.path().join("one");
    let r = bake(&model, &out, &["--scene", "1"]);
    assert_eq!(r["models"][0]["status"], "baked", "{r:#}");
    let c = Container::open(&out.join("scenes/scenes.rigbake")).unwrap();
    let clips: Vec<&str> = c.metadata().clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(clips, ["move_b", "both", "bend"]);

    let r = bake(&model, &dir.path().join("seven"), &["--scene", "7"]);
    assert_eq!(r["models"][0]["status"], "failed", "{r:#}");
    let error = r["models"][0]["message"].as_str().unwrap_or_default();
    assert!(error.contains("scene"), "{error}");
}
