/**
 * Observability (docs/operations.md): request ids on every response and in the log
 * line, /metrics in Prometheus text (and off when METRICS_ENABLED=false), readiness.
 */
import http from 'node:http';
import { testDataDir } from '../support/meili-engine';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createDeps } from '../../src/deps';
import { createRateLimitHooks } from '../../src/http/rate-limit';
import { createLogger } from '../../src/logger';
import { createApiKey } from '../../src/services/keys';
import { operatorCtx } from '../../src/services/context';
import { createUser } from '../../src/services/users';
import { rawRequest, startTestApp, type TestApp } from '../support/app';
import { createTestDatabase, type TestDatabase } from '../support/db';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Value of one sample in Prometheus text, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const pair of (m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) got[pair[1]] = pair[2];
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

describe('request ids and the access log', () => {
  let db: TestDatabase;
  let server: http.Server;
  let url: string;
  let stop: () => Promise<void>;
  const lines: any[] = [];
  let token: string;
  let userId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const config = loadConfig({
      DATABASE_URL: db.url,
      DATA_DIR: testDataDir(),
      JWT_SECRET: 'test-secret-that-is-long-enough',
      NAMESPACE: db.name,
      LOG_LEVEL: 'info',
    });
    const sink = new Writable({
      write(chunk, _enc, cb) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        cb();
      },
    });
    const deps = createDeps(config, createLogger(config.logLevel, sink));
    await deps.start();
    const hooks = createRateLimitHooks(config, deps.logger);
    const built = await buildApp(deps, hooks);
    server = http.createServer(built.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const user = await createUser(operatorCtx(deps.db), `ops-${Date.now()}@example.test`, 'ops');
    userId = user.id;
    ({ token } = await createApiKey(operatorCtx(deps.db, { jwtSecret: config.jwtSecret }), { name: 'ops' }, user.id));
    stop = async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await built.stop();
      await hooks.close();
      await deps.close();
      await db.drop();
    };
  });
  afterAll(async () => {
    await stop();
  });

  const logFor = async (reqId: string) => {
    for (let i = 0; i < 50; i++) {
      const line = lines.find((l) => l.reqId === reqId && l.status !== undefined);
      if (line) return line;
      await new Promise((r) => setTimeout(r, 20));
    }
    return undefined;
  };

  it('keeps a sane client request id, in the response and in the one log line', async () => {
    const r = await rawRequest(url, 'GET', '/api/v1/projects', { token, headers: { 'X-Request-Id': 'client-abc.123:x' } });
    expect(r.status).toBe(200);
    expect(r.headers['x-request-id']).toBe('client-abc.123:x');
    const line = await logFor('client-abc.123:x');
    expect(line).toMatchObject({ level: 'info', reqId: 'client-abc.123:x', method: 'GET', route: '/api/v1/projects', status: 200, userId });
    expect(typeof line.time).toBe('string');
    expect(typeof line.durationMs).toBe('number');
    // Never the token.
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it('replaces an insane or missing request id with a fresh UUID, also on errors', async () => {
    const evil = await rawRequest(url, 'GET', '/api/v1/projects', { headers: { 'X-Request-Id': 'bad id with spaces <script>' } });
    expect(evil.status).toBe(401);
    expect(evil.headers['x-request-id']).toMatch(UUID);
    const long = await rawRequest(url, 'GET', '/healthz', { headers: { 'X-Request-Id': 'a'.repeat(500) } });
    expect(long.headers['x-request-id']).toMatch(UUID);
    const none = await rawRequest(url, 'GET', '/nowhere');
    expect(none.status).toBe(404);
    expect(none.headers['x-request-id']).toMatch(UUID);
    const a = await rawRequest(url, 'GET', '/healthz');
    expect(a.headers['x-request-id']).not.toBe(none.headers['x-request-id']);
    const line = await logFor(String(evil.headers['x-request-id']));
    expect(line).toMatchObject({ status: 401, userId: null, route: '/api/*' });
  });
});

