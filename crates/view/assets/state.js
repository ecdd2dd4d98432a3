// The per-instance animation state of SPEC section 6, ported line by line
// from rigbake_core::runtime::state (docs/runtime.md): clip time to texture
// rows and fractions, loops and holds, crossfades, and the 4x4 block of
// rows (blend weight, fraction, frame row, 0) a shader reads.

export const FRAME_SNAP = 1e-4;
const BELOW_ONE = 1 - 2 ** -24;

// A clip of the clip table plus the bake's sampling rule, and its
// root-motion track when it was baked in place (the sidecar's
// root_motion.clips[i]: { mode, track, end, ... }; docs/root-motion.md).
export class ClipInfo {
  constructor(meta, rule, motion = null) {
    this.motion = motion && motion.mode !== 'keep' && motion.track?.length ? { track: motion.track, end: motion.end } : null;
    this.name = meta.name;
    this.startRow = meta.start_row;
    this.frames = Math.max(meta.frames, 1);
    this.fps = meta.fps;
    this.duration = meta.duration;
    this.looping = meta.looping;
    this.rule = rule; // 'fixed_rate' | 'even_spread'
  }

  last() {
    return this.frames - 1;
  }

  frameRate() {
    let rate = 0;
    if (this.rule === 'even_spread') rate = this.duration > 0 ? this.last() / this.duration : 0;
    else rate = this.fps;
    return Number.isFinite(rate) && rate > 0 ? rate : 0;
  }

  lengthFrames() {
    const last = this.last();
    if (last === 0 || this.frameRate() === 0) return 0;
    if (this.rule === 'even_spread') return last;
    const end = this.duration * this.fps;
    return Number.isFinite(end) && end > last + FRAME_SNAP ? end : last;
  }

  length() {
    const rate = this.frameRate();
    return rate > 0 ? this.lengthFrames() / rate : 0;
  }

  // The time the bake sampled frame `i` at (SPEC section 2).
  frameTime(i) {
    if (this.rule === 'even_spread') return this.frames > 1 ? (i * this.duration) / (this.frames - 1) : 0;
    return Math.min(i / this.fps, this.duration);
  }

  // { row, nextRow, fraction } at clip time `time` in mode 'loop' | 'once'.
  sample(time, mode) {
    const start = this.startRow;
    const hold = (f) => ({ row: start + f, nextRow: start + f, fraction: 0 });
    const length = this.lengthFrames();
    if (length <= 0 || !Number.isFinite(time)) return hold(0);
    const last = this.last();
    let x = time * this.frameRate();
    x = mode === 'once' ? Math.min(Math.max(x, 0), length) : ((x % length) + length) % length;
    const nearest = Math.round(x);
    if (Math.abs(x - nearest) <= FRAME_SNAP) x = nearest;
    if (mode === 'loop' && x >= length) x = 0;
    const floor = Math.floor(x);
    if (floor >= last) {
      const tail = length - last;
      if (mode === 'loop' && tail > 0) {
        const fraction = Math.fround((x - last) / tail);
        return fraction > 0 ? { row: start + last, nextRow: start, fraction: Math.min(fraction, BELOW_ONE) } : hold(last);
      }
      return hold(last);
    }
    const fraction = Math.min(Math.fround(x - floor), BELOW_ONE);
    return fraction > 0 ? { row: start + floor, nextRow: start + floor + 1, fraction } : hold(floor);
  }

  // The root motion [x, y, z, yaw] taken out of the clip at clip time
  // `time` (rigbake_core::runtime::root_motion::RootMotionTrack::at): the
  // track lerped with the textures' frame fraction; across a loop's wrap
  // it heads for `end`, not back to frame 0. Zero without a track.
  motionAt(time, mode) {
    if (!this.motion) return [0, 0, 0, 0];
    const s = this.sample(time, mode);
    const entry = (row) => this.motion.track[row - this.startRow] ?? [0, 0, 0, 0];
    const from = entry(s.row);
    if (!(s.fraction > 0) || s.nextRow === s.row) return from;
    const to = s.nextRow === this.startRow && s.row !== this.startRow ? this.motion.end : entry(s.nextRow);
    return from.map((v, k) => v + (to[k] - v) * s.fraction);
  }

