/**
 * Export and import throughput and footprint (docs/export-import.md), beside this machine's raw
 * disk write rate (dd) and the database's write rate of 1 MiB content chunks. A fresh database gets
 * SIZE_MB of sessions (in every 255 MiB one of 47 MiB, the rest 4 MiB, each with raw data), then:
 * export to a file (MB/s, RSS added, the longest event-loop delay and every hold of the loop over
 * 50 ms), import of
 * that file into a second fresh database (the same), and the two reference rates.
 * Run: npx tsx bench/export-import.ts   (SIZE_MB=256 by default; MEM_TRACE=1 prints memoryUsage at
 * each peak and after each imported session that raised the RSS; BENCH_INLINE=1 runs the CPU work on
 * the event loop instead of the worker-thread pool)
 */
import { execSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { loadConfig } from '../src/config';
import { createDb, type DbHandles } from '../src/db/client';
import { createLogger } from '../src/logger';
import { createOffload, inlineOffload } from '../src/offload';
import type { Ctx, Deps } from '../src/services/context';
import { openExport } from '../src/services/exports';
import { importArchive } from '../src/services/imports';
import { upsertSession } from '../src/services/session-upload';
import { createUser } from '../src/services/users';
import { operatorCtx } from '../src/services/context';
import { markdownOfSize } from './corpus-lite';
import { freshDatabase } from './support';

const MiB = 1024 * 1024;
const SIZE_MB = Number(process.env.SIZE_MB ?? 256);

function ctxFor(db: DbHandles, userId: string, url: string): { ctx: Ctx; close: () => Promise<void> } {
  const config = loadConfig({ DATABASE_URL: url, JWT_SECRET: 'bench-export-secret-long-enough', LOG_LEVEL: 'silent', REDACT_SECRETS: 'on' });
  const offload = process.env.BENCH_INLINE ? inlineOffload : createOffload({ threads: config.offloadThreads });
  const deps: Deps = { config, db, logger: createLogger('silent'), offload, search: undefined as never };
  return { ctx: { deps, user: { id: userId, keyId: null }, log: deps.logger }, close: () => offload.close() };
}

interface Measured<T> {
  value: T;
  seconds: number;
  rssAddedMB: number;
  /** monitorEventLoopDelay's max: the longest the loop was held. */
  maxDelayMs: number;
  /**
   * Holds of the loop over 50 ms (from a 5 ms timer): how long, how much of it the event-loop
   * thread was on a CPU (the rest it waited for one: other processes), and the garbage collection
   * inside it.
   */
  stalls: Array<{ atS: number; ms: number; cpuMs: number; gcMs: number }>;
  /** The longest single garbage collection pause. */
  maxGcMs: number;
}

/**
 * Peak RSS above the level at start, the longest event-loop delay, and every hold of the loop
 * over 50 ms (when, how long, how much of it was garbage collection), while `work` runs. With
 * STALLS_FILE set, the holds' windows (monotonic µs, the clock of a --cpu-prof profile) are
 * appended to that file, to find in a profile what ran then.
 */
async function measure<T>(label: string, work: () => Promise<T>): Promise<Measured<T>> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  let atPeak = process.memoryUsage();
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    if (m.rss > peak) {
      peak = m.rss;
      atPeak = m;
    }
  }, 20);
  const h = monitorEventLoopDelay({ resolution: 5 });
  const gcs: Array<{ start: number; end: number }> = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ start: e.startTime, end: e.startTime + e.duration });
  });
  obs.observe({ entryTypes: ['gc'] });
  const holds: Array<{ from: number; to: number; fromUs: bigint; toUs: bigint; cpuMs: number }> = [];
  const threadCpu = () => {
    const u = process.threadCpuUsage();
    return (u.user + u.system) / 1000;
  };
  let last = performance.now();
  let lastUs = process.hrtime.bigint() / 1000n;
  let lastCpu = threadCpu();
  const ticker = setInterval(() => {
    const now = performance.now();
    const nowUs = process.hrtime.bigint() / 1000n;
    const cpu = threadCpu();
    if (now - last > 55) holds.push({ from: last, to: now, fromUs: lastUs, toUs: nowUs, cpuMs: cpu - lastCpu });
    last = now;
    lastUs = nowUs;
    lastCpu = cpu;
  }, 5);
  h.enable();
  const t = performance.now();
  const value = await work();
  const seconds = (performance.now() - t) / 1000;
  h.disable();
  clearInterval(sampler);
  clearInterval(ticker);
  await new Promise((r) => setImmediate(r));
  obs.disconnect();
  const overlap = (a: number, b: number) => gcs.reduce((n, g) => n + Math.max(0, Math.min(b, g.end) - Math.max(a, g.start)), 0);
  const stalls = holds.map((x) => ({ atS: (x.from - t) / 1000, ms: x.to - x.from - 5, cpuMs: x.cpuMs, gcMs: overlap(x.from, x.to) }));
  if (process.env.STALLS_FILE) {
    fs.appendFileSync(process.env.STALLS_FILE, holds.map((x) => `${label} ${x.fromUs} ${x.toUs}\n`).join(''));
  }
  const maxGcMs = gcs.reduce((m, g) => Math.max(m, g.end - g.start), 0);
  if (process.env.MEM_TRACE) {
    const mb = (n: number) => (n / MiB).toFixed(0);
    console.log(
      `  ${label} at peak: rss ${mb(atPeak.rss)} (base ${mb(base)}) heapUsed ${mb(atPeak.heapUsed)} heapTotal ${mb(atPeak.heapTotal)} external ${mb(atPeak.external)} arrayBuffers ${mb(atPeak.arrayBuffers)} MiB`,
    );
  }
  return { value, seconds, rssAddedMB: (peak - base) / MiB, maxDelayMs: h.max / 1e6, stalls, maxGcMs };
}

