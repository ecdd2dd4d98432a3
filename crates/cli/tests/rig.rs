//! Anchors, rigid props and pre-baked blends.

mod common;

use std::path::Path;

use common::reference::{clip_of_row, deform, diagonal, direct_global, mesh_node, pose_at};
use common::{bake, glb_primitive, read_exr, shared_models};
use glam::{DMat4, DVec3, Mat4, Vec4};
use rigbake_core::bake::anchors::AnchorTracks;
use rigbake_core::eval::sample::LocalPose;
use rigbake_core::import::{ImportOptions, import_file};
use rigbake_core::runtime::anchor_path::AnchorTrackView;
use rigbake_core::runtime::{ClipInfo, PlayMode};
use rigbake_core::timeline::SampleRule;
use rigbake_format::container::Container;
use rigbake_format::meta::{AnchorReason, ClipOrigin, PropMode};

fn container(out: &Path, name: &str) -> Container<std::io::BufReader<std::fs::File>> {
    let mut c = Container::open(&out.join(name).join(format!("{name}.rigbake"))).unwrap();
    c.verify().unwrap();
    c
}

/// The anchor tracks stored in a container, as the core type.
fn tracks(c: &mut Container<std::io::BufReader<std::fs::File>>) -> AnchorTracks {
    let rig = c.records().rig.as_ref().expect("a rig record").clone();
    let bytes = c
        .read_section(rig.anchor_section.expect("anchor tracks") as usize)
        .unwrap();
    let data: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let rows = data.len() / 16 / rig.anchors.len();
    AnchorTracks {
        reference: None,
        nodes: vec![0; rig.anchors.len()],
        rows,
        data,
    }
}

