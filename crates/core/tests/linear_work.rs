//! Work that must stay linear (or n log n) in the input, measured with the
//! work counters of `rigbake_core::work` rather than wall-clock time: rigid
//! props under a deep chain, the direct evaluation of a deep skeleton, and
//! the duplicate check of many baked clip names. Each input is large enough
//! that quadratic work would count hundreds of millions of steps.

use glam::DVec3;
use rigbake_core::bake::anchors::find_props;
use rigbake_core::bake::bone_sets;
use rigbake_core::bake::vat::NormalConvention;
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::import::{ImportOptions, Source, import_slice};
use rigbake_core::reference::{DirectGlobals, deform, direct_global};
use rigbake_core::timeline::{ClipRequest, ClipSpec, SampleRule, Sampling, Timeline};
use rigbake_core::work::{self, Counter};
use rigbake_core::{ErrorKind, Model};
use rigbake_fixtures::models::two_joint;
use rigbake_fixtures::parts::{PrimitiveData, add_mesh, primitive};
use rigbake_fixtures::{Builder, Component};
use serde_json::json;

fn import(b: &Builder) -> Model {
    let source = Source {
        name: "work",
        dir: None,
    };
    import_slice(&b.to_glb(), &source, &ImportOptions::default()).expect("imports")
}

/// `two_joint` with a chain of `depth` nodes under `tip` (node 1), each
/// 0.001 above its parent; returns the builder and the chain's nodes.
fn chain_under_tip(
    depth: usize,
    node: impl Fn(usize) -> serde_json::Value,
) -> (Builder, Vec<usize>) {
    let mut b = two_joint();
    let mut parent = 1;
    let mut chain = Vec::with_capacity(depth);
    for k in 0..depth {
        let n = b.node(node(k));
        b.add_child(parent, n);
        chain.push(n);
        parent = n;
    }
    (b, chain)
}

#[test]
fn props_along_a_deep_chain_are_found_in_one_pass() {
    // 20,000 rigid meshes, each one level below the previous, all under the
    // joint `tip`: walking up from each prop would take 200 million steps.
    const DEPTH: usize = 20_000;
    let mut b = two_joint();
    let data = PrimitiveData {
        positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        ..PrimitiveData::default()
    };
    let prim = primitive(&mut b, &data, Component::U16);
    let mesh = add_mesh(&mut b, "prop", vec![prim]);
    let mut parent = 1;
    for k in 0..DEPTH {
        let n = b.node(
            json!({"name": format!("prop{k}"), "mesh": mesh, "translation": [0.0, 0.001, 0.0]}),
        );
        b.add_child(parent, n);
        parent = n;
    }
    let model = import(&b);
    let sets = bone_sets(&model);
    work::take(Counter::PropNodeVisits);
    let props = find_props(&model, &sets);
    let visits = work::take(Counter::PropNodeVisits);
    assert!(
        visits <= model.nodes.len() as u64,
        "{visits} node visits for {} nodes",
        model.nodes.len()
    );
    assert_eq!(props.len(), DEPTH);
    let tip = model.nodes.iter().position(|n| n.name == "tip").unwrap();
    for (k, prop) in props.iter().enumerate() {
        assert_eq!(model.nodes[prop.node].name, format!("prop{k}"));
        assert_eq!((prop.set, prop.joint, prop.joint_node), (0, 1, tip));
    }
    // The static offset from the joint is the product of the rest matrices
    // in between: the deepest prop sits 20 units above `tip` (0.001 is an
    // f32 in the file).
    let offset = props[DEPTH - 1]
        .offset
        .expect("nothing animated in between");
    let t = offset.transform_point3(DVec3::ZERO);
    assert!(
        (t - DVec3::new(0.0, 0.001 * DEPTH as f64, 0.0)).length() < 1e-5,
        "{t}"
    );
}

#[test]
fn direct_evaluation_of_a_deep_skeleton_computes_each_global_once() {
    // A skin of 10,000 joints in one chain: deforming its mesh needs every
    // joint's global; walking each joint's chain would be 50 million products.
    const DEPTH: usize = 9_998;
    let (mut b, chain) = chain_under_tip(
        DEPTH,
        |k| json!({"name": format!("link{k}"), "translation": [0.0, 0.001, 0.0], "rotation": [0.0, 0.0, 0.0078539008887, 0.9999691576]}),
    );
    let mut joints = vec![json!(0), json!(1)];
    joints.extend(chain.iter().map(|&n| json!(n)));
    b.get_mut("skins", 0).insert("joints".into(), json!(joints));
    b.get_mut("skins", 0).remove("inverseBindMatrices");
    let model = import(&b);
    assert_eq!(model.skins[0].joints.len(), 10_000);
    let mesh_node = model.nodes.iter().position(|n| n.mesh.is_some()).unwrap();
    let pose = LocalPose::rest(&model);
    work::take(Counter::ReferenceProducts);
    let vertices = deform(
        &model,
        &pose,
        mesh_node,
        0,
        Some(mesh_node),
        NormalConvention::InverseTranspose,
    );
    let products = work::take(Counter::ReferenceProducts);
    assert!(
        products <= model.nodes.len() as u64,
        "{products} matrix products for {} nodes",
        model.nodes.len()
    );
    assert_eq!(vertices.len(), 10);
    // The same globals as walking each chain, within rounding.
    let mut globals = DirectGlobals::new(&model, &pose);
    for node in chain
        .iter()
        .copied()
        .step_by(997)
        .chain([chain[DEPTH - 1], 0, 1])
    {
        let want = direct_global(&model, &pose, node);
        let got = globals.get(node);
        let scale = want
            .to_cols_array()
            .iter()
            .fold(1.0f64, |m, v| m.max(v.abs()));
        for (a, b) in got.to_cols_array().iter().zip(want.to_cols_array()) {
            assert!(
                (a - b).abs() <= 1e-9 * scale,
                "nodes[{node}]: {got} vs {want}"
            );
        }
    }
}

