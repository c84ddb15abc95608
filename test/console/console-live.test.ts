import type { Browser } from 'playwright-core';
import { launchBrowser, newRecordedPage, type Recorded } from '../support/chromium';
import { SID, startTestApp, type TestApp } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

/**
 * Live lists in the console (docs/console.md), in real Chromium, with trusted documents required
 * for the browser session (GRAPHQL_TRUSTED_DOCUMENTS=cookie, so the console's subscription goes by
 * its id): a session uploaded, renamed or deleted elsewhere shows on the open projects page and
 * the open project page without a reload.
 */

const PASSWORD = 'a long enough passphrase';
let app: TestApp;
let browser: Browser;
let rec: Recorded | undefined;

beforeAll(async () => {
  app = await startTestApp({ env: { WORKERS_ENABLED: 'false', GRAPHQL_TRUSTED_DOCUMENTS: 'cookie' } });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

test('the projects page and a project page follow uploads, edits and deletions as they happen', async () => {
  const email = `live-${process.pid}-${Date.now()}@example.test`;
  const user = await createUser(operatorCtx(app.deps.db), email, 'Live', { password: PASSWORD, role: 'member' });
  const { token } = await app.newKey(user);
  const put = async (project: string, id: string, name: string) => {
    const r = await app.request('PUT', `/api/v1/projects/${project}/sessions/${id}`, { token, body: { name, markdown: `# ${name}\n` } });
    expect([200, 201]).toContain(r.status);
  };
  await put('live-app', SID(1), 'first.md');

  rec = await newRecordedPage(browser, app.url);
  const { page } = rec;
  await page.goto('/sign-in?next=/');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'live-app' }).waitFor();

  // A project that did not exist appears with its first session.
  await put('live-other', SID(2), 'elsewhere.md');
  await page.getByRole('link', { name: 'live-other' }).waitFor();

  await page.getByRole('link', { name: 'live-app' }).click();
  await page.getByRole('table', { name: 'Sessions' }).waitFor();
  const link = (title: string) => page.getByRole('table', { name: 'Sessions' }).getByRole('link', { name: title, exact: true });
  await link('first.md').waitFor();

  await put('live-app', SID(3), 'second.md');
  await link('second.md').waitFor();

  const renamed = await app.request('PATCH', `/api/v1/projects/live-app/sessions/${SID(1)}`, { token, body: { userTitle: 'Renamed first' } });
  expect(renamed.status).toBe(200);
  await link('Renamed first').waitFor();

  expect((await app.request('DELETE', `/api/v1/projects/live-app/sessions/${SID(3)}`, { token })).status).toBe(200);
  await link('second.md').waitFor({ state: 'detached' });
  expect(await link('Renamed first').count()).toBe(1);
  // Nothing went to another origin, and no page error.
  expect(rec.errors).toEqual([]);
  expect(rec.requests.filter((u) => !u.startsWith(app.url))).toEqual([]);
}, 120_000);
