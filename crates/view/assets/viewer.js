// rigbake view: plays the bakes the server lists as a crowd, through either
// playback path, the way an engine does (docs/viewer.md):
//
// 1. GET /bakes.json: per bake, its `rigbake inspect --json` report (clip
//    table, textures, weights and VAT records) and the placement of the
//    node whose space the values are in;
// 2. fetch the textures and meshes the report names (beside the container,
//    or embedded in a container section), streaming with visible progress,
//    and decode them with texture row y = file row y: EXR and PNG16 in a
//    module Web Worker (decode_worker.js running exr.js and png.js; on the
//    main thread if no worker starts), half-float EXRs kept as halves
//    (RGBA16F), the meshes with glb.js; KTX2 and DDS textures (ktx2.js) are
//    not decoded: their texel bytes go to the GPU as they are (RGBA32F,
//    RGBA16F, or RGBA16UI for 16-bit UNORM, normalised in the shader);
// 3. per instance and frame, the animation state (state.js) gives up to four
//    (weight, fraction, row) rows; the vertex shaders skin from the
//    bone-matrix texture with the mesh's bone-weight channels, or read the
//    VAT textures. The shaders (shaders.js) are what naga writes from the
//    runtime reference docs/shaders/rigbake.wgsl and viewer.wgsl (`just
//    shaders`); this file binds their uniform blocks and samplers by the
//    WGSL names.
//
// URL parameters make a frame reproducible (see docs/viewer.md): bake, path,
// clip, frame, time, n, seed, cam (orbit | ortho), az, el, dist, cx, cy, cz,
// half, look (textured | mask), grid, hud, paused, motion, lod, max_texture.

import { decodeExr } from './exr.js';
import { decodePng16 } from './png.js';
import { parseGpuTexture, sniff, gpuEncoding, FORMATS, ZSTD_ADVICE } from './ktx2.js';
import { parseGlb, readAccessor, readImage, baseColour } from './glb.js';
import { ClipInfo, AnimationState, MotionTracker, composeMotion } from './state.js';
import { PROGRAMS, LAYOUTS } from './shaders.js';

const MAX_INSTANCES = 20000;
const params = new URLSearchParams(location.search);
// `progress`: the loading line on screen now; `shown`: every distinct line
// shown before the first frame (at most 400), for scripts and tests.
// `decoded`: EXR and PNG textures decoded in the worker and on the main
// thread (the fallback; `workerError` says why); `uploads`: every texture
// uploaded, { name, width, height, layers, format, internal } (`internal`
// the WebGL internal format: RGBA32F, RGBA16F or RGBA16UI).
const status = {
  ready: false, error: null, frames: 0, stage: 'start', progress: null, shown: [],
  decoded: { worker: 0, main: 0 }, workerError: null, uploads: [],
};
window.rigbakeViewer = status;

const $ = (id) => document.getElementById(id);

function report(message) {
  status.error = message;
  $('error').textContent = message;
  $('error').hidden = false;
  $('progress').hidden = true;
  document.title = 'rigbake view: error';
}

// The loading display: a line of text ("loading FILE 12.3/34.5 MB") and a
// bar (`fraction` of the file, or none).
function showProgress(text, fraction = null) {
  $('progress').hidden = false;
  $('progress-text').textContent = text;
  $('progress-bar').style.width = fraction === null ? '0' : `${(Math.min(Math.max(fraction, 0), 1) * 100).toFixed(1)}%`;
  status.progress = text;
  if (!status.ready && status.shown.at(-1) !== text && status.shown.length < 400) status.shown.push(text);
}
const megabytes = (n) => (n / 1e6).toFixed(1);
// Files and bytes fetched so far.
const fetched = { files: 0, bytes: 0 };

function num(name, fallback) {
  const v = params.get(name);
  if (v === null || v === '') return fallback;
  const x = Number(v);
  if (!Number.isFinite(x)) throw new Error(`URL parameter ${name}=${v} is not a number`);
  return x;
}

// ------------------------------------------------------------ small maths

function mul(a, b) {
  const o = new Float32Array(16);
  for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) {
    let s = 0;
    for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
    o[c * 4 + r] = s;
  }
  return o;
}
const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const norm = (a) => { const l = Math.hypot(...a) || 1; return a.map((v) => v / l); };

// The preview camera's axes (crates/preview/src/camera.rs): azimuth from
// the front (+Z) towards +X, elevation above the horizon, +Y up.
function axes(az, el) {
  const a = (az * Math.PI) / 180, e = (el * Math.PI) / 180;
  const toward = [Math.cos(e) * Math.sin(a), Math.sin(e), Math.cos(e) * Math.cos(a)];
  const forward = toward.map((v) => -v);
  const right = norm(cross(forward, [0, 1, 0]));
  const up = cross(right, forward);
  return { toward, forward, right, up };
}

// Orthographic view centred on `c` with half extent `h` (the preview's).
function orthoMatrix(ax, c, h) {
  const d = 1000 * h;
  const m = new Float32Array(16);
  const rows = [ax.right.map((v) => v / h), ax.up.map((v) => v / h), ax.forward.map((v) => v / d)];
  rows.forEach((r, i) => {
    m[i] = r[0]; m[4 + i] = r[1]; m[8 + i] = r[2];
    m[12 + i] = -dot(r, c);
  });
  m[15] = 1;
  return m;
}

function perspectiveMatrix(ax, target, dist, aspect) {
  const eye = target.map((v, i) => v + ax.toward[i] * dist);
  const view = new Float32Array(16);
  [ax.right, ax.up, ax.forward.map((v) => -v)].forEach((r, i) => {
    view[i] = r[0]; view[4 + i] = r[1]; view[8 + i] = r[2];
    view[12 + i] = -dot(r, eye);
  });
  view[15] = 1;
  const near = dist * 0.01, far = dist * 20, f = 1 / Math.tan((45 * Math.PI) / 360);
  const proj = new Float32Array(16);
  proj[0] = f / aspect; proj[5] = f;
  proj[10] = (far + near) / (near - far); proj[11] = -1;
  proj[14] = (2 * far * near) / (near - far);
  return mul(proj, view);
}

// --------------------------------------------------------------- loading

