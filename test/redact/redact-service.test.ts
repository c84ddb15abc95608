/**
 * Secret redaction end to end (docs/security.md): real MariaDB, Meilisearch and HTTP. Secrets of every
 * corpus format go in through JSON and gzip bodies (name, markdown, raw data, session data,
 * metadata); none comes back on any read path (REST JSON, markdown, raw, session data, lists,
 * GraphQL, search results and snippets, resume search) nor in the service log. Sizes stay, findings show per
 * rule, an identical re-upload is a no-op; `report` keeps content; `redact rescan` masks what an
 * earlier upload kept, and the search index follows.
 */
import { Writable } from 'node:stream';
import zlib from 'node:zlib';
import { buildCorpus } from '../../scripts/gen-redact-corpus';
import { rescanSessions } from '../../src/services/rescan';
import { operatorCtx } from '../../src/services/context';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';

jest.setTimeout(180_000);

const corpus = buildCorpus();
/** One positive per format. */
const samples = [...new Map(corpus.positives.map((p) => [p.format, p])).values()];
const SECRETS = samples.map((p) => p.secret);
const MARKER = 'quokkaredactmarker';
const githubToken = samples.find((p) => p.format === 'github-pat')!.secret;
const npmToken = samples.find((p) => p.format === 'npm-token')!.secret;

const markdown = `# Session ${MARKER}\n\n${samples.map((p, i) => `## User\n\n${MARKER} step ${i}\n\n${p.text}\n`).join('\n')}`;
const rawData = samples.map((p) => JSON.stringify({ type: 'tool_result', content: `${MARKER}\n${p.text}\n` })).join('\n') + '\n';
const sessionData = JSON.stringify({ messages: samples.slice(0, 20).map((p) => ({ role: 'user', text: p.text })) });
const body = {
  name: `Deploy with ${githubToken}`,
  markdown,
  rawData,
  sessionData,
  metadata: { clientName: 'cli', tags: ['deploy', npmToken], gitBranches: ['main'], summary: `token ${githubToken}` },
};

const logLines: string[] = [];
const logSink = new Writable({
  write(chunk, _enc, cb) {
    logLines.push(String(chunk));
    cb();
  },
});

function leaked(text: string): string[] {
  return SECRETS.filter((s) => text.includes(s) || text.includes(JSON.stringify(s).slice(1, -1)));
}

async function gql(app: TestApp, u: TestUser, query: string, variables: Record<string, unknown> = {}) {
  const r = await app.request('POST', '/api/v1/graphql', { token: u.token, body: { query, variables } });
  expect(r.status).toBe(200);
  expect(r.body.errors).toBeUndefined();
  return r;
}

