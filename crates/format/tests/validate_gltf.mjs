// Validates a glTF or GLB file with the Khronos glTF-Validator and prints
// {"validatorVersion": ..., "issues": report.issues} as JSON on stdout.
//
// Usage: node validate_gltf.mjs FILE
// The validator is the npm package installed in tools/node/ (npm ci --prefix
// tools/node). Exit code 3 when that package is missing, 2 for usage or
// validator failures, 0 otherwise (whatever the report says).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const file = process.argv[2];
if (!file) {
    console.error("usage: node validate_gltf.mjs FILE");
    process.exit(2);
}

const require = createRequire(new URL("../../../tools/node/package.json", import.meta.url));
let validator;
try {
    validator = require("gltf-validator");
} catch (e) {
    console.error(`gltf-validator is not installed (npm ci --prefix tools/node): ${e.message}`);
    process.exit(3);
}

try {
    const report = await validator.validateBytes(new Uint8Array(readFileSync(file)), {
        uri: file,
        maxIssues: 0,
        writeTimestamp: false,
    });
    console.log(JSON.stringify({ validatorVersion: validator.version(), issues: report.issues }));
} catch (e) {
    console.error(`glTF-Validator failed on ${file}: ${e}`);
    process.exit(2);
}
