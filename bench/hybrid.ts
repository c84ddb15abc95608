/**
 * Hybrid (semantic) search's latency beside lexical search's, on the same sessions and queries:
 * bench-corpus sessions (bench/corpus.ts) uploaded to a service started twice on fresh databases,
 * once as it runs by default (lexical) and once with an embeddings endpoint (EMBEDDINGS_*), each
 * time searched through GraphQL `searchSessions` (the console's page: 20 results, the total) once
 * every document is indexed and, with the endpoint, has its vector (the uploads still in the
 * recent index), and again once compaction has moved them into the main index (~6 minutes).
 *
 * The endpoint is started here: OpenAI-compatible and deterministic (each word hashed into one of
 * `--dims` buckets, normalised), answering at once, so what is measured is the service's and the
 * engine's part: the query's embedding round trip on loopback, the engine's vector search and the
 * federated merge. A real endpoint adds its own time to the first (asked at the same time as the
 * word counts, so only what it takes beyond them).
 *
 *   npx tsx bench/hybrid.ts [--sessions=2000] [--queries=200] [--dims=384]
 *
 * Databases, servers and data dirs are removed at the end (also on failure).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateSession, vocabulary } from './corpus';
import { arg, BenchServer, freshDatabaseWithUser, percentile, request, sleep } from './support';

const SESSIONS = Number(arg('sessions') ?? 2000);
const QUERIES = Number(arg('queries') ?? 200);
const DIMS = Number(arg('dims') ?? 384);
const METRICS_TOKEN = 'bench-metrics-token-long-enough';
const log = (s: string) => process.stdout.write(`${s}\n`);
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

/** A vector of the text's words, each hashed into a bucket, normalised. */
function embed(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const w of text.toLowerCase().match(/[a-z]{4,}/g) ?? []) v[crypto.createHash('md5').update(w).digest().readUInt32BE(0) % DIMS] += 1;
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