function stallLine(m: Measured<unknown>): string {
  const longest = [...m.stalls].sort((a, b) => b.ms - a.ms);
  const cpu = m.stalls.reduce((n, x) => Math.max(n, x.cpuMs), 0);
  const list = longest.slice(0, 6).map((x) => `${x.ms.toFixed(0)} ms at ${x.atS.toFixed(1)} s: ${x.cpuMs.toFixed(0)} ms on CPU, ${x.gcMs.toFixed(0)} ms GC`);
  return `holds over 50 ms: ${m.stalls.length}; most CPU time inside one hold ${cpu.toFixed(0)} ms; longest GC pause ${m.maxGcMs.toFixed(0)} ms${list.length ? `; longest: ${list.join('; ')}` : ''}`;
}

/** With MEM_TRACE set: the process's memory after each imported session that raised the RSS. */
function memTrace(): ((p: { sessions: number }) => void) | undefined {
  if (!process.env.MEM_TRACE) return undefined;
  let high = 0;
  let last = -1;
  return (p) => {
    if (p.sessions === last) return;
    last = p.sessions;
    const m = process.memoryUsage();
    if (m.rss <= high) return;
    high = m.rss;
    const mb = (n: number) => (n / MiB).toFixed(0);
    console.log(`  after session ${p.sessions}: rss ${mb(m.rss)} heapUsed ${mb(m.heapUsed)} external ${mb(m.external)} arrayBuffers ${mb(m.arrayBuffers)} MiB`);
  };
}

/** A fresh database (bench/support.ts) with handles open on it. */
async function freshDb(prefix: string): Promise<{ url: string; db: DbHandles; drop: () => Promise<void> }> {
  const fresh = await freshDatabase(prefix);
  const db = createDb(fresh.url);
  return {
    url: fresh.url,
    db,
    drop: async () => {
      await db.close();
      await fresh.drop();
    },
  };
}

