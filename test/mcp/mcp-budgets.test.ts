/**
 * Budgets on a 50 MB session, through the SDK's client: no tool's text goes over 24,000
 * characters by default or over maxChars (1,000–60,000) when given, read_exchanges pages through
 * exchanges cut to fit (truncated: true) with nextFrom, and get_session's table of contents pages.
 * The search engine is left unreachable here: indexing 50 MB would hold the shared test machine
 * for minutes and is not what this file measures (the search tools' budgets: test/mcp/mcp.test.ts).
 */
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { connectMcp, type McpClient } from '../support/mcp-client';

const P = 'mcp-big';
const TARGET = 50_000_000;

let app: TestApp;
let u: TestUser;
let mcp: McpClient;

/** ~50 MB: exchanges of very different sizes (1 KB to 200 KB), multi-byte text included. */
function bigMarkdown(): string {
  const parts: string[] = ['# A very long session\n\n'];
  let size = parts[0].length;
  for (let i = 1; size < TARGET; i++) {
    const body = `line ${i} with ünïcödé ✓ 😀 and words about retries and caches. `.repeat(i % 7 === 0 ? 3000 : 20);
    const ex = `_**User**_\n\nQuestion ${i}: how about the cache?\n\n---\n\n_**Agent (claude)**_\n\n${body}\n\n---\n\n`;
    parts.push(ex);
    size += Buffer.byteLength(ex);
  }
  return parts.join('');
}

const textOf = (r: any) => (r.content as Array<{ type: string; text: string }>).map((c) => c.text).join('');
const transcriptChars = (sc: any) => (sc.exchanges ?? []).reduce((n: number, e: any) => n + e.markdown.length + e.title.length, 0);

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false, env: { MEILI_URL: 'http://127.0.0.1:9' } });
  u = await app.createUser('big');
  const markdown = bigMarkdown();
  const r = await app.request('PUT', `/api/v1/projects/${P}/sessions/${SID(1)}`, { token: u.token, body: { name: 'Big', markdown } });
  expect(r.status).toBe(201);
  mcp = await connectMcp(app.url, u.token);
}, 300_000);
afterAll(async () => {
  await mcp?.close();
  await app?.close();
}, 300_000);

test('read_exchanges: default 24,000 characters, maxChars honoured, truncated exchanges and nextFrom', async () => {
  const g = await mcp.call('get_session', { projectId: P, sessionId: SID(1) });
  expect(g.isError).toBeFalsy();
  expect(g.structuredContent.markdownSize).toBeGreaterThanOrEqual(TARGET);
  expect(textOf(g).length).toBeLessThanOrEqual(24_000);
  const total = g.structuredContent.totalExchanges;
  expect(total).toBeGreaterThan(500);
  // The table of contents pages too.
  expect(g.structuredContent.nextExchangesFrom).toEqual(expect.any(Number));
  const g2 = await mcp.call('get_session', { projectId: P, sessionId: SID(1), exchangesFrom: g.structuredContent.nextExchangesFrom });
  expect(g2.structuredContent.exchanges[0].number).toBe(g.structuredContent.nextExchangesFrom);

  // A ~200 KB exchange: cut to fit.
  const large = g.structuredContent.exchanges.find((e: any) => e.size > 100_000).number;
  const r = await mcp.call('read_exchanges', { projectId: P, sessionId: SID(1), from: large, count: 3 });
  expect(r.isError).toBeFalsy();
  expect(textOf(r).length).toBeLessThanOrEqual(24_000);
  expect(transcriptChars(r.structuredContent)).toBeLessThanOrEqual(24_000);
  expect(r.structuredContent.exchanges).toEqual([expect.objectContaining({ number: large, truncated: true })]);
  expect(r.structuredContent.nextFrom).toBe(large + 1);

  for (const maxChars of [1000, 60_000]) {
    const m = await mcp.call('read_exchanges', { projectId: P, sessionId: SID(1), from: 14, count: 10, maxChars });
    expect(textOf(m).length).toBeLessThanOrEqual(maxChars);
    expect(transcriptChars(m.structuredContent)).toBeLessThanOrEqual(maxChars);
    expect(textOf(m).length).toBeGreaterThan(maxChars * 0.8);
  }
  // Small exchanges: several per page, continued by nextFrom to the end.
  const small = await mcp.call('read_exchanges', { projectId: P, sessionId: SID(1), from: 1, count: 5 });
  expect(small.structuredContent.exchanges.map((e: any) => e.number)).toEqual([1, 2, 3, 4, 5]);
  const last = await mcp.call('read_exchanges', { projectId: P, sessionId: SID(1), from: total, count: 5 });
  expect(last.structuredContent.nextFrom).toBeNull();
}, 120_000);

test('no tool answers more than 24,000 characters of text about the 50 MB session', async () => {
  const calls: Array<[string, Record<string, unknown>]> = [
    ['list_projects', {}],
    ['list_sessions', { projectId: P, limit: 50 }],
    ['get_session', { projectId: P, sessionId: SID(1) }],
    ['read_exchanges', { projectId: P, sessionId: SID(1), count: 10 }],
    ['read_exchanges', { projectId: P, sessionId: SID(1), count: 10, from: 500 }],
  ];
  for (const [tool, args] of calls) {
    const r = await mcp.call(tool, args);
    expect([tool, r.isError ?? false]).toEqual([tool, false]);
    expect([tool, textOf(r).length <= 24_000]).toEqual([tool, true]);
  }
  // The search tools say the engine is unavailable, as an error result.
  const search = await mcp.call('search_sessions', { query: 'cache' });
  expect(search).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/temporarily unavailable/) }] });
}, 120_000);
