//! The WGSL runtime shaders, executed on lavapipe, against the CPU runtime
//! reference: both paths, several texture encodings, on the generator's
//! fixtures and on the shared third-party models (CesiumMan, Fox,
//! BrainStem). Tolerances are stated in `rigbake_shader_exec::compare`.
//!
//! Without lavapipe (Debian `mesa-vulkan-drivers`) the tests say so on the
//! real standard error and pass, unless `RIGBAKE_REQUIRE_LAVAPIPE=1`; without
//! the shared models likewise, unless `RIGBAKE_REQUIRE_MODELS=1`.

use std::sync::OnceLock;

use rigbake_core::layout::MatrixLayout;
use rigbake_shader_exec::bakes::{self, Loaded, VatShape};
use rigbake_shader_exec::compare::{self, BonePrecision, Stats};
use rigbake_shader_exec::encode::VatEncoding;
use rigbake_shader_exec::gpu::{self, Gpu};
use rigbake_shader_exec::kernel::{self, Kernels};
use rigbake_shader_exec::render_check;
use rigbake_shader_exec::states;

/// One device and one compiled module for the whole test binary (lavapipe
/// compiles shaders with LLVM, which takes a moment).
fn gpu(test: &str) -> Option<&'static (Gpu, Kernels)> {
    static GPU: OnceLock<Result<(Gpu, Kernels), String>> = OnceLock::new();
    let made = GPU.get_or_init(|| {
        let gpu = gpu::Gpu::lavapipe()?;
        // A shipped shader that does not compile fails every test.
        let kernels = Kernels::new(&gpu).unwrap_or_else(|e| panic!("{e}"));
        Ok((gpu, kernels))
    });
    match made {
        Ok(pair) => Some(pair),
        Err(why) if gpu::required() => panic!("{test}: {}=1 but {why}", gpu::REQUIRE_ENV),
        Err(why) => {
            gpu::say(&format!(
                "SKIPPED {test}: {why} (set {}=1 to fail instead)",
                gpu::REQUIRE_ENV
            ));
            None
        }
    }
}

/// Checks `stats` of `what` and prints them past the harness's capture.
fn check(what: &str, stats: &Stats) {
    gpu::say(&format!(
        "shader-exec {what}: {} vertices ({} with normals), max position error {:e} ({:.2} ulps of S), \
         max normal error {:e} ({:.2} ulps of A), up to {} rows, lerp {}",
        stats.vertices,
        stats.normals,
        stats.max_position,
        stats.max_position_ulps,
        stats.max_normal,
        stats.max_normal_ulps,
        stats.coverage.0,
        stats.coverage.1
    ));
    assert!(stats.vertices > 0, "{what}: nothing was compared");
    assert!(
        stats.position_failures == 0 && stats.normal_failures == 0,
        "{what}: GPU and CPU differ beyond tolerance:\n{}",
        stats.failures.join("\n")
    );
}

/// Both paths of `loaded` in every encoding.
fn both_paths(gpu: &Gpu, kernels: &Kernels, loaded: &Loaded, max_influences: usize) {
    for (layout, precision) in [
        (MatrixLayout::Mat4, BonePrecision::F32),
        (MatrixLayout::Mat3x4, BonePrecision::F32),
        (MatrixLayout::Mat4, BonePrecision::F16),
        (MatrixLayout::Qts, BonePrecision::F32),
        (MatrixLayout::Qts, BonePrecision::F16),
        (MatrixLayout::Qts, BonePrecision::Unorm16),
    ] {
        let stats = compare::bone_path(gpu, kernels, loaded, layout, precision, max_influences)
            .unwrap_or_else(|e| panic!("{e}"));
        check(
            &format!("{} bones {layout:?} {precision:?}", loaded.name),
            &stats,
        );
        assert_eq!(stats.coverage, (4, true), "{}: state coverage", loaded.name);
    }
    for encoding in [
        VatEncoding::Exr32,
        VatEncoding::Exr16,
        VatEncoding::Png16Octahedral,
        VatEncoding::Png16Bounds,
        VatEncoding::Png16Packed,
        VatEncoding::Unorm8,
        VatEncoding::Unorm10,
    ] {
        let stats = compare::vat_path(gpu, kernels, loaded, encoding, VatShape::cli_default())
            .unwrap_or_else(|e| panic!("{e}"));
        check(&format!("{} vat {encoding:?}", loaded.name), &stats);
        assert_eq!(stats.coverage, (4, true), "{}: state coverage", loaded.name);
    }
}

/// The tentacle's `wave` (204 vertices, 61 frames) in a 128 x 128 VAT:
/// two texture rows per frame, padded texels and rows.
const NARROW: VatShape = VatShape {
    max_texture_size: 128,
    power_of_two: true,
    atlas: false,
};

