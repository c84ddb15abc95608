import type { Browser } from 'playwright-core';
import { launchBrowser, newRecordedPage, seriousAxeViolations, type Recorded } from '../support/chromium';
import { startTestApp, type TestApp } from '../support/app';

/**
 * The web console in real Chromium (docs/console.md, docs/accounts.md): routes and accessible names, no request to
 * another origin, no CSP violation, axe-core with no serious or critical violation on each page.
 */

let app: TestApp;
let browser: Browser;
let rec: Recorded | undefined;

beforeAll(async () => {
  app = await startTestApp();
  browser = await launchBrowser();
}, 120_000);
afterEach(async () => {
  await rec?.context.close().catch(() => undefined);
  rec = undefined;
});
afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await app?.close();
});

function expectOnlySameOrigin(r: Recorded) {
  expect(r.requests.length).toBeGreaterThan(0);
  expect(r.requests.filter((u) => new URL(u).origin !== app.url)).toEqual([]);
  expect(r.errors).toEqual([]);
}

test('an address the console does not know shows "Page not found" in the browser (status 404), with a way back', async () => {
  rec = await newRecordedPage(browser, app.url);
  const { page } = rec;
  const answer = await page.goto('/settings/usage');
  expect(answer?.status()).toBe(404);
  await page.getByRole('heading', { name: 'Page not found', level: 1 }).waitFor();
  expect(await page.title()).toBe('Page not found · Session Archive');
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.getByRole('link', { name: 'Go to your projects' }).click();
  await page.getByRole('heading', { name: /^(Sign in|Create the first account)$/ }).waitFor();
  expectOnlySameOrigin(rec);
});

test('a signed-out visitor of a console page is sent to sign in, and comes back after', async () => {
  rec = await newRecordedPage(browser, app.url);
  const { page } = rec;
  await page.goto('/settings/api-keys');
  await page.getByRole('heading', { name: /^(Sign in|Create the first account)$/ }).waitFor();
  expect(new URL(page.url()).pathname).toBe('/sign-in');
  expect(new URL(page.url()).searchParams.get('next')).toBe('/settings/api-keys');
  await page.getByLabel('Email').waitFor();
  await page.getByLabel('Password', { exact: true }).waitFor();
  expect(await seriousAxeViolations(page)).toEqual([]);
  expectOnlySameOrigin(rec);
});

test('a sign-in on the way to a device login says what it is for; one on the way to a console page says nothing more', async () => {
  await app.createUser();
  rec = await newRecordedPage(browser, app.url);
  const { page } = rec;
  await page.goto('/cli-login');
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  await expect(page.locator('#sign-in-purpose').textContent()).resolves.toBe('Sign in to log in the upload CLI or the desktop app.');
  await page.goto('/settings/api-keys');
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  expect(await page.locator('#sign-in-purpose').count()).toBe(0);
  expect(await seriousAxeViolations(page)).toEqual([]);
  expectOnlySameOrigin(rec);
});