async function main(): Promise<void> {
  const tag = crypto.randomBytes(3).toString('hex');
  const src = await freshDb('sa_bench_exp');
  const dst = await freshDb('sa_bench_imp');
  const file = path.join(os.tmpdir(), `sa-bench-${tag}.tar`);
  try {
    const ada = await createUser(operatorCtx(src.db), `ada-${tag}@example.test`, 'Ada');
    const adaDst = await createUser(operatorCtx(dst.db), ada.email, 'Ada');
    const s = ctxFor(src.db, ada.id, src.url);
    // Seed: up to SIZE_MB, in every 255 MiB one session of 47 MiB (49 MB, near the 50 MB an
    // upload takes at most) and 52 of 4 MiB; each 7/8 markdown and 1/8 raw data.
    let seeded = 0;
    const sizes: number[] = [];
    for (let total = 0; total < SIZE_MB * MiB; total += sizes[sizes.length - 1]) sizes.push(sizes.length % 53 === 0 ? 47 * MiB : 4 * MiB);
    const t0 = performance.now();
    for (const [i, size] of sizes.entries()) {
      const md = markdownOfSize(Math.floor(size * 0.875), i + 1);
      const raw = JSON.stringify({ type: 'user', pad: 'x'.repeat(Math.floor(size * 0.125) - 30) });
      await upsertSession(s.ctx, `bench-${i % 4}`, crypto.randomUUID(), { name: `s${i}`, markdown: md, rawData: raw, metadata: { tags: ['bench'] } });
      seeded += Buffer.byteLength(md) + Buffer.byteLength(raw);
    }
    const seedS = (performance.now() - t0) / 1000;
    console.log(
      `seeded ${sizes.length} sessions, ${(seeded / MiB).toFixed(0)} MiB through upsertSession in ${seedS.toFixed(1)} s (${(seeded / MiB / seedS).toFixed(1)} MiB/s)`,
    );

    const exp = await measure('export', async () => {
      const e = await openExport(s.ctx);
      try {
        await e.writeTo(fs.createWriteStream(file));
      } finally {
        await e.close();
      }
      return e.size;
    });
    console.log(
      `export: ${(exp.value / MiB).toFixed(0)} MiB in ${exp.seconds.toFixed(1)} s = ${(exp.value / MiB / exp.seconds).toFixed(1)} MiB/s; RSS +${exp.rssAddedMB.toFixed(0)} MiB; longest event-loop delay ${exp.maxDelayMs.toFixed(0)} ms`,
    );
    console.log(`  export ${stallLine(exp)}`);
    await s.close();

    const d = ctxFor(dst.db, adaDst.id, dst.url);
    const imp = await measure('import', () =>
      importArchive(d.ctx, fs.createReadStream(file, { highWaterMark: MiB }), {
        onConflict: 'skip',
        maxBytes: 1024 * 1024 * MiB,
        maxFileBytes: 50 * MiB,
        onProgress: memTrace(),
      }),
    );
    console.log(
      `import: ${(exp.value / MiB).toFixed(0)} MiB in ${imp.seconds.toFixed(1)} s = ${(exp.value / MiB / imp.seconds).toFixed(1)} MiB/s; RSS +${imp.rssAddedMB.toFixed(0)} MiB; longest event-loop delay ${imp.maxDelayMs.toFixed(0)} ms; ${JSON.stringify(imp.value.sessions)} errors ${imp.value.errors.length}`,
    );
    console.log(`  import ${stallLine(imp)}`);
    for (const e of imp.value.errors.slice(0, 3)) console.log(`  import error: ${e.path}: ${e.error}`);
    await d.close();

    // Reference rates: raw disk (dd, direct I/O) and the database's write of 1 MiB chunks.
    const ddFile = path.join(os.tmpdir(), `sa-bench-dd-${tag}`);
    try {
      const dd = execSync(`dd if=/dev/zero of=${ddFile} bs=1M count=256 oflag=direct 2>&1`).toString().trim().split('\n').pop();
      console.log(`dd (256 MiB, direct): ${dd}`);
    } finally {
      fs.rmSync(ddFile, { force: true });
    }
    await dst.db.writes.execute('CREATE TABLE bench_chunks (id INT PRIMARY KEY, data LONGBLOB)');
    const chunk = crypto.randomBytes(MiB);
    const t1 = performance.now();
    for (let i = 0; i < 128; i++) await dst.db.writes.execute('INSERT INTO bench_chunks (id, data) VALUES (?, ?)', i, chunk);
    const dbS = (performance.now() - t1) / 1000;
    console.log(`database: 128 × 1 MiB inserts (text protocol) in ${dbS.toFixed(1)} s = ${(128 / dbS).toFixed(1)} MiB/s`);
    const t2 = performance.now();
    for (let i = 128; i < 256; i++) await dst.db.writes.executeBinary!('INSERT INTO bench_chunks (id, data) VALUES (?, ?)', i, chunk);
    const binS = (performance.now() - t2) / 1000;
    console.log(`database: 128 × 1 MiB inserts (binary protocol, as content chunks are written) in ${binS.toFixed(1)} s = ${(128 / binS).toFixed(1)} MiB/s`);
  } finally {
    fs.rmSync(file, { force: true });
    await src.drop();
    await dst.drop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
