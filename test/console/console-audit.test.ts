import type { Browser } from 'playwright-core';
import { launchBrowser, newRecordedPage, seriousAxeViolations, step, watchNetwork, type Recorded } from '../support/chromium';
import { startTestApp, type TestApp } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

/**
 * The console's Audit log page, in real Chromium against the real service: an administrator sees
 * the entries newest first, filters them, pages to older ones, and gets the export link for the
 * same filters; a member is told they may not read it (and shown nothing else), and gets the link
 * as soon as they make a team. axe-core clean; no page error.
 */

const PASSWORD = 'a long enough passphrase';
let app: TestApp;
let browser: Browser;
let rec: Recorded;
const admin = { email: '', id: '' };
const member = { email: '', token: '' };

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  admin.email = `audit-admin-${process.pid}@example.test`;
  admin.id = (await createUser(operatorCtx(app.deps.db), admin.email, 'Admin', { password: PASSWORD, role: 'admin' })).id;
  member.email = `audit-member-${process.pid}@example.test`;
  const m = await createUser(operatorCtx(app.deps.db), member.email, 'Member', { password: PASSWORD, role: 'member' });
  member.token = (await app.newKey(m)).token;
  // A failed sign-in of the member, then enough entries for a second page (50 per page).
  expect((await app.request('POST', '/api/v1/auth/sign-in', { body: { email: member.email, password: 'not it' } })).status).toBe(401);
  for (let i = 0; i < 55; i++) expect((await app.request('POST', '/api/v1/keys', { token: member.token, body: { name: `k${i}` } })).status).toBe(201);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

async function signIn(email: string) {
  await rec?.context.close().catch(() => undefined);
  rec = await newRecordedPage(browser, app.url);
  const { page } = rec;
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
  return page;
}

async function openAudit(page: Awaited<ReturnType<typeof signIn>>) {
  const network = watchNetwork(page);
  try {
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    await network.quiet();
  } finally {
    network.stop();
  }
}

test(
  'an administrator reads, filters and pages the log, with an export link for the same filters',
  step(
    () => rec,
    async () => {
      const page = await signIn(admin.email);
      await openAudit(page);
      const rows = page.locator('tbody tr');
      expect(await rows.count()).toBe(50);
      // Newest first: the admin's own sign-in.
      await expect(rows.first().locator('td').nth(1).textContent()).resolves.toBe('sign_in');
      expect(await rows.first().locator('td').first().textContent()).toBe(admin.email);
      // At 1280 px the actor column is narrow: an email breaks after its @, never inside a word.
      const lines = await rows
        .first()
        .locator('td')
        .first()
        .evaluate((cell) => {
          const doc = (globalThis as any).document;
          const range = doc.createRange();
          const out: Array<{ top: number; text: string }> = [];
          const walker = doc.createTreeWalker(cell, 4 /* NodeFilter.SHOW_TEXT */);
          for (let node = walker.nextNode(); node; node = walker.nextNode())
            for (let i = 0; i < node.textContent!.length; i++) {
              range.setStart(node, i);
              range.setEnd(node, i + 1);
              const top = Math.round(range.getBoundingClientRect().top);
              if (out.at(-1)?.top === top) out.at(-1)!.text += node.textContent![i];
              else out.push({ top, text: node.textContent![i] });
            }
          return out.map((l) => l.text);
        });
      const at = admin.email.indexOf('@') + 1;
      expect([[admin.email], [admin.email.slice(0, at), admin.email.slice(at)]]).toContainEqual(lines);
      expect(await seriousAxeViolations(page)).toEqual([]);

      const network = watchNetwork(page);
      await page.getByRole('button', { name: 'Older entries' }).click();
      await network.quiet();
      network.stop();
      // 55 keys, 2 sign-ins, 2 accounts and the member's key: 60 entries.
      expect(await rows.count()).toBe(60);
      expect(await page.getByRole('button', { name: 'Older entries' }).count()).toBe(0);

      await page.getByLabel('Action').fill('sign_in');
      await page.getByLabel('Result').selectOption('failure');
      const filtering = watchNetwork(page);
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByRole('cell', { name: 'failure' }).waitFor();
      await filtering.quiet();
      filtering.stop();
      expect(await rows.count()).toBe(1);
      expect(await rows.first().locator('td').first().textContent()).toBe(member.email);
      const href = await page.getByRole('link', { name: 'Export these entries (JSON lines)' }).getAttribute('href');
      expect(href).toBe('/api/v1/audit/export?action=sign_in&result=failure');
      // The link answers with the cookie the page holds.
      const exported = await page.evaluate(async (url) => {
        const r = await fetch(url);
        return { type: r.headers.get('content-type'), text: await r.text() };
      }, href!);
      expect(exported.type).toMatch(/^application\/x-ndjson/);
      expect(
        exported.text
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l).actor.label),
      ).toEqual([member.email]);
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(rec.errors).toEqual([]);
    },
  ),
);

