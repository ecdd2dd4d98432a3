// An independent evaluator for rigbake's bakes: three.js loads a glTF/GLB
// with its own GLTFLoader, plays clips with its AnimationMixer, and reports
// where every vertex of every primitive is, at requested clip times, as
// three.js's CPU skinning (SkinnedMesh.applyBoneTransform) and morphing
// (Mesh.getVertexPosition) put it. No rigbake code is involved.
//
// Usage: node oracle.mjs REQUEST.json OUT.bin
//
// REQUEST.json: {"model": "/path/model.glb",
//                "samples": [{"clip": "Walk" | null, "time": 0.5}, ...]}
//   `clip` is a glTF animation name (or `clip<i>` for an unnamed animation
//   i, as rigbake names it); null means the rest pose. `time` is seconds
//   from the animation's time 0 (the glTF key times, not shifted).
//
// OUT.bin: "RBORACL1", u32 LE header length, the header (UTF-8 JSON), zero
// padding to a multiple of 8 bytes, then per sample, as little-endian f64:
// the world matrix of every glTF node (16 values, column-major; identity
// for nodes outside the default scene) and then, per primitive in header
// order, `vertices * 3` world-space positions.
//
// Header: {"three": REVISION, "animations": [{"name", "duration"}],
// "meshes": [name], "nodes": [{"name", "mesh", "in_scene"}], "primitives":
// [{"node", "mesh", "primitive", "vertices", "skinned", "influence_sets",
// "morph_targets"}], "samples": n}; names are null where the glTF has none,
// indices are the glTF's own, and durations are three.js's clip durations.
//
// What the oracle changes in three.js's defaults, and why (also in
// docs/oracle.md):
// - images, textures, samplers and materials are removed from the JSON
//   before parsing: Node has no image decoder, and materials do not move
//   vertices; every buffer (GLB chunk, data: URI or file) is packed into
//   one in-memory GLB, since GLTFLoader's file loader needs browser APIs;
// - skin weights: GLTFLoader reads only JOINTS_0/WEIGHTS_0 and its
//   normalizeSkinWeights() writes the renormalised weights back into the
//   accessor's storage (re-quantising u8/u16 weights, and hiding the stored
//   values from later reads). The oracle turns that call into a no-op and
//   takes every JOINTS_n/WEIGHTS_n set as three.js decoded the accessors,
//   renormalises the sum in f64, stores each set's share as float32, and
//   runs three.js's applyBoneTransform once per set (it is linear in the
//   weights; the bind-matrix-inverse translation counted once per set is
//   subtracted);
// - rotation keys of LINEAR and STEP tracks are renormalised to unit
//   length, as SPEC section 2 asks (three.js slerps them as stored; a key
//   of length 0.99985 in SimpleSkin shrinks the rotation matrix by 3e-4);
// - clips play with LoopOnce and clampWhenFinished, so that the clip's last
//   time holds the last pose instead of wrapping to the first, and every
//   node and morph weight is reset to the rest pose before each sample
//   (three.js otherwise keeps what the previous clip left on nodes the
//   current clip does not animate).
//
// Exit codes: 0 success; 3 three.js missing; 2 (or 1, for an exception
// three.js throws) usage or evaluation failure, with the reason on stderr.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { glbChunks } from "./glb_chunks.mjs";

const [requestPath, outPath] = process.argv.slice(2);
if (!requestPath || !outPath) {
    console.error("usage: node oracle.mjs REQUEST.json OUT.bin");
    process.exit(2);
}

let THREE, GLTFLoader;
try {
    THREE = await import("three");
    ({ GLTFLoader } = await import("three/examples/jsm/loaders/GLTFLoader.js"));
} catch (e) {
    console.error(`three is not installed (npm ci --prefix tools/node): ${e.message}`);
    process.exit(3);
}

// GLTFLoader calls normalizeSkinWeights() on every skinned mesh, which
// writes the renormalised JOINTS_0 weights back into the accessor's storage
// (the loaded buffer itself, re-quantised for u8/u16 weights). The oracle
// renormalises every set itself (influenceSets), from the untouched data.
THREE.SkinnedMesh.prototype.normalizeSkinWeights = function keepWeightsAsStored() {};

