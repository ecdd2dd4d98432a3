// docs/engines.md's three.js recipe as runnable code: a rigbake bake played
// through three.js's own GLTFLoader and EXRLoader (or KTX2Loader, for bakes
// made with --texture-container ktx2 or ktx2-zstd), for both playback
// paths, drawn with the meshes' own materials (as GLTFLoader builds them:
// base colour texture and factor, and the rest) with the animation injected
// into their vertex shaders.
//
// What it reads (served by serve.mjs): /bake.json, the `rigbake inspect
// --json` report of the container; /bake/<file>, the bake's textures and
// meshes; for bakes older than format 1.11 only, /bake/<source>, the source
// model, which places them.
//
// Placement: the values are in the space of a node (the bone set's mesh
// node, the VAT reference node). Since format 1.11 every mesh rigbake writes
// carries that node's rest-pose global matrix as its glTF node `matrix`
// (the sidecar's `placement`), so GLTFLoader stands it where the source
// stands it: the page draws each primitive with its node's world matrix
// from the loaded GLB's scene and applies nothing else. Older bakes (no
// `placement` in the sidecar) take the node's rest-pose global matrix from
// the source model beside the container, or stand at the identity.
//
// Orientation: EXRLoader puts file scanline y at texture row H - 1 - y
// (it flips), and DataTexture uploads with flipY false, so texelFetch(x, r)
// reads scanline H - 1 - r. rigbake's row r (row 0 = the first frame) is
// scanline r, so the shaders fetch texel row H - 1 - r (see `flip` below).
// KTX2Loader does not flip: it hands the file's rows (row 0 first) to a
// DataTexture as they are, so texel row r is rigbake's row r and the
// shaders fetch it unflipped (uniform `row_flip` 0).
//
// KTX2 (the sidecar's encoding ktx2_f32, ktx2_f16, ktx2_unorm16; with or
// without Zstandard supercompression, which KTX2Loader inflates with its
// bundled zstddec): uncompressed formats need no Basis transcoder. 16-bit
// UNORM textures are bound as RGBA16UI (no extension needed), normalised in
// the shader and decoded with the recorded bounds (positions) or the
// octahedral rule (normals), as the PNG16 samples they are. A folded
// VAT (pages as the array layers of one KTX2 file) is refused: KTX2Loader
// builds a plain 2D DataTexture from an uncompressed KTX2 even when its
// layerCount is above 1. DDS bakes are refused too (three.js's DDSLoader
// reads block-compressed formats only).
//
// URL parameters: path (bones | vat), clip, frame (a still frame; else the
// clip plays), lod (the level of every LOD group drawn, default 0),
// motion (0: a clip baked in place plays in place; 1: a still
// frame is drawn with its root motion), look=mask (white silhouette on black), cam=ortho with az, el,
// cx, cy, cz, half (the rigbake preview's camera); else a perspective view;
// flip=0 leaves out the EXR row flip, to show what goes wrong without it;
// flip=1 flips every texture's rows, KTX2 ones too (wrong for them).

import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { EXRLoader } from 'three/addons/loaders/EXRLoader.js';
import { KTX2Loader } from 'three/addons/loaders/KTX2Loader.js';

const params = new URLSearchParams(location.search);
const status = { ready: false, error: null };
window.rigbakeViewer = status;

// The animation is injected into the materials GLTFLoader builds from the
// meshes (MeshStandardMaterial for glTF's metallic-roughness, or whichever
// the file asks for), so they keep their base colour (texture and factor),
// normal, metallic-roughness and emissive maps and are lit by three.js: the
// vertex shader's `position` and `normal` are replaced by the animated ones
// (onBeforeCompile, `#include <beginnormal_vertex>` and `#include
// <begin_vertex>`), everything after them (the model-view projection, the
// normal matrix, fog, shadows) is three.js's own. look=mask draws the same
// geometry with a white MeshBasicMaterial carrying the same injection.

// Declarations shared by both paths: the animation state and the row flip.
const ANIMATION_COMMON = /* glsl */ `
uniform vec4 rb_state; // (row, next row, fraction, unused)
// 1: fetch rigbake row r at texel row H - 1 - r (EXRLoader flipped the
// rows); 0: at row r (KTX2Loader keeps them). URL flip=0 / flip=1 force
// either, to show what goes wrong with the other.
uniform int rb_row_flip;
int rb_flip(int row, int height) { return rb_row_flip == 1 ? height - 1 - row : row; }
// The animated object-space position and normal, set by rb_animate() at the
// start of main() and read in place of the attributes.
vec3 rb_position;
vec3 rb_normal;
`;

