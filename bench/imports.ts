/**
 * Imports against the event loop, memory and the answer's size, on the real service process over
 * node:http (docs/export-import.md, "The manifest"). Each archive holds only a manifest of SIZE MiB
 * (canonical, indented) listing session files that never come: the worst case for memory (every
 * file is listed and kept while the import runs) and for the answer (every session fails). Each is
 * sent as `POST /api/v1/import` in 64 KiB writes, alone and then 4 at once; then a tar of 100,000
 * entries the manifest does not list (every one is reported), and a manifest over the 64 MiB bound.
 *
 * Per run, taken from the service process itself:
 * - the longest event-loop delay: prom-client's monitorEventLoopDelay (`nodejs_eventloop_lag_max_seconds`
 *   on /metrics, reset by each scrape: one scrape before the run, one after);
 * - the RSS added: the peak (VmHWM of /proc/<pid>/status, reset before the run through
 *   /proc/<pid>/clear_refs) less the RSS just before the run;
 * - the answer's status and size in bytes.
 * The machine's load average is printed with each row: on a shared machine a delay is partly time
 * spent waiting for a core, so each row is run REPEAT times and the best (lowest delay) is shown
 * with the worst next to it.
 * Run: npx tsx bench/imports.ts [--sizes=1,16,48,63] [--repeat=3] [--quick] [--built] [--checkout=DIR]
 *   --quick: sizes 1 and 16, one run each, 10,000 unlisted entries; --built: run dist/src/main.js;
 *   --checkout: run the service of another checkout (with its node_modules), e.g. older code as a baseline.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import * as tar from 'tar-stream';
import { arg, BenchServer, freshDatabase, seedUsers, sleep } from './support';

const MiB = 1024 * 1024;
const QUICK = process.argv.includes('--quick');
const BUILT = process.argv.includes('--built');
const SIZES = (arg('sizes') ?? (QUICK ? '1,16' : '1,16,48,63')).split(',').map(Number);
const REPEAT = Number(arg('repeat') ?? (QUICK ? 1 : 3));
const UNLISTED = QUICK ? 10_000 : 100_000;
/** Another checkout to run the service from (a baseline: the same bench against older code). */
const CHECKOUT = arg('checkout');

/** A tar of the given entries (bytes in memory). */
async function tarOf(entries: Array<{ name: string; body: Buffer }>): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: unknown) => void chunks.push(c as Buffer));
  const ended = new Promise<void>((r) => pack.on('end', () => r()));
  for (const e of entries) pack.entry({ name: e.name, mtime: new Date(0) }, e.body);
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/** A manifest's text of about `mb` MiB listing session files of fresh ids (sorted, as an export writes it). */
function manifestOf(mb: number): { text: Buffer; files: number } {
  const parts: string[] = [];
  let size = 0;
  while (size < mb * MiB - 200) {
    const line = `    {\n      "path": "projects/bench/sessions/${crypto.randomUUID()}/markdown.md",\n      "sha256": "${'0'.repeat(64)}",\n      "size": 1\n    }`;
    parts.push(line);
    size += line.length + 2;
  }
  parts.sort();
  const text = `{\n  "files": [\n${parts.join(',\n')}\n  ],\n  "format": "session-archive-export",\n  "projects": 1,\n  "sessions": ${parts.length},\n  "version": 1\n}\n`;
  return { text: Buffer.from(text), files: parts.length };
}

const EMPTY_MANIFEST = Buffer.from('{"files":[],"format":"session-archive-export","projects":0,"sessions":0,"version":1}');

