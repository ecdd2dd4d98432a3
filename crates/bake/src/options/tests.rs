use std::path::Path;

use rigbake_core::timeline::ClipRequest;
use rigbake_types::{OutputKind, TextureCompression};

use super::*;
use crate::settings::BakeSettings;

/// The markers around the generated table in docs/manifest.md.
const BEGIN: &str = "<!-- options table: generated from crates/bake/src/options; RIGBAKE_BLESS=1 cargo test -p rigbake --lib options rewrites it -->\n";
const END: &str = "<!-- end of the options table -->";

/// docs/manifest.md's option table is the one the definitions make: an
/// option added, renamed, re-documented or given another default without
/// the table (or the other way round) fails here.
#[test]
fn the_manifest_docs_table_is_the_definitions() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/manifest.md");
    let table = Options::table();
    let mut text = std::fs::read_to_string(&path).unwrap();
    let start = text
        .find(BEGIN)
        .expect("docs/manifest.md has the table's start marker")
        + BEGIN.len();
    let mut end = start
        + text[start..]
            .find(END)
            .expect("docs/manifest.md has the end marker");
    if std::env::var_os("RIGBAKE_BLESS").is_some() {
        text = format!("{}{table}{}", &text[..start], &text[end..]);
        std::fs::write(&path, &text).unwrap();
        end = start + table.len();
    }
    assert_eq!(
        &text[start..end],
        table,
        "docs/manifest.md's option table differs from the definitions in crates/bake/src/options: regenerate it with RIGBAKE_BLESS=1 cargo test -p rigbake --lib options"
    );
}

