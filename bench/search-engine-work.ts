/**
 * What the engine spends its time on for a member of every team (bench/search.ts's teams case):
 * the main index asked directly with the member's request and with variants of it, on a corpus
 * kept by `bench/search.ts --keep`. Every variant runs on every query, interleaved (query i in
 * every variant, then query i + 1), after one warm-up pass; the engine's own `processingTimeMs`
 * and the wall time are reported.
 *
 *   npx tsx bench/search-engine-work.ts --reuse=sa_bench_xxx,/tmp/sa-bench-xxx [--rules]
 *
 * --rules also times the request without each of the ranking rules after `words` (the index's
 * ranking rules are changed for that and restored at the end: never on a corpus in use).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Meilisearch, type SearchParams, type SearchResponse } from 'meilisearch';
import { EmbeddedMeili } from '../src/search/embedded/embedded';
import { pageAttributes } from '../src/search/engine/adapter';
import { countedPage } from '../src/search/engine/counted-page';
import { searchFilter } from '../src/search/engine/filter';
import { createNodeHttpClient } from '../src/search/engine/http-client';
import { ensureIndex, INDEX_SETTINGS, indexUidOf } from '../src/search/engine/index-settings';
import { createDb } from '../src/db/client';
import { databaseNamed, percentile } from './support';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const reuse = arg('reuse')?.split(',');
if (!reuse || reuse.length !== 2) throw new Error('--reuse=DATABASE,DATA_DIR (kept by bench/search.ts --keep)');
const [dbName, dataDir] = reuse;
const log = (s: string) => process.stdout.write(`${s}\n`);
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const now = () => performance.now();

interface Variant {
  label: string;
  params: (i: number) => SearchParams;
  q?: (i: number) => string;
  /** The service's main-index requests (countedPage): engine time is the sum of its requests'. */
  counted?: boolean;
  /** Both of countedPage's requests at once: 'parallel' (two HTTP requests) or 'multi' (one multi-search). */
  both?: 'parallel' | 'multi';
  /**
   * countedPage on an index without `whole`: its first request with the facet count of another
   * boolean, then, when a large session matches (as countedPage would ask), the count over the
   * large sessions' documents, named by their digests.
   */
  proxy?: boolean;
}