// The bytes at `url` (an ArrayBuffer), streamed into one buffer of the
// response's Content-Length, with the progress shown as they arrive.
async function fetchBytes(url, label = decodeURIComponent(url.split('/').pop())) {
  showProgress(`loading ${label}`);
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${label}: HTTP ${r.status} (${url})`);
  const total = Number(r.headers.get('Content-Length'));
  const line = (got) => `loading ${label} ${megabytes(got)}/${total ? megabytes(total) : '?'} MB` +
    (fetched.files ? ` (${fetched.files} file${fetched.files === 1 ? '' : 's'}, ${megabytes(fetched.bytes)} MB loaded before)` : '');
  let buffer;
  if (!r.body || !(total > 0)) {
    buffer = await r.arrayBuffer();
  } else {
    const bytes = new Uint8Array(total);
    const reader = r.body.getReader();
    let got = 0, shown = 0;
    showProgress(line(0), 0);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (got + value.length > total) throw new Error(`${label}: the server sent more than the ${total} bytes it announced`);
      bytes.set(value, got);
      got += value.length;
      const now = performance.now();
      if (now - shown > 100) { shown = now; showProgress(line(got), got / total); }
    }
    if (got !== total) throw new Error(`${label}: ${got} of ${total} bytes arrived`);
    showProgress(line(got), 1);
    buffer = bytes.buffer;
  }
  fetched.files++;
  fetched.bytes += buffer.byteLength;
  return buffer;
}

// The encoded bytes of a texture record: its file, or its container section.
async function textureBytes(bake, t, cache) {
  if (t.storage === 'file') return fetchBytes(bake.base + encodeURIComponent(t.name));
  const section = t.storage?.section;
  const entry = bake.report.container.sections[section];
  if (entry === undefined) throw new Error(`${bake.name}: texture ${t.name} names section ${section}, which does not exist`);
  cache.container ??= fetchBytes(bake.base + encodeURIComponent(bake.container));
  const all = await cache.container;
  return all.slice(entry.offset, entry.offset + entry.length);
}

// The sidecar's record of texture record `t` (page `page` of a folded
// stream: KTX2 and DDS pages share one file and differ in `layer`), or null
// for containers without a sidecar.
function sidecarTexture(bake, t, page = 0) {
  const same = (bake.report.sidecar?.textures ?? []).filter((s) => s.file === t.name);
  return same.find((s) => (s.layer ?? s.page ?? 0) === page) ?? same[0] ?? null;
}

// The largest texture side and layer count WebGL gives, lowered by the URL
// parameter `max_texture` (to see what a smaller GPU does).
function gpuLimits(gl) {
  const wanted = num('max_texture', Infinity);
  return {
    size: Math.min(gl.getParameter(gl.MAX_TEXTURE_SIZE), wanted),
    layers: gl.getParameter(gl.MAX_ARRAY_TEXTURE_LAYERS),
  };
}

// Why a Zstandard-supercompressed KTX2 is not played.
function refuseSupercompressed(t, side) {
  const how = side.supercompression === 'zstd' ? 'Zstandard-supercompressed (--texture-container ktx2-zstd)' : `supercompressed (${side.supercompression})`;
  throw new Error(`${t.name} is ${how}: ${ZSTD_ADVICE}`);
}

// Refuses texture record `t` of `bake` (with `layers` array layers) before
// anything is fetched when the page cannot play it: supercompressed, or
// larger than the GPU holds.
function checkTexture(gl, bake, t, layers = 1) {
  const side = sidecarTexture(bake, t);
  if (side?.supercompression) refuseSupercompressed(t, side);
  const max = gpuLimits(gl);
  if (t.width > max.size || t.height > max.size) {
    throw new Error(`${t.name} is ${t.width} x ${t.height} texels, more than this browser's WebGL limit of ${max.size} x ${max.size} (MAX_TEXTURE_SIZE): it cannot be shown here; rebake with --max-texture-size ${max.size} (taller textures then fold into column blocks and pages)`);
  }
  if (layers > max.layers) throw new Error(`${t.name}: ${layers} pages exceed this browser's WebGL limit of ${max.layers} texture layers (MAX_ARRAY_TEXTURE_LAYERS)`);
}

// Texture record `t` as { width, height, layers, format, data }: a KTX2 or
// DDS file's texels as they are (format f32, f16 or unorm16; `layers` the
// array layers, 0 for a plain 2D texture), or an EXR or PNG decoded in the
// decode worker (0 layers): a half-float EXR as its half bits (format f16),
// a float EXR (f32) and a PNG16 as 32-bit floats (f32). `pages` is the page count of a
// folded stream whose pages are the layers of one KTX2 or DDS file.
async function loadTexture(bake, t, cache, pages = 1) {
  const side = sidecarTexture(bake, t);
  const gpu = gpuEncoding(side?.encoding);
  if (side?.supercompression) refuseSupercompressed(t, side);
  const bytes = await textureBytes(bake, t, cache);
  const kind = sniff(bytes);
  const record = side ? 'the sidecar' : 'the record';
  const want = { width: side?.width ?? t.width, height: side?.height ?? t.height };
  if (gpu && kind !== gpu.container) throw new Error(`${t.name}: the sidecar says encoding ${side.encoding}, but the file is ${kind ? kind.toUpperCase() : 'neither KTX2 nor DDS'}`);
  // The header is checked field by field against the sidecar (size, sample
  // type, layers) before its texels are taken as they are.
  if (kind) return parseGpuTexture(t.name, bytes, { ...want, layers: pages, format: gpu?.format, by: record });
  if (pages > 1) throw new Error(`${t.name}: the sidecar says the pages of this stream are layers of one KTX2 or DDS file, but the file is neither`);
  const isPng = (t.encoding ?? '').startsWith('png') || t.name.endsWith('.png');
  const image = await decodeTexture(t.name, isPng ? 'png16' : 'exr', bytes);
  if (image.width !== want.width || image.height !== want.height) {
    throw new Error(`${t.name}: the file is ${image.width} x ${image.height}, ${record} says ${want.width} x ${want.height}`);
  }
  return { ...image, layers: 0 };
}

// ------------------------------------------------------------- decoding

// The decode worker (decode_worker.js, a module worker): a promise of the
// worker once it has loaded its decoders, or of null when it cannot be
// started (then textures decode on the main thread).
let decoder = null;
const decodeJobs = new Map();
let nextDecodeJob = 1;

function decodeWorker() {
  decoder ??= new Promise((resolve) => {
    let w;
    try {
      w = new Worker(new URL('./decode_worker.js', import.meta.url), { type: 'module' });
    } catch (e) {
      status.workerError = `the decode worker cannot be started: ${e?.message ?? e}`;
      resolve(null);
      return;
    }
    // A worker that fails to load (or dies) fails its jobs; later textures
    // decode on the main thread.
    w.onerror = (e) => {
      e.preventDefault?.();
      status.workerError = `the decode worker failed: ${e.message || 'it did not load'}`;
      for (const job of decodeJobs.values()) job.reject(new Error(`${job.name}: ${status.workerError}`));
      decodeJobs.clear();
      decoder = Promise.resolve(null);
      w.terminate();
      resolve(null);
    };
    w.onmessage = (e) => {
      const { id, ready, image, error } = e.data;
      if (ready) { resolve(w); return; }
      const job = decodeJobs.get(id);
      if (!job) return;
      decodeJobs.delete(id);
      if (error) job.reject(new Error(error));
      else job.resolve(image);
    };
    // A ping: nothing is transferred to a worker that has not loaded.
    w.postMessage({ id: 0 });
  });
  return decoder;
}

