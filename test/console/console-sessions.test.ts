import type { Browser } from 'playwright-core';
import { launchBrowser, newRecordedPage, seriousAxeViolations, type Recorded } from '../support/chromium';
import { startTestApp, type TestApp } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

/**
 * A project's sessions in the console (docs/console.md), in real Chromium: display titles, which
 * sessions the upload CLI can resume on another machine (the session carries sessionData),
 * the redaction badge (counts, never a value), hostile names shown as text, cursor paging,
 * no request to another origin, axe-core with no serious or critical violation.
 */

const PASSWORD = 'a long enough passphrase';
let app: TestApp;
let browser: Browser;
let rec: Recorded | undefined;

beforeAll(async () => {
  app = await startTestApp({ env: { WORKERS_ENABLED: 'false', RATE_LIMIT_REST_PER_HOUR: '100000' } });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

test('sessions of a project: titles, Resumable, secrets redacted, hostile names as text, Show more', async () => {
  const email = `reader-${process.pid}-${Date.now()}@example.test`;
  const user = await createUser(operatorCtx(app.deps.db), email, 'Reader', { password: PASSWORD, role: 'member' });
  const { token } = await app.newKey(user);
  const put = async (id: string, body: Record<string, unknown>) => {
    const r = await app.request('PUT', `/api/v1/projects/web-app/sessions/${id}`, { token, body });
    expect([200, 201]).toContain(r.status);
  };
  const secret = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;
  await put('11111111-1111-4111-8111-111111111111', {
    name: 'plain.md',
    markdown: '# hello\n',
    rawData: '{}',
    sessionData: '{"session":"resumable"}',
  });
  await put('22222222-2222-4222-8222-222222222222', {
    name: 'leaky.md',
    markdown: `# token\n\nexport GITHUB_TOKEN=${secret}\n`,
    rawData: '{}',
  });
  await put('33333333-3333-4333-8333-333333333333', {
    name: '<img src=x onerror="window.__pwned=1">',
    markdown: '# x\n',
    rawData: '{}',
  });
  for (let i = 0; i < 50; i++) {
    await put(`44444444-4444-4444-8444-${String(i).padStart(12, '0')}`, { name: `filler ${i}`, markdown: '# f\n', rawData: '{}' });
  }

  rec = await newRecordedPage(browser, app.url);
  const { page } = rec;
  await page.goto('/sign-in?next=/projects/web-app');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('table', { name: 'Sessions' }).waitFor();

  const row = (title: string) => page.getByRole('row').filter({ has: page.getByRole('link', { name: title, exact: true }) });
  // The first page holds the 50 newest; the three named ones were uploaded first, so they come with Show more.
  await page.getByRole('button', { name: 'Show more' }).click();
  await row('plain.md').waitFor();
  expect(await row('plain.md').getByText('Resumable').count()).toBe(1);
  expect(await row('leaky.md').getByText('Resumable').count()).toBe(0);
  expect(await row('leaky.md').getByText('1 secret redacted').count()).toBe(1);
  expect(await page.content()).not.toContain(secret);
  // A hostile name is a link's text, nothing more.
  await row('<img src=x onerror="window.__pwned=1">').waitFor();
  expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  expect(await page.getByRole('link', { name: /^filler / }).count()).toBe(50);
  expect(await page.getByRole('button', { name: 'Show more' }).count()).toBe(0);

  expect(await seriousAxeViolations(page)).toEqual([]);
  expect(rec.requests.filter((u) => new URL(u).origin !== app.url)).toEqual([]);
  expect(rec.errors).toEqual([]);
}, 120_000);
