//! The animation states the shaders are run with: produced by the runtime's
//! own state machine (`AnimationState`) at times between frames, across
//! loop wraps, past the end of a clip played once, backwards, and during
//! single and nested crossfades; plus one hand-made state with four rows
//! (the most the shaders read), one of them at the texture's last row so
//! the `row + 1` clamp is taken; and the disabled state.

use rigbake_core::runtime::{AnimationState, ClipInfo, GpuState, PlayMode};

/// A state and what it exercises, for messages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Case {
    /// What the state is.
    pub label: &'static str,
    /// The 4 rows and the enable flag.
    pub state: GpuState,
}

/// Clip time of frame position `x` (frames from the clip's start).
fn at_frame(clip: &ClipInfo, x: f64) -> f64 {
    let rate = clip.frame_rate();
    if rate > 0.0 { x / rate } else { 0.0 }
}

/// A frame position between frames: 0.37 past frame `min(3, last - 1)`.
fn between_frames(clip: &ClipInfo) -> f64 {
    let last = f64::from(clip.frames.max(1) - 1);
    (last - 1.0).clamp(0.0, 3.0) + 0.37
}

/// `clip` played in `mode` at `speed` for `t` seconds.
fn playing(clip: ClipInfo, mode: PlayMode, speed: f64, t: f64) -> AnimationState {
    let mut s = AnimationState::new();
    s.play(clip, mode, speed);
    s.update(t);
    s
}

/// The states for a model with clip table `clips` and `rows` texture rows.
pub fn schedule(clips: &[ClipInfo], rows: u32) -> Vec<Case> {
    let mut out = vec![Case {
        label: "disabled",
        state: GpuState::DISABLED,
    }];
    let shown = &clips[..clips.len().min(3)];
    for clip in shown {
        let mode = PlayMode::of(clip);
        out.push(Case {
            label: "between frames",
            state: playing(*clip, mode, 1.0, at_frame(clip, between_frames(clip))).gpu_state(),
        });
        // Half way between the last frame and the loop's end: the state's
        // two-row wrap when the clip ends past its last frame, else the
        // last interval.
        let last = f64::from(clip.frames.max(1) - 1);
        let end = clip.length_frames();
        let x = if end > last {
            (last + end) / 2.0
        } else {
            last - 0.5
        };
        out.push(Case {
            label: "loop wrap / last interval",
            state: playing(*clip, PlayMode::Loop, 1.0, at_frame(clip, x)).gpu_state(),
        });
        out.push(Case {
            label: "backwards, several loops",
            state: playing(*clip, PlayMode::Loop, -1.3, 3.7 * clip.length() + 0.011).gpu_state(),
        });
        out.push(Case {
            label: "once, past the end",
            state: playing(*clip, PlayMode::Once, 1.0, clip.length() + 1.0).gpu_state(),
        });
    }
    if let (Some(first), Some(second)) = (shown.first(), shown.get(1).or(shown.first())) {
        let third = shown.get(2).unwrap_or(first);
        let mut s = playing(*first, PlayMode::Loop, 1.0, at_frame(first, 1.61));
        s.crossfade(*second, PlayMode::Loop, 1.0, 0.5);
        s.update(at_frame(second, 2.29));
        out.push(Case {
            label: "crossfade",
            state: s.gpu_state(),
        });
        s.crossfade(*third, PlayMode::Loop, 0.8, 0.4);
        s.update(0.13);
        out.push(Case {
            label: "crossfade during a crossfade",
            state: s.gpu_state(),
        });
    }
    // Four rows with fractions; the last one at the last row, whose next
    // row clamps to itself.
    let last = rows.max(1) - 1;
    let row = |k: u32| (last * k / 4) as f32;
    out.push(Case {
        label: "four rows by hand",
        state: GpuState {
            rows: [
                [0.1, 0.25, row(0), 0.0],
                [0.2, 0.5, row(1), 0.0],
                [0.3, 0.75, row(2), 0.0],
                [0.4, 0.625, last as f32, 0.0],
            ],
            enabled: true,
        },
    });
    out
}

/// What a schedule covers: the most active rows in one state, and whether
/// some row has a fraction (the shaders' second fetch and lerp).
pub fn coverage(cases: &[Case]) -> (usize, bool) {
    let rows = cases
        .iter()
        .map(|c| c.state.active_rows().count())
        .max()
        .unwrap_or(0);
    let lerp = cases
        .iter()
        .any(|c| c.state.active_rows().any(|r| r[1] > 0.0));
    (rows, lerp)
}
