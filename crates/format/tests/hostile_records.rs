//! Records that decode but lie: counts, indices, names and numbers a reader
//! would trust to allocate, loop, open a file or give a verdict. Each one is
//! written into an otherwise valid container (so every checksum is right) and
//! must be refused when the container is opened, with a message naming the
//! field.

use std::io::Cursor;

use rigbake_format::codec;
use rigbake_format::container::{Container, ContainerWriter};
use rigbake_format::meta::{
    BakeOptions, ClipMeta, ClipOrigin, Deformation, DirectionEncoding, Encoding, MatrixLayout,
    Metadata, NormalConvention, RigMetadata, SamplingRule, SkinMeta, SourceFile, Storage,
    TextureKind, TextureMeta, Tool, VatEncoding, VatMetadata, VatPrimitiveMeta, VatStream,
    VatTextureMeta, WeightsMetadata, WeightsPrimitiveMeta,
};
use rigbake_format::records::SectionKind;
use rigbake_format::texture::Precision;

/// A consistent bake: 2 joints, 33 rows, one VAT primitive of 10 vertices.
fn metadata() -> Metadata {
    Metadata {
        tool: Tool {
            name: "rigbake".into(),
            version: "0.1.0".into(),
        },
        source: SourceFile {
            file_name: "model.glb".into(),
            sha256: "ab".repeat(32),
            bytes: 1234,
        },
        options: BakeOptions {
            fps: 30.0,
            sampling: SamplingRule::FixedRate,
            layout: MatrixLayout::Mat4,
            precision: Precision::F32,
            max_texture_size: 8192,
        },
        clips: vec![
            ClipMeta {
                name: "walk".into(),
                start_row: 0,
                frames: 31,
                fps: 30.0,
                duration: 1.0,
                looping: true,
            },
            ClipMeta {
                name: "die".into(),
                start_row: 31,
                frames: 2,
                fps: 30.0,
                duration: 0.05,
                looping: false,
            },
        ],
        skins: vec![SkinMeta {
            name: "skin".into(),
            joints: vec!["root".into(), "tip".into()],
            parents: vec![-1, 0],
            mesh_nodes: vec!["mesh".into()],
            texture: 0,
        }],
        textures: vec![TextureMeta {
            kind: TextureKind::BoneMatrices,
            name: "bones.skin0.exr".into(),
            width: 8,
            height: 33,
            layout: MatrixLayout::Mat4,
            precision: Precision::F32,
            encoding: Encoding::ExrZip,
            bytes: 100,
            crc32: 0,
            storage: Storage::File,
            max_error: 0.0,
        }],
    }
}

fn vat() -> VatMetadata {
    VatMetadata {
        reference_node: None,
        normal_convention: NormalConvention::InverseTranspose,
        encoding: VatEncoding::Exr32,
        direction_encoding: DirectionEncoding::Float,
        max_texture_size: 8192,
        power_of_two: false,
        playback_file: Some("model.vat.glb".into()),
        primitives: vec![VatPrimitiveMeta {
            node: "mesh".into(),
            mesh: "mesh".into(),
            primitive: 0,
            deformation: Deformation::Skinned,
            morphed: false,
            vertices: 10,
            frames: 33,
            width: 10,
            bands: 1,
            height: 33,
            positions: 0,
            normals: None,
            tangents: None,
            playback_mesh: 0,
        }],
        static_primitives: vec![],
        textures: vec![VatTextureMeta {
            stream: VatStream::Positions,
            name: "mesh.p0.positions.exr".into(),
            width: 10,
            height: 33,
            channels: 4,
            encoding: VatEncoding::Exr32,
            direction_encoding: DirectionEncoding::Float,
            bounds: None,
            bytes: 100,
            crc32: 0,
            storage: Storage::File,
            max_error: 0.0,
        }],
    }
}

fn weights() -> WeightsMetadata {
    WeightsMetadata {
        max_influences: 4,
        channels: 2,
        mesh_file: Some("model.weights.glb".into()),
        primitives: vec![WeightsPrimitiveMeta {
            node: "mesh".into(),
            mesh: "mesh".into(),
            primitive: 0,
            skin: 0,
            vertices: 1,
            section: 0,
            dropped_max: 0.0,
            dropped_mean: 0.0,
            position_error: 0.0,
            bound_to: None,
            mesh_index: 0,
            mesh_primitive: 0,
        }],
    }
}

