//! The mapping between core values and the metadata records of
//! `rigbake_format::meta`, both ways, in one place: what a bake writes into
//! the container and what playback reads back out of it.

use rigbake_core::bake::MatrixLayout;
use rigbake_core::bake::vat::{Deformation, NormalConvention};
use rigbake_core::model::PrimitiveMode;
use rigbake_core::runtime::ClipInfo;
use rigbake_core::timeline::{SampleRule, Timeline};
use rigbake_format::{glb, meta};

/// The metadata name of a core matrix layout.
pub fn layout(layout: MatrixLayout) -> meta::MatrixLayout {
    match layout {
        MatrixLayout::Mat4 => meta::MatrixLayout::Mat4,
        MatrixLayout::Mat3x4 => meta::MatrixLayout::Mat3x4,
    }
}

/// The core matrix layout a metadata record names.
pub fn layout_from(layout: meta::MatrixLayout) -> MatrixLayout {
    match layout {
        meta::MatrixLayout::Mat4 => MatrixLayout::Mat4,
        meta::MatrixLayout::Mat3x4 => MatrixLayout::Mat3x4,
    }
}

/// The metadata name of a core sampling rule.
pub fn sampling_rule(rule: SampleRule) -> meta::SamplingRule {
    match rule {
        SampleRule::FixedRate => meta::SamplingRule::FixedRate,
        SampleRule::EvenSpread => meta::SamplingRule::EvenSpread,
    }
}

/// The core sampling rule a metadata record names.
pub fn sampling_rule_from(rule: meta::SamplingRule) -> SampleRule {
    match rule {
        meta::SamplingRule::FixedRate => SampleRule::FixedRate,
        meta::SamplingRule::EvenSpread => SampleRule::EvenSpread,
    }
}

/// The metadata name of a core normal convention.
pub fn normal_convention(convention: NormalConvention) -> meta::NormalConvention {
    match convention {
        NormalConvention::InverseTranspose => meta::NormalConvention::InverseTranspose,
        NormalConvention::BlendedMatrix => meta::NormalConvention::BlendedMatrix,
    }
}

/// The core normal convention a metadata record names.
pub fn normal_convention_from(convention: meta::NormalConvention) -> NormalConvention {
    match convention {
        meta::NormalConvention::InverseTranspose => NormalConvention::InverseTranspose,
        meta::NormalConvention::BlendedMatrix => NormalConvention::BlendedMatrix,
    }
}

/// How the metadata records what deforms a VAT primitive (the skin index
/// is not recorded).
pub fn deformation(deformation: Deformation) -> meta::Deformation {
    match deformation {
        Deformation::Skinned { .. } => meta::Deformation::Skinned,
        Deformation::Rigid => meta::Deformation::Rigid,
    }
}

/// The GLB topology of a core primitive mode.
pub fn primitive_mode(mode: PrimitiveMode) -> glb::PrimitiveMode {
    match mode {
        PrimitiveMode::Points => glb::PrimitiveMode::Points,
        PrimitiveMode::Lines => glb::PrimitiveMode::Lines,
        PrimitiveMode::LineLoop => glb::PrimitiveMode::LineLoop,
        PrimitiveMode::LineStrip => glb::PrimitiveMode::LineStrip,
        PrimitiveMode::Triangles => glb::PrimitiveMode::Triangles,
        PrimitiveMode::TriangleStrip => glb::PrimitiveMode::TriangleStrip,
        PrimitiveMode::TriangleFan => glb::PrimitiveMode::TriangleFan,
    }
}

/// The clip table of a timeline.
pub fn clip_table(timeline: &Timeline) -> Vec<meta::ClipMeta> {
    let fps = timeline.sampling.fps;
    timeline
        .clips
        .iter()
        .map(|c| meta::ClipMeta {
            name: c.name.clone(),
            start_row: c.start_row as u32,
            frames: c.frames as u32,
            fps,
            duration: c.duration,
            looping: c.looping,
        })
        .collect()
}

/// The runtime's view of a clip table entry of a bake made with `rule`.
pub fn clip_info(clip: &meta::ClipMeta, rule: meta::SamplingRule) -> ClipInfo {
    ClipInfo {
        start_row: clip.start_row,
        frames: clip.frames,
        fps: clip.fps,
        duration: clip.duration,
        looping: clip.looping,
        rule: sampling_rule_from(rule),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigbake_core::timeline::Sampling;

    #[test]
    fn option_values_round_trip() {
        for l in [MatrixLayout::Mat4, MatrixLayout::Mat3x4] {
            assert_eq!(layout_from(layout(l)), l);
        }
        for r in [SampleRule::FixedRate, SampleRule::EvenSpread] {
            assert_eq!(sampling_rule_from(sampling_rule(r)), r);
        }
        for c in [
            NormalConvention::InverseTranspose,
            NormalConvention::BlendedMatrix,
        ] {
            assert_eq!(normal_convention_from(normal_convention(c)), c);
        }
        assert_eq!(
            deformation(Deformation::Skinned { skin: 3 }),
            meta::Deformation::Skinned
        );
        assert_eq!(deformation(Deformation::Rigid), meta::Deformation::Rigid);
        // GLB modes carry the glTF numbers.
        assert_eq!(primitive_mode(PrimitiveMode::TriangleFan) as u32, 6);
        assert_eq!(primitive_mode(PrimitiveMode::Points) as u32, 0);
    }

    #[test]
    fn the_clip_table_reads_back_as_the_runtime_clips() {
        let glb = rigbake_fixtures::models::tentacle().to_glb();
        let model = rigbake_core::import::import_bytes(
            std::path::Path::new("tentacle.glb"),
            &glb,
            &rigbake_core::import::ImportOptions::default(),
        )
        .unwrap();
        let sampling = Sampling {
            fps: 24.0,
            rule: SampleRule::EvenSpread,
        };
        let timeline = Timeline::all_clips(&model, sampling).unwrap();
        let table = clip_table(&timeline);
        assert_eq!(table.len(), timeline.clips.len());
        for (meta_clip, clip) in table.iter().zip(&timeline.clips) {
            let info = clip_info(meta_clip, sampling_rule(sampling.rule));
            assert_eq!(info.start_row as usize, clip.start_row);
            assert_eq!(info.frames as usize, clip.frames);
            assert_eq!((info.fps, info.duration), (24.0, clip.duration));
            assert_eq!(info.looping, clip.looping);
            assert_eq!(info.rule, SampleRule::EvenSpread);
        }
    }
}