/** POST /api/v1/import with `body` written 64 KiB at a time (as a network brings it). */
function postImport(base: string, token: string, body: Buffer): Promise<{ status: number; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(
      `${base}/api/v1/import`,
      {
        method: 'POST',
        agent: false,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/x-tar', 'Content-Length': String(body.length) },
      },
      (res) => {
        answered = true;
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          const all = Buffer.concat(parts);
          resolve({ status: res.statusCode ?? 0, bytes: all.length, text: all.subarray(0, 300).toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    // An answer before the whole body (a refusal) ends the upload; the answer still counts. A
    // connection closed with no answer at all is status -1.
    req.on('error', (err) => {
      if (!/EPIPE|ECONNRESET/.test(err.message)) reject(err);
      else if (!answered) resolve({ status: -1, bytes: 0, text: err.message });
    });
    let at = 0;
    const write = () => {
      while (at < body.length) {
        const piece = body.subarray(at, at + 64 * 1024);
        at += piece.length;
        if (!req.write(piece)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

const status = (pid: number) => fs.readFileSync(`/proc/${pid}/status`, 'utf8');
const kb = (text: string, field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)![1]) * 1024;

/** The service's longest event-loop delay since the previous scrape, in ms. */
async function lagSinceLastScrape(base: string): Promise<number> {
  const text = await new Promise<string>((resolve, reject) =>
    http
      .get(`${base}/metrics`, { agent: false }, (res) => {
        let t = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (t += c));
        res.on('end', () => resolve(t));
      })
      .on('error', reject),
  );
  return Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)![1]) * 1000;
}

interface Run {
  lagMs: number;
  rssAddedMiB: number;
  status: number;
  answerBytes: number;
  load: number;
  text: string;
}

/** `together` imports of `body` at once, measured on the service process. */
async function measure(server: BenchServer, token: string, body: Buffer, together: number): Promise<Run> {
  console.error(`[${new Date().toISOString()}] ${together} × ${(body.length / MiB).toFixed(0)} MiB`);
  // Let the previous run's garbage go and the machine settle.
  await sleep(2000);
  const pid = server.pid;
  let peakSampled = 0;
  let canReset = true;
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    canReset = false;
  }
  const before = kb(status(pid), 'VmRSS');
  const sampler = setInterval(() => (peakSampled = Math.max(peakSampled, kb(status(pid), 'VmRSS'))), 10);
  const load = os.loadavg()[0];
  await lagSinceLastScrape(server.url);
  const answers = await Promise.all(Array.from({ length: together }, () => postImport(server.url, token, body)));
  const lagMs = await lagSinceLastScrape(server.url);
  clearInterval(sampler);
  const peak = Math.max(peakSampled, canReset ? kb(status(pid), 'VmHWM') : 0);
  const a = answers.reduce((x, y) => (y.bytes > x.bytes ? y : x));
  return { lagMs, rssAddedMiB: (peak - before) / MiB, status: a.status, answerBytes: a.bytes, load, text: a.text };
}

async function best(server: BenchServer, token: string, body: Buffer, together: number): Promise<{ best: Run; worst: Run }> {
  const runs: Run[] = [];
  for (let i = 0; i < REPEAT; i++) runs.push(await measure(server, token, body, together));
  const byLag = [...runs].sort((a, b) => a.lagMs - b.lagMs);
  // Memory: the highest of the runs (it does not depend on waiting for a core).
  const rss = Math.max(...runs.map((r) => r.rssAddedMiB));
  return { best: { ...byLag[0], rssAddedMiB: rss }, worst: byLag[byLag.length - 1] };
}

const row = (cells: Array<string | number>) => console.log(`| ${cells.join(' | ')} |`);

/**
 * A fresh service for each row (so that what a row adds to RSS is not hidden by a heap an earlier
 * row grew), warmed up by one small import, then REPEAT runs.
 */
async function measureRow(dbUrl: string, token: string, body: Buffer, together: number): Promise<{ best: Run; worst: Run }> {
  const server = await BenchServer.start({
    name: 'service',
    env: { DATABASE_URL: dbUrl, RATE_LIMIT_REST_PER_HOUR: '1000000000' },
    output: 'stderr',
    ...(CHECKOUT ? { cwd: CHECKOUT } : {}),
    ...(BUILT ? { entry: ['dist/src/main.js'] } : {}),
  });
  try {
    await postImport(server.url, token, await tarOf([{ name: 'manifest.json', body: EMPTY_MANIFEST }]));
    return await best(server, token, body, together);
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const db = await freshDatabase('bench_imports');
  const summary: string[] = [];
  try {
    const [user] = await seedUsers(db.url, [{ email: `bench-imports-${crypto.randomBytes(3).toString('hex')}@example.test` }]);
    console.log(
      `# Imports on the service (${BUILT ? 'dist/src/main.js' : 'tsx src/main.ts'}${CHECKOUT ? ` of ${CHECKOUT}` : ''}), node ${process.version}, ${os.cpus().length} cores, ${new Date().toISOString()}`,
    );
    console.log(`best of ${REPEAT} by event-loop delay (worst in brackets); RSS: the highest of the runs, each row on a fresh service\n`);
    const line = (what: string, together: number, r: Run, worst: Run) =>
      row([
        what,
        together,
        `${r.lagMs.toFixed(0)} ms (${worst.lagMs.toFixed(0)})`,
        `${r.rssAddedMiB.toFixed(0)} MiB`,
        r.answerBytes >= 1024 ? `${(r.answerBytes / 1024).toFixed(1)} KiB` : `${r.answerBytes} B`,
        r.status,
        `${r.load.toFixed(1)} (${worst.load.toFixed(1)})`,
      ]);
    row(['archive', 'imports at once', 'longest event-loop delay', 'RSS added (peak)', 'answer', 'status', 'load avg']);
    row(['---', '---', '---', '---', '---', '---', '---']);
    for (const mb of SIZES) {
      const { text, files } = manifestOf(mb);
      const archive = await tarOf([{ name: 'manifest.json', body: text }]);
      for (const together of [1, 4]) {
        const { best: r, worst } = await measureRow(db.url, user.token, archive, together);
        line(`${mb} MiB manifest (${Math.round(files / 1000)}k files)`, together, r, worst);
        summary.push(
          `imports: ${mb} MiB manifest × ${together}: loop ${r.lagMs.toFixed(0)} ms, RSS +${r.rssAddedMiB.toFixed(0)} MiB, answer ${r.answerBytes} B`,
        );
      }
    }

    // Entries the manifest does not list: each is reported, the answer lists 100 and counts the rest.
    const name = (i: number) => `projects/bench/sessions/${crypto.randomUUID()}/${'x'.repeat(40)}-${i}`;
    const unlisted = await tarOf([
      { name: 'manifest.json', body: EMPTY_MANIFEST },
      ...Array.from({ length: UNLISTED }, (_, i) => ({ name: name(i), body: Buffer.from('x') })),
    ]);
    {
      const { best: r, worst } = await measureRow(db.url, user.token, unlisted, 1);
      line(`${(unlisted.length / MiB).toFixed(0)} MiB tar, ${UNLISTED / 1000}k unlisted entries`, 1, r, worst);
      summary.push(`imports: ${UNLISTED} unlisted entries: answer ${r.answerBytes} B, loop ${r.lagMs.toFixed(0)} ms`);
    }

    // A manifest over the bound: refused from its tar header, before a byte of it is parsed.
    if (!QUICK) {
      const over = await tarOf([{ name: 'manifest.json', body: manifestOf(65).text }]);
      const { best: r, worst } = await measureRow(db.url, user.token, over, 1);
      line(`${(over.length / MiB).toFixed(0)} MiB manifest (over the bound)`, 1, r, worst);
      console.log(`\nover the bound: ${r.status} ${r.text}`);
    }
    console.log('');
    for (const l of summary) console.log(l);
  } finally {
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