/// Wrapped at 128 texels, never padded (folding happens in the test).
const WRAPPED: VatShape = VatShape {
    max_texture_size: 128,
    power_of_two: false,
    atlas: false,
};

fn tentacle_wave() -> Loaded {
    fixture(
        "tentacle.glb (wave)",
        rigbake_fixtures::models::tentacle(),
        &["wave"],
    )
}

fn fixture(name: &str, builder: rigbake_fixtures::builder::Builder, clips: &[&str]) -> Loaded {
    Loaded::from_bytes(name, &builder.to_glb(), clips).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn tentacle_fixture_matches_on_both_paths() {
    let Some((gpu, kernels)) = gpu("tentacle_fixture_matches_on_both_paths") else {
        return;
    };
    let loaded = fixture("tentacle.glb", rigbake_fixtures::models::tentacle(), &[]);
    both_paths(gpu, kernels, &loaded, 4);
    // Several texture rows per frame, padded texels and rows.
    let wave = tentacle_wave();
    for encoding in [VatEncoding::Exr32, VatEncoding::Png16Octahedral] {
        let stats = compare::vat_path(gpu, kernels, &wave, encoding, NARROW)
            .unwrap_or_else(|e| panic!("{e}"));
        check(
            &format!("{} vat {encoding:?} {NARROW:?}", wave.name),
            &stats,
        );
        assert!(stats.max_bands > 1, "{NARROW:?} gives one band");
    }
}

#[test]
fn folded_bone_textures_match_on_the_gpu() {
    // The tentacle's 92 rows within 64 texels fold into 2 column blocks of
    // 46 rows (its 8 joints are 32 texels wide in mat4, 24 in mat3x4, 16
    // in qts): the shaders' folded addressing against the CPU reference's.
    let Some((gpu, kernels)) = gpu("folded_bone_textures_match_on_the_gpu") else {
        return;
    };
    let loaded = fixture("tentacle.glb", rigbake_fixtures::models::tentacle(), &[]);
    assert_eq!(loaded.timeline.rows, 92);
    for layout in [MatrixLayout::Mat4, MatrixLayout::Mat3x4, MatrixLayout::Qts] {
        let (stats, folds) = compare::bone_path_within(gpu, kernels, &loaded, layout, 4, 64)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            folds
                .iter()
                .all(|f| f.blocks_per_page == 2 && f.rows_per_block == 46),
            "{layout:?}: {folds:?}"
        );
        check(&format!("{} folded bones {layout:?}", loaded.name), &stats);
        assert_eq!(stats.coverage, (4, true), "{}: state coverage", loaded.name);
    }
}

#[test]
fn atlas_vat_matches_on_the_gpu() {
    // two_skins' two primitives (4 and 6 vertices) share one atlas: the
    // second one's vertices start at set vertex 4, which the shaders must
    // add to the vertex index.
    let Some((gpu, kernels)) = gpu("atlas_vat_matches_on_the_gpu") else {
        return;
    };
    let loaded = fixture("two_skins.glb", rigbake_fixtures::models::two_skins(), &[]);
    let shape = VatShape {
        max_texture_size: 64,
        power_of_two: false,
        atlas: true,
    };
    for encoding in [VatEncoding::Exr32, VatEncoding::Png16Bounds] {
        let stats = compare::vat_path(gpu, kernels, &loaded, encoding, shape)
            .unwrap_or_else(|e| panic!("{e}"));
        check(&format!("{} atlas vat {encoding:?}", loaded.name), &stats);
        assert!(
            stats.max_first_vertex > 0,
            "a primitive starts after the first"
        );
    }
}

#[test]
fn folded_and_paged_vats_match_on_the_gpu() {
    // The tentacle (204 vertices, 92 rows) at 128 texels wraps into 2 bands
    // (184 texel rows): within 128, 64 frames fit a block and one 128-wide
    // block fills a page, so 2 pages of 46 rows. two_skins' atlas (10
    // vertices, 31 rows) within 20 texels: 2 blocks of 16 rows side by side
    // on one page. Both against the CPU reference reading one view per page.
    let Some((gpu, kernels)) = gpu("folded_and_paged_vats_match_on_the_gpu") else {
        return;
    };
    let loaded = fixture("tentacle.glb", rigbake_fixtures::models::tentacle(), &[]);
    for encoding in [VatEncoding::Exr32, VatEncoding::Png16Octahedral] {
        let stats = compare::vat_path_folded(gpu, kernels, &loaded, encoding, WRAPPED, Some(128))
            .unwrap_or_else(|e| panic!("{e}"));
        check(&format!("{} paged vat {encoding:?}", loaded.name), &stats);
        assert!(stats.max_pages > 1, "paged: {stats:?}");
        assert!(stats.coverage.1, "a row lerps into the next");
    }
    let loaded = fixture("two_skins.glb", rigbake_fixtures::models::two_skins(), &[]);
    let shape = VatShape {
        max_texture_size: 64,
        power_of_two: false,
        atlas: true,
    };
    for encoding in [VatEncoding::Exr16, VatEncoding::Png16Bounds] {
        let stats = compare::vat_path_folded(gpu, kernels, &loaded, encoding, shape, Some(20))
            .unwrap_or_else(|e| panic!("{e}"));
        check(&format!("{} folded vat {encoding:?}", loaded.name), &stats);
        assert_eq!(stats.max_pages, 1, "{stats:?}");
        assert!(stats.max_blocks_per_page > 1, "{stats:?}");
        assert!(stats.max_first_vertex > 0, "the atlas's second primitive");
    }
}