const BONES_VERTEX = ANIMATION_COMMON + /* glsl */ `
// qts at unorm16 (ktx2_unorm16): bound as unsigned integers (RGBA16UI, as
// the VAT's 16-bit textures) and read as sample / 65535, the value a UNORM
// fetch returns; the quaternion is raw * 2 - 1, the translation and scale
// rb_bone_min + raw * (rb_bone_max - rb_bone_min) (the sidecar's bounds;
// formats/bone-matrix-texture.md).
#ifdef UINT_TEXTURES
uniform highp usampler2D rb_bones;
#define RB_BONE(c) (vec4(texelFetch(rb_bones, c, 0)) / 65535.0)
#else
uniform highp sampler2D rb_bones;
#define RB_BONE(c) texelFetch(rb_bones, c, 0)
#endif
uniform int rb_bones_height;
uniform int rb_layout; // 0 mat4, 1 mat3x4, 2 qts, 3 qts at unorm16
uniform vec4 rb_bone_min;
uniform vec4 rb_bone_max;
in vec4 _rigbake_uv1;
in vec4 _rigbake_uv2;
in vec4 _rigbake_uv3;
in vec4 _rigbake_uv4;

mat4 rb_bone(int j, int row) {
  int y = rb_flip(row, rb_bones_height);
  if (rb_layout >= 2) {
    // qts: rotation quaternion, then translation and uniform scale
    // (formats/bone-matrix-texture.md); the quaternion normalised first.
    vec4 q = RB_BONE(ivec2(2 * j, y));
    vec4 ts = RB_BONE(ivec2(2 * j + 1, y));
    if (rb_layout == 3) {
      q = q * 2.0 - 1.0;
      ts = rb_bone_min + ts * (rb_bone_max - rb_bone_min);
    }
    float d = dot(q, q);
    q = d > 0.0 ? q * (1.0 / sqrt(d)) : vec4(0.0);
    float s = ts.w;
    return mat4(
      vec4(1.0 - 2.0 * (q.y * q.y + q.z * q.z), 2.0 * (q.x * q.y + q.w * q.z), 2.0 * (q.x * q.z - q.w * q.y), 0.0) * s,
      vec4(2.0 * (q.x * q.y - q.w * q.z), 1.0 - 2.0 * (q.x * q.x + q.z * q.z), 2.0 * (q.y * q.z + q.w * q.x), 0.0) * s,
      vec4(2.0 * (q.x * q.z + q.w * q.y), 2.0 * (q.y * q.z - q.w * q.x), 1.0 - 2.0 * (q.x * q.x + q.y * q.y), 0.0) * s,
      vec4(ts.xyz, 1.0));
  }
  if (rb_layout == 1) {
    vec4 r0 = RB_BONE(ivec2(3 * j, y));
    vec4 r1 = RB_BONE(ivec2(3 * j + 1, y));
    vec4 r2 = RB_BONE(ivec2(3 * j + 2, y));
    return transpose(mat4(r0, r1, r2, vec4(0.0, 0.0, 0.0, 1.0)));
  }
  return mat4(RB_BONE(ivec2(4 * j, y)), RB_BONE(ivec2(4 * j + 1, y)),
              RB_BONE(ivec2(4 * j + 2, y)), RB_BONE(ivec2(4 * j + 3, y)));
}

mat4 rb_blended(int row) {
  vec4 uv[4] = vec4[4](_rigbake_uv1, _rigbake_uv2, _rigbake_uv3, _rigbake_uv4);
  mat4 m = mat4(0.0);
  for (int c = 0; c < 4; c++) {
    if (uv[c].y != 0.0) m += uv[c].y * rb_bone(int(uv[c].x), row);
    if (uv[c].w != 0.0) m += uv[c].w * rb_bone(int(uv[c].z), row);
  }
  return m;
}

void rb_animate() {
  mat4 m0 = rb_blended(int(rb_state.x));
  mat4 m1 = rb_blended(int(rb_state.y));
  rb_position = mix((m0 * vec4(position, 1.0)).xyz, (m1 * vec4(position, 1.0)).xyz, rb_state.z);
  rb_normal = mix(mat3(m0) * normal, mat3(m1) * normal, rb_state.z);
}
`;

