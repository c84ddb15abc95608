/**
 * Where a REST read's CPU goes: starts the built service (`npm run build` first) under
 * `node --cpu-prof` on a fresh database seeded like bench/run.ts (50 sessions of 20 KB in one
 * project), drives one endpoint with autocannon (or bench/head-load.ts for HEAD), stops the
 * service and prints the top frames by self time, the same grouped by package, and the SQL
 * statements one request costs (MariaDB's Questions delta on an otherwise idle database).
 *   npx tsx bench/profile-rest.ts [list|recent|head|markdown] [--seconds=10] [--connections=50] [--redis] [--baseline] [--no-prof] [--strace] [--heap] [--node-args="--trace-gc"] [--log-level=info] [--url-query=?connection_limit=5] [--tree=/path/to/checkout]
 * --heap: instead of a CPU profile, where the server allocates under the load, every object
 * sampled whether or not it was collected (V8's sampling heap profiler over the inspector), as
 * bytes per request by allocating function: what the garbage collector's share comes from.
 *   npx tsx bench/profile-rest.ts --summarise=<file.cpuprofile>     # just the summary of a profile
 */
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import * as mariadb from 'mariadb';
import { connectionOptions } from '../src/db/client';
import { markdownOfSize } from './corpus-lite';
import { summarise } from './cpu-profile';
import { BenchServer, freePort, freshDatabaseWithUser, request, ROOT } from './support';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;

const send = (base: string, method: string, p: string, token: string, body?: string) => request(new URL(p, base), { method, token, body });

