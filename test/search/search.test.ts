/**
 * Search end to end: real MariaDB, real Meilisearch, sessions written through the session service
 * (outbox rows included), the outbox worker applying them, searchSessions reading them back.
 */
import { Meilisearch } from 'meilisearch';
import { AppError } from '../../src/errors';
import { sessionDigestOf } from '../../src/domain/search-documents';
import { createNodeHttpClient } from '../../src/search/engine/http-client';
import { indexSettingsFor, recentUidOf, settingsDiff } from '../../src/search/engine/index-settings';
import { enqueueIndexWork } from '../../src/data/outbox';
import { inTransaction } from '../../src/data/transaction';
import { exchangeSnippets, searchSessions } from '../../src/services/search';
import type { Ctx } from '../../src/services/context';
import { replicaCaughtUp } from '../support/replica-sync';
import { ENGINE_TASK_WAIT, newSessionId, startSearchHarness, type SearchHarness } from '../support/meili-harness';

let h: SearchHarness;
let alice: Ctx;
let bob: Ctx;

beforeAll(async () => {
  h = await startSearchHarness();
  alice = await h.user();
  bob = await h.user();
});
afterAll(() => h?.close());

const ids = (r: { results: Array<{ sessionId: string }> }) => r.results.map((x) => x.sessionId);
const unescape = (s: string) =>
  s
    .replace(/<\/?mark>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

async function expectAppError(p: Promise<unknown>, code: string) {
  await expect(p).rejects.toBeInstanceOf(AppError);
  await expect(p).rejects.toMatchObject({ code });
}

describe('query semantics', () => {
  const s = { named: newSessionId(), adjacent: newSessionId(), apart: newSessionId(), other: newSessionId() };

  beforeAll(async () => {
    const filler = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(6);
    await h.put(alice, 'rel', s.named, {
      name: 'Postgres connection pooling',
      markdown: '# Postgres connection pooling\n\nThe pool exhausted under load; we raised max connections.\n',
    });
    await h.put(alice, 'rel', s.adjacent, {
      name: 'Notes',
      markdown: `## User\n\nHow do I tune postgres connection limits?\n\n## Assistant\n\n${filler}\n`,
    });
    await h.put(alice, 'rel', s.apart, {
      name: 'Misc',
      markdown: `## User\n\nWe use postgres here. ${filler} Later the connection dropped.\n`,
    });
    await h.put(alice, 'rel', s.other, { name: 'Unrelated', markdown: '# Redis\n\nCaching layer notes.\n' });
    await h.settle();
  });

  test('results are ordered by relevance: name match, then adjacent words, then words far apart', async () => {
    const r = await h.find(alice, 'postgres connection');
    expect(ids(r)).toEqual([s.named, s.adjacent, s.apart]);
    expect(r.total).toBe(3);
    const ranks = r.results.map((x) => x.rank);
    for (const rank of ranks) {
      expect(rank).toBeGreaterThan(0);
      expect(rank).toBeLessThanOrEqual(1);
    }
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
  });

  test('no word is a gate: sessions holding more of the words rank first, one word is enough to be found', async () => {
    // No session holds both: each is found by the word it has.
    const r = await h.find(alice, 'postgres caching');
    expect(new Set(ids(r))).toEqual(new Set([s.named, s.adjacent, s.apart, s.other]));
    // Both words in one session rank it above the sessions holding one.
    const both = await h.find(alice, 'pool exhausted postgres redis');
    expect(ids(both)[0]).toBe(s.named);
    expect(ids(both)).toContain(s.other);
  });

  test('words a question carries without meaning decide nothing', async () => {
    expect(ids(await h.find(alice, 'what did we do about the postgres pool?'))[0]).toBe(s.named);
    // Only such words: they are searched as they are.
    expect(ids(await h.find(alice, 'the'))).toContain(s.named);
  });

  test('typo tolerance: one typo in a word of 5+ letters still matches', async () => {
    const r = await h.find(alice, 'postgros');
    expect(new Set(ids(r))).toEqual(new Set([s.named, s.adjacent, s.apart]));
  });

  test('prefix matching on the last word', async () => {
    expect(ids(await h.find(alice, 'exhaus'))).toEqual([s.named]);
    expect(ids(await h.find(alice, 'postgres conn')).slice(0, 1)).toEqual([s.named]);
  });

  test('a short last word that begins hundreds of indexed words still matches them as a prefix', async () => {
    // Prefixes shared by 100+ indexed words are served by the engine's prefix databases (the
    // index of every user alike), longer or rarer ones are expanded at query time.
    const letters = (i: number) => String.fromCharCode(97 + (i % 26)) + String.fromCharCode(97 + Math.floor(i / 26));
    const many = Array.from({ length: 400 }, (_, i) => `qv${letters(i)}word`).join(' ');
    await h.put(bob, 'prefixes-bob', newSessionId(), { name: 'Many', markdown: `# Words\n\n${many}\n` });
    const mine = newSessionId();
    await h.put(alice, 'prefixes', mine, { name: 'Mine', markdown: '# Notes\n\nThe qvzzlastword came up again.\n' });
    await h.settle();
    expect(ids(await h.find(alice, 'notes qv'))[0]).toBe(mine);
    expect(ids(await h.find(alice, 'qvz'))).toEqual([mine]);
    const [hit] = (await h.find(alice, 'qv', { projectIds: ['prefixes'] })).results;
    expect(hit.snippet).toContain('<mark>qvzzlastword</mark>');
  });

  test('quoted phrases match words in that order only', async () => {
    expect(ids(await h.find(alice, '"pool exhausted"'))).toEqual([s.named]);
    expect(ids(await h.find(alice, '"exhausted pool"'))).toEqual([]);
  });

  test('case-insensitive words', async () => {
    expect(ids(await h.find(alice, 'REDIS CACHING'))).toEqual([s.other]);
  });

  test('a blank query, or limit/offset out of range, is a validation error', async () => {
    await expectAppError(h.find(alice, '   '), 'VALIDATION_ERROR');
    await expectAppError(h.find(alice, ''), 'VALIDATION_ERROR');
    await expectAppError(h.find(alice, 'postgres', {}, 0), 'VALIDATION_ERROR');
    await expectAppError(h.find(alice, 'postgres', {}, 201), 'VALIDATION_ERROR');
    await expectAppError(h.find(alice, 'postgres', {}, 10, -1), 'VALIDATION_ERROR');
    await expectAppError(h.find(alice, 'postgres', { timeFilter: 'lastweek' }), 'VALIDATION_ERROR');
  });
});

describe('word forms and identifiers', () => {
  const s = {
    retries: newSessionId(),
    retrying: newSessionId(),
    helper: newSessionId(),
    body: newSessionId(),
    econn: newSessionId(),
    typeError: newSessionId(),
    unrelated: newSessionId(),
    large: newSessionId(),
  };
  let carol: Ctx;

  beforeAll(async () => {
    carol = await h.user();
    await h.put(carol, 'forms', s.retries, { name: 'Webhook notes', markdown: '# Webhooks\n\nThe provider retries a failed delivery five times.\n' });
    await h.put(carol, 'forms', s.retrying, { name: 'Queue notes', markdown: '# Jobs\n\nThe worker kept retrying the job until it was dropped.\n' });
    await h.put(carol, 'forms', s.helper, {
      name: 'A shared helper',
      markdown: '# Helper\n\nAdded `retryWithBackoff` in `src/lib/net.ts`; the three loops call it now.\n',
    });
    await h.put(carol, 'forms', s.body, { name: 'Parsing', markdown: '# Parsing\n\nMoved the parser to src/http/body.ts and read_json_body.\n' });
    await h.put(carol, 'forms', s.econn, { name: 'Gateway', markdown: '# Gateway\n\nThe socket failed with ECONNRESET after 60 s idle.\n' });
    await h.put(carol, 'forms', s.typeError, {
      name: 'Orders page',
      markdown: "# Orders\n\nTypeError: Cannot read properties of undefined (reading 'map') on the first render.\n",
    });
    await h.put(carol, 'forms', s.unrelated, { name: 'Other', markdown: '# Other\n\nProperties of the undefined behaviour of reading a file.\n' });
    // A large session (fragments): the form is in one exchange far into it.
    const turns = Array.from(
      { length: 40 },
      (_, i) => `_**User**_\n\nStep ${i + 1}: ${'Nothing new in this step. '.repeat(20)}${i === 30 ? 'The importer retried the batch.' : ''}\n\n---\n\n`,
    );
    await h.put(carol, 'forms-large', s.large, { name: 'Import day', markdown: `# Import day\n\n${turns.join('')}` });
    await h.settle();
  });

  test('inflections find each other; the exact form ranks first', async () => {
    const retries = await h.find(carol, 'retries');
    expect(new Set(ids(retries))).toEqual(new Set([s.retries, s.retrying, s.helper, s.large]));
    expect(ids(retries)[0]).toBe(s.retries);
    const retrying = await h.find(carol, 'retrying');
    expect(ids(retrying)[0]).toBe(s.retrying);
    expect(ids(retrying)).toContain(s.retries);
    expect(ids(await h.find(carol, 'retried'))[0]).toBe(s.large);
    // Several words: the forms count like the words.
    expect(ids(await h.find(carol, 'worker retried jobs'))[0]).toBe(s.retrying);
  });

  test('the snippet and the matching exchange mark the form found', async () => {
    const [hit] = (await h.find(carol, 'retried', { projectIds: ['forms'] })).results.filter((r) => r.sessionId === s.retrying);
    expect(hit.snippet).toContain('<mark>retrying</mark>');
    const [large] = (await h.find(carol, 'retry', { projectIds: ['forms-large'] })).results;
    expect(large.snippet).toContain('<mark>retried</mark>');
    // "# Import day" opens exchange 1: step n is exchange n.
    expect(large.matchingExchanges.map((m) => m.exchange)).toEqual([31]);
    // The exchange's own snippet (GraphQL's MatchingExchange.snippet) marks the form it holds, at most 160 characters.
    const snippet = exchangeSnippets('retry')(large.matchingExchanges[0].content);
    expect(snippet).toContain('<mark>retried</mark>');
    expect([...unescape(snippet)].length).toBeLessThanOrEqual(160);
    const [whole] = (await h.find(carol, 'retried', { projectIds: ['forms'] })).results.filter((r) => r.sessionId === s.retrying);
    expect(exchangeSnippets('retried')(whole.matchingExchanges[0].content)).toContain('<mark>retrying</mark>');
    // A typo marks as the engine matched it.
    expect(exchangeSnippets('retryng')(whole.matchingExchanges[0].content)).toContain('<mark>retrying</mark>');
  });

  test('a camelCase identifier is found by its parts and whole; paths by their parts', async () => {
    // `retry`, the first word, is also a prefix of `retrying` as written, and the engine's prefix
    // match ranks that session level with the helper's (their order varies between runs): the
    // helper is above every session holding only another form of `retry`.
    const both = ids(await h.find(carol, 'retry backoff'));
    expect(both.slice(0, 2)).toContain(s.helper);
    expect(both.indexOf(s.helper)).toBeLessThan(both.indexOf(s.retries));
    expect(both.indexOf(s.helper)).toBeLessThan(both.indexOf(s.large));
    expect(ids(await h.find(carol, 'backoff'))).toEqual([s.helper]);
    expect(ids(await h.find(carol, 'retryWithBackoff'))).toEqual([s.helper]);
    const [hit] = (await h.find(carol, 'backoff')).results;
    expect(hit.snippet).toContain('<mark>retryWithBackoff</mark>');
    // No word is a gate: `ts` alone finds `src/lib/net.ts` too, below.
    expect(ids(await h.find(carol, 'body.ts'))[0]).toBe(s.body);
    expect(ids(await h.find(carol, 'src/http/body.ts'))[0]).toBe(s.body);
    expect(ids(await h.find(carol, 'json body'))[0]).toBe(s.body);
  });

  test('error codes and messages match exactly, first', async () => {
    expect(ids(await h.find(carol, 'ECONNRESET'))).toEqual([s.econn]);
    expect(ids(await h.find(carol, 'econnreset'))).toEqual([s.econn]);
    expect(ids(await h.find(carol, 'Cannot read properties of undefined'))[0]).toBe(s.typeError);
    expect(ids(await h.find(carol, '"Cannot read properties of undefined"'))).toEqual([s.typeError]);
  });
});

describe('whole sessions are searchable', () => {
  test('a term found only at the end of a 5 MB session', async () => {
    const id = newSessionId();
    const exchange = (i: number) =>
      `## User\n\nStep ${i}: please refactor the module and explain the change.\n\n## Assistant\n\n` +
      `Here is the refactor for step ${i}.\n\n\`\`\`ts\nexport function step${i}(input: number): number {\n  return input * ${i};\n}\n\`\`\`\n\n` +
      'The function multiplies its input; tests cover the edge cases and the behaviour stays the same.\n\n';
    const parts: string[] = [];
    let size = 0;
    for (let i = 0; size < 5 * 1024 * 1024; i++) {
      const e = exchange(i);
      parts.push(e);
      size += e.length;
    }
    parts.push('## User\n\nFinally, what about zanzibarquokka?\n');
    const markdown = parts.join('');
    expect(Buffer.byteLength(markdown)).toBeGreaterThan(5 * 1024 * 1024);
    await h.put(alice, 'big', id, { name: 'Huge refactor', markdown });
    await h.settle(120_000);

    const r = await h.find(alice, 'zanzibarquokka');
    expect(ids(r)).toEqual([id]);
    expect(r.results[0].snippet).toContain('<mark>zanzibarquokka</mark>');
    const ex = r.results[0].matchingExchanges;
    expect(ex).toHaveLength(1);
    expect(ex[0].content).toContain('zanzibarquokka');
    expect(ex[0].orderNumber).toBeGreaterThan(1000);

    // A word in every exchange: one session, listed once, first.
    const common = await h.find(alice, 'refactor multiplies');
    expect(ids(common)[0]).toBe(id);
    expect(ids(common).filter((x) => x === id)).toHaveLength(1);
  }, 180_000);
});

describe('query words anywhere in the session', () => {
  const small = newSessionId();
  const large = newSessionId();
  const exchange = (i: number) => `## Exchange ${i}\n\n${'We looked at the build output and the logs again. '.repeat(30)}\n\n`;

  beforeAll(async () => {
    // Words far apart in a small session (indexed whole) and in a large one (indexed in fragments).
    await h.put(alice, 'spread', small, {
      name: 'Small spread',
      markdown: `# Start\n\nfirstspreadword here.\n\n${exchange(1)}${exchange(2)}${exchange(3)}## End\n\nsecondspreadword there, then "alpha omega" and alphaphrase betaphrase.\n`,
    });
    const parts = Array.from({ length: 60 }, (_, i) => exchange(i)).join('');
    await h.put(alice, 'spread', large, {
      name: 'Large spread',
      metadata: { tags: ['spreadtag'] },
      markdown: `# Start\n\nfirstspreadword in the first fragment.\n\n${parts}## End\n\nsecondspreadword in the last one; largephrase tailphrase together.\n`,
    });
    await h.settle(60_000);
    expect((await h.fragments('spread', large)).length).toBeGreaterThan(20);
    expect((await h.fragments('spread', small)).length).toBe(1);
  });

  test('words in different exchanges match, in small and large sessions alike', async () => {
    const r = await h.find(alice, 'firstspreadword secondspreadword', { projectIds: ['spread'] });
    expect(new Set(ids(r))).toEqual(new Set([small, large]));
    for (const hit of r.results) {
      expect(hit.snippet).toMatch(/<mark>(first|second)spreadword<\/mark>/);
      // The fragments holding either word: the best answer first, then the others in order.
      const ex = hit.matchingExchanges;
      expect(ex.length).toBeGreaterThanOrEqual(1);
      const rest = ex.slice(1).map((e) => e.orderNumber);
      expect(rest).toEqual([...rest].sort((a, b) => a - b));
      for (const e of ex) expect(e.content).toMatch(/(first|second)spreadword/);
    }
    const smallHit = r.results.find((x) => x.sessionId === small)!;
    expect(smallHit.matchingExchanges.map((e) => e.content.includes('firstspreadword') || e.content.includes('secondspreadword'))).toEqual(
      smallHit.matchingExchanges.map(() => true),
    );
    expect(smallHit.matchingExchanges.length).toBe(2);
  });

  test('without matching exchanges, a large session still gets its snippet from a fragment', async () => {
    const r = await searchSessions(alice, { query: 'firstspreadword secondspreadword', filters: { projectIds: ['spread'] }, matchingExchanges: false });
    const hit = r.results.find((x) => x.sessionId === large)!;
    expect(hit.snippet).toMatch(/<mark>(first|second)spreadword<\/mark>/);
    expect(hit.matchingExchanges).toEqual([]);
  });

  test('a word with a typo and a prefix, far from the other word', async () => {
    expect(new Set(ids(await h.find(alice, 'firstspredword secondspr')))).toEqual(new Set([small, large]));
  });

  test('a word no session holds hides nothing', async () => {
    expect(new Set(ids(await h.find(alice, 'firstspreadword zyxnotthere')))).toEqual(new Set([small, large]));
    expect(ids(await h.find(alice, 'zyxnotthere qqxnotthere'))).toEqual([]);
  });

  test('a tag and a word of the text, or the name and a word of the text', async () => {
    expect(ids(await h.find(alice, 'spreadtag secondspreadword'))[0]).toBe(large);
    expect(ids(await h.find(alice, 'small secondspreadword'))[0]).toBe(small);
  });

  test('quoted phrases still match words in that order, with other words elsewhere', async () => {
    expect(ids(await h.find(alice, '"alphaphrase betaphrase" firstspreadword'))).toEqual([small]);
    expect(ids(await h.find(alice, '"betaphrase alphaphrase"'))).toEqual([]);
    expect(ids(await h.find(alice, '"largephrase tailphrase"'))).toEqual([large]);
    expect(ids(await h.find(alice, '"tailphrase largephrase"'))).toEqual([]);
  });

  test('a large session found by its name only has a snippet from the start of its markdown', async () => {
    const [hit] = (await h.find(alice, 'large spread', { projectIds: ['spread'] })).results;
    expect(hit.sessionId).toBe(large);
    expect(hit.snippet.startsWith('# Start')).toBe(true);
  });
});

describe('markup in transcripts', () => {
  test('a word glued to HTML or JSX tags is found', async () => {
    const id = newSessionId();
    await h.put(alice, 'markup', id, { name: 'Markup', markdown: 'The <b>zanzibarword</b> handler and <Button>okapiword</Button> here.' });
    await h.settle();
    expect(ids(await h.find(alice, 'zanzibarword'))).toEqual([id]);
    expect(ids(await h.find(alice, 'okapiword'))).toEqual([id]);
  });

  test('what is read back is the text as written: snippets, exchanges, phrases and names with tags', async () => {
    // The engine holds `<` and `>` swapped with `‹` and `›` (engine-text.ts); none of it shows.
    const small = newSessionId();
    const large = newSessionId();
    const filler = (i: number) => `## Exchange ${i}\n\n${'Nothing to see in this part of the log. '.repeat(40)}\n\n`;
    await h.put(alice, 'angles', small, {
      name: 'Panel <Dialog>',
      markdown: '# Notes\n\nThe <b>quokkaword</b> handler, ‹guillemet› and a -> b.\n',
    });
    await h.put(alice, 'angles', large, {
      name: 'Large angles',
      markdown: `# Start\n\n${Array.from({ length: 60 }, (_, i) => filler(i)).join('')}## End\n\nThe <Tooltip>wombatword</Tooltip> at last.\n`,
    });
    await h.settle(60_000);
    expect((await h.fragments('angles', large)).length).toBeGreaterThan(1);

    const [hit] = (await h.find(alice, 'quokkaword', { projectIds: ['angles'] })).results;
    expect(hit.sessionId).toBe(small);
    expect(hit.snippet).toContain('&lt;b&gt;<mark>quokkaword</mark>&lt;/b&gt; handler, ‹guillemet› and a -&gt; b.');
    expect(hit.matchingExchanges.map((e) => e.content)).toEqual([expect.stringContaining('The <b>quokkaword</b> handler, ‹guillemet› and a -> b.')]);
    expect(exchangeSnippets('quokkaword')(hit.matchingExchanges[0].content)).toContain(
      '&lt;b&gt;<mark>quokkaword</mark>&lt;/b&gt; handler, ‹guillemet› and a -&gt; b.',
    );
    // A phrase with its tags, the name's tag word, and a word glued to a tag in a large session.
    expect(ids(await h.find(alice, '"<b>quokkaword</b> handler"'))).toEqual([small]);
    expect(ids(await h.find(alice, '"<i>quokkaword</i>"'))).toEqual([]);
    expect(ids(await h.find(alice, 'dialog', { projectIds: ['angles'] }))).toEqual([small]);
    const [big] = (await h.find(alice, 'wombatword')).results;
    expect(big.sessionId).toBe(large);
    expect(big.snippet).toContain('&lt;Tooltip&gt;<mark>wombatword</mark>&lt;/Tooltip&gt;');
    expect(big.matchingExchanges.map((e) => e.content)).toEqual([expect.stringContaining('The <Tooltip>wombatword</Tooltip> at last.')]);
  });
});

describe('snippets', () => {
  test('HTML-escaped, matches in <mark>, a literal excerpt of at most 240 characters', async () => {
    const id = newSessionId();
    const markdown =
      '# Security review\n\n' +
      'Some preamble text that goes on for a while so that the excerpt has to be cut somewhere sensible. '.repeat(4) +
      'The page rendered `<script>alert("xss")</script>` snippetneedle & that is how we found the bug. ' +
      'More text follows the match, explaining the fix in detail with several more sentences of prose. '.repeat(4);
    await h.put(alice, 'snip', id, { name: 'Review', markdown });
    await h.settle();

    const [hit] = (await h.find(alice, 'snippetneedle')).results;
    expect(hit.sessionId).toBe(id);
    const snippet = hit.snippet;
    expect(snippet).toContain('<mark>snippetneedle</mark>');
    expect(snippet).toContain('&lt;script&gt;alert(&quot;xss&quot;)&lt;/script&gt;');
    expect(snippet).toContain(' &amp; ');
    // Nothing but <mark> is markup.
    expect(snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
    const text = unescape(snippet);
    expect([...text].length).toBeLessThanOrEqual(240);
    const core = text.replace(/^…/, '').replace(/…$/, '');
    expect(markdown).toContain(core);
    expect(text.startsWith('…')).toBe(true);
  });

  test('a match in <mark> even when the markdown contains marker-like text', async () => {
    const id = newSessionId();
    await h.put(alice, 'snip', id, { name: 'Marks', markdown: 'Literal <mark>tags</mark> and markerword here.' });
    await h.settle();
    const [hit] = (await h.find(alice, 'markerword')).results;
    expect(hit.snippet).toBe('Literal &lt;mark&gt;tags&lt;/mark&gt; and <mark>markerword</mark> here.');
  });
});

describe('tenant isolation', () => {
  test("another user's unique words find nothing, whatever the filters", async () => {
    const id = newSessionId();
    await h.put(bob, 'bob-proj', id, { name: 'Quixotic zebra plans', markdown: '# Plan\n\nThe quixoticzebra migration.\n', metadata: { tags: ['secret'] } });
    await h.settle();
    expect(ids(await h.find(bob, 'quixoticzebra'))).toEqual([id]);

    for (const filters of [undefined, { projectId: 'bob-proj' }, { tags: ['secret'] }, { projectIds: ['bob-proj', 'rel'] }]) {
      const r = await h.find(alice, 'quixoticzebra', filters);
      expect(r.results).toEqual([]);
      expect(r.total).toBe(0);
    }
  });
});

describe('filters', () => {
  const f = { a: newSessionId(), b: newSessionId(), c: newSessionId() };
  const q = 'filterword';
  const DAY = 24 * 3600 * 1000;

  beforeAll(async () => {
    await h.put(alice, 'pf1', f.a, {
      markdown: '# A\n\nfilterword one',
      metadata: { tags: ['alpha'], llmModels: ['gpt-4'], gitBranches: ['main'], clientName: 'Claude-Code', agentName: 'AgentX', deviceId: 'dev-1' },
    });
    await h.put(alice, 'pf2', f.b, {
      markdown: '# B\n\nfilterword two',
      metadata: { tags: ['beta'], llmModels: ['claude-3'], clientName: 'cursor', agentName: 'agenty', deviceId: 'dev-2' },
    });
    await h.put(alice, 'pf1', f.c, {
      markdown: '# C\n\nfilterword three',
      metadata: { tags: ['alpha', 'beta'], gitBranches: ['feature/x'], deviceId: 'DEV-1' },
    });
    // C was created 40 days ago.
    await h.handles.prisma.$executeRawUnsafe('UPDATE sessions SET createdAt = ? WHERE projectId = ? AND id = ?', new Date(Date.now() - 40 * DAY), 'pf1', f.c);
    // Committed index work wakes the worker (no notify by hand).
    await inTransaction(h.handles, (tx) => enqueueIndexWork(tx, 'upsert', alice.user.id, 'pf1', f.c));
    await h.settle();
    await replicaCaughtUp(h.handles);
  });

  const cases: Array<[string, Record<string, unknown>, Array<keyof typeof f>]> = [
    ['none', {}, ['a', 'b', 'c']],
    ['projectId', { projectId: 'pf1' }, ['a', 'c']],
    ['projectIds', { projectIds: ['pf2'] }, ['b']],
    ['projectId ∩ projectIds', { projectId: 'pf1', projectIds: ['pf2'] }, []],
    ['llmModels', { llmModels: ['gpt-4', 'claude-3'] }, ['a', 'b']],
    ['tags', { tags: ['beta'] }, ['b', 'c']],
    ['tags compare exactly', { tags: ['Alpha'] }, []],
    ['gitBranches', { gitBranches: ['feature/x'] }, ['c']],
    ['clientNames (case-insensitive)', { clientNames: ['CLAUDE-CODE', 'Cursor'] }, ['a', 'b']],
    ['clientName (case-insensitive)', { clientName: 'claude-code' }, ['a']],
    ['agentNames', { agentNames: ['agenty'] }, ['b']],
    ['agentName (case-insensitive)', { agentName: 'AGENTX' }, ['a']],
    ['deviceIds (exact)', { deviceIds: ['dev-1'] }, ['a']],
    ['dateRange', { dateRange: { start: new Date(Date.now() - 50 * DAY).toISOString(), end: new Date(Date.now() - 30 * DAY).toISOString() } }, ['c']],
    ['createdAfter', { createdAfter: 30 }, ['a', 'b']],
    ['timeFilter', { timeFilter: 'last90days' }, ['a', 'b', 'c']],
    ['timeFilter last7days', { timeFilter: 'last7days' }, ['a', 'b']],
    ['hasGitBranches true', { hasGitBranches: true }, ['a', 'c']],
    ['hasGitBranches false', { hasGitBranches: false }, ['b']],
    ['AND across fields', { projectId: 'pf1', tags: ['beta'], hasGitBranches: true }, ['c']],
    ['a value that tries to inject filter syntax', { tags: ['alpha" OR userId != "x'] }, []],
    ['a value with a backslash', { deviceIds: ['dev-1\\'] }, []],
  ];

  test.each(cases)('%s', async (_label, filters, expected) => {
    const r = await h.find(alice, q, filters);
    expect(new Set(ids(r))).toEqual(new Set(expected.map((k) => f[k])));
  });

  test('an empty list means no filter on that field', async () => {
    const r = await h.find(alice, q, { tags: [], llmModels: [] });
    expect(r.results).toHaveLength(3);
  });
});

describe('pagination', () => {
  const page: string[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 5; i++) {
      const id = newSessionId();
      page.push(id);
      await h.put(alice, 'pages', id, { name: `Page ${i}`, markdown: `# Page ${i}\n\n${'pagerword '.repeat(i + 1)}text` });
    }
    await h.settle();
  });

  test('limit and offset walk the results without gaps or repeats; total counts sessions', async () => {
    const all = await h.find(alice, 'pagerword', {}, 10, 0);
    expect(all.total).toBe(5);
    expect(new Set(ids(all))).toEqual(new Set(page));
    const walked: string[] = [];
    for (let offset = 0; offset < 6; offset += 2) {
      const r = await h.find(alice, 'pagerword', {}, 2, offset);
      expect(r.total).toBe(5);
      walked.push(...ids(r));
    }
    expect(walked).toEqual(ids(all));
    // An offset that is not a multiple of the limit.
    const odd = await h.find(alice, 'pagerword', {}, 2, 1);
    expect(odd.total).toBe(5);
    expect(ids(odd)).toEqual(ids(all).slice(1, 3));
    expect((await h.find(alice, 'pagerword', {}, 10, 5)).results).toEqual([]);
  });
});