function fail(message) {
    console.error(`oracle: ${message}`);
    process.exit(2);
}

/// `file` as one GLB in memory whose only buffer holds every buffer of the
/// source (GLB binary chunk, data: URIs and external files alike, each
/// start aligned to 16 bytes), so that GLTFLoader needs no file access.
/// Returns the rewritten JSON and the GLB bytes.
function packedGlb(file) {
    const bytes = readFileSync(file);
    let json;
    let bin = null;
    const chunks = glbChunks(bytes);
    if (chunks) {
        ({ json, bin } = chunks);
        if (!json) fail(`${file}: GLB without a JSON chunk`);
    } else {
        json = JSON.parse(bytes.toString("utf8"));
    }
    const parts = [];
    const starts = [];
    let size = 0;
    for (const [i, buffer] of (json.buffers ?? []).entries()) {
        let data;
        if (buffer.uri === undefined) {
            if (i !== 0 || bin === null) fail(`${file}: buffer ${i} has no uri and no GLB chunk`);
            data = bin;
        } else if (buffer.uri.startsWith("data:")) {
            data = Buffer.from(buffer.uri.slice(buffer.uri.indexOf(",") + 1), "base64");
        } else {
            data = readFileSync(resolve(dirname(file), decodeURIComponent(buffer.uri)));
        }
        size = Math.ceil(size / 16) * 16;
        starts.push(size);
        parts.push([size, data]);
        size += data.length;
    }
    for (const view of json.bufferViews ?? []) {
        view.byteOffset = (view.byteOffset ?? 0) + starts[view.buffer];
        view.buffer = 0;
    }
    size = Math.ceil(size / 4) * 4;
    json.buffers = size > 0 ? [{ byteLength: size }] : [];
    delete json.images;
    delete json.textures;
    delete json.samplers;
    delete json.materials;
    for (const mesh of json.meshes ?? []) {
        for (const p of mesh.primitives ?? []) delete p.material;
    }
    const visual = /^(KHR_texture_|EXT_texture_|KHR_materials_)/;
    if (json.extensionsRequired) {
        json.extensionsRequired = json.extensionsRequired.filter((e) => !visual.test(e));
    }
    let text = Buffer.from(JSON.stringify(json), "utf8");
    text = Buffer.concat([text, Buffer.alloc((4 - (text.length % 4)) % 4, 0x20)]);
    const glb = Buffer.alloc(12 + 8 + text.length + (size > 0 ? 8 + size : 0));
    glb.writeUInt32LE(0x46546c67, 0);
    glb.writeUInt32LE(2, 4);
    glb.writeUInt32LE(glb.length, 8);
    glb.writeUInt32LE(text.length, 12);
    glb.writeUInt32LE(0x4e4f534a, 16);
    text.copy(glb, 20);
    if (size > 0) {
        const at = 20 + text.length;
        glb.writeUInt32LE(size, at);
        glb.writeUInt32LE(0x004e4942, at + 4);
        for (const [start, data] of parts) Buffer.from(data).copy(glb, at + 8 + start);
    }
    return { json, glb };
}

/// Every JOINTS_n/WEIGHTS_n pair of a primitive, as three.js decodes the
/// accessors, with weights renormalised over all sets (f64 sum) and stored
/// as float32 shares per set.
async function influenceSets(parser, primDef, count) {
    const sets = [];
    for (let n = 0; primDef.attributes[`JOINTS_${n}`] !== undefined; n++) {
        const w = primDef.attributes[`WEIGHTS_${n}`];
        if (w === undefined) break;
        sets.push({
            joints: await parser.getDependency("accessor", primDef.attributes[`JOINTS_${n}`]),
            weights: await parser.getDependency("accessor", w),
        });
    }
    const total = new Float64Array(count);
    for (const s of sets) {
        for (let v = 0; v < count; v++) {
            for (let c = 0; c < 4; c++) total[v] += s.weights.getComponent(v, c);
        }
    }
    return sets.map((s) => {
        const shares = new Float32Array(count * 4);
        for (let v = 0; v < count; v++) {
            for (let c = 0; c < 4; c++) {
                shares[v * 4 + c] = total[v] > 0 ? s.weights.getComponent(v, c) / total[v] : 0;
            }
        }
        return { skinIndex: s.joints, skinWeight: new THREE.Float32BufferAttribute(shares, 4) };
    });
}

