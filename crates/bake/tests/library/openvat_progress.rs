//! The OpenVAT export reports where it is (issue 50.2): its stages and the
//! frames it has written go to the bake's observer, which drives the
//! progress display on a terminal, as the other steps' stages do.

use std::sync::Mutex;

use rigbake::{BakeSettings, Baked, ModelJob, Observer, bake_model};
use rigbake_types::OutputKind;

/// Keeps every stage it hears.
#[derive(Default)]
struct Stages(Mutex<Vec<String>>);

impl Observer for Stages {
    fn info(&self, _: &str) {}

    fn stage(&self, stage: &str) {
        self.0.lock().unwrap().push(stage.to_owned());
    }
}

#[test]
fn the_openvat_export_reports_its_stages_and_frames() {
    let input = rigbake_fixtures::fixture("tentacle.glb");
    let mut settings = BakeSettings::default();
    settings.outputs.set(OutputKind::Vat, true);
    settings.outputs.set(OutputKind::OpenVat, true);
    let dir = tempfile::tempdir().unwrap();
    let stages = Stages::default();
    let baked = bake_model(&ModelJob {
        input: &rigbake::ModelInput::read(&input, &settings).unwrap(),
        out_dir: dir.path(),
        settings: &settings,
        key: "test",
        shared: None,
        observer: &stages,
        source_location: None,
        protected: None,
    })
    .unwrap();
    assert!(matches!(baked, Baked::Written { .. }));
    let stages = stages.0.into_inner().unwrap();
    let at = |s: &str| {
        stages
            .iter()
            .position(|x| x == s)
            .unwrap_or_else(|| panic!("no stage `{s}` in {stages:?}"))
    };
    let frames: Vec<&String> = stages
        .iter()
        .filter(|s| s.starts_with("OpenVAT export: frame "))
        .collect();
    let last = frames.last().expect("frames reported");
    let (done, total) = last["OpenVAT export: frame ".len()..]
        .split_once('/')
        .unwrap();
    assert_eq!(done, total, "{stages:?}");
    assert!(
        at("OpenVAT export") < at("OpenVAT export: bounds")
            && at("OpenVAT export: bounds") < at(last)
            && at(last) < at("OpenVAT export: mesh"),
        "{stages:?}"
    );
}
