import type { Browser } from 'playwright-core';
import { createResetLink } from '../../src/services/accounts';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { launchBrowser, newRecordedPage, seriousAxeViolations, step, type Recorded } from '../support/chromium';
import { rawRequest, startTestApp, type TestApp } from '../support/app';
import { browser as cookieBrowser } from '../support/cookie-client';

/**
 * The console's password forms (change on /settings/account, the reset link's page) in real
 * Chromium: a checkbox "Also revoke API keys and logged-in clients", checked by default, revokes
 * the account's keys and device tokens with the new password; unchecked, they keep working.
 */

const LABEL = 'Also revoke API keys and logged-in clients';
const PASSWORDS = ['correct horse battery', 'second good passphrase', 'third good passphrase', 'fourth good passphrase', 'fifth good passphrase'];

let app: TestApp;
let browser: Browser;
let rec: Recorded;
let user: { id: string; email: string };
/** The user's password as it is now. */
let current = PASSWORDS[0];

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  browser = await launchBrowser();
  rec = await newRecordedPage(browser, app.url);
  const email = `pw-console-${process.pid}@example.test`;
  const u = await createUser(operatorCtx(app.deps.db), email, 'Ada', { password: PASSWORDS[0] });
  user = { id: u.id, email };
}, 120_000);
afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

/** A fresh key, and a device token from a code asked for in a browser session (the usual /cli-login flow). */
async function credentials(): Promise<string[]> {
  const key = await app.newKey(user, 'laptop');
  const b = cookieBrowser(app);
  expect((await b.signIn(user.email, current)).status).toBe(200);
  const { code } = (await b.request('POST', '/api/v1/device-codes')).body.data;
  const login = await rawRequest(app.url, 'POST', '/api/v1/device-login', { body: { device_code: code, client: 'specstory-cli', hostname: 'ada-laptop' } });
  expect(login.status).toBe(200);
  const access = await rawRequest(app.url, 'POST', '/api/v1/device-refresh', { token: login.body.refreshToken });
  expect(access.status).toBe(200);
  return [key.token, access.body.accessToken];
}
const statuses = (tokens: string[]) => Promise.all(tokens.map(async (t) => (await rawRequest(app.url, 'GET', '/api/v1/projects', { token: t })).status));

async function changePassword(next: string, revoke: boolean) {
  const page = rec.page;
  await page.goto('/settings/account');
  await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
  const box = page.getByRole('checkbox', { name: LABEL });
  expect(await box.isChecked()).toBe(true);
  if (!revoke) await box.uncheck();
  await page.getByLabel('Current password').fill(current);
  await page.getByLabel('New password', { exact: true }).fill(next);
  await page.getByLabel('Confirm new password').fill(next);
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
  current = next;
  // The form is back to its default: checked.
  expect(await box.isChecked()).toBe(true);
}

test(
  'change password: the checkbox is checked by default and revokes keys and logged-in clients',
  step(
    () => rec,
    async () => {
      const page = rec.page;
      await page.goto('/sign-in');
      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password', { exact: true }).fill(current);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();

      await page.goto('/settings/account');
      await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
      expect(await seriousAxeViolations(page)).toEqual([]);

      const tokens = await credentials();
      expect(await statuses(tokens)).toEqual([200, 200]);
      await changePassword(PASSWORDS[1], true);
      await page.getByRole('status').filter({ hasText: 'API keys and logged-in clients revoked' }).waitFor();
      expect(await statuses(tokens)).toEqual([401, 401]);
    },
  ),
);

test(
  'change password with the checkbox cleared keeps them',
  step(
    () => rec,
    async () => {
      const tokens = await credentials();
      await changePassword(PASSWORDS[2], false);
      await rec.page.getByRole('status').filter({ hasText: 'your API keys and logged-in clients keep working' }).waitFor();
      expect(await statuses(tokens)).toEqual([200, 200]);
    },
  ),
);

test(
  'the reset link page: the same checkbox, checked by default; cleared keeps them, checked revokes them',
  step(
    () => rec,
    async () => {
      const reset = await newRecordedPage(browser, app.url);
      try {
        const page = reset.page;
        const setThrough = async (password: string, revoke: boolean) => {
          const { link } = await createResetLink(operatorCtx(app.deps.db), user.id, app.url);
          const url = new URL(link);
          await page.goto(url.pathname + url.search);
          await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
          const box = page.getByRole('checkbox', { name: LABEL });
          expect(await box.isChecked()).toBe(true);
          if (!revoke) await box.uncheck();
          await page.getByLabel('New password').fill(password);
          await page.getByRole('button', { name: 'Set password' }).click();
          await page.getByRole('status').filter({ hasText: 'Your password is set.' }).waitFor();
          current = password;
        };

        const { link } = await createResetLink(operatorCtx(app.deps.db), user.id, app.url);
        await page.goto(new URL(link).pathname + new URL(link).search);
        await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
        expect(await seriousAxeViolations(page)).toEqual([]);

        const kept = await credentials();
        await setThrough(PASSWORDS[3], false);
        expect(await statuses(kept)).toEqual([200, 200]);

        await setThrough(PASSWORDS[4], true);
        expect(await statuses(kept)).toEqual([401, 401]);
        expect(reset.errors).toEqual([]);
        expect(reset.requests.filter((u) => new URL(u).origin !== app.url)).toEqual([]);
      } finally {
        await reset.context.close();
      }
    },
  ),
);

test('no request left the origin, no page error, no CSP violation', () => {
  expect(rec.requests.filter((u) => new URL(u).origin !== app.url)).toEqual([]);
  expect(rec.errors).toEqual([]);
});
