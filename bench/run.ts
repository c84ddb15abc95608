/**
 * Benchmarks against baselines measured in the same run. Anyone can run it:
 *   npm run bench              # full sizes (REST: 50 connections × 20 s per endpoint and server, in alternating turns)
 *   npm run bench -- --quick   # every area at small sizes, in well under 3 minutes
 *   npm run bench -- --only=rest,graphql,upload,storage,search
 *   npm run bench -- --only=rest --redis --log-level=warn   # rate limits in Redis; another log level
 *   npm run bench -- --only=relevance   # search relevance on the project's fixture (bench/relevance)
 *   npm run bench -- --only=imports     # imports: event-loop delay, RSS and answer size (bench/imports.ts)
 * The servers run at the service's default log level (`info`: one line per request) with the rate
 * limits in memory (no REDIS_URL), the service's defaults; --redis and --log-level change both
 * the service and the REST baseline.
 * It builds the service, starts it (node dist/src/main.js) and the baseline server as child
 * processes on a fresh database, drives them with autocannon from another process, prints a
 * table per area, and ends with one line per ratio/figure so a regression shows at a glance.
 * No test asserts a timing; numbers live here and in docs/benchmarks.md.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import * as mariadb from 'mariadb';
import { connectionOptions } from '../src/db/client';
import { markdownOfSize } from './corpus-lite';
import { BenchServer, freshDatabaseWithUser, request as send, ROOT, type Reply } from './support';

const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const ONLY = (
  argv
    .find((a) => a.startsWith('--only='))
    ?.slice(7)
    .split(',') ?? ['rest', 'graphql', 'upload', 'storage', 'search']
).map((s) => s.trim());
const DURATION = QUICK ? 3 : 20;
const LOG_LEVEL = argv.find((a) => a.startsWith('--log-level='))?.slice(12) ?? 'info';
const REDIS = argv.includes('--redis');
const CONNECTIONS = 50;
const SECRET = 'bench-secret-' + crypto.randomBytes(8).toString('hex');
const summary: string[] = [];
const STARTED = Date.now();
const elapsed = () => `${Math.round((Date.now() - STARTED) / 1000)} s`;

/** Server output goes to LOG_DIR/<name>.log: removed after a run that finished, kept (and named) after one that failed. */
const LOG_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-bench-logs-'));

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
/** One request; a connection-level failure (a keep-alive socket the server closed while this
 * client idled through a load phase) is retried on a fresh connection. */
const request = (base: string, method: string, p: string, token: string, body?: Buffer, headers: Record<string, string> = {}): Promise<Reply> =>
  send(new URL(p, base), { method, token, body, headers, agent, retries: 2 });

interface Load {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}
function autocannon(url: string, token: string, opts: { method?: string; body?: string; accept?: string; seconds?: number } = {}): Load {
  const seconds = String(opts.seconds ?? DURATION);
  if (opts.method === 'HEAD') {
    // autocannon waits for a body HEAD never sends; bench/head-load.ts drives HEAD the same way.
    const out = execFileSync(
      process.execPath,
      [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(ROOT, 'bench/head-load.ts'), url, token, String(CONNECTIONS), seconds],
      { encoding: 'utf8' },
    );
    return JSON.parse(out.trim().split('\n').pop()!);
  }
  const args = [
    path.join(ROOT, 'node_modules/autocannon/autocannon.js'),
    '-j',
    '-c',
    String(CONNECTIONS),
    '-d',
    seconds,
    '-H',
    `Authorization=Bearer ${token}`,
  ];
  if (opts.method) args.push('-m', opts.method);
  if (opts.accept) args.push('-H', `Accept=${opts.accept}`);
  if (opts.body) args.push('-H', 'Content-Type=application/json', '-b', opts.body);
  args.push(url);
  const out = execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const r = JSON.parse(out);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors };
}