describe('/metrics', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { RATE_LIMIT_REST_PER_HOUR: '2' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('serves Prometheus text without auth: requests by route and status, latency, rate-limit rejections, outbox, search', async () => {
    const user = await app.createUser('metrics');
    const sid = '0e0f6a8e-6f0b-4c55-9c8e-3f7a8a0b1c2d';
    expect(
      (await app.request('PUT', `/api/v1/projects/metrics-proj/sessions/${sid}`, { token: user.token, body: { name: 'm', markdown: '# m' } })).status,
    ).toBe(201);
    expect((await app.request('GET', '/api/v1/projects/metrics-proj', { token: user.token })).status).toBe(200);
    expect((await app.request('GET', '/api/v1/projects', { token: user.token })).status).toBe(429);
    // A real search (through GraphQL, with its own rate limit) is timed into search_duration_seconds.
    // (The engine may still be coming up just after start: asked again until it answers.)
    const search = () => app.request('POST', '/api/v1/graphql', { token: user.token, body: { query: '{ searchSessions(query: "metrics") { total } }' } });
    let found = await search();
    for (let i = 0; i < 100 && found.body.errors; i++) {
      await new Promise((r) => setTimeout(r, 200));
      found = await search();
    }
    expect(found.status).toBe(200);
    expect(found.body.errors).toBeUndefined();
    // Two units set aside after ten failures (the dead-letter table is never drained by the worker).
    for (const id of [9_000_001, 9_000_002]) {
      await app.deps.db.pool.query(
        "INSERT INTO search_outbox_dead (id, op, userId, projectId, sessionId, attempts, createdAt, lastError) VALUES (?, 'upsert', ?, 'metrics-proj', ?, 10, NOW(3), 'engine down')",
        [id, user.id, sid],
      );
    }

    const r = await app.request('GET', '/metrics');
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type'])).toMatch(/^text\/plain/);
    const text = r.text;
    expect(sample(text, 'http_requests_total', { method: 'PUT', route: '/api/v1/projects/:projectId/sessions/:sessionId', status: '201' })).toBe(1);
    expect(sample(text, 'http_requests_total', { method: 'GET', route: '/api/v1/projects/:projectId', status: '200' })).toBe(1);
    expect(sample(text, 'http_requests_total', { method: 'GET', status: '429' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { method: 'PUT', route: '/api/v1/projects/:projectId/sessions/:sessionId' })).toBe(1);
    expect(sample(text, 'rate_limit_rejections_total', { kind: 'rest' })).toBe(1);
    // The PUT queued index work, which the worker may or may not have drained by now: the gauge is
    // a count (never -1, which means the database could not be read).
    expect(sample(text, 'search_outbox_backlog')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'search_outbox_dead_total')).toBe(2);
    // A count (-1 would mean the engine could not be read); once the worker indexed the session
    // just written, it waits in the recent index (compaction moves it after a minute at the earliest).
    expect(sample(text, 'search_recent_documents')).toBeGreaterThanOrEqual(0);
    let recent = sample(text, 'search_recent_documents');
    for (let i = 0; i < 150 && recent === 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      recent = sample((await app.request('GET', '/metrics')).text, 'search_recent_documents');
    }
    expect(recent).toBe(1);
    expect(sample(text, 'search_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    // Each engine's health (one engine here, no standby).
    expect(sample(text, 'search_engine_up', { engine: '0', role: 'primary' })).toBe(1);
    expect(sample(text, 'search_engine_up', { role: 'standby' })).toBeUndefined();
    // An app built without the process's metrics (only the entry point collects them, once per
    // process: metrics.ts processMetrics) serves its own only.
    expect(text).not.toContain('process_cpu_user_seconds_total');
    expect(text).not.toContain('nodejs_gc_duration_seconds');
    // Route labels are patterns: never an id.
    expect(text).not.toContain(sid);
    expect(text).not.toContain('metrics-proj');
  });
});

describe('/metrics disabled', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { METRICS_ENABLED: 'false' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers 404 when METRICS_ENABLED=false; health endpoints still answer', async () => {
    const r = await app.request('GET', '/metrics');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ success: false, error: 'Not found' });
    expect((await app.request('GET', '/healthz')).body).toEqual({ status: 'ok' });
    expect((await app.request('GET', '/readyz')).status).toBe(200);
  });
});
