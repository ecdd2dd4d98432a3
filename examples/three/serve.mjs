// Serves the three.js example on 127.0.0.1 with one bake:
//
//   node examples/three/serve.mjs FILE.rigbake [--port N] [--rigbake BIN] [--three DIR]
//
// /            the example (index.html, main.js)
// /three/...   three.js from npm (default tools/node/node_modules/three,
//              pinned in tools/node/package-lock.json)
// /bake.json   `rigbake inspect --json FILE.rigbake`
// /bake/NAME   a file the report names (textures, meshes) or the source
//              model, when it lies beside the container
//
// Prints the URL on its first line. Nothing else is served: names are
// plain file names from the report, never paths from the request.
import { createServer } from 'node:http';
import { readFileSync, statSync, lstatSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join, basename, resolve, sep, extname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : fallback;
};
const port = Number(option('--port', '0'));
const rigbake = option('--rigbake', 'rigbake');
const three = resolve(option('--three', join(here, '../../tools/node/node_modules/three')));
const container = args[0];
if (!container) {
  console.error('usage: node serve.mjs FILE.rigbake [--port N] [--rigbake BIN] [--three DIR]');
  process.exit(2);
}
let report;
try {
  report = execFileSync(rigbake, ['inspect', container, '--json'], {
    maxBuffer: 1 << 28,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
} catch (e) {
  if (e.code === 'ENOENT') {
    console.error(
      `error: cannot run \`${rigbake}\`: it is not on PATH.\n` +
        'Install it with `cargo install --path crates/cli --locked` (from the repository root),\n' +
        'or point this script at a built binary: --rigbake target/release/rigbake',
    );
  } else {
    const said = e.stderr ? e.stderr.toString().trim() : e.message;
    console.error(`error: \`${rigbake} inspect ${container} --json\` failed: ${said}`);
  }
  process.exit(2);
}
const meta = JSON.parse(report);
const dir = dirname(resolve(container));
const names = new Set([meta.metadata.source.file_name]);
for (const t of meta.metadata.textures) if (t.storage === 'file') names.add(t.name);
if (meta.weights?.mesh_file) names.add(meta.weights.mesh_file);
// LOD levels' own weights meshes (docs/lods.md).
for (const g of meta.lods?.groups ?? []) for (const l of g.levels) if (l.weights_file) names.add(l.weights_file);
if (meta.vat) {
  if (meta.vat.playback_file) names.add(meta.vat.playback_file);
  for (const t of meta.vat.textures) if (t.storage === 'file') names.add(t.name);
}
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.json': 'application/json', '.glb': 'model/gltf-binary' };

function regular(path) {
  try {
    return lstatSync(path).isFile() && statSync(path).isFile();
  } catch {
    return false;
  }
}

const server = createServer((req, res) => {
  const send = (status, body, type = 'text/plain') => {
    res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store' });
    res.end(body);
  };
  let path;
  try {
    path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  } catch {
    return send(400, 'bad path');
  }
  if (path.split('/').some((s) => s === '..' || s === '.') || path.includes('\\') || path.includes('\0')) return send(400, 'refused');
  if (path === '/' || path === '/index.html') return send(200, readFileSync(join(here, 'index.html')), TYPES['.html']);
  if (path === '/main.js') return send(200, readFileSync(join(here, 'main.js')), TYPES['.js']);
  if (path === '/bake.json') return send(200, report, TYPES['.json']);
  if (path.startsWith('/bake/')) {
    const name = path.slice(6);
    if (!names.has(name) || basename(name) !== name) return send(404, 'not a file of this bake');
    const file = join(dir, name);
    return regular(file) ? send(200, readFileSync(file), TYPES[extname(name)] ?? 'application/octet-stream') : send(404, 'missing');
  }
  if (path.startsWith('/three/')) {
    const file = resolve(three, path.slice(7));
    if (!file.startsWith(three + sep) || !regular(file)) return send(404, 'not found');
    return send(200, readFileSync(file), TYPES[extname(file)] ?? 'application/octet-stream');
  }
  send(404, 'not found');
});
server.listen(port, '127.0.0.1', () => {
  console.log(`three.js example: http://127.0.0.1:${server.address().port}/`);
});