const VAT_VERTEX = ANIMATION_COMMON + /* glsl */ `
// 16-bit UNORM textures (ktx2_unorm16) are bound as unsigned integers
// (RGBA16UI: WebGL2 has no RGBA16 UNORM without EXT_texture_norm16) and
// divided by 65535 here, the value a UNORM fetch returns.
#ifdef UINT_TEXTURES
uniform highp usampler2D rb_positions;
uniform highp usampler2D rb_normals;
#define RB_FETCH(t, c) (vec4(texelFetch(t, c, 0)) / 65535.0)
#else
uniform highp sampler2D rb_positions;
uniform highp sampler2D rb_normals;
#define RB_FETCH(t, c) texelFetch(t, c, 0)
#endif
uniform int rb_has_normals;
uniform ivec4 rb_vat; // width, bands, frames, height
// The lookup UV's encoding (sidecar vat.lookup_uv): 1 split_index (format
// 1.11: the set vertex s = x + band * width as (s mod 2048, s div 2048),
// integers exact in half floats); 0 the normalised texel centre at row 0
// (older bakes).
uniform int rb_lookup;
// 16-bit UNORM textures (ktx2_unorm16, the PNG16 samples): positions are
// lo + s * (hi - lo) (encoding 1), normals bounds-normalised (1) or
// octahedral (2); floats are the values (0).
uniform int rb_position_encoding;
uniform vec4 rb_position_min;
uniform vec4 rb_position_max;
uniform int rb_normal_encoding;
uniform vec4 rb_normal_min;
uniform vec4 rb_normal_max;
in vec2 vat_uv;

ivec2 rb_texel(int row) {
  int x, band;
  if (rb_lookup == 1) {
    int s = int(round(vat_uv.x)) + 2048 * int(round(vat_uv.y));
    x = s % rb_vat.x;
    band = s / rb_vat.x;
  } else {
    x = int(floor(vat_uv.x * float(rb_vat.x)));
    band = int(floor(vat_uv.y * float(rb_vat.w)));
  }
  return ivec2(x, rb_flip(band + row * rb_vat.y, rb_vat.w));
}

vec3 rb_octahedral(vec2 e) {
  vec3 n = vec3(e, 1.0 - abs(e.x) - abs(e.y));
  if (n.z < 0.0) n.xy = (1.0 - abs(n.yx)) * vec2(n.x >= 0.0 ? 1.0 : -1.0, n.y >= 0.0 ? 1.0 : -1.0);
  return normalize(n);
}
vec3 rb_decode(vec4 raw, int encoding, vec4 lo, vec4 hi) {
  if (encoding == 1) return (lo + raw * (hi - lo)).xyz;
  if (encoding == 2) return rb_octahedral(raw.xy * 2.0 - 1.0);
  if (encoding == 3) {
    // Packed normals (format 1.13): the positions texture's alpha holds
    // two bytes of octahedral coordinates, 256 * ux + uy.
    float code = floor(raw.w * 65535.0 + 0.5);
    float ux = floor(code / 256.0);
    return rb_octahedral(vec2(ux, code - ux * 256.0) / 255.0 * 2.0 - 1.0);
  }
  return raw.xyz;
}
vec3 rb_position_at(ivec2 t) { return rb_decode(RB_FETCH(rb_positions, t), rb_position_encoding, rb_position_min, rb_position_max); }
vec3 rb_normal_at(ivec2 t) { return rb_decode(RB_FETCH(rb_normals, t), rb_normal_encoding, rb_normal_min, rb_normal_max); }

void rb_animate() {
  ivec2 t0 = rb_texel(int(rb_state.x)), t1 = rb_texel(int(rb_state.y));
  rb_position = mix(rb_position_at(t0), rb_position_at(t1), rb_state.z);
  rb_normal = rb_has_normals == 1 ? mix(rb_normal_at(t0), rb_normal_at(t1), rb_state.z) : normal;
}
`;

// three.js's vertex chunks that read the attributes, reading the animated
// values instead (the rest of each chunk as three.js 0.187 has it).
const BEGIN_NORMAL = /* glsl */ `
vec3 objectNormal = rb_normal;
#ifdef USE_TANGENT
  vec3 objectTangent = vec3( tangent.xyz );
#endif
`;
const BEGIN_VERTEX = /* glsl */ `
vec3 transformed = rb_position;
#ifdef USE_ALPHAHASH
  vPosition = vec3( rb_position );
#endif
`;

// Makes `material` (one GLTFLoader built, or the mask's MeshBasicMaterial)
// play the bake: `head` (BONES_VERTEX or VAT_VERTEX) is declared after
// three.js's common chunk, rb_animate() runs first in main(), and the
// chunks reading `position` and `normal` read its results. `uniforms` are
// shared objects (the animation state changes in place); `key` names the
// program variant, so three.js does not reuse one compiled for other
// defines.
function animate(material, head, uniforms, key, defines = {}) {
  material.defines = { ...(material.defines ?? {}), ...defines };
  material.onBeforeCompile = (shader) => {
    Object.assign(shader.uniforms, uniforms);
    let vs = shader.vertexShader;
    for (const [from, to] of [
      ['#include <common>', `#include <common>\n${head}`],
      ['void main() {', 'void main() {\n\trb_animate();'],
      ['#include <beginnormal_vertex>', BEGIN_NORMAL],
      ['#include <begin_vertex>', BEGIN_VERTEX],
    ]) {
      // MeshBasicMaterial includes beginnormal_vertex only for environment
      // maps and skinning: then nothing reads the normal.
      if (!vs.includes(from)) {
        if (from.includes('beginnormal')) continue;
        const why = `${material.type}'s vertex shader has no ${from}: the animation cannot be injected`;
        status.error ??= why;
        throw new Error(why);
      }
      vs = vs.replace(from, to);
    }
    shader.vertexShader = vs;
  };
  material.customProgramCacheKey = () => `rigbake:${key}:${JSON.stringify(defines)}`;
  material.needsUpdate = true;
  return material;
}