// EXR (`kind` 'exr') or 16-bit PNG ('png16') file bytes (an ArrayBuffer)
// decoded to { width, height, format, data }: in the decode worker, the
// buffer transferred to it and the decoded array transferred back, while
// the page keeps showing progress; on the main thread when no worker runs.
async function decodeTexture(name, kind, bytes) {
  const size = `${megabytes(bytes.byteLength)} MB`;
  const w = await decodeWorker();
  const where = w ? 'in a worker' : 'on the main thread';
  const started = performance.now();
  showProgress(`decoding ${name} (${size}) ${where}`);
  const tick = setInterval(() => {
    showProgress(`decoding ${name} (${size}) ${where}, ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }, 1000);
  try {
    if (w) {
      const id = nextDecodeJob++;
      const image = await new Promise((resolve, reject) => {
        decodeJobs.set(id, { name, resolve, reject });
        w.postMessage({ id, kind, name, buffer: bytes }, [bytes]);
      });
      status.decoded.worker++;
      return image;
    }
    // Let the progress line paint before the main thread is busy.
    await new Promise((r) => setTimeout(r, 0));
    const image = kind === 'png16' ? await decodePng16(name, bytes) : await decodeExr(name, bytes);
    status.decoded.main++;
    return image;
  } finally {
    clearInterval(tick);
  }
}

// WebGL's internal format, format and type for a sample type: floats and
// halves as they are, 16-bit UNORM as unsigned integers that the VAT shader
// divides by 65535 (WebGL2 has no RGBA16 UNORM textures without an
// extension), 8-bit and RGB10A2 UNORM (VAT unorm8, unorm10) as WebGL2's
// own normalised RGBA8 and RGB10_A2, read through the float samplers.
const INTERNAL = { f32: 'RGBA32F', f16: 'RGBA16F', unorm16: 'RGBA16UI', unorm8: 'RGBA8', unorm10: 'RGB10_A2' };
function glFormat(gl, format) {
  if (format === 'f32') return [gl.RGBA32F, gl.RGBA, gl.FLOAT];
  if (format === 'f16') return [gl.RGBA16F, gl.RGBA, gl.HALF_FLOAT];
  if (format === 'unorm8') return [gl.RGBA8, gl.RGBA, gl.UNSIGNED_BYTE];
  if (format === 'unorm10') return [gl.RGB10_A2, gl.RGBA, gl.UNSIGNED_INT_2_10_10_10_REV];
  return [gl.RGBA16UI, gl.RGBA_INTEGER, gl.UNSIGNED_SHORT];
}

function nearest(gl, target) {
  for (const [k, v] of [[gl.TEXTURE_MIN_FILTER, gl.NEAREST], [gl.TEXTURE_MAG_FILTER, gl.NEAREST], [gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE], [gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE]]) gl.texParameteri(target, k, v);
}

// A bone-matrix texture (RGBA32F or RGBA16F), row 0 of the data (the file's
// first row) as texel row 0 of texelFetch. A 16-bit normalised one (qts at
// unorm16) is widened here to the floats a UNORM texture reads as (sample /
// 65535): WebGL2 has no UNORM16 textures without an extension.
function floatTexture(gl, image, name) {
  if (image.format === 'unorm16') image = { ...image, format: 'f32', data: Float32Array.from(image.data, (v) => v / 65535) };
  if (image.layers > 1) throw new Error(`${name}: a bone-matrix texture has ${image.layers} layers; it must be a plain 2D texture`);
  const max = gpuLimits(gl).size;
  if (image.width > max || image.height > max) throw new Error(`${name}: a ${image.width} x ${image.height} texture exceeds this browser's WebGL limit of ${max} (MAX_TEXTURE_SIZE)`);
  showProgress(`uploading ${name} to the GPU (${image.width} x ${image.height}, ${FORMATS[image.format].name}, as ${INTERNAL[image.format]})`);
  status.uploads.push({ name, width: image.width, height: image.height, layers: 0, format: image.format, internal: INTERNAL[image.format] });
  const tex = gl.createTexture();
  gl.bindTexture(gl.TEXTURE_2D, tex);
  gl.pixelStorei(gl.UNPACK_FLIP_Y_WEBGL, false);
  gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
  const [internal, format, type] = glFormat(gl, image.format);
  gl.texStorage2D(gl.TEXTURE_2D, 1, internal, image.width, image.height);
  gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, image.width, image.height, format, type, image.data);
  nearest(gl, gl.TEXTURE_2D);
  return tex;
}

// The pages of one VAT stream as one texture array, layer k = page k (every
// page has the same size: formats/vat.md, "Folding"): `images` are either
// one image per page (EXR, PNG) or one KTX2 or DDS image whose layers are
// the pages. Returns { tex, uint } (uint: RGBA16UI, read through the
// shader's unsigned samplers).
function textureArray(gl, images, name) {
  const max = gpuLimits(gl);
  const { width, height, format } = images[0];
  const depth = images.reduce((n, i) => n + Math.max(i.layers, 1), 0);
  if (width > max.size || height > max.size) throw new Error(`${name}: a ${width} x ${height} texture exceeds this browser's WebGL limit of ${max.size} (MAX_TEXTURE_SIZE)`);
  if (depth > max.layers) throw new Error(`${name}: ${depth} VAT pages exceed this browser's WebGL limit of ${max.layers} texture layers`);
  if (images.some((i) => i.width !== width || i.height !== height || i.format !== format)) throw new Error(`${name}: the pages of a VAT stream differ in size or sample type`);
  showProgress(`uploading ${name} to the GPU (${width} x ${height}${depth > 1 ? ` x ${depth} pages` : ''}, ${FORMATS[format].name}, as ${INTERNAL[format]})`);
  status.uploads.push({ name, width, height, layers: depth, format, internal: INTERNAL[format] });
  const tex = gl.createTexture();
  gl.bindTexture(gl.TEXTURE_2D_ARRAY, tex);
  gl.pixelStorei(gl.UNPACK_FLIP_Y_WEBGL, false);
  gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
  const [internal, glFmt, type] = glFormat(gl, format);
  gl.texStorage3D(gl.TEXTURE_2D_ARRAY, 1, internal, width, height, depth);
  // Row 0 of each page's data (its file's first row) is texel row 0.
  let z = 0;
  for (const image of images) {
    const layers = Math.max(image.layers, 1);
    gl.texSubImage3D(gl.TEXTURE_2D_ARRAY, 0, 0, 0, z, width, height, layers, glFmt, type, image.data);
    z += layers;
  }
  nearest(gl, gl.TEXTURE_2D_ARRAY);
  return { tex, uint: format === 'unorm16' };
}

// 1 x 1 x 1 stand-ins for the VAT samplers a primitive does not use (WebGL
// refuses to draw when a float sampler and an unsigned one share a unit,
// or a sampler's texture does not match its type).
function placeholders(gl) {
  const make = (internal, format, type, data) => {
    const tex = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D_ARRAY, tex);
    gl.texStorage3D(gl.TEXTURE_2D_ARRAY, 1, internal, 1, 1, 1);
    gl.texSubImage3D(gl.TEXTURE_2D_ARRAY, 0, 0, 0, 0, 1, 1, 1, format, type, data);
    nearest(gl, gl.TEXTURE_2D_ARRAY);
    return tex;
  };
  return {
    float: make(gl.RGBA32F, gl.RGBA, gl.FLOAT, new Float32Array(4)),
    uint: make(gl.RGBA16UI, gl.RGBA_INTEGER, gl.UNSIGNED_SHORT, new Uint16Array(4)),
  };
}

function colourTexture(gl, bitmap) {
  const tex = gl.createTexture();
  gl.bindTexture(gl.TEXTURE_2D, tex);
  gl.pixelStorei(gl.UNPACK_FLIP_Y_WEBGL, false);
  if (bitmap) {
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.SRGB8_ALPHA8, gl.RGBA, gl.UNSIGNED_BYTE, bitmap);
    gl.generateMipmap(gl.TEXTURE_2D);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR_MIPMAP_LINEAR);
  } else {
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.SRGB8_ALPHA8, 1, 1, 0, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array([255, 255, 255, 255]));
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
  }
  return tex;
}