fn rig() -> RigMetadata {
    RigMetadata {
        reference_node: None,
        anchors: vec![],
        anchor_section: None,
        anchor_texture: None,
        props: vec![],
        clip_origins: vec![ClipOrigin::Range {
            clip: 1,
            source: "walk".into(),
            start: 0.0,
            end: 1.0,
        }],
    }
}

/// Finishes `out` with metadata `m` and opens the bytes: `Ok` when the
/// reader accepts them, else its message.
fn finish_and_open(out: ContainerWriter<Cursor<Vec<u8>>>, m: &Metadata) -> Result<(), String> {
    let (cursor, _) = out.finish(m).unwrap();
    let bytes = cursor.into_inner();
    Container::from_reader(Cursor::new(&bytes[..]))
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Writes a container holding the records (weights vertex data first, so
/// its section index 0 is right) and opens it.
fn open(m: &Metadata, v: &VatMetadata, w: &WeightsMetadata, r: &RigMetadata) -> Result<(), String> {
    let mut out = ContainerWriter::new(Cursor::new(Vec::new())).unwrap();
    let vertex_data = vec![0u8; (w.primitives[0].vertices * w.channels * 16) as usize];
    out.add_section(SectionKind::VertexData, &vertex_data)
        .unwrap();
    out.add_section(SectionKind::Vat, &codec::encode(v).unwrap())
        .unwrap();
    out.add_section(SectionKind::Weights, &codec::encode(w).unwrap())
        .unwrap();
    out.add_section(SectionKind::Rig, &codec::encode(r).unwrap())
        .unwrap();
    finish_and_open(out, m)
}

/// Opens the consistent records with one change, expecting an error that
/// contains `needle`.
fn refused(
    needle: &str,
    change: impl FnOnce(&mut Metadata, &mut VatMetadata, &mut WeightsMetadata, &mut RigMetadata),
) {
    let (mut m, mut v, mut w, mut r) = (metadata(), vat(), weights(), rig());
    change(&mut m, &mut v, &mut w, &mut r);
    match open(&m, &v, &w, &r) {
        Ok(()) => panic!("a container whose records say `{needle}` was accepted"),
        Err(e) => assert!(e.contains(needle), "expected `{needle}` in: {e}"),
    }
}

#[test]
fn the_consistent_records_are_accepted() {
    open(&metadata(), &vat(), &weights(), &rig()).unwrap();
}

#[test]
fn non_finite_or_negative_numbers_are_refused() {
    refused("the bake's fps", |m, _, _, _| m.options.fps = f64::NAN);
    refused("clips[0].fps", |m, _, _, _| m.clips[0].fps = -30.0);
    refused("clips[1].duration", |m, _, _, _| {
        m.clips[1].duration = f64::INFINITY
    });
    refused("textures[0].max_error", |m, _, _, _| {
        m.textures[0].max_error = f64::NAN
    });
    refused("textures[0].max_error", |m, _, _, _| {
        m.textures[0].max_error = -1.0
    });
    refused("vat.textures[0].max_error", |_, v, _, _| {
        v.textures[0].max_error = f64::NAN
    });
    refused("position_error", |_, _, w, _| {
        w.primitives[0].position_error = f64::INFINITY
    });
    refused("dropped_max", |_, _, w, _| {
        w.primitives[0].dropped_max = f64::NAN
    });
    refused("clip_origins[0].start", |_, _, _, r| {
        r.clip_origins[0] = ClipOrigin::Range {
            clip: 0,
            source: "walk".into(),
            start: f64::NAN,
            end: 1.0,
        }
    });
}

#[test]
fn clip_rows_beyond_the_textures_are_refused() {
    // A clip claiming 2^32-1 frames must not become a frame list.
    refused("clips need", |m, _, _, _| m.clips[1].frames = 9);
    refused("has no frames", |m, _, _, _| m.clips[0].frames = 0);
    // Without any texture to bound them, rows are still capped.
    refused("more than the limit of 1048576", |m, v, _, _| {
        m.clips[1].frames = u32::MAX - 31;
        m.textures.clear();
        m.skins.clear();
        v.primitives.clear();
        v.textures.clear();
    });
    refused("vat.primitives[0] has 33 frames", |m, _, _, _| {
        m.clips[1].frames = 3;
        m.textures[0].height = 34;
    });
}

#[test]
fn indices_out_of_range_are_refused() {
    refused("vat.primitives[0].positions", |_, v, _, _| {
        v.primitives[0].positions = 7
    });
    refused("vat.primitives[0].normals", |_, v, _, _| {
        v.primitives[0].normals = Some(u32::MAX)
    });
    refused("skins[0].texture", |m, _, _, _| m.skins[0].texture = 1);
    refused("weights.primitives[0].skin", |_, _, w, _| {
        w.primitives[0].skin = 3
    });
    refused("rig.clip_origins[0].clip", |_, _, _, r| {
        r.clip_origins[0] = ClipOrigin::Blend {
            clip: 9,
            first: "a".into(),
            second: "b".into(),
            weight: 0.5,
        }
    });
    refused("parents[1]", |m, _, _, _| m.skins[0].parents[1] = 5);
}

#[test]
fn sizes_that_disagree_with_the_layout_are_refused() {
    refused("pixels wide", |m, _, _, _| m.textures[0].width = 9);
    refused("outside 1..=8192", |m, _, _, _| m.textures[0].width = 65535);
    refused("outside 1..=65536", |m, _, _, _| {
        m.options.max_texture_size = u32::MAX
    });
    refused("cannot hold 10 vertices", |_, v, _, _| {
        v.primitives[0].width = 5
    });
    refused("do not fit 33 rows", |_, v, _, _| v.primitives[0].bands = 2);
    refused("texture is 10 x 33", |_, v, _, _| {
        v.primitives[0].height = 66
    });
    refused("channels, not 3 or 4", |_, v, _, _| {
        v.textures[0].channels = 200
    });
    refused("weights.channels", |_, _, w, _| w.channels = 1);
    refused("weights.max_influences", |_, _, w, _| w.max_influences = 9);
}

#[test]
fn names_that_leave_the_bake_folder_are_refused() {
    for name in ["/dev/zero", "../../etc/passwd", "a/b.exr", "", ".."] {
        refused("textures[0].name", |m, _, _, _| {
            m.textures[0].name = name.into()
        });
        refused("vat.textures[0].name", |_, v, _, _| {
            v.textures[0].name = name.into()
        });
    }
    refused("vat.playback_file", |_, v, _, _| {
        v.playback_file = Some("/tmp/x.glb".into())
    });
    refused("weights.mesh_file", |_, _, w, _| {
        w.mesh_file = Some("../x.glb".into())
    });
    refused("rig.anchor_texture", |_, _, _, r| {
        r.anchor_texture = Some("/dev/zero".into())
    });
}

#[test]
fn the_shared_bone_store_stays_addressable() {
    let mut m = metadata();
    m.textures[0].name = format!("../_shared/bones/{}.exr", "0f".repeat(32));
    open(&m, &vat(), &weights(), &rig()).unwrap();
}

/// The consistent records plus a VAT compression record (`None`: the
/// compression record alone, without the VAT record), opened.
fn open_with_compression(
    vat_record: Option<&VatMetadata>,
    c: &rigbake_format::meta::VatCompressionMetadata,
) -> Result<(), String> {
    let mut out = ContainerWriter::new(Cursor::new(Vec::new())).unwrap();
    if let Some(v) = vat_record {
        out.add_section(SectionKind::Vat, &codec::encode(v).unwrap())
            .unwrap();
    }
    out.add_section(SectionKind::VatCompression, &codec::encode(c).unwrap())
        .unwrap();
    let (cursor, _) = out.finish(&metadata()).unwrap();
    let bytes = cursor.into_inner();
    Container::from_reader(Cursor::new(&bytes[..]))
        .map(|c| {
            assert!(c.records().vat_compression.as_ref().is_some());
        })
        .map_err(|e| e.to_string())
}

#[test]
fn compression_records_that_disagree_with_the_vat_record_are_refused() {
    use rigbake_format::meta::{TextureCompression as C, VatCompressionMetadata};
    let record = |requested, textures: Vec<C>| VatCompressionMetadata {
        requested,
        textures,
    };
    let v = vat();
    open_with_compression(Some(&v), &record(C::Piz, vec![C::Piz])).unwrap();
    let cases = [
        (Some(&v), record(C::Zip, vec![]), "lists 0 textures"),
        (
            Some(&v),
            record(C::Zip, vec![C::Zip, C::Zip]),
            "lists 2 textures",
        ),
        (
            Some(&v),
            record(C::Deflate, vec![C::Zip]),
            "requested is deflate",
        ),
        (
            Some(&v),
            record(C::None, vec![C::Deflate]),
            "is Deflate for a Exr32",
        ),
        (None, record(C::None, vec![C::None]), "without a VAT record"),
    ];
    for (vat_record, c, needle) in cases {
        let e = open_with_compression(vat_record, &c).unwrap_err();
        assert!(e.contains(needle), "expected `{needle}` in: {e}");
    }
    // A PNG texture must say deflate.
    let mut png = vat();
    png.encoding = VatEncoding::Png16;
    png.textures[0].encoding = VatEncoding::Png16;
    png.textures[0].bounds = Some([[0.0; 4], [1.0; 4]]);
    png.textures[0].direction_encoding = DirectionEncoding::Float;
    open_with_compression(Some(&png), &record(C::None, vec![C::Deflate])).unwrap();
    let e = open_with_compression(Some(&png), &record(C::None, vec![C::None])).unwrap_err();
    assert!(e.contains("is None for a Png16"), "{e}");
}

// ---------------------------------------------------------------------------
// Folded VATs (format 1.8): the VAT of `vat()` folded at a 16-texel maximum,
// 33 rows of 10 texels in 3 pages of 11 rows, and its layout record.

fn folded_vat() -> (VatMetadata, rigbake_format::meta::LayoutMetadata) {
    use rigbake_format::meta::{FoldMeta, FoldedTexture, LayoutMetadata, VatPlacement};
    let mut v = vat();
    v.max_texture_size = 16;
    v.primitives[0].height = 11;
    let page = v.textures[0].clone();
    v.textures = (0..3)
        .map(|k| VatTextureMeta {
            name: format!("mesh.p0.positions.page{k}.exr"),
            height: 11,
            ..page.clone()
        })
        .collect();
    let layout = LayoutMetadata {
        vat: Some(VatPlacement {
            layout: rigbake_format::meta::VatLayoutMode::PerPrimitive,
            first_vertex: vec![0],
        }),
        folds: vec![FoldMeta {
            texture: FoldedTexture::Vat(0),
            rows_per_block: 11,
            row_height: 1,
            block_width: 10,
            blocks_per_page: 1,
            pages: 3,
        }],
    };
    (v, layout)
}

fn open_folded(v: &VatMetadata, l: &rigbake_format::meta::LayoutMetadata) -> Result<(), String> {
    finish_and_open(folded_writer(v, l), &metadata())
}

/// A writer holding the consistent weights and `v` folded by `l`.
fn folded_writer(
    v: &VatMetadata,
    l: &rigbake_format::meta::LayoutMetadata,
) -> ContainerWriter<Cursor<Vec<u8>>> {
    let w = weights();
    let mut out = ContainerWriter::new(Cursor::new(Vec::new())).unwrap();
    let vertex_data = vec![0u8; (w.primitives[0].vertices * w.channels * 16) as usize];
    out.add_section(SectionKind::VertexData, &vertex_data)
        .unwrap();
    out.add_section(SectionKind::Vat, &codec::encode(v).unwrap())
        .unwrap();
    out.add_section(SectionKind::Weights, &codec::encode(&w).unwrap())
        .unwrap();
    out.add_section(SectionKind::Layout, &codec::encode(l).unwrap())
        .unwrap();
    out
}

#[test]
fn malformed_vat_folds_are_refused() {
    use rigbake_format::meta::{FoldedTexture, VatStream};
    let (v, l) = folded_vat();
    open_folded(&v, &l).expect("the folded VAT is consistent");
    let refused =
        |needle: &str,
         change: &dyn Fn(&mut VatMetadata, &mut rigbake_format::meta::LayoutMetadata)| {
            let (mut v, mut l) = folded_vat();
            change(&mut v, &mut l);
            match open_folded(&v, &l) {
                Ok(()) => panic!("a folded VAT with `{needle}` was accepted"),
                Err(e) => assert!(e.contains(needle), "expected `{needle}` in: {e}"),
            }
        };
    // Without its fold the pages are too short for the rows.
    refused("33 frames of 1 bands do not fit 11 rows", &|_, l| {
        l.folds.clear()
    });
    refused("has a zero count", &|_, l| l.folds[0].rows_per_block = 0);
    refused("holds 22 rows, but the clips need 33", &|_, l| {
        l.folds[0].pages = 2
    });
    refused(
        "fold makes 10 x 12 pages, but the texture is 10 x 11",
        &|v, l| {
            l.folds[0].rows_per_block = 12;
            v.primitives[0].height = 11;
        },
    );
    refused("fold blocks of 10 x 2 texels", &|_, l| {
        l.folds[0].row_height = 2
    });
    refused("fold makes 20 x 11 pages", &|_, l| {
        l.folds[0].blocks_per_page = 2
    });
    // Pages beyond the texture table (a huge count is refused before any
    // loop over it).
    refused(
        "4294967295 pages from texture 0, but there are 3",
        &|_, l| l.folds[0].pages = u32::MAX,
    );
    refused("3 pages from texture 0, but there are 2", &|v, _| {
        v.textures.pop();
    });
    // A page of another size or stream.
    refused("texture 2 is a 10 x 12", &|v, _| v.textures[2].height = 12);
    refused("texture 1 is a 10 x 11 Normals page", &|v, _| {
        v.textures[1].stream = VatStream::Normals
    });
    // A fold of a texture no primitive reads, or twice the same page.
    refused("VAT texture 1 is no primitive's", &|_, l| {
        let mut f = l.folds[0];
        f.texture = FoldedTexture::Vat(1);
        f.pages = 1;
        l.folds.push(f);
    });
    refused("its texture is folded twice", &|_, l| {
        let f = l.folds[0];
        l.folds.push(f);
    });
}

/// A LOD record of one group (the weights entry as level 0, a level with
/// no entries as level 1) and its detail record, level 1 from a file.
fn lod_records() -> (
    rigbake_format::meta::LodsMetadata,
    rigbake_format::meta::LodDetailsMetadata,
) {
    use rigbake_format::meta::{
        LodDetailsMetadata, LodFileMeta, LodGroupMeta, LodLevelDetail, LodLevelMeta, LodSource,
        LodsMetadata,
    };
    let level = |node: &str, weights: Vec<u32>| LodLevelMeta {
        node: node.into(),
        mesh: "m".into(),
        vertices: 10,
        triangles: 4,
        screen_coverage: None,
        weights_file: None,
        weights_primitives: weights,
        vat_primitives: vec![],
    };
    let detail = |file: Option<LodFileMeta>, max_influences: u32| LodLevelDetail {
        file,
        max_influences,
        dropped_max: 0.0,
        position_error: 0.0,
    };
    (
        LodsMetadata {
            groups: vec![LodGroupMeta {
                source: LodSource::Manifest,
                levels: vec![level("mesh", vec![0]), level("mesh_LOD1/mesh", vec![])],
            }],
        },
        LodDetailsMetadata {
            groups: vec![vec![
                detail(None, 4),
                detail(
                    Some(LodFileMeta {
                        relative_path: Some("../models/mesh_LOD1.glb".into()),
                        file_name: "mesh_LOD1.glb".into(),
                        sha256: "0f".repeat(32),
                        node: "mesh".into(),
                    }),
                    2,
                ),
            ]],
        },
    )
}

/// Opens the consistent records plus a LOD record (when given) and the
/// LOD detail record.
fn open_lods(
    lods: Option<&rigbake_format::meta::LodsMetadata>,
    details: &rigbake_format::meta::LodDetailsMetadata,
) -> Result<(), String> {
    let (m, w) = (metadata(), weights());
    let mut out = ContainerWriter::new(Cursor::new(Vec::new())).unwrap();
    let vertex_data = vec![0u8; (w.primitives[0].vertices * w.channels * 16) as usize];
    out.add_section(SectionKind::VertexData, &vertex_data)
        .unwrap();
    out.add_section(SectionKind::Weights, &codec::encode(&w).unwrap())
        .unwrap();
    if let Some(lods) = lods {
        out.add_section(SectionKind::Lods, &codec::encode(lods).unwrap())
            .unwrap();
    }
    out.add_section(SectionKind::LodDetails, &codec::encode(details).unwrap())
        .unwrap();
    finish_and_open(out, &m)
}

#[test]
fn lod_details_that_disagree_with_the_lod_record_or_lie_are_refused() {
    let (lods, details) = lod_records();
    open_lods(Some(&lods), &details).unwrap();
    let e = open_lods(None, &details).unwrap_err();
    assert!(e.contains("without a LOD record"), "{e}");
    type Change = fn(&mut rigbake_format::meta::LodDetailsMetadata);
    let cases: [(&str, Change); 9] = [
        ("1 levels, the LOD record has 2", |d| {
            d.groups[0].pop();
        }),
        ("2 groups, the LOD record has 1", |d| {
            d.groups.push(d.groups[0].clone())
        }),
        ("max_influences is 0", |d| d.groups[0][0].max_influences = 0),
        ("max_influences is 9", |d| d.groups[0][1].max_influences = 9),
        ("position_error", |d| {
            d.groups[0][1].position_error = f64::NAN
        }),
        ("dropped_max", |d| d.groups[0][1].dropped_max = -0.5),
        ("file_name", |d| {
            d.groups[0][1].file.as_mut().unwrap().file_name = "../mesh_LOD1.glb".into()
        }),
        ("relative_path", |d| {
            d.groups[0][1].file.as_mut().unwrap().relative_path = Some("/etc/passwd".into())
        }),
        ("sha256", |d| {
            d.groups[0][1].file.as_mut().unwrap().sha256 = "AB".repeat(32)
        }),
    ];
    for (needle, change) in cases {
        let mut d = details.clone();
        change(&mut d);
        let e = open_lods(Some(&lods), &d).expect_err(needle);
        assert!(e.contains(needle), "expected `{needle}` in: {e}");
    }
    let mut d = details.clone();
    d.groups[0][1].file.as_mut().unwrap().node = String::new();
    let e = open_lods(Some(&lods), &d).unwrap_err();
    assert!(e.contains("node is empty"), "{e}");
}

/// The folded VAT of [`folded_vat`] with a texture-container record of
/// `container` and, for every VAT texture, `compression`.
fn open_with_container(
    v: &VatMetadata,
    container: rigbake_format::meta::TextureContainer,
    compression: rigbake_format::meta::TextureCompression,
) -> Result<(), String> {
    let (_, l) = folded_vat();
    let mut out = folded_writer(v, &l);
    let c = rigbake_format::meta::VatCompressionMetadata {
        requested: rigbake_format::meta::TextureCompression::None,
        textures: vec![compression; v.textures.len()],
    };
    out.add_section(SectionKind::VatCompression, &codec::encode(&c).unwrap())
        .unwrap();
    let record = rigbake_format::meta::TextureContainerMetadata { container };
    out.add_section(
        SectionKind::TextureContainer,
        &codec::encode(&record).unwrap(),
    )
    .unwrap();
    finish_and_open(out, &metadata())
}

#[test]
fn texture_container_records_that_lie_are_refused() {
    use rigbake_format::meta::{TextureCompression, TextureContainer};
    // KTX2: the three pages are the layers of one file.
    let (mut layered, _) = folded_vat();
    for t in &mut layered.textures {
        t.name = "mesh.p0.positions.ktx2".into();
    }
    open_with_container(&layered, TextureContainer::Ktx2, TextureCompression::None)
        .expect("a folded KTX2 stream in one file is consistent");
    // EXR is the record's absence, never its value.
    let e =
        open_with_container(&layered, TextureContainer::Exr, TextureCompression::None).unwrap_err();
    assert!(e.contains("texture_container.container is exr"), "{e}");
    // Pages of one stream in different files.
    let (paged, _) = folded_vat();
    let e =
        open_with_container(&paged, TextureContainer::Dds, TextureCompression::None).unwrap_err();
    assert!(
        e.contains("page 1 (vat.textures[1]) is not in the file of page 0"),
        "{e}"
    );
    let mut split = layered.clone();
    split.textures[2].crc32 ^= 1;
    let e = open_with_container(&split, TextureContainer::Ktx2Zstd, TextureCompression::None)
        .unwrap_err();
    assert!(e.contains("page 2 (vat.textures[2])"), "{e}");
    // KTX2 and DDS files have no EXR compression.
    let e =
        open_with_container(&layered, TextureContainer::Ktx2, TextureCompression::Zip).unwrap_err();
    assert!(
        e.contains("vat_compression.textures[0] is Zip for a Ktx2 texture"),
        "{e}"
    );
}

/// Opens a container of [`metadata`] with a placement record.
fn open_with_placement(p: &rigbake_format::meta::PlacementMetadata) -> Result<(), String> {
    let mut out = ContainerWriter::new(Cursor::new(Vec::new())).unwrap();
    out.add_section(SectionKind::Placement, &codec::encode(p).unwrap())
        .unwrap();
    finish_and_open(out, &metadata())
}

#[test]
fn placement_records_that_lie_are_refused() {
    use rigbake_format::meta::{LookupUv, Placement, PlacementMetadata};
    let placed = Placement {
        node: Some("mesh".into()),
        matrix: [
            2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 1.0, 0.0, 6.0, 1.0,
        ],
    };
    let good = PlacementMetadata {
        reference: placed.clone(),
        skins: vec![placed.clone(); metadata().skins.len()],
        lookup_uv: LookupUv::SplitIndex,
    };
    open_with_placement(&good).expect("a consistent placement record");
    type Lie = fn(&mut PlacementMetadata);
    let cases: Vec<(&str, Lie)> = vec![
        ("placement.skins has", |p| p.skins.push(Placement::ROOT)),
        ("placement.reference.matrix[12] is NaN", |p| {
            p.reference.matrix[12] = f64::NAN
        }),
        ("placement.skins[0].matrix[0] is inf", |p| {
            p.skins[0].matrix[0] = f64::INFINITY
        }),
        ("a placement is affine", |p| p.reference.matrix[3] = 0.5),
        (
            "places the scene root with a matrix that is not the identity",
            |p| p.reference.node = None,
        ),
    ];
    for (needle, change) in cases {
        let mut p = good.clone();
        change(&mut p);
        let e = open_with_placement(&p).expect_err(needle);
        assert!(e.contains(needle), "expected `{needle}` in: {e}");
    }
}

/// Packed normals (`--direction-encoding packed`) live in the positions'
/// alpha: the normals entry names the positions' file, a four-channel
/// PNG16. Any other pairing is refused: a packed entry naming another
/// file or an EXR, an unpacked one naming the positions' file.
#[test]
fn packed_normals_must_name_their_positions_png16() {
    let with_normals = |v: &mut VatMetadata, name: &str, encoding: DirectionEncoding| {
        let mut n = v.textures[0].clone();
        (n.stream, n.name, n.direction_encoding) = (VatStream::Normals, name.into(), encoding);
        v.textures.push(n);
        v.primitives[0].normals = Some(1);
    };
    let png16 = |v: &mut VatMetadata| {
        v.encoding = VatEncoding::Png16;
        v.direction_encoding = DirectionEncoding::Packed;
        v.textures[0].name = "mesh.p0.positions.png".into();
        v.textures[0].encoding = VatEncoding::Png16;
        v.textures[0].bounds = Some([[0.0; 4], [1.0; 4]]);
    };
    // Consistent: accepted.
    let (m, mut v, w, r) = (metadata(), vat(), weights(), rig());
    png16(&mut v);
    with_normals(&mut v, "mesh.p0.positions.png", DirectionEncoding::Packed);
    open(&m, &v, &w, &r).unwrap();
    refused("is packed but does not name", |_, v, _, _| {
        png16(v);
        with_normals(v, "mesh.p0.normals.png", DirectionEncoding::Packed);
    });
    refused("is packed but names", |_, v, _, _| {
        with_normals(v, "mesh.p0.positions.exr", DirectionEncoding::Packed);
    });
    refused("is not packed but names", |_, v, _, _| {
        with_normals(v, "mesh.p0.positions.exr", DirectionEncoding::Float);
    });
}

/// 8 and 10-bit VAT samples (format 1.15) live in KTX2 and DDS only: a
/// bake without the texture-container record (EXR and PNG files) that
/// says so is refused, as is a normalised texture without bounds.
#[test]
fn narrow_vat_samples_outside_ktx2_and_dds_are_refused() {
    for encoding in [VatEncoding::Unorm8, VatEncoding::Unorm10] {
        refused("only KTX2 and DDS hold", |_, v, _, _| {
            v.encoding = encoding;
            v.textures[0].encoding = encoding;
            v.textures[0].bounds = Some([[0.0; 4], [1.0; 4]]);
        });
    }
    refused("normalised to bounds but records none", |_, v, _, _| {
        v.encoding = VatEncoding::Png16;
        v.textures[0].encoding = VatEncoding::Png16;
        v.textures[0].bounds = None;
    });
}

/// Opens the consistent records with a clip-error record.
fn open_with_errors(e: &rigbake_format::meta::ClipErrorsMetadata) -> Result<(), String> {
    let (m, v, w, r) = (metadata(), vat(), weights(), rig());
    let mut out = ContainerWriter::new(Cursor::new(Vec::new())).unwrap();
    let vertex_data = vec![0u8; (w.primitives[0].vertices * w.channels * 16) as usize];
    out.add_section(SectionKind::VertexData, &vertex_data)
        .unwrap();
    for (kind, bytes) in [
        (SectionKind::Vat, codec::encode(&v).unwrap()),
        (SectionKind::Weights, codec::encode(&w).unwrap()),
        (SectionKind::Rig, codec::encode(&r).unwrap()),
        (SectionKind::ClipErrors, codec::encode(e).unwrap()),
    ] {
        out.add_section(kind, &bytes).unwrap();
    }
    finish_and_open(out, &m)
}

/// A clip-error record whose figures are not numbers, whose percentile
/// exceeds its maximum, whose entries name textures the bake lacks or
/// miss clips, or give a VAT virtual vertices, is refused.
#[test]
fn clip_error_records_that_lie_are_refused() {
    use rigbake_format::meta::{
        ClipErrorMeta, ClipErrorsMetadata, ErrorFigure, ErrorSubject, TextureClipErrors,
    };
    let figure = ErrorFigure {
        max: 1e-4,
        p99: 9e-5,
    };
    let clips = metadata().clips.len();
    let entry = |subject, virtual_vertices| TextureClipErrors {
        subject,
        texture: 0,
        clips: vec![
            ClipErrorMeta {
                positions: figure,
                normals_degrees: Some(figure),
                virtual_vertices,
            };
            clips
        ],
    };
    let good = ClipErrorsMetadata {
        model_size: 2.0,
        virtual_vertex_distance: 0.03,
        textures: vec![
            entry(ErrorSubject::BoneMatrices, Some(figure)),
            entry(ErrorSubject::Vat, None),
        ],
    };
    open_with_errors(&good).expect("a consistent clip-error record");
    type Lie = fn(&mut ClipErrorsMetadata);
    let cases: Vec<(&str, Lie)> = vec![
        ("model_size is NaN", |e| e.model_size = f64::NAN),
        ("textures[0].clips[0].positions.max is -1", |e| {
            e.textures[0].clips[0].positions.max = -1.0
        }),
        ("has a 99th percentile", |e| {
            e.textures[1].clips[0].positions.p99 = 1.0
        }),
        ("names BoneMatrices texture 7", |e| {
            e.textures[0].texture = 7
        }),
        ("names Vat texture 9", |e| e.textures[1].texture = 9),
        ("clips, but the metadata has", |e| {
            e.textures[0].clips.pop();
        }),
        ("is a VAT's but has virtual_vertices", |e| {
            e.textures[1].clips[0].virtual_vertices = Some(ErrorFigure { max: 0.0, p99: 0.0 })
        }),
        ("has no virtual_vertices", |e| {
            e.textures[0].clips[0].virtual_vertices = None
        }),
        ("above 180 degrees", |e| {
            e.textures[0].clips[0].normals_degrees = Some(ErrorFigure {
                max: 200.0,
                p99: 1.0,
            })
        }),
    ];
    for (needle, change) in cases {
        let mut e = good.clone();
        change(&mut e);
        let err = open_with_errors(&e).expect_err(needle);
        assert!(err.contains(needle), "expected `{needle}` in: {err}");
    }
}
