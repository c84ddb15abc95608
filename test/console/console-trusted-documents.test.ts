import type { Browser } from 'playwright-core';
import { launchBrowser, newRecordedPage, step, type Recorded } from '../support/chromium';
import { rawRequest, startTestApp, type TestApp } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

/**
 * The console under GRAPHQL_TRUSTED_DOCUMENTS=cookie, in real Chromium: it sends only document
 * ids (every GraphQL request it makes carries `documentId`, none a `query`), so its pages work
 * where the service refuses raw queries from browser sessions, and it names itself
 * (`graphql-client-name: session-archive-console`).
 */

const PASSWORD = 'a long enough passphrase';
const PROJECT = 'trusted-console';
const SESSION = '7d7d7d7d-0000-4000-8000-000000000001';
let app: TestApp;
let browser: Browser;
let rec: Recorded;

beforeAll(async () => {
  app = await startTestApp({ env: { GRAPHQL_TRUSTED_DOCUMENTS: 'cookie', WORKERS_ENABLED: 'false' } });
  browser = await launchBrowser();
  rec = await newRecordedPage(browser, app.url);
}, 120_000);
afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

test(
  'sign in, the projects list, a project and a session reader: every GraphQL request by id, all answered',
  step(
    () => rec,
    async () => {
      const email = `trusted-${process.pid}-${Date.now()}@example.test`;
      const user = await createUser(operatorCtx(app.deps.db), email, 'Doc User', { password: PASSWORD, role: 'member' });
      const { token } = await app.newKey(user);
      const body = { name: 'trusted.md', markdown: '_**User**_\n\nHow do trusted documents work?\n\n---\n\n_**Agent**_\n\nBy id.\n' };
      expect((await rawRequest(app.url, 'PUT', `/api/v1/projects/${PROJECT}/sessions/${SESSION}`, { token, body })).status).toBe(201);

      const { page } = rec;
      const sent: Array<{ body: Record<string, unknown>; client: string | undefined }> = [];
      const statuses: number[] = [];
      page.on('request', (r) => {
        if (r.url().endsWith('/api/v1/graphql') && r.method() === 'POST') {
          sent.push({ body: JSON.parse(r.postData() ?? '{}') as Record<string, unknown>, client: r.headers()['graphql-client-name'] });
        }
      });
      page.on('response', (r) => {
        if (r.url().endsWith('/api/v1/graphql')) statuses.push(r.status());
      });

      await page.goto('/sign-in');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('link', { name: PROJECT }).first().waitFor();
      await page.getByRole('link', { name: PROJECT }).first().click();
      await page.getByRole('link', { name: 'trusted.md' }).first().click();
      await page.getByText('By id.', { exact: true }).waitFor();

      expect(sent.length).toBeGreaterThan(2);
      for (const s of sent) {
        expect(s.body.query).toBeUndefined();
        expect(s.body.documentId).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(s.client).toBe('session-archive-console');
      }
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
    },
  ),
);