function embeddingsServer(): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests++;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; input: string[] };
      const data = body.input.map((t, index) => ({ object: 'embedding', index, embedding: embed(t) }));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/embeddings`,
        requests: () => requests,
        close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
      }),
    ),
  );
}

/** A gauge's value from the service's /metrics (null when absent). */
async function gauge(server: BenchServer, name: string): Promise<number | null> {
  const { text } = await request(`${server.url}/metrics`, { token: METRICS_TOKEN });
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.split(' ').pop()) : null;
}

async function run(label: string, env: Record<string, string>, sessions: Array<{ id: string; name: string; markdown: string }>, queries: string[]) {
  const { db, user } = await freshDatabaseWithUser('sa_bench_hybrid');
  let server: BenchServer | null = null;
  let agent: http.Agent | null = null;
  try {
    const srv = await BenchServer.start({
      env: {
        DATABASE_URL: db.url,
        WORKERS_ENABLED: 'true',
        METRICS_ENABLED: 'true',
        METRICS_TOKEN,
        RATE_LIMIT_REST_PER_HOUR: '1000000',
        RATE_LIMIT_GRAPHQL_PER_HOUR: '1000000',
        ...env,
      },
      output: 'stderr',
      name: label,
    });
    server = srv;
    agent = new http.Agent({ keepAlive: true });
    const as = { token: user.token, agent };
    const t0 = performance.now();
    for (const [i, s] of sessions.entries()) {
      const r = await request(`${srv.url}/api/v1/projects/hybrid-${i % 10}/sessions/${s.id}`, {
        ...as,
        method: 'PUT',
        body: { name: s.name, markdown: s.markdown, rawData: '{}' },
      });
      if (r.status !== 201) throw new Error(`upload answered ${r.status}: ${r.text.slice(0, 200)}`);
    }
    // Every document indexed (the outbox empty) and, with the endpoint, every vector made.
    for (;;) {
      const backlog = await gauge(srv, 'search_outbox_backlog');
      const pending = env.EMBEDDINGS_URL ? await gauge(srv, 'search_embedding_pending') : 0;
      if (backlog === 0 && pending === 0) break;
      await sleep(1000);
    }
    log(`  ${label}: ${sessions.length} sessions uploaded and searchable in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    const query = 'query($q: String!) { searchSessions(query: $q, limit: 20) { total results { projectId sessionId rank snippet } } }';
    const ask = async (q: string) => {
      const r = await request(`${srv.url}/api/v1/graphql`, { ...as, method: 'POST', body: { query, variables: { q } } });
      const body = r.json as { errors?: unknown; data?: { searchSessions: { results: unknown[] } } };
      if (r.status !== 200 || body.errors) throw new Error(`search answered ${r.status}: ${r.text.slice(0, 200)}`);
      return body.data!.searchSessions.results.length;
    };
    const measure = async (when: string) => {
      for (const q of queries.slice(0, 20)) await ask(q); // warm-up
      // What any GraphQL request costs over this transport, for scale.
      const floor: number[] = [];
      for (let i = 0; i < 50; i++) {
        const t = performance.now();
        await request(`${srv.url}/api/v1/graphql`, { ...as, method: 'POST', body: { query: '{ __typename }' } });
        floor.push(performance.now() - t);
      }
      const times: number[] = [];
      let empty = 0;
      for (const q of queries) {
        const t = performance.now();
        if ((await ask(q)) === 0) empty++;
        times.push(performance.now() - t);
      }
      log(
        `  ${`${label}, ${when}`.padEnd(40)} searchSessions p50 ${fmt(percentile(times, 50)).padStart(6)} ms   p95 ${fmt(percentile(times, 95)).padStart(6)} ms   (${empty} of ${queries.length} empty)`,
      );
      log(`  ${''.padEnd(40)} (a GraphQL request of nothing: p50 ${fmt(percentile(floor, 50))} ms)`);
      return percentile(times, 95);
    };
    const fresh = await measure('right after the uploads');
    // Uploads wait in the recent index until compaction moves them (settled a minute, looked at
    // every 5 minutes): measured again once it is empty.
    while ((await gauge(srv, 'search_recent_documents')) !== 0 || (await gauge(srv, 'search_outbox_backlog')) !== 0) await sleep(5000);
    log(`  ${label}: the recent index moved into the main one ${((performance.now() - t0) / 1000).toFixed(0)} s after the first upload`);
    return { fresh, compacted: await measure('all in the main index') };
  } finally {
    agent?.destroy();
    await server?.stop();
    await db.drop();
  }
}

async function main(): Promise<void> {
  const words = vocabulary();
  const sessions = Array.from({ length: SESSIONS }, (_, i) => {
    const s = generateSession(i + 1, words);
    return { id: crypto.randomUUID(), name: s.name, markdown: s.markdown };
  });
  // Queries that hit: two words from one sentence of a session, as bench/search.ts samples them.
  const queries: string[] = [];
  for (let i = 0; queries.length < QUERIES; i = (i + 7) % sessions.length) {
    const sentence = sessions[i].markdown.split(/[.\n]/).filter((x) => x.split(' ').length > 6)[queries.length % 3];
    const ws = sentence?.toLowerCase().match(/[a-z]{4,}/g);
    if (ws && ws.length >= 3) queries.push(`${ws[1]} ${ws[2]}`);
  }
  const endpoint = await embeddingsServer();
  try {
    log(`hybrid search: ${SESSIONS} sessions, ${QUERIES} two-word queries, embeddings of ${DIMS} dimensions (a local deterministic endpoint)`);
    const lexical = await run('lexical', {}, sessions, queries);
    const hybrid = await run(
      'hybrid',
      { EMBEDDINGS_URL: endpoint.url, EMBEDDINGS_MODEL: 'bench-embed', EMBEDDINGS_DIMENSIONS: String(DIMS), EMBEDDINGS_PER_MINUTE: '1000000' },
      sessions,
      queries,
    );
    log(
      `  hybrid p95 / lexical p95: ${(hybrid.fresh / lexical.fresh).toFixed(2)}× right after the uploads, ${(hybrid.compacted / lexical.compacted).toFixed(2)}× all in the main index; endpoint requests ${endpoint.requests()}`,
    );
  } finally {
    await endpoint.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
