// docs/engines.md's three.js recipe as runnable code: a rigbake bake played
// through three.js's own GLTFLoader and EXRLoader with a ShaderMaterial,
// for both playback paths.
//
// What it reads (served by serve.mjs): /bake.json, the `rigbake inspect
// --json` report of the container; /bake/<file>, the bake's textures and
// meshes; /bake/<source>, the source model, which places the bake (the rest
// pose global matrix of the node whose space the values are in).
//
// Orientation: EXRLoader puts file scanline y at texture row H - 1 - y
// (it flips), and DataTexture uploads with flipY false, so texelFetch(x, r)
// reads scanline H - 1 - r. rigbake's row r (row 0 = the first frame) is
// scanline r, so the shaders fetch texel row H - 1 - r (see `flip` below).
//
// URL parameters: path (bones | vat), clip, frame (a still frame; else the
// clip plays), look=mask (white silhouette on black), cam=ortho with az, el,
// cx, cy, cz, half (the rigbake preview's camera); else a perspective view;
// flip=0 leaves out the row flip, to show what goes wrong without it.

import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { EXRLoader } from 'three/addons/loaders/EXRLoader.js';

const params = new URLSearchParams(location.search);
const status = { ready: false, error: null };
window.rigbakeViewer = status;

const GLSL_COMMON = /* glsl */ `
precision highp float;
precision highp int;
precision highp sampler2D;
uniform vec4 state; // (row, next row, fraction, unused)
uniform int mask;
uniform int literal; // 1: skip the flip (docs/engines.md's recipe taken literally; wrong)
out vec3 v_normal;
// rigbake row r is EXRLoader texture row H - 1 - r.
int flip(int row, int height) { return literal == 1 ? row : height - 1 - row; }
`;

const BONES_VERTEX = GLSL_COMMON + /* glsl */ `
uniform sampler2D bones;
uniform int bones_height;
uniform int layout3x4;
in vec4 _rigbake_uv1;
in vec4 _rigbake_uv2;
in vec4 _rigbake_uv3;
in vec4 _rigbake_uv4;

mat4 bone(int j, int row) {
  int y = flip(row, bones_height);
  if (layout3x4 == 1) {
    vec4 r0 = texelFetch(bones, ivec2(3 * j, y), 0);
    vec4 r1 = texelFetch(bones, ivec2(3 * j + 1, y), 0);
    vec4 r2 = texelFetch(bones, ivec2(3 * j + 2, y), 0);
    return transpose(mat4(r0, r1, r2, vec4(0.0, 0.0, 0.0, 1.0)));
  }
  return mat4(texelFetch(bones, ivec2(4 * j, y), 0), texelFetch(bones, ivec2(4 * j + 1, y), 0),
              texelFetch(bones, ivec2(4 * j + 2, y), 0), texelFetch(bones, ivec2(4 * j + 3, y), 0));
}

mat4 blended(int row) {
  vec4 uv[4] = vec4[4](_rigbake_uv1, _rigbake_uv2, _rigbake_uv3, _rigbake_uv4);
  mat4 m = mat4(0.0);
  for (int c = 0; c < 4; c++) {
    if (uv[c].y != 0.0) m += uv[c].y * bone(int(uv[c].x), row);
    if (uv[c].w != 0.0) m += uv[c].w * bone(int(uv[c].z), row);
  }
  return m;
}

void main() {
  mat4 m0 = blended(int(state.x));
  mat4 m1 = blended(int(state.y));
  vec3 p = mix((m0 * vec4(position, 1.0)).xyz, (m1 * vec4(position, 1.0)).xyz, state.z);
  vec3 n = mix(mat3(m0) * normal, mat3(m1) * normal, state.z);
  v_normal = normalize(normalMatrix * n);
  gl_Position = projectionMatrix * modelViewMatrix * vec4(p, 1.0);
}
`;

const VAT_VERTEX = GLSL_COMMON + /* glsl */ `
uniform sampler2D positions;
uniform sampler2D normals;
uniform int has_normals;
uniform ivec4 vat; // width, bands, frames, height
in vec2 vat_uv;

ivec2 texel(int row) {
  int x = int(floor(vat_uv.x * float(vat.x)));
  int y = int(floor(vat_uv.y * float(vat.w))) + row * vat.y;
  return ivec2(x, flip(y, vat.w));
}

void main() {
  ivec2 t0 = texel(int(state.x)), t1 = texel(int(state.y));
  vec3 p = mix(texelFetch(positions, t0, 0).xyz, texelFetch(positions, t1, 0).xyz, state.z);
  vec3 n = has_normals == 1 ? mix(texelFetch(normals, t0, 0).xyz, texelFetch(normals, t1, 0).xyz, state.z) : normal;
  v_normal = normalize(normalMatrix * n);
  gl_Position = projectionMatrix * modelViewMatrix * vec4(p, 1.0);
}
`;

const FRAGMENT = /* glsl */ `
precision highp float;
uniform int mask;
in vec3 v_normal;
out vec4 colour;
void main() {
  if (mask == 1) { colour = vec4(1.0); return; }
  float lit = 0.35 + 0.65 * max(dot(normalize(v_normal), normalize(vec3(0.4, 0.9, 0.5))), 0.0);
  colour = vec4(vec3(0.85) * lit, 1.0);
}
`;

async function json(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.json();
}

