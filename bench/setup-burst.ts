/**
 * A burst of anonymous `POST /auth/setup` after the first account exists, and what it does to
 * another tenant: the victim's small upload and `/readyz`, timed against the victim's own
 * baseline on the same server. Against the real server process (`tsx src/main.ts`) on a fresh
 * database; everything goes over HTTP (the first account through setup, the victim's key through
 * the console's API), so the same script measures an older checkout too.
 * Run: npx tsx bench/setup-burst.ts [--root=DIR]   (DIR: the checkout whose server to run; default this one)
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as mariadb from 'mariadb';

const ROOT = path.resolve(process.argv.find((a) => a.startsWith('--root='))?.slice(7) ?? path.join(__dirname, '..'));
const JWT_SECRET = 'bench-setup-burst-secret-long-enough';
const PASSWORD = 'correct horse battery';
const ROUNDS = 5;
const BURST = 12;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  json: any;
  ms: number;
}

function request(url: string, method: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const h: Record<string, string> = { ...headers };
  if (payload) Object.assign(h, { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) });
  const t = performance.now();
  return new Promise((resolve) => {
    const req = http.request(url, { method, agent: false, headers: h }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        let json: any;
        try {
          json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json, ms: performance.now() - t });
      });
      res.on('error', () => resolve({ status: -1, headers: {}, json: undefined, ms: performance.now() - t }));
    });
    req.on('error', () => resolve({ status: -1, headers: {}, json: undefined, ms: performance.now() - t }));
    req.end(payload);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const tally = (xs: number[]) =>
  Object.entries(xs.reduce<Record<number, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {}))
    .map(([s, n]) => `${n}×${s}`)
    .join(' ');

async function main() {
  const dbName = `sa_bench_setup_${crypto.randomBytes(3).toString('hex')}`;
  const dbUrl = `mysql://root@127.0.0.1:3306/${dbName}`;
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-bench-setup-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: dbUrl, PORT: String(port), DATA_DIR: dataDir, JWT_SECRET, LOG_LEVEL: 'warn', MEILI_URL: '' };
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      if ((await request(`${base}/readyz`, 'GET')).status === 200) break;
      if (i > 1200) throw new Error('server did not become ready');
      await new Promise((r) => setTimeout(r, 100));
    }
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
    const exited = new Promise((r) => server.once('exit', r));
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

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
