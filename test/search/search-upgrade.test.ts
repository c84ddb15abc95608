/**
 * Upgrading an index built by an earlier version, without a rebuild of the whole index: each
 * migration below queues the sessions whose documents lack something once, the worker re-pushes
 * them, and search answers the same meanwhile. Large sessions' fragments without the reader's
 * exchange number (they showed "Part n" instead of a link to the exchange:
 * 20261123700000_fragments_exchange_numbers), documents without `whole`
 * (20261126190000_search_whole_documents), sessions indexed whole without their outline
 * (20261127030000_search_outlines), and documents numbered with the file's header as an exchange of
 * its own (20261128170000_search_exchange_numbers), and documents without word forms
 * (20261128220000_search_word_forms).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Meilisearch } from 'meilisearch';
import { MIGRATIONS_DIR, splitStatements } from '../../src/db/migrate';
import { type Outline } from '../../src/domain/document-outline';
import { sessionDigestOf, type SessionDocument } from '../../src/domain/search-documents';
import { createNodeHttpClient } from '../../src/search/engine/http-client';
import type { Ctx } from '../../src/services/context';
import { ENGINE_TASK_WAIT, newSessionId, startSearchHarness, type SearchHarness } from '../support/meili-harness';

const MIGRATION = '20261123700000_fragments_exchange_numbers';

let h: SearchHarness;

/**
 * Applies a migration's statements as the service does at start (src/db/migrate.ts), lets the
 * worker apply the index work they queued, and returns how many rows they queued.
 */
