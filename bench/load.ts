/**
 * Consistency and bounded work under load (docs/operations.md, "Consistency and load"), against
 * the real server process (`tsx src/main.ts`) on a fresh database, with both cores also kept busy
 * by two CPU burners:
 *   - 20 and 100 concurrent 5 MB uploads: acknowledged / refused busy / other, none half-written,
 *     peak service RSS;
 *   - a 48 MiB session: time to first byte of the markdown, RSS added by 20 concurrent readers;
 *   - the event-loop stall of one 45 MiB upload, seen as the slowest /healthz answer meanwhile.
 * Run: npx tsx bench/load.ts [--no-burn]
 */
import { spawn, type ChildProcess } from 'node:child_process';
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

const MiB = 1024 * 1024;
const JWT_SECRET = 'bench-load-secret-long-enough';
const burn = !process.argv.includes('--no-burn');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function request(url: string, method: string, token: string, body?: Buffer, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; bytes: number; firstByteMs: number; text: string }>((resolve) => {
    const t0 = performance.now();
    const req = http.request(
      url,
      {
        method,
        agent: false,
        headers: {
          Authorization: `Bearer ${token}`,
          ...headers,
          ...(body ? { 'Content-Type': 'application/json', 'Content-Length': String(body.length) } : {}),
        },
      },
      (res) => {
        let bytes = 0;
        let firstByteMs = -1;
        let text = '';
        res.on('data', (c: Buffer) => {
          if (firstByteMs < 0) firstByteMs = performance.now() - t0;
          bytes += c.length;
          if (text.length < 200) text += c.toString('utf8', 0, 200);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, firstByteMs, text }));
        res.on('error', () => resolve({ status: -1, bytes, firstByteMs, text }));
      },
    );
    req.on('error', () => resolve({ status: -1, bytes: 0, firstByteMs: -1, text: '' }));
    req.end(body);
  });
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Samples the RSS of pid every 50 ms while `work` runs; returns its peak. */
async function peakRss<T>(pid: number, work: () => Promise<T>): Promise<[T, number]> {
  let peak = rssMiB(pid);
  const t = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 50);
  try {
    return [await work(), Math.max(peak, rssMiB(pid))];
  } finally {
    clearInterval(t);
  }
}

async function main() {
  const dbName = `sa_bench_load_${crypto.randomBytes(3).toString('hex')}`;
  const dbUrl = `mysql://root@127.0.0.1:3306/${dbName}`;
  await migrate(dbUrl);
  const db = createDb(dbUrl);
  const user = await createUser(operatorCtx(db), 'bench-load@example.test', 'bench');
  const { token } = await createApiKey(operatorCtx(db, { jwtSecret: JWT_SECRET }), { name: 'bench' }, user.id);
  await db.close();

  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-bench-load-'));
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
  const burners: ChildProcess[] = [];
  try {
    for (let i = 0; ; i++) {
      if ((await request(`${base}/healthz`, 'GET', token)).status === 200) break;
      if (i > 600) throw new Error('server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    if (burn) for (let i = 0; i < 2; i++) burners.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
    const pid = server.pid!;
    console.log(`service pid ${pid}, CPU burners: ${burners.length}, idle RSS ${rssMiB(pid).toFixed(0)} MiB\n`);

    const body5 = (i: number) =>
      Buffer.from(JSON.stringify({ name: `u${i}`, markdown: `# ${i}\n` + crypto.randomBytes(2_500_000).toString('hex').slice(0, 5_000_000) }));
    for (const n of [20, 100]) {
      const bodies = Array.from({ length: n }, (_, i) => body5(i));
      const ids = bodies.map(() => crypto.randomUUID());
      const t0 = performance.now();
      const [results, peak] = await peakRss(pid, () =>
        Promise.all(bodies.map((b, i) => request(`${base}/api/v1/projects/load${n}/sessions/${ids[i]}`, 'PUT', token, b))),
      );
      const secs = (performance.now() - t0) / 1000;
      const ack = results.filter((r) => r.status === 201).length;
      const busy = results.filter((r) => r.status === 503 && r.text.includes('Server busy')).length;
      // None half-written: an acknowledged upload reads back whole, a refused one is absent.
      let bad = 0;
      for (let i = 0; i < n; i++) {
        const head = await request(`${base}/api/v1/projects/load${n}/sessions/${ids[i]}`, 'HEAD', token);
        const stored = head.status === 200;
        if (results[i].status === 201 && !stored) bad++;
        if (results[i].status === 503 && stored) bad++;
      }
      console.log(
        `${n} × 5 MB uploads: ${ack} acknowledged, ${busy} busy, ${n - ack - busy} other, ${bad} inconsistent, peak RSS ${peak.toFixed(0)} MiB, ${secs.toFixed(1)} s`,
      );
    }

    // A 48 MiB session (its upload also measures the event-loop stall of a large upload).
    const big = Buffer.from(JSON.stringify({ name: 'big', markdown: 'x'.repeat(45 * MiB) }));
    let slowest = 0;
    let uploading = true;
    const pinger = (async () => {
      while (uploading) {
        const t = performance.now();
        await request(`${base}/healthz`, 'GET', token);
        slowest = Math.max(slowest, performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const bigId = crypto.randomUUID();
    const up = await request(`${base}/api/v1/projects/big/sessions/${bigId}`, 'PUT', token, big);
    uploading = false;
    await pinger;
    console.log(`45 MiB upload: ${up.status}; slowest /healthz meanwhile ${slowest.toFixed(0)} ms (event-loop stall bound)`);

    const bigMd = Buffer.from(JSON.stringify({ name: 'big48', markdown: 'y'.repeat(48 * MiB) }));
    const id48 = crypto.randomUUID();
    await request(`${base}/api/v1/projects/big/sessions/${id48}`, 'PUT', token, bigMd);
    const url48 = `${base}/api/v1/projects/big/sessions/${id48}`;
    const ttfb: number[] = [];
    for (let i = 0; i < 5; i++) ttfb.push((await request(url48, 'GET', token, undefined, { Accept: 'text/markdown' })).firstByteMs);
    ttfb.sort((x, y) => x - y);
    const before = rssMiB(pid);
    const [readers, peak] = await peakRss(pid, () =>
      Promise.all(Array.from({ length: 20 }, () => request(url48, 'GET', token, undefined, { Accept: 'text/markdown' }))),
    );
    const okReads = readers.filter((r) => r.status === 200 && r.bytes === 48 * MiB).length;
    console.log(`48 MiB markdown: first byte median ${ttfb[2].toFixed(0)} ms (min ${ttfb[0].toFixed(0)}, max ${ttfb[4].toFixed(0)})`);
    console.log(`20 concurrent readers of it: ${okReads}/20 complete, RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} MiB (+${(peak - before).toFixed(0)})`);
  } finally {
    for (const b of burners) b.kill('SIGKILL');
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