/// `n` blend clips of the two `two_joint` animations, named `blend{k}`.
fn blends(n: usize) -> Vec<ClipSpec> {
    (0..n)
        .map(|k| ClipSpec {
            request: ClipRequest::Blend {
                a: "turn_linear".into(),
                b: "turn_step".into(),
                weight: k as f64 / n as f64,
            },
            name: Some(format!("blend{k}")),
            looping: None,
            root_motion: None,
        })
        .collect()
}

#[test]
fn many_clip_names_are_checked_in_n_log_n() {
    // 300,000 blend weights: comparing each name with all earlier ones would
    // take 45 billion comparisons.
    const N: usize = 300_000;
    let model = import(&two_joint());
    let sampling = Sampling {
        fps: 1.0,
        rule: SampleRule::FixedRate,
    };
    let bound = |n: usize| 2 * n as u64 * (n as f64).log2().ceil() as u64 + n as u64;
    let mut specs = blends(N);
    work::take(Counter::ClipNameComparisons);
    let timeline = Timeline::plan(&model, sampling, &specs).expect("distinct names plan");
    let comparisons = work::take(Counter::ClipNameComparisons);
    assert!(
        comparisons <= bound(N),
        "{comparisons} name comparisons for {N} clips"
    );
    assert_eq!(timeline.clips.len(), N);
    // A duplicate is still found, and the first one repeated is named.
    specs[200_000].name = Some("blend17".into());
    specs[250_000].name = Some("blend5".into());
    specs[299_999].name = Some("blend5".into());
    let e = Timeline::plan(&model, sampling, &specs).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Invalid);
    assert!(
        e.message.contains("two baked clips are named `blend17`"),
        "{e}"
    );
    assert!(work::take(Counter::ClipNameComparisons) <= bound(N));
}

#[test]
fn many_named_anchors_resolve_by_hash() {
    use rigbake_core::bake::anchors::find_nodes;
    // 100,000 sockets named explicitly: one pass over the nodes, not one
    // per name.
    let (mut b, chain) = chain_under_tip(100_000, |k| json!({"name": format!("socket{k}")}));
    let twin = b.node(json!({"name": "socket7"}));
    b.add_child(1, twin);
    let model = import(&b);
    let names: Vec<String> = (0..100_000)
        .rev()
        .filter(|&k| k != 7)
        .map(|k| format!("socket{k}"))
        .collect();
    let found = find_nodes(&model, &names).unwrap();
    let want: Vec<usize> = chain
        .iter()
        .rev()
        .copied()
        .filter(|&n| n != chain[7])
        .collect();
    assert_eq!(found, want);
    let e = find_nodes(&model, &["socket3", "nope"]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Invalid);
    assert!(e.message.contains("no node named `nope`"), "{e}");
    // A name two nodes share is refused (never the first one silently),
    // and either is named by its index.
    let e = find_nodes(&model, &["socket7"]).unwrap_err();
    assert!(e.message.contains("`socket7` names 2 nodes"), "{e}");
    assert!(e.message.contains(&format!("#{}", chain[7])), "{e}");
    let picked = find_nodes(&model, &[format!("#{twin}")]).unwrap();
    assert_eq!(picked, [twin]);
}

/// `n` LOD groups named `m<i>` / `m<i>_LOD1` (siblings under `root`, each
/// instancing the skinned strip), and `n` more given by `MSFT_lod`.
fn many_lod_groups(n: usize) -> Builder {
    let mut b = two_joint();
    for i in 0..n {
        for name in [format!("m{i}"), format!("m{i}_LOD1")] {
            let node = b.node(json!({"name": name, "mesh": 0, "skin": 0}));
            b.add_child(0, node);
        }
        let level = b.node(json!({"name": format!("k{i}_low"), "mesh": 0, "skin": 0}));
        b.add_child(0, level);
        let base = b.node(json!({
            "name": format!("k{i}"), "mesh": 0, "skin": 0,
            "extensions": {"MSFT_lod": {"ids": [level]}}
        }));
        b.add_child(0, base);
    }
    b.root.insert("extensionsUsed".into(), json!(["MSFT_lod"]));
    b
}

#[test]
fn lod_grouping_and_chain_checks_visit_each_node_a_bounded_number_of_times() {
    // Each `_LOD1` group used to look for its plain-named level 0 by
    // scanning every node, and each MSFT_lod level was compared with every
    // group's base: quadratic in the groups.
    let mut visits = Vec::new();
    for n in [500usize, 2_000] {
        let b = many_lod_groups(n);
        work::take(Counter::LodNodeVisits);
        let model = import(&b);
        visits.push(work::take(Counter::LodNodeVisits));
        assert_eq!(model.lods.len(), 2 * n, "every group found");
        assert!(
            visits.last().copied().unwrap() <= 4 * model.nodes.len() as u64,
            "{visits:?}"
        );
    }
    assert!(visits[1] < 5 * visits[0], "{visits:?}");
}
