import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newRecordedPage, openReaderPanel, seriousAxeViolations, step, type Recorded } from '../support/chromium';
import { SID, startTestApp, type TestApp } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

/**
 * Share links in the console (docs/shares.md) in real Chromium, by accessible names: the reader's
 * Share dialog (Expires, Audience, one `Show exchange <n>` checkbox per exchange, Preview as
 * viewer, Create link), the new link copied with Copy and read through the public JSON API without
 * the exchange left unchecked, /settings/shares (heading Shared links) with the link's session,
 * expiry and views, Revoke link in the reader after which the link answers 404; the service's
 * refusals shown as it words them (unmasked secrets, links turned off). axe-core finds no serious
 * or critical violation; nothing is requested from another origin; no script error.
 */

const PASSWORD = 'a long enough passphrase';
const P = 'share-console';
const LEAKY = '0c5a0000-2222-4222-8222-000000000002';
const HIDDEN_MARK = 'CONSOLE-HIDDEN-EXCHANGE-w8t';
const SECRET = `ghp_${'Q1w2E3r4T5'.repeat(3)}abcdef`;
const MD = [
  '# Fixing the login flow\n\n',
  '_**User**_\n\nWhy does login fail?\n\n_**Agent**_\n\nThe token expired.\n\n',
  `_**User**_\n\n${HIDDEN_MARK} private question\n\n_**Agent**_\n\n${HIDDEN_MARK} private answer\n\n`,
  '_**User**_\n\nNow fix it\n\n_**Agent**_\n\nDone.\n',
].join('');

let app: TestApp;
let browser: Browser;
let rec: Recorded | undefined;
let token: string;
let email: string;
const others: TestApp[] = [];

const readerUrl = (id: string) => `/projects/${P}/sessions/${id}`;
const tokenOf = (url: string) => url.slice(url.lastIndexOf('/s/') + 3);

beforeAll(async () => {
  const env = {
    WORKERS_ENABLED: 'false',
    RATE_LIMIT_REST_PER_HOUR: '100000',
    RATE_LIMIT_GRAPHQL_PER_HOUR: '100000',
    SHARE_READS_PER_MINUTE: '100000',
  };
  app = await startTestApp({ env });
  browser = await launchBrowser();
  email = `sharer-${process.pid}-${Date.now()}@example.test`;
  const user = await createUser(operatorCtx(app.deps.db), email, 'Sharer', {
    password: PASSWORD,
    role: 'member',
  });
  ({ token } = await app.newKey(user));
  const put = await app.request('PUT', `/api/v1/projects/${P}/sessions/${SID(1)}`, {
    token,
    body: { projectName: 'Share console', name: 'login.md', markdown: MD },
  });
  expect(put.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  for (const o of others) await o.close().catch(() => undefined);
  await app?.close();
});

async function signIn(on: TestApp, next: string): Promise<Page> {
  await rec?.context.close().catch(() => undefined);
  rec = await newRecordedPage(browser, on.url);
  const { page } = rec;
  await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return page;
}

function expectClean(on: TestApp): void {
  expect(rec!.requests.filter((u) => new URL(u).origin !== on.url)).toEqual([]);
  expect(rec!.errors).toEqual([]);
}

test(
  'share with one exchange unchecked, copy, read it without that exchange, see it in Shared links with its views, revoke it from the reader',
  step(
    () => rec!,
    async () => {
      const page = await signIn(app, readerUrl(SID(1)));
      await page.getByRole('heading', { level: 1, name: 'login.md' }).waitFor();
      await openReaderPanel(page);
      const links = page.getByRole('region', { name: 'Share links' });
      await links.getByText('No links to this session.').waitFor();
      await links.getByRole('button', { name: 'Share' }).click();

      const dialog = page.getByRole('dialog', { name: 'Share this session' });
      await dialog.waitFor();
      const expires = dialog.getByRole('combobox', { name: 'Expires' });
      expect(await expires.locator('option').allInnerTexts()).toEqual(['In 1 day', 'In 7 days', 'In 30 days', 'In 90 days']);
      expect(await expires.inputValue()).toBe('30');
      const audience = dialog.getByRole('combobox', { name: 'Audience' });
      expect(await audience.inputValue()).toBe('PUBLIC');
      // One checkbox per exchange, every one checked.
      // The `# title` line is the file's header, part of exchange 1: three exchanges.
      await dialog.getByRole('checkbox', { name: 'Show exchange 3' }).waitFor();
      const boxes = dialog.getByRole('checkbox');
      expect(await boxes.count()).toBe(3);
      for (let n = 1; n <= 3; n++) expect(await dialog.getByRole('checkbox', { name: `Show exchange ${n}`, exact: true }).isChecked()).toBe(true);

      await dialog.getByRole('checkbox', { name: 'Show exchange 2', exact: true }).uncheck();
      await expires.selectOption('7');
      const preview = dialog.getByRole('button', { name: 'Preview as viewer' });
      await preview.click();
      expect(await preview.getAttribute('aria-expanded')).toBe('true');
      const seen = dialog.getByRole('region', { name: 'What a viewer sees' });
      await seen.getByText('2 of 3 exchanges shown', { exact: false }).waitFor();
      expect(await seen.getByRole('listitem').allInnerTexts()).toEqual(['Why does login fail?', 'Hidden by the owner', 'Now fix it']);
      expect(await seriousAxeViolations(page)).toEqual([]);

      await dialog.getByRole('button', { name: 'Create link' }).click();
      const output = dialog.getByRole('status', { name: 'Share link' });
      await output.waitFor();
      const url = (await output.innerText()).trim();
      expect(url).toMatch(new RegExp(`^${app.url}/s/[A-Za-z0-9_-]{44}$`));
      await dialog.getByRole('button', { name: 'Copy' }).click();
      await dialog.getByText('Copied to the clipboard.').waitFor();
      const copied = await page.evaluate(() => (globalThis as any).navigator.clipboard.readText());
      expect(copied).toBe(url);
      expect(await seriousAxeViolations(page)).toEqual([]);

      // The copied link's JSON: exchange 2 is a placeholder; its words are in no byte of it.
      const api = await app.request('GET', `/api/v1/share/${tokenOf(copied)}`);
      expect(api.status).toBe(200);
      expect(api.body.data.exchanges.map((e: { number: number }) => e.number)).toEqual([1, 2, 3]);
      expect(api.body.data.exchanges[1]).toEqual({ number: 2, hidden: true });
      expect(api.text).not.toContain(HIDDEN_MARK);
      expect((await app.request('GET', `/api/v1/share/${tokenOf(copied)}`)).status).toBe(200);

      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });
      // The reader lists the link: its address, audience, what it hides and (read again when the
      // dialog closes) its two views.
      const row = links.getByRole('row').filter({ hasText: url });
      // Two cells read `2`: the hidden exchange and the views.
      await row.getByRole('cell', { name: '2', exact: true }).nth(1).waitFor();
      const rowCells = await row.getByRole('cell').allInnerTexts();
      expect(rowCells).toEqual(expect.arrayContaining(['Anyone with the link', '2']));
      expect(rowCells.filter((c) => c === '2')).toHaveLength(2);

      // Shared links: the link with its session, expiry and the two views.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Shared links' }).click();
      await page.getByRole('heading', { level: 1, name: 'Shared links' }).waitFor();
      const listed = page.getByRole('row').filter({ hasText: url });
      await listed.waitFor();
      await listed.getByRole('link', { name: 'login.md' }).waitFor();
      const cells = await listed.getByRole('cell').allInnerTexts();
      // Expiry: 7 days from the snapshot, shown as the browser writes the date.
      const stored = (await app.request('GET', '/api/v1/shares', { token })).body.data.shares[0];
      expect(Math.abs(Date.parse(stored.expiresAt) - Date.parse(api.body.data.sharedAt) - 7 * 86_400_000)).toBeLessThan(60_000);
      expect(cells).toContain(await page.evaluate((iso) => new Date(iso).toLocaleString(), stored.expiresAt as string));
      const header = await page.getByRole('columnheader').allInnerTexts();
      expect(cells[header.indexOf('Views') - 1]).toBe('2');
      expect(await seriousAxeViolations(page)).toEqual([]);

      // Revoke it from the reader: the link answers 404 from then on.
      await listed.getByRole('link', { name: 'login.md' }).click();
      await page.getByRole('heading', { level: 1, name: 'login.md' }).waitFor();
      await openReaderPanel(page);
      await links.getByRole('row').filter({ hasText: url }).getByRole('button', { name: 'Revoke link' }).click();
      const confirm = page.getByRole('dialog', { name: 'Revoke this link?' });
      await confirm.getByRole('button', { name: 'Revoke' }).click();
      await links.getByText('No links to this session.').waitFor();
      const gone = await app.request('GET', `/api/v1/share/${tokenOf(copied)}`);
      expect(gone.status).toBe(404);
      expect(gone.text).toBe('{"success":false,"error":"Share link not found"}');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Shared links' }).click();
      await page.getByText('No shared links yet.').waitFor();
      expectClean(app);
    },
  ),
  120_000,
);

