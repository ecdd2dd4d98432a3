// Header parsers for the GPU-ready texture files rigbake writes with
// `--texture-container ktx2|dds` (formats/textures.md, "Texture containers:
// KTX2 and DDS"): RGBA texels, little-endian, row 0 first, one level, of
// one sample type (32-bit float, half float, 16-bit UNORM, or the VAT's
// 8-bit and RGB10A2 UNORM), a plain 2D
// texture or the array layers of a folded VAT stream's pages.
//
// Nothing is decoded: the parsers check the header and return the texel
// bytes as a typed-array view of the file's own buffer (Float32Array for
// f32, Uint16Array for f16 and unorm16, Uint8Array for unorm8, Uint32Array
// for unorm10's packed words), which the page hands to WebGL as
// they are. Anything else (a supercompressed KTX2, another format, more than
// one level, a cube map, a 3D texture, data past the end of the file) is
// refused with a message naming the file, the field, the value found and
// the value expected.
//
// `expected` (optional) holds what the records say: { width, height,
// layers (the page count; 1 for a plain texture), format, by (who says it,
// for the message) }; each is checked as soon as its header field is read,
// so a wrong size is reported as that field, not as a data length.

export const KTX2_IDENTIFIER = [0xab, 0x4b, 0x54, 0x58, 0x20, 0x32, 0x30, 0xbb, 0x0d, 0x0a, 0x1a, 0x0a];
const DDS_MAGIC = 0x20534444; // "DDS "
const DX10 = 0x30315844; // "DX10"

// Sample types: bytes per texel and the matching KTX2 and DDS format codes.
export const FORMATS = {
  f32: { texelBytes: 16, vkFormat: 109, dxgiFormat: 2, name: 'R32G32B32A32 float' },
  f16: { texelBytes: 8, vkFormat: 97, dxgiFormat: 10, name: 'R16G16B16A16 half float' },
  unorm16: { texelBytes: 8, vkFormat: 91, dxgiFormat: 11, name: 'R16G16B16A16 UNORM' },
  unorm8: { texelBytes: 4, vkFormat: 37, dxgiFormat: 28, name: 'R8G8B8A8 UNORM' },
  unorm10: { texelBytes: 4, vkFormat: 64, dxgiFormat: 24, name: 'A2B10G10R10 UNORM (packed 32-bit)' },
};
// KTX2 typeSize of each sample type (the packed word for unorm10).
const TYPE_SIZE = { f32: 4, f16: 2, unorm16: 2, unorm8: 1, unorm10: 4 };
const TYPED = { f32: Float32Array, f16: Uint16Array, unorm16: Uint16Array, unorm8: Uint8Array, unorm10: Uint32Array };
const BY_VK = Object.fromEntries(Object.entries(FORMATS).map(([k, f]) => [f.vkFormat, k]));
const BY_DXGI = Object.fromEntries(Object.entries(FORMATS).map(([k, f]) => [f.dxgiFormat, k]));

// What the page says about Zstandard-supercompressed KTX2 files.
export const ZSTD_ADVICE = 'the viewer plays uncompressed KTX2 and DDS only: rebake with --texture-container ktx2 (or dds)';

// Largest texel data a file may describe (formats/textures.md bounds the
// decoded size at 2 GiB).
const MAX_BYTES = 2 ** 31;

function fail(name, why) {
  throw new Error(`${name}: ${why}`);
}

// Which GPU container `buffer` (an ArrayBuffer) is: 'ktx2', 'dds' or null.
export function sniff(buffer) {
  const bytes = new Uint8Array(buffer, 0, Math.min(buffer.byteLength, 12));
  if (bytes.length === 12 && KTX2_IDENTIFIER.every((v, i) => bytes[i] === v)) return 'ktx2';
  if (bytes.length >= 4 && new DataView(buffer).getUint32(0, true) === DDS_MAGIC) return 'dds';
  return null;
}