const request = JSON.parse(readFileSync(requestPath, "utf8"));
const { json, glb } = packedGlb(request.model);
const loader = new GLTFLoader();
let gltf;
try {
    gltf = await loader.parseAsync(glb.buffer.slice(glb.byteOffset, glb.byteOffset + glb.length), "");
} catch (e) {
    fail(`${request.model}: GLTFLoader failed: ${e.stack ?? e}`);
}
const parser = gltf.parser;
const scene = gltf.scene;

// SPEC section 2: rotation keys are renormalised after decoding (real files
// store them slightly off unit length, and three.js's slerp does not
// renormalise). CUBICSPLINE tracks keep their tangents; three.js's cubic
// quaternion interpolant normalises its result already.
for (const clip of gltf.animations) {
    for (const track of clip.tracks) {
        if (!(track instanceof THREE.QuaternionKeyframeTrack)) continue;
        if (track.createInterpolant.isInterpolantFactoryMethodGLTFCubicSpline) continue;
        const values = Float32Array.from(track.values);
        for (let i = 0; i + 4 <= values.length; i += 4) {
            const n = Math.hypot(values[i], values[i + 1], values[i + 2], values[i + 3]);
            if (n > 0) for (let c = 0; c < 4; c++) values[i + c] /= n;
        }
        track.values = values;
    }
}

// glTF node index -> object, and the primitives, through the loader's own
// associations (multi-primitive meshes are a Group of one mesh each).
const nodeObjects = new Array((json.nodes ?? []).length).fill(null);
const primitives = [];
scene.traverse((object) => {
    const a = parser.associations.get(object);
    if (a?.nodes !== undefined) nodeObjects[a.nodes] = object;
});
scene.traverse((object) => {
    const a = parser.associations.get(object);
    if (!object.geometry || a?.primitives === undefined) return;
    const node = a.nodes ?? parser.associations.get(object.parent)?.nodes;
    if (node === undefined) fail(`${request.model}: primitive of mesh ${a.meshes} has no node`);
    primitives.push({ object, node, mesh: a.meshes, primitive: a.primitives });
});
primitives.sort((x, y) => x.node - y.node || x.primitive - y.primitive);
for (const p of primitives) {
    const primDef = json.meshes[p.mesh].primitives[p.primitive];
    p.vertices = p.object.geometry.attributes.position.count;
    p.skinned = p.object.isSkinnedMesh === true;
    p.sets = p.skinned ? await influenceSets(parser, primDef, p.vertices) : [];
    p.morphTargets = (primDef.targets ?? []).length;
    if (p.skinned && !p.object.bindMatrix.equals(new THREE.Matrix4())) {
        fail(`${request.model}: node ${p.node} has a non-identity bind matrix`);
    }
}

// Rest state of everything the mixer may touch.
const rest = [];
scene.traverse((o) => {
    rest.push([o, o.position.clone(), o.quaternion.clone(), o.scale.clone(), o.morphTargetInfluences?.slice()]);
});
function restore() {
    for (const [o, p, q, s, w] of rest) {
        o.position.copy(p);
        o.quaternion.copy(q);
        o.scale.copy(s);
        if (w) for (let i = 0; i < w.length; i++) o.morphTargetInfluences[i] = w[i];
    }
}

const names = (json.animations ?? []).map((a, i) => a.name ?? `clip${i}`);
const actions = new Map();
function action(name) {
    let found = actions.get(name);
    if (found) return found;
    const index = names.indexOf(name);
    if (index < 0) fail(`${request.model}: no animation named \`${name}\` (have: ${names.join(", ")})`);
    const mixer = new THREE.AnimationMixer(scene);
    const act = mixer.clipAction(gltf.animations[index]);
    act.setLoop(THREE.LoopOnce, 1);
    act.clampWhenFinished = true;
    found = { mixer, action: act };
    actions.set(name, found);
    return found;
}

