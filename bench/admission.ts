/**
 * Fair admission, against the real server process (`tsx src/main.ts`) on a fresh database with
 * default admission settings:
 *   - user B's 1 KB, 1 MB and 20 MB uploads: latency alone (baseline), then while user A keeps
 *     12 uploads open that declare 16 MiB and trickle 1 byte every 2 s (A reopens each one the
 *     server cuts off, as an attacker would);
 *   - a burst of 30 concurrent ~150 KB uploads by one user: acknowledged / busy / other.
 * Run: npx tsx bench/admission.ts [--runs=N]
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

const KiB = 1024;
const MiB = 1024 * KiB;
const JWT_SECRET = 'bench-admission-secret-long-enough';
const RUNS = Number(/^--runs=(\d+)$/.exec(process.argv.find((a) => a.startsWith('--runs=')) ?? '')?.[1] ?? 5);

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function put(url: string, token: string, body: Buffer): Promise<{ status: number; ms: number; text: string }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.request(
      url,
      { method: 'PUT', agent: false, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': String(body.length) } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          if (text.length < 200) text += c.toString('utf8', 0, 200);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, text }));
        res.on('error', () => resolve({ status: -1, ms: performance.now() - t0, text }));
      },
    );
    req.on('error', () => resolve({ status: -1, ms: performance.now() - t0, text: '' }));
    req.end(body);
  });
}

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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const dbName = `sa_bench_adm_${crypto.randomBytes(3).toString('hex')}`;
  const dbUrl = `mysql://root@127.0.0.1:3306/${dbName}`;
  await migrate(dbUrl);
  const db = createDb(dbUrl);
  const a = await createUser(operatorCtx(db), 'bench-a@example.test', 'a');
  const b = await createUser(operatorCtx(db), 'bench-b@example.test', 'b');
  const tokenA = (await createApiKey(operatorCtx(db, { jwtSecret: JWT_SECRET }), { name: 'bench' }, a.id)).token;
  const tokenB = (await createApiKey(operatorCtx(db, { jwtSecret: JWT_SECRET }), { name: 'bench' }, b.id)).token;
  await db.close();

  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-bench-adm-'));
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: path.resolve(__dirname, '..'),
    env: {
      ...process.env,
      DATABASE_URL: dbUrl,
      PORT: String(port),
      DATA_DIR: dataDir,
      JWT_SECRET,
      LOG_LEVEL: 'warn',
      WORKERS_ENABLED: 'false',
      RATE_LIMIT_REST_PER_HOUR: '1000000',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  const base = `http://127.0.0.1:${port}`;
  const url = (project: string) => `${base}/api/v1/projects/${project}/sessions/${crypto.randomUUID()}`;
  try {
    for (let i = 0; ; i++) {
      const ok = await new Promise<boolean>((r) => http.get(`${base}/healthz`, (res) => (res.resume(), r(res.statusCode === 200))).on('error', () => r(false)));
      if (ok) break;
      if (i > 600) throw new Error('server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
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
    try {
      process.kill(-server.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    const c = await mariadb.createConnection({ host: '127.0.0.1', user: 'root' });
    await c.query(`DROP DATABASE IF EXISTS \`${dbName}\``);
    await c.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