describe('totals in the main index', () => {
  test('total counts sessions exactly, whole and large ones, also documents indexed before `whole`', async () => {
    const gina = await h.user();
    const small = Array.from({ length: 3 }, () => newSessionId());
    const large = Array.from({ length: 2 }, () => newSessionId());
    for (const [i, id] of small.entries()) {
      await h.put(gina, 'totals', id, { name: `Small ${i}`, markdown: `# Small ${i}\n\ncountword ${'filler '.repeat(i * 3)}here\n` });
    }
    const part = (i: number) => `## Exchange ${i}\n\n${'We counted the sessions again. '.repeat(50)}countword\n\n`;
    for (const id of large) {
      await h.put(gina, 'totals', id, { markdown: `${Array.from({ length: 60 }, (_, i) => part(i)).join('')}## End\n\ncountphrase tailword together.\n` });
    }
    // The run's one engine indexes every test file's work in turn (the relevance fixture's long
    // sessions among them): wait as long as that may take.
    await h.settle(120_000);
    await h.search.compact();
    await h.settle(120_000);
    for (const id of large) expect((await h.fragments('totals', id)).length).toBeGreaterThan(20);

    const expectTotals = async () => {
      const all = await h.find(gina, 'countword', {}, 10, 0);
      expect(all.total).toBe(5);
      expect(new Set(ids(all))).toEqual(new Set([...small, ...large]));
      for (const [limit, offset] of [
        [2, 0],
        [2, 1],
        [3, 2],
        [2, 4],
      ]) {
        const r = await h.find(gina, 'countword', {}, limit, offset);
        expect(r.total).toBe(5);
        expect(ids(r)).toEqual(ids(all).slice(offset, offset + limit));
      }
      const phrase = await h.find(gina, '"countphrase tailword"');
      expect(phrase.total).toBe(2);
      expect(new Set(ids(phrase))).toEqual(new Set(large));
      // Either word: every session, each counted once; those holding both first.
      const either = await h.find(gina, 'countword here');
      expect(either.total).toBe(5);
      expect(new Set(ids(either).slice(0, 3))).toEqual(new Set(small));
      expect(new Set(ids(either))).toEqual(new Set([...small, ...large]));
    };
    await expectTotals();

    // Documents written before they carried `whole` are counted with the large sessions' ones.
    const httpClient = createNodeHttpClient();
    try {
      const main = new Meilisearch({ host: h.config.meiliUrl!, apiKey: h.config.meiliMasterKey ?? undefined, httpClient }).index(h.search.indexUid);
      const docs = await main.getDocuments({ filter: `userId = "${gina.user.id}"`, limit: 1000 });
      const older = docs.results.filter((d) => d.whole === true).map(({ whole: _, ...d }) => d);
      expect(older).toHaveLength(3);
      expect((await main.addDocuments(older).waitTask(ENGINE_TASK_WAIT)).status).toBe('succeeded');
      expect((await main.getDocuments({ filter: `userId = "${gina.user.id}" AND whole EXISTS`, limit: 1000 })).results).toHaveLength(docs.results.length - 3);
      await expectTotals();

      // An index whose settings do not have `whole` filterable (applied at start, after a long
      // engine task perhaps, or reverted by an instance of an older version): counted exhaustively.
      const filterable = (await main.getFilterableAttributes()) ?? [];
      expect((await main.updateFilterableAttributes(filterable.filter((a) => a !== 'whole')).waitTask(ENGINE_TASK_WAIT)).status).toBe('succeeded');
      try {
        await expectTotals();
      } finally {
        expect((await main.updateFilterableAttributes(filterable).waitTask(ENGINE_TASK_WAIT)).status).toBe('succeeded');
      }
    } finally {
      httpClient.destroy();
    }
  }, 300_000);
});

