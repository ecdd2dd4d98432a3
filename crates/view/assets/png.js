// Decoder for rigbake's 16-bit PNG VAT textures (formats/vat.md): RGB or
// RGBA, 16 bits per sample, big-endian, not interlaced. Returns RGBA floats
// q / 65535 (what a unorm16 texel fetch returns), row 0 = the first row in
// the file.

import { inflate } from './exr.js';

function fail(name, why) {
  throw new Error(`${name}: ${why}`);
}

function paeth(a, b, c) {
  const p = a + b - c;
  const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

export async function decodePng16(name, buffer) {
  const bytes = new Uint8Array(buffer);
  const view = new DataView(buffer);
  const sig = [137, 80, 78, 71, 13, 10, 26, 10];
  if (bytes.length < 8 || sig.some((v, i) => bytes[i] !== v)) fail(name, 'not a PNG file');
  let p = 8, width = 0, height = 0, colour = 0;
  const idat = [];
  while (p + 8 <= bytes.length) {
    const len = view.getUint32(p);
    const type = new TextDecoder().decode(bytes.subarray(p + 4, p + 8));
    if (p + 12 + len > bytes.length) fail(name, `chunk ${type} runs past the end of the file`);
    const body = bytes.subarray(p + 8, p + 8 + len);
    if (type === 'IHDR') {
      width = view.getUint32(p + 8);
      height = view.getUint32(p + 12);
      const depth = body[8];
      colour = body[9];
      if (depth !== 16 || (colour !== 2 && colour !== 6) || body[12] !== 0) fail(name, 'only 16-bit RGB or RGBA, non-interlaced PNGs');
    } else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
    p += 12 + len;
  }
  if (width < 1 || height < 1 || width > 16384 || height > 65536 || width * height > (1 << 27)) fail(name, `size ${width} x ${height} is out of range`);
  const channels = colour === 6 ? 4 : 3;
  const bpp = channels * 2;
  const stride = width * bpp;
  const raw = await inflate(new Uint8Array(await new Blob(idat).arrayBuffer()));
  if (raw.length !== height * (stride + 1)) fail(name, `image data holds ${raw.length} bytes, not ${height * (stride + 1)}`);
  const out = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = out.subarray(y * stride, (y + 1) * stride);
    const prev = y > 0 ? out.subarray((y - 1) * stride, y * stride) : new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? row[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      const pred = f === 0 ? 0 : f === 1 ? a : f === 2 ? b : f === 3 ? (a + b) >> 1 : f === 4 ? paeth(a, b, c) : -1;
      if (pred < 0) fail(name, `row ${y} has filter type ${f}`);
      row[i] = (src[i] + pred) & 0xff;
    }
  }
  const data = new Float32Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    for (let c = 0; c < 4; c++) {
      data[i * 4 + c] = c < channels ? ((out[i * bpp + c * 2] << 8) | out[i * bpp + c * 2 + 1]) / 65535 : 1;
    }
  }
  return { width, height, format: 'f32', data };
}