// The material a primitive is drawn with: GLTFLoader's (cloned: the bake's
// files may share one material between primitives with other textures), or
// with look=mask a plain white one, back faces culled whatever the
// material's doubleSided says, as rigbake preview and rigbake view draw
// silhouettes (the tests compare them). `normals`: the drawn normals are
// meaningful (the mesh has them, or the VAT has a normal texture); without
// them the material is shaded by face, as GLTFLoader does for meshes
// without normals.
function drawnMaterial(loaded, mask, normals) {
  if (mask) return new THREE.MeshBasicMaterial({ color: 0xffffff, side: THREE.FrontSide });
  const material = (Array.isArray(loaded) ? loaded[0] : loaded)?.clone() ?? new THREE.MeshStandardMaterial({ color: 0xd9d9d9 });
  material.flatShading = !normals;
  return material;
}

async function json(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.json();
}

// Data, not colour: linear, point-sampled, no mipmaps.
function asData(t) {
  t.colorSpace = THREE.NoColorSpace;
  t.magFilter = t.minFilter = THREE.NearestFilter;
  t.generateMipmaps = false;
  t.needsUpdate = true;
  return t;
}

function exr(url) {
  const loader = new EXRLoader().setDataType(THREE.FloatType);
  return new Promise((resolve, reject) => loader.load(url, (t) => resolve(asData(t)),
    undefined, () => reject(new Error(`${url}: EXRLoader failed`))));
}

// The sidecar's record of the texture in file `name`.
function sidecarTexture(report, name) {
  return report.sidecar?.textures?.find((s) => s.file === name) ?? null;
}

// Loads the texture file `name` of the bake with the loader its encoding
// needs: { texture, flipped } (flipped: the loader put file row y at texture
// row H - 1 - y).
let ktx2Loader = null;
async function bakeTexture(report, name, renderer) {
  const url = `/bake/${encodeURIComponent(name)}`;
  const side = sidecarTexture(report, name);
  const encoding = side?.encoding ?? 'exr';
  if (encoding.startsWith('dds_')) {
    throw new Error(`${name}: a DDS bake (${encoding}); three.js's DDSLoader reads block-compressed DDS only, so this example plays EXR and KTX2 bakes: rebake with --texture-container ktx2`);
  }
  if (encoding === 'png16' && side?.role === 'bone_matrices') {
    throw new Error(`${name}: a 16-bit PNG bone texture (qts at unorm16); browsers decode PNG to 8 bits, so this example plays such bakes from KTX2: rebake with --texture-container ktx2`);
  }
  if (encoding === 'ktx2_unorm10') {
    throw new Error(`${name}: a VAT of 10-bit samples (A2B10G10R10_UNORM_PACK32); three.js's KTX2Loader (r187) reads no packed 10-bit format, so this example plays --format unorm8 or png16 instead: rebake with --format unorm8, or play it with rigbake view`);
  }
  if (!encoding.startsWith('ktx2_')) return { texture: await exr(url), flipped: 1, uint: false };
  if (!ktx2Loader) {
    // Uncompressed formats need no Basis transcoder; Zstandard-supercompressed
    // files are inflated with three.js's bundled zstddec.
    ktx2Loader = new KTX2Loader().detectSupport(renderer);
  }
  const texture = await ktx2Loader.loadAsync(url).catch((e) => {
    throw new Error(`${name}: KTX2Loader failed: ${e?.message ?? e}`);
  });
  if (!texture.isDataTexture) throw new Error(`${name}: KTX2Loader built a ${texture.type ?? texture.constructor.name}, not a DataTexture of uncompressed texels`);
  const { width, height } = texture.image;
  if (width !== side.width || height !== side.height) {
    throw new Error(`${name}: the KTX2 file is ${width} x ${height}, the sidecar says ${side.width} x ${side.height}`);
  }
  // Row 0 first, as the file has it (no flip).
  texture.flipY = false;
  const uint = encoding === 'ktx2_unorm16';
  if (uint) {
    // KTX2Loader marks R16G16B16A16_UNORM `normalized`, which WebGL2 uploads
    // only with EXT_texture_norm16: take the same samples as RGBA16UI.
    texture.normalized = false;
    texture.format = THREE.RGBAIntegerFormat;
    texture.internalFormat = 'RGBA16UI';
  }
  return { texture: asData(texture), flipped: 0, uint };
}

