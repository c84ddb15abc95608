/**
 * What the engine spends on the requests of related sessions (src/services/related.ts), on a
 * corpus kept by `bench/search.ts --keep`: for the sessions bench/search.ts picks, the counting
 * request of the 24 candidate words (as src/search/engine/term-counts.ts asks it), the search's
 * own counting request of the 8 chosen words (planned-page.ts wordCounts) and its federated page,
 * each timed by the engine (`processingTimeMs`) and by the wall clock, on the main index.
 *
 *   npx tsx bench/related-engine-work.ts --reuse=sa_bench_xxx,/tmp/sa-bench-xxx [--rounds=60]
 */
import { Meilisearch } from 'meilisearch';
import { EmbeddedMeili } from '../src/search/embedded/embedded';
import { createDb } from '../src/db/client';
import { readMarkdownRange } from '../src/data/content';
import { distinctiveTerms, termCandidates } from '../src/domain/distinctive-terms';
import { createNodeHttpClient } from '../src/search/engine/http-client';
import { indexUidOf } from '../src/search/engine/index-settings';
import { scopeFilter } from '../src/search/engine/filter';
import { pageAttributes } from '../src/search/engine/adapter';
import { federatedPage, federatedQueries, wordCounts } from '../src/search/engine/planned-page';
import { planQuery } from '../src/search/engine/query-plan';
import { termCounts } from '../src/search/engine/term-counts';
import type { MeiliConnection } from '../src/search/engine/connection';
import { databaseNamed, percentile } from './support';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const reuse = arg('reuse')?.split(',');
if (!reuse || reuse.length !== 2) throw new Error('--reuse=DATABASE,DATA_DIR (kept by bench/search.ts --keep)');
const ROUNDS = Number(arg('rounds') ?? 60);
const log = (s: string) => process.stdout.write(`${s}\n`);
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const now = () => performance.now();

