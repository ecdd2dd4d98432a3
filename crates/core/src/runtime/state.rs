//! Per-instance animation state (SPEC section 6): which clips play, where
//! in them, and with what weight; turned every update into the 4x4 float
//! block a shader reads, one row `(blend weight, fraction toward the next
//! frame, frame row, reserved)` per active texture row, plus an enable flag.
//!
//! **Time mapping.** A clip's frame position at clip time `t` is
//! `x = t * rate`, with `rate = fps` for fixed-rate clips and
//! `(frames - 1) / duration` for even-spread ones, so frame `i` sits at its
//! sample time. The clip's *length in frames* `L` is where its animation
//! ends: `frames - 1` when the last frame lands on the clip end (even
//! spread; fixed rate with `duration * fps` within [`FRAME_SNAP`] of
//! `frames - 1`), otherwise `duration * fps`, which lies less than one frame
//! past the last frame. Its length in seconds is `L / rate`.
//!
//! - **Loop**: `x` wraps modulo `L`. Between the last frame and `L` the
//!   clip interpolates from its last frame to its first, with fraction
//!   `(x - last) / (L - last)`; when the last frame lands on the end that
//!   interval is empty (the last frame *is* the first pose again).
//! - **Once**: `x` is clamped to `[0, L]`; from the last frame on, the last
//!   frame holds with fraction 0.
//!
//! Positions within [`FRAME_SNAP`] frames of a whole frame snap to it, so
//! times computed as `i / fps` land on frame `i` despite rounding.
//!
//! **Rows for the GPU.** A shader lerps texture rows `row` and `row + 1`.
//! Inside a clip that is the next frame; across a loop's wrap it is not, so
//! a wrapping clip is emitted as two rows with fraction 0: the last frame
//! weighted `w * (1 - f)` and the first frame weighted `w * f`, which blends
//! to exactly the same result. One clip therefore takes 1 or 2 rows and a
//! crossfade of two clips 2 to 4.

use crate::timeline::SampleRule;

/// Frame positions closer than this (in frames) to a whole frame snap to it;
/// the same tolerance the frame count uses (SPEC section 2).
pub const FRAME_SNAP: f64 = crate::timeline::FRAME_COUNT_EPSILON;

/// Rows of the GPU animation state.
pub const STATE_ROWS: usize = 4;

/// What the runtime needs to know about one baked clip (a row of the clip
/// table; plain numbers so this crate needs no container types).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipInfo {
    /// First texture row of the clip.
    pub start_row: u32,
    /// Frames (texture rows) of the clip; at least 1.
    pub frames: u32,
    /// Frames per second the clip was baked at.
    pub fps: f64,
    /// Duration in seconds.
    pub duration: f64,
    /// Whether the clip loops by default (its start and end poses match).
    pub looping: bool,
    /// How the bake spread frames over the clip.
    pub rule: SampleRule,
}

/// How a clip plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlayMode {
    /// Wrap from the last frame to the first, forever.
    Loop,
    /// Play to the end and hold the last frame.
    Once,
}

impl PlayMode {
    /// The clip's own mode: [`PlayMode::Loop`] when it loops.
    pub fn of(clip: &ClipInfo) -> Self {
        if clip.looping { Self::Loop } else { Self::Once }
    }
}

/// Where a clip is at some instant: the texture row of the frame before, the
/// row of the frame after, and the fraction between them in `[0, 1)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameSample {
    /// Texture row of the frame at or before the instant.
    pub row: u32,
    /// Texture row of the frame after it (`row + 1` inside the clip, the
    /// clip's first row across a loop's wrap, `row` when holding).
    pub next_row: u32,
    /// Fraction from `row` toward `next_row`, in `[0, 1)`.
    pub fraction: f32,
}

/// The largest `f32` below 1: fractions never reach 1.
const BELOW_ONE: f32 = 1.0 - f32::EPSILON / 2.0;

impl ClipInfo {
    /// Index of the last frame (0 for an empty or one-frame clip).
    fn last(&self) -> u32 {
        self.frames.max(1) - 1
    }

