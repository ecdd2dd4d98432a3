//! The `.rigbake` container: round trips, forward compatibility, version
//! refusal, and damage (every byte flipped, every truncation) detected
//! without panics.

use std::io::Cursor;

use rigbake_format::FormatError;
use rigbake_format::container::{Container, ContainerWriter, FORMAT_MAJOR};
use rigbake_format::meta::{
    BakeOptions, ClipMeta, Encoding, MatrixLayout, Metadata, SamplingRule, SkinMeta, SourceFile,
    Storage, TextureKind, TextureMeta, Tool,
};
use rigbake_format::records::{FORMAT_MINOR, SectionKind};
use rigbake_format::texture::Precision;

fn sample_metadata(texture_section: u32, bytes: u64, crc32: u32) -> Metadata {
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
            bytes,
            crc32,
            storage: Storage::Section(texture_section),
            max_error: 0.0,
        }],
    }
}

/// A small container: one 301-byte texture section (odd, so padding is
/// exercised), an unknown section, and the metadata.
fn small_container() -> (Vec<u8>, Vec<u8>, Metadata) {
    let payload: Vec<u8> = (0..301u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut w = ContainerWriter::new(Cursor::new(Vec::new())).unwrap();
    let index = w.add_section(SectionKind::Texture, &payload).unwrap();
    w.add_section(SectionKind::Unknown(99), b"from the future")
        .unwrap();
    let meta = sample_metadata(
        index as u32,
        payload.len() as u64,
        crc32fast::hash(&payload),
    );
    let (cursor, len) = w.finish(&meta).unwrap();
    let bytes = cursor.into_inner();
    assert_eq!(bytes.len() as u64, len);
    (bytes, payload, meta)
}

fn open(bytes: &[u8]) -> Result<Container<Cursor<&[u8]>>, FormatError> {
    Container::from_reader(Cursor::new(bytes))
}

#[test]
fn round_trip_keeps_metadata_and_payloads() {
    let (bytes, payload, meta) = small_container();
    let mut c = open(&bytes).unwrap();
    assert_eq!(c.metadata(), &meta);
    assert_eq!(
        c.version().to_string(),
        format!("{FORMAT_MAJOR}.{FORMAT_MINOR}")
    );
    assert_eq!(c.read_section(0).unwrap(), payload);
    c.verify().unwrap();
    let kinds: Vec<_> = c.sections().iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            SectionKind::Texture,
            SectionKind::Unknown(99),
            SectionKind::Metadata
        ]
    );
    // Every section starts 8-byte aligned.
    assert!(c.sections().iter().all(|s| s.offset % 8 == 0));
}

#[test]
fn unknown_section_kinds_are_skipped() {
    let (bytes, _, meta) = small_container();
    let c = open(&bytes).unwrap();
    assert_eq!(
        c.metadata(),
        &meta,
        "an unknown section does not disturb reading"
    );
    assert!(matches!(c.sections()[1].kind, SectionKind::Unknown(99)));
}

