// Reader for the meshes rigbake writes (.weights.glb, .vat.glb): the JSON
// and BIN chunks, accessors (float, normalized or integer components, with
// strides), primitives, and base-colour materials with their images.

function fail(name, why) {
  throw new Error(`${name}: ${why}`);
}

const COMPONENTS = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT4: 16 };
const TYPES = {
  5120: [Int8Array, 1, 127], 5121: [Uint8Array, 1, 255], 5122: [Int16Array, 2, 32767],
  5123: [Uint16Array, 2, 65535], 5125: [Uint32Array, 4, 0], 5126: [Float32Array, 4, 0],
};

export function parseGlb(name, buffer) {
  const view = new DataView(buffer);
  if (buffer.byteLength < 20 || view.getUint32(0, true) !== 0x46546c67) fail(name, 'not a GLB file');
  if (view.getUint32(4, true) !== 2) fail(name, 'GLB version is not 2');
  let p = 12, json = null, bin = null;
  while (p + 8 <= buffer.byteLength) {
    const len = view.getUint32(p, true), type = view.getUint32(p + 4, true);
    if (p + 8 + len > buffer.byteLength) fail(name, 'a chunk runs past the end of the file');
    if (type === 0x4e4f534a) json = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, p + 8, len)));
    else if (type === 0x004e4942) bin = new Uint8Array(buffer, p + 8, len);
    p += 8 + len;
  }
  if (!json) fail(name, 'no JSON chunk');
  return { name, json, bin };
}

function viewBytes(glb, index) {
  const bv = glb.json.bufferViews?.[index];
  if (!bv || !glb.bin || (bv.buffer ?? 0) !== 0) fail(glb.name, `bufferViews[${index}] is missing or not in the BIN chunk`);
  const start = bv.byteOffset ?? 0;
  if (start + bv.byteLength > glb.bin.length) fail(glb.name, `bufferViews[${index}] runs past the BIN chunk`);
  return { bytes: glb.bin.subarray(start, start + bv.byteLength), stride: bv.byteStride };
}

// Accessor `index` as a Float32Array (or Uint32Array for indices) of
// count * components values.
export function readAccessor(glb, index, asIndices = false) {
  const a = glb.json.accessors?.[index];
  if (!a) fail(glb.name, `accessors[${index}] is missing`);
  const n = COMPONENTS[a.type];
  const t = TYPES[a.componentType];
  if (!n || !t) fail(glb.name, `accessors[${index}] has an unsupported type`);
  const out = asIndices ? new Uint32Array(a.count * n) : new Float32Array(a.count * n);
  if (a.bufferView === undefined) return out;
  const { bytes, stride } = viewBytes(glb, a.bufferView);
  const step = stride || n * t[1];
  const base = a.byteOffset ?? 0;
  if (a.count > 0 && base + (a.count - 1) * step + n * t[1] > bytes.length) fail(glb.name, `accessors[${index}] runs past its buffer view`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const get = {
    5120: (o) => dv.getInt8(o), 5121: (o) => dv.getUint8(o), 5122: (o) => dv.getInt16(o, true),
    5123: (o) => dv.getUint16(o, true), 5125: (o) => dv.getUint32(o, true), 5126: (o) => dv.getFloat32(o, true),
  }[a.componentType];
  const scale = a.normalized && t[2] ? t[2] : 0;
  for (let i = 0; i < a.count; i++) {
    for (let c = 0; c < n; c++) {
      let v = get(base + i * step + c * t[1]);
      if (scale) v = Math.max(v / scale, -1);
      out[i * n + c] = v;
    }
  }
  return out;
}

// Image `index` as an ImageBitmap, or null when it cannot be decoded.
export async function readImage(glb, index) {
  const img = glb.json.images?.[index];
  if (!img || img.bufferView === undefined) return null;
  try {
    const { bytes } = viewBytes(glb, img.bufferView);
    const blob = new Blob([bytes], { type: img.mimeType || 'image/png' });
    return await createImageBitmap(blob, { imageOrientation: 'none', colorSpaceConversion: 'none' });
  } catch (e) {
    console.warn(`${glb.name}: images[${index}]: ${e.message}`);
    return null;
  }
}

// The base colour of material `index`: { factor: [r, g, b, a], image,
// texCoord } (image null when the material has no texture).
export function baseColour(glb, index) {
  const m = index === undefined ? undefined : glb.json.materials?.[index];
  const pbr = m?.pbrMetallicRoughness ?? {};
  const factor = pbr.baseColorFactor ?? [1, 1, 1, 1];
  const tex = pbr.baseColorTexture;
  const source = tex ? glb.json.textures?.[tex.index]?.source : undefined;
  return { factor, image: source, texCoord: tex?.texCoord ?? 0, name: m?.name ?? null };
}