async function main() {
  const db = databaseNamed(dbName);
  const handles = createDb(db.url);
  const pool = handles.pool;
  const users = (await pool.query<Array<{ id: string }>>("SELECT id FROM users WHERE email LIKE 'bench%' ORDER BY email")).map((u) => u.id);
  const teammates = (await pool.query<Array<{ id: string }>>("SELECT id FROM users WHERE email LIKE 'teammate%' ORDER BY email")).map((u) => u.id);
  const teamIds = (await pool.query<Array<{ id: string }>>('SELECT id FROM teams')).map((t) => t.id);
  await handles.close();
  const queries: string[] = JSON.parse(fs.readFileSync(path.join(dataDir, 'bench-queries.json'), 'utf8')).slice(0, Number(arg('queries') ?? 300));
  while (queries.length < Number(arg('queries') ?? 300)) queries.push(queries[queries.length % Math.max(1, queries.length)]);

  const engine = new EmbeddedMeili({ dataDir });
  await engine.start();
  const client = new Meilisearch({ host: engine.url!, apiKey: engine.masterKey, httpClient: createNodeHttpClient() });
  const uid = indexUidOf(dbName);
  const index = client.index(uid);
  // --proxy: a corpus loaded before documents carried `whole`, left as it is (nothing written):
  // countedPage is estimated by its two requests with stand-ins (see the proxy variant).
  const proxy = process.argv.includes('--proxy');
  if (!proxy) {
    // The service's settings (a corpus loaded by an older version gets them as the service would apply them at start).
    const t0 = now();
    await ensureIndex(client, uid);
    log(`settings applied in ${fmt(now() - t0)} ms`);
  }
  const stats = await index.getStats();
  const withWhole = proxy ? 0 : (await index.getDocuments({ filter: 'whole EXISTS', limit: 0 })).total;
  // The large sessions (documents other than chunk 0, or a chunk 0 with fragments).
  const large = new Set<string>();
  {
    for (let offset = 0; ; offset += 10_000) {
      const page = await index.getDocuments({ fields: ['sessionDigest', 'chunk', 'chunks'], limit: 10_000, offset });
      for (const d of page.results) if (d.chunk !== 0 || d.chunks > 0) large.add(String(d.sessionDigest));
      if (page.results.length < 10_000) break;
    }
    log(`${large.size} large sessions`);
  }
  const largeFilter = `sessionDigest IN [${[...large].map((d) => JSON.stringify(d)).join(', ')}]`;
  log(
    `engine work for a member of ${teamIds.length} teams: ${stats.numberOfDocuments} documents in ${uid} (${withWhole} with \`whole\`); ${queries.length} queries`,
  );

  const member = (i: number) => [teammates[i % teammates.length], ...teamIds];
  const memberFilter = (i: number) => searchFilter(member(i), {});
  // The same set as the member's scopes (the members own nothing): every document not owned by a user.
  const complement = `NOT userId IN [${users.map((u) => JSON.stringify(u)).join(', ')}]`;
  const service: SearchParams = {
    distinct: 'sessionDigest',
    matchingStrategy: 'all',
    showRankingScore: true,
    attributesToRetrieve: pageAttributes(true),
  };
  const page = { hitsPerPage: 10, page: 1 };
  const lim = { limit: 10, offset: 0 };
  const variants: Variant[] = [
    { label: 'member: countedPage (the service now)', counted: true, params: (i) => ({ ...service, filter: memberFilter(i) }) },
    { label: 'member: countedPage, estimated (--proxy)', proxy: true, params: (i) => ({ ...service, filter: memberFilter(i) }) },
    {
      label: 'user without teams: countedPage, estimated (--proxy)',
      proxy: true,
      params: (i) => ({ ...service, filter: searchFilter([users[i % users.length]], {}) }),
    },
    { label: 'user without teams: countedPage', counted: true, params: (i) => ({ ...service, filter: searchFilter([users[i % users.length]], {}) }) },
    { label: 'member: both requests at once, in parallel', both: 'parallel', params: (i) => ({ ...service, filter: memberFilter(i) }) },
    { label: 'member: both requests in one multi-search', both: 'multi', params: (i) => ({ ...service, filter: memberFilter(i) }) },
    { label: 'member: service request (page mode, exhaustive)', params: (i) => ({ ...service, ...page, filter: memberFilter(i) }) },
    { label: 'member: limit/offset (estimated total)', params: (i) => ({ ...service, ...lim, filter: memberFilter(i) }) },
    { label: 'member: page mode, no distinct', params: (i) => ({ ...service, distinct: undefined, ...page, filter: memberFilter(i) }) },
    { label: 'member: limit/offset, no distinct', params: (i) => ({ ...service, distinct: undefined, ...lim, filter: memberFilter(i) }) },
    { label: 'member: page mode, hitsPerPage 0 (count only)', params: (i) => ({ ...service, hitsPerPage: 0, page: 1, filter: memberFilter(i) }) },
    { label: 'member: page mode, no _rankingScore', params: (i) => ({ ...service, showRankingScore: false, ...page, filter: memberFilter(i) }) },
    { label: 'member: page mode, retrieve ids only', params: (i) => ({ ...service, attributesToRetrieve: ['sessionId'], ...page, filter: memberFilter(i) }) },
    { label: 'same set, one NOT IN of 10 users (page)', params: () => ({ ...service, ...page, filter: complement }) },
    { label: 'no filter: whole index (page)', params: () => ({ ...service, ...page }) },
    { label: 'no filter: whole index (limit/offset)', params: () => ({ ...service, ...lim }) },
    { label: 'user without teams: service request (page)', params: (i) => ({ ...service, ...page, filter: searchFilter([users[i % users.length]], {}) }) },
    {
      label: 'member: limit/offset + facets [hasGitBranches]',
      params: (i) => ({ ...service, ...lim, filter: memberFilter(i), facets: ['hasGitBranches'] }),
    },
    { label: 'member: count only, limit 0, F AND hasGitBranches', params: (i) => ({ limit: 0, filter: `${memberFilter(i)} AND hasGitBranches = true` }) },
    {
      label: "member's filter alone (placeholder, limit 0)",
      q: () => '',
      params: (i) => ({ filter: memberFilter(i), limit: 0 }),
    },
  ];

  const run = async (vs: Variant[], label: string) => {
    const wall = vs.map(() => [] as number[]);
    const proc = vs.map(() => [] as number[]);
    const totals = vs.map(() => [] as number[]);
    const seconds = vs.map(() => 0);
    for (let pass = 0; pass < 2; pass++) {
      for (let i = 0; i < queries.length; i++) {
        for (const [k, v] of vs.entries()) {
          const t = now();
          let engineMs = 0;
          let total = 0;
          if (v.proxy) {
            const p = v.params(i) as SearchParams & { filter: string };
            const a = await index.search(queries[i], { ...p, limit: 10, offset: 0, facets: ['hasGitBranches'] });
            const t1 = now();
            const b = await index.search(queries[i], {
              filter: `(${p.filter}) AND ${largeFilter}`,
              distinct: p.distinct,
              matchingStrategy: p.matchingStrategy,
              hitsPerPage: 0,
              page: 1,
            });
            engineMs = a.processingTimeMs;
            total = a.estimatedTotalHits ?? 0;
            if ((b.totalHits ?? 0) > 0) {
              engineMs += b.processingTimeMs;
              if (pass === 1) seconds[k]++;
            } else {
              // Not asked by countedPage: its time is not counted.
              const skipped = now() - t1;
              if (pass === 1) {
                wall[k].push(now() - t - skipped);
                proc[k].push(engineMs);
                totals[k].push(total);
              }
              continue;
            }
          } else if (v.both) {
            const p = v.params(i) as SearchParams & { filter: string };
            const q1 = { ...p, limit: 10, offset: 0, facets: ['whole'] };
            const q2 = { filter: `(${p.filter}) AND NOT whole = true`, distinct: p.distinct, matchingStrategy: p.matchingStrategy, hitsPerPage: 0, page: 1 };
            const [a, b] =
              v.both === 'parallel'
                ? await Promise.all([index.search(queries[i], q1), index.search(queries[i], q2)])
                : ((
                    await client.multiSearch({
                      queries: [
                        { indexUid: uid, q: queries[i], ...q1 },
                        { indexUid: uid, q: queries[i], ...q2 },
                      ],
                    })
                  ).results as SearchResponse[]);
            engineMs = a.processingTimeMs + b.processingTimeMs;
            total = (a.facetDistribution?.whole?.true ?? 0) + (b.totalHits ?? 0);
          } else if (v.counted) {
            // As countedPage, with the engine's time of each request.
            const timed = new Proxy(index, {
              get: (target, prop) =>
                prop === 'search'
                  ? async (q: string, p: SearchParams) => {
                      const r = await target.search(q, p);
                      if (pass === 1 && p.hitsPerPage === 0) seconds[k]++;
                      engineMs += r.processingTimeMs;
                      return r;
                    }
                  : Reflect.get(target, prop),
            });
            total = (await countedPage(timed, queries[i], v.params(i) as SearchParams & { filter: string }, 0, 10)).total;
          } else {
            const res = (await index.search(v.q ? v.q(i) : queries[i], v.params(i))) as SearchResponse;
            engineMs = res.processingTimeMs;
            total = res.totalHits ?? res.estimatedTotalHits ?? 0;
          }
          if (pass === 0) continue;
          wall[k].push(now() - t);
          proc[k].push(engineMs);
          totals[k].push(total);
        }
      }
    }
    log(`\n${label}`);
    log(`  ${'variant'.padEnd(50)} ${'engine p50/p95'.padStart(16)} ${'wall p50/p95'.padStart(16)}   total: median, max`);
    for (const [k, v] of vs.entries()) {
      const e = `${fmt(percentile(proc[k], 50))} / ${fmt(percentile(proc[k], 95))}`;
      const w = `${fmt(percentile(wall[k], 50))} / ${fmt(percentile(wall[k], 95))}`;
      const second = v.counted || v.proxy ? `; second request for ${seconds[k]}/${queries.length}` : '';
      log(`  ${v.label.padEnd(50)} ${e.padStart(16)} ${w.padStart(16)}   ${percentile(totals[k], 50)}, ${Math.max(...totals[k])}${second}`);
    }
    return { wall, proc, totals };
  };

  // The exhaustive page and countedPage: the same hits, order, scores and total.
  let same = 0;
  for (let i = 0; i < (proxy ? 0 : queries.length); i++) {
    for (const f of [memberFilter(i), searchFilter([users[i % users.length]], {})]) {
      const a = await index.search(queries[i], { ...service, ...page, filter: f });
      const b = await countedPage(index, queries[i], { ...service, filter: f }, 0, 10);
      const ids = (hits: SearchResponse['hits']) => JSON.stringify(hits.map((h) => [h.sessionId, h._rankingScore]));
      if (ids(a.hits) === ids(b.hits) && a.totalHits === b.total) same++;
      else log(`  differs: "${queries[i]}": total ${a.totalHits} vs ${b.total}`);
    }
  }
  if (!proxy) log(`page mode and countedPage: same hits, order, scores and total for ${same}/${queries.length * 2} requests (member's and user's)`);

  const selected = arg('only') ? variants.filter((_, k) => arg('only')!.split(',').map(Number).includes(k)) : variants;
  await run(selected, 'variants (interleaved per query; second of two passes)');

  if (process.argv.includes('--rules')) {
    const base = INDEX_SETTINGS.rankingRules;
    try {
      for (const drop of ['proximity', 'typo', 'attribute', 'exactness']) {
        const rules = base.filter((r) => r !== drop);
        const task = await index.updateRankingRules(rules).waitTask({ timeout: 600_000 });
        if (task.status !== 'succeeded') throw new Error(`ranking rules: ${task.error?.message}`);
        await run(variants.slice(0, 2), `ranking rules without ${drop}: ${rules.join(', ')}`);
      }
    } finally {
      await index.updateRankingRules(base).waitTask({ timeout: 600_000 });
      log(`ranking rules restored: ${(await index.getRankingRules()).join(', ')}`);
    }
  }
  await engine.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
