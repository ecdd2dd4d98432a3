//! The mapping between core values and the metadata records of
//! `rigbake_format::meta`, both ways, in one place: what a bake writes into
//! the container and what playback reads back out of it. Option values
//! (layout, precision, sampling rule, normal convention, encodings) need no
//! mapping: core and metadata share their definitions (`rigbake-types`).

use rigbake_core::Model;
use rigbake_core::bake::vat::Deformation;
use rigbake_core::runtime::ClipInfo;
use rigbake_core::timeline::root_motion::RootMotionSample;
use rigbake_core::timeline::{ClipSource, Timeline};
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

/// The root-motion record of a timeline, when any clip is baked in place:
/// per clip its mode, total travel and turn, and the per-frame track
/// ([`rigbake_core::timeline::root_motion`]).
pub fn root_motion(model: &Model, timeline: &Timeline) -> Option<meta::RootMotionMetadata> {
    let plan = timeline.root_motion.as_ref()?;
    let tracks = timeline.root_motion_track(model)?;
    let entry = |s: &RootMotionSample| [s.translation.x, s.translation.y, s.translation.z, s.yaw];
    let clips = tracks
        .iter()
        .zip(&plan.clips)
        .map(|(track, extraction)| {
            if !extraction.mode.extracts() {
                return meta::ClipRootMotionMeta {
                    mode: extraction.mode,
                    displacement: [0.0; 3],
                    rotation: 0.0,
                    end: [0.0; 4],
                    track: Vec::new(),
                };
            }
            // The root's position at the end is M(end) * start.
            let start = extraction.start.position;
            let end = track.end.matrix().transform_point3(start);
            meta::ClipRootMotionMeta {
                mode: extraction.mode,
                displacement: (end - start).to_array(),
                rotation: track.end.yaw,
                end: entry(&track.end),
                track: track.frames.iter().map(entry).collect(),
            }
        })
        .collect();
    Some(meta::RootMotionMetadata {
        node: model.nodes[plan.node].name.clone(),
        clips,
    })
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

/// Where each clip of a timeline comes from, for the clips the clip table
/// alone does not say: blends, and parts of an animation or an animation
/// under another name. Whole animations under their own name are left out.
pub fn clip_origins(model: &Model, timeline: &Timeline) -> Vec<meta::ClipOrigin> {
    timeline
        .clips
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match c.source {
            ClipSource::Blend { a, b, weight } => Some(meta::ClipOrigin::Blend {
                clip: i as u32,
                first: model.clips[a].name.clone(),
                second: model.clips[b].name.clone(),
                weight,
            }),
            // Part of an animation, or all of it under another name.
            ClipSource::Animation { clip, start, end }
                if start > 0.0
                    || end < model.clips[clip].duration
                    || c.name != model.clips[clip].name =>
            {
                Some(meta::ClipOrigin::Range {
                    clip: i as u32,
                    source: model.clips[clip].name.clone(),
                    start,
                    end,
                })
            }
            _ => None,
        })
        .collect()
}

/// The clip source a recorded origin names; `animation` finds an animation
/// of the source model by name (its error is returned as is).
pub fn clip_source<E>(
    origin: &meta::ClipOrigin,
    mut animation: impl FnMut(&str) -> Result<usize, E>,
) -> Result<ClipSource, E> {
    Ok(match origin {
        meta::ClipOrigin::Range {
            source, start, end, ..
        } => ClipSource::Animation {
            clip: animation(source)?,
            start: *start,
            end: *end,
        },
        meta::ClipOrigin::Blend {
            first,
            second,
            weight,
            ..
        } => ClipSource::Blend {
            a: animation(first)?,
            b: animation(second)?,
            weight: *weight,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigbake_core::timeline::{ClipRequest, ClipSpec, SampleRule, Sampling};

    #[test]
    fn deformations_drop_only_the_skin_index() {
        assert_eq!(
            deformation(Deformation::Skinned { skin: 3 }),
            meta::Deformation::Skinned
        );
        assert_eq!(deformation(Deformation::Rigid), meta::Deformation::Rigid);
    }

    fn tentacle() -> Model {
        let glb = rigbake_fixtures::models::tentacle().to_glb();
        rigbake_core::import::import_bytes(
            std::path::Path::new("tentacle.glb"),
            &glb,
            &rigbake_core::import::ImportOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn clip_origins_read_back_as_the_clip_sources() {
        let model = tentacle();
        let wave = model.clips[0].name.clone();
        let specs = [
            ClipSpec::whole(&wave),
            ClipSpec {
                request: ClipRequest::Range {
                    source: wave.clone(),
                    start: 0.25,
                    end: 1.0,
                },
                name: Some("part".into()),
                looping: None,
                root_motion: None,
            },
            ClipSpec {
                request: ClipRequest::Blend {
                    a: wave.clone(),
                    b: wave.clone(),
                    weight: 0.5,
                },
                name: None,
                looping: None,
                root_motion: None,
            },
        ];
        let timeline = Timeline::build(&model, Sampling::default(), &specs).unwrap();
        let origins = clip_origins(&model, &timeline);
        assert_eq!(origins.len(), 2, "the whole animation needs no origin");
        for origin in &origins {
            let (meta::ClipOrigin::Range { clip, .. } | meta::ClipOrigin::Blend { clip, .. }) =
                origin;
            let by_name = |name: &str| model.clips.iter().position(|c| c.name == name).ok_or(());
            assert_eq!(
                clip_source(origin, by_name),
                Ok(timeline.clips[*clip as usize].source)
            );
        }
        let unknown = |_: &str| Err::<usize, _>("no such animation");
        assert_eq!(clip_source(&origins[0], unknown), Err("no such animation"));
    }

    #[test]
    fn the_clip_table_reads_back_as_the_runtime_clips() {
        let model = tentacle();
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