// A typed view of `length` bytes of `buffer` at `offset`: the file's own
// memory when the offset is aligned to the sample size, else a copy.
function texels(buffer, offset, length, format) {
  const Type = TYPED[format];
  if (offset % Type.BYTES_PER_ELEMENT === 0) return new Type(buffer, offset, length / Type.BYTES_PER_ELEMENT);
  return new Type(buffer.slice(offset, offset + length));
}

function expectedBytes(name, width, height, layers, format) {
  const bytes = width * height * Math.max(layers, 1) * FORMATS[format].texelBytes;
  if (bytes > MAX_BYTES) fail(name, `${width} x ${height} x ${Math.max(layers, 1)} texels of ${FORMATS[format].name} exceed 2 GiB`);
  return bytes;
}

// Checks header field `field` (holding `found`) against `expected[key]`.
function against(name, expected, key, field, found, shown = found) {
  if (!expected || expected[key] === undefined || expected[key] === null) return;
  const want = expected[key];
  const ok = key === 'layers' ? Math.max(found, 1) === want : found === want;
  if (ok) return;
  const says = key === 'format' ? `encoding ${want} (${FORMATS[want].name})` : key === 'layers' ? (want > 1 ? `${want} pages (array layers)` : 'a plain 2D texture') : `${key} ${want}`;
  fail(name, `header field ${field} is ${shown}, but ${expected.by ?? 'the record'} says ${says}`);
}

// Parses a KTX 2.0 file: { width, height, layers (0: a 2D texture),
// format ('f32' | 'f16' | 'unorm16' | 'unorm8' | 'unorm10'), container:
// 'ktx2', data }.
export function parseKtx2(name, buffer, expected = null) {
  if (sniff(buffer) !== 'ktx2') fail(name, 'not a KTX2 file (bad identifier)');
  if (buffer.byteLength < 104) fail(name, `the file is ${buffer.byteLength} bytes, shorter than a KTX2 header (104)`);
  const v = new DataView(buffer);
  const u32 = (o) => v.getUint32(o, true);
  const u64 = (o) => {
    const x = v.getBigUint64(o, true);
    if (x > BigInt(Number.MAX_SAFE_INTEGER)) fail(name, `the 64-bit field at byte ${o} is ${x}, past any file`);
    return Number(x);
  };
  const field = (label, found, expected, ok = found === expected) => {
    if (!ok) fail(name, `header field ${label} is ${found}, expected ${expected}`);
  };
  const vkFormat = u32(12);
  const format = BY_VK[vkFormat];
  if (!format) fail(name, `header field vkFormat is ${vkFormat}, expected 109 (R32G32B32A32_SFLOAT), 97 (R16G16B16A16_SFLOAT), 91 (R16G16B16A16_UNORM), 37 (R8G8B8A8_UNORM) or 64 (A2B10G10R10_UNORM_PACK32)`);
  against(name, expected, 'format', 'vkFormat', format, `${vkFormat} (${FORMATS[format].name})`);
  field('typeSize', u32(16), TYPE_SIZE[format]);
  const width = u32(20), height = u32(24);
  if (width < 1 || height < 1) fail(name, `header fields pixelWidth x pixelHeight are ${width} x ${height}, expected at least 1 x 1`);
  against(name, expected, 'width', 'pixelWidth', width);
  against(name, expected, 'height', 'pixelHeight', height);
  field('pixelDepth', u32(28), 0);
  const layers = u32(32);
  against(name, expected, 'layers', 'layerCount', layers);
  field('faceCount', u32(36), 1);
  field('levelCount', u32(40), 1);
  const scheme = u32(44);
  if (scheme === 2) fail(name, `header field supercompressionScheme is 2 (Zstandard): ${ZSTD_ADVICE}`);
  field('supercompressionScheme', scheme, '0 (none)', scheme === 0);
  const offset = u64(80), length = u64(88), uncompressed = u64(96);
  const bytes = expectedBytes(name, width, height, layers, format);
  field('levels[0].byteLength', length, bytes);
  field('levels[0].uncompressedByteLength', uncompressed, bytes);
  if (offset < 104 || offset + length > buffer.byteLength) {
    fail(name, `header field levels[0].byteOffset is ${offset}: ${length} bytes from there run past the end of the file (${buffer.byteLength} bytes)`);
  }
  return { width, height, layers, format, container: 'ktx2', data: texels(buffer, offset, length, format) };
}

