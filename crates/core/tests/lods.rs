//! LOD groups as the importer finds them (`rigbake_core::lod`): MSFT_lod
//! levels placed beside their base, `_LOD<n>` names (with the plain name as
//! level 0, gaps, duplicates), manifest specs replacing detected groups,
//! and the cases that are ignored rather than refused.

use rigbake_core::import::{ImportOptions, Source, import_slice};
use rigbake_core::lod::{LodSource, LodSpec, apply_specs, drop_meshless};
use rigbake_core::{Model, Result};
use rigbake_fixtures::builder::Builder;
use rigbake_fixtures::lods::{LodStyle, tentacle_lods};
use serde_json::json;

fn import(b: &Builder) -> Result<Model> {
    let source = Source {
        name: "m",
        dir: None,
    };
    import_slice(&b.to_glb(), &source, &ImportOptions::default())
}

fn rename(b: &mut Builder, from: &str, to: &str) {
    let n = b.node_named(from);
    b.get_mut("nodes", n).insert("name".into(), json!(to));
}

/// The group's level node names.
fn levels(m: &Model, group: usize) -> Vec<&str> {
    m.lods[group]
        .levels
        .iter()
        .map(|&n| m.nodes[n].name.as_str())
        .collect()
}

#[test]
fn msft_lod_levels_outside_the_scene_take_their_base_place() {
    let m = import(&tentacle_lods(LodStyle::MsftLod)).unwrap();
    assert_eq!(m.lods.len(), 1);
    assert_eq!(m.lods[0].source, LodSource::MsftLod);
    assert_eq!(
        levels(&m, 0),
        ["tentacle_mesh", "tentacle_mesh_low", "tentacle_mesh_lowest"]
    );
    assert_eq!(m.lods[0].coverage, [0.5, 0.2, 0.01]);
    // The base is a root, so the levels are roots in the scene, with their
    // meshes and skins kept.
    for &n in &m.lods[0].levels {
        assert_eq!(m.nodes[n].parent, None);
        assert!(m.nodes[n].mesh.is_some() && m.nodes[n].skin.is_some());
    }

    // Under a parent: the levels move below the base's parent, which lists
    // them after its own children; parents still come first.
    let mut b = tentacle_lods(LodStyle::MsftLod);
    let base = b.node_named("tentacle_mesh");
    let holder = b.node(json!({"name": "holder", "children": [base]}));
    let scene = b.get_mut("scenes", 0);
    scene.insert("nodes".into(), json!([0, holder]));
    let m = import(&b).unwrap();
    let holder = m.nodes.iter().position(|n| n.name == "holder").unwrap();
    let names: Vec<&str> = m.nodes[holder]
        .children
        .iter()
        .map(|&c| m.nodes[c].name.as_str())
        .collect();
    assert_eq!(
        names,
        ["tentacle_mesh", "tentacle_mesh_low", "tentacle_mesh_lowest"]
    );
    let at = |n: usize| m.topological_order.iter().position(|&k| k == n).unwrap();
    for &n in &m.lods[0].levels {
        assert!(at(holder) < at(n));
    }

    // A malformed coverage list is informational: ignored, not an error.
    let mut b = tentacle_lods(LodStyle::MsftLod);
    let base = b.node_named("tentacle_mesh");
    b.get_mut("nodes", base)
        .insert("extras".into(), json!({"MSFT_screencoverage": [0.5, "x"]}));
    assert!(import(&b).unwrap().lods[0].coverage.is_empty());
}

#[test]
fn msft_lod_on_a_rigid_node_is_ignored_and_a_level_outside_the_base_scene_is_refused() {
    // On a node without a skin: no group, the levels stay out of the scene.
    let mut b = tentacle_lods(LodStyle::MsftLod);
    let base = b.node_named("tentacle_mesh");
    b.get_mut("nodes", base).remove("skin");
    let m = import(&b).unwrap();
    assert!(m.lods.is_empty());
    assert!(!m.nodes.iter().any(|n| n.name == "tentacle_mesh_low"));

    // A level with a parent outside the scene of its base.
    let mut b = tentacle_lods(LodStyle::MsftLod);
    let low = b.node_named("tentacle_mesh_low");
    b.node(json!({"name": "elsewhere", "children": [low]}));
    let e = import(&b).unwrap_err();
    assert!(e.object.contains("MSFT_lod"), "{e}");
    assert!(e.message.contains("outside scene 0"), "{e}");

    // A level that is an ancestor of its base.
    let mut b = tentacle_lods(LodStyle::MsftLod);
    let base = b.node_named("tentacle_mesh");
    let low = b.node_named("tentacle_mesh_low");
    b.get_mut("nodes", low)
        .insert("children".into(), json!([base]));
    b.get_mut("scenes", 0)
        .insert("nodes".into(), json!([0, low]));
    let e = import(&b).unwrap_err();
    assert!(e.message.contains("ancestor of its base"), "{e}");
}

