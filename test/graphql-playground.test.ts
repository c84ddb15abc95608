import type { Browser } from 'playwright-core';
import { launchBrowser } from './support/chromium';
import { startTestApp, type TestApp, type TestUser } from './support/app';

/**
 * The playground (contract §6): GraphiQL served by the service itself, no token needed for the
 * page or its assets, the Authorization header set in GraphiQL's headers editor. Driven in real
 * headless Chromium (.ci/run-chromium.sh installs it when missing).
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
  const srcs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  expect(srcs.length).toBeGreaterThanOrEqual(5);
  for (const src of srcs) {
    expect(src.startsWith('/api/v1/graphql/assets/')).toBe(true); // no CDN
    const asset = await app.request('GET', src);
    expect(asset.status).toBe(200);
    expect(asset.raw.length).toBeGreaterThan(100);
  }
  const missing = await app.request('GET', '/api/v1/graphql/assets/nope.js');
  expect(missing.status).toBe(401);
});

test('GraphiQL runs a query with the Authorization header from its headers editor', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const foreign: string[] = [];
  const pageErrors: string[] = [];
  page.on('request', (req) => {
    if (!req.url().startsWith(app.url)) foreign.push(req.url());
  });
  page.on('pageerror', (err) => pageErrors.push(err.message));
  try {
    await page.goto(`${app.url}/api/v1/graphql`, { waitUntil: 'load' });
    await page.waitForSelector('.graphiql-query-editor .CodeMirror', { timeout: 30000 });
    await page.waitForSelector('.graphiql-editor-tool .CodeMirror', { state: 'attached', timeout: 30000 });

    // Open the headers tab and put the token there, as a user would.
    await page.click('.graphiql-editor-tools button[data-name="headers"]');
    // (globalThis as any).document: page functions run in the browser; tsconfig has no DOM lib.
    await page.evaluate((token) => {
      const editors: any[] = Array.from((globalThis as any).document.querySelectorAll('.graphiql-editor-tool .graphiql-editor'));
      const visible = editors.find((e) => !e.classList.contains('hidden'));
      const cm = (visible?.querySelector('.CodeMirror') as any)?.CodeMirror;
      if (!cm) throw new Error('headers editor not found');
      cm.setValue(JSON.stringify({ Authorization: `Bearer ${token}` }));
    }, user.token);
    await page.evaluate(() => {
      const cm = ((globalThis as any).document.querySelector('.graphiql-query-editor .CodeMirror') as any).CodeMirror;
      cm.setValue('{ projects { id name } }');
    });
    // GraphiQL takes editor changes into its state asynchronously: run until the answer is the
    // one for this query (at most a few clicks).
    const answered = async () => {
      await page.click('.graphiql-execute-button');
      await page.waitForFunction(
        () => {
          const cm = ((globalThis as any).document.querySelector('.graphiql-response .CodeMirror') as any)?.CodeMirror;
          return cm && cm.getValue().includes('pg-project');
        },
        undefined,
        { timeout: 5000 },
      );
    };
    let ok = false;
    for (let attempt = 0; attempt < 5 && !ok; attempt++) ok = await answered().then(() => true, () => false);
    expect(ok).toBe(true);
    const text = await page.evaluate(() => ((globalThis as any).document.querySelector('.graphiql-response .CodeMirror') as any).CodeMirror.getValue() as string);
    expect(JSON.parse(text)).toEqual({ data: { projects: [{ id: 'pg-project', name: 'Playground project' }] } });
    expect(foreign).toEqual([]);
    expect(pageErrors).toEqual([]);
  } finally {
    await context.close();
  }
});
