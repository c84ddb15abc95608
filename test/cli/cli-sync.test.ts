/**
 * The upload CLI's sync (docs/upload-clients.md): the session data blob as a third content part, the sizes
 * it decides from, and a repeated sync that sends nothing. Requests are built as sync.go builds
 * them: Go's HTML-safe JSON escaping, gzip bodies, its User-Agent.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import {
  cliBare,
  cliFetchSessionData,
  cliPut,
  cliUploadBody,
  CLI_USER_AGENT,
  CLI_VERSION,
  requiresSyncBulk,
  requiresSyncHead,
  SESSION_DATA_MEDIA_TYPE,
  type CliUpload,
} from '../support/specstory-clients';

/** Incompressible but fixed bytes: SHA-256 of a counter, concatenated. */
function deterministicBytes(n: number): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; blocks.length * 32 < n; i++) blocks.push(crypto.createHash('sha256').update(`cli-sync ${i}`).digest());
  return Buffer.concat(blocks).subarray(0, n);
}

let app: TestApp;
let a: TestUser;
let b: TestUser;

beforeAll(async () => {
  app = await startTestApp({ env: { MAX_BODY_BYTES: String(20 * 1024 * 1024) } });
  a = await app.createUser('a');
  b = await app.createUser('b');
});
afterAll(() => app?.close());

const PROJECT = '833c-d926-f753-7b4a';
const sid = () => crypto.randomUUID();

/** A SessionData blob as the CLI normalises it (schema.SessionData), with characters Go escapes. */
function sessionDataOf(id: string, exchanges: number): string {
  return JSON.stringify({
    schemaVersion: '1.0',
    provider: { id: 'claude-code', name: 'Claude Code', version: '2.0.1' },
    sessionId: id,
    createdAt: '2026-11-20T10:00:00Z',
    workspaceRoot: '/home/ada/src/app',
    exchanges: Array.from({ length: exchanges }, (_, i) => ({
      exchangeId: `${id}:${i}`,
      messages: [
        { role: 'user', content: [{ type: 'text', text: `Why is a < b && c > d in step ${i}? café \u2028 😀` }] },
        { role: 'agent', content: [{ type: 'text', text: 'Because <T> & "quotes" \\ backslashes' }] },
      ],
    })),
  });
}

function upload(id: string, over: Partial<CliUpload> = {}): CliUpload {
  return {
    projectId: PROJECT,
    projectName: 'app',
    name: `2026-11-20_10-00-00Z-why-${id.slice(0, 4)}`,
    markdown: `# Why <a> & <b>\n\n_**User**_\n\nWhy is a < b?\n\n---\n\n_**Agent (claude)**_\n\nBecause.\n`,
    rawData: `{"type":"user","message":"a < b && c > d"}\n{"type":"assistant","message":"ok"}\n`,
    sessionData: sessionDataOf(id, 2),
    metadata: {
      clientName: 'specstory-cli',
      clientVersion: CLI_VERSION,
      agentName: 'Claude Code',
      deviceId: 'dev-1',
      machineName: 'ada-laptop',
      title: 'Why is a < b?',
    },
    ...over,
  };
}

