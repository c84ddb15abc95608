import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../support/chromium';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { responseProblem } from '../support/openapi';
import { ROUTES } from '../../src/api/routes';
import { ROOT } from '../support/paths';

/**
 * GET /api/v1/openapi.json (a valid OpenAPI 3.1 document of every REST endpoint),
 * GET /api/v1/docs (a reference page served locally, working offline under a strict CSP), and
 * the suite's own check that responses match the document (test/support/openapi.ts).
 */

let app: TestApp;
let user: TestUser;
let doc: any;

beforeAll(async () => {
  app = await startTestApp();
  user = await app.createUser('openapi');
  const r = await app.request('GET', '/api/v1/openapi.json');
  expect(r.status).toBe(200);
  doc = r.body;
});
afterAll(async () => {
  await app?.close();
});

test('the document is served without a token and is valid OpenAPI 3.1', async () => {
  expect(doc.openapi).toMatch(/^3\.1\./);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-'));
  try {
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(doc));
    // Asynchronously: a blocked event loop would stall the in-process server's database watchdog.
    const r = await promisify(execFile)(path.join(ROOT, 'node_modules/.bin/validate-api'), [file], { encoding: 'utf8', timeout: 60_000 });
    expect(JSON.parse(r.stdout)).toEqual({ valid: true });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the document describes every operation of the route table, and nothing else', () => {
  const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) =>
    Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`),
  );
  expect(ops.sort()).toEqual(ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort());
  // The GraphQL endpoint is one of them, with its own error body.
  expect(ops).toContain('POST /graphql');
  expect(doc.paths['/graphql'].post.responses['400'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/GraphqlResponse' });
  // Each declaration appears once (no two operations with one method and path).
  expect(new Set(ops).size).toBe(ROUTES.length);
});

test('security schemes, error envelope and headers are described', () => {
  expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  expect(doc.components.securitySchemes.cookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'sa_session' });
  expect(doc.components.schemas.Error.required).toEqual(['success', 'error']);
  for (const h of ['ETag', 'Last-Modified', 'X-Markdown-Size', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After']) {
    expect(doc.components.headers[h]).toBeDefined();
  }
  const get = doc.paths['/projects/{projectId}/sessions/{sessionId}'].get;
  expect(get.security).toEqual([{ bearer: [] }, { cookie: [] }]);
  expect(get.responses['200'].headers.ETag.required).toBe(true);
  expect(Object.keys(get.responses['200'].content).sort()).toEqual(['application/json', 'application/vnd.specstory.session-data+json', 'text/markdown']);
  expect(get.responses['429'].headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
  expect(get.responses['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
  expect(doc.paths['/device-login'].post.security).toEqual([]);
  const put = doc.paths['/projects/{projectId}/sessions/{sessionId}'].put;
  expect(put.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['If-Match', 'If-None-Match', 'Idempotency-Key']));
  expect(put.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/UploadSession' });
});

describe('the validation hook every test request goes through', () => {
  const json = (body: unknown, extra: Record<string, string> = {}) => ({
    headers: { 'content-type': 'application/json; charset=utf-8', ...extra },
    text: JSON.stringify(body),
    body,
  });
  const project = {
    id: 'p',
    ownerId: 'u',
    owner: { type: 'user', id: 'u', name: 'U' },
    name: 'P',
    icon: 'Code2',
    color: 'blue',
    createdAt: '2024-01-15T10:30:00.000Z',
    updatedAt: '2024-01-15T10:30:00.000Z',
    sessionCount: 0,
    totalMarkdownSize: 0,
    lastActivity: '2024-01-15T10:30:00.000Z',
    lastUpdated: '2024-01-15T10:30:00.000Z',
    retentionDays: null,
    legalHold: false,
  };

  test('accepts a documented response', () => {
    expect(responseProblem('GET', '/api/v1/projects/p', { status: 200, ...json({ success: true, data: { project } }) })).toBeNull();
  });
  test('names an undocumented field, a wrong type, an undocumented status and a missing header', () => {
    expect(responseProblem('GET', '/api/v1/projects/p', { status: 200, ...json({ success: true, data: { project: { ...project, secret: 1 } } }) })).toMatch(
      /GET \/projects\/\{projectId\} → 200: the body does not match the document: .*must NOT have additional properties: secret/,
    );
    expect(
      responseProblem('GET', '/api/v1/projects/p', { status: 200, ...json({ success: true, data: { project: { ...project, sessionCount: '0' } } }) }),
    ).toMatch(/sessionCount must be integer/);
    expect(responseProblem('GET', '/api/v1/projects/p', { status: 418, ...json({ success: false, error: 'x' }) })).toMatch(/status 418 is not documented/);
    expect(
      responseProblem('HEAD', '/api/v1/projects/p/sessions/3f2b8a4e-1c1d-4f5e-9a7b-2d6c8e9f0a1b', { status: 200, headers: {}, text: '', body: undefined }),
    ).toMatch(/required header ETag is missing/);
  });
  test('an operation the document does not describe fails unless it is the unknown-route error', () => {
    expect(responseProblem('GET', '/api/v1/widgets', { status: 200, ...json({ success: true, data: {} }) })).toMatch(
      /undocumented operation: GET \/api\/v1\/widgets answered 200/,
    );
    expect(responseProblem('GET', '/api/v1/widgets', { status: 404, ...json({ success: false, error: 'Not found' }) })).toBeNull();
  });
  test('real responses pass through it (and an error response is checked too)', async () => {
    const created = await app.request('POST', '/api/v1/projects', { token: user.token, body: { id: 'oa-project', name: 'OpenAPI' } });
    expect({ status: created.status, body: created.body }).toMatchObject({ status: 201 });
    const bad = await app.request('POST', '/api/v1/projects', { token: user.token, body: { name: 'x', color: 'teal' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^Invalid value for color\. Must be one of: rose, pink/);
  });
});

describe('the reference page', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  test('is served without a token, from this service only, under a CSP without inline script', async () => {
    const page = await app.request('GET', '/api/v1/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).toMatch(/connect-src 'self'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(page.text).not.toMatch(/<script>(?!<\/script>)|<script [^>]*>[^<]/); // no inline script
    const srcs = [...page.text.matchAll(/src="([^"]+)"/g)].map((m) => m[1]);
    expect(srcs.length).toBeGreaterThanOrEqual(2);
    for (const src of srcs) {
      expect(src.startsWith('/api/v1/docs/')).toBe(true);
      const asset = await app.request('GET', src);
      expect(asset.status).toBe(200);
      expect(asset.headers['content-type']).toMatch(/javascript/);
    }
    expect((await app.request('GET', '/api/v1/docs/assets/nope.js')).status).toBe(404);
  });

  test('renders the document offline: operations listed, nothing loaded from elsewhere, no CSP violation', async () => {
    // Every request that is not to this service is aborted and recorded: the page must not need any.
    const context = await browser.newContext();
    const page = await context.newPage();
    const foreign: string[] = [];
    const problems: string[] = [];
    await context.route('**/*', (route) =>
      route.request().url().startsWith(app.url) ? route.continue() : (foreign.push(route.request().url()), route.abort()),
    );
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) problems.push(msg.text());
    });
    try {
      await page.goto(`${app.url}/api/v1/docs`, { waitUntil: 'load' });
      // The title, the description and the operations of the first group (the others start collapsed).
      const expected = [
        'Session Archive REST API',
        'Successes are {success: true, data}',
        'List your projects',
        'Delete a project with its sessions',
        'Device login',
        'Bearer Token',
      ];
      await page.waitForFunction((texts) => texts.every((t) => (globalThis as any).document.body.innerText.includes(t)), expected, {
        timeout: 60_000,
        polling: 250,
      });
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