// Refuses a folded VAT texture (formats/vat.md, "Folding"): this example
// reads timeline row r at texel rows r * bands .. only.
function refuseFold(report, t) {
  const side = sidecarTexture(report, t.name);
  const fold = side?.fold ?? report.texture_layout?.folds?.find((f) => f.texture?.vat === report.vat.textures.indexOf(t)) ?? null;
  if (!fold) return;
  if (side?.encoding?.startsWith('ktx2_') && fold.pages > 1) {
    throw new Error(`${t.name}: a folded VAT whose ${fold.pages} pages are the array layers of one KTX2 file; three.js's KTX2Loader builds a plain 2D DataTexture from an uncompressed KTX2 even when its layerCount is above 1, so this example cannot play it: rebake with a larger --max-texture-size (no folding), or play it with rigbake view`);
  }
  throw new Error(`${t.name}: a folded VAT (rows in column blocks${fold.pages > 1 ? ` on ${fold.pages} pages` : ''}); this example reads unfolded VAT textures only: rebake with a larger --max-texture-size, or play it with rigbake view`);
}

const DIRECTION = { float: 1, bounds: 1, octahedral: 2, packed: 3 };

// The shader's decoding of a VAT texture record: 0 for floats; for UNORM
// samples (ktx2_unorm16, bound as integers and divided by 65535; ktx2_unorm8,
// which KTX2Loader uploads as normalised RGBA8), the bounds or the
// octahedral rule.
function vatDecoding(report, t) {
  const encoding = sidecarTexture(report, t.name)?.encoding ?? t.encoding;
  if (!['png16', 'ktx2_unorm16', 'ktx2_unorm8'].includes(encoding)) return { encoding: 0, lo: new THREE.Vector4(), hi: new THREE.Vector4(1, 1, 1, 1) };
  const [lo, hi] = t.bounds ?? [[0, 0, 0, 0], [1, 1, 1, 1]];
  return { encoding: DIRECTION[t.direction_encoding] ?? 1, lo: new THREE.Vector4(...lo), hi: new THREE.Vector4(...hi) };
}

const gltf = (url) => new GLTFLoader().loadAsync(url);

// The glTF node called `name` as three.js built it, and its world matrix at
// the rest pose.
async function restGlobal(model, name) {
  if (!name || !model) return new THREE.Matrix4();
  // rigbake names an unnamed node `node<index>` (its glTF index).
  const nodes = model.parser.json.nodes;
  let index = nodes.findIndex((n) => n.name === name);
  const unnamed = /^node(\d+)$/.exec(name);
  if (index < 0 && unnamed && nodes[Number(unnamed[1])] && !nodes[Number(unnamed[1])].name) index = Number(unnamed[1]);
  if (index < 0) throw new Error(`the source has no node ${name}`);
  const node = await model.parser.getDependency('node', index);
  model.scene.updateMatrixWorld(true);
  return node.matrixWorld.clone();
}

// The three.js mesh (geometry and material) of a primitive of a rigbake
// GLB, by (mesh index, primitive index).
async function primitive(file, meshIndex, primitiveIndex) {
  const object = await file.parser.getDependency('mesh', meshIndex);
  const meshes = object.isMesh ? [object] : object.children.filter((c) => c.isMesh);
  const mesh = meshes[primitiveIndex];
  if (!mesh) throw new Error(`meshes[${meshIndex}].primitives[${primitiveIndex}] is missing`);
  return mesh;
}

// Where GLTFLoader stood each primitive of a rigbake GLB: its world matrix
// in the file's scene (its node's `matrix`, the recorded placement), by
// "mesh index/primitive index".
function placedPrimitives(file) {
  const placed = new Map();
  file.scene.updateMatrixWorld(true);
  file.scene.traverse((o) => {
    const a = o.isMesh ? file.parser.associations.get(o) : undefined;
    const key = a ? `${a.meshes}/${a.primitives}` : null;
    if (key && !placed.has(key)) placed.set(key, o.matrixWorld.clone());
  });
  return placed;
}

// The matrix that stands primitive (mesh, primitive) of a rigbake GLB:
// GLTFLoader's (format 1.11 records it as the node matrix), or, for older
// bakes, the rest-pose global of `node` in the source model.
async function standing(file, mesh, prim, placement) {
  if (placement.recorded) {
    const m = (placement.placed.get(file) ?? placement.placed.set(file, placedPrimitives(file)).get(file)).get(`${mesh}/${prim}`);
    if (!m) throw new Error(`meshes[${mesh}] of the bake's GLB is on no node of its scene, which holds its placement`);
    return m;
  }
  return restGlobal(await placement.source(), placement.node);
}