// Texture units of the shaders' samplers and binding points of their
// uniform blocks, by WGSL global (viewer.wgsl). A primitive binds its
// textures to these units and its uniforms to the `viewer` block.
const UNITS = { base_texture: 0, bone_texture: 1, vat_positions: 1, vat_normals: 2, vat_positions_u: 3, vat_normals_u: 4 };
const BLOCKS = { viewer: 0, ground: 1 };

// A program of shaders.js, its uniform blocks bound to BLOCKS and its
// samplers to UNITS once.
function compile(gl, spec) {
  const p = gl.createProgram();
  for (const [type, src] of [[gl.VERTEX_SHADER, spec.vertex], [gl.FRAGMENT_SHADER, spec.fragment]]) {
    const s = gl.createShader(type);
    gl.shaderSource(s, src);
    gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(`shader: ${gl.getShaderInfoLog(s)}`);
    gl.attachShader(p, s);
  }
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(`program: ${gl.getProgramInfoLog(p)}`);
  for (const [name, global] of Object.entries(spec.blocks)) {
    const index = gl.getUniformBlockIndex(p, name);
    if (index !== gl.INVALID_INDEX) gl.uniformBlockBinding(p, index, BLOCKS[global]);
  }
  gl.useProgram(p);
  for (const [name, global] of Object.entries(spec.samplers)) {
    const at = gl.getUniformLocation(p, name);
    if (at) gl.uniform1i(at, UNITS[global]);
  }
  return { program: p };
}

// A uniform buffer of `bytes` (std140 blocks of 16-byte members and
// matrices) with float and unsigned views of its contents.
function uniformBuffer(gl, bytes, binding) {
  const data = new ArrayBuffer(bytes);
  const buffer = gl.createBuffer();
  gl.bindBuffer(gl.UNIFORM_BUFFER, buffer);
  gl.bufferData(gl.UNIFORM_BUFFER, bytes, gl.DYNAMIC_DRAW);
  gl.bindBufferBase(gl.UNIFORM_BUFFER, binding, buffer);
  return {
    f: new Float32Array(data), u: new Uint32Array(data),
    upload() {
      gl.bindBuffer(gl.UNIFORM_BUFFER, buffer);
      gl.bufferSubData(gl.UNIFORM_BUFFER, 0, data);
    },
  };
}

// viewer.wgsl's `Viewer` block: its size and members' offsets in 4-byte
// words, as naga lays it out (shaders.js).
const VIEWER = LAYOUTS.viewer;

// A placement matrix (column-major, 16 numbers): the one the bake
// recorded (`recorded`, the sidecar's `placement` of format 1.11: `{node,
// matrix}`), else the rest-pose global of `node` the server took from the
// source model (older bakes), else the identity.
function placement(bake, recorded, node) {
  if (recorded) {
    if (!Array.isArray(recorded.matrix) || recorded.matrix.length !== 16 || !recorded.matrix.every(Number.isFinite)) {
      throw new Error(`${bake.name}: the sidecar's placement of ${recorded.node ?? 'the scene root'} is not 16 numbers`);
    }
    return new Float32Array(recorded.matrix);
  }
  const m = node ? bake.placements[node] : undefined;
  return new Float32Array(m ?? [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
}

// Whether the bake records its placements (format 1.11): then the source
// model is not needed to stand it.
const recordsPlacement = (bake) => !!bake.report.sidecar?.placement;

function determinant3(m) {
  return m[0] * (m[5] * m[10] - m[9] * m[6]) - m[4] * (m[1] * m[10] - m[9] * m[2]) + m[8] * (m[1] * m[6] - m[5] * m[2]);
}

// One drawable primitive: vertex arrays, its material, its placement, and
// the path's per-primitive uniforms.
async function buildPrimitive(gl, glb, prim, attrs, extra, place, images) {
  const vao = gl.createVertexArray();
  gl.bindVertexArray(vao);
  const a = prim.attributes;
  if (a.POSITION === undefined) throw new Error(`${glb.name}: a primitive has no POSITION`);
  const positions = readAccessor(glb, a.POSITION);
  const count = positions.length / 3;
  const put = (loc, data, size) => {
    const b = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, b);
    gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
    gl.enableVertexAttribArray(loc);
    gl.vertexAttribPointer(loc, size, gl.FLOAT, false, 0, 0);
  };
  put(0, positions, 3);
  const hasNormals = a.NORMAL !== undefined;
  if (hasNormals) put(1, readAccessor(glb, a.NORMAL), 3);
  else gl.vertexAttrib3f(1, 0, 1, 0);
  const material = baseColour(glb, prim.material);
  const uvName = `TEXCOORD_${material.texCoord}`;
  if (a[uvName] !== undefined && material.image !== undefined) put(2, readAccessor(glb, a[uvName]), 2);
  else gl.vertexAttrib2f(2, 0, 0);
  for (const [loc, name, size] of attrs) {
    if (a[name] !== undefined) put(loc, readAccessor(glb, a[name]), size);
    else gl.vertexAttrib4f(loc, 0, 0, 0, 0);
  }
  let indices;
  if (prim.indices !== undefined) indices = readAccessor(glb, prim.indices, true);
  else indices = Uint32Array.from({ length: count }, (_, i) => i);
  const mode = prim.mode ?? 4;
  if (mode !== 4) throw new Error(`${glb.name}: primitive mode ${mode} is not drawn (triangles only)`);
  for (const i of indices) if (i >= count) throw new Error(`${glb.name}: index ${i} is out of range (${count} vertices)`);
  const ib = gl.createBuffer();
  gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, ib);
  gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, indices, gl.STATIC_DRAW);
  gl.bindVertexArray(null);
  // Images are cached per file: LOD levels' weights meshes are files of
  // their own.
  const key = `${glb.name}#${material.image}`;
  if (material.image !== undefined && !images.has(key)) images.set(key, readImage(glb, material.image).then((b) => colourTexture(gl, b)));
  const base = material.image !== undefined ? await images.get(key) : null;
  // Bounds of the placed bind pose, for the crowd's spacing and the camera.
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < count; i++) {
    const p = [positions[i * 3], positions[i * 3 + 1], positions[i * 3 + 2]];
    for (let r = 0; r < 3; r++) {
      const v = place[r] * p[0] + place[4 + r] * p[1] + place[8 + r] * p[2] + place[12 + r];
      lo[r] = Math.min(lo[r], v); hi[r] = Math.max(hi[r], v);
    }
  }
  return { vao, count: indices.length, hasNormals, material, base, place, mirrored: determinant3(place) < 0, lo, hi, extra, vertices: count };
}

