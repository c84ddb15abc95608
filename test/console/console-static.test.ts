import { startTestApp, type TestApp } from '../support/app';

/**
 * The web console's static serving: index.html on every console route (history
 * API fallback) and never cached stale, content-hashed assets cached for a year, a strict CSP,
 * nothing from another origin. `npm test` builds the console first (pretest → build:web).
 */

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

const ROUTES = [
  '/',
  '/sign-in',
  '/reset-password',
  '/join',
  '/cli-login',
  '/search',
  '/settings/api-keys',
  '/settings/account',
  '/settings/users',
  '/settings/teams',
  '/projects/p1',
  '/projects/p1/sessions/s1',
];

test('every console route answers index.html, revalidated on each load, under a strict CSP', async () => {
  for (const route of ROUTES) {
    const r = await app.request('GET', `${route}?x=1`, { headers: { Accept: 'text/html' } });
    expect({ route, status: r.status }).toEqual({ route, status: 200 });
    expect(r.headers['content-type']).toMatch(/^text\/html/);
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.text).toContain('<div id="root"></div>');
    const csp = String(r.headers['content-security-policy']);
    expect(csp).toMatch(/(^|;)script-src 'self'(;|$)/);
    expect(csp).toMatch(/(^|;)default-src 'self'(;|$)/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*|data:/);
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
  }
});

test('index.html has no inline script and loads only hashed same-origin assets (and its favicon), cached for a year', async () => {
  const page = await app.request('GET', '/');
  expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>\s*\S/);
  expect(page.text).not.toMatch(/\sstyle=/);
  const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  expect(refs.some((r) => r.endsWith('.js'))).toBe(true);
  expect(refs.some((r) => r.endsWith('.css'))).toBe(true);
  // The favicon keeps its well-known name (browsers ask for /favicon.ico too); it is same origin.
  const favicon = await app.request('GET', '/favicon.svg');
  expect([refs.filter((r) => r.startsWith('/favicon')), favicon.status]).toEqual([['/favicon.svg'], 200]);
  for (const ref of refs.filter((r) => !r.startsWith('/favicon'))) {
    expect(ref).toMatch(/^\/assets\/[\w.-]+-[\w-]{8}\.\w+$/); // same origin, content hash in the name
    const asset = await app.request('GET', ref);
    expect(asset.status).toBe(200);
    expect(asset.raw.length).toBeGreaterThan(100);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-type']).toMatch(ref.endsWith('.js') ? /javascript/ : /css|svg/);
  }
});

test("another path is the console's not-found page (404) for a browser, and a JSON 404 for an API client", async () => {
  const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
  for (const p of ['/nope', '/settings', '/settings/api-keys/x', '/projects', '/Settings/usage/']) {
    const page = await app.request('GET', p, { headers: { Accept: browserAccept } });
    expect({ p, status: page.status, type: page.headers['content-type'] }).toEqual({ p, status: 404, type: expect.stringMatching(/^text\/html/) });
    expect(page.text).toContain('<div id="root"></div>');
    expect(String(page.headers['content-security-policy'])).toMatch(/(^|;)script-src 'self'(;|$)/);
    expect(page.headers['cache-control']).toBe('no-cache');
    for (const accept of ['application/json', '*/*', undefined]) {
      const api = await app.request('GET', p, { headers: accept ? { Accept: accept } : {} });
      expect({ p, accept, status: api.status, body: api.body }).toEqual({ p, accept, status: 404, body: { success: false, error: 'Not found' } });
    }
  }
});

test('other paths keep their behaviour: missing assets are JSON 404s, /api is untouched', async () => {
  for (const p of ['/assets/missing-12345678.js', '/assets/', '/assets']) {
    const r = await app.request('GET', p, { headers: { Accept: 'text/html' } });
    expect({ p, status: r.status }).toEqual({ p, status: 404 });
    expect(r.body).toEqual({ success: false, error: 'Not found' });
  }
  const api = await app.request('GET', '/api/v1/projects', { headers: { Accept: 'text/html' } });
  expect(api.status).toBe(401);
  const post = await app.request('POST', '/', { body: {} });
  expect(post.status).toBe(404);
  const health = await app.request('GET', '/healthz');
  expect(health.status).toBe(200);
  expect(String(health.headers['content-security-policy'])).toMatch(/default-src 'none'/);
});