#[test]
fn greenman_sockets_match_direct_evaluation_and_interpolate_between_frames() {
    let Some(models) =
        shared_models("greenman_sockets_match_direct_evaluation_and_interpolate_between_frames")
    else {
        return;
    };
    let model_path = models.join("raylib/greenman.glb");
    let out = tempfile::tempdir().unwrap();
    let sockets = ["socket_hat", "socket_hand_L", "socket_hand_R"];
    let mut flags = vec!["--anchors-exr"];
    for s in sockets {
        flags.extend(["--anchor", s]);
    }
    let r = bake(std::slice::from_ref(&model_path), out.path(), &flags);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut c = container(out.path(), "greenman");
    let rig = c.records().rig.as_ref().unwrap().clone();
    let names: Vec<&str> = rig.anchors.iter().map(|a| a.node.as_str()).collect();
    assert_eq!(names, sockets);
    assert!(
        rig.anchors
            .iter()
            .all(|a| a.reason == AnchorReason::Requested)
    );
    let t = tracks(&mut c);
    let meta = c.metadata().clone();
    let model = import_file(&model_path, &ImportOptions::default()).unwrap();
    let reference = mesh_node(&model, rig.reference_node.as_deref().unwrap());
    let socket_nodes: Vec<usize> = sockets
        .iter()
        .map(|s| model.nodes.iter().position(|n| n.name == *s).unwrap())
        .collect();

    // The EXR export holds the same numbers (pixel 4a + c = column c).
    let exr = read_exr(
        &out.path()
            .join("greenman")
            .join(rig.anchor_texture.as_deref().unwrap()),
    );
    assert_eq!((exr.width, exr.height), (4 * sockets.len(), t.rows));
    assert_eq!(exr.data, t.data);

    let mut pose = LocalPose::rest(&model);
    let mut worst = 0.0f64;
    let mut extent = Vec::new();
    for row in 0..t.rows {
        let (clip, frame) = clip_of_row(&meta.clips, row);
        pose_at(&model, clip, frame, &mut pose);
        let inv_ref = direct_global(&model, &pose, reference).inverse();
        for (a, &node) in socket_nodes.iter().enumerate() {
            let direct = inv_ref * direct_global(&model, &pose, node);
            let baked = t.matrix(row, a).as_dmat4();
            extent.push(direct.w_axis.truncate());
            for (x, y) in direct.to_cols_array().iter().zip(baked.to_cols_array()) {
                worst = worst.max((x - y).abs());
            }
        }
    }
    // Matrix entries are rotations (order 1) and translations in model units
    // (the model is about 2 units tall): f32 storage keeps 1e-6.
    assert!(worst < 1e-5, "anchor matrices differ by {worst}");
    let diag = diagonal(extent.into_iter());
    assert!(diag > 0.1, "sockets move around the model ({diag})");

    // Mid-frame samples lie between their neighbours.
    for (c, clip) in meta.clips.iter().enumerate() {
        let info = ClipInfo {
            start_row: clip.start_row,
            frames: clip.frames,
            fps: clip.fps,
            duration: clip.duration,
            looping: clip.looping,
            rule: match meta.options.sampling {
                rigbake_format::meta::SamplingRule::FixedRate => SampleRule::FixedRate,
                rigbake_format::meta::SamplingRule::EvenSpread => SampleRule::EvenSpread,
            },
        };
        let first = clip.start_row as usize;
        for f in 0..clip.frames as usize - 1 {
            let time = (info.frame_time(f as u32) + info.frame_time(f as u32 + 1)) / 2.0;
            for a in 0..sockets.len() {
                let m0 = t.matrix(first + f, a).as_dmat4();
                let m1 = t.matrix(first + f + 1, a).as_dmat4();
                let view = AnchorTrackView {
                    anchors: t.nodes.len(),
                    data: &t.data,
                };
                let mid = view.sample(a, &info, time, PlayMode::Once);
                let (p0, p1, pm) = (
                    m0.w_axis.truncate(),
                    m1.w_axis.truncate(),
                    mid.w_axis.truncate(),
                );
                assert!(
                    (pm - (p0 + p1) * 0.5).length() < 1e-6,
                    "clip {c} frame {f}: translation"
                );
                let q = |m: DMat4| m.to_scale_rotation_translation().1.normalize();
                let (q0, q1, qm) = (q(m0), q(m1), q(mid));
                // Halfway along the shortest arc between the two frames'
                // rotations: the normalised sum of q0 and q1 (q1 negated
                // when it is on the other hemisphere), which is slerp at
                // u = 0.5 without using any slerp code. Both angles to the
                // ends are then half the span.
                let q1_near = if q0.dot(q1) < 0.0 { -q1 } else { q1 };
                let expected = (q0 + q1_near).normalize();
                let off = qm.angle_between(expected);
                assert!(
                    off < 1e-5,
                    "clip {c} frame {f}: rotation {off} rad from the slerp midpoint"
                );
                let span = q0.angle_between(q1);
                assert!(
                    (qm.angle_between(q0) - span / 2.0).abs() < 1e-5
                        && (qm.angle_between(q1) - span / 2.0).abs() < 1e-5,
                    "clip {c} frame {f}: not halfway"
                );
            }
        }
    }

    // The hat, placed by socket_hat's anchor, sits on the body's head: its
    // centre lies inside the top third of the body's box.
    let hat = import_file(
        &models.join("raylib/greenman_hat.glb"),
        &ImportOptions::default(),
    )
    .unwrap();
    let hat_points: Vec<DVec3> = hat.meshes[0].primitives[0]
        .positions
        .iter()
        .map(|p| p.as_dvec3())
        .collect();
    let centre = hat_points.iter().copied().sum::<DVec3>() / hat_points.len() as f64;
    let body = deform(
        &model,
        &LocalPose::rest(&model),
        reference,
        0,
        Some(reference),
    );
    let (lo, hi) = body.iter().fold(
        (DVec3::splat(f64::MAX), DVec3::splat(f64::MIN)),
        |(lo, hi), v| (lo.min(v.position), hi.max(v.position)),
    );
    let placed = t.matrix(0, 0).as_dmat4().transform_point3(centre);
    let up = (hi - lo).y;
    assert!(
        placed.y > lo.y + up * 0.66 && placed.y < hi.y + up * 0.5,
        "hat at {placed:?}, body {lo:?}..{hi:?}"
    );
}