  settle(time, mode) {
    const length = this.length();
    if (!Number.isFinite(time) || length <= 0) return 0;
    if (mode === 'loop') {
      const t = ((time % length) + length) % length;
      return t >= length ? 0 : t;
    }
    return Math.min(Math.max(time, 0), length);
  }
}

// One instance: the playing clip, and the one fading out.
export class AnimationState {
  constructor() {
    this.current = null;
    this.previous = null;
    this.fadeElapsed = 0;
    this.fadeDuration = 0;
  }

  play(clip, mode, speed = 1) {
    this.current = { clip, mode, speed, time: 0 };
    this.previous = null;
    this.fadeElapsed = 0;
    this.fadeDuration = 0;
  }

  crossfade(clip, mode, speed, duration) {
    if (!this.current || !(Number.isFinite(duration) && duration > 0)) return this.play(clip, mode, speed);
    // A fade interrupted before half-way keeps fading out the older clip.
    this.previous = this.previous && this.incomingWeight() < 0.5 ? this.previous : this.current;
    this.current = { clip, mode, speed, time: 0 };
    this.fadeElapsed = 0;
    this.fadeDuration = duration;
  }

  seek(time) {
    if (this.current) this.current.time = this.current.clip.settle(time, this.current.mode);
  }

  update(dt) {
    if (!Number.isFinite(dt)) dt = 0;
    for (const l of [this.current, this.previous]) {
      if (l) l.time = l.clip.settle(l.time + dt * l.speed, l.mode);
    }
    if (this.previous) {
      this.fadeElapsed += Math.abs(dt);
      if (this.fadeElapsed >= this.fadeDuration) {
        this.previous = null;
      }
    }
  }

  incomingWeight() {
    return this.previous && this.fadeDuration > 0 ? Math.min(Math.max(this.fadeElapsed / this.fadeDuration, 0), 1) : 1;
  }

  // Writes the 16 floats of the GPU state into `out` at `at`.
  gpuState(out, at) {
    out.fill(0, at, at + 16);
    const incoming = Math.fround(this.incomingWeight());
    let n = 0;
    const push = (w, f, r) => {
      if (n < 4 && w > 0) {
        out.set([w, f, r, 0], at + n * 4);
        n++;
      }
    };
    for (const [layer, weight] of [[this.current, incoming], [this.previous, 1 - incoming]]) {
      if (!layer || weight <= 0) continue;
      const s = layer.clip.sample(layer.time, layer.mode);
      if (s.fraction > 0 && s.nextRow !== s.row + 1) {
        push(weight * (1 - s.fraction), 0, s.row);
        push(weight * s.fraction, 0, s.nextRow);
      } else push(weight, s.fraction, s.row);
    }
  }
}

// Motions [x, z, yaw] (scene space, +Y up) composed: `a` then `b` in a's
// frame, i.e. T(a) Ry(a) T(b) Ry(b).
export function composeMotion(a, b) {
  const c = Math.cos(a[2]), s = Math.sin(a[2]);
  return [a[0] + c * b[0] + s * b[1], a[1] - s * b[0] + c * b[1], a[2] + b[2]];
}

// Where one instance's root motion has taken it: whole loops gone by (and
// clips faded out of) accumulate into `base`; `at(state)` adds the current
// clip's motion. Works on [x, z, yaw] (the track's y is always 0).
export class MotionTracker {
  constructor() {
    this.reset();
  }

  reset() {
    this.base = [0, 0, 0];
    this.clip = null;
    this.time = 0;
  }

  // The current motion of `state`'s playing clip, after `state.update`:
  // a loop that wrapped since the last call adds its `end` to the base; a
  // new clip keeps what the old one had reached.
  at(state) {
    const layer = state.current;
    if (!layer) return this.base;
    const m3 = (m) => [m[0], m[2], m[3]];
    if (layer.clip !== this.clip) {
      if (this.clip) this.base = composeMotion(this.base, m3(this.clip.motionAt(this.time, this.mode)));
      this.clip = layer.clip;
    } else if (layer.mode === 'loop' && layer.clip.motion && layer.time < this.time) {
      this.base = composeMotion(this.base, m3(layer.clip.motion.end));
    }
    this.time = layer.time;
    this.mode = layer.mode;
    return composeMotion(this.base, m3(layer.clip.motionAt(layer.time, layer.mode)));
  }
}
