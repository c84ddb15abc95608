import type { Browser, Page } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { launchBrowser, newRecordedPage, seriousAxeViolations, type Recorded } from '../support/chromium';
import { startTestApp, type TestApp } from '../support/app';
import { readUsage, SHIPPED_PRICES } from '../../src/domain/usage';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { FIXTURES as FIXTURE_ROOT } from '../support/paths';

/**
 * What sessions cost, in the console, in real Chromium against the real service: the dashboard
 * shows the tokens and cost of every session the user reads (totals, tokens per day, cost per
 * model, each chart with its table), a team's card those of the team's sessions only, and a model
 * without a price is named and leaves the cost unknown. At 1280 and 390 px: axe-core clean, nothing
 * scrolls sideways, no request leaves the origin, no page error or CSP violation.
 */

const PASSWORD = 'a long enough passphrase';
const FIXTURES = path.join(FIXTURE_ROOT, 'usage');
const CLAUDE = fs.readFileSync(path.join(FIXTURES, 'claude/projects/-work-demo/3f1c2a9e-6b1d-4c55-9a57-1d2e8f0a4b61.jsonl'), 'utf8');
const CODEX = fs.readFileSync(path.join(FIXTURES, 'codex/rollout-2026-11-20T11-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl'), 'utf8');
const UNKNOWN = `${JSON.stringify({ type: 'assistant', requestId: 'r1', message: { id: 'm1', model: 'acme-model-9', usage: { input_tokens: 1200, output_tokens: 34 } } })}\n`;
const sid = (n: number) => `dddddddd-0000-4000-8000-${String(n).padStart(12, '0')}`;
const WIDE = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let app: TestApp;
let browser: Browser;
let rec: Recorded;
const ada = { id: '', email: '', token: '' };
let teamId: string;
let today: string;

const usdText = (n: number) => (n < 0.01 ? `$${n.toFixed(4)}` : `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`);
const tokensText = (n: number) => n.toLocaleString('en-US');

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  ada.email = `ada-usage-${process.pid}-${Date.now()}@example.test`;
  const u = await createUser(operatorCtx(app.deps.db), ada.email, 'Ada', { password: PASSWORD, role: 'member' });
  ada.id = u.id;
  ada.token = (await app.newKey(u)).token;
  const team = await app.request('POST', '/api/v1/teams', { token: ada.token, body: { name: 'Gannet crew' } });
  teamId = team.body.data.team.id;
  expect((await app.request('POST', '/api/v1/projects', { token: ada.token, body: { id: 'gannet-repo', name: 'Gannet repo', teamId } })).status).toBe(201);
  const now = new Date().toISOString();
  today = now.slice(0, 10);
  const put = async (projectId: string, id: string, rawData: string) => {
    const r = await app.request('PUT', `/api/v1/projects/${projectId}/sessions/${id}`, {
      token: ada.token,
      body: { name: `${id}.md`, markdown: '# m', rawData, startedAt: now, endedAt: now },
    });
    expect(r.status).toBe(201);
  };
  await put('gannet-repo', sid(1), CLAUDE);
  await put('ada-own', sid(2), CODEX);
  browser = await launchBrowser();
  rec = await newRecordedPage(browser, app.url);
  const { page } = rec;
  await page.setViewportSize(WIDE);
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(ada.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
}, 120_000);

afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

async function clean(page: Page, label: string) {
  expect({ label, foreign: rec.requests.filter((u) => new URL(u).origin !== app.url) }).toEqual({ label, foreign: [] });
  expect({ label, errors: rec.errors }).toEqual({ label, errors: [] });
  expect({ label, axe: await seriousAxeViolations(page) }).toEqual({ label, axe: [] });
  const sideways = await page.evaluate(() => {
    const d = (globalThis as any).document.documentElement;
    return d.scrollWidth - d.clientWidth;
  });
  expect({ label, sideways }).toEqual({ label, sideways: 0 });
}

/** The totals of a usage section: [tokens, cost] as shown. */
async function totalsOf(page: Page, title: string) {
  const totals = page.getByRole('region', { name: title }).locator('dl.totals dd');
  await totals.first().waitFor();
  return totals.allInnerTexts();
}

test('the dashboard and a team card show what the sessions cost, at 1280 and 390 px', async () => {
  const { page } = rec;
  const claude = (await readUsage(CLAUDE, SHIPPED_PRICES))!;
  const codex = (await readUsage(CODEX, SHIPPED_PRICES))!;
  const everything = 'What sessions cost, last 30 days';
  const team = "What Gannet crew's sessions cost, last 30 days";

  for (const size of [WIDE, PHONE]) {
    await page.setViewportSize(size);
    await page.goto('/dashboard');
    expect(await totalsOf(page, everything)).toEqual([tokensText(claude.totalTokens + codex.totalTokens), usdText(claude.costUsd! + codex.costUsd!)]);
    const region = page.getByRole('region', { name: everything });
    // Each chart is an image named by its summary, with the same figures in a table.
    await expect(region.getByRole('img', { name: /^Tokens per day: busiest day / }).count()).resolves.toBe(1);
    await region.getByText('Cost by model as a table').click();
    const rows = await region.locator('figure', { hasText: 'Cost by model' }).locator('tbody tr').allInnerTexts();
    const models = [...claude.byModel, ...codex.byModel];
    expect(rows.length).toBe(models.length);
    for (const m of models) expect(rows.join('\n')).toContain(m.model);
    await region.getByText('Tokens per day as a table').click();
    const days = await region.locator('figure', { hasText: 'Tokens per day' }).locator('tbody tr').allInnerTexts();
    expect(days).toHaveLength(30);
    expect(days.at(-1)).toBe(`${today.slice(5)}\t${tokensText(claude.totalTokens + codex.totalTokens)}`);
    await clean(page, `dashboard at ${size.width}`);

    // The team's card: the team's session only.
    await page.goto('/settings/teams');
    expect(await totalsOf(page, team)).toEqual([tokensText(claude.totalTokens), usdText(claude.costUsd!)]);
    await clean(page, `team card at ${size.width}`);
  }

  // A model without a price: named with its tokens, and the total cost is unknown (not a wrong figure).
  const r = await app.request('PUT', `/api/v1/projects/gannet-repo/sessions/${sid(3)}`, {
    token: ada.token,
    body: { name: 'acme.md', markdown: '# m', rawData: UNKNOWN, startedAt: new Date().toISOString() },
  });
  expect(r.status).toBe(201);
  await page.goto('/settings/teams');
  expect(await totalsOf(page, team)).toEqual([tokensText(claude.totalTokens + 1234), 'Unknown']);
  await expect(
    page.getByRole('region', { name: team }).getByText('No price for acme-model-9 (1,234 tokens): the total cost is unknown.').count(),
  ).resolves.toBe(1);
  await clean(page, 'team card with an unpriced model');
}, 180_000);