#[test]
fn knight_props_as_anchors_or_bound_to_their_joints() {
    let Some(models) = shared_models("knight_props_as_anchors_or_bound_to_their_joints") else {
        return;
    };
    let model_path = models.join("kaykit/Knight.glb");
    let model = import_file(&model_path, &ImportOptions::default()).unwrap();
    let clips = ["--clip", "1H_Melee_Attack_Chop", "--clip", "Walking_A"];

    // Anchors mode: every prop is an anchor with its mesh.
    let out = tempfile::tempdir().unwrap();
    let mut flags = clips.to_vec();
    flags.extend(["--props", "anchors"]);
    let r = bake(std::slice::from_ref(&model_path), out.path(), &flags);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut c = container(out.path(), "Knight");
    let rig = c.records().rig.as_ref().unwrap().clone();
    let under: Vec<(&str, &str)> = rig
        .props
        .iter()
        .map(|p| (p.node.as_str(), p.joint.as_str()))
        .collect();
    for (prop, joint) in [
        ("1H_Sword", "handslot.r"),
        ("2H_Sword", "handslot.r"),
        ("Round_Shield", "handslot.l"),
        ("Knight_Helmet", "head"),
    ] {
        assert!(
            under.contains(&(prop, joint)),
            "{prop} under {joint}: {under:?}"
        );
    }
    assert!(rig.props.iter().all(|p| p.mode == PropMode::Anchor));
    let sword = rig
        .anchors
        .iter()
        .position(|a| a.node == "1H_Sword")
        .expect("the sword is an anchor");
    assert_eq!(rig.anchors[sword].reason, AnchorReason::Prop);
    assert!(rig.anchors[sword].mesh.is_some());
    // The anchor places the sword mesh exactly where direct evaluation does.
    let t = tracks(&mut c);
    let meta = c.metadata().clone();
    let reference = mesh_node(&model, rig.reference_node.as_deref().unwrap());
    let sword_node = model
        .nodes
        .iter()
        .position(|n| n.name == "1H_Sword")
        .unwrap();
    let mut pose = LocalPose::rest(&model);
    let mut worst = 0.0f64;
    let mut points = Vec::new();
    for row in 0..t.rows {
        let (clip, frame) = clip_of_row(&meta.clips, row);
        pose_at(&model, clip, frame, &mut pose);
        let direct = deform(&model, &pose, sword_node, 0, Some(reference));
        let anchor = t.matrix(row, sword).as_dmat4();
        for (v, d) in direct.iter().enumerate() {
            let p = model.meshes[model.nodes[sword_node].mesh.unwrap()].primitives[0].positions[v]
                .as_dvec3();
            worst = worst.max(anchor.transform_point3(p).distance(d.position));
            points.push(d.position);
        }
    }
    let diag = diagonal(points.into_iter());
    assert!(
        worst / diag < 1e-5,
        "anchor-placed sword off by {worst} (diag {diag})"
    );

    // Bind mode (default): props are single-influence skinned meshes.
    let out = tempfile::tempdir().unwrap();
    let r = bake(std::slice::from_ref(&model_path), out.path(), &clips);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut c = container(out.path(), "Knight");
    let rig = c.records().rig.as_ref().unwrap().clone();
    assert!(rig.props.iter().all(|p| p.mode == PropMode::Bound));
    assert!(rig.anchors.is_empty(), "bound props need no anchors");
    let w = c.records().weights.as_ref().unwrap().clone();
    let meta = c.metadata().clone();
    let bones = read_exr(&out.path().join("Knight").join(&meta.textures[0].name));
    let mut checked = 0;
    for p in w.primitives.iter().filter(|p| p.bound_to.is_some()) {
        let node = model.nodes.iter().position(|n| n.name == p.node).unwrap();
        let channels = c.read_section(p.section as usize).unwrap();
        let per = w.channels as usize * 16;
        let src = &model.meshes[model.nodes[node].mesh.unwrap()].primitives[p.primitive as usize];
        // Bound positions come from the weights mesh.
        let g = gltf::Gltf::from_slice(
            &std::fs::read(
                out.path()
                    .join("Knight")
                    .join(w.mesh_file.as_deref().unwrap()),
            )
            .unwrap(),
        )
        .unwrap();
        let blob = g.blob.clone().unwrap();
        let prim = glb_primitive(&g, p.mesh_index as usize, p.mesh_primitive as usize);
        let bound: Vec<[f32; 3]> = prim
            .reader(|_| Some(&blob[..]))
            .read_positions()
            .unwrap()
            .collect();
        assert_eq!(bound.len(), src.positions.len());
        let mut points = Vec::new();
        let mut worst = 0.0f64;
        for row in (0..bones.height).step_by(3) {
            let (clip, frame) = clip_of_row(&meta.clips, row);
            pose_at(&model, clip, frame, &mut pose);
            let direct = deform(
                &model,
                &pose,
                node,
                p.primitive as usize,
                Some(mesh_node(
                    &model,
                    &meta.skins[p.skin as usize].mesh_nodes[0],
                )),
            );
            for (v, d) in direct.iter().enumerate() {
                let ch = &channels[v * per..v * per + 16];
                let f = |i: usize| f32::from_le_bytes([ch[i], ch[i + 1], ch[i + 2], ch[i + 3]]);
                assert_eq!(f(4), 1.0, "one influence of weight 1");
                let j = f(0) as usize;
                let px = |k: usize| {
                    let at = (row * bones.width + 4 * j + k) * 4;
                    Vec4::from_slice(&bones.data[at..at + 4])
                };
                let m = Mat4::from_cols(px(0), px(1), px(2), px(3)).as_dmat4();
                let skinned = m.transform_point3(glam::Vec3::from(bound[v]).as_dvec3());
                worst = worst.max(skinned.distance(d.position));
                points.push(d.position);
            }
        }
        let diag = diagonal(points.into_iter());
        assert!(
            worst / diag < 1e-5,
            "{}: bound prop off by {worst} (diag {diag})",
            p.node
        );
        checked += 1;
    }
    assert_eq!(checked, 9, "all nine Knight props are bound");
}