test(
  "the service's refusals: unmasked secrets shown in the dialog (409); links turned off, no Share offered and the API says why (403)",
  step(
    () => rec!,
    async () => {
      const env = {
        WORKERS_ENABLED: 'false',
        RATE_LIMIT_REST_PER_HOUR: '100000',
        RATE_LIMIT_GRAPHQL_PER_HOUR: '100000',
      };
      const report = await startTestApp({
        db: app.db,
        env: { ...env, REDACT_SECRETS: 'report' },
      });
      others.push(report);
      const leaky = `${MD}_**User**_\n\nmy token is ${SECRET}\n`;
      expect((await report.request('PUT', `/api/v1/projects/${P}/sessions/${LEAKY}`, { token, body: { name: 'leaky.md', markdown: leaky } })).status).toBe(201);
      let page = await signIn(report, readerUrl(LEAKY));
      await openReaderPanel(page);
      await page.getByRole('region', { name: 'Share links' }).getByRole('button', { name: 'Share' }).click();
      const dialog = page.getByRole('dialog', { name: 'Share this session' });
      await dialog.getByRole('checkbox', { name: 'Show exchange 4', exact: true }).waitFor();
      await dialog.getByRole('button', { name: 'Create link' }).click();
      const secrets = dialog.getByRole('alert');
      await secrets.getByText(/^Session holds unmasked secrets \(.*github-token.*\)/).waitFor();
      expect(await secrets.innerText()).not.toContain(SECRET);
      expect(await dialog.getByLabel('Share link').count()).toBe(0);
      expect(await seriousAxeViolations(page)).toEqual([]);
      expectClean(report);

      const off = await startTestApp({
        db: app.db,
        env: { ...env, SHARES: 'off' },
      });
      others.push(off);
      page = await signIn(off, readerUrl(SID(1)));
      await openReaderPanel(page);
      // Links turned off: the console offers no Share button, and the API says why.
      await page.getByRole('button', { name: 'Download markdown' }).waitFor();
      expect(await page.getByRole('button', { name: 'Share', exact: true }).count()).toBe(0);
      const refused = await off.request('POST', `/api/v1/projects/${P}/sessions/${SID(1)}/shares`, { token, body: {} });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe('Share links are turned off on this server');
      expectClean(off);
    },
  ),
  120_000,
);
