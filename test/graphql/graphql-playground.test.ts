import type { Browser } from 'playwright-core';
import { launchBrowser, newRecordedPage } from '../support/chromium';
import { startTestApp, type TestApp, type TestUser } from '../support/app';

/**
 * The playground (docs/graphql.md): GraphiQL 5 (Monaco editors), bundled by Vite into dist/playground
 * and served by the service itself, no token needed for the page or its assets, the Authorization
 * header set in GraphiQL's headers editor. Driven in real headless Chromium (.ci/run-chromium.sh
 * installs it when missing): the user's keystrokes go into the Monaco editors, Monaco's web workers
 * come from this origin, and the page runs under its CSP without a violation.
 */

let app: TestApp;
let user: TestUser;
let browser: Browser;

beforeAll(async () => {
  app = await startTestApp();
  user = await app.createUser('browser');
  const r = await app.request('POST', '/api/v1/projects', { token: user.token, body: { id: 'pg-project', name: 'Playground project' } });
  expect(r.status).toBe(201);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

test('the page and its assets are served without a token, from this service', async () => {
  const page = await app.request('GET', '/api/v1/graphql', { headers: { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
  expect(page.status).toBe(200);
  expect(page.headers['content-type']).toMatch(/^text\/html/);
  const csp = String(page.headers['content-security-policy']);
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("worker-src 'self'");
  expect(csp).not.toMatch(/blob:|unsafe-eval/);
  expect(page.text).not.toMatch(/<script>|<script(?![^>]*\ssrc=)[^>]*>/); // no inline script
  const srcs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  expect(srcs.some((s) => s.endsWith('.js'))).toBe(true);
  expect(srcs.some((s) => s.endsWith('.css'))).toBe(true);
  for (const src of srcs) {
    expect(src.startsWith('/api/v1/graphql/assets/')).toBe(true); // no CDN
    const asset = await app.request('GET', src);
    expect(asset.status).toBe(200);
    expect(asset.raw.length).toBeGreaterThan(100);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable'); // content-hashed names
  }
  const missing = await app.request('GET', '/api/v1/graphql/assets/nope.js');
  expect(missing.status).toBe(401);
});

test('GraphiQL runs a query typed into its editor with the Authorization header from its headers editor', async () => {
  const { context, page, requests, errors } = await newRecordedPage(browser, app.url);
  const workers: string[] = [];
  const failedLoads: string[] = [];
  const operations: { authorization?: string; body: string }[] = [];
  page.on('worker', (w) => workers.push(w.url()));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Failed to load resource/.test(msg.text())) failedLoads.push(msg.location().url);
  });
  const reading: Promise<void>[] = [];
  page.on('response', (res) => {
    const req = res.request();
    if (req.method() !== 'POST' || new URL(req.url()).pathname !== '/api/v1/graphql') return;
    const authorization = req.headers()['authorization'];
    reading.push(
      res.text().then(
        (body) => void operations.push({ authorization, body }),
        () => undefined,
      ),
    );
  });
  // Replace the whole text of the Monaco editor under `selector` as a user would: focus, select
  // all, type (insertText: one input event, so Monaco's bracket auto-closing does not add braces).
  const replaceText = async (selector: string, text: string) => {
    await page.click(`${selector} .monaco-editor .view-lines`);
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(text);
  };
  try {
    await page.goto(`${app.url}/api/v1/graphql`, { waitUntil: 'load' });
    await page.waitForSelector('.graphiql-query-editor .monaco-editor', { timeout: 30000 });

    // The headers tab is open (defaultEditorToolsVisibility): put the token there.
    await page.click('.graphiql-editor-tools button[data-name="headers"]');
    const headers = '.graphiql-editor-tool .graphiql-editor:not(.hidden)';
    await page.waitForSelector(`${headers} .monaco-editor`, { timeout: 30000 });
    await replaceText(headers, JSON.stringify({ Authorization: `Bearer ${user.token}` }));
    await replaceText('.graphiql-query-editor', '{ projects { id name } }');

    // GraphiQL takes editor changes into its state asynchronously: run until the answer shown is
    // the one for this query (at most a few clicks).
    const answered = async () => {
      await page.click('.graphiql-execute-button');
      await page.waitForFunction(
        () => ((globalThis as any).document.querySelector('.graphiql-response .view-lines')?.textContent ?? '').includes('pg-project'),
        undefined,
        { timeout: 5000 },
      );
    };
    let ok = false;
    for (let attempt = 0; attempt < 5 && !ok; attempt++)
      ok = await answered().then(
        () => true,
        () => false,
      );
    expect(ok).toBe(true);

    await Promise.all(reading); // the answers' bodies (the page may show one before we read it)
    const last = operations.filter((o) => o.body.includes('pg-project')).at(-1);
    expect(last?.authorization).toBe(`Bearer ${user.token}`);
    expect(JSON.parse(last!.body)).toEqual({ data: { projects: [{ id: 'pg-project', name: 'Playground project' }] } });
    // Monaco renders spaces as U+00A0.
    const shown = await page.evaluate(() => (globalThis as any).document.querySelector('.graphiql-response .view-lines').textContent as string);
    expect(shown.replace(/\s+/g, '')).toContain('"id":"pg-project","name":"Playgroundproject"');

    // Monaco's workers (editor, GraphQL language service) run, loaded from this origin.
    expect(workers.length).toBeGreaterThan(0);
    for (const w of workers) expect(w.startsWith(`${app.url}/api/v1/graphql/assets/`)).toBe(true);
    expect(requests.filter((u) => !u.startsWith(`${app.url}/`))).toEqual([]);
    // No script error, no CSP violation. The only failed loads: the console session the page asks
    // for first (signed out: 401), the schema introspection GraphiQL sends on load, before a key is
    // in the headers (401), and the browser's favicon request.
    expect(errors).toEqual([]);
    for (const u of failedLoads) expect([`${app.url}/api/v1/auth/session`, `${app.url}/api/v1/graphql`, `${app.url}/favicon.ico`]).toContain(u);
  } finally {
    await context.close();
  }
});