/** Polls GraphQL search until the session is found (the outbox worker indexes asynchronously). */
async function searchUntilFound(app: TestApp, u: TestUser, sessionId: string, query = MARKER) {
  const q = `query($q: String!) { searchSessions(query: $q, limit: 50) { total results { sessionId name snippet matchingExchanges { content } metadata { tags summary } } } }`;
  for (let i = 0; i < 600; i++) {
    // The engine may be briefly unavailable (just started, or slow under a loaded machine): asked again.
    const probe = await app.request('POST', '/api/v1/graphql', { token: u.token, body: { query: q, variables: { q: query } } });
    if (probe.body.errors?.every((e: { extensions?: { code?: string } }) => e.extensions?.code === 'SERVICE_UNAVAILABLE')) {
      await new Promise((res) => setTimeout(res, 200));
      continue;
    }
    const r = await gql(app, u, q, { q: query });
    if (r.body.data.searchSessions.results.some((x: { sessionId: string }) => x.sessionId === sessionId)) return r;
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error('session never showed up in search');
}

describe('REDACT_SECRETS=on (default)', () => {
  let app: TestApp;
  let u: TestUser;
  const P = 'redact-on';
  const SESSION = SID(1801);
  const GZ_SESSION = SID(1802);

  beforeAll(async () => {
    app = await startTestApp({ env: { LOG_LEVEL: 'trace' }, logDestination: logSink });
    u = await app.createUser('redact');
    const put = await app.request('PUT', `/api/v1/projects/${P}/sessions/${SESSION}`, { token: u.token, body });
    expect(put.status).toBe(201);
    const gz = await app.request('PUT', `/api/v1/projects/${P}/sessions/${GZ_SESSION}`, {
      token: u.token,
      body: zlib.gzipSync(Buffer.from(JSON.stringify(body))),
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    });
    expect(gz.status).toBe(201);
  });
  afterAll(() => app?.close());

  test('every read path of both sessions is free of secrets; sizes are those of the upload', async () => {
    for (const sid of [SESSION, GZ_SESSION]) {
      const base = `/api/v1/projects/${P}/sessions/${sid}`;
      const json = await app.request('GET', base, { token: u.token });
      expect(json.status).toBe(200);
      expect(leaked(json.text)).toEqual([]);
      const s = json.body.data.session;
      expect(s.markdownSize).toBe(Buffer.byteLength(markdown));
      expect(s.rawDataSize).toBe(Buffer.byteLength(rawData));
      expect(s.sessionDataSize).toBe(Buffer.byteLength(sessionData));
      expect(Buffer.byteLength(s.markdownContent)).toBe(Buffer.byteLength(markdown));
      expect(s.name).toMatch(/^Deploy with \[REDACTED:github-token\]\*+$/);
      expect(s.markdownContent).toContain(MARKER);

      const md = await app.request('GET', base, { token: u.token, headers: { Accept: 'text/markdown' } });
      expect(md.raw.length).toBe(Buffer.byteLength(markdown));
      expect(leaked(md.text)).toEqual([]);

      const raw = await app.request('GET', `${base}/raw`, { token: u.token });
      expect(raw.raw.length).toBe(Buffer.byteLength(rawData));
      expect(leaked(raw.text)).toEqual([]);
      // Raw data that was JSON Lines still is, line for line.
      const lines = raw.text.trim().split('\n');
      expect(lines).toHaveLength(samples.length);
      for (const l of lines) expect(JSON.parse(l).type).toBe('tool_result');

      const sd = await app.request('GET', base, { token: u.token, headers: { Accept: 'application/vnd.specstory.session-data+json' } });
      expect(sd.status).toBe(200);
      expect(sd.raw.length).toBe(Buffer.byteLength(sessionData));
      expect(leaked(sd.text)).toEqual([]);
      expect(JSON.parse(sd.text).messages).toHaveLength(20);
    }
    const list = await app.request('GET', `/api/v1/projects/${P}/sessions`, { token: u.token });
    const recent = await app.request('GET', '/api/v1/sessions/recent', { token: u.token });
    const projects = await app.request('GET', '/api/v1/projects', { token: u.token });
    for (const r of [list, recent, projects]) expect(leaked(r.text)).toEqual([]);
  });

  test('findings per rule on REST and GraphQL, never a value', async () => {
    const json = await app.request('GET', `/api/v1/projects/${P}/sessions/${SESSION}`, { token: u.token });
    const redactions = json.body.data.session.redactions as Array<{ rule: string; count: number }>;
    const rules = redactions.map((r) => r.rule);
    expect(rules).toEqual([...rules].sort());
    for (const r of redactions) expect(Object.keys(r).sort()).toEqual(['count', 'rule']);
    const count = (rule: string) => redactions.find((r) => r.rule === rule)?.count ?? 0;
    // The GitHub token: in the name, the metadata summary, its markdown, raw data and session data.
    expect(count('github-token')).toBeGreaterThanOrEqual(5);
    for (const rule of ['aws-access-key', 'private-key', 'jwt', 'url-credentials', 'authorization-header', 'secret-value', 'npm-token']) {
      expect(count(rule)).toBeGreaterThan(0);
    }
    const listed = await app.request('GET', `/api/v1/projects/${P}/sessions`, { token: u.token });
    const inList = listed.body.data.sessions.find((s: { id: string }) => s.id === SESSION);
    expect(inList.redactions).toEqual(redactions);

    const g = await gql(
      app,
      u,
      `query($p: ID!, $id: ID!) { session(projectId: $p, id: $id) { name markdownContent metadata { tags summary } redactions { rule count } } }`,
      { p: P, id: SESSION },
    );
    expect(g.body.data.session.redactions).toEqual(redactions);
    expect(leaked(g.text)).toEqual([]);
    expect(g.body.data.session.metadata.tags[1]).toMatch(/^\[REDACTED:npm-token\]\*+$/);
  });

  test('search results, snippets and matching exchanges carry no secret', async () => {
    const r = await searchUntilFound(app, u, SESSION);
    expect(leaked(r.text)).toEqual([]);
    expect(r.body.data.searchSessions.results[0].snippet).toContain(MARKER);
    // The upload CLI's resume search (its snippets come from the same index).
    const resume = await app.request('POST', '/api/v1/search/resume', { token: u.token, body: { query: MARKER } });
    expect(resume.status).toBe(200);
    expect(resume.body.data.results.length).toBeGreaterThan(0);
    expect(leaked(resume.text)).toEqual([]);
    // Searching for a secret itself finds nothing that shows it.
    const bySecret = await gql(app, u, `query($q: String!) { searchSessions(query: $q) { results { snippet name } } }`, { q: githubToken });
    expect(leaked(bySecret.text)).toEqual([]);
  });

  test('an identical re-upload (JSON or gzip) is a no-op: same ETag, same updatedAt', async () => {
    const before = await app.request('GET', `/api/v1/projects/${P}/sessions/${SESSION}`, { token: u.token });
    const again = await app.request('PUT', `/api/v1/projects/${P}/sessions/${SESSION}`, { token: u.token, body });
    expect(again.status).toBe(200);
    expect(again.body.data.etag).toBe(before.body.data.session.etag);
    expect(again.body.data.updatedAt).toBe(before.body.data.session.updatedAt);
    const gz = await app.request('PUT', `/api/v1/projects/${P}/sessions/${SESSION}`, {
      token: u.token,
      body: zlib.gzipSync(Buffer.from(JSON.stringify(body))),
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    });
    expect(gz.body.data.etag).toBe(before.body.data.session.etag);
    const after = await app.request('GET', `/api/v1/projects/${P}/sessions/${SESSION}`, { token: u.token });
    expect(after.body.data.session.updatedAt).toBe(before.body.data.session.updatedAt);
    expect(after.headers.etag).toBe(before.headers.etag);
  });

  test('an upload without session data keeps the stored session data and its findings', async () => {
    const before = await app.request('GET', `/api/v1/projects/${P}/sessions/${GZ_SESSION}`, { token: u.token });
    const { sessionData: _omit, ...rest } = body;
    const r = await app.request('PUT', `/api/v1/projects/${P}/sessions/${GZ_SESSION}`, { token: u.token, body: rest });
    expect(r.status).toBe(200);
    const after = await app.request('GET', `/api/v1/projects/${P}/sessions/${GZ_SESSION}`, { token: u.token });
    expect(after.body.data.session.redactions).toEqual(before.body.data.session.redactions);
    expect(after.body.data.session.sessionDataSize).toBe(Buffer.byteLength(sessionData));
  });

  test('the service log (at trace level) shows no secret', () => {
    expect(logLines.length).toBeGreaterThan(0);
    expect(leaked(logLines.join(''))).toEqual([]);
  });
});

describe('REDACT_SECRETS=report, then redact rescan', () => {
  let app: TestApp;
  let u: TestUser;
  const P = 'redact-report';
  const SESSION = SID(1803);

  beforeAll(async () => {
    app = await startTestApp({ env: { REDACT_SECRETS: 'report' } });
    u = await app.createUser('report');
  });
  afterAll(() => app?.close());

  test('report keeps the content and records findings; rescan masks it, keeps the counts, reindexes', async () => {
    const put = await app.request('PUT', `/api/v1/projects/${P}/sessions/${SESSION}`, { token: u.token, body });
    expect(put.status).toBe(201);
    const kept = await app.request('GET', `/api/v1/projects/${P}/sessions/${SESSION}`, { token: u.token });
    expect(kept.body.data.session.markdownContent).toBe(markdown);
    expect(leaked(kept.text)).toEqual(SECRETS); // the check below can see every secret
    const reported = kept.body.data.session.redactions as Array<{ rule: string; count: number }>;
    expect(reported.find((r) => r.rule === 'github-token')?.count).toBeGreaterThanOrEqual(5);
    await searchUntilFound(app, u, SESSION);

    const dry = await rescanSessions(operatorCtx(app.deps.db), 'on', { dryRun: true });
    expect(dry.changed).toBe(1);
    const still = await app.request('GET', `/api/v1/projects/${P}/sessions/${SESSION}/raw`, { token: u.token });
    expect(still.text).toBe(rawData);

    const progress: number[] = [];
    const done = await rescanSessions(operatorCtx(app.deps.db), 'on', { dryRun: false, onProgress: (p) => progress.push(p.done) });
    expect(done).toMatchObject({ done: 1, total: 1, changed: 1 });
    expect(progress).toEqual([1]);
    const after = await app.request('GET', `/api/v1/projects/${P}/sessions/${SESSION}`, { token: u.token });
    const s = after.body.data.session;
    expect(leaked(after.text)).toEqual([]);
    expect(s.markdownSize).toBe(Buffer.byteLength(markdown));
    expect(s.etag).not.toBe(kept.body.data.session.etag);
    // The secrets counted by `report` were masked now, not counted twice.
    expect(s.redactions).toEqual(reported);
    for (const path of ['/raw']) {
      const r = await app.request('GET', `/api/v1/projects/${P}/sessions/${SESSION}${path}`, { token: u.token });
      expect(leaked(r.text)).toEqual([]);
    }
    // The index follows: the marker still finds it, with nothing secret in what comes back.
    for (let i = 0; i < 600; i++) {
      const r = await searchUntilFound(app, u, SESSION);
      if (leaked(r.text).length === 0) break;
      if (i === 599) throw new Error('search index still shows a secret');
      await new Promise((res) => setTimeout(res, 200));
    }
    // A second rescan finds nothing new.
    const again = await rescanSessions(operatorCtx(app.deps.db), 'on', { dryRun: false });
    expect(again.changed).toBe(0);
  });
});
