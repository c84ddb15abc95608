/**
 * Where a several-word search's engine time goes (src/search/engine/planned-page.ts): on a corpus
 * kept by `bench/search.ts --keep`, each of a user's queries (without teams) is asked of the main
 * index as the service asks it, and in variants of that request, interleaved (query i in every
 * variant, then query i + 1) after one warm-up pass. The word counts are asked once per query
 * beforehand and not timed (but by the variants that time them). Wall times, engine only. It also
 * prints for how many queries the total needs the large sessions counted (planned-page.ts).
 *
 *   npx tsx bench/federated-work.ts --reuse=sa_bench_xxx,/tmp/sa-bench-xxx [--queries=300] [--member]
 *
 * `--member`: the queries of a member of every team instead (their own scope and every team's:
 * half of the corpus readable), as bench/search.ts's member rows ask them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Meilisearch, type SearchParams } from 'meilisearch';
import { EmbeddedMeili } from '../src/search/embedded/embedded';
import { pageAttributes } from '../src/search/engine/adapter';
import { countedPage } from '../src/search/engine/counted-page';
import { searchFilter } from '../src/search/engine/filter';
import { createNodeHttpClient } from '../src/search/engine/http-client';
import { indexUidOf } from '../src/search/engine/index-settings';
import {
  federatedPage,
  federatedPageRequest,
  federatedQueries,
  LARGE,
  sessionsFacetRequest,
  sessionsListingRequest,
  uncountedMatched,
  wordCounts,
} from '../src/search/engine/planned-page';
import { planQuery } from '../src/search/engine/query-plan';
import { createDb } from '../src/db/client';
import { forgetCounts } from '../src/search/engine/count-cache';
import { arg, databaseNamed, percentile } from './support';

const reuse = arg('reuse')?.split(',');
if (!reuse || reuse.length !== 2) throw new Error('--reuse=DATABASE,DATA_DIR (kept by bench/search.ts --keep)');
const [dbName, dataDir] = reuse;
const QUERIES = Number(arg('queries') ?? 300);
const MEMBER = process.argv.includes('--member');
const log = (s: string) => process.stdout.write(`${s}\n`);
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const now = () => performance.now();

type Planned = NonNullable<ReturnType<typeof federatedQueries>>;

async function main() {
  const handles = createDb(databaseNamed(dbName).url);
  const users = (await handles.pool.query<Array<{ id: string }>>("SELECT id FROM users WHERE email LIKE 'bench%' ORDER BY email")).map((u) => u.id);
  const teammates = (await handles.pool.query<Array<{ id: string }>>("SELECT id FROM users WHERE email LIKE 'teammate%' ORDER BY email")).map((u) => u.id);
  const teamIds = (await handles.pool.query<Array<{ id: string }>>('SELECT id FROM teams')).map((t) => t.id);
  await handles.close();
  if (MEMBER && (teammates.length === 0 || teamIds.length === 0)) throw new Error('--member: the corpus has no teams');
  const scopes = (i: number) => (MEMBER ? [teammates[i % teammates.length], ...teamIds] : [users[i % users.length]]);
  const pool: string[] = JSON.parse(fs.readFileSync(path.join(dataDir, 'bench-queries.json'), 'utf8'));
  const queries = Array.from({ length: QUERIES }, (_, i) => pool[i % pool.length]);

  const engine = new EmbeddedMeili({ dataDir });
  await engine.start();
  try {
    const client = new Meilisearch({ host: engine.url!, apiKey: engine.masterKey, httpClient: createNodeHttpClient() });
    const uid = indexUidOf(dbName);
    const params = (i: number): SearchParams & { filter: string } => ({
      filter: searchFilter(scopes(i), {}),
      distinct: 'sessionDigest',
      matchingStrategy: 'all',
      showRankingScore: true,
      attributesToRetrieve: pageAttributes(true),
    });
    // Each query's plan with its counts (asked now, not timed).
    const plans: Planned[] = [];
    for (let i = 0; i < queries.length; i++) {
      const plan = planQuery(queries[i]);
      const counts = plan.words.length > 1 ? await wordCounts(client, uid, plan, params(i).filter) : undefined;
      plans.push(federatedQueries(plan, counts) ?? [{ q: plan.q, matchingStrategy: 'all', weight: 1, forms: false }]);
    }
    const kinds = (p: Planned) => p.map((q) => `${q.forms ? 'forms' : 'exact'}/${q.matchingStrategy}`);
    log(
      `federated work: ${queries.length} queries of ${MEMBER ? `a member of ${teamIds.length} teams` : 'a user without teams'} on ${uid}; ${(plans.reduce((n, p) => n + p.length, 0) / plans.length).toFixed(1)} queries per plan`,
    );

    // Null for a query of one word: the service asks no counts for it (and its time is left out).
    const counting = (i: number, requests: number) => {
      const plan = planQuery(queries[i]);
      if (plan.words.length < 2) return null;
      forgetCounts();
      return wordCounts(client, uid, plan, params(i).filter, requests);
    };
    // The page with the `whole` facet (or without), and the large sessions matched, counted by their facet or listed: the service's requests.
    type Page = Parameters<typeof uncountedMatched>[0];
    const pageAsked = (i: number, facets: boolean) =>
      client.multiSearch(federatedPageRequest(uid, plans[i], { ...params(i), showRankingScore: true }, 0, 10, facets) as never) as unknown as Promise<Page>;
    const largeListed = (i: number) => client.multiSearch(sessionsListingRequest(uid, plans[i], params(i), LARGE) as never);
    const largeFaceted = (i: number) => client.multiSearch(sessionsFacetRequest(uid, plans[i], params(i), LARGE) as never);
    const listingNeeded = (p: Page) => uncountedMatched(p, uid);
    // The `whole` facet without hits: a federated request of limit 0.
    const facetOnly = (i: number, p: SearchParams) => client.multiSearch(federatedPageRequest(uid, plans[i], p, 0, 0, true) as never);
    let needed = 0;
    for (let i = 0; i < queries.length; i++) if (listingNeeded(await pageAsked(i, true))) needed++;
    log(`  large sessions counted for the total: ${needed} of ${queries.length} queries`);

    const variants: Array<[string, (i: number) => Promise<unknown> | null]> = [
      ['the service: federated page, total by facet', (i) => federatedPage(client, uid, plans[i], params(i), 0, 10)],
      [
        "the page, then the large sessions' facet if needed (no hint)",
        async (i) => {
          if (listingNeeded(await pageAsked(i, true))) await largeFaceted(i);
        },
      ],
      ["the page and the large sessions' facet at once (hinted)", (i) => Promise.all([pageAsked(i, true), largeFaceted(i)])],
      ['the page and the listing at once (hinted, before)', (i) => Promise.all([pageAsked(i, true), largeListed(i)])],
      ['the page with its facet, no listing', (i) => pageAsked(i, true)],
      ['the page, and its facet in a request of its own, at once', (i) => Promise.all([pageAsked(i, false), facetOnly(i, params(i))])],
      ['the same, the facet request without distinct', (i) => Promise.all([pageAsked(i, false), facetOnly(i, { ...params(i), distinct: undefined })])],
      ['the facet request alone', (i) => facetOnly(i, params(i))],
      ["the large sessions' facet alone (the service)", (i) => largeFaceted(i)],
      ['the listing of large sessions alone (before)', (i) => largeListed(i)],
      ['federated page, no total (no facet)', (i) => federatedPage(client, uid, plans[i], params(i), 0, 10, false)],
      ['federated page, no distinct', (i) => federatedPage(client, uid, plans[i], { ...params(i), distinct: undefined }, 0, 10)],
      [
        'federated page, exact queries only',
        (i) =>
          federatedPage(
            client,
            uid,
            plans[i].filter((q) => !q.forms),
            params(i),
            0,
            10,
          ),
      ],
      [
        'federated page, whole queries only',
        (i) =>
          federatedPage(
            client,
            uid,
            plans[i].filter((q) => q.matchingStrategy === 'last' || q.weight >= 0.8),
            params(i),
            0,
            10,
          ),
      ],
      [
        'the whole query alone (last), plain',
        (i) => countedPage(client.index(uid), plans[i][0].q, { ...params(i), matchingStrategy: plans[i][0].matchingStrategy }, 0, 10),
      ],
      ['one plain request (all words required)', (i) => countedPage(client.index(uid), queries[i], params(i), 0, 10)],
    ];
    // The counts a search of several words asks first (not remembered), in one request or two:
    // timed in a pass of their own, since forgetting the counts also forgets which filters'
    // searches find large sessions (the service's first variant).
    const countingVariants: Array<[string, (i: number) => Promise<unknown> | null]> = [
      ['counting its words: one request (the service)', (i) => counting(i, 1)],
      ['counting its words: two at once', (i) => counting(i, 2)],
    ];
    for (const group of [variants, countingVariants]) {
      for (let i = 0; i < queries.length; i++) for (const [, fn] of group) await fn(i);
      const times = group.map(() => [] as number[]);
      for (let i = 0; i < queries.length; i++) {
        for (let step = 0; step < group.length; step++) {
          const k = (i + step) % group.length;
          const t = now();
          const asked = group[k][1](i);
          if (!asked) continue;
          await asked;
          times[k].push(now() - t);
        }
      }
      group.forEach(([label], k) =>
        log(`  ${label.padEnd(46)} p50 ${fmt(percentile(times[k], 50)).padStart(6)} ms   p95 ${fmt(percentile(times[k], 95)).padStart(6)} ms`),
      );
    }
    const shapes = new Map<string, number>();
    for (const p of plans) shapes.set(kinds(p).join(' + '), (shapes.get(kinds(p).join(' + ')) ?? 0) + 1);
    log('  plans asked:');
    for (const [shape, n] of [...shapes].sort((a, b) => b[1] - a[1])) log(`    ${String(n).padStart(4)} × ${shape}`);
  } finally {
    await engine.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