// The LOD level drawn (URL parameter `lod`, default 0), and per record
// (`weights_primitives` or `vat_primitives`) the entries of LOD groups'
// other levels, which are not drawn, and the weights file of the entries
// that are (container 1.8 LOD record; docs/lods.md). A group with fewer
// levels draws its last.
function lodLevel() {
  const level = num('lod', 0);
  if (!(Number.isInteger(level) && level >= 0)) throw new Error(`lod=${level}: a level number, 0 or more`);
  return level;
}
function lodChoice(report, key) {
  const skip = new Set();
  const file = new Map();
  for (const g of report.lods?.groups ?? []) {
    const pick = Math.min(lodLevel(), g.levels.length - 1);
    g.levels.forEach((level, k) => {
      for (const i of level[key]) {
        if (k !== pick) skip.add(i);
        else if (level.weights_file) file.set(i, level.weights_file);
      }
    });
  }
  return { skip, file };
}

// The bone-matrix path of `bake`: the weights mesh with its channels, and
// one float texture per bone set.
async function loadBones(gl, bake, cache) {
  const r = bake.report;
  const w = r.weights;
  if (!w || !w.mesh_file) return null;
  // The weights mesh, and each LOD level's own (a level's entries index
  // meshes of its `weights_file`).
  const glbs = new Map();
  const glbOf = (file) => {
    if (!glbs.has(file)) glbs.set(file, fetchBytes(bake.base + encodeURIComponent(file)).then((b) => parseGlb(file, b)));
    return glbs.get(file);
  };
  const images = new Map();
  const textures = [];
  const sidecarSkins = r.sidecar?.skins ?? [];
  for (const skin of r.metadata.skins) {
    const t = r.metadata.textures[skin.texture];
    if (!t || t.kind !== 'bone_matrices') throw new Error(`${bake.name}: skin ${skin.name} names no bone-matrix texture`);
    checkTexture(gl, bake, t);
  }
  // Timeline rows (a folded texture is shorter than the timeline).
  const rows = Math.max(1, ...r.metadata.clips.map((c) => c.start_row + c.frames));
  for (const [k, skin] of r.metadata.skins.entries()) {
    const t = r.metadata.textures[skin.texture];
    // A bone texture taller than the maximum size folds into column blocks
    // (container 1.8 layout record); one page is read, more are refused.
    const fold = r.texture_layout?.folds?.find((f) => f.texture?.bones === skin.texture);
    if (fold && fold.pages > 1) throw new Error(`${t.name}: the bone-matrix texture folds onto ${fold.pages} pages, which the viewer does not read: rebake with a larger --max-texture-size, or play the VAT path`);
    const image = await loadTexture(bake, t, cache);
    textures.push({
      tex: floatTexture(gl, image, t.name), height: fold ? rows : t.height, node: skin.mesh_nodes[0],
      // The shader's layout code: 3 is qts at unorm16, decoded over the
      // texture's range (the sidecar's `bounds`, from the bone-range record).
      layout: t.precision === 'unorm16' ? 3 : ({ mat4: 0, mat3x4: 1, qts: 2 }[t.layout] ?? 0),
      range: r.sidecar?.textures?.[skin.texture]?.bounds ?? [[0, 0, 0, 0], [0, 0, 0, 0]],
      // Where the set's space node stands (format 1.11 records it).
      placement: sidecarSkins[k]?.placement ?? null,
      // (rows per column block, block width): unfolded, one block of every
      // row (one page only: bone rows are one texel row each).
      fold: fold ? [fold.rows_per_block, fold.block_width] : [rows, t.width],
    });
  }
  const attrs = [[3, '_RIGBAKE_UV1', 4], [4, '_RIGBAKE_UV2', 4], [5, '_RIGBAKE_UV3', 4], [6, '_RIGBAKE_UV4', 4]];
  const prims = [];
  const lods = lodChoice(r, 'weights_primitives');
  for (const [entry, p] of w.primitives.entries()) {
    if (lods.skip.has(entry)) continue;
    const glb = await glbOf(lods.file.get(entry) ?? w.mesh_file);
    const mesh = glb.json.meshes?.[p.mesh_index];
    const prim = mesh?.primitives?.[p.mesh_primitive];
    if (!prim) throw new Error(`${glb.name}: meshes[${p.mesh_index}].primitives[${p.mesh_primitive}] is missing`);
    const set = textures[p.skin];
    if (!set) throw new Error(`${bake.name}: weights primitive ${p.node} names bone set ${p.skin}, which does not exist`);
    prims.push(await buildPrimitive(gl, glb, prim, attrs, { set, channels: w.channels }, placement(bake, set.placement, set.node), images));
  }
  return { kind: 'bones', prims };
}

const DIRECTION = { float: 0, bounds: 1, octahedral: 2, packed: 3 };