test(
  'a member who administers no team has no Audit log link, and is told the log is not theirs to read',
  step(
    () => rec,
    async () => {
      const page = await signIn(member.email);
      const network = watchNetwork(page);
      await network.quiet().finally(() => network.stop());
      expect(await page.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
      await page.goto('/settings/audit');
      await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
      await page.getByRole('alert').filter({ hasText: 'audit log' }).waitFor();
      expect(await page.locator('tbody tr').count()).toBe(0);
      // Only why: no filters to fill, no export link, no "No entries." as if the log were empty.
      expect(await page.getByRole('button', { name: 'Apply filters' }).count()).toBe(0);
      expect(await page.getByRole('link', { name: /Export these entries/ }).count()).toBe(0);
      expect(await page.getByText('No entries.').count()).toBe(0);
      expect(await seriousAxeViolations(page)).toEqual([]);

      // Once they make a team they administer it: the link appears at once, no reload needed.
      await page.getByRole('navigation').getByRole('link', { name: 'Teams' }).click();
      await page.getByRole('heading', { name: 'Teams', level: 1 }).waitFor();
      await page.getByLabel('Team name').fill('Audit crew');
      await page.getByRole('button', { name: 'Create team' }).click();
      await page.getByRole('status').filter({ hasText: 'Created team Audit crew.' }).waitFor();
      await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).waitFor();
    },
  ),
);

test(
  "once the member admins a team, the link is there and the log shows that team's entries",
  step(
    () => rec,
    async () => {
      expect((await app.request('POST', '/api/v1/teams', { token: member.token, body: { name: 'Audited' } })).status).toBe(201);
      const page = await signIn(member.email);
      await openAudit(page);
      expect(await page.locator('tbody tr').count()).toBeGreaterThan(0);
      expect(await seriousAxeViolations(page)).toEqual([]);
    },
  ),
);

test(
  'an actor with a very long email (a sign-up can choose one) neither widens the table nor makes the page scroll sideways',
  step(
    () => rec,
    async () => {
      const email = `long-${process.pid}@${'x'.repeat(150)}.example.test`;
      await createUser(operatorCtx(app.deps.db), email, 'Long', { password: PASSWORD, role: 'member' });
      expect((await app.request('POST', '/api/v1/auth/sign-in', { body: { email, password: 'not it' } })).status).toBe(401);
      const page = await signIn(admin.email);
      await openAudit(page);
      const cell = page.locator('tbody tr').filter({ hasText: 'failure' }).first().locator('td').first();
      expect(await cell.textContent()).toBe(email);
      const sideways = await page.evaluate(() => {
        const d = (globalThis as any).document.documentElement;
        return d.scrollWidth - d.clientWidth;
      });
      expect(sideways).toBeLessThanOrEqual(0);
      // The column is as wide as the .actor cap (24 characters), not the 160-character domain.
      expect((await cell.boundingBox())!.width).toBeLessThan(400);
      expect(rec.errors).toEqual([]);
    },
  ),
);
