/**
 * Where the time of related sessions (src/services/related.ts) goes, step by step, on a corpus
 * kept by `bench/search.ts --keep`: the same callers and sessions as bench/search.ts's
 * relatedSessions row (a different session of the caller per round), each step timed on its own,
 * and every engine request the whole call makes (its path, how many queries it carried, its time).
 *
 *   npx tsx bench/related-steps.ts --reuse=sa_bench_xxx,/tmp/sa-bench-xxx [--rounds=100]
 */
import fs from 'node:fs';
import http from 'node:http';
import { loadConfig } from '../src/config';
import { createDb } from '../src/db/client';
import { createLogger } from '../src/logger';
import { createSearch } from '../src/search';
import { EmbeddedMeili } from '../src/search/embedded/embedded';
import { readMarkdownRange } from '../src/data/content';
import { distinctiveTerms, termCandidates } from '../src/domain/distinctive-terms';
import { membershipsOfUser } from '../src/data/teams';
import { requireReadableSession, scopesFor } from '../src/services/access';
import { relatedSessions } from '../src/services/related';
import { searchSessions } from '../src/services/search';
import { metadataOf, sessionTitle } from '../src/services/sessions';
import type { Ctx, Deps } from '../src/services/context';
import { tuneHeap } from '../src/http/fast/heap';
import { databaseNamed, percentile } from './support';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const reuse = arg('reuse')?.split(',');
if (!reuse || reuse.length !== 2) throw new Error('--reuse=DATABASE,DATA_DIR (kept by bench/search.ts --keep)');
const ROUNDS = Number(arg('rounds') ?? 100);
const log = (s: string) => process.stdout.write(`${s}\n`);
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const now = () => performance.now();

/** Every engine request while `recording`: its path, the queries it carried, its wall time, the engine's own time (`processingTimeMs`). */
const requests: Array<{ path: string; queries: number; ms: number; engineMs: number }> = [];
let recording = false;
const original = http.request;
(http as { request: unknown }).request = (...args: Parameters<typeof http.request>) => {
  const req = original(...args);
  if (!recording) return req;
  const t = now();
  const url = args[0] instanceof URL ? args[0] : new URL(String(args[0]));
  const entry = { path: url.pathname.replace(/indexes\/[^/]+/, 'indexes/*'), queries: 0, ms: 0, engineMs: 0 };
  const write = req.write.bind(req);
  req.write = ((chunk: Buffer, ...rest: never[]) => {
    try {
      const body = JSON.parse(chunk.toString('utf8')) as { queries?: unknown[] };
      entry.queries = body.queries?.length ?? 1;
    } catch {
      entry.queries = 1;
    }
    return write(chunk, ...rest);
  }) as typeof req.write;
  req.on('response', (res) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      entry.ms = now() - t;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { processingTimeMs?: number; results?: Array<{ processingTimeMs?: number }> };
        entry.engineMs = body.processingTimeMs ?? (body.results ?? []).reduce((n, r) => n + (r.processingTimeMs ?? 0), 0);
      } catch {
        // Not JSON: no engine time.
      }
      requests.push(entry);
    });
  });
  return req;
};

