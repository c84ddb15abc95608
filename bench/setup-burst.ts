/**
 * A burst of anonymous `POST /auth/setup` after the first account exists, and what it does to
 * another tenant: the victim's small upload and `/readyz`, timed against the victim's own
 * baseline on the same server. Against the real server process (`tsx src/main.ts`) on a fresh
 * database; everything goes over HTTP (the first account through setup, the victim's key through
 * the console's API), so the same script measures an older checkout too.
 * Run: npx tsx bench/setup-burst.ts [--root=DIR]   (DIR: the checkout whose server to run; default this one)
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { BenchServer, databaseNamed, median, request as send, type Reply } from './support';

const ROOT = path.resolve(process.argv.find((a) => a.startsWith('--root='))?.slice(7) ?? path.join(__dirname, '..'));
const PASSWORD = 'correct horse battery';
const ROUNDS = 5;
const BURST = 12;

const request = (url: string, method: string, headers: Record<string, string> = {}, body?: object): Promise<Reply> =>
  send(url, { method, headers, body, tolerant: true });

const tally = (xs: number[]) =>
  Object.entries(xs.reduce<Record<number, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {}))
    .map(([s, n]) => `${n}×${s}`)
    .join(' ');

async function main() {
  // The server creates and migrates its database itself (so an older checkout's schema is used).
  const db = databaseNamed(`sa_bench_setup_${crypto.randomBytes(3).toString('hex')}`);
  let server: BenchServer | null = null;
  try {
    server = await BenchServer.start({
      cwd: ROOT,
      env: { DATABASE_URL: db.url, MEILI_URL: '', WORKERS_ENABLED: undefined },
      output: 'stderr',
      ready: '/readyz',
    });
    const base = server.url;
    // The first account (through setup), then the victim's key through its browser session.
    const first = await request(`${base}/api/v1/auth/setup`, 'POST', {}, { email: 'admin@example.test', name: 'Admin', password: PASSWORD });
    if (first.status !== 201) throw new Error(`setup answered ${first.status}`);
    const cookie = String(first.headers['set-cookie']?.[0] ?? '').split(';')[0];
    const session = await request(`${base}/api/v1/auth/session`, 'GET', { Cookie: cookie });
    const key = await request(`${base}/api/v1/keys`, 'POST', { Cookie: cookie, 'X-CSRF-Token': session.json.data.csrfToken }, { name: 'victim' });
    const token = key.json?.data?.token ?? key.json?.data?.key?.token;
    if (!token) throw new Error(`key creation answered ${key.status}`);
    const upload = (n: number) =>
      request(
        `${base}/api/v1/projects/victim/sessions/${crypto.randomUUID()}`,
        'PUT',
        { Authorization: `Bearer ${token}` },
        { name: `victim ${n}`, markdown: `# victim ${n}\n\n${'text '.repeat(1000)}` },
      );

    const baseline: number[] = [];
    for (let i = 0; i < 10; i++) baseline.push((await upload(i)).ms);

    const victim: number[] = [];
    const ready: number[] = [];
    const readyStatus: number[] = [];
    const victimStatus: number[] = [];
    const burstStatus: number[] = [];
    const burstMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const t = performance.now();
      const burst = Array.from({ length: BURST }, (_, i) =>
        request(`${base}/api/v1/auth/setup`, 'POST', {}, { email: `burst-${round}-${i}@example.test`, name: 'B', password: PASSWORD }),
      );
      await new Promise((r) => setTimeout(r, 100));
      const [v, r] = await Promise.all([upload(100 + round), request(`${base}/readyz`, 'GET')]);
      const answers = await Promise.all(burst);
      burstMs.push(performance.now() - t);
      victim.push(v.ms);
      victimStatus.push(v.status);
      ready.push(r.ms);
      readyStatus.push(r.status);
      burstStatus.push(...answers.map((a) => a.status));
      await new Promise((r) => setTimeout(r, 500));
    }
    console.log(`server: ${ROOT}`);
    console.log(`victim upload (5 KB) baseline: median ${median(baseline).toFixed(0)} ms, max ${Math.max(...baseline).toFixed(0)} ms`);
    console.log(`${ROUNDS} bursts of ${BURST} anonymous setups from one address, the victim's upload and /readyz 100 ms into each:`);
    console.log(`  victim upload: median ${median(victim).toFixed(0)} ms, max ${Math.max(...victim).toFixed(0)} ms (${tally(victimStatus)})`);
    console.log(`  /readyz:       median ${median(ready).toFixed(0)} ms, max ${Math.max(...ready).toFixed(0)} ms (${tally(readyStatus)})`);
    console.log(`  burst:         median ${median(burstMs).toFixed(0)} ms to its last answer; answers ${tally(burstStatus)}`);
  } finally {
    await server?.stop();
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