#[test]
fn name_suffixes_group_siblings_in_level_order() {
    // `tentacle` itself is level 0 when no `_LOD0` exists; `_LOD2` before
    // `_LOD1` in the file still gives levels in number order.
    let mut b = tentacle_lods(LodStyle::NameSuffix);
    rename(&mut b, "tentacle_LOD0", "tentacle");
    rename(&mut b, "tentacle_LOD1", "tentacle_lod5");
    let m = import(&b).unwrap();
    assert_eq!(m.lods.len(), 1);
    assert_eq!(m.lods[0].source, LodSource::NameSuffix);
    assert_eq!(
        levels(&m, 0),
        ["tentacle", "tentacle_LOD2", "tentacle_lod5"]
    );

    // Two nodes claiming one level.
    let mut b = tentacle_lods(LodStyle::NameSuffix);
    rename(&mut b, "tentacle_LOD2", "tentacle_LOD1");
    let e = import(&b).unwrap_err();
    assert!(e.message.contains("both level 1"), "{e}");

    // No level 0: no group (and nothing refused).
    let mut b = tentacle_lods(LodStyle::NameSuffix);
    rename(&mut b, "tentacle_LOD0", "body");
    assert!(import(&b).unwrap().lods.is_empty());

    // Levels under different parents are different names.
    let mut b = tentacle_lods(LodStyle::NameSuffix);
    let lod2 = b.node_named("tentacle_LOD2");
    let holder = b.node(json!({"name": "holder", "children": [lod2]}));
    let scene = b.get_mut("scenes", 0);
    let roots: Vec<serde_json::Value> = scene["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| **v != json!(lod2))
        .cloned()
        .chain([json!(holder)])
        .collect();
    scene.insert("nodes".into(), json!(roots));
    let m = import(&b).unwrap();
    assert_eq!(levels(&m, 0), ["tentacle_LOD0", "tentacle_LOD1"]);
}

#[test]
fn manifest_specs_replace_detected_groups_and_excluded_levels_leave() {
    let mut m = import(&tentacle_lods(LodStyle::NameSuffix)).unwrap();
    let spec = LodSpec {
        base: "tentacle_LOD0".into(),
        levels: vec!["tentacle_LOD2".into()],
    };
    apply_specs(&mut m, &[spec]).unwrap();
    assert_eq!(m.lods.len(), 1);
    assert_eq!(m.lods[0].source, LodSource::Manifest);
    assert_eq!(levels(&m, 0), ["tentacle_LOD0", "tentacle_LOD2"]);

    // A node named twice, or a base listing itself.
    let mut m = import(&tentacle_lods(LodStyle::Plain)).unwrap();
    let twice = LodSpec {
        base: "tentacle_mesh".into(),
        levels: vec!["tentacle_mesh".into()],
    };
    let e = apply_specs(&mut m, &[twice]).unwrap_err();
    assert!(e.message.contains("twice in this group"), "{e}");
    let empty = LodSpec {
        base: "tentacle_mesh".into(),
        levels: Vec::new(),
    };
    let e = apply_specs(&mut m, &[empty]).unwrap_err();
    assert!(e.message.contains("0 lower levels"), "{e}");

    // A level whose mesh was excluded leaves; a group of one is none.
    let mut m = import(&tentacle_lods(LodStyle::MsftLod)).unwrap();
    let low = m
        .nodes
        .iter()
        .position(|n| n.name == "tentacle_mesh_low")
        .unwrap();
    m.nodes[low].mesh = None;
    drop_meshless(&mut m);
    assert_eq!(levels(&m, 0), ["tentacle_mesh", "tentacle_mesh_lowest"]);
    assert!(m.lods[0].coverage.is_empty());
    let lowest = m.lods[0].levels[1];
    m.nodes[lowest].mesh = None;
    drop_meshless(&mut m);
    assert!(m.lods.is_empty());
}
