/**
 * The rule "Large reads stream": 10 concurrent REST JSON reads (`GET …/sessions/{id}`, which
 * carries the markdown as `markdownContent`) of a 45 MiB session, against the real server process
 * (`tsx src/main.ts`, search worker off so indexing does not share the CPU) on a fresh database.
 * Prints, per read, the time to the first byte of the body and to the last, and checks every
 * answer parses to the uploaded markdown.
 * Run: npx tsx bench/json-reads.ts [--readers=10] [--rounds=3]
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
const JWT_SECRET = 'bench-json-reads-secret-long-enough';
const arg = (name: string, dflt: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const READERS = arg('readers', 10);
const ROUNDS = arg('rounds', 3);

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

/** One JSON read: ms to the first body byte and to the end, and the parsed markdown's digest. */
function timedRead(url: string, token: string): Promise<{ status: number; firstByte: number; total: number; digest: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let firstByte = -1;
    const req = http.request(url, { method: 'GET', agent: false, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        if (firstByte < 0) firstByte = performance.now() - t0;
        chunks.push(c);
      });
      res.on('end', () => {
        const total = performance.now() - t0;
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const md = body?.data?.session?.markdownContent ?? '';
        resolve({ status: res.statusCode ?? 0, firstByte, total, digest: crypto.createHash('sha256').update(md).digest('hex') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function main() {
  const markdown = markdownOfSize(45 * MiB, 3);
  const digest = crypto.createHash('sha256').update(markdown).digest('hex');
  const dbName = `sa_bench_json_${crypto.randomBytes(3).toString('hex')}`;
  const dbUrl = `mysql://root@127.0.0.1:3306/${dbName}${process.env.BENCH_DB_QUERY ?? ''}`;
  await migrate(dbUrl);
  const db = createDb(dbUrl);
  const user = await createUser(operatorCtx(db), 'bench-json@example.test', 'bench');
  const { token } = await createApiKey(operatorCtx(db, { jwtSecret: JWT_SECRET }), { name: 'bench' }, user.id);
  await db.close();
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-bench-json-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: dbUrl,
    PORT: String(port),
    DATA_DIR: dataDir,
    JWT_SECRET,
    LOG_LEVEL: 'warn',
    MEILI_URL: '',
    WORKERS_ENABLED: 'false',
  };
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
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
    const sid = crypto.randomUUID();
    const up = await request(`${base}/api/v1/projects/big/sessions/${sid}`, 'PUT', token, Buffer.from(JSON.stringify({ name: 'big', markdown })));
    if (up.status !== 201) throw new Error(`upload answered ${up.status}: ${up.text.slice(0, 200)}`);
    const url = `${base}/api/v1/projects/big/sessions/${sid}`;
    await timedRead(url, token); // warm-up
    console.log(
      `${READERS} concurrent JSON reads of a ${(Buffer.byteLength(markdown) / MiB).toFixed(1)} MiB session, ${ROUNDS} rounds; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    const firsts: number[] = [];
    const totals: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const rs = await Promise.all(Array.from({ length: READERS }, () => timedRead(url, token)));
      for (const r of rs) {
        if (r.status !== 200 || r.digest !== digest) throw new Error(`a read answered ${r.status} or other markdown`);
        firsts.push(r.firstByte);
        totals.push(r.total);
      }
      console.log(
        `round ${round + 1}: first byte ${rs.map((r) => r.firstByte.toFixed(0)).join(', ')} ms; complete ${rs.map((r) => (r.total / 1000).toFixed(1)).join(', ')} s`,
      );
    }
    console.log(
      `first byte: median ${pct(firsts, 50).toFixed(0)} ms, max ${Math.max(...firsts).toFixed(0)} ms; complete: median ${(pct(totals, 50) / 1000).toFixed(1)} s, max ${(Math.max(...totals) / 1000).toFixed(1)} s`,
    );
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