async function main() {
  const [dbName, dataDir] = reuse!;
  const handles = createDb(databaseNamed(dbName).url);
  const pool = handles.pool;
  const users = (await pool.query<Array<{ id: string }>>("SELECT id FROM users WHERE email LIKE 'bench%' ORDER BY email")).map((u) => u.id);
  const engine = new EmbeddedMeili({ dataDir });
  await engine.start();
  const client = new Meilisearch({ host: engine.url!, apiKey: engine.masterKey, httpClient: createNodeHttpClient() });
  const conn = { searcher: () => client } as unknown as MeiliConnection;
  const uid = indexUidOf(dbName);
  const rows: Record<string, number[]> = {};
  const add = (label: string, ms: number) => (rows[label] ??= []).push(ms);
  for (let pass = 0; pass < 2; pass++) {
    for (const k of Object.keys(rows)) delete rows[k];
    for (let i = 0; i < ROUNDS; i++) {
      const user = users[i % users.length];
      const own = await pool.query<Array<{ projectId: string; id: string; name: string; markdownSize: number }>>(
        'SELECT projectId, id, name, markdownSize FROM sessions WHERE userId = ? ORDER BY id LIMIT 50',
        [user],
      );
      const s = own[i % own.length];
      const sample = await readMarkdownRange(handles.reads, s.projectId, s.id, 0, Math.min(s.markdownSize, 64 * 1024));
      const candidates = termCandidates(s.name, sample.toString('utf8'), 24);
      const scopes = [user];
      const filter = scopeFilter(scopes);
      // The candidates' counting request, and its queries one by one (engine time).
      let t = now();
      const counts = await termCounts(
        conn,
        uid,
        scopes,
        candidates.map((c) => c.term),
      );
      add('termCounts: 25 count queries, wall', now() - t);
      const each = (await client.multiSearch({
        queries: ['', ...candidates.map((c) => `"${c.term}"`)].map((q) => ({ indexUid: uid, q, filter, limit: 0, attributesToRetrieve: [] })),
      })) as { results: Array<{ processingTimeMs: number }> };
      add(
        'termCounts: sum of its queries processingTimeMs',
        each.results.reduce((n, r) => n + r.processingTimeMs, 0),
      );
      add('termCounts: its "" query processingTimeMs', each.results[0].processingTimeMs);
      t = now();
      await client.multiSearch({
        queries: candidates.map((c) => ({ indexUid: uid, q: `"${c.term}"`, filter, limit: 0, attributesToRetrieve: [] })),
      });
      add('termCounts without the "" query, wall', now() - t);
      t = now();
      await client.multiSearch({
        queries: candidates.map((c) => ({ indexUid: uid, q: c.term, filter, limit: 0, attributesToRetrieve: [] })),
      });
      add('24 count queries unquoted, wall', now() - t);
      t = now();
      await client.multiSearch({
        queries: candidates.map((c) => ({ indexUid: uid, q: `"${c.term}"`, limit: 0, attributesToRetrieve: [] })),
      });
      add('24 count queries, no filter, wall', now() - t);
      for (const parts of [1, 2, 3, 4]) {
        t = now();
        await termCounts(
          conn,
          uid,
          scopes,
          candidates.map((c) => c.term),
          parts,
        );
        add(`termCounts in ${parts} requests at once, wall`, now() - t);
      }
      t = now();
      await Promise.all(
        [0, 1, 2, 3].map((part) =>
          client.multiSearch({
            queries: candidates.filter((_, j) => j % 4 === part).map((c) => ({ indexUid: uid, q: `"${c.term}"`, filter, limit: 0, attributesToRetrieve: [] })),
          }),
        ),
      );
      add('24 count queries in 4 parallel requests, wall', now() - t);
      const query = distinctiveTerms(candidates, counts, 8).join(' ');
      const plan = planQuery(query);
      t = now();
      const wc = await wordCounts(client, uid, plan, filter);
      add('search: wordCounts (8 words + forms), wall', now() - t);
      const federated = federatedQueries(plan, wc)!;
      add('search: federated queries', federated.length);
      const params = { filter, distinct: 'sessionDigest', showRankingScore: true, attributesToRetrieve: pageAttributes(true) };
      t = now();
      await federatedPage(client, uid, federated, params, 0, 6);
      add('search: federatedPage (limit 6), wall', now() - t);
      t = now();
      await federatedPage(
        client,
        uid,
        federated.filter((q) => !q.forms),
        params,
        0,
        6,
      );
      add('search: federatedPage without forms queries, wall', now() - t);
      t = now();
      const fed = (await client.multiSearch({
        federation: { limit: 6, offset: 0 },
        queries: federated.map((q) => ({
          indexUid: uid,
          q: q.q,
          matchingStrategy: q.matchingStrategy,
          filter,
          distinct: 'sessionDigest',
          federationOptions: { weight: q.weight },
          attributesToRetrieve: pageAttributes(true),
          showRankingScore: true,
        })),
      } as never)) as { processingTimeMs: number };
      add('search: federated page without facets, wall', now() - t);
      add('search: federated page without facets, processingTimeMs', fed.processingTimeMs);
      t = now();
      await client.multiSearch({
        federation: { limit: 6, offset: 0 },
        queries: federated
          .filter((q) => !q.forms && q.weight < 1)
          .map((q) => ({
            indexUid: uid,
            q: q.q,
            matchingStrategy: q.matchingStrategy,
            filter,
            distinct: 'sessionDigest',
            federationOptions: { weight: q.weight },
            attributesToRetrieve: pageAttributes(true),
            showRankingScore: true,
          })),
      } as never);
      add('search: only the single-word queries, no facets, wall', now() - t);
      t = now();
      await client
        .index(uid)
        .search(plan.q, { filter, distinct: 'sessionDigest', matchingStrategy: 'last', limit: 6, attributesToRetrieve: pageAttributes(true) });
      add('search: the whole query alone (last), wall', now() - t);
      t = now();
      await client
        .index(uid)
        .search(plan.q, { filter, distinct: 'sessionDigest', matchingStrategy: 'frequency', limit: 6, attributesToRetrieve: pageAttributes(true) });
      add('search: the whole query alone (frequency), wall', now() - t);
    }
    log(`pass ${pass + 1}${pass === 0 ? ' (warm-up)' : ''}`);
  }
  log(`related, engine work: ${dbName}, ${ROUNDS} rounds, main index only`);
  for (const [label, xs] of Object.entries(rows)) {
    log(`  ${label.padEnd(56)} p50 ${fmt(percentile(xs, 50)).padStart(6)}   p95 ${fmt(percentile(xs, 95)).padStart(6)}`);
  }
  await handles.close();
  await engine.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
