import type { Browser, Request } from 'playwright-core';
import { launchBrowser, newRecordedPage, step, type Recorded } from '../support/chromium';
import { startTestApp, type TestApp } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

/**
 * The REST reference (Scalar, GET /api/v1/docs) uses the console's browser session, as the GraphQL
 * playground does: signed in, a person opens the reference, picks "Create a project", presses
 * Send, and the request runs as them (the session cookie, the session's X-CSRF-Token, no
 * Authorization header, no pasted key). Signed out, the same request is refused (401).
 */

const PASSWORD = 'a long enough passphrase';
/** The example Scalar fills in from the document (CreateProject's `id` and `name` examples). */
const EXAMPLE_ID = '833c-d926-f753-7b4a';

let app: TestApp;
let browser: Browser;
let rec: Recorded | undefined;
let email: string;
let userId: string;

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  email = `reference-${process.pid}@example.test`;
  userId = (await createUser(operatorCtx(app.deps.db), email, 'Rhea Reference', { password: PASSWORD, role: 'member' })).id;
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

/** Opens "Create a project" in the reference's client and presses Send; the POST it made and its answer. */
async function sendCreateProject(): Promise<{ request: Request; status: number; body: string }> {
  const page = rec!.page;
  await page.goto('/api/v1/docs#tag/projects/POST/projects');
  await page
    .locator('button', { hasText: /^\s*Test Request\(post \/projects\)\s*$/ })
    .first()
    .click({ timeout: 60_000 });
  const sent = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/v1/projects');
  await page
    .getByRole('button', { name: /^Send(Send)? post request/ })
    .first()
    .click();
  const res = await sent;
  return { request: res.request(), status: res.status(), body: await res.text() };
}

test(
  'signed in to the console, Send in the reference runs as that person with the session’s CSRF token',
  step(
    () => rec!,
    async () => {
      rec = await newRecordedPage(browser, app.url);
      const page = rec.page;
      await page.goto('/sign-in?next=%2F');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
      await page.getByRole('link', { name: 'API reference' }).click();
      await page.waitForURL(/\/api\/v1\/docs$/);
      await page.getByText(`Signed in to the console as ${email}`).waitFor({ timeout: 60_000 });

      const { request, status, body } = await sendCreateProject();
      const csrf = (await page.request.get('/api/v1/auth/session').then((r) => r.json())).data.csrfToken as string;
      expect(request.headers()['x-csrf-token']).toBe(csrf);
      expect(request.headers()['authorization']).toBeUndefined();
      expect([status, JSON.parse(body)]).toEqual([201, { success: true, data: { project: expect.objectContaining({ id: EXAMPLE_ID, name: 'My project' }) } }]);
      // Made as this person: their project now.
      const mine = await app.request('GET', `/api/v1/projects/${EXAMPLE_ID}`, { token: (await app.newKey({ id: userId })).token });
      expect(mine.status).toBe(200);
      // The answer is shown in the reference's client.
      await page.getByText('201', { exact: false }).first().waitFor();
      expect(rec.errors).toEqual([]);
    },
  ),
  180_000,
);

test(
  'signed out, the same request is refused: the reference has no session to use',
  step(
    () => rec!,
    async () => {
      await rec?.context.close().catch(() => undefined);
      rec = await newRecordedPage(browser, app.url);
      await rec.page.goto('/api/v1/docs');
      await rec.page.getByText('Create a project').first().waitFor({ timeout: 60_000 });
      expect(await rec.page.locator('#signed-in').isHidden()).toBe(true);
      const { request, status } = await sendCreateProject();
      expect(request.headers()['x-csrf-token']).toBeUndefined();
      expect(status).toBe(401);
    },
  ),
  180_000,
);
