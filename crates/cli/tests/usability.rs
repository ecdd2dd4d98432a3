//! Issue 19 (trial findings), usability items: error advice, anchors.exr
//! with props as anchors, blends naming baked clips.

mod common;

use common::bake;

fn stderr(r: &std::process::Output) -> String {
    String::from_utf8_lossy(&r.stderr).into_owned()
}

#[test]
fn a_too_tall_bone_texture_advises_fewer_frames_not_the_3x4_layout() {
    // tentacle: 8 joints (32 pixels wide in mat4), 92 frames at 30 fps.
    let out = tempfile::tempdir().unwrap();
    let model = rigbake_fixtures::fixture("tentacle.glb");
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--max-texture-size", "64"],
    );
    assert_eq!(r.status.code(), Some(1));
    let text = stderr(&r);
    assert!(text.contains("32 x 92 pixels"), "{text}");
    assert!(!text.contains("mat3x4"), "the layout only narrows: {text}");
    for advice in [
        "--fps",
        "fewer clips",
        "split",
        "--max-texture-size (up to 65536",
    ] {
        assert!(text.contains(advice), "{advice}: {text}");
    }
    // Too wide (32 > 24 at 5 fps: 17 rows): now the 3x4 layout helps...
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--max-texture-size", "24", "--fps", "5"],
    );
    let text = stderr(&r);
    assert!(text.contains("32 x 17 pixels"), "{text}");
    assert!(
        text.contains("--layout mat3x4") && !text.contains("--fps"),
        "{text}"
    );
    // ...and it does: 24 pixels wide.
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &[
            "--max-texture-size",
            "24",
            "--fps",
            "5",
            "--layout",
            "mat3x4",
        ],
    );
    assert!(r.status.success(), "{}", stderr(&r));
}