const nodeCount = nodeObjects.length;
const perSample = nodeCount * 16 + primitives.reduce((n, p) => n + p.vertices * 3, 0);
const data = new Float64Array(perSample * request.samples.length);
const v = new THREE.Vector3();
const origin = new THREE.Vector3();
let playing = null;
for (const [s, sample] of request.samples.entries()) {
    if (playing) playing.action.stop();
    playing = null;
    restore();
    if (sample.clip !== null) {
        playing = action(sample.clip);
        playing.action.reset();
        playing.action.play();
        playing.action.time = sample.time;
        playing.mixer.update(0);
    }
    scene.updateMatrixWorld(true);
    let at = s * perSample;
    for (let n = 0; n < nodeCount; n++) {
        const m = nodeObjects[n] ? nodeObjects[n].matrixWorld.elements : new THREE.Matrix4().elements;
        data.set(m, at);
        at += 16;
    }
    for (const p of primitives) {
        const o = p.object;
        const local = new Float64Array(p.vertices * 3);
        if (p.skinned) {
            const geometry = o.geometry;
            const keep = [geometry.attributes.skinIndex, geometry.attributes.skinWeight];
            for (const set of p.sets) {
                geometry.attributes.skinIndex = set.skinIndex;
                geometry.attributes.skinWeight = set.skinWeight;
                for (let i = 0; i < p.vertices; i++) {
                    THREE.Mesh.prototype.getVertexPosition.call(o, i, v);
                    o.applyBoneTransform(i, v);
                    local[i * 3] += v.x;
                    local[i * 3 + 1] += v.y;
                    local[i * 3 + 2] += v.z;
                }
            }
            [geometry.attributes.skinIndex, geometry.attributes.skinWeight] = keep;
            // applyBoneTransform ends with bindMatrixInverse (affine): each
            // extra set added its translation once more.
            origin.set(0, 0, 0).applyMatrix4(o.bindMatrixInverse);
            for (let i = 0; i < p.vertices; i++) {
                local[i * 3] -= (p.sets.length - 1) * origin.x;
                local[i * 3 + 1] -= (p.sets.length - 1) * origin.y;
                local[i * 3 + 2] -= (p.sets.length - 1) * origin.z;
            }
        } else {
            for (let i = 0; i < p.vertices; i++) {
                THREE.Mesh.prototype.getVertexPosition.call(o, i, v);
                local.set([v.x, v.y, v.z], i * 3);
            }
        }
        for (let i = 0; i < p.vertices; i++) {
            v.fromArray(local, i * 3).applyMatrix4(o.matrixWorld);
            data[at++] = v.x;
            data[at++] = v.y;
            data[at++] = v.z;
        }
    }
}

const header = Buffer.from(
    JSON.stringify({
        three: THREE.REVISION,
        animations: (json.animations ?? []).map((a, i) => ({
            name: a.name ?? null,
            duration: gltf.animations[i].duration,
        })),
        meshes: (json.meshes ?? []).map((m) => m.name ?? null),
        nodes: (json.nodes ?? []).map((n, i) => ({
            name: n.name ?? null,
            mesh: n.mesh ?? null,
            in_scene: nodeObjects[i] !== null,
        })),
        primitives: primitives.map((p) => ({
            node: p.node,
            mesh: p.mesh,
            primitive: p.primitive,
            vertices: p.vertices,
            skinned: p.skinned,
            influence_sets: p.sets.length,
            morph_targets: p.morphTargets,
        })),
        samples: request.samples.length,
    }),
    "utf8",
);
const pad = (8 - ((12 + header.length) % 8)) % 8;
const head = Buffer.alloc(12 + header.length + pad);
head.write("RBORACL1", 0, "latin1");
head.writeUInt32LE(header.length, 8);
header.copy(head, 12);
writeFileSync(outPath, Buffer.concat([head, Buffer.from(data.buffer)]));
