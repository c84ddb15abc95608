/**
 * Live lists across instances: how long an upload made through instance A takes to reach a
 * subscriber of `Subscription.sessionsChanged` on instance B (two service processes on one
 * database and one Redis, the subscriber on B's /api/v1/graphql/stream over node:http).
 *
 *   npx tsx bench/live.ts                 # 200 uploads, 4 at a time
 *   npx tsx bench/live.ts --uploads=1000 --concurrency=8
 *
 * Prints the delay from each upload's acknowledgement (A's 201) to the event on B, and from the
 * start of its request, at p50/p95/max. Goal: p95 < 1 s from the acknowledgement. A fresh
 * database, removed at the end; Redis at REDIS_URL (default redis://127.0.0.1:6379).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { arg, BenchServer, freshDatabaseWithUser, percentile, request } from './support';

const UPLOADS = Number(arg('uploads') ?? 200);
const CONCURRENCY = Number(arg('concurrency') ?? 4);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUERY = 'subscription { sessionsChanged { kind sessionId session { id displayTitle } } }';

/** Opens the stream on `base`; calls `onEvent` with each change's session id; resolves once the stream is open. */
function subscribe(base: string, token: string, onEvent: (sessionId: string) => void): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/api/v1/graphql/stream`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const message = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = message
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n');
          if (!message.includes('event: next') || !data) continue;
          const id = (JSON.parse(data) as { data?: { sessionsChanged?: { sessionId?: string } } }).data?.sessionsChanged?.sessionId;
          if (id) onEvent(id);
        }
      });
      resolve(() => req.destroy());
    });
    req.on('error', reject);
    req.end(JSON.stringify({ query: QUERY }));
  });
}

async function main() {
  const { db, user } = await freshDatabaseWithUser('sa_bench_live');
  const env = { DATABASE_URL: db.url, REDIS_URL, NAMESPACE: db.name };
  const servers: BenchServer[] = [];
  try {
    servers.push(await BenchServer.start({ env, name: 'A', output: 'stderr' }), await BenchServer.start({ env, name: 'B', output: 'stderr' }));
    const [a, b] = servers;
    const started = new Map<string, number>();
    const acked = new Map<string, number>();
    const heard = new Map<string, number>();
    let all!: () => void;
    const done = new Promise<void>((r) => (all = r));
    const close = await subscribe(b.url, user.token, (id) => {
      if (!heard.has(id)) heard.set(id, performance.now());
      if (heard.size === UPLOADS) all();
    });
    const ids = Array.from({ length: UPLOADS }, () => crypto.randomUUID());
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < ids.length) {
          const id = ids[next++];
          started.set(id, performance.now());
          const r = await request(`${a.url}/api/v1/projects/live-bench/sessions/${id}`, {
            method: 'PUT',
            token: user.token,
            body: Buffer.from(JSON.stringify({ name: `live ${id.slice(0, 8)}`, markdown: `_**User**_\n\n${id}\n` })),
          });
          acked.set(id, performance.now());
          if (r.status !== 201) throw new Error(`upload answered ${r.status}`);
        }
      }),
    );
    await Promise.race([done, new Promise((r) => setTimeout(r, 30_000))]);
    close();
    const fromAck = ids.filter((id) => heard.has(id)).map((id) => Math.max(0, heard.get(id)! - acked.get(id)!));
    const fromStart = ids.filter((id) => heard.has(id)).map((id) => heard.get(id)! - started.get(id)!);
    const line = (label: string, xs: number[]) =>
      `${label.padEnd(34)} p50 ${percentile(xs, 50).toFixed(1)} ms   p95 ${percentile(xs, 95).toFixed(1)} ms   max ${Math.max(...xs).toFixed(1)} ms`;
    console.log(`live lists: ${UPLOADS} uploads through A (${CONCURRENCY} at a time), one subscriber on B, Redis ${REDIS_URL}`);
    console.log(`  events heard on B: ${heard.size}/${UPLOADS}`);
    console.log(line('  acknowledged on A → event on B', fromAck) + '   (goal p95 < 1000 ms)');
    console.log(line('  request sent to A → event on B', fromStart));
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