describe('sessionData: kept byte-exact as a third content part', () => {
  const id = sid();
  const up = upload(id);
  let etag: string;

  test('the CLI PUT (Go-escaped, gzip) is accepted and the blob comes back byte for byte', async () => {
    // The body really carries Go's escapes.
    expect(zlib.gunzipSync(cliUploadBody(up)).toString('utf8')).toContain('\\u003c');
    const r = await cliPut(app, a.token, PROJECT, id, up);
    expect(r.status).toBe(201);
    etag = r.headers.etag as string;

    const g = await cliFetchSessionData(app, a.token, PROJECT, id);
    expect(g.status).toBe(200);
    expect(g.headers['content-type']).toBe(SESSION_DATA_MEDIA_TYPE);
    expect(g.raw.equals(Buffer.from(up.sessionData!, 'utf8'))).toBe(true);
    expect(g.headers.etag).toBe(etag);
    expect(g.headers['x-session-data-size']).toBe(String(Buffer.byteLength(up.sessionData!)));
    expect(g.headers.vary).toMatch(/Accept/);
    // Markdown and raw data are unaffected.
    const raw = await app.request('GET', `/api/v1/projects/${PROJECT}/sessions/${id}/raw`, { token: a.token });
    expect(raw.text).toBe(up.rawData);
    const md = await app.request('GET', `/api/v1/projects/${PROJECT}/sessions/${id}`, { token: a.token, headers: { Accept: 'text/markdown' } });
    expect(md.text).toBe(up.markdown);
    expect(md.headers['x-session-data-size']).toBe(String(Buffer.byteLength(up.sessionData!)));
  });

  test('304 for a matching If-None-Match, as for the other variants', async () => {
    const r = await app.request('GET', `/api/v1/projects/${PROJECT}/sessions/${id}`, {
      token: a.token,
      headers: { Accept: SESSION_DATA_MEDIA_TYPE, 'If-None-Match': etag },
    });
    expect(r.status).toBe(304);
    expect(r.raw.length).toBe(0);
    expect(r.headers.etag).toBe(etag);
  });

  test('sessionDataSize and clientId on JSON detail and lists; HEAD sends X-Session-Data-Size', async () => {
    const size = Buffer.byteLength(up.sessionData!);
    const detail = await app.request('GET', `/api/v1/projects/${PROJECT}/sessions/${id}`, { token: a.token });
    expect(detail.body.data.session).toMatchObject({ id, clientId: id, sessionDataSize: size, rawDataSize: Buffer.byteLength(up.rawData) });
    expect(detail.body.data.session.sessionData).toBeUndefined();
    const list = await app.request('GET', `/api/v1/projects/${PROJECT}/sessions`, { token: a.token });
    expect(list.body.data.sessions.find((s: any) => s.id === id)).toMatchObject({ clientId: id, sessionDataSize: size });
    const recent = await app.request('GET', '/api/v1/sessions/recent', { token: a.token });
    expect(recent.body.data.sessions.find((s: any) => s.id === id)).toMatchObject({ clientId: id, sessionDataSize: size });
    const head = await cliBare(app, a.token, 'HEAD', `/api/v1/projects/${PROJECT}/sessions/${id}`);
    expect(head.status).toBe(200);
    expect(head.headers['x-session-data-size']).toBe(String(size));
    expect(head.headers['x-markdown-size']).toBe(String(Buffer.byteLength(up.markdown)));
  });

  test('/sizes adds "<id>:sessionData" only for sessions that have one', async () => {
    const bare = sid();
    expect((await cliPut(app, a.token, PROJECT, bare, upload(bare, { sessionData: undefined }))).status).toBe(201);
    const r = await cliBare(app, a.token, 'GET', `/api/v1/projects/${PROJECT}/sessions/sizes`);
    expect(r.status).toBe(200);
    const sizes = r.body.data.sessions;
    expect(sizes[id]).toBe(Buffer.byteLength(up.markdown));
    expect(sizes[`${id}:sessionData`]).toBe(Buffer.byteLength(up.sessionData!));
    expect(sizes[bare]).toBe(Buffer.byteLength(up.markdown));
    expect(`${bare}:sessionData` in sizes).toBe(false);
  });

  test('an upload without sessionData keeps the stored one; a changed blob changes the etag', async () => {
    const grown = { ...up, markdown: `${up.markdown}\nmore\n`, sessionData: undefined };
    const r = await cliPut(app, a.token, PROJECT, id, grown);
    expect(r.status).toBe(200);
    expect(r.headers.etag).not.toBe(etag);
    const kept = await cliFetchSessionData(app, a.token, PROJECT, id);
    expect(kept.text).toBe(up.sessionData);
    const md = await app.request('GET', `/api/v1/projects/${PROJECT}/sessions/${id}`, { token: a.token, headers: { Accept: 'text/markdown' } });
    expect(md.text).toBe(grown.markdown);

    // Same markdown and raw data, another blob: a change.
    const other = await cliPut(app, a.token, PROJECT, id, { ...grown, sessionData: sessionDataOf(id, 3) });
    expect(other.status).toBe(200);
    expect(other.headers.etag).not.toBe(r.headers.etag);
    expect((await cliFetchSessionData(app, a.token, PROJECT, id)).text).toBe(sessionDataOf(id, 3));
    // Identical again: a no-op (same etag, same updatedAt).
    const again = await cliPut(app, a.token, PROJECT, id, { ...grown, sessionData: sessionDataOf(id, 3) });
    expect(again.body.data).toEqual(other.body.data);
  });

  test('no blob → 404 Session data not found; unproducible Accept → 406; */* → JSON', async () => {
    const bare = sid();
    await cliPut(app, a.token, PROJECT, bare, upload(bare, { sessionData: undefined }));
    expect(await cliFetchSessionData(app, a.token, PROJECT, bare)).toMatchObject({
      status: 404,
      body: { success: false, error: 'Session data not found' },
    });
    const n = await app.request('GET', `/api/v1/projects/${PROJECT}/sessions/${id}`, { token: a.token, headers: { Accept: 'image/png' } });
    expect(n.status).toBe(406);
    expect(n.body).toEqual({ success: false, error: 'Not acceptable' });
    const any = await app.request('GET', `/api/v1/projects/${PROJECT}/sessions/${id}`, { token: a.token, headers: { Accept: '*/*' } });
    expect(any.status).toBe(200);
    expect(any.body.data.session.id).toBe(id);
    // A preference list picks the blob when it is first.
    const pref = await app.request('GET', `/api/v1/projects/${PROJECT}/sessions/${id}`, {
      token: a.token,
      headers: { Accept: `${SESSION_DATA_MEDIA_TYPE}, application/json;q=0.5` },
    });
    expect(pref.headers['content-type']).toBe(SESSION_DATA_MEDIA_TYPE);
  });

  test("another user's session → 403 for the blob too; unknown → 404; non-string sessionData → 400", async () => {
    expect((await cliFetchSessionData(app, b.token, PROJECT, id)).status).toBe(403);
    expect(await cliFetchSessionData(app, a.token, PROJECT, sid())).toMatchObject({ status: 404, body: { error: 'Session not found' } });
    const bad = await app.request('PUT', `/api/v1/projects/${PROJECT}/sessions/${sid()}`, {
      token: a.token,
      body: { name: 'n', markdown: 'm', sessionData: { schemaVersion: '1.0' } },
    });
    expect(bad).toMatchObject({ status: 400, body: { success: false, error: 'Invalid type for sessionData: expected a string' } });
  });

  test('an 8 MiB sessionData, gzip, comes back byte-exact (several storage chunks)', async () => {
    const big = sid();
    // Mostly incompressible JSON text so that the blob really spans 8 MiB of chunks. Deterministic
    // (SHA-256 in counter mode), not random: random base64 now and then holds a run the secret
    // redactor rightly masks, and the blob would not come back byte-exact.
    const filler = deterministicBytes(5 * 1024 * 1024).toString('base64');
    const blob = JSON.stringify({ schemaVersion: '1.0', sessionId: big, exchanges: [{ text: `<&> ${filler}` }] });
    const sessionData = blob + ' '.repeat(8 * 1024 * 1024 - Buffer.byteLength(blob));
    expect(Buffer.byteLength(sessionData)).toBe(8 * 1024 * 1024);
    const r = await cliPut(app, a.token, PROJECT, big, upload(big, { sessionData }));
    expect(r.status).toBe(201);
    const g = await cliFetchSessionData(app, a.token, PROJECT, big);
    expect(g.status).toBe(200);
    expect(g.raw.length).toBe(8 * 1024 * 1024);
    expect(crypto.createHash('sha256').update(g.raw).digest('hex')).toBe(crypto.createHash('sha256').update(sessionData).digest('hex'));
    const sizes = await cliBare(app, a.token, 'GET', `/api/v1/projects/${PROJECT}/sessions/sizes`);
    expect(sizes.body.data.sessions[`${big}:sessionData`]).toBe(8 * 1024 * 1024);
  }, 120_000);
});

