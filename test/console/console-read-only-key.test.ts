import type { Browser } from 'playwright-core';
import { launchBrowser, newRecordedPage, seriousAxeViolations, step, type Recorded } from '../support/chromium';
import { rawRequest, startTestApp, type TestApp } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

/**
 * The console's key form in real Chromium: a key created with "Read-only (for agents)" checked is
 * listed as read-only, and the token the page shows reads over REST but every write made with it
 * is refused with 403 "This key is read-only" (and changes nothing). A key created without the box
 * is listed as read and write and writes. No request to another origin, no page error, axe-core
 * with no serious or critical violation.
 */

const PASSWORD = 'a long enough passphrase';
const PROJECT = 'ro-console';
const SESSION = '5e5e5e5e-0000-4000-8000-000000000001';
let app: TestApp;
let browser: Browser;
let rec: Recorded;

beforeAll(async () => {
  app = await startTestApp({ env: { WORKERS_ENABLED: 'false' } });
  browser = await launchBrowser();
  rec = await newRecordedPage(browser, app.url);
}, 120_000);
afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

test(
  'a key created with the read-only box checked is listed read-only; its token reads, and its writes get 403',
  step(
    () => rec,
    async () => {
      const email = `ro-key-${process.pid}-${Date.now()}@example.test`;
      const user = await createUser(operatorCtx(app.deps.db), email, 'Agent Owner', { password: PASSWORD, role: 'member' });
      const { token: full } = await app.newKey(user);
      const body = { name: 'Before', markdown: '# before\n' };
      expect((await rawRequest(app.url, 'PUT', `/api/v1/projects/${PROJECT}/sessions/${SESSION}`, { token: full, body })).status).toBe(201);

      const { page } = rec;
      await page.goto('/sign-in?next=/settings/api-keys');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();

      /** Creates a key through the form; returns the token the page shows once. */
      const create = async (name: string, readOnly: boolean) => {
        await page.getByRole('button', { name: 'Create key' }).click();
        await page.getByLabel('Key name').fill(name);
        const box = page.getByRole('checkbox', { name: 'Read-only (for agents)' });
        expect(await box.isChecked()).toBe(false);
        if (readOnly) await box.check();
        expect(await seriousAxeViolations(page)).toEqual([]);
        await page.getByRole('form', { name: 'New key' }).getByRole('button', { name: 'Create key' }).click();
        const shown = page.getByRole('status', { name: 'New API key' });
        await shown.waitFor();
        const token = (await shown.textContent())!.trim();
        expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
        return token;
      };
      const agent = await create('agent', true);
      const access = (name: string) =>
        page
          .getByRole('row')
          .filter({ has: page.getByRole('rowheader', { name, exact: true }) })
          .getByRole('cell')
          .nth(4);
      expect(await access('agent').textContent()).toBe('Read-only');
      expect(await seriousAxeViolations(page)).toEqual([]);
      // The listing is what the server stored, not what the form remembered.
      await page.reload();
      await access('agent').waitFor();
      expect(await access('agent').textContent()).toBe('Read-only');

      // Reads work with the shown token.
      const list = await rawRequest(app.url, 'GET', '/api/v1/projects', { token: agent });
      expect(list.status).toBe(200);
      expect(list.body.data.projects.map((p: { id: string }) => p.id)).toEqual([PROJECT]);
      const read = await rawRequest(app.url, 'GET', `/api/v1/projects/${PROJECT}/sessions/${SESSION}`, { token: agent });
      expect(read.status).toBe(200);
      expect(read.body.data.session.markdownContent).toBe('# before\n');
      // Every write is refused and changes nothing.
      const writes: Array<[string, string, unknown]> = [
        ['PUT', `/api/v1/projects/${PROJECT}/sessions/${SESSION}`, { name: 'After', markdown: '# after\n' }],
        ['PATCH', `/api/v1/projects/${PROJECT}/sessions/${SESSION}`, { name: 'After' }],
        ['DELETE', `/api/v1/projects/${PROJECT}/sessions/${SESSION}`, undefined],
        ['POST', '/api/v1/projects', { id: 'ro-new', name: 'New' }],
        ['POST', '/api/v1/keys', { name: 'escalate' }],
      ];
      for (const [method, path, b] of writes) {
        const r = await rawRequest(app.url, method, path, { token: agent, body: b });
        expect([method, path, r.status, r.body]).toEqual([method, path, 403, { success: false, error: 'This key is read-only' }]);
      }
      const after = await rawRequest(app.url, 'GET', `/api/v1/projects/${PROJECT}/sessions/${SESSION}`, { token: full });
      expect([after.body.data.session.name, after.body.data.session.markdownContent]).toEqual(['Before', '# before\n']);
      expect((await rawRequest(app.url, 'GET', '/api/v1/projects', { token: full })).body.data.projects).toHaveLength(1);

      // Without the box: a read-and-write key, listed so, that writes.
      const laptop = await create('laptop', false);
      expect(await access('laptop').textContent()).toBe('Read and write');
      const write = await rawRequest(app.url, 'PATCH', `/api/v1/projects/${PROJECT}/sessions/${SESSION}`, { token: laptop, body: { name: 'Renamed' } });
      expect(write.status).toBe(200);

      expect(rec.requests.filter((u) => new URL(u).origin !== app.url)).toEqual([]);
      expect(rec.errors).toEqual([]);
    },
  ),
  120_000,
);
