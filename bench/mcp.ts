/**
 * MCP benchmark: search_sessions (the MCP tool, through the official SDK's client over HTTP)
 * against GraphQL searchSessions (over HTTP, the same query, page size and fields an agent gets:
 * snippet, matching exchanges, project name), and gather_context, on one corpus.
 *
 *   npx tsx bench/mcp.ts                      # 2,000 sessions, 200 queries
 *   npx tsx bench/mcp.ts --sessions=100000 --queries=300
 *
 * A fresh database on TEST_DATABASE_ROOT_URL and an embedded Meilisearch in a temp DATA_DIR,
 * both removed at the end. Corpus: bench/corpus.ts (as bench/search.ts), 10 users × 10 projects,
 * two-word queries sampled from the corpus. Targets: search_sessions p95 within 20 ms of GraphQL's;
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
import { createKeyForUser } from '../src/services/keys';
import { createTestDatabase } from '../test/support/db';
import { generateSession, rng, vocabulary } from './corpus';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const SESSIONS = Number(arg('sessions') ?? 2000);
const QUERIES = Number(arg('queries') ?? 200);
const USERS = 10;
const PROJECTS_PER_USER = 10;
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const log = (s: string) => process.stdout.write(`${s}\n`);

async function main() {
  const db = await createTestDatabase('sa_bench_mcp');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-bench-mcp-'));
  const config = loadConfig({ DATABASE_URL: db.url, DATA_DIR: dataDir, JWT_SECRET: 'bench-secret-that-is-long-enough', LOG_LEVEL: 'silent', NAMESPACE: db.name });
  const deps = createDeps(config, createLogger('silent'));
  let server: http.Server | null = null;
  let stop: (() => Promise<void>) | null = null;
  try {
    await deps.start();
    const pool = deps.db.pool;
    const users = Array.from({ length: USERS }, (_, i) => ({ id: crypto.randomUUID(), email: `bench${i}@example.test` }));
    await pool.query(`INSERT INTO users (id, email) VALUES ${users.map(() => '(?, ?)').join(', ')}`, users.flatMap((u) => [u.id, u.email]));
    const projects = users.flatMap((u) => Array.from({ length: PROJECTS_PER_USER }, (_, j) => ({ id: `p-${u.id.slice(0, 8)}-${j}`, ownerId: u.id })));
    await pool.query(
      `INSERT INTO projects (id, ownerId, name, icon, color) VALUES ${projects.map(() => "(?, ?, ?, 'Code2', 'blue')").join(', ')}`,
      projects.flatMap((p) => [p.id, p.ownerId, p.id]),
    );
    const words = vocabulary();
    const r = rng(2024);
    const queries: Array<{ user: number; q: string }> = [];
    const t0 = performance.now();
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
      await pool.query(
        `INSERT INTO sessions (projectId, id, userId, name, markdownSize, rawDataSize, etag, contentDigest, createdAt, updatedAt, startedAt, endedAt, clientName, metadataJson)
         VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
        batch.flatMap((s) => [
          s.projectId, s.id, s.userId, s.name, s.md.length, 0, `W/"${s.id}"`, crypto.createHash('sha256').update(s.md).digest('hex'), s.created, s.created, s.created, s.created,
          'claude-code', JSON.stringify({ llmModels: s.llmModels, tags: s.tags, gitBranches: [], extra: {} }),
        ]),
      );
      await pool.query(
        `INSERT INTO session_chunks (projectId, sessionId, part, seq, data) VALUES ${batch.map(() => "(?, ?, 'markdown', 0, ?), (?, ?, 'raw', 0, '')").join(', ')}`,
        batch.flatMap((s) => [s.projectId, s.id, s.md, s.projectId, s.id]),
      );
      await pool.query(
        `INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES ${batch.map(() => "('compact', ?, ?, ?)").join(', ')}`,
        batch.flatMap((s) => [s.userId, s.projectId, s.id]),
      );
      deps.search.notify();
    }
    while ((await deps.search.backlog()) > 0) await new Promise((res) => setTimeout(res, 500));
    log(`mcp benchmark: ${SESSIONS} sessions loaded and indexed in ${((performance.now() - t0) / 1000).toFixed(0)} s; ${QUERIES} queries`);

    const built = await buildApp(deps, {});
    stop = built.stop;
    server = http.createServer(built.app);
    await new Promise<void>((res) => server!.listen(0, '127.0.0.1', res));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tokens = await Promise.all(users.map(async (u) => (await createKeyForUser(deps.db, config.jwtSecret, u.id, 'bench')).token));
    const clients = await Promise.all(
      tokens.map(async (token) => {
        const c = new Client({ name: 'bench', version: '1' });
        await c.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
        return c;
      }),
    );
    const GQL = `query($q: String!) { searchSessions(query: $q, limit: 8) { total results { projectId sessionId name userTitle updatedAt snippet project { name } matchingExchanges { exchange content } } } }`;
    const graphql = async (user: number, q: string) => {
      const res = await fetch(`${url}/api/v1/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tokens[user]}` }, body: JSON.stringify({ query: GQL, variables: { q } }) });
      const body = (await res.json()) as { errors?: unknown };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
    };
    const tool = async (user: number, name: string, args: Record<string, unknown>) => {
      const res = await clients[user].callTool({ name, arguments: args });
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
    // Interleaved rounds so that the machine's load hits both alike.
    const gq: number[] = [];
    const mq: number[] = [];
    for (let round = 0; round < 2; round++) {
      gq.push(...(await time((x) => graphql(x.user, x.q))));
      mq.push(...(await time((x) => tool(x.user, 'search_sessions', { query: x.q }))));
    }
    const gc = await time((x) => tool(x.user, 'gather_context', { question: x.q }));
    const row = (label: string, xs: number[]) => `  ${label.padEnd(36)} p50 ${fmt(percentile(xs, 50)).padStart(6)} ms   p95 ${fmt(percentile(xs, 95)).padStart(6)} ms`;
    log(row('GraphQL searchSessions', gq));
    log(row('MCP search_sessions', mq));
    log(`  difference of p95: ${fmt(percentile(mq, 95) - percentile(gq, 95))} ms (target <= 20 ms)`);
    log(row('MCP gather_context', gc));
    log(`  gather_context p95 < 1 s: ${percentile(gc, 95) < 1000 ? 'met' : 'NOT met'}`);
    await Promise.all(clients.map((c) => c.close()));
  } finally {
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((res) => server!.close(() => res()));
    }
    await stop?.();
    await deps.close();
    await db.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
