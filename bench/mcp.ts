/**
 * MCP benchmark: search_sessions (the MCP tool, through the official SDK's client over HTTP)
 * against GraphQL searchSessions (over HTTP, the same query, page size and fields an agent gets:
 * snippet, matching exchanges, project name), and gather_context, on one corpus.
 *
 *   npx tsx bench/mcp.ts                      # 2,000 sessions, 200 queries
 *   npx tsx bench/mcp.ts --sessions=20000 --queries=300
 *   npx tsx bench/search.ts --sizes=100000 --freshness=0 --load-memory=2GiB --keep   # ~35 min, then:
 *   npx tsx bench/mcp.ts --reuse=<database>,<data dir> --queries=300                 # 100k sessions
 *   … --with-fetch                           # also both over Node's global fetch (its loopback stall)
 *
 * A fresh database on TEST_DATABASE_ROOT_URL and an embedded Meilisearch in a temp DATA_DIR,
 * both removed at the end; or (--reuse) a corpus bench/search.ts kept with --keep, measured as it
 * is (API keys are added for its users; nothing else is written or dropped). Corpus:
 * bench/corpus.ts (as bench/search.ts), 10 users × 10 projects, two-word queries sampled from the
 * corpus. Both doors are called over node:http keep-alive (the SDK's client through a fetch made
 * of node:http): Node's global fetch stalls ~45 ms on some multi-KB loopback answers, which would
 * measure the client, not the service. Targets: search_sessions p95 within 20 ms of GraphQL's;
 * gather_context p95 < 1 s.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildApp } from '../src/app';
import { loadConfig } from '../src/config';
import { createDeps } from '../src/deps';
import { createLogger } from '../src/logger';
import { createApiKey } from '../src/services/keys';
import { operatorCtx } from '../src/services/context';
import { databaseNamed, freshDatabase, nodeFetch as makeNodeFetch, percentile, type BenchDatabase } from './support';
import { generateSession, insertCorpus, rng, vocabulary } from './corpus';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const reuse = arg('reuse')?.split(',');
/** Written to the data dir by bench/search.ts --keep: the queries it sampled while loading. */
const QUERIES_FILE = 'bench-queries.json';
if (reuse && (reuse.length !== 2 || !fs.existsSync(path.join(reuse[1], QUERIES_FILE)))) {
  throw new Error(`--reuse=DATABASE,DATA_DIR: a database and data dir kept by bench/search.ts --keep (with ${QUERIES_FILE})`);
}
const withFetch = process.argv.includes('--with-fetch');
const SESSIONS = Number(arg('sessions') ?? 2000);
const QUERIES = Number(arg('queries') ?? 200);
const USERS = 10;
const PROJECTS_PER_USER = 10;
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const log = (s: string) => process.stdout.write(`${s}\n`);

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
/** A fetch made of node:http keep-alive (for the SDK's client and GraphQL alike). */
const nodeFetch = makeNodeFetch(agent);

