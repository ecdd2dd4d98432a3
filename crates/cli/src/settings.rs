//! What to bake for one model: built-in defaults, overridden in order by the
//! manifest's `[defaults]`, each matching `[[model]]` entry, and the flags
//! given on the command line. Validation happens once, when a model's
//! settings are resolved.

use rigbake::settings::{AnchorSettings, BakeSettings, VatSettings};
use rigbake_core::bake::weights::MAX_INFLUENCES;
use rigbake_core::timeline::{ClipRequest, ClipSpec};
use rigbake_types::{AnchorsMode, OutputKind, OutputKinds, Props, TextureCompression};

use crate::args::{BakeArgs, LodArg, SettingFlags};
use crate::error::{MAX_TEXTURE_SIZE, SettingsError};
use rigbake::manifest::{BlendEntry, ClipEntry, Overrides, VatOverrides};

/// Parses `A,B,W[,W...]` into a blend entry.
pub fn parse_blend(text: &str) -> Result<BlendEntry, SettingsError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() < 3 || parts[0].is_empty() || parts[1].is_empty() {
        return Err(SettingsError::BlendSyntax(text.to_owned()));
    }
    let weights = parts[2..]
        .iter()
        .map(|w| {
            w.parse::<f64>().map_err(|_| SettingsError::BlendNumber {
                text: text.to_owned(),
                weight: (*w).to_owned(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(BlendEntry {
        a: parts[0].to_owned(),
        b: parts[1].to_owned(),
        weights,
        looping: None,
        root_motion: None,
    })
}

/// Settings being assembled for one model: the resolved values plus the
/// clip and blend entries, turned into clip specs once the fps is final.
#[derive(Debug, Clone, Default)]
pub struct Draft {
    settings: BakeSettings,
    clips: Vec<ClipEntry>,
    blends: Vec<BlendEntry>,
}

impl Draft {
    /// The built-in defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The LOD level files given so far.
    pub fn lod_files(&self) -> &[std::path::PathBuf] {
        &self.settings.lod_files
    }

    /// Sets the LOD level files (manifest `lod_files`, `--lod MODEL=...`,
    /// or siblings found beside the model).
    pub fn set_lod_files(&mut self, files: Vec<std::path::PathBuf>) {
        self.settings.lod_files = files;
    }

    /// Applies manifest overrides (later calls win).
    pub fn apply(&mut self, o: &Overrides) {
        let s = &mut self.settings;
        if let Some(fps) = o.fps {
            s.sampling.fps = fps;
        }
        if let Some(rule) = o.sampling {
            s.sampling.rule = rule;
        }
        if let Some(outputs) = &o.outputs {
            s.outputs = OutputKinds::of(outputs);
        }
        if let Some(l) = o.layout {
            s.layout = l;
        }
        if let Some(p) = o.precision {
            s.precision = p;
        }
        if let Some(m) = o.max_texture_size {
            s.max_texture_size = m;
            s.vat.options.max_texture_size = m;
        }
        if let Some(m) = &o.max_influences {
            let levels = m.levels();
            s.max_influences = levels.first().copied().unwrap_or(0);
            s.lod_influences = levels.get(1..).unwrap_or_default().to_vec();
        }
        if let Some(n) = o.scene {
            s.import.scene = Some(n);
        }
        if let Some(e) = o.embed_textures {
            s.embed_textures = e;
        }
        if let Some(c) = o.texture_container {
            s.texture_container = c;
        }
        if let Some(a) = &o.anchors {
            s.anchors.nodes.clone_from(a);
        }
        if let Some(a) = o.auto_anchors {
            s.anchors.auto = a;
        }
        if let Some(a) = o.anchors_exr {
            s.anchors.exr = a;
        }
        if let Some(p) = o.props {
            s.bind_props = p == Props::Bind;
        }
        if let Some(e) = &o.exclude {
            s.exclude.clone_from(e);
        }
        if !o.lod.is_empty() {
            s.lods.clone_from(&o.lod);
        }
        if let Some(v) = &o.vat {
            apply_vat(&mut s.vat, v);
        }
        if let Some(m) = o.root_motion {
            s.root_motion.mode = m;
        }
        if let Some(n) = &o.root_node {
            s.root_motion.node = Some(n.clone());
        }
        if !o.clip.is_empty() {
            self.clips.clone_from(&o.clip);
        }
        if !o.blend.is_empty() {
            self.blends.clone_from(&o.blend);
        }
    }

    /// Applies the setting flags common to `bake` and `vat`.
    pub fn apply_flags(&mut self, f: &SettingFlags) {
        let vat = VatOverrides {
            format: f.format,
            normals: f.normals.then_some(true),
            tangents: f.tangents.then_some(true),
            normal_convention: f.normal_convention,
            direction_encoding: f.direction_encoding,
            power_of_two: f.power_of_two.then_some(true),
            layout: f.vat_layout,
            zip: f.zip.then_some(true),
            compression: f.compression,
        };
        self.apply(&Overrides {
            fps: f.fps,
            sampling: f.sampling,
            max_texture_size: f.max_texture_size,
            scene: f.scene,
            embed_textures: f.embed_textures.then_some(true),
            texture_container: f.texture_container,
            exclude: (!f.exclude.is_empty()).then(|| f.exclude.clone()),
            lod: f.lod.iter().filter_map(LodArg::nodes).cloned().collect(),
            vat: Some(vat),
            root_motion: f.root_motion,
            root_node: f.root_node.clone(),
            ..Overrides::default()
        });
        if let Some(set) = f.lookup_uv_set {
            self.settings.lookup_uv_set = Some(usize::from(set));
        }
        if !f.clips.is_empty() {
            self.clips = f
                .clips
                .iter()
                .map(|c| ClipEntry {
                    source: c.clone(),
                    name: None,
                    frames: None,
                    time: None,
                    looping: None,
                    root_motion: None,
                })
                .collect();
        }
    }

    /// Applies the flags only `bake` has.
    pub fn apply_bake_flags(&mut self, a: &BakeArgs) {
        self.apply(&Overrides {
            layout: a.layout,
            precision: a.precision,
            max_influences: a.max_influences.clone(),
            anchors_exr: a.anchors_exr.then_some(true),
            props: a.props,
            ..Overrides::default()
        });
        let s = &mut self.settings;
        if a.vat {
            s.outputs.set(OutputKind::Vat, true);
        }
        for kind in &a.outputs {
            s.outputs.set(*kind, true);
        }
        if a.no_weights {
            s.outputs.set(OutputKind::Weights, false);
        }
        if a.weights_as_uv {
            s.weights_as_uv = true;
        }
        if !a.anchors.is_empty() {
            s.anchors.nodes.clone_from(&a.anchors);
            s.outputs.set(OutputKind::Anchors, true);
        }
        if a.anchors_mode == Some(AnchorsMode::Auto) {
            s.anchors.auto = true;
            s.outputs.set(OutputKind::Anchors, true);
        }
    }

    /// Adds command-line blends (`A,B,W[,W...]`).
    pub fn add_blends(&mut self, blends: &[String]) -> Result<(), SettingsError> {
        for b in blends {
            self.blends.push(parse_blend(b)?);
        }
        Ok(())
    }

    /// Adds the OpenVAT-compatible export (`rigbake vat --compat openvat`).
    pub fn openvat(&mut self) {
        self.settings.outputs.set(OutputKind::OpenVat, true);
    }

    /// Restricts the outputs to VAT (the `vat` command). A manifest model
    /// with `outputs = []` stays skipped.
    pub fn vat_only(&mut self) {
        let o = &mut self.settings.outputs;
        if o.iter().all(|k| k == OutputKind::OpenVat) {
            return;
        }
        for kind in [OutputKind::Bones, OutputKind::Weights, OutputKind::Anchors] {
            o.set(kind, false);
        }
        o.set(OutputKind::Vat, true);
    }

    /// Validates and returns the final settings; the error says what is
    /// wrong in plain words.
    pub fn resolve(&self) -> Result<BakeSettings, SettingsError> {
        let mut s = self.settings.clone();
        let fps = s.sampling.fps;
        if !(fps.is_finite() && fps > 0.0 && fps <= 1000.0) {
            return Err(SettingsError::Fps(fps));
        }
        check_max_texture_size("max_texture_size", s.max_texture_size)?;
        let o = s.outputs;
        let has = |k| o.has(k);
        if !has(OutputKind::Bones) && (has(OutputKind::Anchors) || has(OutputKind::Weights)) {
            let names: Vec<&str> = [
                (OutputKind::Weights, "weights"),
                (OutputKind::Anchors, "anchors"),
                (OutputKind::Vat, "vat"),
            ]
            .into_iter()
            .filter_map(|(k, name)| has(k).then_some(name))
            .collect();
            return Err(SettingsError::NeedsBones(format!("[{}]", names.join(", "))));
        }
        for &got in std::iter::once(&s.max_influences).chain(&s.lod_influences) {
            if !(1..=MAX_INFLUENCES).contains(&got) {
                return Err(SettingsError::MaxInfluences {
                    max: MAX_INFLUENCES,
                    got,
                });
            }
        }
        if s.outputs.has(OutputKind::Anchors) && s.anchors.nodes.is_empty() {
            s.anchors.auto = true;
        }
        if !s.outputs.has(OutputKind::Anchors) {
            // No sockets asked for; `anchors.exr` still applies to the
            // tracks of props baked as anchors (`--props anchors`).
            s.anchors = AnchorSettings {
                exr: s.anchors.exr,
                ..AnchorSettings::default()
            };
        }
        s.clips = self
            .clips
            .iter()
            .map(|c| clip_spec(c, fps))
            .collect::<Result<_, _>>()?;
        s.blends = Vec::new();
        for b in &self.blends {
            if b.weights.is_empty() {
                return Err(SettingsError::BlendEmpty(b.a.clone(), b.b.clone()));
            }
            for &weight in &b.weights {
                if !(0.0..=1.0).contains(&weight) {
                    return Err(SettingsError::BlendWeight(b.a.clone(), b.b.clone(), weight));
                }
                s.blends.push(ClipSpec {
                    request: ClipRequest::Blend {
                        a: b.a.clone(),
                        b: b.b.clone(),
                        weight,
                    },
                    name: None,
                    looping: b.looping,
                    root_motion: b.root_motion,
                });
            }
        }
        Ok(s)
    }
}

/// Checks a largest texture size given as `key` (`--max-texture-size` or
/// the manifest's `max_texture_size`): 1 to [`MAX_TEXTURE_SIZE`].
pub fn check_max_texture_size(key: &'static str, got: usize) -> Result<(), SettingsError> {
    if got == 0 || got as u64 > MAX_TEXTURE_SIZE {
        return Err(SettingsError::MaxTextureSize {
            key,
            got: got as u64,
        });
    }
    Ok(())
}

fn clip_spec(c: &ClipEntry, fps: f64) -> Result<ClipSpec, SettingsError> {
    let request = match (c.frames, c.time) {
        (Some(_), Some(_)) => {
            return Err(SettingsError::ClipRanges(c.source.clone()));
        }
        (Some([a, b]), None) => {
            if a >= b {
                return Err(SettingsError::ClipFrames {
                    source_clip: c.source.clone(),
                    first: a,
                    last: b,
                });
            }
            ClipRequest::Range {
                source: c.source.clone(),
                start: f64::from(a) / fps,
                end: f64::from(b) / fps,
            }
        }
        (None, Some([start, end])) => ClipRequest::Range {
            source: c.source.clone(),
            start,
            end,
        },
        (None, None) => ClipRequest::Whole {
            source: c.source.clone(),
        },
    };
    Ok(ClipSpec {
        request,
        name: c.name.clone(),
        looping: c.looping,
        root_motion: c.root_motion,
    })
}

fn apply_vat(v: &mut VatSettings, o: &VatOverrides) {
    if let Some(f) = o.format {
        v.encoding = f;
    }
    if let Some(n) = o.normals {
        v.options.normals = n;
    }
    if let Some(t) = o.tangents {
        v.options.tangents = t;
    }
    if let Some(c) = o.normal_convention {
        v.options.convention = c;
    }
    if let Some(d) = o.direction_encoding {
        v.direction_encoding = d;
    }
    if let Some(p) = o.power_of_two {
        v.options.power_of_two = p;
    }
    if let Some(l) = o.layout {
        v.options.layout = l;
    }
    if let Some(z) = o.zip {
        v.compression = if z {
            TextureCompression::Zip
        } else {
            TextureCompression::None
        };
    }
    // Named compression wins over the older `zip` switch at the same level.
    if let Some(c) = o.compression {
        v.compression = c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_overrides_win_and_frames_become_seconds() {
        let mut d = Draft::new();
        d.apply(&Overrides {
            fps: Some(24.0),
            outputs: Some(vec![OutputKind::Bones, OutputKind::Vat]),
            ..Overrides::default()
        });
        d.apply(&Overrides {
            fps: Some(12.0),
            clip: vec![ClipEntry {
                source: "Take".into(),
                name: Some("idle".into()),
                frames: Some([6, 18]),
                time: None,
                looping: Some(true),
                root_motion: None,
            }],
            ..Overrides::default()
        });
        let s = d.resolve().unwrap();
        assert_eq!(s.sampling.fps, 12.0);
        assert!(
            s.outputs.has(OutputKind::Bones)
                && s.outputs.has(OutputKind::Vat)
                && !s.outputs.has(OutputKind::Weights)
        );
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
    }

    #[test]
    fn invalid_values_are_reported() {
        let mut d = Draft::new();
        d.apply(&Overrides {
            fps: Some(0.0),
            ..Overrides::default()
        });
        assert!(d.resolve().unwrap_err().to_string().contains("fps"));
        let mut d = Draft::new();
        d.add_blends(&["Walk,Run,0,2".into()]).unwrap();
        assert!(
            d.resolve()
                .unwrap_err()
                .to_string()
                .contains("outside 0..1")
        );
        assert!(parse_blend("Walk,Run").is_err());
    }
}