describe('the body limit counts sessionData', () => {
  let small: TestApp;
  let u: TestUser;
  beforeAll(async () => {
    small = await startTestApp({ env: { MAX_BODY_BYTES: String(64 * 1024) } });
    u = await small.createUser('u');
  });
  afterAll(() => small?.close());

  test('markdown and raw data under the limit, sessionData over it → 413, nothing stored', async () => {
    const id = sid();
    const r = await cliPut(small, u.token, 'lim', id, upload(id, { sessionData: 'x'.repeat(70 * 1024) }));
    expect(r).toMatchObject({ status: 413, body: { success: false, error: 'Request body too large' } });
    expect((await small.request('HEAD', `/api/v1/projects/lim/sessions/${id}`, { token: u.token })).status).toBe(404);
  });
});

describe('a repeated sync sends no PUT (the CLI decision logic replayed)', () => {
  interface Local {
    id: string;
    up: CliUpload;
  }
  const project = 'f00d-cafe-0001';

  /** One `specstory sync` in batch mode: PreloadSessionSizes, then requiresSync per session. */
  async function syncBatch(token: string, locals: Local[]): Promise<string[]> {
    const sizesRes = await cliBare(app, token, 'GET', `/api/v1/projects/${project}/sessions/sizes`);
    expect(sizesRes.status).toBe(200); // a 404 would cost the CLI two retries and a HEAD per session
    const sizes = sizesRes.body.data.sessions as Record<string, number>;
    const sent: string[] = [];
    for (const l of locals) {
      if (!requiresSyncBulk(sizes, l.id, l.up.markdown)) continue;
      const r = await cliPut(app, token, project, l.id, l.up);
      expect([200, 201]).toContain(r.status);
      sent.push(l.id);
    }
    return sent;
  }

  /** Single-session mode (sizes unavailable): a HEAD per session. */
  async function syncWithHead(token: string, locals: Local[]): Promise<string[]> {
    const sent: string[] = [];
    for (const l of locals) {
      const head = await cliBare(app, token, 'HEAD', `/api/v1/projects/${project}/sessions/${l.id}`);
      if (!requiresSyncHead(head, l.up.markdown)) continue;
      const r = await cliPut(app, token, project, l.id, l.up);
      expect([200, 201]).toContain(r.status);
      sent.push(l.id);
    }
    return sent;
  }

  test('first sync sends all; the second none; a grown session alone is re-sent (sizes and HEAD)', async () => {
    const locals: Local[] = Array.from({ length: 4 }, () => {
      const id = sid();
      return { id, up: upload(id, { projectId: project }) };
    });
    expect((await syncBatch(a.token, locals)).sort()).toEqual(locals.map((l) => l.id).sort());
    expect(await syncBatch(a.token, locals)).toEqual([]);
    expect(await syncWithHead(a.token, locals)).toEqual([]);

    locals[2].up = { ...locals[2].up, markdown: `${locals[2].up.markdown}\n_**User**_\n\nAnd then?\n`, sessionData: sessionDataOf(locals[2].id, 3) };
    expect(await syncBatch(a.token, locals)).toEqual([locals[2].id]);
    expect(await syncBatch(a.token, locals)).toEqual([]);

    locals[0].up = { ...locals[0].up, markdown: `${locals[0].up.markdown}\nmore\n` };
    expect(await syncWithHead(a.token, locals)).toEqual([locals[0].id]);
    expect(await syncWithHead(a.token, locals)).toEqual([]);
    expect(await syncBatch(a.token, locals)).toEqual([]);
  });

  test('a session stored without session data is re-sent once (the CLI self-heals), then left alone', async () => {
    const id = sid();
    const legacy = upload(id, { projectId: project, sessionData: undefined });
    expect((await cliPut(app, a.token, project, id, legacy)).status).toBe(201);
    const locals = [{ id, up: upload(id, { projectId: project }) }];
    expect(await syncBatch(a.token, locals)).toEqual([id]);
    expect(await syncBatch(a.token, locals)).toEqual([]);
    expect(await syncWithHead(a.token, locals)).toEqual([]);
  });

  test('requests carry the CLI User-Agent unchanged', () => {
    expect(CLI_USER_AGENT).toBe(`specstory-cli/${CLI_VERSION} SpecStory, Inc.`);
  });
});

describe('GraphQL Session.sessionDataSize', () => {
  test('the size, or 0 without session data', async () => {
    const withData = sid();
    const without = sid();
    const up = upload(withData, { projectId: 'gql-sd' });
    await cliPut(app, a.token, 'gql-sd', withData, up);
    await cliPut(app, a.token, 'gql-sd', without, upload(without, { projectId: 'gql-sd', sessionData: undefined }));
    const r = await app.request('POST', '/api/v1/graphql', {
      token: a.token,
      body: {
        query: `{ a: session(projectId: "gql-sd", id: "${withData}") { sessionDataSize } b: session(projectId: "gql-sd", id: "${without}") { sessionDataSize } }`,
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ data: { a: { sessionDataSize: Buffer.byteLength(up.sessionData!) }, b: { sessionDataSize: 0 } } });
  });
});
