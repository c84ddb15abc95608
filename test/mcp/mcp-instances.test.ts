/**
 * Statelessness and other real clients: two instances of the service on one database answer one
 * SDK client's requests in turn (no protocol session), and the MCP Inspector's CLI (installed as a
 * pinned devDependency, run offline) lists the tools and calls one.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { connectMcp, MCP_TOOLS } from '../support/mcp-client';
import { ROOT } from '../support/paths';

let one: TestApp;
let two: TestApp;
let u: TestUser;

beforeAll(async () => {
  one = await startTestApp({ rateLimit: false });
  two = await startTestApp({ rateLimit: false, db: one.db });
  u = await one.createUser('inst');
  const r = await one.request('PUT', `/api/v1/projects/inst/sessions/${SID(1)}`, {
    token: u.token,
    body: { name: 'Two instances', markdown: '_**User**_\n\nhello\n\n---\n\n_**Agent**_\n\nworld\n' },
  });
  expect(r.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await two?.close();
  await one?.close();
});

test('one client, two instances in turn: every request answered, no protocol session', async () => {
  const hits = { [one.url]: 0, [two.url]: 0 };
  let turn = 0;
  const alternate: typeof fetch = (input, init) => {
    const target = [one.url, two.url][turn++ % 2];
    const u = new URL(String(input instanceof Request ? input.url : input));
    hits[target]++;
    return fetch(`${target}${u.pathname}${u.search}`, init);
  };
  const c = await connectMcp(one.url, u.token, { fetch: alternate });
  try {
    for (let i = 0; i < 4; i++) {
      const r = await c.call('get_session', { projectId: 'inst', sessionId: SID(1) });
      expect(r.structuredContent.title).toBe('Two instances');
      const l = await c.call('list_sessions', { limit: 1 });
      expect(l.structuredContent.sessions[0].sessionId).toBe(SID(1));
    }
  } finally {
    await c.close();
  }
  expect(hits[one.url]).toBeGreaterThan(4);
  expect(hits[two.url]).toBeGreaterThan(4);
});

function inspector(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = path.join(ROOT, 'node_modules', '.bin', 'mcp-inspector');
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: 120_000, env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as any).code) || 1 : 0, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

test('the MCP Inspector CLI lists the tools and calls one', async () => {
  const auth = ['--header', `Authorization: Bearer ${u.token}`];
  const list = await inspector(['--cli', `${two.url}/mcp`, '--transport', 'http', ...auth, '--method', 'tools/list']);
  expect([list.code, list.stderr]).toEqual([0, expect.anything()]);
  const tools = JSON.parse(list.stdout)
    .tools.map((t: any) => t.name)
    .sort();
  expect(tools).toEqual(MCP_TOOLS);
  const call = await inspector([
    '--cli',
    `${one.url}/mcp`,
    '--transport',
    'http',
    ...auth,
    '--method',
    'tools/call',
    '--tool-name',
    'get_session',
    '--tool-arg',
    'projectId=inst',
    '--tool-arg',
    `sessionId=${SID(1)}`,
  ]);
  expect(call.code).toBe(0);
  expect(JSON.parse(call.stdout).structuredContent.title).toBe('Two instances');
}, 240_000);
