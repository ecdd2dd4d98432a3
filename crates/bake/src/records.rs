//! The mapping between core values and the metadata records of
//! `rigbake_format::meta`, both ways, in one place: what a bake writes into
//! the container and what playback reads back out of it. Option values
//! (layout, precision, sampling rule, normal convention, encodings) need no
//! mapping: core and metadata share their definitions (`rigbake-types`).

use rigbake_core::bake::vat::Deformation;
use rigbake_core::runtime::ClipInfo;
use rigbake_core::timeline::Timeline;
use rigbake_format::meta;

/// How the metadata records what deforms a VAT primitive (the skin index
/// is not recorded).
pub fn deformation(deformation: Deformation) -> meta::Deformation {
    match deformation {
        Deformation::Skinned { .. } => meta::Deformation::Skinned,
        Deformation::Rigid => meta::Deformation::Rigid,
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
        rule,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigbake_core::timeline::{SampleRule, Sampling};

    #[test]
    fn deformations_drop_only_the_skin_index() {
        assert_eq!(
            deformation(Deformation::Skinned { skin: 3 }),
            meta::Deformation::Skinned
        );
        assert_eq!(deformation(Deformation::Rigid), meta::Deformation::Rigid);
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
            let info = clip_info(meta_clip, sampling.rule);
            assert_eq!(info.start_row as usize, clip.start_row);
            assert_eq!(info.frames as usize, clip.frames);
            assert_eq!((info.fps, info.duration), (24.0, clip.duration));
            assert_eq!(info.looping, clip.looping);
            assert_eq!(info.rule, SampleRule::EvenSpread);
        }
    }
}