async function main() {
  const given = argv.find((a) => a.startsWith('--summarise='));
  if (given) {
    console.log(summarise(given.slice(12), Number(opt('last', 'Infinity'))).join('\n'));
    return;
  }
  const which = argv.find((a) => !a.startsWith('--')) ?? 'recent';
  const seconds = Number(opt('seconds', '10'));
  const connections = Number(opt('connections', '50'));
  const { db, user } = await freshDatabaseWithUser('sa_prof');
  const token = user.token;
  const pool = mariadb.createPool({ ...connectionOptions(db.url), connectionLimit: 1 });
  const profDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-prof-out-'));
  const baseline = argv.includes('--baseline');
  const heap = argv.includes('--heap');
  const inspectPort = heap ? await freePort() : 0;
  // More flags for the profiled server's node (--node-args="--trace-gc --max-semi-space-size=32").
  const extra = opt('node-args', '').split(' ').filter(Boolean);
  const prof = [...extra, ...(heap ? [`--inspect=127.0.0.1:${inspectPort}`] : argv.includes('--no-prof') ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`])];
  let service: BenchServer | null = null;
  let baselineProc: BenchServer | null = null;
  try {
    service = await BenchServer.start({
      entry: ['dist/src/main.js'],
      // Another checkout's build (an earlier commit's worktree), to compare two trees on the same data.
      cwd: path.resolve(opt('tree', ROOT)),
      nodeArgs: baseline ? [] : prof,
      output: 'stderr',
      ready: '/readyz',
      env: {
        DATABASE_URL: db.url + opt('url-query', ''),
        LOG_LEVEL: opt('log-level', 'info'),
        RATE_LIMIT_REST_PER_HOUR: '1000000000',
        RATE_LIMIT_GRAPHQL_PER_HOUR: '1000000000',
        AUTH_FAILURE_LIMIT: '1000000000',
        ...(argv.includes('--redis') ? { REDIS_URL: 'redis://127.0.0.1:6379', NAMESPACE: db.name } : {}),
      },
    });
    const base = service.url;
    const md = markdownOfSize(20 * 1024, 1);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const id = crypto.randomUUID();
      ids.push(id);
      const body = JSON.stringify({
        name: `session ${i}`,
        markdown: md + `\n\nsession ${i}\n`,
        metadata: { clientName: 'bench', llmModels: ['claude-sonnet-4'], tags: ['bench'] },
      });
      const r = await send(base, 'PUT', `/api/v1/projects/bench-list/sessions/${id}`, token, body);
      if (r.status >= 300) throw new Error(`seed failed: ${r.status} ${r.text}`);
    }
    const paths: Record<string, [string, string, string?]> = {
      list: ['GET', '/api/v1/projects/bench-list/sessions'],
      recent: ['GET', '/api/v1/sessions/recent'],
      head: ['HEAD', `/api/v1/projects/bench-list/sessions/${ids[0]}`],
      markdown: ['GET', `/api/v1/projects/bench-list/sessions/${ids[0]}`, 'text/markdown'],
    };
    const [method, p, accept] = paths[which];
    let target = base;
    if (baseline) {
      // The baseline server instead, profiled the same way (its own SIGTERM handler exits cleanly).
      baselineProc = await BenchServer.start({
        name: 'baseline',
        entry: ['--import', 'tsx', 'bench/baseline-server.ts'],
        nodeArgs: prof,
        output: 'stderr',
        ready: '/',
        readyStatus: () => true,
        // The service's settings: the baseline does their work too (its header comment).
        env: {
          DATABASE_URL: db.url,
          LOG_LEVEL: opt('log-level', 'info'),
          RATE_LIMIT_REST_PER_HOUR: '1000000000',
          AUTH_FAILURE_LIMIT: '1000000000',
          ...(argv.includes('--redis') ? { REDIS_URL: 'redis://127.0.0.1:6379', NAMESPACE: db.name } : {}),
        },
      });
      target = baselineProc.url;
      // The service's profile is not wanted: stop it now.
      await service.stop();
      for (const f of fs.readdirSync(profDir)) fs.rmSync(path.join(profDir, f));
    }
    // Statements per request: the smallest Questions delta of a few single requests (minus our SHOW).
    let statements = Infinity;
    for (let i = 0; i < 5; i++) {
      const q = async () => Number((await pool.query("SHOW GLOBAL STATUS LIKE 'Questions'"))[0].Value);
      const q0 = await q();
      await send(target, method, p, token);
      await new Promise((r) => setTimeout(r, 50));
      statements = Math.min(statements, (await q()) - q0 - 1);
    }
    if (argv.includes('--strace')) {
      // System calls per request: strace counts them over 500 requests (10 at a time, keep-alive).
      const pid = (baselineProc ?? service).pid;
      const tracer = spawn('strace', ['-f', '-c', '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
      let report = '';
      tracer.stderr.on('data', (d) => (report += d));
      await new Promise((r) => setTimeout(r, 1500));
      const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
      let left = 500;
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          while (left-- > 0) {
            await new Promise<void>((resolve, reject) => {
              const req = http.request(
                target + p,
                { method, agent, headers: { Authorization: `Bearer ${token}`, ...(accept ? { Accept: accept } : {}) } },
                (res) => res.resume().on('end', resolve),
              );
              req.on('error', reject).end();
            });
          }
        }),
      );
      agent.destroy();
      await new Promise((r) => setTimeout(r, 500));
      await new Promise<void>((resolve) => (tracer.once('exit', () => resolve()), tracer.kill('SIGINT')));
      console.log(`system calls of ${baseline ? 'the baseline' : 'the service'} over 500 ${which} requests:\n${report}`);
    }
    let load: { rps: number; p50: number; p99: number; non2xx: number };
    // CPU the server spent under the load (user + system, /proc), per request: unlike req/s, it
    // barely moves with what else runs on the machine.
    const serverPid = (baselineProc ?? service).pid;
    const times = () =>
      fs
        .readFileSync(`/proc/${serverPid}/stat`, 'utf8')
        .split(') ')[1]
        .split(' ')
        .slice(11, 13)
        .map((t) => Number(t) * 10);
    const cpuOf = () => times().reduce((a, b) => a + b, 0);
    const user0 = times()[0];
    const cpu0 = cpuOf();
    // The database server's CPU too: the same SQL can cost MariaDB more for one server than the other.
    const dbPid = execFileSync('pidof', ['mariadbd'], { encoding: 'utf8' }).trim().split(/\s+/)[0];
    const dbCpu = () =>
      fs
        .readFileSync(`/proc/${dbPid}/stat`, 'utf8')
        .split(') ')[1]
        .split(' ')
        .slice(11, 13)
        .reduce((a, t) => a + Number(t) * 10, 0);
    const db0 = dbCpu();
    const sampling = heap ? await startHeapSampling(inspectPort) : null;
    if (method === 'HEAD') {
      const out = execFileSync(
        process.execPath,
        [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(ROOT, 'bench/head-load.ts'), target + p, token, String(connections), String(seconds)],
        { encoding: 'utf8' },
      );
      load = JSON.parse(out.trim().split('\n').pop()!);
    } else {
      const args = [
        path.join(ROOT, 'node_modules/autocannon/autocannon.js'),
        '-j',
        '-c',
        String(connections),
        '-d',
        String(seconds),
        '-H',
        `Authorization=Bearer ${token}`,
      ];
      if (accept) args.push('-H', `Accept=${accept}`);
      const r = JSON.parse(execFileSync(process.execPath, [...args, target + p], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
      load = { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors };
    }
    const allocations = sampling ? await sampling.stop() : null;
    const cpuMs = cpuOf() - cpu0;
    const userMs = times()[0] - user0;
    const dbMs = dbCpu() - db0;
    if (baselineProc) await baselineProc.stop();
    console.log(
      `${baseline ? 'BASELINE ' : ''}${which}: ${method} ${p}${accept ? ` (Accept: ${accept})` : ''}${argv.includes('--redis') ? ', rate limits in Redis' : ''}`,
    );
    console.log(
      `${Math.round(load.rps)} req/s, p50 ${load.p50} ms, p99 ${load.p99} ms, non-2xx ${load.non2xx}; ${statements} SQL statements per request; ${((1000 * cpuMs) / (load.rps * seconds)).toFixed(0)} µs CPU per request (${((1000 * userMs) / (load.rps * seconds)).toFixed(0)} µs user); MariaDB ${((1000 * dbMs) / (load.rps * seconds)).toFixed(0)} µs CPU per request`,
    );
    if (allocations) {
      console.log(`\nallocations by function (self), bytes per request, objects collected or not:`);
      for (const line of allocations(load.rps * seconds)) console.log(line);
    }
  } finally {
    await baselineProc?.stop();
    await service?.stop();
    await pool.end();
    await db.drop();
  }
  if (heap) {
    fs.rmSync(profDir, { recursive: true, force: true });
    return;
  }
  const file = fs.readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) {
    fs.rmSync(profDir, { recursive: true, force: true });
    if (argv.includes('--no-prof')) return;
    throw new Error('no profile written');
  }
  const kept = path.join(os.tmpdir(), `sa-prof-${baseline ? 'baseline-' : ''}${which}-${Date.now()}.cpuprofile`);
  fs.renameSync(path.join(profDir, file), kept);
  fs.rmSync(profDir, { recursive: true, force: true });
  console.log(`(profile: ${kept})\n`);
  console.log(summarise(kept, seconds + 1).join('\n'));
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/**
 * V8's sampling heap profiler in the server, over the inspector (node's --inspect port): samples
 * objects as they are allocated, keeping those the GC collects too, so short-lived garbage shows.
 */
async function startHeapSampling(port: number): Promise<{ stop(): Promise<(requests: number) => string[]> }> {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)));
  let next = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  ws.onmessage = (m) => {
    const msg = JSON.parse(String(m.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result);
  };
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = ++next;
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await call('HeapProfiler.enable');
  await call('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return {
    async stop() {
      const { profile } = (await call('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
      ws.close();
      const bytes = new Map<string, number>();
      const walk = (n: SamplingNode) => {
        const { functionName, url, lineNumber } = n.callFrame;
        const where = url.replace(/^file:\/\//, '').replace(/^\/.*?\/(dist|node_modules)\//, '$1/');
        const key = `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim();
        bytes.set(key, (bytes.get(key) ?? 0) + n.selfSize);
        n.children.forEach(walk);
      };
      walk(profile.head);
      return (requests: number) => {
        const total = [...bytes.values()].reduce((a, b) => a + b, 0);
        return [
          `${Math.round(total / requests)} bytes per request in all`,
          ...[...bytes]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 30)
            .map(([k, b]) => `${String(Math.round(b / requests)).padStart(7)}  ${k}`),
        ];
      };
    },
  };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
