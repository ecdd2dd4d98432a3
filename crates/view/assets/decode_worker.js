// A module Web Worker that decodes EXR and 16-bit PNG textures off the
// page's main thread (viewer.js, `decodeTexture`). Messages in:
// { id: 0 } (a ping, answered { id: 0, ready: true } once the decoders have
// loaded) or { id, kind: 'exr' | 'png16', name, buffer } with the file's
// ArrayBuffer transferred; out: { id, image: { width, height, format, data } }
// with the decoded typed array's buffer transferred back (a Uint16Array of
// half bits for a half-float EXR, a Float32Array otherwise), or
// { id, error }.

import { decodeExr } from './exr.js';
import { decodePng16 } from './png.js';

self.onmessage = async (e) => {
  const { id, kind, name, buffer } = e.data;
  if (!buffer) {
    self.postMessage({ id, ready: true });
    return;
  }
  try {
    const image = kind === 'png16' ? await decodePng16(name, buffer) : await decodeExr(name, buffer);
    self.postMessage({ id, image }, [image.data.buffer]);
  } catch (err) {
    self.postMessage({ id, error: err?.message ?? String(err) });
  }
};
