//! The scene setting (`import.scene`, `--scene N`, the manifest's
//! `scene`): only the chosen scene of a file is baked; by default the
//! file's own `scene`, else scene 0.

use rigbake::report::Outcome;
use rigbake_format::container::Container;

use crate::common::{bake, settings};

#[test]
fn only_the_chosen_scene_is_baked() {
    let dir = tempfile::tempdir().unwrap();
    // Scene 0 (the default) holds an unskinned mesh; scene 1 a skinned one
    // with clips `move_b`, `both` and `bend` (`move_a` animates scene 0 only).
    let model = dir.path().join("scenes.glb");
    std::fs::write(&model, rigbake_fixtures::spec_cases::two_scenes().to_glb()).unwrap();

    let r = bake(&model, &dir.path().join("default"), &settings(|_| {}));
    assert!(
        matches!(r.outcome, Outcome::Skipped { .. }),
        "{:?}",
        r.outcome
    );

    let out = dir.path().join("one");
    bake(&model, &out, &settings(|s| s.import.scene = Some(1))).baked();
    let c = Container::open(&out.join("scenes/scenes.rigbake")).unwrap();
    let clips: Vec<&str> = c.metadata().clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(clips, ["move_b", "both", "bend"]);

    let r = bake(
        &model,
        &dir.path().join("seven"),
        &settings(|s| s.import.scene = Some(7)),
    );
    let error = r.error();
    assert!(error.contains("scene"), "{error}");
}
