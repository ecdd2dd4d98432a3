// The chunks of a binary glTF (GLB) file: its JSON (parsed) and its first
// BIN chunk, or null when `bytes` (a Node Buffer) is not a GLB. Shared by
// oracle.mjs and tools/bench/threejs_vat.mjs.
export function glbChunks(bytes) {
    if (bytes.length < 12 || bytes.readUInt32LE(0) !== 0x46546c67) return null;
    let json = null;
    let bin = null;
    let at = 12;
    while (at + 8 <= bytes.length) {
        const length = bytes.readUInt32LE(at);
        const type = bytes.readUInt32LE(at + 4);
        const body = bytes.subarray(at + 8, at + 8 + length);
        if (type === 0x4e4f534a) json = JSON.parse(body.toString("utf8"));
        else if (type === 0x004e4942 && bin === null) bin = body;
        at += 8 + length;
    }
    return { json, bin };
}