function exr(url) {
  const loader = new EXRLoader().setDataType(THREE.FloatType);
  return new Promise((resolve, reject) => loader.load(url, (t) => {
    // Data, not colour: linear, point-sampled, no mipmaps.
    t.colorSpace = THREE.NoColorSpace;
    t.magFilter = t.minFilter = THREE.NearestFilter;
    t.generateMipmaps = false;
    t.needsUpdate = true;
    resolve(t);
  }, undefined, () => reject(new Error(`${url}: EXRLoader failed`))));
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

// Meshes of a rigbake GLB, by (mesh index, primitive index).
async function primitive(file, meshIndex, primitiveIndex) {
  const object = await file.parser.getDependency('mesh', meshIndex);
  const meshes = object.isMesh ? [object] : object.children.filter((c) => c.isMesh);
  const mesh = meshes[primitiveIndex];
  if (!mesh) throw new Error(`meshes[${meshIndex}].primitives[${primitiveIndex}] is missing`);
  return mesh.geometry;
}

async function main() {
  const report = await json('/bake.json');
  const meta = report.metadata;
  const pathName = params.get('path') ?? 'bones';
  const clipName = params.get('clip');
  const clip = clipName === null ? meta.clips[0] : meta.clips.find((c) => c.name === clipName);
  if (!clip) throw new Error(`no clip ${clipName}`);
  // Without the source beside the container, the bake stands at the identity.
  const source = await gltf(`/bake/${encodeURIComponent(meta.source.file_name)}`).catch(() => {
    console.warn(`${meta.source.file_name} is not beside the container: placing the bake at the identity`);
    return null;
  });
  const mask = params.get('look') === 'mask' ? 1 : 0;
  const literal = params.get('flip') === '0' ? 1 : 0;
  const state = new THREE.Vector4(clip.start_row, clip.start_row, 0, 0);
  const group = new THREE.Group();

  if (pathName === 'bones') {
    const w = report.weights;
    const file = await gltf(`/bake/${encodeURIComponent(w.mesh_file)}`);
    const sets = await Promise.all(meta.skins.map(async (skin) => {
      const t = meta.textures[skin.texture];
      return { texture: await exr(`/bake/${encodeURIComponent(t.name)}`), height: t.height, layout: t.layout, node: skin.mesh_nodes[0] };
    }));
    for (const p of w.primitives) {
      const set = sets[p.skin];
      const material = new THREE.ShaderMaterial({
        glslVersion: THREE.GLSL3, vertexShader: BONES_VERTEX, fragmentShader: FRAGMENT,
        uniforms: { bones: { value: set.texture }, bones_height: { value: set.height }, layout3x4: { value: set.layout === 'mat3x4' ? 1 : 0 }, state: { value: state }, mask: { value: mask }, literal: { value: literal } },
      });
      const geometry = await primitive(file, p.mesh_index, p.mesh_primitive);
      // Channels beyond the bake's `channels` are absent; a missing vertex
      // attribute reads (0, 0, 0, 1) in WebGL, a weight of 1: give them zeros.
      for (let c = 1; c <= 4; c++) {
        if (!geometry.getAttribute(`_rigbake_uv${c}`)) {
          geometry.setAttribute(`_rigbake_uv${c}`, new THREE.BufferAttribute(new Float32Array(geometry.getAttribute('position').count * 4), 4));
        }
      }
      const mesh = new THREE.Mesh(geometry, material);
      mesh.matrixAutoUpdate = false;
      mesh.matrix.copy(await restGlobal(source, set.node));
      mesh.frustumCulled = false;
      group.add(mesh);
    }
  } else {
    const v = report.vat;
    const file = await gltf(`/bake/${encodeURIComponent(v.playback_file)}`);
    const place = await restGlobal(source, v.reference_node);
    for (const p of v.primitives) {
      const geometry = (await primitive(file, p.playback_mesh, 0)).clone();
      const uvs = Object.keys(geometry.attributes).filter((k) => /^uv\d*$/.test(k)).sort((a, b) => Number(a.slice(2) || 0) - Number(b.slice(2) || 0));
      geometry.setAttribute('vat_uv', geometry.getAttribute(uvs[uvs.length - 1]));
      const positions = await exr(`/bake/${encodeURIComponent(v.textures[p.positions].name)}`);
      const normals = p.normals === null ? null : await exr(`/bake/${encodeURIComponent(v.textures[p.normals].name)}`);
      const material = new THREE.ShaderMaterial({
        glslVersion: THREE.GLSL3, vertexShader: VAT_VERTEX, fragmentShader: FRAGMENT,
        uniforms: { positions: { value: positions }, normals: { value: normals ?? positions }, has_normals: { value: normals ? 1 : 0 }, vat: { value: [p.width, p.bands, p.frames, p.height] }, state: { value: state }, mask: { value: mask }, literal: { value: literal } },
      });
      const mesh = new THREE.Mesh(geometry, material);
      mesh.matrixAutoUpdate = false;
      mesh.matrix.copy(place);
      mesh.frustumCulled = false;
      group.add(mesh);
    }
  }

  const scene = new THREE.Scene();
  scene.background = new THREE.Color(mask ? 0x000000 : 0x26282e);
  scene.add(group);
  const renderer = new THREE.WebGLRenderer({ antialias: !mask, preserveDrawingBuffer: true });
  renderer.setPixelRatio(1);
  renderer.setSize(innerWidth, innerHeight);
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
  const started = performance.now();
  const tick = () => {
    if (still !== null) {
      state.set(clip.start_row + still, clip.start_row + still, 0, 0);
    } else {
      const frame = ((performance.now() - started) / 1000) * clip.fps;
      let f0 = Math.floor(frame), fraction = frame - f0;
      if (clip.looping) f0 %= clip.frames;
      else if (f0 >= clip.frames - 1) { f0 = clip.frames - 1; fraction = 0; }
      const f1 = f0 + 1 < clip.frames ? f0 + 1 : clip.looping ? 0 : f0;
      state.set(clip.start_row + f0, clip.start_row + f1, fraction, 0);
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