async function main() {
  tuneHeap();
  const [dbName, dataDir] = reuse!;
  const db = databaseNamed(dbName);
  const engine = new EmbeddedMeili({ dataDir });
  const recentEngine = new EmbeddedMeili({ dataDir, name: 'meilisearch-recent' });
  await Promise.all([engine.start(), recentEngine.start()]);
  const config = loadConfig({
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    JWT_SECRET: 'bench-secret-that-is-long-enough',
    LOG_LEVEL: 'silent',
    NAMESPACE: db.name,
    MEILI_URL: engine.url!,
    MEILI_MASTER_KEY: engine.masterKey,
    MEILI_RECENT_URL: recentEngine.url!,
    MEILI_RECENT_MASTER_KEY: recentEngine.masterKey,
  });
  const logger = createLogger('silent');
  const handles = createDb(config.databaseUrl);
  const search = createSearch({
    config,
    db: handles,
    logger,
    worker: { batchSize: 500, pollMs: 100, compactEveryMs: Number.MAX_SAFE_INTEGER, recentMax: Number.MAX_SAFE_INTEGER },
  });
  await search.start();
  const deps: Deps = { config, db: handles, logger, search };
  const pool = handles.pool;
  const users = (await pool.query<Array<{ id: string }>>("SELECT id FROM users WHERE email LIKE 'bench%' ORDER BY email")).map((u) => u.id);
  const memberships = new Map<string, string>();
  for (const id of users) memberships.set(id, (await membershipsOfUser(handles.writes, id)).map((m) => `${m.teamId}:${m.role}`).join(','));
  const callerOf = (i: number): Ctx => {
    const id = users[i % users.length];
    return { deps, user: { id, keyId: 'bench', memberships: memberships.get(id) }, log: logger };
  };
  // As bench/search.ts picks them: the i-th caller's i-th session (of its first 50 by id).
  const picks = await Promise.all(
    Array.from({ length: ROUNDS }, async (_, i) => {
      const own = await pool.query<Array<{ projectId: string; id: string }>>('SELECT projectId, id FROM sessions WHERE userId = ? ORDER BY id LIMIT 50', [
        users[i % users.length],
      ]);
      return own[i % own.length];
    }),
  );
  log(`related sessions, step by step: ${dbName}, ${ROUNDS} rounds (load: ${fs.readFileSync('/proc/loadavg', 'utf8').trim()})`);
  // Warm-up: every round once.
  for (let i = 0; i < ROUNDS; i++) await relatedSessions(callerOf(i), picks[i].projectId, picks[i].id, 5);

  const steps: Record<string, number[]> = {};
  const time = async <T>(label: string, fn: () => Promise<T> | T): Promise<T> => {
    const t = now();
    const out = await fn();
    (steps[label] ??= []).push(now() - t);
    return out;
  };
  const perCall: Record<string, number[]> = {};
  for (let i = 0; i < ROUNDS; i++) {
    const ctx = callerOf(i);
    const { projectId, id } = picks[i];
    // The whole call, its engine requests recorded.
    requests.length = 0;
    recording = true;
    await time('relatedSessions (whole call)', () => relatedSessions(ctx, projectId, id, 5));
    recording = false;
    (perCall['engine processingTimeMs, summed'] ??= []).push(requests.reduce((n, r) => n + r.engineMs, 0));
    (perCall['engine requests: longest wall ms'] ??= []).push(Math.round(Math.max(0, ...requests.map((r) => r.ms))));
    const byPath = new Map<string, { n: number; queries: number; ms: number }>();
    for (const r of requests) {
      const e = byPath.get(r.path) ?? { n: 0, queries: 0, ms: 0 };
      e.n++;
      e.queries += r.queries;
      e.ms = Math.max(e.ms, r.ms);
      byPath.set(r.path, e);
    }
    (perCall['engine requests'] ??= []).push(requests.length);
    (perCall['engine queries'] ??= []).push(requests.reduce((n, r) => n + r.queries, 0));
    for (const [p, e] of byPath) {
      (perCall[`  ${p}: requests`] ??= []).push(e.n);
      (perCall[`  ${p}: queries`] ??= []).push(e.queries);
    }
    // Its steps, one by one.
    const row = await time('read the session (access)', () => requireReadableSession(ctx, projectId, id));
    const sample = await time('read the markdown sample', () => readMarkdownRange(handles.reads, projectId, id, 0, Math.min(row.markdownSize, 64 * 1024)));
    const candidates = await time('termCandidates', () =>
      termCandidates([sessionTitle(row), row.name, ...metadataOf(row).tags].join(' '), sample.toString('utf8'), 24),
    );
    const scopes = await time('scopesFor', () => scopesFor(ctx));
    const counts = await time('termCounts (engine)', () =>
      search.termCounts!(
        scopes,
        candidates.map((c) => c.term),
      ),
    );
    const terms = distinctiveTerms(candidates, counts, 8);
    const query = terms.join(' ');
    const opts = { limit: 6, offset: 0, matchingExchanges: true };
    const knownCounts = { documents: counts.documents, holding: new Map(candidates.map((c, i) => [c.term, counts.counts[i] ?? 0])) };
    await time('search, as related asks it', () => searchSessions(ctx, { query, ...opts, knownCounts, countTotal: false, wordForms: false }));
    await time('search: with word forms', () => searchSessions(ctx, { query, ...opts, knownCounts, countTotal: false }));
    await time('search: as an ordinary search (counted, forms, total)', () => searchSessions(ctx, { query, ...opts }));
    // The whole call again, right after the steps (the first one ran before them).
    await time('relatedSessions (whole call), again', () => relatedSessions(ctx, projectId, id, 5));
  }
  for (const [label, xs] of Object.entries(steps)) {
    log(`  ${label.padEnd(48)} p50 ${fmt(percentile(xs, 50)).padStart(6)} ms   p95 ${fmt(percentile(xs, 95)).padStart(6)} ms`);
  }
  log('  per whole call (p50 / max):');
  for (const [label, xs] of Object.entries(perCall)) log(`  ${label.padEnd(48)} ${percentile(xs, 50)} / ${Math.max(...xs)}`);

  await search.stop();
  await handles.close();
  await engine.stop();
  await recentEngine.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
