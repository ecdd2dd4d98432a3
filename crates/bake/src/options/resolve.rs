//! From options to settings: the layered [`Options`] of one model turned
//! into the [`BakeSettings`] its bake runs with, validated once.

use rigbake_core::bake::weights::MAX_INFLUENCES;
use rigbake_core::timeline::{ClipRequest, ClipSpec};
use rigbake_types::{OutputKind, OutputKinds, Props};

use super::{BlendEntry, ClipEntry, Options, VatOptions};
use crate::settings::{AnchorSettings, BakeSettings, VatSettings};

/// The largest `--max-texture-size` / `max_texture_size` (what the
/// container reader accepts).
pub const MAX_TEXTURE_SIZE: u64 = rigbake_format::check::MAX_TEXTURE_SIZE as u64;

/// Why settings cannot be resolved for a model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    /// The frame rate is out of range.
    #[error("fps must be between 0 and 1000, got {0}")]
    Fps(f64),
    /// The layout fallback is itself a lossy layout.
    #[error(
        "layout_fallback must be `mat4` or `mat3x4` (a layout that holds every skin matrix), got `qts`"
    )]
    LayoutFallback,
    /// 16-bit normalised precision asked for a matrix layout.
    #[error(
        "precision `unorm16` is a form of the `qts` layout (its parts have known ranges); the matrix layouts take `f32` or `f16`"
    )]
    Unorm16Layout,
    /// A VAT format that only KTX2 and DDS hold asked for without one
    /// (the text is the format's name).
    #[error(
        "VAT format `{0}` is stored as a GPU texture format (RGBA8 or RGB10A2 UNORM) that only KTX2 and DDS hold: add --texture-container ktx2 (or ktx2-zstd, dds), or take --format png16"
    )]
    VatNeedsGpuContainer(&'static str),
    /// The largest texture size is outside 1..=[`MAX_TEXTURE_SIZE`]
    /// (`key` names the flag or manifest key it came from).
    #[error("{key} must be 1 to {max}, got {got}", max = MAX_TEXTURE_SIZE)]
    MaxTextureSize {
        /// `--max-texture-size` or `max_texture_size`.
        key: &'static str,
        /// The value given.
        got: u64,
    },
    /// `outputs` asks for weights or anchors without the bone textures they
    /// are baked with (the text lists the outputs asked for).
    #[error(
        "outputs {0}: `weights` and `anchors` are baked with the bone textures; add `bones` to outputs"
    )]
    NeedsBones(String),
    /// The bone-weight pairs per vertex are out of range.
    #[error("max_influences must be 1 to {max}, got {got}")]
    MaxInfluences {
        /// The largest allowed.
        max: usize,
        /// The value given.
        got: usize,
    },
    /// A clip gives both a frame range and a time range.
    #[error("clip `{0}`: give `frames` or `time`, not both")]
    ClipRanges(String),
    /// A clip's frame range is empty.
    #[error("clip `{source_clip}`: frames [{first}, {last}] are empty")]
    ClipFrames {
        /// The clip's source animation.
        source_clip: String,
        /// First frame.
        first: u32,
        /// Last frame.
        last: u32,
    },
    /// `--blend` text is not `A,B,W[,W...]`.
    #[error("--blend `{0}`: expected A,B,W[,W...]")]
    BlendSyntax(String),
    /// A `--blend` weight is not a number.
    #[error("--blend `{text}`: `{weight}` is not a number")]
    BlendNumber {
        /// The whole argument.
        text: String,
        /// The bad weight.
        weight: String,
    },
    /// A blend lists no weights.
    #[error("blend of `{0}` and `{1}` lists no weights")]
    BlendEmpty(String, String),
    /// A blend weight is outside 0..1.
    #[error("blend of `{0}` and `{1}`: weight {2} is outside 0..1")]
    BlendWeight(String, String, f64),
}

/// Parses `--blend A,B,W[,W...]` into a blend entry.
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

impl Options {
    /// The outputs asked for: `outputs` (else the built-in ones), with what
    /// the flags add (`--vat`, `--output`, `--anchor`, `--anchors auto`)
    /// and take away (`--no-weights`).
    pub fn output_kinds(&self) -> OutputKinds {
        let mut o = self
            .outputs
            .as_deref()
            .map_or(BakeSettings::default().outputs, OutputKinds::of);
        if self.add_vat {
            o.set(OutputKind::Vat, true);
        }
        for kind in &self.output {
            o.set(*kind, true);
        }
        if self.no_weights {
            o.set(OutputKind::Weights, false);
        }
        if !self.anchor.is_empty() || self.anchors_mode.is_some() {
            o.set(OutputKind::Anchors, true);
        }
        o
    }

    /// Makes the outputs `kinds`, whatever the flags added or took away
    /// (the sockets `--anchor` and `--anchors auto` ask for stay).
    fn set_outputs(&mut self, kinds: OutputKinds) {
        self.outputs = Some(kinds.iter().collect());
        self.add_vat = false;
        self.output.clear();
        self.no_weights = false;
        if !self.anchor.is_empty() {
            self.anchors = Some(std::mem::take(&mut self.anchor));
        }
        if self.anchors_mode.take().is_some() {
            self.auto_anchors = Some(true);
        }
    }

    /// Restricts the outputs to VAT (the `vat` command). A manifest model
    /// with `outputs = []` stays skipped.
    pub fn vat_only(&mut self) {
        let mut o = self.output_kinds();
        if o.iter().all(|k| k == OutputKind::OpenVat) {
            return;
        }
        for kind in [OutputKind::Bones, OutputKind::Weights, OutputKind::Anchors] {
            o.set(kind, false);
        }
        o.set(OutputKind::Vat, true);
        self.set_outputs(o);
    }

