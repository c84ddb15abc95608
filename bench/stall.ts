/**
 * The event-loop stall of one 45 MiB upload and of its indexing, against the real
 * server process (`tsx src/main.ts`, search worker on, embedded Meilisearch) on a fresh database.
 * The stall is seen from outside as the slowest `/healthz` answer while the work runs (a ping
 * every 5 ms), so it bounds the longest time the service could not answer anyone.
 * Run twice in one go: with the worker-thread pool (default) and with OFFLOAD_THREADS=0 (the
 * same work on the event loop), the baseline.
 * Run: npx tsx bench/stall.ts [--prof=DIR]   (--prof: a V8 CPU profile of each server run in DIR)
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as mariadb from 'mariadb';
import { createDb } from '../src/db/client';
import { migrate } from '../src/db/migrate';
import { createApiKey } from '../src/services/keys';
import { operatorCtx } from '../src/services/context';
import { createUser } from '../src/services/users';
import { markdownOfSize } from './corpus-lite';

const MiB = 1024 * 1024;
const JWT_SECRET = 'bench-stall-secret-long-enough';
const PROF = process.argv.find((a) => a.startsWith('--prof='))?.slice(7);

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function request(url: string, method: string, token: string, body?: Buffer) {
  return new Promise<{ status: number; text: string }>((resolve) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
    if (body) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': String(body.length) });
    const req = http.request(url, { method, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: -1, text: '' }));
    });
    req.on('error', () => resolve({ status: -1, text: '' }));
    req.end(body);
  });
}

/** Runs `work` while pinging /healthz every 5 ms; returns its result and the slowest answer. */
async function whilePinging<T>(base: string, work: () => Promise<T>): Promise<[T, number]> {
  let slowest = 0;
  let running = true;
  const pinger = (async () => {
    while (running) {
      const t = performance.now();
      await request(`${base}/healthz`, 'GET', '');
      slowest = Math.max(slowest, performance.now() - t);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  try {
    return [await work(), slowest];
  } finally {
    running = false;
    await pinger;
  }
}

/**
 * The outbox backlog, and the server's own view of its event loop: the longest delay it saw since
 * the previous scrape (prom-client's monitorEventLoopDelay, reset at each scrape), in ms. Unlike the
 * /healthz round trip, this leaves out the bench client and the machine's other work.
 */
async function scrape(base: string): Promise<{ backlog: number; lagMs: number }> {
  const text = (await request(`${base}/metrics`, 'GET', '')).text;
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { backlog: value('search_outbox_backlog'), lagMs: value('nodejs_eventloop_lag_max_seconds') * 1000 };
}

/** Waits until the outbox is empty; returns how long it took and the longest loop delay meanwhile. */
async function untilIndexed(base: string): Promise<{ ms: number; lagMs: number }> {
  const t = performance.now();
  let lagMs = 0;
  for (;;) {
    const s = await scrape(base);
    lagMs = Math.max(lagMs, s.lagMs);
    if (s.backlog === 0) return { ms: performance.now() - t, lagMs };
    if (performance.now() - t > 600_000) throw new Error('indexing did not finish in 10 minutes');
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Run {
  /** Slowest /healthz while uploading, and the server's longest loop delay. */
  upload: number;
  uploadLag: number;
  uploadMs: number;
  index: number;
  indexLag: number;
  indexMs: number;
}

async function run(threads: string | undefined, body: Buffer): Promise<Run> {
  const dbName = `sa_bench_stall_${crypto.randomBytes(3).toString('hex')}`;
  const dbUrl = `mysql://root@127.0.0.1:3306/${dbName}`;
  await migrate(dbUrl);
  const db = createDb(dbUrl);
  const user = await createUser(operatorCtx(db), 'bench-stall@example.test', 'bench');
  const { token } = await createApiKey(operatorCtx(db, { jwtSecret: JWT_SECRET }), { name: 'bench' }, user.id);
  await db.close();
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-bench-stall-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: dbUrl, PORT: String(port), DATA_DIR: dataDir, JWT_SECRET, LOG_LEVEL: 'warn', MEILI_URL: '' };
  if (threads !== undefined) env.OFFLOAD_THREADS = threads;
  const prof = PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : [];
  const server = spawn(process.execPath, [...prof, '--import', 'tsx', 'src/main.ts'], {
    cwd: path.resolve(__dirname, '..'),
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      if ((await request(`${base}/readyz`, 'GET', token)).status === 200) break;
      if (i > 1200) throw new Error('server did not become ready');
      await new Promise((r) => setTimeout(r, 100));
    }
    // Warm-up: the first large upload starts a thread (and compiles its code under tsx).
    const warm = Buffer.from(JSON.stringify({ name: 'warm', markdown: markdownOfSize(2 * MiB, 7) }));
    await request(`${base}/api/v1/projects/warm/sessions/${crypto.randomUUID()}`, 'PUT', token, warm);
    await untilIndexed(base);

    await scrape(base); // resets the server's loop-delay maximum
    const t0 = performance.now();
    const [up, upload] = await whilePinging(base, () => request(`${base}/api/v1/projects/big/sessions/${crypto.randomUUID()}`, 'PUT', token, body));
    const uploadMs = performance.now() - t0;
    if (up.status !== 201) throw new Error(`upload answered ${up.status}: ${up.text.slice(0, 200)}`);
    const uploadLag = (await scrape(base)).lagMs;
    const [indexed, index] = await whilePinging(base, () => untilIndexed(base));
    return { upload, uploadLag, uploadMs, index, indexLag: indexed.lagMs, indexMs: indexed.ms };
  } finally {
    const exited = new Promise((r) => server.once('exit', r));
    // SIGTERM first: a profiled server writes its profile as it exits.
    server.kill('SIGTERM');
    const killed = setTimeout(() => {
      try {
        process.kill(-server.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, 10_000);
    await exited;
    clearTimeout(killed);
    try {
      process.kill(-server.pid!, 'SIGKILL');
    } catch {
      /* the group is gone */
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    const c = await mariadb.createConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
    await c.query(`DROP DATABASE IF EXISTS \`${dbName}\``);
    await c.end();
  }
}

async function main() {
  const markdown = markdownOfSize(45 * MiB, 3);
  const body = Buffer.from(JSON.stringify({ name: 'big', markdown }));
  console.log(
    `one ${(body.length / MiB).toFixed(1)} MiB upload of a ${(Buffer.byteLength(markdown) / MiB).toFixed(1)} MiB session; slowest /healthz (ms) while it runs\n`,
  );
  const pooled = await run(undefined, body);
  if (process.argv.includes('--pooled-only')) return console.log(pooled);
  const inline = await run('0', body);
  const row = (name: string, r: Run) =>
    `${name.padEnd(28)} upload stall ${r.upload.toFixed(0).padStart(5)} ms, loop delay ${r.uploadLag.toFixed(0).padStart(5)} ms (upload ${(r.uploadMs / 1000).toFixed(1)} s)   ` +
    `indexing stall ${r.index.toFixed(0).padStart(5)} ms, loop delay ${r.indexLag.toFixed(0).padStart(5)} ms (indexing ${(r.indexMs / 1000).toFixed(1)} s)`;
  console.log("stall: slowest /healthz round trip; loop delay: the server's longest event-loop delay (its own measure)\n");
  console.log(row('worker threads (default)', pooled));
  console.log(row('OFFLOAD_THREADS=0 (baseline)', inline));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