/** Loads of equal length as one: mean req/s, the median turn's p50, the worst turn's p99, all failures. */
function combined(loads: Load[]): Load {
  const p50s = loads.map((l) => l.p50).sort((a, b) => a - b);
  return {
    rps: loads.reduce((a, l) => a + l.rps, 0) / loads.length,
    p50: p50s[Math.floor(p50s.length / 2)],
    p99: Math.max(...loads.map((l) => l.p99)),
    non2xx: loads.reduce((a, l) => a + l.non2xx, 0),
  };
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
function table(title: string, head: string[], rows: (string | number)[][]) {
  title = `${title}   [at ${elapsed()}]`;
  console.log(`\n## ${title}`);
  const all = [head, ...rows.map((r) => r.map(String))];
  const w = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  for (const [i, r] of all.entries()) {
    console.log(r.map((c, j) => c.padEnd(w[j])).join('  '));
    if (i === 0) console.log(w.map((n) => '-'.repeat(n)).join('  '));
  }
}

async function dbQuestions(pool: mariadb.Pool): Promise<number> {
  const [r] = await pool.query("SHOW GLOBAL STATUS LIKE 'Questions'");
  return Number(r.Value);
}

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) * 1024;
}

async function main() {
  console.log(`# Session Archive benchmarks${QUICK ? ' (--quick)' : ''} — ${new Date().toISOString()}`);
  console.log(`settings: LOG_LEVEL=${LOG_LEVEL}, rate limits ${REDIS ? 'in Redis' : 'in memory'}`);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB, node ${process.version}`);
  if (ONLY.some((a) => SERVER_AREAS.includes(a))) await serverAreas();
  if (ONLY.includes('search') && fs.existsSync(path.join(ROOT, 'bench/search.ts'))) searchArea();
  if (ONLY.includes('relevance')) relevanceArea();
  if (ONLY.includes('imports')) importsArea();

  fs.rmSync(LOG_DIR, { recursive: true, force: true });
  console.log('\n## Summary');
  for (const line of summary) console.log(line);
  console.log(`(whole run: ${elapsed()})`);
  // The relevance figure last: the one line to compare with bench/relevance/baseline.json.
  if (relevanceLine) console.log(relevanceLine);
}

/** Areas measured against the built service and the baseline server. */
const SERVER_AREAS = ['rest', 'graphql', 'upload', 'storage', 'search'];

async function serverAreas() {
  console.log('building…');
  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'ignore' });
  console.log(`built [at ${elapsed()}]`);

  const { db, user } = await freshDatabaseWithUser('sa_bench', SECRET);
  const { token } = user;
  const dbName = db.name;
  const pool = mariadb.createPool({ ...connectionOptions(db.url), connectionLimit: 2 });
  const servers: BenchServer[] = [];
  try {
    const service = await BenchServer.start({
      name: 'service',
      entry: ['dist/src/main.js'],
      output: { file: path.join(LOG_DIR, 'service.log') },
      ready: '/readyz',
      env: {
        DATABASE_URL: db.url,
        JWT_SECRET: SECRET,
        RATE_LIMIT_REST_PER_HOUR: '1000000000',
        RATE_LIMIT_GRAPHQL_PER_HOUR: '1000000000',
        AUTH_FAILURE_LIMIT: '1000000000',
        WORKERS_ENABLED: ONLY.includes('search') ? 'true' : 'false',
        LOG_LEVEL,
        ...(REDIS ? { REDIS_URL: 'redis://127.0.0.1:6379', NAMESPACE: db.name } : {}),
      },
    });
    servers.push(service);
    const base = service.url;
    const dataDir = service.dataDir;

    const put = (projectId: string, id: string, md: string, extra: Record<string, unknown> = {}) =>
      request(
        base,
        'PUT',
        `/api/v1/projects/${projectId}/sessions/${id}`,
        token,
        Buffer.from(
          JSON.stringify({
            name: `session ${id.slice(0, 8)}`,
            markdown: md,
            metadata: { clientName: 'bench', llmModels: ['claude-sonnet-4'], tags: ['bench'] },
            ...extra,
          }),
        ),
      );

    if (ONLY.includes('rest')) {
      const md20k = markdownOfSize(20 * 1024, 1);
      const ids: string[] = [];
      for (let i = 0; i < 50; i++) {
        const id = crypto.randomUUID();
        ids.push(id);
        const r = await put('bench-list', id, md20k + `\n\nsession ${i}\n`);
        if (r.status >= 300) throw new Error(`seed failed: ${r.status} ${r.body.toString('utf8')}`);
      }
      const baseline = await BenchServer.start({
        name: 'baseline',
        entry: ['node_modules/tsx/dist/cli.mjs', 'bench/baseline-server.ts'],
        output: { file: path.join(LOG_DIR, 'baseline.log') },
        ready: '/',
        readyStatus: (s) => s < 500,
        // The service's rate limits, log level and Redis (bench/baseline-server.ts does their work too).
        env: {
          DATABASE_URL: db.url,
          JWT_SECRET: SECRET,
          LOG_LEVEL,
          RATE_LIMIT_REST_PER_HOUR: '1000000000',
          AUTH_FAILURE_LIMIT: '1000000000',
          ...(REDIS ? { REDIS_URL: 'redis://127.0.0.1:6379', NAMESPACE: db.name } : {}),
        },
      });
      servers.push(baseline);
      const bport = baseline.port;
      const cases: Array<[string, string, string?]> = [
        ['rest list', '/api/v1/projects/bench-list/sessions'],
        ['rest recent', '/api/v1/sessions/recent'],
        ['rest head', `/api/v1/projects/bench-list/sessions/${ids[0]}`, 'HEAD'],
        ['rest markdown', `/api/v1/projects/bench-list/sessions/${ids[0]}`],
      ];
      const rows: (string | number)[][] = [];
      for (const [name, p, method] of cases) {
        const accept = name === 'rest markdown' ? 'text/markdown' : undefined;
        // Each server's DURATION in SLICES turns, taken alternately after a short warm-up of both:
        // this machine's speed drifts over tens of seconds (other tenants of the host), and one
        // block per server put a whole drift on one side of the ratio.
        const slices = QUICK ? 1 : 4;
        const target = { service: `${base}${p}`, baseline: `http://127.0.0.1:${bport}${p}` };
        if (!QUICK) for (const url of Object.values(target)) autocannon(url, token, { method, accept, seconds: 2 });
        const runs: { service: Load[]; baseline: Load[] } = { service: [], baseline: [] };
        for (let i = 0; i < slices; i++) {
          for (const side of i % 2 === 0 ? (['service', 'baseline'] as const) : (['baseline', 'service'] as const)) {
            runs[side].push(autocannon(target[side], token, { method, accept, seconds: DURATION / slices }));
          }
        }
        const [s, b] = [combined(runs.service), combined(runs.baseline)];
        const ratio = s.rps / b.rps;
        const turns = runs.service.map((r, i) => (r.rps / runs.baseline[i].rps).toFixed(2)).join(' ');
        rows.push([name, fmt(s.rps), fmt(s.p50), fmt(s.p99), s.non2xx, fmt(b.rps), fmt(b.p50), fmt(b.p99), `${ratio.toFixed(2)}x`, turns]);
        summary.push(`${name}: ${ratio.toFixed(2)}x baseline (${fmt(s.rps)} vs ${fmt(b.rps)} req/s)`);
      }
      table(
        `REST reads — ${CONNECTIONS} connections × ${DURATION} s per server (in turns of ${QUICK ? DURATION : DURATION / 4} s, alternating), autocannon in a second process`,
        ['endpoint', 'svc req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'base req/s', 'p50 ms', 'p99 ms', 'ratio', 'ratio per turn'],
        rows,
      );
    }

    if (ONLY.includes('graphql')) {
      const projects = QUICK ? 10 : 50;
      const perProject = QUICK ? 5 : 20;
      const md = markdownOfSize(1024, 2);
      const jobs: Promise<Reply>[] = [];
      for (let p = 0; p < projects; p++) for (let s = 0; s < perProject; s++) jobs.push(put(`gql-${p}`, crypto.randomUUID(), md));
      for (let i = 0; i < jobs.length; i += 20) await Promise.all(jobs.slice(i, i + 20));
      const query = '{ projects { sessionCount lastActivity sessions(limit: 5) { id name project { name } metadata { tags } } } }';
      const body = JSON.stringify({ query });
      const probe = await request(base, 'POST', '/api/v1/graphql', token, Buffer.from(body));
      if (probe.status !== 200) {
        console.log(`\n## GraphQL\nnot available (${probe.status}); skipped`);
      } else {
        // Statements are counted server-wide: let the search worker finish indexing the seeded
        // sessions first, and keep the smallest of a few counts (its idle poll may fall inside one).
        for (let i = 0; i < 300 && Number((await pool.query('SELECT COUNT(*) AS n FROM search_outbox'))[0].n) > 0; i++) {
          await new Promise((r) => setTimeout(r, 100));
        }
        let statements = Infinity;
        for (let i = 0; i < 5; i++) {
          const q0 = await dbQuestions(pool);
          await request(base, 'POST', '/api/v1/graphql', token, Buffer.from(body));
          statements = Math.min(statements, (await dbQuestions(pool)) - q0 - 1); // minus our own SHOW STATUS
        }
        const r = autocannon(`${base}/api/v1/graphql`, token, { method: 'POST', body });
        table(
          `GraphQL batching query — ${projects + 1} projects × ${perProject} sessions`,
          ['req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'SQL statements/request'],
          [[fmt(r.rps), fmt(r.p50), fmt(r.p99), r.non2xx, statements]],
        );
        summary.push(`graphql batching: ${fmt(r.rps)} req/s, p99 ${fmt(r.p99)} ms, ${statements} SQL statements/request`);
      }
    }

    if (ONLY.includes('upload')) {
      const rows: (string | number)[][] = [];
      const sizes: Array<[string, number, number, number]> = QUICK
        ? [
            ['1 KB', 1024, 100, 10],
            ['100 KB', 100 * 1024, 40, 10],
            ['5 MB', 5 * 1024 * 1024, 6, 3],
          ]
        : [
            ['1 KB', 1024, 1000, 10],
            ['100 KB', 100 * 1024, 300, 10],
            ['5 MB', 5 * 1024 * 1024, 40, 4],
          ];
      for (const [label, bytes, count, concurrency] of sizes) {
        const md = markdownOfSize(bytes, 3);
        let next = 0;
        const t0 = process.hrtime.bigint();
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (next < count) {
              next++;
              const r = await put(`upload-${label.replace(' ', '')}`, crypto.randomUUID(), md);
              if (r.status !== 201) throw new Error(`upload failed: ${r.status}`);
            }
          }),
        );
        const secs = Number(process.hrtime.bigint() - t0) / 1e9;
        rows.push([label, count, concurrency, fmt(count / secs, 1), fmt((count * bytes) / secs / 2 ** 20, 1)]);
        summary.push(`upload ${label}: ${fmt(count / secs, 1)} sessions/s, ${fmt((count * bytes) / secs / 2 ** 20, 1)} MB/s`);
      }
      table('Uploads (PUT, new sessions)', ['markdown', 'sessions', 'clients', 'sessions/s', 'MB/s'], rows);
      // Peak RSS while 20 clients upload 5 MB sessions at once.
      const md5 = markdownOfSize(5 * 1024 * 1024, 4);
      const before = rssOf(service.pid);
      let peak = before;
      const sampler = setInterval(() => {
        try {
          peak = Math.max(peak, rssOf(service.pid));
        } catch {
          /* exited */
        }
      }, 20);
      const statuses = await Promise.all(Array.from({ length: 20 }, () => put('upload-rss', crypto.randomUUID(), md5).then((r) => r.status)));
      clearInterval(sampler);
      const okCount = statuses.filter((s) => s === 201).length;
      table(
        'Service memory while 20 clients upload 5 MB at once',
        ['RSS before', 'peak RSS', 'uploads acknowledged'],
        [[`${fmt(before / 2 ** 20)} MiB`, `${fmt(peak / 2 ** 20)} MiB`, `${okCount}/20`]],
      );
      summary.push(`upload peak RSS (20 × 5 MB at once): ${fmt(peak / 2 ** 20)} MiB`);
    }

    if (ONLY.includes('storage')) {
      await pool.query(`ANALYZE TABLE sessions, session_chunks, session_labels, projects`);
      const [{ content }] = await pool.query('SELECT COALESCE(SUM(markdownSize + rawDataSize), 0) AS content FROM sessions');
      const [{ disk }] = await pool.query('SELECT COALESCE(SUM(data_length + index_length), 0) AS disk FROM information_schema.tables WHERE table_schema = ?', [
        dbName,
      ]);
      const meiliDir = path.join(dataDir, 'meilisearch');
      const indexBytes = fs.existsSync(meiliDir) ? Number(execFileSync('du', ['-sb', meiliDir], { encoding: 'utf8' }).split('\t')[0]) : 0;
      table(
        'Storage',
        ['content bytes', 'database bytes', 'db bytes / content byte', 'search index bytes', 'index bytes / content byte'],
        [
          [
            fmt(Number(content)),
            fmt(Number(disk)),
            (Number(disk) / Number(content)).toFixed(2),
            fmt(indexBytes),
            indexBytes ? (indexBytes / Number(content)).toFixed(2) : 'n/a',
          ],
        ],
      );
      summary.push(
        `storage: ${(Number(disk) / Number(content)).toFixed(2)} database bytes per content byte${indexBytes ? `, ${(indexBytes / Number(content)).toFixed(2)} index bytes per content byte` : ''}`,
      );
    }
  } finally {
    // Let the servers drain and exit before their database is dropped under them.
    await Promise.all(servers.map((s) => s.stop(15_000)));
    await pool.end();
    await db.drop();
  }
}