// Parses a DDS file with a DX10 header (the only kind rigbake writes):
// { width, height, layers (arraySize), format, container: 'dds', data }.
export function parseDds(name, buffer, expected = null) {
  if (sniff(buffer) !== 'dds') fail(name, 'not a DDS file (bad magic number)');
  if (buffer.byteLength < 148) fail(name, `the file is ${buffer.byteLength} bytes, shorter than a DDS header with its DX10 extension (148)`);
  const v = new DataView(buffer);
  const u32 = (o) => v.getUint32(o, true);
  const field = (label, found, expected, ok = found === expected) => {
    if (!ok) fail(name, `header field ${label} is ${found}, expected ${expected}`);
  };
  field('dwSize', u32(4), 124);
  const height = u32(12), width = u32(16);
  if (width < 1 || height < 1) fail(name, `header fields dwWidth x dwHeight are ${width} x ${height}, expected at least 1 x 1`);
  against(name, expected, 'width', 'dwWidth', width);
  against(name, expected, 'height', 'dwHeight', height);
  const depth = u32(24);
  field('dwDepth', depth, '0 or 1', depth <= 1);
  const mips = u32(28);
  field('dwMipMapCount', mips, '0 or 1', mips <= 1);
  field('ddspf.dwSize', u32(76), 32);
  const pfFlags = u32(80);
  field('ddspf.dwFlags', `0x${pfFlags.toString(16)}`, '4 (DDPF_FOURCC)', (pfFlags & 4) !== 0);
  const fourCC = u32(84);
  field('ddspf.dwFourCC', JSON.stringify(String.fromCharCode(fourCC & 255, (fourCC >> 8) & 255, (fourCC >> 16) & 255, fourCC >>> 24)), '"DX10"', fourCC === DX10);
  const dxgiFormat = u32(128);
  const format = BY_DXGI[dxgiFormat];
  if (!format) fail(name, `header field dxgiFormat is ${dxgiFormat}, expected 2 (R32G32B32A32_FLOAT), 10 (R16G16B16A16_FLOAT), 11 (R16G16B16A16_UNORM), 28 (R8G8B8A8_UNORM) or 24 (R10G10B10A2_UNORM)`);
  against(name, expected, 'format', 'dxgiFormat', format, `${dxgiFormat} (${FORMATS[format].name})`);
  field('resourceDimension', u32(132), 3);
  const miscFlag = u32(136);
  field('miscFlag', `0x${miscFlag.toString(16)}`, '0 (not a cube map)', (miscFlag & 4) === 0);
  const layers = u32(140);
  if (layers < 1) fail(name, 'header field arraySize is 0, expected at least 1');
  against(name, expected, 'layers', 'arraySize', layers);
  const bytes = expectedBytes(name, width, height, layers, format);
  if (148 + bytes > buffer.byteLength) fail(name, `${width} x ${height} x ${layers} texels of ${FORMATS[format].name} need ${bytes} bytes after the header; the file holds ${buffer.byteLength - 148}`);
  return { width, height, layers, format, container: 'dds', data: texels(buffer, 148, bytes, format) };
}

// Parses either container, by its first bytes.
export function parseGpuTexture(name, buffer, expected = null) {
  const kind = sniff(buffer);
  if (kind === 'ktx2') return parseKtx2(name, buffer, expected);
  if (kind === 'dds') return parseDds(name, buffer, expected);
  return fail(name, 'neither a KTX2 nor a DDS file');
}

// The container and sample type of a sidecar `encoding` (`ktx2_f16`,
// `dds_unorm16`, ...), or null for EXR and PNG.
export function gpuEncoding(encoding) {
  const m = /^(ktx2|dds)_(f32|f16|unorm16|unorm8|unorm10)$/.exec(encoding ?? '');
  return m ? { container: m[1], format: m[2] } : null;
}
