// Screenshots pages in headless Chromium (playwright-core, pinned in
// tools/node). Usage: node shoot.mjs JOBS.json, where JOBS.json is
// { "chromium": PATH, "node_modules": DIR, "jobs": [{ "url", "width",
// "height", "out" }] }. Each page must set window.rigbakeViewer.ready (or
// .error) when its frame is drawn; an error or a wait past `timeout_ms`
// (default 60 s) fails the run.
//
// Optional job fields:
// - `expect_error`: the page must end in an error instead; nothing is
//   screenshotted, and the job passes when it does;
// - `state_out`: a file to write what the page showed while it loaded, as
//   JSON { ready_ms, error, shown, polled: [[ms, text]...] }: `ready_ms` is
//   the time from the navigation's commit to ready (or error), `shown` the
//   page's own list of loading lines (window.rigbakeViewer.shown), `polled`
//   every distinct visible text of its `#progress` element, sampled every
//   50 ms from the commit on, with the time it was first seen; and the
//   page's `decoded`, `workerError` and `uploads` (textures decoded in the
//   worker or on the main thread, the textures uploaded with their WebGL
//   internal formats).
import { readFileSync, writeFileSync } from 'node:fs';
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
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Samples the page until it is ready or failed: its visible progress text.
async function watch(page, timeout) {
  const started = Date.now();
  const polled = [];
  for (;;) {
    const s = await page.evaluate(() => {
      const box = document.getElementById('progress');
      const visible = box && !box.hidden && box.getClientRects().length > 0;
      const v = window.rigbakeViewer;
      return { text: visible ? box.textContent : null, done: !!(v && (v.ready || v.error)) };
    }).catch(() => ({ text: null, done: false }));
    const ms = Date.now() - started;
    if (s.text && polled.at(-1)?.[1] !== s.text) polled.push([ms, s.text]);
    if (s.done) return { ready_ms: ms, polled };
    if (ms > timeout) return { ready_ms: null, polled };
    await sleep(50);
  }
}

let failed = false;
try {
  for (const job of spec.jobs) {
    const page = await browser.newPage({ viewport: { width: job.width, height: job.height }, deviceScaleFactor: 1 });
    const logs = [];
    page.on('console', (m) => logs.push(`console.${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => logs.push(`page error: ${e.message}`));
    const timeout = job.timeout_ms ?? 60000;
    await page.goto(job.url, { waitUntil: 'commit' });
    let watched = null;
    try {
      if (job.state_out) {
        watched = await watch(page, timeout);
        if (watched.ready_ms === null) throw new Error(`not ready within ${timeout} ms`);
      } else {
        await page.waitForFunction(() => window.rigbakeViewer && (window.rigbakeViewer.ready || window.rigbakeViewer.error), null, { timeout });
      }
    } catch (e) {
      logs.push(`timed out: ${e.message}`);
      logs.push(`page: ${(await page.content()).slice(0, 300)}`);
    }
    const state = await page.evaluate(() => window.rigbakeViewer ?? null);
    if (job.state_out) {
      writeFileSync(job.state_out, JSON.stringify({
        ready_ms: watched?.ready_ms ?? null, error: state?.error ?? null, shown: state?.shown ?? [], polled: watched?.polled ?? [],
        decoded: state?.decoded ?? null, workerError: state?.workerError ?? null, uploads: state?.uploads ?? [],
      }));
    }
    if (job.expect_error) {
      if (state?.error) {
        console.log(`refused as expected ${job.url}: ${state.error}`);
      } else {
        failed = true;
        console.error(`FAILED ${job.url}: expected an error, got ${state?.ready ? 'a ready page' : `stage ${state?.stage}`}\n${logs.join('\n')}`);
      }
    } else if (!state || !state.ready || state.error) {
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
