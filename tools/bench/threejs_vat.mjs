// The three.js side of the issue-20 comparison (tools/bench/issue20.sh):
// the same work as `rigbake vat MODEL --normals`, done by three.js on the
// CPU in Node. Every clip is sampled at 30 frames per second
// (frames = floor(duration * 30 + 1e-4) + 1, frame i at min(i / 30,
// duration), as rigbake samples); at each frame every skinned primitive's
// vertices are skinned with three's own SkinnedMesh.applyBoneTransform
// (positions) and their normals with the inverse transpose of the blended
// skin matrix (Matrix3.getNormalMatrix, rigbake's default normal
// convention), blended from the bone matrices three computes once per
// frame for its shader (Skeleton.update: bone.matrixWorld * boneInverse),
// wrapped in bindMatrixInverse and bindMatrix as the shader does; the results
// (float32 positions and normals) are written to OUT frame by frame.
//
// Usage: node threejs_vat.mjs MODEL.glb OUT.bin
// Prints one JSON line: {"seconds", "load_seconds", "vertex_frames", "bytes"}
// where `seconds` is the skinning and writing time (after loading).
// Exit codes: 0 success; 3 three.js missing (npm ci --prefix tools/node);
// 2 usage or input error.
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { glbChunks } from "../node/glb_chunks.mjs";

const [modelPath, outPath] = process.argv.slice(2);
if (!modelPath || !outPath) {
    console.error("usage: node threejs_vat.mjs MODEL.glb OUT.bin");
    process.exit(2);
}

// three is installed in tools/node (npm ci --prefix tools/node).
const nodeDir = join(dirname(fileURLToPath(import.meta.url)), "..", "node");
let THREE, GLTFLoader;
try {
    const three = join(nodeDir, "node_modules", "three");
    THREE = await import(pathToFileURL(join(three, "build", "three.module.js")).href);
    ({ GLTFLoader } = await import(pathToFileURL(join(three, "examples", "jsm", "loaders", "GLTFLoader.js")).href));
} catch (e) {
    console.error(`three is not installed (npm ci --prefix tools/node): ${e.message}`);
    process.exit(3);
}

const started = performance.now();
const bytes = readFileSync(modelPath);
const parsed = glbChunks(bytes);
if (!parsed) {
    console.error(`${modelPath}: not a GLB`);
    process.exit(2);
}
// Images, textures and materials do not move vertices, and Node has no
// image decoder: drop them from the JSON chunk.
const { json, bin } = parsed;
if (!json) {
    console.error(`${modelPath}: GLB without a JSON chunk`);
    process.exit(2);
}
for (const key of ["images", "textures", "samplers", "materials"]) delete json[key];
for (const mesh of json.meshes ?? []) for (const p of mesh.primitives ?? []) delete p.material;
let text = Buffer.from(JSON.stringify(json), "utf8");
text = Buffer.concat([text, Buffer.alloc((4 - (text.length % 4)) % 4, 0x20)]);
const chunks = [text];
const glb = Buffer.alloc(12 + 8 + text.length + (bin ? 8 + bin.length : 0));
glb.writeUInt32LE(0x46546c67, 0);
glb.writeUInt32LE(2, 4);
glb.writeUInt32LE(glb.length, 8);
glb.writeUInt32LE(text.length, 12);
glb.writeUInt32LE(0x4e4f534a, 16);
chunks[0].copy(glb, 20);
if (bin) {
    glb.writeUInt32LE(bin.length, 20 + text.length);
    glb.writeUInt32LE(0x004e4942, 24 + text.length);
    bin.copy(glb, 28 + text.length);
}
const gltf = await new GLTFLoader().parseAsync(glb.buffer.slice(glb.byteOffset, glb.byteOffset + glb.length), "");
const scene = gltf.scene;
const skinned = [];
scene.traverse((o) => {
    if (o.isSkinnedMesh) skinned.push(o);
});
if (skinned.length === 0 || gltf.animations.length === 0) {
    console.error(`${modelPath}: no skinned mesh or no animation`);
    process.exit(2);
}
const loadSeconds = (performance.now() - started) / 1000;

const FPS = 30;
const t0 = performance.now();
const out = openSync(outPath, "w");
const buffers = skinned.map((m) => new Float32Array(m.geometry.attributes.position.count * 6));
const position = new THREE.Vector3();
const normal = new THREE.Vector3();
const blended = new THREE.Matrix4();
const normalMatrix = new THREE.Matrix3();
let vertexFrames = 0;
let written = 0;
for (const clip of gltf.animations) {
    const mixer = new THREE.AnimationMixer(scene);
    const action = mixer.clipAction(clip);
    action.setLoop(THREE.LoopOnce, 1);
    action.clampWhenFinished = true;
    action.play();
    const frames = Math.floor(clip.duration * FPS + 1e-4) + 1;
    for (let f = 0; f < frames; f++) {
        action.time = Math.min(f / FPS, clip.duration);
        mixer.update(0);
        scene.updateMatrixWorld(true);
        for (const [k, mesh] of skinned.entries()) {
            const geometry = mesh.geometry;
            const normals = geometry.attributes.normal;
            if (!normals) {
                console.error(`${modelPath}: a skinned primitive has no normals`);
                process.exit(2);
            }
            const skinIndex = geometry.attributes.skinIndex;
            const skinWeight = geometry.attributes.skinWeight;
            // bone.matrixWorld * boneInverse per bone, once per frame (what
            // three uploads for its shader).
            mesh.skeleton.update();
            const { boneMatrices } = mesh.skeleton;
            const buf = buffers[k];
            const count = geometry.attributes.position.count;
            for (let i = 0; i < count; i++) {
                mesh.getVertexPosition(i, position);
                mesh.applyBoneTransform(i, position);
                // The blended skin matrix of the vertex, as three's shader
                // builds it, then the inverse transpose of its upper 3x3.
                blended.elements.fill(0);
                for (let c = 0; c < 4; c++) {
                    const w = skinWeight.getComponent(i, c);
                    if (w === 0) continue;
                    const j = skinIndex.getComponent(i, c) * 16;
                    const b = blended.elements;
                    for (let n = 0; n < 16; n++) b[n] += w * boneMatrices[j + n];
                }
                blended.premultiply(mesh.bindMatrixInverse).multiply(mesh.bindMatrix);
                normal.fromBufferAttribute(normals, i);
                normal.applyNormalMatrix(normalMatrix.getNormalMatrix(blended));
                buf[i * 6] = position.x;
                buf[i * 6 + 1] = position.y;
                buf[i * 6 + 2] = position.z;
                buf[i * 6 + 3] = normal.x;
                buf[i * 6 + 4] = normal.y;
                buf[i * 6 + 5] = normal.z;
            }
            written += writeSync(out, buf);
            vertexFrames += count;
        }
    }
}
closeSync(out);
const seconds = (performance.now() - t0) / 1000;
console.log(JSON.stringify({ seconds, load_seconds: loadSeconds, vertex_frames: vertexFrames, bytes: written }));