    /// Frames per second of clip time: `fps` at a fixed rate,
    /// `(frames - 1) / duration` for even spread; 0 for degenerate clips.
    pub fn frame_rate(&self) -> f64 {
        let rate = match self.rule {
            SampleRule::FixedRate => self.fps,
            SampleRule::EvenSpread if self.duration > 0.0 => f64::from(self.last()) / self.duration,
            SampleRule::EvenSpread => 0.0,
        };
        if rate.is_finite() && rate > 0.0 {
            rate
        } else {
            0.0
        }
    }

    /// The clip's length in frames `L` (see the module documentation).
    pub fn length_frames(&self) -> f64 {
        let last = f64::from(self.last());
        if last == 0.0 || self.frame_rate() == 0.0 {
            return 0.0;
        }
        match self.rule {
            SampleRule::EvenSpread => last,
            SampleRule::FixedRate => {
                let end = self.duration * self.fps;
                if end.is_finite() && end > last + FRAME_SNAP {
                    end
                } else {
                    last
                }
            }
        }
    }

    /// The clip's length in seconds: `L / rate` (0 for a one-frame clip).
    pub fn length(&self) -> f64 {
        let rate = self.frame_rate();
        if rate > 0.0 {
            self.length_frames() / rate
        } else {
            0.0
        }
    }

    /// The sample time of frame `frame`, as the bake took it (SPEC section 2).
    pub fn frame_time(&self, frame: u32) -> f64 {
        let sampling = crate::timeline::Sampling {
            fps: self.fps,
            rule: self.rule,
        };
        crate::timeline::frame_time(
            frame as usize,
            self.frames.max(1) as usize,
            self.duration,
            sampling,
        )
    }

    /// Where the clip is at clip time `time` (seconds) when played in `mode`.
    pub fn sample(&self, time: f64, mode: PlayMode) -> FrameSample {
        let start = self.start_row;
        let hold = |frame: u32| FrameSample {
            row: start.saturating_add(frame),
            next_row: start.saturating_add(frame),
            fraction: 0.0,
        };
        let length = self.length_frames();
        if length <= 0.0 || !time.is_finite() {
            return hold(0);
        }
        let last = self.last();
        let mut x = time * self.frame_rate();
        x = match mode {
            PlayMode::Once => x.clamp(0.0, length),
            PlayMode::Loop => x.rem_euclid(length),
        };
        let nearest = x.round();
        if (x - nearest).abs() <= FRAME_SNAP {
            x = nearest;
        }
        if mode == PlayMode::Loop && x >= length {
            x = 0.0;
        }
        let floor = x.floor();
        if floor >= f64::from(last) {
            let tail = length - f64::from(last);
            return match mode {
                PlayMode::Loop if tail > 0.0 => {
                    let fraction = ((x - f64::from(last)) / tail) as f32;
                    if fraction > 0.0 {
                        FrameSample {
                            row: start.saturating_add(last),
                            next_row: start,
                            fraction: fraction.min(BELOW_ONE),
                        }
                    } else {
                        hold(last)
                    }
                }
                _ => hold(last),
            };
        }
        let frame = floor as u32;
        let fraction = ((x - floor) as f32).min(BELOW_ONE);
        if fraction > 0.0 {
            FrameSample {
                row: start.saturating_add(frame),
                next_row: start.saturating_add(frame + 1),
                fraction,
            }
        } else {
            hold(frame)
        }
    }

    /// Keeps a clip time within the clip: wrapped into `[0, length)` for
    /// loops, clamped to `[0, length]` otherwise.
    fn settle(&self, time: f64, mode: PlayMode) -> f64 {
        let length = self.length();
        if !time.is_finite() || length <= 0.0 {
            return 0.0;
        }
        match mode {
            PlayMode::Loop => {
                let t = time.rem_euclid(length);
                if t >= length { 0.0 } else { t }
            }
            PlayMode::Once => time.clamp(0.0, length),
        }
    }
}

/// One row of the GPU animation state: `(blend weight, fraction toward the
/// next frame, frame row, reserved = 0)`.
pub type StateRow = [f32; 4];

/// What a shader receives per instance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuState {
    /// Up to [`STATE_ROWS`] active rows, then rows of zeros (weight 0 =
    /// inactive). Active rows' weights sum to 1.
    pub rows: [StateRow; STATE_ROWS],
    /// `false`: draw the mesh unskinned (bind pose / as stored).
    pub enabled: bool,
}

