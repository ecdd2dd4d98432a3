// Reads KTX2 files with ktx-parse, the parser three.js's KTX2Loader uses
// (bundled in the pinned `three` package), and prints one JSON line per
// file: the header fields, the key/value data and, per level, its lengths
// and the SHA-256 of the level data as ktx-parse returns it. The test
// suite (crates/cli/tests/containers.rs) compares them with the container's
// records and with the texels the `ktx2` crate reads.
//
// Usage: node ktx_check.mjs FILE.ktx2...
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { read } from "three/examples/jsm/libs/ktx-parse.module.js";

for (const file of process.argv.slice(2)) {
    const container = read(new Uint8Array(readFileSync(file)));
    const text = (bytes) => new TextDecoder().decode(bytes).replace(/\0+$/, "");
    const kvd = {};
    for (const [key, value] of Object.entries(container.keyValue)) {
        kvd[key] = typeof value === "string" ? value.replace(/\0+$/, "") : text(value);
    }
    const dfd = container.dataFormatDescriptor[0];
    console.log(JSON.stringify({
        file,
        vkFormat: container.vkFormat,
        typeSize: container.typeSize,
        pixelWidth: container.pixelWidth,
        pixelHeight: container.pixelHeight,
        pixelDepth: container.pixelDepth,
        layerCount: container.layerCount,
        faceCount: container.faceCount,
        levelCount: container.levels.length,
        supercompressionScheme: container.supercompressionScheme,
        colorModel: dfd.colorModel,
        transferFunction: dfd.transferFunction,
        samples: dfd.samples.length,
        keyValue: kvd,
        levels: container.levels.map((level) => ({
            byteLength: level.levelData.byteLength,
            uncompressedByteLength: level.uncompressedByteLength,
            sha256: createHash("sha256").update(level.levelData).digest("hex"),
        })),
    }));
}