function searchArea() {
  console.log('\n## Search (bench/search.ts)');
  const out = execFileSync(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'bench/search.ts', ...(QUICK ? ['--quick'] : [])], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  process.stdout.write(out);
  let size = '';
  for (const line of out.split('\n')) {
    const m = /^== (\d+) sessions/.exec(line);
    if (m) size = `${m[1]} sessions`;
    if (/^\s+(searchSessions \(with matchingExchanges\)|freshness,)/.test(line)) {
      summary.push(
        `${line
          .trim()
          .replace(/\s+/g, ' ')
          .replace(/ \(target.*$/, '')}${line.includes('freshness') ? '' : ` [${size}]`}`,
      );
    }
  }
}

/** Imports against the event loop, memory and the answer's size (bench/imports.ts), on its own fresh database. */
function importsArea() {
  console.log('\n## Imports (bench/imports.ts)');
  const out = execFileSync(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'bench/imports.ts', ...(QUICK ? ['--quick'] : [])], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  process.stdout.write(out);
  for (const line of out.split('\n')) if (line.startsWith('imports: ')) summary.push(line);
}

let relevanceLine: string | null = null;

/** Search relevance on the project's fixture (bench/relevance/run.ts): recall@k and MRR per kind of question. */
function relevanceArea() {
  const out = execFileSync(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'bench/relevance/run.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  process.stdout.write(out);
  relevanceLine = out.split('\n').find((l) => l.startsWith('relevance: ')) ?? null;
}

main().catch((err) => {
  console.error(err);
  console.error(`(server logs: ${LOG_DIR})`);
  process.exit(1);
});