// LOD groups (docs/lods.md): the level drawn (URL parameter `lod`, default
// 0; a group with fewer levels draws its last), and per record
// (`weights_primitives` or `vat_primitives`) the entries of the groups'
// other levels, which are not drawn, and the weights file of the entries
// that are (a level's entries index meshes of its own `weights_file`).
function lodChoice(report, key) {
  const level = Number(params.get('lod') ?? 0);
  if (!(Number.isInteger(level) && level >= 0)) throw new Error(`lod=${params.get('lod')}: a level number, 0 or more`);
  const skip = new Set();
  const file = new Map();
  for (const g of report.lods?.groups ?? []) {
    const pick = Math.min(level, g.levels.length - 1);
    g.levels.forEach((l, k) => {
      for (const i of l[key] ?? []) {
        if (k !== pick) skip.add(i);
        else if (l.weights_file) file.set(i, l.weights_file);
      }
    });
  }
  return { skip, file };
}

// GLTFLoader's name for TEXCOORD_n.
const uvAttribute = (n) => (n === 0 ? 'uv' : n <= 3 ? `uv${n}` : `texcoord_${n}`);

async function main() {
  const report = await json('/bake.json');
  const meta = report.metadata;
  const pathName = params.get('path') ?? 'bones';
  const clipName = params.get('clip');
  const clip = clipName === null ? meta.clips[0] : meta.clips.find((c) => c.name === clipName);
  if (!clip) throw new Error(`no clip ${clipName}`);
  // Format 1.11 records the placements (sidecar `placement`, and the GLBs'
  // node matrices); older bakes take them from the source beside the
  // container, and without it stand at the identity.
  const recorded = !!report.sidecar?.placement;
  let source = null;
  const loadSource = () => (source ??= gltf(`/bake/${encodeURIComponent(meta.source.file_name)}`).catch(() => {
    console.warn(`${meta.source.file_name} is not beside the container: placing the bake at the identity`);
    return null;
  }));
  const placed = new Map();
  const placement = (node) => ({ recorded, placed, node, source: loadSource });
  status.placement = recorded ? 'recorded' : 'source';
  const mask = params.get('look') === 'mask' ? 1 : 0;
  // The row flip each texture needs (its loader's), unless flip=0 (never:
  // docs/engines.md's recipe taken literally, wrong for EXR) or flip=1
  // (always: wrong for KTX2) says otherwise.
  const forced = params.get('flip');
  const rowFlip = (loaderFlipped) => (forced === '0' ? 0 : forced === '1' ? 1 : loaderFlipped);
  const state = new THREE.Vector4(clip.start_row, clip.start_row, 0, 0);
  const group = new THREE.Group();

  // The renderer first: KTX2Loader asks it what the GPU supports.
  const renderer = new THREE.WebGLRenderer({ antialias: !mask, preserveDrawingBuffer: true });
  renderer.setPixelRatio(1);
  renderer.setSize(innerWidth, innerHeight);

  if (pathName === 'bones') {
    const w = report.weights;
    const lods = lodChoice(report, 'weights_primitives');
    const files = new Map();
    const fileOf = (name) => {
      if (!files.has(name)) files.set(name, gltf(`/bake/${encodeURIComponent(name)}`));
      return files.get(name);
    };
    const sets = await Promise.all(meta.skins.map(async (skin) => {
      const t = meta.textures[skin.texture];
      const { texture, flipped, uint } = await bakeTexture(report, t.name, renderer);
      const [lo, hi] = sidecarTexture(report, t.name)?.bounds ?? [[0, 0, 0, 0], [0, 0, 0, 0]];
      const layout = t.precision === 'unorm16' ? 3 : ({ mat4: 0, mat3x4: 1, qts: 2 }[t.layout] ?? 0);
      return { texture, flipped, uint, lo: new THREE.Vector4(...lo), hi: new THREE.Vector4(...hi), height: t.height, layout, node: skin.mesh_nodes[0] };
    }));
    for (const [index, p] of w.primitives.entries()) {
      if (lods.skip.has(index)) continue;
      const file = await fileOf(lods.file.get(index) ?? w.mesh_file);
      const set = sets[p.skin];
      const loaded = await primitive(file, p.mesh_index, p.mesh_primitive);
      const geometry = loaded.geometry;
      const material = animate(drawnMaterial(loaded.material, mask, !!geometry.getAttribute('normal')), BONES_VERTEX, {
        rb_bones: { value: set.texture }, rb_bones_height: { value: set.height }, rb_layout: { value: set.layout },
        rb_bone_min: { value: set.lo }, rb_bone_max: { value: set.hi },
        rb_state: { value: state }, rb_row_flip: { value: rowFlip(set.flipped) },
      }, 'bones', set.uint ? { UINT_TEXTURES: 1 } : {});
      // Channels beyond the bake's `channels` are absent; a missing vertex
      // attribute reads (0, 0, 0, 1) in WebGL, a weight of 1: give them zeros.
      for (let c = 1; c <= 4; c++) {
        if (!geometry.getAttribute(`_rigbake_uv${c}`)) {
          geometry.setAttribute(`_rigbake_uv${c}`, new THREE.BufferAttribute(new Float32Array(geometry.getAttribute('position').count * 4), 4));
        }
      }
      const mesh = new THREE.Mesh(geometry, material);
      mesh.matrixAutoUpdate = false;
      mesh.matrix.copy(await standing(file, p.mesh_index, p.mesh_primitive, placement(set.node)));
      mesh.frustumCulled = false;
      group.add(mesh);
    }
  } else {
    const v = report.vat;
    const file = await gltf(`/bake/${encodeURIComponent(v.playback_file)}`);
    // The lookup UV's encoding: split_index since format 1.11; absent in
    // older sidecars, whose lookup UV is the normalised texel centre.
    const encoding = report.sidecar?.vat?.lookup_uv ?? 'texel_centre';
    const LOOKUP = { texel_centre: 0, split_index: 1 };
    if (!(encoding in LOOKUP)) throw new Error(`the sidecar's vat.lookup_uv is ${JSON.stringify(encoding)}; this page reads split_index and texel_centre`);
    // Textures by file: the primitives of an atlas share them.
    const loaded = new Map();
    const load = (name) => {
      if (!loaded.has(name)) loaded.set(name, bakeTexture(report, name, renderer));
      return loaded.get(name);
    };
    const lods = lodChoice(report, 'vat_primitives');
    for (const [index, p] of v.primitives.entries()) {
      if (lods.skip.has(index)) continue;
      const loadedMesh = await primitive(file, p.playback_mesh, 0);
      const geometry = loadedMesh.geometry.clone();
      // The lookup UV: the set the sidecar names (container 1.7+), else the
      // last one.
      const recorded = report.sidecar?.vat?.primitives?.[index]?.lookup_uv_set;
      const uvs = Object.keys(geometry.attributes).filter((k) => /^uv\d*$/.test(k)).sort((a, b) => Number(a.slice(2) || 0) - Number(b.slice(2) || 0));
      const lookup = recorded === null || recorded === undefined ? uvs[uvs.length - 1] : uvAttribute(recorded);
      if (!geometry.getAttribute(lookup)) throw new Error(`${v.playback_file}: meshes[${p.playback_mesh}] has no lookup UV set (${lookup})`);
      geometry.setAttribute('vat_uv', geometry.getAttribute(lookup));
      const pt = v.textures[p.positions], nt = p.normals === null ? null : v.textures[p.normals];
      refuseFold(report, pt);
      if (nt) refuseFold(report, nt);
      const positions = await load(pt.name);
      const normals = nt ? await load(nt.name) : null;
      const pd = vatDecoding(report, pt), nd = nt ? vatDecoding(report, nt) : pd;
      if (normals && normals.uint !== positions.uint) throw new Error(`${pt.name} and ${nt.name} differ in sample type`);
      const drawn = drawnMaterial(loadedMesh.material, mask, !!normals || !!geometry.getAttribute('normal'));
      const material = animate(drawn, VAT_VERTEX, {
        rb_positions: { value: positions.texture }, rb_normals: { value: (normals ?? positions).texture }, rb_has_normals: { value: normals ? 1 : 0 },
        rb_vat: { value: [p.width, p.bands, p.frames, p.height] }, rb_lookup: { value: LOOKUP[encoding] }, rb_state: { value: state }, rb_row_flip: { value: rowFlip(positions.flipped) },
        rb_position_encoding: { value: pd.encoding }, rb_position_min: { value: pd.lo }, rb_position_max: { value: pd.hi },
        rb_normal_encoding: { value: nd.encoding }, rb_normal_min: { value: nd.lo }, rb_normal_max: { value: nd.hi },
      }, 'vat', positions.uint ? { UINT_TEXTURES: 1 } : {});
      const mesh = new THREE.Mesh(geometry, material);
      mesh.matrixAutoUpdate = false;
      mesh.matrix.copy(await standing(file, p.playback_mesh, 0, placement(v.reference_node)));
      mesh.frustumCulled = false;
      group.add(mesh);
    }
  }

  const scene = new THREE.Scene();
  scene.background = new THREE.Color(mask ? 0x000000 : 0x26282e);
  // Root motion (docs/root-motion.md): a clip baked in place carries its
  // track in the sidecar, [x, y, z, yaw] per frame, the motion T(x, y, z)
  // Ry(yaw) in scene space. It moves `mover`, the parent of the meshes,
  // whose own matrices are the placements: world = mover (instance * root
  // motion) * placement * p.
  const mover = new THREE.Group();
  mover.matrixAutoUpdate = false;
  mover.add(group);
  scene.add(mover);
  // rigbake view's light: one directional light (from (0.4, 0.9, 0.5)) plus
  // ambient, 0.65 and 0.35 of a white surface's colour (three.js's
  // Lambert term divides by pi).
  const sun = new THREE.DirectionalLight(0xffffff, 0.65 * Math.PI);
  sun.position.set(0.4, 0.9, 0.5);
  scene.add(sun, new THREE.AmbientLight(0xffffff, 0.35 * Math.PI));
  document.body.appendChild(renderer.domElement);

  // The camera: the rigbake preview's (orthographic) when asked, else a
  // perspective view of the model's bounds.
  const num = (k, d) => (params.has(k) ? Number(params.get(k)) : d);
  const az = THREE.MathUtils.degToRad(num('az', 30)), el = THREE.MathUtils.degToRad(num('el', 20));
  const toward = new THREE.Vector3(Math.cos(el) * Math.sin(az), Math.sin(el), Math.cos(el) * Math.cos(az));
  let camera, target;
  if (params.get('cam') === 'ortho') {
    const h = num('half', 1);
    target = new THREE.Vector3(num('cx', 0), num('cy', 0), num('cz', 0));
    camera = new THREE.OrthographicCamera(-h, h, h, -h, 0.001 * h, 2000 * h);
    camera.position.copy(target).addScaledVector(toward, 1000 * h);
  } else {
    const box = new THREE.Box3();
    group.children.forEach((m) => { m.geometry.computeBoundingBox(); box.union(m.geometry.boundingBox.clone().applyMatrix4(m.matrix)); });
    target = box.getCenter(new THREE.Vector3());
    const size = box.getSize(new THREE.Vector3()).length() || 1;
    camera = new THREE.PerspectiveCamera(45, innerWidth / innerHeight, size * 0.01, size * 100);
    camera.position.copy(target).addScaledVector(toward, size * 1.6);
  }
  camera.up.set(0, 1, 0);
  camera.lookAt(target);

  // The recipe of docs/engines.md: frame = t * fps, f0 = floor, fraction,
  // f1 = f0 + 1 wrapping to 0 for looping clips, holding the last frame
  // otherwise. A still frame is row start_row + frame.
  const still = params.has('frame') ? Number(params.get('frame')) : null;
  // The clip's root-motion track, when it was baked in place. A playing
  // clip travels by it (motion=0: in place); a still frame is drawn in
  // place, as rigbake preview draws it, unless motion=1.
  const rootMotion = report.sidecar?.root_motion?.clips?.[meta.clips.indexOf(clip)];
  const track = rootMotion && rootMotion.mode !== 'keep' && rootMotion.track?.length ? rootMotion : null;
  const travels = !!track && (still === null ? params.get('motion') !== '0' : params.get('motion') === '1');
  status.motion = travels;
  const motionMatrix = (m) => new THREE.Matrix4().makeRotationY(m[3]).setPosition(m[0], m[1], m[2]);
  const lerp = (a, b, t) => a.map((v, k) => v + (b[k] - v) * t);
  // Whole loops gone by add the clip's `end` motion; a model that has
  // travelled farther than twice its size goes back to its start.
  const base = new THREE.Matrix4();
  const end = track ? motionMatrix(track.end) : null;
  let loopsApplied = 0;
  const modelSize = new THREE.Box3().setFromObject(group).getSize(new THREE.Vector3()).length() || 1;
  const started = performance.now();
  const tick = () => {
    let motion = null;
    if (still !== null) {
      state.set(clip.start_row + still, clip.start_row + still, 0, 0);
      if (travels) motion = motionMatrix(track.track[still]);
    } else {
      const frame = ((performance.now() - started) / 1000) * clip.fps;
      let f0 = Math.floor(frame), fraction = frame - f0;
      const loops = clip.looping ? Math.floor(f0 / clip.frames) : 0;
      if (clip.looping) f0 %= clip.frames;
      else if (f0 >= clip.frames - 1) { f0 = clip.frames - 1; fraction = 0; }
      const f1 = f0 + 1 < clip.frames ? f0 + 1 : clip.looping ? 0 : f0;
      state.set(clip.start_row + f0, clip.start_row + f1, fraction, 0);
      if (travels) {
        for (; loopsApplied < loops; loopsApplied++) {
          base.multiply(end);
          if (new THREE.Vector3().setFromMatrixPosition(base).length() > 2 * modelSize) base.identity();
        }
        // Across the loop's wrap the motion heads for `end`, not back to
        // frame 0.
        const to = f1 === 0 && f0 !== 0 ? track.end : track.track[f1];
        motion = base.clone().multiply(motionMatrix(lerp(track.track[f0], to, fraction)));
      }
    }
    if (motion) {
      mover.matrix.copy(motion);
      mover.matrixWorldNeedsUpdate = true;
    }
    renderer.render(scene, camera);
    if (!status.ready) {
      renderer.getContext().finish();
      status.ready = true;
    }
    requestAnimationFrame(tick);
  };
  tick();
}

main().catch((e) => {
  status.error = e.message ?? String(e);
  document.body.textContent = status.error;
});
