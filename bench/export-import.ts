/**
 * Export and import throughput and footprint (docs/export-import.md), beside this machine's raw disk write rate (dd) and the database's write rate of 1 MiB
 * content chunks. A fresh database gets SIZE_MB of sessions (one of 45 MiB, the rest 4 MiB, each
 * with raw data), then: export to a file (MB/s, RSS added, the longest event-loop delay), import of
 * that file into a second fresh database (the same), and the two reference rates.
 * Run: npx tsx bench/export-import.ts   (SIZE_MB=256 by default)
 */
import { execSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../src/config';
import { createDb, type DbHandles } from '../src/db/client';
import { migrate } from '../src/db/migrate';
import { createLogger } from '../src/logger';
import { createOffload } from '../src/offload';
import type { Ctx, Deps } from '../src/services/context';
import { openExport } from '../src/services/exports';
import { importArchive } from '../src/services/imports';
import { upsertSession } from '../src/services/session-upload';
import { createUser } from '../src/services/users';
import { markdownOfSize } from './corpus-lite';

const MiB = 1024 * 1024;
const SIZE_MB = Number(process.env.SIZE_MB ?? 256);
const ROOT = process.env.DATABASE_ROOT_URL ?? 'mysql://root@127.0.0.1:3306';

function ctxFor(db: DbHandles, userId: string, url: string): { ctx: Ctx; close: () => Promise<void> } {
  const config = loadConfig({ DATABASE_URL: url, JWT_SECRET: 'bench-export-secret-long-enough', LOG_LEVEL: 'silent', REDACT_SECRETS: 'on' });
  const offload = createOffload({ threads: config.offloadThreads });
  const deps: Deps = { config, db, logger: createLogger('silent'), offload, search: undefined as never };
  return { ctx: { deps, user: { id: userId, keyId: null }, log: deps.logger }, close: () => offload.close() };
}

/** Peak RSS above the level at start, and the longest event-loop delay, while `work` runs. */
async function measure<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number; rssAddedMB: number; maxDelayMs: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const t = performance.now();
  const value = await work();
  const seconds = (performance.now() - t) / 1000;
  h.disable();
  clearInterval(sampler);
  return { value, seconds, rssAddedMB: (peak - base) / MiB, maxDelayMs: h.max / 1e6 };
}

async function freshDb(name: string): Promise<{ url: string; db: DbHandles; drop: () => Promise<void> }> {
  const url = `${ROOT}/${name}`;
  await migrate(url);
  const db = createDb(url);
  return {
    url,
    db,
    drop: async () => {
      await db.writes.execute(`DROP DATABASE \`${name}\``).catch(() => undefined);
      await db.close();
    },
  };
}

async function main(): Promise<void> {
  const tag = crypto.randomBytes(3).toString('hex');
  const src = await freshDb(`sa_bench_exp_${tag}`);
  const dst = await freshDb(`sa_bench_imp_${tag}`);
  const file = path.join(os.tmpdir(), `sa-bench-${tag}.tar`);
  try {
    const ada = await createUser(src.db, `ada-${tag}@example.test`, 'Ada');
    const adaDst = await createUser(dst.db, ada.email, 'Ada');
    const s = ctxFor(src.db, ada.id, src.url);
    // Seed: one 45 MiB session, then 4 MiB ones (3.5 MiB markdown + 0.5 MiB raw data) up to SIZE_MB.
    let seeded = 0;
    const sizes = [45 * MiB, ...Array(Math.max(0, Math.ceil((SIZE_MB * MiB - 45 * MiB) / (4 * MiB)))).fill(4 * MiB)];
    const t0 = performance.now();
    for (const [i, size] of sizes.entries()) {
      const md = markdownOfSize(Math.floor(size * 0.875), i + 1);
      const raw = JSON.stringify({ type: 'user', pad: 'x'.repeat(Math.floor(size * 0.125) - 30) });
      await upsertSession(s.ctx, `bench-${i % 4}`, crypto.randomUUID(), { name: `s${i}`, markdown: md, rawData: raw, metadata: { tags: ['bench'] } });
      seeded += Buffer.byteLength(md) + Buffer.byteLength(raw);
    }
    const seedS = (performance.now() - t0) / 1000;
    console.log(`seeded ${sizes.length} sessions, ${(seeded / MiB).toFixed(0)} MiB through upsertSession in ${seedS.toFixed(1)} s (${(seeded / MiB / seedS).toFixed(1)} MiB/s)`);

    const exp = await measure(async () => {
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
    await s.close();

    const d = ctxFor(dst.db, adaDst.id, dst.url);
    const imp = await measure(() =>
      importArchive(d.ctx, fs.createReadStream(file, { highWaterMark: MiB }), { onConflict: 'skip', maxBytes: 1024 * 1024 * MiB, maxFileBytes: 50 * MiB }),
    );
    console.log(
      `import: ${(exp.value / MiB).toFixed(0)} MiB in ${imp.seconds.toFixed(1)} s = ${(exp.value / MiB / imp.seconds).toFixed(1)} MiB/s; RSS +${imp.rssAddedMB.toFixed(0)} MiB; longest event-loop delay ${imp.maxDelayMs.toFixed(0)} ms; ${JSON.stringify(imp.value.sessions)} errors ${imp.value.errors.length}`,
    );
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
    console.log(`database: 128 × 1 MiB inserts in ${dbS.toFixed(1)} s = ${(128 / dbS).toFixed(1)} MiB/s`);
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
