/**
 * Another user's request latency while one user holds 21 idle downloads open (7 exports, 7
 * markdown and 7 raw downloads of a 16 MiB session, none read: the server's writes back up), next
 * to the same requests on a quiet server (the baseline). The server runs with
 * LONG_READS_PER_USER=50 and LONG_READ_IDLE_S=600, so all 21 are admitted and held for the whole
 * run: what is measured is that waiting downloads hold nothing other requests need.
 * Run: npx tsx bench/long-reads.ts [--rounds=40]
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { arg, BenchServer, freshDatabase, percentile, request, seedUsers, type BenchUser } from './support';

const ROUNDS = Number(arg('rounds') ?? 40);
const BIG = `# big\n\n${'x'.repeat(1023)}\n`.repeat(16 * 1024);

/** A GET nobody reads: resolves with its status once the headers are in; destroy() ends it. */
function hold(base: string, user: BenchUser, path: string, accept: string): Promise<{ status: number; destroy(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${path}`, { headers: { Authorization: `Bearer ${user.token}`, Accept: accept }, agent: false }, (res) =>
      resolve({ status: res.statusCode ?? 0, destroy: () => res.socket.destroy() }),
    );
    req.on('error', reject);
  });
}

/** One round of another user's work: a list, a read, a write, readiness. Latencies by kind, ms. */
async function round(base: string, b: BenchUser, into: Record<string, number[]>): Promise<void> {
  const timed = async (kind: string, fn: () => Promise<{ status: number }>) => {
    const t = performance.now();
    const r = await fn();
    if (r.status >= 300) throw new Error(`${kind}: ${r.status}`);
    (into[kind] ??= []).push(performance.now() - t);
  };
  await timed('list', () => request(`${base}/api/v1/projects/bench-b/sessions`, { token: b.token }));
  await timed('read', () => request(`${base}/api/v1/projects/bench-b/sessions/${SMALL}`, { token: b.token }));
  await timed('write', () =>
    request(`${base}/api/v1/projects/bench-b/sessions/${crypto.randomUUID()}`, { method: 'PUT', token: b.token, body: { name: 'w', markdown: '# w\n' } }),
  );
  await timed('readyz', () => request(`${base}/readyz`));
}

const SMALL = crypto.randomUUID();

async function main(): Promise<void> {
  const db = await freshDatabase('bench_longreads');
  let server: BenchServer | null = null;
  try {
    const [a, b] = await seedUsers(db.url, [{ email: 'long-a@example.test' }, { email: 'long-b@example.test' }]);
    server = await BenchServer.start({
      env: { DATABASE_URL: db.url, LONG_READS_PER_USER: '50', LONG_READ_IDLE_S: '600', MAX_BODY_BYTES: String(64 * 1024 * 1024) },
      output: 'stderr',
    });
    const base = server.url;
    const sid = crypto.randomUUID();
    const put = await request(`${base}/api/v1/projects/bench-a/sessions/${sid}`, {
      method: 'PUT',
      token: a.token,
      body: { name: 'big', markdown: BIG, rawData: BIG },
    });
    if (put.status !== 201) throw new Error(`upload: ${put.status}`);
    const small = await request(`${base}/api/v1/projects/bench-b/sessions/${SMALL}`, { method: 'PUT', token: b.token, body: { name: 's', markdown: '# s\n' } });
    if (small.status !== 201) throw new Error(`upload: ${small.status}`);

    const quiet: Record<string, number[]> = {};
    for (let i = 0; i < ROUNDS; i++) await round(base, b, quiet);

    const url = `/api/v1/projects/bench-a/sessions/${sid}`;
    const held: Array<{ status: number; destroy(): void }> = [];
    try {
      for (let i = 0; i < 7; i++) {
        held.push(await hold(base, a, '/api/v1/export', 'application/x-tar'));
        held.push(await hold(base, a, url, 'text/markdown'));
        held.push(await hold(base, a, `${url}/raw`, '*/*'));
      }
      if (held.some((h) => h.status !== 200)) throw new Error(`held downloads: ${held.map((h) => h.status).join(' ')}`);
      const busy: Record<string, number[]> = {};
      for (let i = 0; i < ROUNDS; i++) await round(base, b, busy);

      console.log(`another user's requests, ${ROUNDS} rounds each (ms): quiet (baseline) vs with 21 idle downloads held by one user`);
      console.log('kind     quiet p50  p95    held p50  p95    p95 ratio');
      for (const kind of Object.keys(quiet)) {
        const [q50, q95, h50, h95] = [percentile(quiet[kind], 50), percentile(quiet[kind], 95), percentile(busy[kind], 50), percentile(busy[kind], 95)];
        console.log(
          `${kind.padEnd(8)} ${q50.toFixed(1).padStart(9)} ${q95.toFixed(1).padStart(5)}    ${h50.toFixed(1).padStart(8)} ${h95.toFixed(1).padStart(5)}    ${(h95 / q95).toFixed(2)}x`,
        );
      }
    } finally {
      for (const h of held) h.destroy();
    }
  } finally {
    await server?.stop();
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