#[test]
fn blends_at_zero_and_one_equal_their_clips_and_show_in_the_metadata() {
    let model = rigbake_fixtures::fixture("two_joint.gltf");
    let out = tempfile::tempdir().unwrap();
    let r = bake(
        std::slice::from_ref(&model),
        out.path(),
        &["--blend", "turn_linear,slide_cubic,0,0.5,1"],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let c = container(out.path(), "two_joint");
    let meta = c.metadata().clone();
    let names: Vec<&str> = meta.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names[3..],
        [
            "turn_linear+slide_cubic@0",
            "turn_linear+slide_cubic@0.5",
            "turn_linear+slide_cubic@1"
        ]
    );
    let origins = &c.records().rig.as_ref().unwrap().clip_origins;
    assert_eq!(origins.len(), 3);
    assert!(
        matches!(&origins[1], ClipOrigin::Blend { clip: 4, first, second, weight } if first == "turn_linear" && second == "slide_cubic" && *weight == 0.5)
    );
    let bones = read_exr(&out.path().join("two_joint").join(&meta.textures[0].name));
    let row = |r: usize| &bones.data[r * bones.width * 4..(r + 1) * bones.width * 4];
    for f in 0..31 {
        for (x, y) in row(93 + f).iter().zip(row(f)) {
            assert!((x - y).abs() <= 1e-6, "weight 0 = turn_linear, frame {f}");
        }
        for (x, y) in row(155 + f).iter().zip(row(62 + f)) {
            assert!((x - y).abs() <= 1e-6, "weight 1 = slide_cubic, frame {f}");
        }
    }
    // Hand-computed mid-weight pose at phase 0.5 (row 124 + 15): turn_linear
    // gives the tip 45 degrees and rest translation (0, 1, 0); slide_cubic
    // gives rest rotation and translation (0.75, 0.625, 0) (see
    // analytic.rs). Blend 0.5: rotation 22.5 degrees, translation
    // (0.375, 0.8125, 0); skin = T(0.375, 0.8125, 0) * Rz(22.5) * T(0, -1, 0).
    let px = |k: usize| {
        let at = ((124 + 15) * bones.width + 4 + k) * 4;
        Vec4::from_slice(&bones.data[at..at + 4])
    };
    let got = Mat4::from_cols(px(0), px(1), px(2), px(3));
    let expected = (DMat4::from_translation(DVec3::new(0.375, 0.8125, 0.0))
        * DMat4::from_rotation_z(22.5f64.to_radians())
        * DMat4::from_translation(DVec3::new(0.0, -1.0, 0.0)))
    .as_mat4();
    assert!(got.abs_diff_eq(expected, 1e-6), "{got:?}\nvs\n{expected:?}");
    // inspect lists the blends.
    let r = common::rigbake(&[
        "inspect".as_ref(),
        out.path().join("two_joint/two_joint.rigbake").as_os_str(),
    ]);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        text.contains("blend of turn_linear and slide_cubic at weight 0.5"),
        "{text}"
    );
}