#[test]
fn a_future_major_version_is_refused_with_both_versions_named() {
    let (mut bytes, _, _) = small_container();
    bytes[12..14].copy_from_slice(&2u16.to_le_bytes());
    bytes[14..16].copy_from_slice(&3u16.to_le_bytes());
    match open(&bytes) {
        Err(FormatError::Unsupported(msg)) => {
            assert!(msg.contains("2.3") && msg.contains("1.x"), "{msg}");
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

/// Lays out a container by hand, as a writer of format
/// `FORMAT_MAJOR.minor` would: a header of `header_len` bytes (a newer minor
/// may append header fields; they are zero here), the `sections` (kind code,
/// payload) each padded to 8 bytes, and the section table.
fn assemble(minor: u16, header_len: u32, sections: &[(u32, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    let mut table = Vec::new();
    for (code, bytes) in sections {
        let offset = u64::from(header_len) + body.len() as u64;
        body.extend_from_slice(bytes);
        body.resize(body.len().next_multiple_of(8), 0);
        table.extend_from_slice(&code.to_le_bytes());
        table.extend_from_slice(&0u32.to_le_bytes());
        table.extend_from_slice(&offset.to_le_bytes());
        table.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        table.extend_from_slice(&crc32fast::hash(bytes).to_le_bytes());
        table.extend_from_slice(&0u32.to_le_bytes());
    }
    let crc = crc32fast::hash(&table);
    table.extend_from_slice(&crc.to_le_bytes());
    let table_offset = u64::from(header_len) + body.len() as u64;
    let file_len = table_offset + table.len() as u64;
    let mut h = Vec::new();
    h.extend_from_slice(&rigbake_format::container::MAGIC);
    h.extend_from_slice(&FORMAT_MAJOR.to_le_bytes());
    h.extend_from_slice(&minor.to_le_bytes());
    h.push(1);
    h.extend_from_slice(&[0u8; 3]);
    h.extend_from_slice(&header_len.to_le_bytes());
    h.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    h.extend_from_slice(&table_offset.to_le_bytes());
    h.extend_from_slice(&file_len.to_le_bytes());
    h.resize(header_len as usize - 4, 0);
    let crc = crc32fast::hash(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h.extend_from_slice(&body);
    h.extend_from_slice(&table);
    h
}

#[test]
fn a_newer_minor_version_with_appended_metadata_is_read() {
    // A writer of a newer minor version may append fields after the last
    // metadata field and after the header's fields; this reader opens the
    // container, decodes what it knows and ignores the rest.
    let (reference, payload, meta) = small_container();
    let mut encoded = rigbake_format::codec::encode(&meta).unwrap();
    encoded.extend_from_slice(&[5, 1, 2, 3]);
    let newer = FORMAT_MINOR + 1;
    let metadata_code = SectionKind::Metadata.code();
    // The layout of `assemble` is the writer's: with nothing appended it
    // reproduces `small_container` byte for byte.
    let plain = rigbake_format::codec::encode(&meta).unwrap();
    assert_eq!(
        assemble(
            FORMAT_MINOR,
            48,
            &[
                (SectionKind::Texture.code(), &payload),
                (SectionKind::Unknown(99).code(), b"from the future"),
                (metadata_code, &plain)
            ]
        ),
        reference
    );
    for header_len in [48, 64] {
        let bytes = assemble(
            newer,
            header_len,
            &[
                (SectionKind::Texture.code(), &payload),
                (metadata_code, &encoded),
            ],
        );
        let mut c = open(&bytes).unwrap_or_else(|e| panic!("header {header_len}: {e}"));
        assert_eq!(c.version().to_string(), format!("{FORMAT_MAJOR}.{newer}"));
        assert_eq!(c.metadata(), &meta, "appended fields are ignored");
        assert_eq!(c.read_section(0).unwrap(), payload);
        c.verify().unwrap();
    }
}

#[test]
fn every_single_byte_flip_is_detected() {
    let (bytes, _, _) = small_container();
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0x80] {
            let mut damaged = bytes.clone();
            damaged[i] ^= mask;
            let result = std::panic::catch_unwind(|| open(&damaged).and_then(|mut c| c.verify()));
            match result {
                Ok(Err(_)) => {}
                Ok(Ok(())) => panic!("flipping byte {i} with {mask:#x} went unnoticed"),
                Err(_) => panic!("flipping byte {i} with {mask:#x} panicked"),
            }
        }
    }
}

#[test]
fn every_truncation_is_detected() {
    let (bytes, _, _) = small_container();
    for len in 0..bytes.len() {
        let result = std::panic::catch_unwind(|| open(&bytes[..len]).and_then(|mut c| c.verify()));
        assert!(
            matches!(result, Ok(Err(_))),
            "truncation to {len} bytes not detected"
        );
    }
    // And appended garbage.
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(open(&longer).is_err());
}

#[test]
fn absurd_sizes_are_refused_before_allocating() {
    let (bytes, _, _) = small_container();
    // A section count of u32::MAX with a recomputed header checksum.
    let mut damaged = bytes.clone();
    damaged[24..28].copy_from_slice(&u32::MAX.to_le_bytes());
    let crc = crc32fast::hash(&damaged[..44]);
    damaged[44..48].copy_from_slice(&crc.to_le_bytes());
    let e = open(&damaged).unwrap_err();
    assert!(e.to_string().contains("section table"), "{e}");
    // A declared file length of u64::MAX.
    let mut damaged = bytes.clone();
    damaged[36..44].copy_from_slice(&u64::MAX.to_le_bytes());
    let crc = crc32fast::hash(&damaged[..44]);
    damaged[44..48].copy_from_slice(&crc.to_le_bytes());
    assert!(
        open(&damaged)
            .unwrap_err()
            .to_string()
            .contains("truncated")
    );
    // A section whose end fits in 64 bits but whose padding to 8 bytes
    // does not (found by fuzzing: the padded end overflowed; wrapped, it
    // would have looked like a small offset inside the file). The table's
    // checksum is recomputed so that the entry itself is judged.
    let mut damaged = bytes.clone();
    let table_at = u64::from_le_bytes(damaged[28..36].try_into().unwrap()) as usize;
    let offset = u64::from_le_bytes(damaged[table_at + 8..table_at + 16].try_into().unwrap());
    let length = (0..8)
        .map(|k| u64::MAX - offset - k)
        .find(|&l| (offset + l).checked_add((8 - l % 8) % 8).is_none())
        .unwrap();
    damaged[table_at + 16..table_at + 24].copy_from_slice(&length.to_le_bytes());
    let crc_at = damaged.len() - 4;
    let crc = crc32fast::hash(&damaged[table_at..crc_at]);
    damaged[crc_at..].copy_from_slice(&crc.to_le_bytes());
    let e = open(&damaged).unwrap_err().to_string();
    assert!(e.contains("do not fit the file"), "{e}");
    // Not a container at all.
    assert!(open(b"glTF\x02\0\0\0").is_err());
    assert!(open(&[0u8; 100]).unwrap_err().to_string().contains("magic"));
}

#[test]
fn golden_version_1_0_container_stays_readable() {
    // formats/golden/v1.0/tentacle.rigbake was written by rigbake 0.1.0 with
    // `rigbake bake fixtures/tentacle.glb --embed-textures`. Never regenerate
    // it: it is the proof that format 1.0 stays readable.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats/golden/v1.0/tentacle.rigbake");
    let mut c = Container::open(&path).unwrap();
    assert_eq!(c.version().to_string(), "1.0");
    c.verify().unwrap();
    let m = c.metadata().clone();
    assert_eq!(m.tool.name, "rigbake");
    assert_eq!(m.source.file_name, "tentacle.glb");
    let clips: Vec<_> = m
        .clips
        .iter()
        .map(|c| (c.name.as_str(), c.start_row, c.frames, c.looping))
        .collect();
    assert_eq!(clips, [("wave", 0, 61, true), ("curl", 61, 31, false)]);
    assert_eq!(m.skins.len(), 1);
    assert_eq!(
        m.skins[0].joints,
        (0..8).map(|i| format!("seg{i}")).collect::<Vec<_>>()
    );
    assert_eq!(m.skins[0].parents, [-1, 0, 1, 2, 3, 4, 5, 6]);
    let tex = &m.textures[0];
    assert_eq!((tex.width, tex.height), (32, 92));
    let Storage::Section(index) = tex.storage else {
        panic!("golden textures are embedded")
    };
    let exr = c.read_section(index as usize).unwrap();
    assert_eq!(crc32fast::hash(&exr), tex.crc32);
    let image = rigbake_format::texture::exr::read(Cursor::new(exr)).unwrap();
    assert_eq!((image.width, image.height), (32, 92));
    // Row 0, joint 0 (the unanimated root) holds the identity matrix.
    assert_eq!(
        &image.data[..16],
        &[
            1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0
        ]
    );
}

#[test]
fn golden_version_1_1_container_with_vat_stays_readable() {
    // formats/golden/v1.1/tentacle_vat.rigbake was written by rigbake 0.1.0
    // with `rigbake bake fixtures/tentacle.glb --vat --normals --format png16
    // --clip curl --embed-textures`. Never regenerate it.
    use rigbake_format::meta::{Deformation, DirectionEncoding, VatEncoding, VatStream};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats/golden/v1.1/tentacle_vat.rigbake");
    let mut c = Container::open(&path).unwrap();
    assert_eq!(c.version().to_string(), "1.1");
    c.verify().unwrap();
    let clips: Vec<_> = c
        .metadata()
        .clips
        .iter()
        .map(|c| (c.name.clone(), c.frames))
        .collect();
    assert_eq!(clips, [("curl".to_owned(), 31)]);
    // Before format 1.6 there is no VAT compression record.
    assert!(c.records().vat_compression.as_ref().is_none());
    let vat = c.records().vat.as_ref().expect("the VAT record").clone();
    assert_eq!(vat.reference_node.as_deref(), Some("tentacle_mesh"));
    assert_eq!(
        (vat.encoding, vat.direction_encoding),
        (VatEncoding::Png16, DirectionEncoding::Octahedral)
    );
    assert_eq!(vat.playback_file.as_deref(), Some("tentacle.vat.glb"));
    let p = &vat.primitives[0];
    assert_eq!(
        (
            p.node.as_str(),
            p.deformation,
            p.vertices,
            p.frames,
            p.width,
            p.bands,
            p.height
        ),
        ("tentacle_mesh", Deformation::Skinned, 204, 31, 204, 1, 31)
    );
    let pos = &vat.textures[p.positions as usize];
    assert_eq!(pos.stream, VatStream::Positions);
    let normals = &vat.textures[p.normals.unwrap() as usize];
    assert_eq!(normals.stream, VatStream::Normals);
    // Positions are bounds-normalised: vertex 0 at row 0 is the base ring at
    // (0.3, 0, 0) and the bounds must contain it.
    let b = pos.bounds.expect("PNG positions carry bounds");
    assert!(b[0][0] <= 0.3 && 0.3 <= b[1][0] && b[0][1] <= 0.0 && 0.0 <= b[1][1]);
    let rigbake_format::meta::Storage::Section(s) = pos.storage else {
        panic!("embedded")
    };
    let png = rigbake_format::texture::png::read(Cursor::new(c.read_section(s as usize).unwrap()))
        .unwrap();
    assert_eq!((png.width, png.height, png.channels), (204, 31, 3));
    let decode = |c: usize| b[0][c] + f32::from(png.samples[c]) / 65535.0 * (b[1][c] - b[0][c]);
    assert!((decode(0) - 0.3).abs() < 1e-4 && decode(1).abs() < 1e-4 && decode(2).abs() < 1e-4);
}

#[test]
fn golden_version_1_5_container_with_per_primitive_vat_stays_readable() {
    // formats/golden/v1.5/two_skins_vat.rigbake was written by rigbake 0.1.0
    // (container format 1.5, before atlases and the layout record) with
    // `rigbake bake fixtures/two_skins.glb --vat --format exr32
    // --embed-textures`. Never regenerate it: without a layout record, VAT
    // primitives have a texture set each and every first vertex is 0.
    use rigbake_format::meta::VatStream;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats/golden/v1.5/two_skins_vat.rigbake");
    let mut c = Container::open(&path).unwrap();
    assert_eq!(c.version().to_string(), "1.5");
    c.verify().unwrap();
    assert!(
        c.records().layout.as_ref().is_none(),
        "1.5 has no layout record"
    );
    let vat = c.records().vat.as_ref().expect("the VAT record").clone();
    assert_eq!(vat.primitives.len(), 2);
    assert_ne!(vat.primitives[0].positions, vat.primitives[1].positions);
    for p in &vat.primitives {
        let t = &vat.textures[p.positions as usize];
        assert_eq!(t.stream, VatStream::Positions);
        assert_eq!((p.width, p.bands), (p.vertices, 1));
        assert_eq!((t.width, t.height), (p.width, p.height));
        let Storage::Section(s) = t.storage else {
            panic!("embedded")
        };
        let image =
            rigbake_format::texture::exr::read(Cursor::new(c.read_section(s as usize).unwrap()))
                .unwrap();
        assert_eq!(
            (image.width, image.height),
            (p.width as usize, p.height as usize)
        );
    }
    assert!(c.metadata().textures.iter().all(|t| t.height >= 31));
}

#[test]
fn golden_version_1_6_container_with_compressed_vat_stays_readable() {
    // formats/golden/v1.6/tentacle_vat_zip.rigbake was written by rigbake
    // 0.1.0 with `rigbake vat fixtures/tentacle.glb --normals --compression
    // zip --embed-textures`. Never regenerate it.
    use rigbake_format::meta::{Storage, TextureCompression, VatEncoding};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats/golden/v1.6/tentacle_vat_zip.rigbake");
    let mut c = Container::open(&path).unwrap();
    assert_eq!(c.version().to_string(), "1.6");
    c.verify().unwrap();
    let compression = c
        .records()
        .vat_compression
        .as_ref()
        .expect("the compression record")
        .clone();
    assert_eq!(compression.requested, TextureCompression::Zip);
    assert_eq!(compression.textures, [TextureCompression::Zip; 2]);
    let vat = c.records().vat.as_ref().expect("the VAT record").clone();
    assert_eq!(vat.encoding, VatEncoding::Exr16);
    for t in &vat.textures {
        let Storage::Section(i) = t.storage else {
            panic!("{} is embedded", t.name);
        };
        let bytes = c.read_section(i as usize).unwrap();
        let image = rigbake_format::texture::exr::read_expecting(
            std::io::Cursor::new(bytes),
            t.width as usize,
            t.height as usize,
        )
        .unwrap();
        assert!(image.data.iter().all(|v| v.is_finite()));
        assert!(
            image.data.iter().any(|v| *v != 0.0),
            "{} holds data",
            t.name
        );
    }
}

#[test]
fn golden_version_1_7_containers_with_atlas_and_bone_fold_stay_readable() {
    // formats/golden/v1.7 was written by rigbake 0.1.0 (container format
    // 1.7, before VAT folds) with `rigbake bake fixtures/two_skins.glb --vat
    // --normals --embed-textures` (two_skins_vat_atlas.rigbake) and `rigbake
    // bake fixtures/tentacle.glb --fps 120 --max-texture-size 256
    // --embed-textures` (tentacle_folded_120fps.rigbake). Never regenerate
    // them.
    use rigbake_format::meta::{FoldedTexture, VatLayoutMode, VatStream};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../formats/golden/v1.7");
    let mut c = Container::open(&dir.join("two_skins_vat_atlas.rigbake")).unwrap();
    assert_eq!(c.version().to_string(), "1.7");
    c.verify().unwrap();
    let layout = c
        .records()
        .layout
        .as_ref()
        .expect("1.7 atlas bakes have a layout record")
        .clone();
    let placement = layout.vat.expect("the VAT placement");
    assert_eq!(placement.layout, VatLayoutMode::Atlas);
    assert_eq!(placement.first_vertex, [0, 4]);
    assert!(layout.folds.is_empty());
    let vat = c.records().vat.as_ref().expect("the VAT record").clone();
    assert_eq!(
        vat.textures.len(),
        1,
        "one atlas (the fixture has no normals)"
    );
    assert_eq!(vat.textures[0].stream, VatStream::Positions);
    for p in &vat.primitives {
        assert_eq!(p.positions, 0);
        let t = &vat.textures[0];
        assert_eq!((t.width, t.height), (p.width, p.height));
        assert!(u64::from(p.frames) * u64::from(p.bands) <= u64::from(p.height));
    }

    let mut c = Container::open(&dir.join("tentacle_folded_120fps.rigbake")).unwrap();
    assert_eq!(c.version().to_string(), "1.7");
    c.verify().unwrap();
    let layout = c
        .records()
        .layout
        .as_ref()
        .expect("a folded bake has a layout record")
        .clone();
    assert!(layout.vat.is_none());
    assert_eq!(layout.folds.len(), 1);
    let f = layout.folds[0];
    assert_eq!(f.texture, FoldedTexture::Bones(0));
    assert_eq!(
        (
            f.rows_per_block,
            f.row_height,
            f.block_width,
            f.blocks_per_page,
            f.pages
        ),
        (181, 1, 32, 2, 1)
    );
    let t = &c.metadata().textures[0];
    assert_eq!((t.width, t.height), (64, 181));
}

#[test]
fn golden_version_1_8_containers_with_lods_and_root_motion_stay_readable() {
    // formats/golden/v1.8 was written by rigbake 0.1.0 (container format
    // 1.8, before the LOD detail record) with `rigbake bake
    // tentacle_lods.glb --vat --fps 10 --embed-textures`
    // (tentacle_lods_vat_10fps.rigbake) and `rigbake bake walker.glb
    // --root-motion extract --embed-textures` (walker_root_motion.rigbake),
    // each model copied beside its output folder first. Never regenerate
    // them.
    use rigbake_format::meta::{LodSource, RootMotionMode};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../formats/golden/v1.8");
    let mut c = Container::open(&dir.join("tentacle_lods_vat_10fps.rigbake")).unwrap();
    assert_eq!(c.version().to_string(), "1.8");
    c.verify().unwrap();
    let lods = c.records().lods.as_ref().expect("the LOD record").clone();
    assert!(
        c.records().lod_details.as_ref().is_none(),
        "1.8 has no LOD detail record"
    );
    assert_eq!(lods.groups.len(), 1);
    let group = &lods.groups[0];
    assert_eq!(group.source, LodSource::MsftLod);
    let vertices: Vec<u32> = group.levels.iter().map(|l| l.vertices).collect();
    assert_eq!(vertices, [204, 108, 50]);
    for (k, level) in group.levels.iter().enumerate() {
        assert_eq!(level.weights_primitives, [k as u32]);
        assert_eq!(level.vat_primitives, [k as u32]);
    }
    let weights = c
        .records()
        .weights
        .as_ref()
        .expect("the weights record")
        .clone();
    for (p, v) in weights.primitives.iter().zip(vertices) {
        let bytes = c.read_section(p.section as usize).unwrap();
        assert_eq!(bytes.len() as u32, v * weights.channels * 16);
    }
    assert_eq!(
        c.records()
            .vat
            .as_ref()
            .expect("the VAT record")
            .primitives
            .len(),
        3
    );

    let mut c = Container::open(&dir.join("walker_root_motion.rigbake")).unwrap();
    assert_eq!(c.version().to_string(), "1.8");
    c.verify().unwrap();
    let motion = c
        .records()
        .root_motion
        .as_ref()
        .expect("the root-motion record")
        .clone();
    assert_eq!(motion.clips.len(), c.metadata().clips.len());
    for (clip, meta) in motion.clips.iter().zip(&c.metadata().clips) {
        assert_eq!(clip.mode, RootMotionMode::Extract);
        assert_eq!(clip.track.len() as u32, meta.frames);
    }
    // walk travels 1 unit along z over the clip, turn 1 along x and z.
    let end = |i: usize| motion.clips[i].end;
    assert!(
        (end(0)[2] - 1.0).abs() < 1e-6 && end(0)[0].abs() < 1e-6,
        "{:?}",
        end(0)
    );
    assert!(
        (end(1)[0] - 1.0).abs() < 1e-6 && (end(1)[2] - 1.0).abs() < 1e-6,
        "{:?}",
        end(1)
    );
}

#[test]
fn golden_version_1_10_container_with_ktx2_textures_stays_readable() {
    // formats/golden/v1.10/tentacle_vat_ktx2.rigbake was written by rigbake
    // 0.1.0 (container format 1.10, the first with the texture-container
    // record) with `rigbake bake tentacle.glb --out out --vat --normals
    // --embed-textures --texture-container ktx2 --fps 5 --precision f16`,
    // the model copied beside its output folder first. Never regenerate it.
    use rigbake_format::texture::gpu::{self, GpuSamples, TextureContainer};
    use rigbake_format::texture::gpu_spec::{GpuSpec, SampleType};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats/golden/v1.10/tentacle_vat_ktx2.rigbake");
    let mut c = Container::open(&path).unwrap();
    assert_eq!(c.version().to_string(), "1.10");
    c.verify().unwrap();
    assert_eq!(c.records().texture_container(), TextureContainer::Ktx2);
    let bones = c.metadata().textures[0].clone();
    assert!(bones.name.ends_with(".ktx2"));
    let Storage::Section(section) = bones.storage else {
        panic!("golden textures are embedded")
    };
    let bytes = c.read_section(section as usize).unwrap();
    let spec = GpuSpec {
        width: bones.width as usize,
        height: bones.height as usize,
        layers: 1,
        sample: SampleType::F16,
    };
    let GpuSamples::Float(texels) = gpu::read(&bytes, TextureContainer::Ktx2, &spec).unwrap()
    else {
        panic!("half floats decode to floats")
    };
    // mat4 layout: pixel 4j + c holds column c, whose last element is 0
    // for the three axes and 1 for the translation column.
    for (p, texel) in texels.chunks_exact(4).enumerate() {
        let want = if p % 4 == 3 { 1.0 } else { 0.0 };
        assert_eq!(texel[3], want, "pixel {p}");
    }
    let vat = c.records().vat.as_ref().expect("the VAT record").clone();
    for t in &vat.textures {
        let Storage::Section(section) = t.storage else {
            panic!("golden textures are embedded")
        };
        let bytes = c.read_section(section as usize).unwrap();
        let spec = GpuSpec {
            width: t.width as usize,
            height: t.height as usize,
            layers: 1,
            sample: SampleType::F16,
        };
        let GpuSamples::Float(texels) = gpu::read(&bytes, TextureContainer::Ktx2, &spec).unwrap()
        else {
            panic!("half floats decode to floats")
        };
        // RGB streams stored as RGBA with alpha 1.
        assert!(
            texels
                .chunks_exact(4)
                .all(|t| t[3] == 1.0 && t.iter().all(|v| v.is_finite()))
        );
    }
}

#[test]
fn golden_version_1_12_container_with_qts_bone_textures_stays_readable() {
    // formats/golden/v1.12/tentacle_qts.rigbake was written by rigbake
    // 0.1.0 (container format 1.12, the first with the `qts` layout) with
    // `rigbake bake tentacle.glb --out out --layout qts --precision f16
    // --embed-textures --fps 10`, the model copied beside its output folder
    // first. Never regenerate it.
    use rigbake_format::meta::{MatrixLayout, Storage};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats/golden/v1.12/tentacle_qts.rigbake");
    let mut c = Container::open(&path).unwrap();
    assert_eq!(c.version().to_string(), "1.12");
    c.verify().unwrap();
    let bones = c.metadata().textures[0].clone();
    assert_eq!(bones.layout, MatrixLayout::Qts);
    assert_eq!(bones.precision, Precision::F16);
    // The tentacle's 8 joints, two pixels each; 21 + 11 frames at 10 fps.
    assert_eq!((bones.width, bones.height), (16, 32));
    let Storage::Section(section) = bones.storage else {
        panic!("golden textures are embedded")
    };
    let bytes = c.read_section(section as usize).unwrap();
    let image = rigbake_format::texture::exr::read(Cursor::new(bytes)).unwrap();
    // Pixel 2j: a unit quaternion with w >= 0, to half-float rounding
    // (2^-11 per component); pixel 2j + 1: translation and a positive
    // scale (the tentacle's joints only rotate: scale 1).
    for (p, t) in image.data.chunks_exact(4).enumerate() {
        if p % 2 == 0 {
            let norm = t.iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 2e-3 && t[3] >= 0.0, "pixel {p}: {t:?}");
        } else {
            assert!((t[3] - 1.0).abs() < 1e-3, "pixel {p}: {t:?}");
        }
    }
    // The recorded error covers the form and the rounding: above zero,
    // below a half-float step of the tentacle's largest entries (about 4).
    assert!(bones.max_error > 0.0 && bones.max_error < 4.0 * 2f64.powi(-10));
}

#[test]
fn golden_version_1_13_container_with_unorm16_qts_bone_textures_stays_readable() {
    // formats/golden/v1.13/tentacle_qts_unorm16.rigbake was written by
    // rigbake 0.1.0 (container format 1.13, the first with the unorm16
    // precision and the bone-range record) with `rigbake bake tentacle.glb
    // --out out --layout qts --precision unorm16 --embed-textures --fps
    // 10`, the model copied beside its output folder first. Never
    // regenerate it.
    use rigbake_format::meta::{Encoding, MatrixLayout, Storage};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats/golden/v1.13/tentacle_qts_unorm16.rigbake");
    let mut c = Container::open(&path).unwrap();
    assert_eq!(c.version().to_string(), "1.13");
    c.verify().unwrap();
    let bones = c.metadata().textures[0].clone();
    assert_eq!(bones.layout, MatrixLayout::Qts);
    assert_eq!(bones.precision, Precision::Unorm16);
    assert_eq!(bones.encoding, Encoding::Png16);
    assert_eq!((bones.width, bones.height), (16, 32));
    let [lo, hi] = c.records().bone_ranges.as_ref().unwrap().textures[0].unwrap();
    let Storage::Section(section) = bones.storage else {
        panic!("golden textures are embedded")
    };
    let bytes = c.read_section(section as usize).unwrap();
    let image = rigbake_format::texture::png::read(Cursor::new(bytes)).unwrap();
    assert_eq!((image.width, image.height, image.channels), (16, 32, 4));
    // Pixel 2j decodes to a unit quaternion with w >= 0 (to the 16-bit
    // step, 2/65535 per component); pixel 2j + 1 to a scale of 1 (the
    // tentacle's joints only rotate: the scale's range is empty).
    for (p, t) in image.samples.chunks_exact(4).enumerate() {
        let raw: [f64; 4] = std::array::from_fn(|c| f64::from(t[c]) / 65535.0);
        if p % 2 == 0 {
            let q = raw.map(|r| r * 2.0 - 1.0);
            let norm = q.iter().map(|v| v * v).sum::<f64>().sqrt();
            assert!(
                (norm - 1.0).abs() < 1e-4 && q[3] >= -1e-4,
                "pixel {p}: {q:?}"
            );
        } else {
            let s = f64::from(lo[3]) + raw[3] * f64::from(hi[3] - lo[3]);
            assert!((s - 1.0).abs() < 1e-6, "pixel {p}: scale {s}");
        }
    }
    assert!(bones.max_error > 0.0 && bones.max_error < 1e-3);
}

#[test]
fn golden_version_1_14_container_with_a_clip_error_record_stays_readable() {
    // formats/golden/v1.14/tentacle_vat_errors.rigbake was written by
    // rigbake 0.1.0 (container format 1.14, the first with the clip-error
    // record) with `rigbake bake tentacle.glb --out out --layout qts
    // --precision unorm16 --vat --normals --format png16
    // --direction-encoding packed --embed-textures --fps 10`, the model
    // copied beside its output folder first. Never regenerate it.
    use rigbake_format::meta::ErrorSubject;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats/golden/v1.14/tentacle_vat_errors.rigbake");
    let mut c = Container::open(&path).unwrap();
    assert_eq!(c.version().to_string(), "1.14");
    c.verify().unwrap();
    let e = c
        .records()
        .clip_errors
        .clone()
        .expect("the clip-error record");
    assert_eq!(e.virtual_vertex_distance, 0.03);
    // The tentacle stands about 3.6 units tall.
    assert!(e.model_size > 3.0 && e.model_size < 4.0, "{}", e.model_size);
    let subjects: Vec<ErrorSubject> = e.textures.iter().map(|t| t.subject).collect();
    assert_eq!(subjects, [ErrorSubject::BoneMatrices, ErrorSubject::Vat]);
    let vat = c.records().vat.clone().unwrap();
    assert_eq!(e.textures[1].texture, vat.primitives[0].positions);
    for t in &e.textures {
        assert_eq!(t.clips.len(), c.metadata().clips.len());
        for clip in &t.clips {
            // 16-bit samples: errors above zero, far below a millimetre
            // per metre of model; the packed normal within 0.64 degrees.
            let p = clip.positions;
            assert!(p.max > 0.0 && p.p99 <= p.max && p.max < 1e-4 * e.model_size);
            // Normals: the VAT's (packed: within 0.64 degrees); bone
            // textures do not measure them apart.
            let bones = t.subject == ErrorSubject::BoneMatrices;
            match clip.normals_degrees {
                Some(n) => assert!(!bones && n.max > 0.0 && n.max < 0.64),
                None => assert!(bones),
            }
            assert_eq!(clip.virtual_vertices.is_some(), bones);
        }
    }
}

#[test]
fn golden_version_1_15_container_with_a_10_bit_vat_stays_readable() {
    // formats/golden/v1.15/tentacle_vat_unorm10.rigbake was written by
    // rigbake 0.1.0 (container format 1.15, the first with the 8 and
    // 10-bit VAT formats) with `rigbake bake tentacle.glb --out out --vat
    // --normals --format unorm10 --texture-container ktx2 --embed-textures
    // --fps 10`, the model copied beside its output folder first. Never
    // regenerate it.
    use rigbake_format::meta::{DirectionEncoding, Storage, VatEncoding, VatStream};
    use rigbake_format::texture::gpu::{self, GpuSamples, TextureContainer};
    use rigbake_format::texture::gpu_spec::{GpuSpec, SampleType};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats/golden/v1.15/tentacle_vat_unorm10.rigbake");
    let mut c = Container::open(&path).unwrap();
    assert_eq!(c.version().to_string(), "1.15");
    c.verify().unwrap();
    assert_eq!(c.records().texture_container(), TextureContainer::Ktx2);
    let vat = c.records().vat.clone().unwrap();
    assert_eq!(vat.encoding, VatEncoding::Unorm10);
    let p = &vat.primitives[0];
    for (index, stream) in [
        (p.positions, VatStream::Positions),
        (p.normals.unwrap(), VatStream::Normals),
    ] {
        let t = &vat.textures[index as usize];
        assert_eq!((t.stream, t.encoding), (stream, VatEncoding::Unorm10));
        let Storage::Section(section) = t.storage else {
            panic!("golden textures are embedded")
        };
        let bytes = c.read_section(section as usize).unwrap();
        let spec = GpuSpec {
            width: t.width as usize,
            height: t.height as usize,
            layers: 1,
            sample: SampleType::Unorm10,
        };
        let Ok(GpuSamples::Unorm { codes, max }) = gpu::read(&bytes, TextureContainer::Ktx2, &spec)
        else {
            panic!("{}: not 10-bit UNORM codes", t.name)
        };
        assert_eq!(max, [1023, 1023, 1023, 3]);
        // RGB streams: alpha is 1.0 (code 3) in every texel.
        assert!(codes.chunks_exact(4).all(|t| t[3] == 3));
        if stream == VatStream::Positions {
            // Over the recorded bounds, every texel within them; the
            // recorded error is at most half a 10-bit step of each axis
            // (plus f32 rounding), and above zero.
            let [lo, hi] = t.bounds.unwrap();
            let half_step: f64 = (0..3)
                .map(|k| (f64::from(hi[k] - lo[k]) / 2046.0).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(t.max_error > 0.0 && t.max_error <= half_step * 1.001 + 1e-6);
            // The tentacle stands 3.5 units tall along +y.
            assert!((hi[1] - lo[1] - 3.5).abs() < 1e-3, "{lo:?} {hi:?}");
        } else {
            // Octahedral normals at 10 bits: within a quarter degree.
            assert_eq!(t.direction_encoding, DirectionEncoding::Octahedral);
            assert!(t.max_error > 0.0 && t.max_error < 0.25, "{}", t.max_error);
        }
    }
}

#[test]
fn golden_version_1_11_container_with_a_placement_record_stays_readable() {
    // formats/golden/v1.11/hierarchy_placed.rigbake was written by rigbake
    // 0.1.0 (container format 1.11, the first with the placement record)
    // with `rigbake bake hierarchy.gltf --out out --vat --embed-textures
    // --fps 5`, the fixture copied beside its output folder first. Never
    // regenerate it.
    use rigbake_format::meta::LookupUv;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../formats/golden/v1.11/hierarchy_placed.rigbake");
    let mut c = Container::open(&path).unwrap();
    assert_eq!(c.version().to_string(), "1.11");
    c.verify().unwrap();
    let p = c
        .records()
        .placement
        .as_ref()
        .expect("the placement record")
        .clone();
    assert_eq!(p.lookup_uv, LookupUv::SplitIndex);
    // fixtures/hierarchy.gltf: the skinned mesh node `body`, at (0, 0, 3),
    // is a child of `world` (scale 2, translation (1, 0, 0)): its rest-pose
    // global scales by 2 and moves to (1, 0, 0) + 2 * (0, 0, 3), column-major.
    let want = [
        2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 1.0, 0.0, 6.0, 1.0,
    ];
    assert_eq!(p.reference.node.as_deref(), Some("body"));
    assert_eq!(p.reference.matrix, want);
    assert_eq!(p.skins.len(), c.metadata().skins.len());
    assert_eq!(p.skins[0], p.reference);
    // The VAT record names the same reference node.
    assert_eq!(
        c.records().vat.as_ref().unwrap().reference_node.as_deref(),
        Some("body")
    );
}
