// Screenshots pages in headless Chromium (playwright-core, pinned in
// tools/node). Usage: node shoot.mjs JOBS.json, where JOBS.json is
// { "chromium": PATH, "node_modules": DIR, "jobs": [{ "url", "width",
// "height", "out" }] }. Each page must set window.rigbakeViewer.ready (or
// .error) when its frame is drawn; an error or a 60 s wait fails the run.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { chromium } = await import(pathToFileURL(join(spec.node_modules, 'playwright-core', 'index.mjs')).href);
const browser = await chromium.launch({
  executablePath: spec.chromium,
  headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--disable-gpu-sandbox',
    '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let failed = false;
try {
  for (const job of spec.jobs) {
    const page = await browser.newPage({ viewport: { width: job.width, height: job.height }, deviceScaleFactor: 1 });
    const logs = [];
    page.on('console', (m) => logs.push(`console.${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => logs.push(`page error: ${e.message}`));
    await page.goto(job.url, { waitUntil: 'commit' });
    try {
      await page.waitForFunction(() => window.rigbakeViewer && (window.rigbakeViewer.ready || window.rigbakeViewer.error), null, { timeout: job.timeout_ms ?? 60000 });
    } catch (e) {
      logs.push(`timed out: ${e.message}`);
      logs.push(`page: ${(await page.content()).slice(0, 300)}`);
    }
    const state = await page.evaluate(() => window.rigbakeViewer ?? null);
    if (!state || !state.ready || state.error) {
      failed = true;
      console.error(`FAILED ${job.url}: ${state?.error ?? `not ready (stage ${state?.stage})`}\n${logs.join('\n')}`);
    } else {
      await page.screenshot({ path: job.out });
      console.log(`shot ${job.url} -> ${job.out}`);
    }
    await page.close();
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