impl GpuState {
    /// The disabled state: no rows, draw the mesh as it is.
    pub const DISABLED: Self = Self {
        rows: [[0.0; 4]; STATE_ROWS],
        enabled: false,
    };

    /// Rows with a positive weight, in order.
    pub fn active_rows(&self) -> impl Iterator<Item = &StateRow> {
        self.rows.iter().filter(|r| r[0] > 0.0)
    }

    /// The timeline rows a shader fetches in this state, as both paths do:
    /// each active row, and where it blends into the next, that row
    /// (`row + 1`, at most `last_row`). Unsorted; may repeat.
    pub fn rows_read(&self, last_row: u32) -> impl Iterator<Item = u32> + '_ {
        self.active_rows().flat_map(move |a| {
            let row = a[2] as u32;
            let next = (a[1] > 0.0).then(|| row.saturating_add(1).min(last_row));
            std::iter::once(row).chain(next)
        })
    }

    /// The 16 floats as a shader reads them, row after row.
    pub fn to_floats(&self) -> [f32; 16] {
        let mut out = [0.0; 16];
        for (i, r) in self.rows.iter().enumerate() {
            out[i * 4..i * 4 + 4].copy_from_slice(r);
        }
        out
    }
}

/// A clip an [`AnimationState`] plays, as [`AnimationState::layers`]
/// reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlayingClip {
    /// The clip.
    pub clip: ClipInfo,
    /// How it plays.
    pub mode: PlayMode,
    /// Its speed (1: real time).
    pub speed: f64,
    /// Its time, seconds from its start (within the clip: wrapped for
    /// loops, clamped otherwise).
    pub time: f64,
    /// Its blend weight (the weights of all playing clips sum to 1).
    pub weight: f64,
}

/// One clip being played.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Layer {
    clip: ClipInfo,
    mode: PlayMode,
    speed: f64,
    time: f64,
}

impl Layer {
    fn new(clip: ClipInfo, mode: PlayMode, speed: f64) -> Self {
        Self {
            clip,
            mode,
            speed: if speed.is_finite() { speed } else { 1.0 },
            time: 0.0,
        }
    }

    fn advance(&mut self, dt: f64) {
        self.time = self.clip.settle(self.time + dt * self.speed, self.mode);
    }
}

/// The animation state of one instance: a playing clip, optionally fading
/// in over another one. About 200 bytes; the CPU never touches vertices.
///
/// Crossfades are linear: the incoming clip's weight is `elapsed /
/// duration`, the outgoing one's is 1 minus that, and both clips keep
/// advancing. Starting a crossfade while one is running keeps the clip with
/// the larger weight (the incoming one on a tie) as the outgoing clip and
/// drops the other, so the dropped clip's weight (at most one half) snaps to
/// the others.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AnimationState {
    enabled: bool,
    current: Option<Layer>,
    previous: Option<Layer>,
    fade_elapsed: f64,
    fade_duration: f64,
}

impl AnimationState {
    /// A state playing nothing, disabled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Plays `clip` from its start at `speed` (1 = real time; negative plays
    /// backwards), dropping anything else, and enables the instance.
    pub fn play(&mut self, clip: ClipInfo, mode: PlayMode, speed: f64) {
        self.current = Some(Layer::new(clip, mode, speed));
        self.previous = None;
        self.fade_elapsed = 0.0;
        self.fade_duration = 0.0;
        self.enabled = true;
    }

    /// Fades from what plays now to `clip` (from its start) over `duration`
    /// seconds; a plain [`AnimationState::play`] when nothing plays or the
    /// duration is not positive.
    pub fn crossfade(&mut self, clip: ClipInfo, mode: PlayMode, speed: f64, duration: f64) {
        let Some(current) = self.current else {
            return self.play(clip, mode, speed);
        };
        if !(duration.is_finite() && duration > 0.0) {
            return self.play(clip, mode, speed);
        }
        let outgoing = match self.previous {
            Some(previous) if self.incoming_weight() < 0.5 => previous,
            _ => current,
        };
        self.previous = Some(outgoing);
        self.current = Some(Layer::new(clip, mode, speed));
        self.fade_elapsed = 0.0;
        self.fade_duration = duration;
        self.enabled = true;
    }