    /// Adds the OpenVAT-compatible export (`rigbake vat --compat openvat`).
    pub fn openvat(&mut self) {
        let mut o = self.output_kinds();
        o.set(OutputKind::OpenVat, true);
        self.set_outputs(o);
    }

    /// The settings these options ask for, over the built-in defaults
    /// ([`BakeSettings::default`]), validated; the error says what is
    /// wrong in plain words.
    pub fn resolve(&self) -> Result<BakeSettings, SettingsError> {
        let mut s = BakeSettings::default();
        self.apply_values(&mut s);
        apply_vat(&mut s.vat, &self.vat);
        if let Some(set) = self.vat.lookup_uv_set {
            s.lookup_uv_set = Some(usize::from(set));
        }
        s.outputs = self.output_kinds();
        let fps = s.sampling.fps;
        if !(fps.is_finite() && fps > 0.0 && fps <= 1000.0) {
            return Err(SettingsError::Fps(fps));
        }
        check_max_texture_size("max_texture_size", s.max_texture_size)?;
        if s.layout_fallback.is_some_and(|l| !l.is_exact()) {
            return Err(SettingsError::LayoutFallback);
        }
        if s.precision == rigbake_types::Precision::Unorm16 && s.layout.is_exact() {
            return Err(SettingsError::Unorm16Layout);
        }
        check_outputs(s.outputs)?;
        if s.outputs.has(OutputKind::Vat)
            && s.vat.encoding.needs_gpu_container()
            && s.texture_container.is_exr()
        {
            return Err(SettingsError::VatNeedsGpuContainer(match s.vat.encoding {
                rigbake_types::VatEncoding::Unorm8 => "unorm8",
                _ => "unorm10",
            }));
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
            .clip
            .iter()
            .map(|c| clip_spec(c, fps))
            .collect::<Result<_, _>>()?;
        s.blends = self.blend_specs()?;
        Ok(s)
    }

    /// Every value given, onto `s` (the outputs and VAT options apart).
    fn apply_values(&self, s: &mut BakeSettings) {
        set(&mut s.sampling.fps, self.fps);
        set(&mut s.sampling.rule, self.sampling);
        set(&mut s.layout, self.layout);
        s.layout_fallback = self.layout_fallback.or(s.layout_fallback);
        s.max_error = self.max_error.or(s.max_error);
        set(&mut s.precision, self.precision);
        if let Some(m) = self.max_texture_size {
            s.max_texture_size = m;
            s.vat.options.max_texture_size = m;
        }
        if let Some(m) = &self.max_influences {
            let levels = m.levels();
            s.max_influences = levels.first().copied().unwrap_or(0);
            s.lod_influences = levels.get(1..).unwrap_or_default().to_vec();
        }
        s.import.scene = self.scene.or(s.import.scene);
        set(&mut s.embed_textures, self.embed_textures);
        set(&mut s.texture_container, self.texture_container);
        s.anchors.nodes = if self.anchor.is_empty() {
            self.anchors.clone().unwrap_or_default()
        } else {
            self.anchor.clone()
        };
        s.anchors.auto = self.anchors_mode.is_some() || self.auto_anchors.unwrap_or(false);
        set(&mut s.anchors.exr, self.anchors_exr);
        set(&mut s.bind_props, self.props.map(|p| p == Props::Bind));
        set(&mut s.exclude, self.exclude.clone());
        let nodes: Vec<_> = self
            .lod_args
            .iter()
            .filter_map(|a| a.nodes())
            .cloned()
            .collect();
        s.lods = if nodes.is_empty() {
            self.lod.clone()
        } else {
            nodes
        };
        set(&mut s.lod_files, self.lod_files.clone());
        set(&mut s.root_motion.mode, self.root_motion);
        s.root_motion.node = self.root_node.clone().or(s.root_motion.node.take());
        s.weights_as_uv |= self.weights_as_uv;
    }

    /// The blends to bake: the `blend` entries, then `--blend`'s, one clip
    /// per weight.
    fn blend_specs(&self) -> Result<Vec<ClipSpec>, SettingsError> {
        let flags = self
            .blend_args
            .iter()
            .map(|b| parse_blend(b))
            .collect::<Result<Vec<_>, _>>()?;
        let mut specs = Vec::new();
        for b in self.blend.iter().chain(&flags) {
            if b.weights.is_empty() {
                return Err(SettingsError::BlendEmpty(b.a.clone(), b.b.clone()));
            }
            for &weight in &b.weights {
                if !(0.0..=1.0).contains(&weight) {
                    return Err(SettingsError::BlendWeight(b.a.clone(), b.b.clone(), weight));
                }
                specs.push(ClipSpec {
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
        Ok(specs)
    }
}

/// `from`, when given, into `to`.
fn set<T>(to: &mut T, from: Option<T>) {
    if let Some(v) = from {
        *to = v;
    }
}

/// Weights and anchors are baked with the bone textures.
fn check_outputs(o: OutputKinds) -> Result<(), SettingsError> {
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

/// The VAT options given, onto `v` (`zip` as the compression it stands
/// for, unless `compression` is given too).
fn apply_vat(v: &mut VatSettings, o: &VatOptions) {
    let o = o.clone().folded();
    set(&mut v.encoding, o.format);
    set(&mut v.options.normals, o.normals);
    set(&mut v.options.tangents, o.tangents);
    set(&mut v.options.convention, o.normal_convention);
    set(&mut v.direction_encoding, o.direction_encoding);
    set(&mut v.options.power_of_two, o.power_of_two);
    set(&mut v.options.layout, o.layout);
    set(&mut v.compression, o.compression);
    set(&mut v.png_compression, o.png_compression);
}