#[test]
fn eight_influences_fill_all_four_channels() {
    let Some((gpu, kernels)) = gpu("eight_influences_fill_all_four_channels") else {
        return;
    };
    let loaded = fixture(
        "eight_influences.glb",
        rigbake_fixtures::models::eight_influences(),
        &[],
    );
    let bake = bakes::bone_bake(&loaded, MatrixLayout::Mat4, 8).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(bake.channels, 4, "8 influences take UV1..UV4");
    both_paths(gpu, kernels, &loaded, 8);
}

fn shared_model(test: &str, relative: &str) {
    let Some(dir) = rigbake_fixtures::testkit::models::shared_models(test) else {
        return;
    };
    let Some((gpu, kernels)) = gpu(test) else {
        return;
    };
    let loaded = Loaded::from_file(&dir.join(relative)).unwrap_or_else(|e| panic!("{e}"));
    both_paths(gpu, kernels, &loaded, 4);
}

#[test]
fn cesium_man_matches_on_both_paths() {
    shared_model("cesium_man_matches_on_both_paths", "khronos/CesiumMan.glb");
}

#[test]
fn fox_matches_on_both_paths() {
    shared_model("fox_matches_on_both_paths", "khronos/Fox.glb");
}

#[test]
fn brain_stem_matches_on_both_paths() {
    shared_model("brain_stem_matches_on_both_paths", "khronos/BrainStem.glb");
}

/// The shipped WGSL with `from` (which must occur exactly once) replaced.
fn broken(from: &str, to: &str) -> String {
    let text = kernel::source();
    assert_eq!(text.matches(from).count(), 1, "`{from}` in rigbake.wgsl");
    text.replace(from, to)
}

#[test]
fn a_deliberately_broken_shader_is_caught() {
    let Some((gpu, _)) = gpu("a_deliberately_broken_shader_is_caught") else {
        return;
    };
    let loaded = tentacle_wave();
    let bones = |k: &Kernels| {
        compare::bone_path(gpu, k, &loaded, MatrixLayout::Mat4, BonePrecision::F32, 4)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let vat = |k: &Kernels, e: VatEncoding| {
        compare::vat_path(gpu, k, &loaded, e, NARROW).unwrap_or_else(|e| panic!("{e}"))
    };
    let compile = |text: String| Kernels::with_source(gpu, text).unwrap_or_else(|e| panic!("{e}"));

    // Frame lerp at half the fraction: both paths' positions move.
    let k = compile(broken(
        "return a + (b - a) * t;",
        "return a + (b - a) * (t * 0.5);",
    ));
    assert!(
        bones(&k).position_failures > 0,
        "bone path: lerp not caught"
    );
    assert!(
        vat(&k, VatEncoding::Exr32).position_failures > 0,
        "VAT path: lerp not caught"
    );

    // A flipped cofactor row: bone-path normals turn.
    let k = compile(broken("let k2 = cross(c0, c1);", "let k2 = cross(c1, c0);"));
    let stats = bones(&k);
    assert!(
        stats.normal_failures > 0,
        "bone path: normal matrix not caught"
    );
    assert_eq!(
        stats.position_failures, 0,
        "positions do not use the cofactors"
    );

    // The octahedral fold reading the wrong axis: VAT normals turn.
    let k = compile(broken(
        "n.x = (1.0 - abs(y)) * sign_not_zero(x);",
        "n.x = (1.0 - abs(x)) * sign_not_zero(x);",
    ));
    let stats = vat(&k, VatEncoding::Png16Octahedral);
    assert!(
        stats.normal_failures > 0,
        "VAT path: octahedral decode not caught"
    );
    assert_eq!(stats.position_failures, 0);

    // Texel rows addressed without the bands (the narrow VAT has two per
    // frame): VAT positions move.
    let k = compile(broken(
        "return vec3<u32>(x, row * vat.bands + band, 0u);",
        "return vec3<u32>(x, row + band, 0u);",
    ));
    assert!(
        vat(&k, VatEncoding::Exr32).position_failures > 0,
        "VAT path: addressing not caught"
    );

    // Folded rows: every page read as the first (the tentacle in 2 pages),
    // and every block read as the first column block (two_skins' atlas in 2
    // blocks side by side): positions move.
    let full = fixture("tentacle.glb", rigbake_fixtures::models::tentacle(), &[]);
    let two_skins = fixture("two_skins.glb", rigbake_fixtures::models::two_skins(), &[]);
    let atlas = VatShape {
        max_texture_size: 64,
        power_of_two: false,
        atlas: true,
    };
    let k = compile(broken(
        "(row % vat.rows_per_block) * vat.bands + band, block / per_page);",
        "(row % vat.rows_per_block) * vat.bands + band, 0u);",
    ));
    let paged = compare::vat_path_folded(gpu, &k, &full, VatEncoding::Exr32, WRAPPED, Some(128))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(paged.position_failures > 0, "VAT path: pages not caught");
    let k = compile(broken(
        "return vec3<u32>((block % per_page) * vat.width + x,",
        "return vec3<u32>(x,",
    ));
    let folded = compare::vat_path_folded(gpu, &k, &two_skins, VatEncoding::Exr32, atlas, Some(20))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        folded.position_failures > 0,
        "VAT path: column blocks not caught"
    );
}