async function main() {
  const db: BenchDatabase = reuse ? databaseNamed(reuse[0]) : await freshDatabase('sa_bench_mcp');
  const dataDir = reuse ? reuse[1] : fs.mkdtempSync(path.join(os.tmpdir(), 'sa-bench-mcp-'));
  // A kept corpus is measured as it is: no search worker (at start it would queue a refill of the
  // whole index, an hour of indexing at 100k on this machine).
  const config = loadConfig({
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    JWT_SECRET: 'bench-secret-that-is-long-enough',
    LOG_LEVEL: 'silent',
    NAMESPACE: db.name,
    ...(reuse ? { WORKERS_ENABLED: 'false' } : {}),
  });
  const deps = createDeps(config, createLogger('silent'));
  let server: http.Server | null = null;
  let stop: (() => Promise<void>) | null = null;
  try {
    await deps.start();
    const pool = deps.db.pool;
    let users: Array<{ id: string; email: string }>;
    const queries: Array<{ user: number; q: string }> = [];
    const t0 = performance.now();
    if (reuse) {
      users = await pool.query('SELECT id, email FROM users ORDER BY email');
      // As bench/search.ts asks them: the i-th query by the i-th user in turn.
      const kept: string[] = JSON.parse(fs.readFileSync(path.join(dataDir, QUERIES_FILE), 'utf8'));
      kept.forEach((q, i) => queries.push({ user: i % users.length, q }));
    } else {
      users = Array.from({ length: USERS }, (_, i) => ({ id: crypto.randomUUID(), email: `bench${i}@example.test` }));
      await loadCorpus(pool, users, queries);
      deps.search.notify();
    }
    while (!reuse && (await deps.search.backlog()) > 0) await new Promise((res) => setTimeout(res, 500));
    const [{ n }] = await pool.query('SELECT COUNT(*) AS n FROM sessions');
    log(`mcp benchmark: ${n} sessions ${reuse ? 'reused' : 'loaded and indexed'} in ${((performance.now() - t0) / 1000).toFixed(0)} s; ${QUERIES} queries`);

    const built = await buildApp(deps, {});
    stop = () => built.stop();
    server = http.createServer(built.app);
    await new Promise<void>((res) => server!.listen(0, '127.0.0.1', res));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tokens = await Promise.all(
      users.map(async (u) => (await createApiKey(operatorCtx(deps.db, { jwtSecret: config.jwtSecret }), { name: 'bench' }, u.id)).token),
    );
    const connect = async (token: string, f: typeof fetch) => {
      const c = new Client({ name: 'bench', version: '1' });
      await c.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { fetch: f, requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      return c;
    };
    const clients = await Promise.all(tokens.map((t) => connect(t, nodeFetch)));
    const fetchClients = withFetch ? await Promise.all(tokens.map((t) => connect(t, fetch))) : [];
    const GQL = `query($q: String!) { searchSessions(query: $q, limit: 8) { total results { projectId sessionId name userTitle updatedAt snippet project { name } matchingExchanges { exchange content } } } }`;
    const graphql = async (user: number, q: string, f: typeof fetch = nodeFetch) => {
      const res = await f(`${url}/api/v1/graphql`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tokens[user]}` },
        body: JSON.stringify({ query: GQL, variables: { q } }),
      });
      const body = (await res.json()) as { errors?: unknown };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
    };
    const tool = async (c: Client, name: string, args: Record<string, unknown>) => {
      const res = await c.callTool({ name, arguments: args });
      if (res.isError) throw new Error(JSON.stringify(res.content));
    };
    const picked = Array.from({ length: QUERIES }, (_, i) => queries[i % queries.length]);
    const time = async (fn: (x: { user: number; q: string }) => Promise<void>) => {
      for (const x of picked.slice(0, 20)) await fn(x); // warm-up
      const xs: number[] = [];
      for (const x of picked) {
        const t = performance.now();
        await fn(x);
        xs.push(performance.now() - t);
      }
      return xs;
    };
    // Every query once first: an engine just restarted on a kept corpus reads its pages from disk.
    for (const x of picked) await graphql(x.user, x.q);
    // Interleaved rounds so that the machine's load hits both alike.
    const gq: number[] = [];
    const mq: number[] = [];
    const gf: number[] = [];
    const mf: number[] = [];
    for (let round = 0; round < 2; round++) {
      gq.push(...(await time((x) => graphql(x.user, x.q))));
      mq.push(...(await time((x) => tool(clients[x.user], 'search_sessions', { query: x.q }))));
      if (withFetch) {
        gf.push(...(await time((x) => graphql(x.user, x.q, fetch))));
        mf.push(...(await time((x) => tool(fetchClients[x.user], 'search_sessions', { query: x.q }))));
      }
    }
    const gc = await time((x) => tool(clients[x.user], 'gather_context', { question: x.q }));
    const row = (label: string, xs: number[]) =>
      `  ${label.padEnd(44)} p50 ${fmt(percentile(xs, 50)).padStart(6)} ms   p95 ${fmt(percentile(xs, 95)).padStart(6)} ms`;
    log(row('GraphQL searchSessions', gq));
    log(row('MCP search_sessions', mq));
    log(
      `  difference of p95: ${fmt(percentile(mq, 95) - percentile(gq, 95))} ms, of p50: ${fmt(percentile(mq, 50) - percentile(gq, 50))} ms (target: p95 within 20 ms)`,
    );
    if (withFetch) {
      log(row('GraphQL searchSessions, global fetch', gf));
      log(row('MCP search_sessions, SDK client on global fetch', mf));
    }
    log(row('MCP gather_context', gc));
    log(`  gather_context p95 < 1 s: ${percentile(gc, 95) < 1000 ? 'met' : 'NOT met'}`);
    await Promise.all([...clients, ...fetchClients].map((c) => c.close()));
  } finally {
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((res) => server!.close(() => res()));
    }
    await stop?.();
    await deps.close();
    agent.destroy();
    if (!reuse) {
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
}

/** The corpus of bench/search.ts (rows, content and outbox rows in bulk); samples queries as it goes. */
async function loadCorpus(
  pool: ReturnType<typeof createDeps>['db']['pool'],
  users: Array<{ id: string; email: string }>,
  queries: Array<{ user: number; q: string }>,
) {
  const projects = users.flatMap((u) => Array.from({ length: PROJECTS_PER_USER }, (_, j) => ({ id: `p-${u.id.slice(0, 8)}-${j}`, ownerId: u.id })));
  await insertCorpus(pool, { users, projects });
  const words = vocabulary();
  const r = rng(2024);
  for (let start = 0; start < SESSIONS; start += 500) {
    const batch = Array.from({ length: Math.min(500, SESSIONS - start) }, (_, i) => {
      const seed = start + i + 1;
      const s = generateSession(seed, words);
      const pi = seed % projects.length;
      const project = projects[pi];
      if (queries.length < 2000 && r() < 0.2) {
        const sentence = s.markdown.split(/[.\n]/).filter((x) => x.split(' ').length > 6)[0];
        const ws = sentence?.toLowerCase().match(/[a-z]{4,}/g);
        if (ws && ws.length >= 3) queries.push({ user: Math.floor(pi / PROJECTS_PER_USER), q: `${ws[1]} ${ws[2]}` });
      }
      const created = new Date(Date.now() - Math.floor(r() * 90 * 86400_000));
      return { ...s, id: crypto.randomUUID(), projectId: project.id, userId: project.ownerId, created, md: Buffer.from(s.markdown) };
    });
    await insertCorpus(pool, { sessions: batch, outbox: 'compact' });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
