/**
 * The event-loop stall of one 45 MiB upload and of its indexing, against the real
 * server process (`tsx src/main.ts`, search worker on, embedded Meilisearch) on a fresh database.
 * The stall is seen from outside as the slowest `/healthz` answer while the work runs (a ping
 * every 5 ms), so it bounds the longest time the service could not answer anyone.
 * Run twice in one go: with the worker-thread pool (default) and with OFFLOAD_THREADS=0 (the
 * same work on the event loop), the baseline.
 * Run: npx tsx bench/stall.ts [--prof=DIR]   (--prof: a V8 CPU profile of each server run in DIR)
 */
import crypto from 'node:crypto';
import { markdownOfSize } from './corpus-lite';
import { arg, BenchServer, freshDatabaseWithUser, request as send } from './support';

const MiB = 1024 * 1024;
const PROF = arg('prof');

const request = (url: string, method: string, token: string, body?: Buffer) => send(url, { method, token, body, tolerant: true });

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
  const { db, user } = await freshDatabaseWithUser('sa_bench_stall');
  const token = user.token;
  let server: BenchServer | null = null;
  try {
    server = await BenchServer.start({
      // The search worker on (the server's default), with its embedded engine.
      env: { DATABASE_URL: db.url, MEILI_URL: '', WORKERS_ENABLED: undefined, ...(threads !== undefined ? { OFFLOAD_THREADS: threads } : {}) },
      nodeArgs: PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : [],
      ready: '/readyz',
    });
    const base = server.url;
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
    // SIGTERM first: a profiled server writes its profile as it exits.
    await server?.stop();
    await db.drop();
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