// The VAT path of `bake`: the playback mesh and each primitive's textures.
async function loadVat(gl, bake, cache) {
  const v = bake.report.vat;
  if (!v || !v.playback_file) return null;
  const lods = lodChoice(bake.report, 'vat_primitives');
  // Every texture the drawn primitives read fits this GPU, before anything
  // is fetched.
  const foldOf = (first) => bake.report.texture_layout?.folds?.find((f) => f.texture?.vat === first);
  for (const [index, p] of v.primitives.entries()) {
    if (lods.skip.has(index)) continue;
    for (const first of [p.positions, p.normals]) {
      const t = first === null || first === undefined ? null : v.textures[first];
      if (t) checkTexture(gl, bake, t, foldOf(first)?.pages ?? 1);
    }
  }
  const glb = parseGlb(v.playback_file, await fetchBytes(bake.base + encodeURIComponent(v.playback_file)));
  const images = new Map();
  const place = placement(bake, bake.report.sidecar?.placement ?? null, v.reference_node);
  // The lookup UV's encoding: split_index since format 1.11; absent in
  // older sidecars, whose lookup UV is the normalised texel centre.
  const encoding = bake.report.sidecar?.vat?.lookup_uv ?? 'texel_centre';
  const LOOKUP = { texel_centre: 0, split_index: 1 };
  if (!(encoding in LOOKUP)) throw new Error(`${bake.name}: the sidecar's vat.lookup_uv is ${JSON.stringify(encoding)}; this page reads split_index and texel_centre`);
  const prims = [];
  // Streams by their first texture: primitives of one atlas share them.
  const streams = new Map();
  for (const [index, p] of v.primitives.entries()) {
    if (lods.skip.has(index)) continue;
    const prim = glb.json.meshes?.[p.playback_mesh]?.primitives?.[0];
    if (!prim) throw new Error(`${v.playback_file}: meshes[${p.playback_mesh}] is missing`);
    const sets = Object.keys(prim.attributes).filter((k) => k.startsWith('TEXCOORD_')).map((k) => Number(k.slice(9)));
    if (!sets.length) throw new Error(`${v.playback_file}: meshes[${p.playback_mesh}] has no VAT lookup UV set`);
    // The set the bake recorded (sidecar, container 1.7+), else the last one.
    const recorded = bake.report.sidecar?.vat?.primitives?.[index]?.lookup_uv_set;
    const lookup = `TEXCOORD_${recorded ?? Math.max(...sets)}`;
    if (!(lookup in prim.attributes)) throw new Error(`${v.playback_file}: meshes[${p.playback_mesh}] has no ${lookup}`);
    // A folded set (layout record, container 1.8+) continues its rows in
    // column blocks, then on further pages: textures `first .. first +
    // pages` of each stream, bound as the layers of one texture array.
    const fold = foldOf(p.positions);
    const pages = fold ? fold.pages : 1;
    const load = async (first) => {
      const layers = [];
      const names = [];
      for (let k = 0; k < pages; k++) {
        const t = v.textures[first + k];
        if (!t) throw new Error(`${bake.name}: VAT texture ${first + k} (page ${k} of ${pages}) does not exist`);
        names.push(t.name);
      }
      const t = v.textures[first];
      // KTX2 and DDS: every page names one file, whose layers they are.
      if (pages > 1 && names.every((n) => n === t.name)) layers.push(await loadTexture(bake, t, cache, pages));
      else for (let k = 0; k < pages; k++) layers.push(await loadTexture(bake, v.textures[first + k], cache));
      // Normalised samples (PNG16, KTX2/DDS UNORM16, UNORM8, RGB10A2)
      // decode with the recorded bounds or the octahedral rule; floats are
      // the values.
      const encoding = sidecarTexture(bake, t)?.encoding ?? t.encoding;
      const unorm = /^(png16|(ktx2|dds)_unorm(16|8|10))$/.test(encoding);
      const enc = unorm ? DIRECTION[t.direction_encoding === 'float' ? 'bounds' : t.direction_encoding] : 0;
      const [lo, hi] = t.bounds ?? [[0, 0, 0, 0], [1, 1, 1, 1]];
      return { ...textureArray(gl, layers, t.name), enc, lo, hi };
    };
    const stream = (first) => {
      if (!streams.has(first)) streams.set(first, load(first));
      return streams.get(first);
    };
    const positions = await stream(p.positions);
    const normals = p.normals !== null && p.normals !== undefined ? await stream(p.normals) : null;
    const pageWidth = v.textures[p.positions].width;
    const extra = {
      positions, normals,
      vat: [p.width, p.bands, p.frames, p.height],
      fold: fold ? [fold.rows_per_block, fold.blocks_per_page, pageWidth, 0] : [0, 1, pageWidth, 0],
      uvEncoding: LOOKUP[encoding],
    };
    prims.push(await buildPrimitive(gl, glb, prim, [[3, lookup, 2]], extra, place, images));
  }
  return { kind: 'vat', prims };
}

// ----------------------------------------------------------------- crowd

function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

class Crowd {
  constructor(gl, count, footprint, clips, seed, motion) {
    this.gl = gl;
    // Root motion (docs/root-motion.md): instances of clips baked in place
    // move by their tracks; `false` plays them in place.
    this.motion = motion;
    this.data = new Float32Array(MAX_INSTANCES * 20);
    this.buffer = gl.createBuffer();
    this.states = [];
    this.clipOf = [];
    this.resize(count, footprint, clips, seed);
  }

  resize(count, footprint, clips, seed) {
    this.count = Math.max(1, Math.min(MAX_INSTANCES, Math.floor(count)));
    const random = rng(seed);
    const side = Math.ceil(Math.sqrt(this.count));
    const spacing = footprint * 1.6;
    this.states = [];
    this.phases = [];
    this.homes = [];
    this.trackers = [];
    for (let i = 0; i < this.count; i++) {
      const o = i * 20;
      if (this.count === 1) {
        this.homes.push([0, 0, 0, 1]);
      } else {
        const gx = (i % side) - (side - 1) / 2, gz = Math.floor(i / side) - (side - 1) / 2;
        const jitter = () => (random() - 0.5) * spacing * 0.3;
        this.homes.push([gx * spacing + jitter(), gz * spacing + jitter(), random() * Math.PI * 2, 1]);
      }
      this.data.set(this.homes[i], o);
      this.trackers.push(new MotionTracker());
      this.states.push(new AnimationState());
      this.clipOf.push(Math.floor(random() * clips.length));
      this.phases.push(random());
    }
    this.extent = this.count === 1 ? footprint : side * spacing;
    // Instances whose loops have carried them this far from home go back.
    this.wander = Math.max(this.extent, footprint * 4) / 2;
  }

  // Every instance plays `clip` (an index; -1: each its own), from its phase.
  play(clips, clip, time) {
    this.trackers.forEach((t) => t.reset());
    this.states.forEach((s, i) => {
      const c = clips[clip >= 0 ? clip : this.clipOf[i]];
      s.play(c, c.looping ? 'loop' : 'once');
      s.seek(time + (this.count === 1 ? 0 : this.phases[i] * c.length()));
    });
  }

  crossfade(clips, clip, seconds) {
    this.states.forEach((s) => {
      const c = clips[clip];
      s.crossfade(c, c.looping ? 'loop' : 'once', 1, seconds);
    });
  }

  update(dt) {
    const gl = this.gl;
    this.states.forEach((s, i) => {
      if (dt) s.update(dt);
      s.gpuState(this.data, i * 20 + 4);
      if (this.motion) {
        const t = this.trackers[i];
        const m = t.at(s);
        if (Math.hypot(t.base[0], t.base[1]) > this.wander) t.base = [0, 0, 0];
        const [x, z, yaw, scale] = this.homes[i];
        const placed = composeMotion([x, z, yaw], [m[0] * scale, m[1] * scale, m[2]]);
        this.data.set([placed[0], placed[1], placed[2], scale], i * 20);
      }
    });
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buffer);
    gl.bufferData(gl.ARRAY_BUFFER, this.data.subarray(0, this.count * 20), gl.DYNAMIC_DRAW);
  }

  bind(vao) {
    const gl = this.gl;
    gl.bindVertexArray(vao);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buffer);
    for (let k = 0; k < 5; k++) {
      gl.enableVertexAttribArray(7 + k);
      gl.vertexAttribPointer(7 + k, 4, gl.FLOAT, false, 80, k * 16);
      gl.vertexAttribDivisor(7 + k, 1);
    }
  }
}

// ------------------------------------------------------------------ page