async function migrated(name: string): Promise<number> {
  let queued = 0;
  for (const sql of splitStatements(fs.readFileSync(path.join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8'))) {
    queued += Number((await h.handles.pool.query(sql)).affectedRows ?? 0);
  }
  h.search.notify();
  await h.settle();
  return queued;
}
let alice: Ctx;
const httpClient = createNodeHttpClient();

beforeAll(async () => {
  h = await startSearchHarness();
  alice = await h.user();
}, 60_000);

afterAll(async () => {
  httpClient.destroy();
  await h?.close();
});

test('fragments indexed without exchange numbers get them back from the migration, only large sessions queued', async () => {
  const big = newSessionId();
  const small = newSessionId();
  const filler = 'The build passed and the cache was warm; nothing else changed in this step. '.repeat(16);
  const turns = Array.from({ length: 60 }, (_, i) => {
    const rare = i + 1 === 42 ? ' the narwhal appears here.' : '';
    return `_**User**_\n\nQuestion ${i + 1}: ${filler}${rare}\n\n---\n\n_**Agent (claude)**_\n\nAnswer ${i + 1}. ${filler}\n\n---\n\n`;
  });
  await h.put(alice, 'upgrade', big, { markdown: `# Large\n\n${turns.join('')}` });
  await h.put(alice, 'upgrade', small, { markdown: '# Small\n\nthe narwhal, briefly\n' });
  await h.settle();
  // Both in the main index, as an archive indexed long ago would be.
  await h.search.compact();
  await h.settle();

  const numbers = async () => {
    const r = await h.find(alice, 'narwhal');
    return r.results.find((x) => x.sessionId === big)?.matchingExchanges.map((m) => m.exchange ?? null);
  };
  // "# Large" opens exchange 1, so the 42nd user turn is exchange 42.
  expect(await numbers()).toEqual([42]);

  // The index as an earlier version built it: the large session's fragments without numbers.
  const client = new Meilisearch({ host: h.config.meiliUrl!, apiKey: h.config.meiliMasterKey ?? undefined, httpClient });
  const index = client.index<SessionDocument>(h.search.indexUid);
  const { results } = await index.getDocuments({ filter: `sessionDigest = "${sessionDigestOf('upgrade', big)}"`, limit: 1000 });
  const fragments = results.filter((d) => d.chunk > 0);
  expect(fragments.length).toBeGreaterThan(10);
  const old = fragments.map(({ exchange: _e, exchangeBreaks: _b, ...rest }) => ({ ...rest, hash: `${rest.hash}-before-exchanges` }));
  const task = await index.addDocuments(old).waitTask(ENGINE_TASK_WAIT);
  expect(task.status).toBe('succeeded');
  expect(await numbers()).toEqual([null]);

  // The migration as the service applies it at start (src/db/migrate.ts), then the worker.
  expect(await migrated(MIGRATION)).toBe(1);
  expect(await numbers()).toEqual([42]);
  const now = await index.getDocuments({ filter: `sessionDigest = "${sessionDigestOf('upgrade', big)}"`, fields: ['chunk', 'exchange'], limit: 1000 });
  expect(now.results.filter((d) => d.chunk > 0).every((d) => typeof d.exchange === 'number')).toBe(true);
}, 120_000);

test('documents indexed before `whole` get it from the migration; totals stay exact meanwhile', async () => {
  const bob = await h.user();
  const ids = Array.from({ length: 3 }, () => newSessionId());
  for (const id of ids) await h.put(bob, 'upgrade-whole', id, { markdown: `# Small\n\nthe wholeupgradeword, ${id}\n` });
  await h.settle();
  await h.search.compact();
  await h.settle();

  // The index as an earlier version built it: documents without `whole`.
  const client = new Meilisearch({ host: h.config.meiliUrl!, apiKey: h.config.meiliMasterKey ?? undefined, httpClient });
  const index = client.index<SessionDocument>(h.search.indexUid);
  const mine = `userId = "${bob.user.id}"`;
  const { results } = await index.getDocuments({ filter: mine, limit: 1000 });
  expect(results.map((d) => d.whole)).toEqual([true, true, true]);
  const old = results.map(({ whole: _w, ...rest }) => ({ ...rest, hash: `${rest.hash}-before-whole` }));
  expect((await index.addDocuments(old as unknown as SessionDocument[]).waitTask(ENGINE_TASK_WAIT)).status).toBe('succeeded');
  expect((await index.getDocuments({ filter: `${mine} AND whole EXISTS`, limit: 1000 })).results).toEqual([]);
  expect((await h.find(bob, 'wholeupgradeword')).total).toBe(3);

  // Every session of this database that can be indexed whole (the other test's small one too).
  expect(await migrated('20261126190000_search_whole_documents')).toBeGreaterThanOrEqual(3);
  const now = await index.getDocuments({ filter: mine, fields: ['whole'], limit: 1000 });
  expect(now.results.map((d) => d.whole)).toEqual([true, true, true]);
  expect((await h.find(bob, 'wholeupgradeword')).total).toBe(3);
}, 120_000);

test('documents indexed before outlines get them from the migration; matching exchanges stay the same meanwhile', async () => {
  const carol = await h.user();
  const id = newSessionId();
  const turns = Array.from(
    { length: 12 },
    (_, i) => `_**User**_\n\nQuestion ${i + 1} about the ${i % 4 === 3 ? 'outlineword ' : ''}cache\n\n${'Some filler text. '.repeat(60)}\n\n`,
  );
  await h.put(carol, 'upgrade-outline', id, { markdown: `# Outlined\n\n${turns.join('')}` });
  await h.settle();
  await h.search.compact();
  await h.settle();
  const exchanges = async () => (await h.find(carol, 'outlineword')).results[0]?.matchingExchanges.map((m) => [m.exchange, m.title]);
  // "# Outlined" opens exchange 1: question n is exchange n.
  const expected = [4, 8, 12].map((q) => [q, `Question ${q} about the outlineword cache`]);
  expect(await exchanges()).toEqual(expected);

  // The index as an earlier version built it: the session's document without an outline.
  const client = new Meilisearch({ host: h.config.meiliUrl!, apiKey: h.config.meiliMasterKey ?? undefined, httpClient });
  const index = client.index<SessionDocument>(h.search.indexUid);
  const mine = `userId = "${carol.user.id}"`;
  const { results } = await index.getDocuments({ filter: mine, limit: 10 });
  expect(results.map((d) => (JSON.parse(d.outline!) as Outline).t.length)).toEqual([12]);
  const old = results.map(({ outline: _o, ...rest }) => ({ ...rest, hash: `${rest.hash}-before-outlines` }));
  expect((await index.addDocuments(old as unknown as SessionDocument[]).waitTask(ENGINE_TASK_WAIT)).status).toBe('succeeded');
  expect((await index.getDocuments({ filter: mine, fields: ['outline'], limit: 10 })).results).toEqual([{}]);
  expect(await exchanges()).toEqual(expected);

  expect(await migrated('20261127030000_search_outlines')).toBeGreaterThanOrEqual(1);
  const now = await index.getDocuments({ filter: mine, fields: ['outline'], limit: 10 });
  expect(now.results.map((d) => (JSON.parse(d.outline) as Outline).x.length)).toEqual([12]);
  expect(await exchanges()).toEqual(expected);
}, 120_000);

test('documents numbered with the header as an exchange of its own are renumbered by the migration', async () => {
  const dave = await h.user();
  const id = newSessionId();
  const header =
    '<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n# 2026-03-04 09:15:02Z\n\n<!-- Claude Code Session 5f0c2a8e (2026-03-04 09:15:02Z) -->\n\n';
  const turns = Array.from(
    { length: 6 },
    (_, i) =>
      `_**User (2026-03-04 09:1${i}:00Z)**_\n\nStep ${i + 1}${i === 2 ? ' with the kestrelword' : ''}\n\n---\n\n_**Agent (claude-opus-4-5 2026-03-04 09:1${i}:05Z)**_\n\nDone.\n\n---\n\n`,
  );
  const markdown = header + turns.join('');
  await h.put(dave, 'upgrade-numbers', id, { markdown });
  await h.settle();
  await h.search.compact();
  await h.settle();
  const exchanges = async () => (await h.find(dave, 'kestrelword')).results[0]?.matchingExchanges.map((m) => [m.exchange, m.title]);
  expect(await exchanges()).toEqual([[3, 'Step 3 with the kestrelword']]);

  // The index as the earlier version built it: the header as exchange 1, every prompt one further.
  const client = new Meilisearch({ host: h.config.meiliUrl!, apiKey: h.config.meiliMasterKey ?? undefined, httpClient });
  const index = client.index<SessionDocument>(h.search.indexUid);
  const mine = `userId = "${dave.user.id}"`;
  const { results } = await index.getDocuments({ filter: mine, limit: 10 });
  const old = results.map((d) => {
    const o = JSON.parse(d.outline!) as Outline;
    const headerEnd = markdown.indexOf('_**User');
    const outline: Outline = { ...o, x: [0, headerEnd, ...o.x.slice(1)], t: ['2026-03-04 09:15:02Z', ...o.t] };
    return { ...d, outline: JSON.stringify(outline), hash: `${d.hash}-before-numbers` };
  });
  expect((await index.addDocuments(old).waitTask(ENGINE_TASK_WAIT)).status).toBe('succeeded');
  expect(await exchanges()).toEqual([[4, 'Step 3 with the kestrelword']]);

  expect(await migrated('20261128170000_search_exchange_numbers')).toBeGreaterThanOrEqual(1);
  expect(await exchanges()).toEqual([[3, 'Step 3 with the kestrelword']]);
  const now = await index.getDocuments({ filter: mine, fields: ['outline'], limit: 10 });
  expect(now.results.map((d) => (JSON.parse(d.outline) as Outline).t)).toEqual([turns.map((_, i) => `Step ${i + 1}${i === 2 ? ' with the kestrelword' : ''}`)]);
}, 120_000);

test('documents indexed before word forms get them from the migration; search answers by the words as written meanwhile', async () => {
  const erin = await h.user();
  const id = newSessionId();
  await h.put(erin, 'upgrade-forms', id, { markdown: '# Notes\n\nThe gateway retries the call; see `retryWithBackoff`.\n' });
  await h.settle();
  await h.search.compact();
  await h.settle();
  const found = async (q: string) => (await h.find(erin, q)).results.map((r) => r.sessionId);
  expect(await found('retrying')).toEqual([id]);

  // The index as the earlier version built it: documents without forms.
  const client = new Meilisearch({ host: h.config.meiliUrl!, apiKey: h.config.meiliMasterKey ?? undefined, httpClient });
  const index = client.index<SessionDocument>(h.search.indexUid);
  const mine = `userId = "${erin.user.id}"`;
  const { results } = await index.getDocuments({ filter: mine, limit: 10 });
  expect(results.map((d) => d.forms?.split(/[; ]/).includes('qqfbackoff'))).toEqual([true]);
  const old = results.map(({ forms: _f, ...rest }) => ({ ...rest, hash: `${rest.hash}-before-forms` }));
  expect((await index.addDocuments(old as unknown as SessionDocument[]).waitTask(ENGINE_TASK_WAIT)).status).toBe('succeeded');
  expect(await found('retries')).toEqual([id]);
  expect(await found('retrying')).toEqual([]);

  expect(await migrated('20261128220000_search_word_forms')).toBeGreaterThanOrEqual(1);
  expect(await found('retrying')).toEqual([id]);
  expect(await found('backoff')).toEqual([id]);
}, 120_000);