#[test]
fn automatic_anchors_pick_the_sockets() {
    let Some(models) = shared_models("automatic_anchors_pick_the_sockets") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let files = [
        models.join("raylib/greenman.glb"),
        models.join("kaykit/Knight.glb"),
    ];
    let r = bake(&files, out.path(), &["--anchors", "auto"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let auto = |name: &str| -> Vec<String> {
        container(out.path(), name)
            .records()
            .rig
            .as_ref()
            .unwrap()
            .anchors
            .iter()
            .filter(|a| a.reason == AnchorReason::Auto)
            .map(|a| a.node.clone())
            .collect()
    };
    assert_eq!(
        auto("greenman"),
        ["socket_hat", "socket_hand_L", "socket_hand_R"]
    );
    assert_eq!(auto("Knight"), ["handslot.l", "handslot.r"]);
    let r = common::rigbake(&[
        "inspect".as_ref(),
        out.path().join("Knight/Knight.rigbake").as_os_str(),
    ]);
    assert!(String::from_utf8_lossy(&r.stdout).contains("handslot.r  (auto)"));
}

#[test]
fn props_as_anchors_write_anchors_exr_when_asked() {
    // Issue 19 item 4: `--props anchors --anchors-exr` with no socket named
    // still has anchor tracks (the props), so anchors.exr is written.
    let Some(models) = shared_models("props_as_anchors_write_anchors_exr_when_asked") else {
        return;
    };
    let model_path = models.join("kaykit/Knight.glb");
    let out = tempfile::tempdir().unwrap();
    let flags = ["--clip", "Walking_A", "--props", "anchors", "--anchors-exr"];
    let r = bake(std::slice::from_ref(&model_path), out.path(), &flags);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut c = container(out.path(), "Knight");
    let rig = c.records().rig.as_ref().unwrap().clone();
    assert!(!rig.anchors.is_empty());
    assert!(rig.anchors.iter().all(|a| a.reason == AnchorReason::Prop));
    assert_eq!(rig.anchor_texture.as_deref(), Some("anchors.exr"));
    // The EXR (read with the exr crate) holds the container's tracks.
    let t = tracks(&mut c);
    let exr = read_exr(&out.path().join("Knight/anchors.exr"));
    assert_eq!((exr.width, exr.height), (rig.anchors.len() * 4, t.rows));
    assert_eq!(exr.data, t.data);
    // Without the flag there is none.
    let out = tempfile::tempdir().unwrap();
    let r = bake(std::slice::from_ref(&model_path), out.path(), &flags[..4]);
    assert!(r.status.success());
    assert!(!out.path().join("Knight/anchors.exr").exists());
    assert_eq!(
        container(out.path(), "Knight")
            .records()
            .rig
            .as_ref()
            .unwrap()
            .anchor_texture,
        None
    );
}

#[test]
fn excluded_props_are_not_baked() {
    // Issue 19 item 11: Knight holds five shields on one hand; the manifest
    // key and the flag leave them out (globs or exact names).
    let Some(models) = shared_models("excluded_props_are_not_baked") else {
        return;
    };
    let model_path = models.join("kaykit/Knight.glb");
    let shields = |out: &Path| -> Vec<String> {
        let c = container(out, "Knight");
        c.records()
            .rig
            .as_ref()
            .into_iter()
            .flat_map(|rig| rig.props.iter().map(|p| p.node.clone()))
            .chain(
                c.records()
                    .weights
                    .as_ref()
                    .into_iter()
                    .flat_map(|w| w.primitives.iter().map(|p| p.node.clone())),
            )
            .filter(|n| n.contains("Shield"))
            .collect()
    };
    let out = tempfile::tempdir().unwrap();
    let clip = ["--clip", "Walking_A"];
    let r = bake(std::slice::from_ref(&model_path), out.path(), &clip);
    assert!(r.status.success());
    assert!(
        !shields(out.path()).is_empty(),
        "the shields are baked by default"
    );
    let r = bake(
        std::slice::from_ref(&model_path),
        out.path(),
        &[
            "--clip",
            "Walking_A",
            "--exclude",
            "*_Shield",
            "--exclude",
            "Spike_Shield",
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(shields(out.path()), Vec::<String>::new());
    // The manifest key does the same.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&model_path, dir.path().join("Knight.glb")).unwrap();
    std::fs::write(
        dir.path().join("rigbake.toml"),
        "out = \"out\"\n[[model]]\npath = \"Knight.glb\"\nexclude = [\"*Shield*\"]\n[[model.clip]]\nsource = \"Walking_A\"\n",
    )
    .unwrap();
    let r = common::rigbake(&[
        "bake".as_ref(),
        "--manifest".as_ref(),
        dir.path().join("rigbake.toml").as_os_str(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(shields(&dir.path().join("out")), Vec::<String>::new());
    // An unknown name fails the model, naming it and close names.
    let r = bake(
        std::slice::from_ref(&model_path),
        out.path(),
        &["--clip", "Walking_A", "--exclude", "Round_Sheild"],
    );
    assert_eq!(r.status.code(), Some(1));
    let text = String::from_utf8_lossy(&r.stderr);
    assert!(
        text.contains("Knight.glb")
            && text.contains("`Round_Sheild` matches no node or mesh")
            && text.contains("did you mean `Round_Shield`"),
        "{text}"
    );
}