/// Checks a point drawing against the reference's points.
/// With `posed`, the state is far from the undeformed mesh, and the check
/// must tell the two apart.
fn check_render(what: &str, r: &render_check::RenderCheck, posed: bool) {
    gpu::say(&format!("shader-exec {what}: {r:?}"));
    assert!(r.covered > 0, "{what}: nothing drawn");
    // Pixels a point near an edge might reach are left out of `union`;
    // every other pixel must agree.
    assert!(
        r.agreeing == r.union && r.union * 10 >= r.covered * 9,
        "{what}: only {} of {} pixels agree with the reference",
        r.agreeing,
        r.union
    );
    assert!(
        !posed || r.undeformed_agreeing * 2 < r.union,
        "{what}: the undeformed mesh agrees as well ({} of {} pixels)",
        r.undeformed_agreeing,
        r.union
    );
}

#[test]
fn shipped_vertex_entry_points_draw_the_reference_pose() {
    let Some((gpu, _)) = gpu("shipped_vertex_entry_points_draw_the_reference_pose") else {
        return;
    };
    let loaded = tentacle_wave();
    let cases = states::schedule(&loaded.clips(), loaded.timeline.rows as u32);
    for case in cases.iter().filter(|c| c.state.enabled) {
        // Frame 3.37 of `wave` is far from the bind pose and from frame 0
        // (the VAT playback mesh); other states may not be.
        let posed = case.label == "between frames";
        let what = format!("bone_vertex, {}", case.label);
        let r = render_check::render_bones(gpu, &loaded, case, [0.0; 4])
            .unwrap_or_else(|e| panic!("{e}"));
        check_render(&what, &r, posed);
        let what = format!("vat_vertex, {}", case.label);
        let r = render_check::render_vat(gpu, &loaded, case, [0.0; 4])
            .unwrap_or_else(|e| panic!("{e}"));
        check_render(&what, &r, posed);
    }
}

/// The entry points apply the instance's root motion (`root_motion_apply`,
/// docs/root-motion.md) as the runtime reference does: the points drawn
/// with a motion of (0.6, 0, -0.4) and a 40-degree turn land where the CPU
/// puts the reference's vertices moved by it. The camera is fitted to the
/// moved points, so a shader that ignored the motion would draw off them.
#[test]
fn shipped_vertex_entry_points_apply_root_motion() {
    let Some((gpu, _)) = gpu("shipped_vertex_entry_points_apply_root_motion") else {
        return;
    };
    let loaded = tentacle_wave();
    let cases = states::schedule(&loaded.clips(), loaded.timeline.rows as u32);
    let case = cases
        .iter()
        .find(|c| c.label == "between frames")
        .expect("a state between frames");
    let motion = [0.6, 0.0, -0.4, 40f32.to_radians()];
    let r =
        render_check::render_bones(gpu, &loaded, case, motion).unwrap_or_else(|e| panic!("{e}"));
    check_render("bone_vertex with root motion", &r, true);
    let r = render_check::render_vat(gpu, &loaded, case, motion).unwrap_or_else(|e| panic!("{e}"));
    check_render("vat_vertex with root motion", &r, true);
}