describe('deletions', () => {
  test('a deleted session is never returned, even before the index catches up', async () => {
    const id = newSessionId();
    await h.put(alice, 'del', id, { markdown: 'vanishingword content' });
    await h.settle();
    expect(ids(await h.find(alice, 'vanishingword'))).toEqual([id]);

    // The row goes, the index still has it (no outbox row: the index cannot catch up).
    await h.handles.prisma.$executeRawUnsafe('DELETE FROM sessions WHERE projectId = ? AND id = ?', 'del', id);
    await replicaCaughtUp(h.handles);
    expect((await h.find(alice, 'vanishingword')).results).toEqual([]);
  });

  test('deleting through the service removes it from the index too', async () => {
    const id = newSessionId();
    await h.put(alice, 'del2', id, { markdown: 'servicedeleteword content' });
    await h.settle();
    await h.remove(alice, 'del2', id);
    expect((await h.find(alice, 'servicedeleteword')).results).toEqual([]);
    await h.settle();
    expect(await h.find(alice, 'servicedeleteword')).toEqual({ total: 0, results: [] });
  });

  test('sessions of a deleted project are never returned', async () => {
    const a = newSessionId();
    const b = newSessionId();
    await h.put(alice, 'doomed', a, { markdown: 'doomedword one' });
    await h.put(alice, 'doomed', b, { markdown: 'doomedword two' });
    await h.put(alice, 'doomed-raw', newSessionId(), { markdown: 'rawdoomedword' });
    await h.settle();
    expect(ids(await h.find(alice, 'doomedword'))).toHaveLength(2);

    await h.removeProject(alice, 'doomed');
    expect((await h.find(alice, 'doomedword')).results).toEqual([]);
    await h.settle();
    expect(await h.find(alice, 'doomedword')).toEqual({ total: 0, results: [] });

    await h.handles.prisma.$executeRawUnsafe('DELETE FROM projects WHERE id = ?', 'doomed-raw');
    await replicaCaughtUp(h.handles);
    expect((await h.find(alice, 'rawdoomedword')).results).toEqual([]);
  });
});