    /// Sets the enable flag (`false`: the shader draws the mesh unskinned).
    pub fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
    }

    /// Sets the playing clip's time (seconds from its start), as if it had
    /// played that long; the crossfade, if any, is not affected.
    pub fn seek(&mut self, time: f64) {
        if let Some(layer) = &mut self.current {
            layer.time = layer.clip.settle(time, layer.mode);
        }
    }

    /// Advances every playing clip and the crossfade by `dt` seconds and
    /// returns the new GPU state. A non-finite `dt` counts as 0.
    pub fn update(&mut self, dt: f64) -> GpuState {
        let dt = if dt.is_finite() { dt } else { 0.0 };
        if let Some(layer) = &mut self.current {
            layer.advance(dt);
        }
        if let Some(layer) = &mut self.previous {
            layer.advance(dt);
            self.fade_elapsed += dt.abs();
            if self.fade_elapsed >= self.fade_duration {
                self.previous = None;
            }
        }
        self.gpu_state()
    }

    /// The playing clip's time in seconds, if a clip plays.
    pub fn time(&self) -> Option<f64> {
        self.current.map(|l| l.time)
    }

    /// Whether a clip played once has reached its end.
    pub fn finished(&self) -> bool {
        self.current
            .is_some_and(|l| l.mode == PlayMode::Once && l.time >= l.clip.length())
    }

    /// The clips playing now with their weights: the playing clip, then
    /// the outgoing one while a crossfade runs. What engines need beside
    /// the GPU state: anchors ([`crate::runtime::anchor_path`]) and root
    /// motion ([`crate::runtime::root_motion`]) are sampled per clip at its
    /// own time.
    pub fn layers(&self) -> impl Iterator<Item = PlayingClip> + '_ {
        let incoming = self.incoming_weight();
        let layers = [
            self.current.map(|l| (l, incoming)),
            self.previous.map(|l| (l, 1.0 - incoming)),
        ];
        layers.into_iter().flatten().map(|(l, weight)| PlayingClip {
            clip: l.clip,
            mode: l.mode,
            speed: l.speed,
            time: l.time,
            weight,
        })
    }

    /// Weight of the playing (incoming) clip: 1 unless a crossfade runs.
    fn incoming_weight(&self) -> f64 {
        if self.previous.is_some() && self.fade_duration > 0.0 {
            (self.fade_elapsed / self.fade_duration).clamp(0.0, 1.0)
        } else {
            1.0
        }
    }

    /// The GPU state for the current instant (no time passes).
    pub fn gpu_state(&self) -> GpuState {
        let mut state = GpuState {
            enabled: self.enabled,
            ..GpuState::DISABLED
        };
        let incoming = self.incoming_weight() as f32;
        let layers = [
            self.current.map(|l| (l, incoming)),
            self.previous.map(|l| (l, 1.0 - incoming)),
        ];
        let mut n = 0;
        for (layer, weight) in layers.into_iter().flatten() {
            if weight <= 0.0 {
                continue;
            }
            let s = layer.clip.sample(layer.time, layer.mode);
            let rows: [Option<StateRow>; 2] = if s.fraction > 0.0 && s.next_row != s.row + 1 {
                // Across a wrap: two rows without lerp (see the module docs).
                [
                    Some([weight * (1.0 - s.fraction), 0.0, s.row as f32, 0.0]),
                    Some([weight * s.fraction, 0.0, s.next_row as f32, 0.0]),
                ]
            } else {
                [Some([weight, s.fraction, s.row as f32, 0.0]), None]
            };
            for row in rows.into_iter().flatten() {
                if n < STATE_ROWS && row[0] > 0.0 {
                    state.rows[n] = row;
                    n += 1;
                }
            }
        }
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 30 fps clip of `frames` frames starting at row `start`.
    fn clip(start: u32, duration: f64, looping: bool) -> ClipInfo {
        ClipInfo {
            start_row: start,
            frames: crate::timeline::frame_count(duration, 30.0) as u32,
            fps: 30.0,
            duration,
            looping,
            rule: SampleRule::FixedRate,
        }
    }

    fn assert_sample(s: FrameSample, row: u32, next: u32, fraction: f32) {
        assert_eq!((s.row, s.next_row), (row, next), "{s:?}");
        assert!(
            (s.fraction - fraction).abs() < 1e-5,
            "{s:?}, want {fraction}"
        );
    }

    #[test]
    fn frame_rows_and_fractions_at_hand_computed_times() {
        // 1 s at 30 fps: 31 frames at rows 10..=40, last frame on the end.
        let c = clip(10, 1.0, true);
        assert_eq!(c.frames, 31);
        assert_eq!(c.length_frames(), 30.0);
        // t = 0.5 s is frame 15 exactly (15 / 30 * 30 rounds to 15).
        assert_sample(c.sample(0.5, PlayMode::Once), 25, 25, 0.0);
        // t = 0.1 s: frame 3 (0.1 * 30 = 3.0000000000000004 snaps to 3).
        assert_sample(c.sample(0.1, PlayMode::Once), 13, 13, 0.0);
        // t = 0.125 s: frame 3.75 -> rows 13 and 14, fraction 0.75.
        assert_sample(c.sample(0.125, PlayMode::Once), 13, 14, 0.75);
        // t = 29.5 / 30: between frames 29 and 30.
        assert_sample(c.sample(29.5 / 30.0, PlayMode::Loop), 39, 40, 0.5);
        // Every frame time lands on its own row with fraction 0.
        for i in 0..31 {
            let s = c.sample(c.frame_time(i), PlayMode::Once);
            assert_sample(s, 10 + i, 10 + i, 0.0);
        }
    }

    #[test]
    fn looping_clips_wrap_from_their_last_frame_to_their_first() {
        // Last frame on the end: the length is 30 frames, frame 30 == frame 0.
        let c = clip(10, 1.0, true);
        assert_sample(c.sample(1.0, PlayMode::Loop), 10, 10, 0.0);
        assert_sample(c.sample(1.0 + 0.125, PlayMode::Loop), 13, 14, 0.75);
        assert_sample(c.sample(-0.125, PlayMode::Loop), 36, 37, 0.25);
        // Fox-like: 3.41666 s at 30 fps is 103 frames (last at 3.4 s) and a
        // length of 102.5 frames: half a frame from the last back to the first.
        let c = clip(0, 3.416_666_7, true);
        assert_eq!(c.frames, 103);
        assert!((c.length_frames() - 102.5).abs() < 1e-5);
        // 102.25 frames: a quarter of a frame into the half-frame tail.
        assert_sample(c.sample(102.25 / 30.0, PlayMode::Loop), 102, 0, 0.5);
        // Past the end: wrapped (102.5 + 1.5 = frame 1.5).
        assert_sample(c.sample(104.0 / 30.0, PlayMode::Loop), 1, 2, 0.5);
        // Even spread: the last frame lands on the end, no tail.
        let even = ClipInfo {
            rule: SampleRule::EvenSpread,
            ..c
        };
        assert_eq!(even.length_frames(), 102.0);
        assert_sample(even.sample(even.duration, PlayMode::Loop), 0, 0, 0.0);
        let half = even.duration / 102.0 * 0.5;
        assert_sample(even.sample(half, PlayMode::Loop), 0, 1, 0.5);
    }

    #[test]
    fn once_clips_hold_their_last_frame() {
        let c = clip(5, 3.416_666_7, false);
        assert_sample(c.sample(3.4, PlayMode::Once), 107, 107, 0.0);
        assert_sample(c.sample(3.41, PlayMode::Once), 107, 107, 0.0);
        assert_sample(c.sample(100.0, PlayMode::Once), 107, 107, 0.0);
        assert_sample(c.sample(-1.0, PlayMode::Once), 5, 5, 0.0);
        let mut s = AnimationState::new();
        s.play(c, PlayMode::Once, 2.0);
        assert!(!s.finished());
        let g = s.update(1.0); // 2 s of clip time: frame 60.
        assert_eq!(g.rows[0], [1.0, 0.0, 65.0, 0.0]);
        let g = s.update(10.0);
        assert!(s.finished());
        assert_eq!(g.rows[0], [1.0, 0.0, 107.0, 0.0]);
        assert_eq!(g.rows[1], [0.0; 4]);
        // A one-frame clip (a pose) always shows its row.
        let pose = clip(9, 0.0, false);
        assert_sample(pose.sample(5.0, PlayMode::Loop), 9, 9, 0.0);
    }

    #[test]
    fn a_wrap_becomes_two_rows_that_blend_to_the_lerp() {
        let c = clip(0, 3.416_666_7, true);
        let mut s = AnimationState::new();
        s.play(c, PlayMode::Loop, 1.0);
        let g = s.update(102.25 / 30.0);
        assert!(g.enabled);
        // Half way from frame 102 to frame 0: two rows, weight 0.5 each.
        assert!((g.rows[0][0] - 0.5).abs() < 1e-5 && g.rows[0][1] == 0.0);
        assert_eq!(g.rows[0][2], 102.0);
        assert!((g.rows[1][0] - 0.5).abs() < 1e-5 && g.rows[1][1] == 0.0);
        assert_eq!(g.rows[1][2], 0.0);
        assert_eq!(g.rows[2], [0.0; 4]);
        // Time stays within one loop.
        assert!(s.time().unwrap() < c.length());
    }

    #[test]
    fn crossfade_weights_sum_to_one_over_the_fade() {
        let walk = clip(0, 1.0, true);
        let run = clip(31, 0.5, true);
        let mut s = AnimationState::new();
        assert_eq!(s.gpu_state(), GpuState::DISABLED);
        s.play(walk, PlayMode::Loop, 1.0);
        s.update(0.2);
        s.crossfade(run, PlayMode::Loop, 1.0, 0.4);
        for step in 1..=10 {
            let g = s.update(0.05);
            let total: f32 = g.active_rows().map(|r| r[0]).sum();
            assert!((total - 1.0).abs() < 1e-6, "step {step}: {g:?}");
            let elapsed = 0.05 * f64::from(step);
            // The incoming clip (rows 31..) has weight elapsed / 0.4.
            let incoming: f32 = g.active_rows().filter(|r| r[2] >= 31.0).map(|r| r[0]).sum();
            let expected = (elapsed / 0.4).min(1.0) as f32;
            assert!((incoming - expected).abs() < 1e-5, "step {step}: {g:?}");
        }
        // After the fade only the new clip is left.
        assert_eq!(s.gpu_state().active_rows().count(), 1);
        assert!(s.gpu_state().rows[0][2] >= 31.0);
    }

    #[test]
    fn crossfade_during_a_crossfade_keeps_the_stronger_clip() {
        let a = clip(0, 1.0, true);
        let b = clip(31, 1.0, true);
        let c = clip(62, 1.0, true);
        let mut s = AnimationState::new();
        s.play(a, PlayMode::Loop, 1.0);
        s.crossfade(b, PlayMode::Loop, 1.0, 1.0);
        s.update(0.75); // b at 0.75, a at 0.25
        s.crossfade(c, PlayMode::Loop, 1.0, 1.0);
        let g = s.update(0.5);
        let rows: Vec<f32> = g.active_rows().map(|r| r[2]).collect();
        assert!(rows.iter().all(|r| *r >= 31.0), "a was dropped: {g:?}");
        let total: f32 = g.active_rows().map(|r| r[0]).sum();
        assert!((total - 1.0).abs() < 1e-6);
        // Disabling keeps the rows but clears the flag.
        s.set_enabled(false);
        assert!(!s.gpu_state().enabled);
    }

    #[test]
    fn bad_numbers_never_panic() {
        let mut c = clip(0, 1.0, true);
        c.fps = f64::NAN;
        assert_sample(c.sample(0.5, PlayMode::Loop), 0, 0, 0.0);
        c.fps = 30.0;
        c.frames = 0;
        assert_sample(c.sample(0.5, PlayMode::Loop), 0, 0, 0.0);
        let mut s = AnimationState::new();
        s.play(clip(0, 1.0, true), PlayMode::Loop, f64::INFINITY);
        s.update(f64::NAN);
        s.crossfade(clip(0, 1.0, true), PlayMode::Once, 1.0, f64::NAN);
        assert_eq!(s.update(0.0).active_rows().count(), 1);
    }
}