async function main() {
  const deterministic = params.has('frame') || params.has('time');
  const mask = params.get('look') === 'mask';
  const canvas = $('view');
  const gl = canvas.getContext('webgl2', { antialias: !deterministic, preserveDrawingBuffer: deterministic });
  if (!gl) throw new Error('this browser has no WebGL2');
  canvas.addEventListener('webglcontextlost', () => report('the WebGL context was lost (the GPU took too long or ran out of memory): try fewer instances'));
  status.stage = 'index';
  showProgress('loading the list of bakes (bakes.json)');
  const index = await (await fetch('/bakes.json')).json();
  const bakes = index.bakes;
  if (!bakes.length) throw new Error('the server lists no bakes');
  const wanted = params.get('bake');
  const bake = wanted === null ? bakes[0] : bakes.find((b) => b.name === wanted || String(b.id) === wanted || b.name.split('/').pop() === wanted);
  if (!bake) throw new Error(`no bake called ${wanted} (have: ${bakes.map((b) => b.name).join(', ')})`);
  const bakeSelect = $('bake');
  for (const b of bakes) bakeSelect.add(new Option(b.name, b.name, false, b === bake));
  bakeSelect.onchange = () => { params.set('bake', bakeSelect.value); location.search = params.toString(); };
  // Bakes of format 1.11 record their placements; older ones take them from
  // the source model, and without it stand at the identity.
  if (bake.placement_note && !recordsPlacement(bake)) $('note').textContent = `placed at the identity: ${bake.placement_note}`;

  const rule = bake.report.metadata.options.sampling;
  const rootMotion = bake.report.sidecar?.root_motion ?? null;
  const clips = bake.report.metadata.clips.map((c, i) => new ClipInfo(c, rule, rootMotion?.clips?.[i]));
  if (!clips.length) throw new Error(`${bake.name}: the clip table is empty`);
  const cache = {};
  const paths = {};
  const wantPath = params.get('path');
  if (wantPath && !['bones', 'vat'].includes(wantPath)) throw new Error(`path=${wantPath}: use bones or vat`);
  const loadPath = async (name) => {
    paths[name] ??= name === 'bones' ? loadBones(gl, bake, cache) : loadVat(gl, bake, cache);
    return paths[name];
  };
  let pathName = wantPath ?? (bake.report.weights?.mesh_file ? 'bones' : 'vat');
  status.stage = `loading ${pathName}`;
  let path = await loadPath(pathName);
  status.stage = 'building';
  showProgress('building the crowd');
  if (!path) throw new Error(`${bake.name}: the bake has no ${pathName === 'bones' ? 'bone-weight mesh' : 'VAT playback mesh'}`);
  const pathSelect = $('path');
  for (const p of ['bones', 'vat']) {
    const has = p === 'bones' ? bake.report.weights?.mesh_file : bake.report.vat?.playback_file;
    const option = new Option(p === 'bones' ? 'bone-matrix texture' : 'VAT', p, false, p === pathName);
    option.disabled = !has;
    pathSelect.add(option);
  }

  const programs = {
    bones: compile(gl, PROGRAMS.bones),
    vat: compile(gl, PROGRAMS.vat),
    ground: compile(gl, PROGRAMS.ground),
  };
  const viewerBlock = uniformBuffer(gl, VIEWER.bytes, BLOCKS.viewer);
  const groundBlock = uniformBuffer(gl, LAYOUTS.ground.bytes, BLOCKS.ground);
  const groundVao = gl.createVertexArray();
  gl.bindVertexArray(groundVao);
  const gb = gl.createBuffer();
  gl.bindBuffer(gl.ARRAY_BUFFER, gb);
  gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 1, -1, -1, 1, 1, 1]), gl.STATIC_DRAW);
  gl.enableVertexAttribArray(0);
  gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
  gl.bindVertexArray(null);

  const bounds = (p) => {
    const lo = [0, 1, 2].map((i) => Math.min(...p.prims.map((q) => q.lo[i])));
    const hi = [0, 1, 2].map((i) => Math.max(...p.prims.map((q) => q.hi[i])));
    return { lo, hi };
  };
  let box = bounds(path);
  const footprint = () => Math.max(box.hi[0] - box.lo[0], box.hi[2] - box.lo[2], (box.hi[1] - box.lo[1]) * 0.5, 1e-6);

  // Clip choices.
  const clipParam = params.get('clip');
  let clip = clipParam === null ? -1 : clips.findIndex((c) => c.name === clipParam);
  if (clipParam !== null && clip < 0) throw new Error(`${bake.name}: no clip called ${clipParam} (have: ${clips.map((c) => c.name).join(', ')})`);
  const clipSelect = $('clip'), fadeSelect = $('fade-to');
  clipSelect.add(new Option('each its own clip', '-1', false, clip < 0));
  clips.forEach((c, i) => {
    clipSelect.add(new Option(`${c.name} (${c.frames} frames${c.looping ? ', loop' : ''})`, String(i), false, i === clip));
    fadeSelect.add(new Option(c.name, String(i)));
  });

  const count = num('n', deterministic && params.has('frame') ? 1 : 300);
  if (!(count >= 1 && count <= MAX_INSTANCES)) throw new Error(`n=${count}: from 1 to ${MAX_INSTANCES} instances`);
  const seed = num('seed', 1);
  // A single frame (`frame=`) is drawn as `rigbake preview` draws it, in
  // place, unless motion=1 asks for the travel too.
  const moving = params.has('frame') ? params.get('motion') === '1' : params.get('motion') !== '0';
  const crowd = new Crowd(gl, count, footprint(), clips, seed, moving && clips.some((c) => c.motion));
  if (bake.report.lods?.groups?.length) {
    const note = `LOD level ${lodLevel()} of ${bake.report.lods.groups.length} group(s) (lod=N picks a level; a group with fewer draws its last)`;
    $('note').textContent = [$('note').textContent, note].filter((t) => t).join(' · ');
  }
  if (rootMotion) {
    const note = moving ? `root motion: instances travel by the tracks of clips baked in place (root ${rootMotion.node}; motion=0 plays them in place)` : 'root motion: played in place (motion=0)';
    $('note').textContent = [$('note').textContent, note].filter((t) => t).join(' · ');
  }
  const frameParam = params.has('frame') ? num('frame', 0) : null;
  const start = () => {
    if (frameParam !== null) {
      // The preview's state: the clip played once, at the frame's sample time.
      const c = clips[Math.max(clip, 0)];
      if (!(Number.isInteger(frameParam) && frameParam >= 0 && frameParam < c.frames)) throw new Error(`frame=${frameParam}: ${c.name} has frames 0 to ${c.frames - 1}`);
      crowd.states.forEach((s) => { s.play(c, 'once'); s.seek(c.frameTime(frameParam)); });
    } else crowd.play(clips, clip, num('time', 0));
  };
  start();
  $('count').value = String(crowd.count);

  let playing = !deterministic && params.get('paused') !== '1';
  const az = num('az', 30), el = num('el', 20);
  const cam = { az, el, dist: num('dist', 0), ortho: params.get('cam') === 'ortho' };
  const ortho = cam.ortho ? { c: [num('cx', 0), num('cy', 0), num('cz', 0)], half: num('half', 1) } : null;
  if (ortho && !(ortho.half > 0)) throw new Error('half must be positive');
  const showGrid = params.get('grid') !== '0' && !mask;
  if (params.get('hud') === '0') $('hud').hidden = true;

  // Orbit: drag to turn, wheel to zoom.
  let drag = null;
  canvas.onpointerdown = (e) => { drag = [e.clientX, e.clientY]; canvas.setPointerCapture(e.pointerId); };
  canvas.onpointerup = () => { drag = null; };
  canvas.onpointermove = (e) => {
    if (!drag || cam.ortho) return;
    cam.az -= (e.clientX - drag[0]) * 0.3;
    cam.el = Math.min(89, Math.max(-10, cam.el + (e.clientY - drag[1]) * 0.3));
    drag = [e.clientX, e.clientY];
  };
  canvas.onwheel = (e) => { e.preventDefault(); cam.dist = (cam.dist || defaultDist()) * Math.exp(e.deltaY * 0.001); };
  const defaultDist = () => Math.max(crowd.extent * 1.1, (box.hi[1] - box.lo[1]) * 2.5);

  $('play').onclick = () => { playing = !playing; $('play').textContent = playing ? 'pause' : 'play'; };
  $('play').textContent = playing ? 'pause' : 'play';
  $('step').onclick = () => { playing = false; $('play').textContent = 'play'; pendingStep += 1 / (clips[Math.max(clip, 0)].frameRate() || 30); };
  let pendingStep = 0;
  let changes = 0;
  clipSelect.onchange = () => { clip = Number(clipSelect.value); crowd.play(clips, clip, 0); changes++; };
  $('fade').onclick = () => { const to = Number(fadeSelect.value); crowd.crossfade(clips, to, Number($('fade-seconds').value) || 0.5); clip = to; clipSelect.value = String(to); changes++; };
  $('count').onchange = () => {
    const n = Number($('count').value);
    if (!(n >= 1 && n <= MAX_INSTANCES)) { $('count').value = String(crowd.count); return; }
    crowd.resize(n, footprint(), clips, seed);
    crowd.play(clips, clip, 0);
  };
  pathSelect.onchange = async () => {
    try {
      const next = await loadPath(pathSelect.value);
      $('progress').hidden = true;
      if (next) { path = next; pathName = pathSelect.value; box = bounds(path); }
    } catch (e) {
      report(e.message ?? String(e));
    }
  };

  let last = null, fpsTime = 0, fpsFrames = 0, drawn = null;
  const draw = (now) => {
    const dt = last === null ? 0 : Math.min((now - last) / 1000, 0.25);
    last = now;
    const w = canvas.clientWidth, h = canvas.clientHeight;
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
    // Paused and unchanged: nothing to draw.
    const key = [w, h, cam.az, cam.el, cam.dist, crowd.count, pathName, clip, changes].join();
    if (!playing && pendingStep === 0 && key === drawn) {
      requestAnimationFrame(draw);
      return;
    }
    drawn = key;
    crowd.update(playing ? dt : pendingStep);
    pendingStep = 0;
    gl.viewport(0, 0, canvas.width, canvas.height);
    if (mask) gl.clearColor(0, 0, 0, 1);
    else gl.clearColor(0.149, 0.157, 0.18, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    const ax = axes(cam.az, cam.el);
    const centre = [0, (box.lo[1] + box.hi[1]) / 2, 0];
    const vp = ortho ? orthoMatrix(ax, ortho.c, ortho.half) : perspectiveMatrix(ax, centre, cam.dist || defaultDist(), canvas.width / Math.max(canvas.height, 1));
    if (showGrid) {
      gl.disable(gl.CULL_FACE);
      const g = programs.ground;
      gl.useProgram(g.program);
      groundBlock.f.set(vp, LAYOUTS.ground.view_projection);
      groundBlock.f.set([crowd.extent * 0.75 + footprint() * 2, footprint() * 1.6, 0, 0], LAYOUTS.ground.sizes);
      groundBlock.upload();
      gl.bindVertexArray(groundVao);
      gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    }
    const prog = programs[path.kind];
    gl.useProgram(prog.program);
    gl.enable(gl.CULL_FACE);
    const { f, u } = viewerBlock;
    f.set(vp, VIEWER.view_projection);
    for (const p of path.prims) {
      gl.frontFace(p.mirrored ? gl.CW : gl.CCW);
      f.set(p.place, VIEWER.placement);
      f.set(p.material.factor, VIEWER.base_factor);
      u.set([p.hasNormals || (path.kind === 'vat' && p.extra.normals) ? 1 : 0, mask ? 1 : 0, 0, 0], VIEWER.flags);
      gl.activeTexture(gl.TEXTURE0 + UNITS.base_texture);
      gl.bindTexture(gl.TEXTURE_2D, p.base ?? (programs.white ??= colourTexture(gl, null)));
      if (path.kind === 'bones') {
        const set = p.extra.set;
        gl.activeTexture(gl.TEXTURE0 + UNITS.bone_texture);
        gl.bindTexture(gl.TEXTURE_2D, set.tex);
        u.set([set.layout, set.height, p.extra.channels, 0], VIEWER.bones);
        u.set([set.fold[0], set.fold[1], 0, 0], VIEWER.bone_fold);
        f.set(set.range[0], VIEWER.bone_range_min);
        f.set(set.range[1], VIEWER.bone_range_max);
      } else {
        const { positions, normals, vat, fold } = p.extra;
        // Float positions and normals, and unsigned (16-bit UNORM) ones;
        // the unused samplers hold placeholders.
        const stand = programs.placeholders ??= placeholders(gl);
        const bind = (unit, tex) => {
          gl.activeTexture(gl.TEXTURE0 + unit);
          gl.bindTexture(gl.TEXTURE_2D_ARRAY, tex);
        };
        bind(UNITS.vat_positions, positions.uint ? stand.float : positions.tex);
        bind(UNITS.vat_normals, normals && !normals.uint ? normals.tex : stand.float);
        bind(UNITS.vat_positions_u, positions.uint ? positions.tex : stand.uint);
        bind(UNITS.vat_normals_u, normals?.uint ? normals.tex : stand.uint);
        u.set(vat, VIEWER.vat);
        u.set(fold, VIEWER.vat_fold);
        u.set([p.extra.uvEncoding, (positions.uint ? 1 : 0) | (normals?.uint ? 2 : 0), normals ? 1 : 0, 0], VIEWER.vat_modes);
        u.set([positions.enc, normals ? normals.enc : 0, 0, 0], VIEWER.encodings);
        f.set(positions.lo, VIEWER.position_min);
        f.set(positions.hi, VIEWER.position_max);
        f.set(normals ? normals.lo : [0, 0, 0, 0], VIEWER.normal_min);
        f.set(normals ? normals.hi : [1, 1, 1, 1], VIEWER.normal_max);
      }
      viewerBlock.upload();
      crowd.bind(p.vao);
      gl.drawElementsInstanced(gl.TRIANGLES, p.count, gl.UNSIGNED_INT, 0, crowd.count);
    }
    gl.bindVertexArray(null);
    fpsFrames++;
    if (now - fpsTime > 500) {
      $('fps').textContent = `${((fpsFrames * 1000) / (now - fpsTime)).toFixed(0)} fps`;
      fpsTime = now; fpsFrames = 0;
    }
    $('instances').textContent = `${crowd.count} instances, ${path.prims.reduce((s, p) => s + p.vertices, 0)} vertices each, ${pathName === 'bones' ? 'bone-matrix texture' : 'VAT'}`;
    status.frames++;
    if (!status.ready) {
      gl.finish();
      status.ready = true;
      status.progress = null;
      $('progress').hidden = true;
      document.title = 'rigbake view: ready';
    }
    requestAnimationFrame(draw);
  };
  status.stage = 'drawing';
  showProgress(`drawing the first frame (${fetched.files} files, ${megabytes(fetched.bytes)} MB loaded)`);
  requestAnimationFrame(draw);
}

main().catch((e) => report(e.message ?? String(e)));
