// Decoder for the EXR files rigbake writes (formats/textures.md,
// formats/vat.md): single-part scanline images, channels of one sample type
// (half or float), compression none, ZIPS or ZIP. Returns RGBA samples of
// the file's type (half floats as their 16 bits, floats as floats) with
// texture row y = file scanline y (scanline 0, the first frame, is row 0;
// nothing is flipped). Anything else is rejected with a message naming the
// file and the reason.

const COMPRESSION = { 0: 'none', 2: 'zips', 3: 'zip' };

function fail(name, why) {
  throw new Error(`${name}: ${why}`);
}

export function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

export async function inflate(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// OpenEXR's ZIP post-processing: undo the byte predictor, then interleave
// the two halves back.
function unpredict(t) {
  for (let i = 1; i < t.length; i++) t[i] = (t[i - 1] + t[i] - 128) & 0xff;
  const out = new Uint8Array(t.length);
  const half = (t.length + 1) >> 1;
  for (let i = 0; i < t.length; i++) out[i] = i % 2 === 0 ? t[i >> 1] : t[half + (i >> 1)];
  return out;
}

function readHeader(name, view, bytes) {
  if (view.byteLength < 8 || view.getUint32(0, true) !== 20000630) fail(name, 'not an EXR file (bad magic number)');
  const flags = view.getUint32(4, true);
  if ((flags & 0xff) !== 2) fail(name, `EXR version ${flags & 0xff} (only 2)`);
  if (flags & 0x1e00) fail(name, 'tiled, deep or multi-part EXR (only single-part scanline images)');
  let p = 8;
  const cstr = () => {
    const start = p;
    while (p < bytes.length && bytes[p] !== 0) p++;
    if (p >= bytes.length) fail(name, 'truncated header');
    return new TextDecoder().decode(bytes.subarray(start, p++));
  };
  const header = {};
  for (;;) {
    const attr = cstr();
    if (attr === '') break;
    const type = cstr();
    if (p + 4 > bytes.length) fail(name, 'truncated header');
    const size = view.getInt32(p, true);
    p += 4;
    if (size < 0 || p + size > bytes.length) fail(name, `attribute ${attr} runs past the end of the file`);
    const at = p;
    if (type === 'chlist') {
      const channels = [];
      let q = at;
      while (q < at + size && bytes[q] !== 0) {
        const s = q;
        while (q < at + size && bytes[q] !== 0) q++;
        const cname = new TextDecoder().decode(bytes.subarray(s, q++));
        channels.push({ name: cname, type: view.getInt32(q, true) });
        q += 16;
      }
      header.channels = channels;
    } else if (type === 'compression') {
      header.compression = bytes[at];
    } else if (type === 'box2i' && attr === 'dataWindow') {
      header.dataWindow = [0, 4, 8, 12].map((o) => view.getInt32(at + o, true));
    } else if (type === 'lineOrder') {
      header.lineOrder = bytes[at];
    }
    p = at + size;
  }
  header.end = p;
  return header;
}

// Decodes `buffer` (an ArrayBuffer) into { width, height, format, data },
// row 0 first: half-float files as format 'f16' with data a Uint16Array of
// RGBA half bits (as they are in the file, for an RGBA16F / HALF_FLOAT
// upload), float files as format 'f32' with data a Float32Array RGBA. A
// missing A channel is 1.
export async function decodeExr(name, buffer) {
  const bytes = new Uint8Array(buffer);
  const view = new DataView(buffer);
  const h = readHeader(name, view, bytes);
  if (!h.channels || !h.dataWindow || h.compression === undefined) fail(name, 'header lacks channels, compression or dataWindow');
  const compression = COMPRESSION[h.compression];
  if (!compression) fail(name, `compression ${h.compression} is not supported (none, ZIPS, ZIP)`);
  const [x0, y0, x1, y1] = h.dataWindow;
  const width = x1 - x0 + 1;
  const height = y1 - y0 + 1;
  if (width < 1 || height < 1 || width > 16384 || height > 65536 || width * height > (1 << 27)) fail(name, `size ${width} x ${height} is out of range`);
  const types = new Set(h.channels.map((c) => c.type));
  if (types.size !== 1 || ![1, 2].includes(h.channels[0].type)) fail(name, 'channels must all be half or all float');
  const sampleBytes = h.channels[0].type === 1 ? 2 : 4;
  const slot = { R: 0, G: 1, B: 2, A: 3 };
  const lineBytes = width * sampleBytes * h.channels.length;
  const linesPerBlock = compression === 'zip' ? 16 : 1;
  const blocks = Math.ceil(height / linesPerBlock);
  const half = sampleBytes === 2;
  const data = half ? new Uint16Array(width * height * 4) : new Float32Array(width * height * 4);
  if (!h.channels.some((c) => c.name === 'A')) for (let i = 3; i < data.length; i += 4) data[i] = half ? 0x3c00 : 1;
  let table = h.end;
  if (table + blocks * 8 > bytes.length) fail(name, 'truncated offset table');
  for (let b = 0; b < blocks; b++) {
    const offset = Number(view.getBigUint64(table + b * 8, true));
    if (offset + 8 > bytes.length) fail(name, `block ${b} starts past the end of the file`);
    const y = view.getInt32(offset, true) - y0;
    const size = view.getInt32(offset + 4, true);
    if (size < 0 || offset + 8 + size > bytes.length) fail(name, `block ${b} runs past the end of the file`);
    const lines = Math.min(linesPerBlock, height - y);
    if (y < 0 || lines < 1) fail(name, `block ${b} has scanline ${y + y0} outside the data window`);
    const raw = lines * lineBytes;
    let chunk = bytes.subarray(offset + 8, offset + 8 + size);
    if (compression !== 'none' && size < raw) chunk = unpredict(await inflate(chunk));
    if (chunk.length !== raw) fail(name, `block ${b} holds ${chunk.length} bytes, not ${raw}`);
    const cv = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (let l = 0; l < lines; l++) {
      const row = y + l;
      h.channels.forEach((c, ci) => {
        const s = slot[c.name];
        const base = l * lineBytes + ci * width * sampleBytes;
        if (s === undefined) return;
        const at = row * width * 4 + s;
        if (half) for (let x = 0; x < width; x++) data[at + x * 4] = cv.getUint16(base + x * 2, true);
        else for (let x = 0; x < width; x++) data[at + x * 4] = cv.getFloat32(base + x * 4, true);
      });
    }
  }
  return { width, height, format: half ? 'f16' : 'f32', data };
}