describe('updates', () => {
  test('new content is findable soon after an update, and old content is gone', async () => {
    const id = newSessionId();
    await h.put(alice, 'fresh', id, { markdown: '# v1\n\noldfreshword' });
    await h.settle();
    expect(ids(await h.find(alice, 'oldfreshword'))).toEqual([id]);

    await h.put(alice, 'fresh', id, { markdown: '# v2\n\nnewfreshword' });
    await h.eventually('new content to be found', async () => ids(await h.find(alice, 'newfreshword')).includes(id), 10_000);
    expect((await h.find(alice, 'oldfreshword')).results).toEqual([]);
  });

  test('an update with fewer chunks removes the old chunks', async () => {
    const id = newSessionId();
    // Over 64 KB: indexed as a word list plus fragments.
    const long = Array.from({ length: 70 }, (_, i) => `## Part ${i}\n\n${'words of the part '.repeat(60)}\n\n`).join('') + 'tailshrinkword';
    await h.put(alice, 'shrink', id, { markdown: long });
    await h.settle();
    expect(ids(await h.find(alice, 'tailshrinkword'))).toEqual([id]);

    expect((await h.fragments('shrink', id)).length).toBeGreaterThan(10);

    await h.put(alice, 'shrink', id, { markdown: '# short now' });
    await h.settle();
    expect(await h.find(alice, 'tailshrinkword')).toEqual({ total: 0, results: [] });
    expect(ids(await h.find(alice, 'short'))).toEqual([id]);
    // The short version went to the recent index, whose copy wins; once compaction moves it to
    // the main index, the fragments it no longer has are emptied there, and deleted soon after.
    expect(await h.search.compact()).toBeGreaterThanOrEqual(1);
    await h.settle();
    expect(ids(await h.find(alice, 'short'))).toEqual([id]);
    await h.eventually('old fragments to be deleted', async () => (await h.fragments('shrink', id)).length === 1, 15_000);
    // What is left is the session document, now holding the whole (short) markdown.
    expect((await h.fragments('shrink', id))[0].chunk).toBe(0);
  });

  test('matching exchanges list the fragments whose text matches, in order', async () => {
    const id = newSessionId();
    const part = (i: number, word: string) => `## Exchange ${i}\n\n${'padding text '.repeat(150)} ${word}\n\n`;
    await h.put(alice, 'ex', id, { markdown: part(1, 'exchangeword') + part(2, 'nothing') + part(3, 'exchangeword') });
    await h.settle();
    const [hit] = (await h.find(alice, 'exchangeword')).results;
    expect(hit.matchingExchanges.map((e) => e.orderNumber)).toEqual([1, 3]);
    for (const e of hit.matchingExchanges) expect(e.content).toContain('exchangeword');
  });

  test('the exchange that answers the query comes first, then the others in order, in small and large sessions', async () => {
    const part = (i: number, words: string) => `_**User**_\n\nQuestion ${i}\n\n---\n\n_**Agent**_\n\n${'padding text '.repeat(60)} ${words}\n\n---\n\n`;
    const small = newSessionId();
    const large = newSessionId();
    const answer = 'answerword webhookword retryword';
    await h.put(alice, 'best', small, { markdown: part(1, 'answerword') + part(2, 'nothing') + part(3, 'webhookword') + part(4, answer) });
    const filler = Array.from({ length: 100 }, (_, i) => part(i + 5, 'nothing here'));
    await h.put(alice, 'best', large, { markdown: part(1, 'answerword') + filler.join('') + part(110, answer) + part(111, 'webhookword') });
    await h.settle();
    expect((await h.fragments('best', large)).length).toBeGreaterThan(1);
    for (const id of [small, large]) {
      const [hit] = (await h.find(alice, 'answerword webhookword retryword', { projectIds: ['best'] })).results.filter((r) => r.sessionId === id);
      expect(hit.matchingExchanges[0].content).toContain(answer);
      const rest = hit.matchingExchanges.slice(1).map((e) => e.orderNumber);
      expect(rest).toEqual([...rest].sort((a, b) => a - b));
      expect(rest.length).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('the recent index and the main one', () => {
  test('pages across both indexes are the ranking of all sessions, each counted once', async () => {
    const carol = await h.user();
    // Six sessions compacted into the main index, then four more written (recent), one of them
    // an update of a compacted session: eleven writes, ten sessions.
    const older = Array.from({ length: 6 }, () => newSessionId());
    for (const [i, id] of older.entries()) {
      await h.put(carol, 'tiers', id, { name: `Old ${i}`, markdown: `# Old ${i}\n\ntierword ${'filler '.repeat(i * 3)}tiertail\n` });
    }
    await h.settle();
    expect(await h.search.compact()).toBeGreaterThanOrEqual(6);
    await h.settle();
    const newer = Array.from({ length: 3 }, () => newSessionId());
    for (const [i, id] of newer.entries()) {
      await h.put(carol, 'tiers', id, { name: `New ${i}`, markdown: `# New ${i}\n\n${'filler '.repeat(i * 4)}tierword tiertail\n` });
    }
    await h.put(carol, 'tiers', older[0], { name: 'Old 0 again', markdown: '# Old 0, rewritten\n\ntierword only now\n' });
    await h.settle();

    const all = await searchSessions(carol, { query: 'tierword', limit: 50 });
    expect(all.total).toBe(9);
    expect(new Set(ids(all))).toEqual(new Set([...older, ...newer]));
    const ranks = all.results.map((r) => r.rank);
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
    // The update's old words are not found through the main index's older copy.
    expect(ids(await h.find(carol, 'tiertail')).sort()).toEqual([...older.slice(1), ...newer].sort());
    expect((await h.find(carol, 'tiertail')).total).toBe(8);

    for (const size of [2, 3, 4]) {
      const paged: string[] = [];
      for (let offset = 0; offset < 9; offset += size) {
        const page = await searchSessions(carol, { query: 'tierword', limit: size, offset });
        expect(page.total).toBe(9);
        paged.push(...ids(page));
      }
      expect(paged).toEqual(ids(all));
    }
  });

  test('only sessions with a main copy are left out of the main index: new ones are marked so in the recent one', async () => {
    const gail = await h.user();
    const [moved, fresh] = [newSessionId(), newSessionId()];
    await h.put(gail, 'tiers-mark', moved, { markdown: '# Moved\n\nmarkshared markoldword\n' });
    await h.settle();
    await h.search.compact();
    await h.settle();
    await h.put(gail, 'tiers-mark', fresh, { markdown: '# Fresh\n\nmarkshared\n' });
    await h.put(gail, 'tiers-mark', moved, { markdown: '# Moved, rewritten\n\nmarkshared\n' });
    await h.settle();

    const httpClient = createNodeHttpClient();
    try {
      const recent = new Meilisearch({ host: h.config.meiliUrl!, apiKey: h.config.meiliMasterKey ?? undefined, httpClient }).index(
        recentUidOf(h.search.indexUid),
      );
      const marks = async () =>
        Object.fromEntries(
          (await recent.getDocuments({ filter: `userId = "${gail.user.id}"`, fields: ['sessionId', 'noMainCopy'] })).results.map((d) => [
            d.sessionId,
            d.noMainCopy ?? null,
          ]),
        );
      expect(await marks()).toEqual({ [fresh]: true, [moved]: null });
      const expectAnswers = async () => {
        const both = await h.find(gail, 'markshared');
        expect(both.total).toBe(2);
        expect(new Set(ids(both))).toEqual(new Set([moved, fresh]));
        // The main index's older copy of `moved` is left out: its old word is found nowhere.
        expect(await h.find(gail, 'markoldword')).toEqual({ total: 0, results: [] });
      };
      await expectAnswers();

      // An index whose settings do not have the mark filterable (applied at start, or reverted by
      // an instance of an older version): every session held is left out, answers unchanged.
      const filterable = (await recent.getFilterableAttributes()) ?? [];
      expect(filterable).toContain('noMainCopy');
      expect((await recent.updateFilterableAttributes(filterable.filter((a) => a !== 'noMainCopy')).waitTask(ENGINE_TASK_WAIT)).status).toBe('succeeded');
      try {
        await expectAnswers();
      } finally {
        expect((await recent.updateFilterableAttributes(filterable).waitTask(ENGINE_TASK_WAIT)).status).toBe('succeeded');
      }

      // Once moved to the main index, a new session's next write is no longer marked.
      await h.search.compact();
      await h.settle();
      await h.put(gail, 'tiers-mark', fresh, { markdown: '# Fresh, rewritten\n\nmarkshared\n' });
      await h.settle();
      expect(await marks()).toEqual({ [fresh]: null });
      await expectAnswers();
    } finally {
      httpClient.destroy();
    }
  });

  test('a compaction of settled sessions leaves one still being written in the recent index', async () => {
    const erin = await h.user();
    const id = newSessionId();
    await h.put(erin, 'tiers-live', id, { markdown: '# Live\n\nlivesessionword\n' });
    await h.settle();
    const httpClient = createNodeHttpClient();
    try {
      const main = new Meilisearch({ host: h.config.meiliUrl!, apiKey: h.config.meiliMasterKey ?? undefined, httpClient }).index(h.search.indexUid);
      const inMain = async () => (await main.getDocuments({ filter: `sessionDigest = "${sessionDigestOf('tiers-live', id)}"`, fields: ['id'] })).results.length;
      await h.search.compact(60_000);
      await h.settle();
      expect(await inMain()).toBe(0);
      await h.search.compact();
      await h.settle();
      expect(await inMain()).toBe(1);
      expect(ids(await h.find(erin, 'livesessionword'))).toEqual([id]);
    } finally {
      httpClient.destroy();
    }
  });

  test('a large session moves between the indexes with its fragments: snippets and exchanges from either', async () => {
    const frank = await h.user();
    const id = newSessionId();
    const part = (i: number) => `## Exchange ${i}\n\n${'We compared the two builds again. '.repeat(50)}\n\n`;
    const first = `${Array.from({ length: 60 }, (_, i) => part(i)).join('')}## End\n\ntierlargeold at the end.\n`;
    await h.put(frank, 'tiers-large', id, { markdown: first });
    await h.settle();
    const check = async (word: string) => {
      const [hit] = (await h.find(frank, word)).results;
      expect(hit.sessionId).toBe(id);
      expect(hit.snippet).toContain(`<mark>${word}</mark>`);
      expect(hit.matchingExchanges.length).toBeGreaterThanOrEqual(1);
      for (const e of hit.matchingExchanges) expect(e.content).toContain(word);
    };
    await check('tierlargeold'); // from the recent index
    await h.search.compact();
    await h.settle();
    await check('tierlargeold'); // from the main index
    await h.put(frank, 'tiers-large', id, { markdown: `${first}\n## Later\n\ntierlargenew appended.\n` });
    await h.settle();
    await check('tierlargenew'); // the recent index again, whole
    await check('tierlargeold');
    expect((await h.find(frank, 'tierlargeold')).total).toBe(1);
    // Rewritten without the old word, still large: the main index's copy (with it) is left out.
    await h.put(frank, 'tiers-large', id, { markdown: first.replace('tierlargeold', 'tierlargethird') });
    await h.settle();
    await check('tierlargethird');
    expect(await h.find(frank, 'tierlargeold')).toEqual({ total: 0, results: [] });
  });

  test('a session moved to the main index and then deleted is never returned nor counted', async () => {
    const dave = await h.user();
    const id = newSessionId();
    await h.put(dave, 'tiers-del', id, { markdown: '# Gone soon\n\nmovedgoneword\n' });
    await h.settle();
    await h.search.compact();
    await h.settle();
    expect(ids(await h.find(dave, 'movedgoneword'))).toEqual([id]);
    await h.remove(dave, 'tiers-del', id);
    await h.settle();
    expect(await h.find(dave, 'movedgoneword')).toEqual({ total: 0, results: [] });
  });
});

describe('index settings', () => {
  test('the engine answers the declared settings back: nothing is re-sent at the next start', async () => {
    const httpClient = createNodeHttpClient();
    try {
      const client = new Meilisearch({ host: h.config.meiliUrl!, apiKey: h.config.meiliMasterKey ?? undefined, httpClient });
      for (const uid of [h.search.indexUid, recentUidOf(h.search.indexUid)]) {
        expect(settingsDiff(await client.index(uid).getSettings(), indexSettingsFor(uid))).toEqual({});
      }
      // The mark of new sessions is filterable in the recent index only: the main index never holds it.
      expect(await client.index(h.search.indexUid).getFilterableAttributes()).not.toContain('noMainCopy');
      expect(await client.index(recentUidOf(h.search.indexUid)).getFilterableAttributes()).toContain('noMainCopy');
    } finally {
      httpClient.destroy();
    }
  });
});
