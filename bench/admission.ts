/**
 * Fair admission, against the real server process (`tsx src/main.ts`) on a fresh database with
 * default admission settings:
 *   - user B's 1 KB, 1 MB and 20 MB uploads: latency alone (baseline), then while user A keeps
 *     12 uploads open that declare 16 MiB and trickle 1 byte every 2 s (A reopens each one the
 *     server cuts off, as an attacker would);
 *   - a burst of 30 concurrent ~150 KB uploads by one user: acknowledged / busy / other.
 * Run: npx tsx bench/admission.ts [--runs=N]
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { arg, BenchServer, freshDatabase, median, request, seedUsers } from './support';

const KiB = 1024;
const MiB = 1024 * KiB;
const RUNS = Number(arg('runs') ?? 5);

const put = (url: string, token: string, body: Buffer) => request(url, { method: 'PUT', token, body, keep: 200, tolerant: true });

/** One upload that declares 16 MiB and sends 1 byte every 2 s until stopped or cut off. */
function trickle(url: string, token: string, onCut: () => void): { stop(): void } {
  let stopped = false;
  const req = http.request(url, {
    method: 'PUT',
    agent: false,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': String(16 * MiB) },
  });
  req.on('error', () => undefined);
  req.on('response', (res) => {
    res.resume();
    if (!stopped) onCut();
  });
  req.on('close', () => clearInterval(timer));
  req.write('{"name":"t","markdown":"');
  const timer = setInterval(() => req.write('x'), 2000);
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      req.destroy();
    },
  };
}

async function main() {
  const db = await freshDatabase('sa_bench_adm');
  let server: BenchServer | null = null;
  try {
    const [a, b] = await seedUsers(db.url, [
      { email: 'bench-a@example.test', name: 'a' },
      { email: 'bench-b@example.test', name: 'b' },
    ]);
    const [tokenA, tokenB] = [a.token, b.token];
    server = await BenchServer.start({ env: { DATABASE_URL: db.url, RATE_LIMIT_REST_PER_HOUR: '1000000' } });
    const base = server.url;
    const url = (project: string) => `${base}/api/v1/projects/${project}/sessions/${crypto.randomUUID()}`;
    const sizes: [string, number][] = [
      ['1 KB', 1000],
      ['1 MB', 1_000_000],
      ['20 MB', 20_000_000],
    ];
    const bodies = new Map(sizes.map(([label, n]) => [label, Buffer.from(JSON.stringify({ name: `b ${label}`, markdown: '# b\n' + 'b'.repeat(n) }))]));
    const measure = async () => {
      const out = new Map<string, { ms: number[]; statuses: number[] }>();
      for (const [label] of sizes) out.set(label, { ms: [], statuses: [] });
      for (let r = 0; r < RUNS; r++) {
        for (const [label] of sizes) {
          const res = await put(url('bench-b'), tokenB, bodies.get(label)!);
          out.get(label)!.ms.push(res.ms);
          out.get(label)!.statuses.push(res.status);
        }
      }
      return out;
    };

    const baseline = await measure();

    let cut = 0;
    let open: { stop(): void }[] = [];
    let running = true;
    const openOne = () => {
      const t = trickle(url('bench-a'), tokenA, () => {
        cut++;
        if (running) open.push(openOne());
      });
      return t;
    };
    open = Array.from({ length: 12 }, openOne);
    await new Promise((r) => setTimeout(r, 3000));
    const t0 = performance.now();
    const underTrickle = await measure();
    const spanS = (performance.now() - t0) / 1000;
    running = false;
    open.forEach((t) => t.stop());

    console.log(`B's uploads, ${RUNS} each (median ms; statuses), alone and while A keeps 12 × 16 MiB trickling uploads open:`);
    console.log("| upload | alone | under A's trickle |");
    console.log('|---|---|---|');
    for (const [label] of sizes) {
      const x = baseline.get(label)!;
      const y = underTrickle.get(label)!;
      const st = (s: number[]) => [...new Set(s)].map((c) => `${s.filter((v) => v === c).length}× ${c}`).join(', ');
      console.log(`| ${label} | ${median(x.ms).toFixed(0)} ms (${st(x.statuses)}) | ${median(y.ms).toFixed(0)} ms (${st(y.statuses)}) |`);
    }
    console.log(`(A's trickles cut off by the server during the ${spanS.toFixed(1)} s measured: ${cut}; each reopened at once)\n`);

    const burst = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        put(url('burst'), tokenA, Buffer.from(JSON.stringify({ name: `burst ${i}`, markdown: crypto.randomBytes(75_000 + i * 1000).toString('hex') }))),
      ),
    );
    const ack = burst.filter((r) => r.status === 201).length;
    const busy = burst.filter((r) => r.status === 503 && r.text.includes('Server busy')).length;
    console.log(
      `30 concurrent ~150 KB uploads by one user: ${ack} acknowledged, ${busy} busy, ${30 - ack - busy} other; slowest ${Math.max(...burst.map((r) => r.ms)).toFixed(0)} ms`,
    );
  } finally {
    await server?.stop();
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
