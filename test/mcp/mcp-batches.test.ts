/**
 * Every MCP call counts. A JSON-RPC batch is refused under the protocol revisions that removed
 * batches (2025-06-18 on), whatever it holds; under an older revision (or none, which the SDK
 * reads as 2025-03-26) each call in it is a request of its own for the per-user rate limit: with
 * five requests left, the sixth call of a batch gets the rate-limit error as its answer and never
 * runs, and the next request is a 429. Single messages, as the SDK's client sends them, are
 * unchanged.
 */
import { SID, startTestApp, rawRequest, type TestApp, type TestUser } from '../support/app';
import { connectMcp } from '../support/mcp-client';

let seq = 0;
const LIMIT = 40;
const HEADERS = { Accept: 'application/json, text/event-stream' };

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_REST_PER_HOUR: String(LIMIT) } });
}, 60_000);
afterAll(() => app?.close());

const exchange = (n: number) => `_**User**_\n\nQuestion ${n}?\n\n---\n\n_**Agent (claude)**_\n\n${'answer words '.repeat(400)}\n\n---\n\n`;

/** A user with a project of their own holding one session of ten exchanges. */
async function reader(prefix: string): Promise<TestUser & { project: string }> {
  const u = await app.createUser(prefix);
  const project = `mcp-batch-${++seq}`;
  await app.upload(u, project, SID(1), { name: 'Batch target', markdown: Array.from({ length: 10 }, (_, i) => exchange(i + 1)).join('') });
  return { ...u, project };
}

/** Spends the user's REST budget down to `left` requests (reading the count from the headers). */
async function leaveOnly(u: TestUser, left: number): Promise<void> {
  for (;;) {
    const r = await app.request('GET', '/api/v1/projects', { token: u.token });
    expect(r.status).toBe(200);
    const remaining = Number(r.headers['x-ratelimit-remaining']);
    if (remaining <= left) {
      expect(remaining).toBe(left);
      return;
    }
  }
}

const readCall = (project: string, id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'read_exchanges', arguments: { projectId: project, sessionId: SID(1), from: 1, count: 10 } },
});
const batchOf = (project: string, n: number) => Array.from({ length: n }, (_, i) => readCall(project, i + 1));
const post = (u: TestUser, body: unknown, headers: Record<string, string> = {}) =>
  rawRequest(app.url, 'POST', '/mcp', { token: u.token, body, headers: { ...HEADERS, ...headers } });

test.each(['2025-06-18', '2025-11-25'])('a batch under %s is refused whole', async (revision) => {
  const u = await reader(`batch-refused-${revision}`);
  const r = await post(u, batchOf(u.project, 3), { 'MCP-Protocol-Version': revision });
  expect(r.status).toBe(400);
  expect(r.body).toEqual({
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: expect.stringContaining(`JSON-RPC batches are not supported in protocol version ${revision}`) },
  });
  // An initialize request asking for a revision without batches, in a batch of its own: refused too.
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: revision, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  };
  expect((await post(u, [init])).status).toBe(400);
  // The same calls one per request, as the SDK's client sends them, work under that revision.
  const mcp = await connectMcp(app.url, u.token, { protocol: revision as '2025-06-18' | '2025-11-25' });
  try {
    expect(mcp.protocol).toBe(revision);
    const one = await mcp.call('read_exchanges', { projectId: u.project, sessionId: SID(1), from: 1, count: 2 });
    expect(one.isError).toBeFalsy();
    expect(one.structuredContent.exchanges).toHaveLength(2);
  } finally {
    await mcp.close();
  }
});

test.each([
  ['2025-03-26', { 'MCP-Protocol-Version': '2025-03-26' }],
  ['no revision header', {}],
])('under %s each call of a batch counts: with 5 left, calls 6 to 8 get the rate-limit error', async (_name, headers: Record<string, string>) => {
  const u = await reader(`batch-counted-${Object.keys(headers).length}`);
  await leaveOnly(u, 5);

  const r = await post(u, batchOf(u.project, 8), headers);
  expect(r.status).toBe(200);
  expect(Array.isArray(r.body)).toBe(true);
  const byId = new Map<number, any>(r.body.map((m: any) => [m.id, m]));
  expect([...byId.keys()].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  for (const id of [1, 2, 3, 4, 5]) {
    const m = byId.get(id);
    expect(m.error).toBeUndefined();
    expect(m.result.isError).toBeFalsy();
    expect(m.result.structuredContent.exchanges.length).toBeGreaterThan(0);
  }
  for (const id of [6, 7, 8]) {
    const m = byId.get(id);
    expect(m.result).toBeUndefined();
    expect(m.error).toEqual({
      code: -32000,
      message: expect.stringMatching(/^Rate limit exceeded\. Try again in \d+ seconds\.$/),
      data: { retryAfter: expect.any(Number) },
    });
  }
  // The budget is spent: the next request, MCP or REST, is refused.
  const next = await post(u, readCall(u.project, 9), headers);
  expect(next.status).toBe(429);
  expect(next.body).toEqual({ success: false, error: expect.stringMatching(/^Rate limit exceeded/) });
  expect((await app.request('GET', '/api/v1/projects', { token: u.token })).status).toBe(429);
});

test('a batch within the budget spends one request per call', async () => {
  const u = await reader('batch-spends');
  await leaveOnly(u, 10);
  const r = await post(u, batchOf(u.project, 4), { 'MCP-Protocol-Version': '2024-11-05' });
  expect(r.status).toBe(200);
  expect(r.body.filter((m: any) => m.result && !m.result.isError)).toHaveLength(4);
  const after = await app.request('GET', '/api/v1/projects', { token: u.token });
  // 10 left: the batch took 4, this request 1.
  expect(after.headers['x-ratelimit-remaining']).toBe('5');
});