/// Every option's documented default, written as its key, gives the
/// built-in settings: the docs' defaults are the ones a bake uses.
#[test]
fn each_documented_default_is_the_built_in_one() {
    let builtin = Options::default().resolve().unwrap();
    assert_eq!(builtin, BakeSettings::default());
    let mut checked = 0;
    let tables: [(&str, &str, _); 2] = [
        ("", "", Options::OPTIONS),
        ("vat = { ", " }", VatOptions::OPTIONS),
    ];
    for (open, close, groups) in tables {
        for doc in groups.iter().flat_map(|g| g.iter()) {
            let Some(default) = doc.default.filter(|d| doc.key && !d.starts_with('(')) else {
                continue;
            };
            let text = format!("{open}{} = {default}{close}\n", doc.field);
            assert_eq!(layers(&[&text]).resolve().unwrap(), builtin, "{text}");
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked} defaults checked");
    // A value other than the default does change the settings.
    assert_ne!(
        layers(&["vat = { format = \"png16\" }"]).resolve().unwrap(),
        builtin
    );
}

/// Every flag's help is its doc comment and default, and the table's
/// meaning the same doc comment.
#[test]
fn help_and_table_come_from_the_doc_comment() {
    let fps = Options::OPTIONS[0][0];
    assert_eq!(fps.field, "fps");
    assert_eq!(
        help_of(Options::OPTIONS, "fps"),
        "Frames sampled per second of animation [default: 30]"
    );
    assert!(
        Options::table()
            .contains("| `fps` | `--fps` | `30` | Frames sampled per second of animation. |")
    );
    assert!(Options::table().contains("| `vat.layout` | `--vat-layout` | `\"atlas\"` |"));
    assert_eq!(
        help_text("Also bake VAT normals.", Some("false")),
        "Also bake VAT normals"
    );
    assert_eq!(
        help_text("The node.\n", Some("(the root joint)")),
        "The node [default: the root joint]"
    );
}

/// Tables of options (TOML), each layered over the ones before it.
fn layers(tables: &[&str]) -> Options {
    tables.iter().fold(Options::default(), |lower, text| {
        let layer: Options = toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        layer.over(lower)
    })
}

#[test]
fn later_layers_win_and_frames_become_seconds() {
    let manifest = [
        "fps = 24\noutputs = [\"bones\", \"vat\"]\nexclude = [\"a\", \"b\"]\n",
        "fps = 12\nexclude = [\"c\"]\n[[clip]]\nsource = \"Take\"\nname = \"idle\"\nframes = [6, 18]\nloop = true\n",
    ];
    let s = layers(&manifest).resolve().unwrap();
    assert_eq!(s.sampling.fps, 12.0);
    assert!(
        s.outputs.has(OutputKind::Bones)
            && s.outputs.has(OutputKind::Vat)
            && !s.outputs.has(OutputKind::Weights)
    );
    assert_eq!(s.exclude, ["c"], "a later layer replaces the list");
    assert_eq!(
        s.clips[0].request,
        ClipRequest::Range {
            source: "Take".into(),
            start: 0.5,
            end: 1.5
        }
    );
    assert_eq!(
        (s.clips[0].name.as_deref(), s.clips[0].looping),
        (Some("idle"), Some(true))
    );
    // Flags over the manifest: `--clip` replaces the clips, `--output`
    // adds to the outputs, `--no-weights` takes weights away.
    let flags = Options {
        fps: Some(60.0),
        clip: vec![ClipEntry::whole("Run")],
        output: vec![OutputKind::Anchors, OutputKind::Weights],
        no_weights: true,
        ..Options::default()
    };
    let s = flags.over(layers(&manifest)).resolve().unwrap();
    assert_eq!(s.sampling.fps, 60.0);
    assert_eq!(s.clips.len(), 1);
    assert!(s.outputs.has(OutputKind::Anchors) && s.outputs.has(OutputKind::Vat));
    assert!(!s.outputs.has(OutputKind::Weights));
    assert!(
        s.anchors.auto,
        "anchors asked for without sockets: automatic"
    );
}

#[test]
fn zip_and_compression_layer_as_one_choice() {
    let compression = |tables: &[&str]| layers(tables).resolve().unwrap().vat.compression;
    // In one table `compression` wins over `zip`.
    assert_eq!(
        compression(&["vat = { zip = true, compression = \"piz\" }"]),
        TextureCompression::Piz
    );
    // Across layers the later one's choice wins, whichever key made it.
    assert_eq!(
        compression(&["vat = { compression = \"piz\" }", "vat = { zip = true }"]),
        TextureCompression::Zip
    );
    assert_eq!(
        compression(&["vat = { zip = true }", "vat = { normals = true }"]),
        TextureCompression::Zip
    );
    assert_eq!(
        compression(&["vat = { zip = true }", "vat = { zip = false }"]),
        TextureCompression::None
    );
    let flags = Options {
        vat: VatOptions {
            zip: Some(true),
            ..VatOptions::default()
        },
        ..Options::default()
    };
    let manifest = layers(&["vat = { compression = \"pxr24\" }"]);
    assert_eq!(
        flags.over(manifest).resolve().unwrap().vat.compression,
        TextureCompression::Zip
    );
}

#[test]
fn flags_that_ask_for_outputs_and_the_vat_command() {
    let anchor = Options {
        anchor: vec!["hand".into()],
        ..Options::default()
    };
    let manifest = layers(&["anchors = [\"foot\"]"]);
    let s = anchor.clone().over(manifest.clone()).resolve().unwrap();
    assert_eq!(s.anchors.nodes, ["hand"]);
    assert!(s.outputs.has(OutputKind::Anchors) && !s.anchors.auto);
    // The key alone names sockets without asking for the output.
    let s = manifest.resolve().unwrap();
    assert!(!s.outputs.has(OutputKind::Anchors) && s.anchors.nodes.is_empty());
    // `vat` keeps VAT alone; a model with `outputs = []` stays skipped.
    let mut o = anchor.over(manifest);
    o.vat_only();
    let s = o.resolve().unwrap();
    assert_eq!(s.outputs.iter().collect::<Vec<_>>(), [OutputKind::Vat]);
    let mut o = layers(&["outputs = []"]);
    o.vat_only();
    assert_eq!(o.resolve().unwrap().outputs.iter().count(), 0);
}

#[test]
fn invalid_values_are_reported() {
    let e = |text: &str| layers(&[text]).resolve().unwrap_err().to_string();
    assert!(e("fps = 0").contains("fps"));
    assert!(e("max_texture_size = 0").contains("max_texture_size must be 1 to"));
    assert!(e("max_influences = [4, 9]").contains("max_influences must be 1 to 8"));
    assert!(e("outputs = [\"weights\"]").contains("add `bones`"));
    let blend = Options {
        blend_args: vec!["Walk,Run,0,2".into()],
        ..Options::default()
    };
    assert!(
        blend
            .resolve()
            .unwrap_err()
            .to_string()
            .contains("outside 0..1")
    );
    assert!(parse_blend("Walk,Run").is_err());
}
