import type { Browser, Request } from 'playwright-core';
import { launchBrowser, newRecordedPage, seriousAxeViolations, step, watchNetwork, type Recorded } from '../support/chromium';
import { SID, startTestApp, type TestApp } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

/**
 * The console's Webhooks page, in real Chromium against the real service: a user makes a webhook
 * (its secret shown once, as `whsec_…`), sees it listed with its events and scope, opens its
 * deliveries after an upload (the event, its status, time and duration), resends one, and deletes
 * it after confirming; a webhook's scope is chosen by name among the user's projects and the teams
 * they administer. axe-core clean; no page error. The receiver is an address nothing listens on: the page shows the
 * attempts as they are.
 */

const PASSWORD = 'a long enough passphrase';
let app: TestApp;
let browser: Browser;
let rec: Recorded;
const ada = { email: '', token: '' };

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  ada.email = `webhooks-ada-${process.pid}@example.test`;
  const u = await createUser(operatorCtx(app.deps.db), ada.email, 'Ada', { password: PASSWORD, role: 'member' });
  ada.token = (await app.newKey(u)).token;
  browser = await launchBrowser();
  rec = await newRecordedPage(browser, app.url);
}, 120_000);

afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

async function quietly(action: () => Promise<unknown>) {
  const network = watchNetwork(rec.page);
  try {
    await action();
    await network.quiet();
  } finally {
    network.stop();
  }
}

test(
  'make a webhook, see its secret once, its deliveries after an upload, and resend one',
  step(
    () => rec,
    async () => {
      const { page } = rec;
      await page.goto('/sign-in');
      await page.getByLabel('Email').fill(ada.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      await quietly(() => page.getByRole('link', { name: 'Webhooks' }).click());
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
      expect(await page.getByText('No webhooks yet.').count()).toBe(1);
      expect(await seriousAxeViolations(page)).toEqual([]);

      await page.getByLabel('URL').fill('http://127.0.0.1:9/hook');
      await quietly(() => page.getByRole('button', { name: 'Create webhook' }).click());
      const secret = await page.locator('output[aria-label="New webhook secret"]').textContent();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
      const card = page.getByRole('region', { name: 'Webhook http://127.0.0.1:9/hook' });
      await card.waitFor();
      expect(await card.textContent()).toContain('session.created, session.updated, session.deleted · your projects');
      expect(await seriousAxeViolations(page)).toEqual([]);

      // The page's own address (a reload) lists it again, without the secret.
      await quietly(() => page.goto('/settings/webhooks'));
      await card.waitFor();
      expect(await page.locator('output[aria-label="New webhook secret"]').count()).toBe(0);
      expect(await page.content()).not.toContain(secret!);

      // An upload: its session.created is a delivery of this webhook.
      expect(
        (await app.request('PUT', `/api/v1/projects/hooks/sessions/${SID(1)}`, { token: ada.token, body: { name: 'Hooked', markdown: '# Hooked' } })).status,
      ).toBe(201);
      await quietly(() => card.getByRole('button', { name: 'Deliveries' }).click());
      const row = card.locator('tbody tr').first();
      await row.waitFor();
      expect(await row.locator('th').textContent()).toBe('session.created');
      expect(['pending', 'failed', 'delivered']).toContain(await row.locator('td[data-label="Status"]').textContent());
      expect(await seriousAxeViolations(page)).toEqual([]);

      await quietly(() => row.getByRole('button', { name: 'Resend' }).click());
      expect(await card.getByRole('alert').count()).toBe(0);
      expect(await card.locator('tbody tr').count()).toBeGreaterThanOrEqual(1);
      expect(rec.errors).toEqual([]);
    },
  ),
  120_000,
);

test(
  'delete a webhook: asked first; Cancel keeps it, confirming removes it from the page and the service',
  step(
    () => rec,
    async () => {
      const { page } = rec;
      const card = page.getByRole('region', { name: 'Webhook http://127.0.0.1:9/hook' });
      await card.waitFor();
      await card.getByRole('button', { name: 'Delete http://127.0.0.1:9/hook' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete this webhook?' });
      await dialog.waitFor();
      expect(await seriousAxeViolations(page)).toEqual([]);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect(await dialog.count()).toBe(0);
      expect(await card.count()).toBe(1);

      await card.getByRole('button', { name: 'Delete http://127.0.0.1:9/hook' }).click();
      await quietly(() => dialog.getByRole('button', { name: 'Delete webhook' }).click());
      await page.getByText('No webhooks yet.').waitFor();
      const listed = await app.request('GET', '/api/v1/webhooks', { token: ada.token });
      expect(listed.body.data.webhooks).toEqual([]);
      expect(rec.errors).toEqual([]);
    },
  ),
  120_000,
);

test(
  "a webhook's scope is picked by name: one of your projects, or a team you administer (not one where you are a member)",
  step(
    () => rec,
    async () => {
      const { page } = rec;
      const team = async (name: string, token: string) => {
        const r = await app.request('POST', '/api/v1/teams', { token, body: { name } });
        expect(r.status).toBe(201);
        return r.body.data.team.id as string;
      };
      await team('Platform', ada.token);
      // A team Ada is only a member of is not offered.
      const bea = await createUser(operatorCtx(app.deps.db), `webhooks-bea-${process.pid}@example.test`, 'Bea', { password: PASSWORD, role: 'member' });
      const beaToken = (await app.newKey(bea)).token;
      const other = await team('Elsewhere', beaToken);
      expect((await app.request('POST', `/api/v1/teams/${other}/members`, { token: beaToken, body: { email: ada.email, role: 'member' } })).status).toBe(201);

      // Opened directly, the page and the navigation share one read of the user's teams.
      const teamReads: string[] = [];
      const countTeamReads = (r: Request) => void (new URL(r.url()).pathname === '/api/v1/teams' && teamReads.push(r.method()));
      page.on('request', countTeamReads);
      await quietly(() => page.goto('/settings/webhooks'));
      page.off('request', countTeamReads);
      expect(teamReads).toEqual(['GET']);
      const scope = page.getByLabel('For');
      const offered = await scope.locator('option').allTextContents();
      expect(offered).toEqual(['Your own projects', 'hooks', 'Platform']);

      await page.getByLabel('URL').fill('http://127.0.0.1:9/team-hook');
      await scope.selectOption({ label: 'Platform' });
      await quietly(() => page.getByRole('button', { name: 'Create webhook' }).click());
      const teamCard = page.getByRole('region', { name: 'Webhook http://127.0.0.1:9/team-hook' });
      expect(await teamCard.textContent()).toContain('· team Platform ·');

      await page.getByLabel('URL').fill('http://127.0.0.1:9/project-hook');
      await scope.selectOption({ label: 'hooks' });
      await quietly(() => page.getByRole('button', { name: 'Create webhook' }).click());
      const projectCard = page.getByRole('region', { name: 'Webhook http://127.0.0.1:9/project-hook' });
      expect(await projectCard.textContent()).toContain('· project hooks ·');
      const listed = await app.request('GET', '/api/v1/webhooks', { token: ada.token });
      expect(listed.body.data.webhooks.map((w: { projectId: string | null; teamId: string | null }) => [w.projectId, w.teamId !== null])).toEqual(
        expect.arrayContaining([
          [null, true],
          ['hooks', false],
        ]),
      );
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(rec.errors).toEqual([]);
    },
  ),
  120_000,
);

test(
  'with many projects a box narrows the list to pick from; Enter in it makes nothing',
  step(
    () => rec,
    async () => {
      const { page } = rec;
      for (let i = 1; i <= 12; i++) {
        const id = `archive-${String(i).padStart(2, '0')}`;
        const body = { name: `s${i}`, markdown: `# ${id}`, projectName: i === 7 ? 'Billing service' : `Archive ${i}` };
        expect((await app.request('PUT', `/api/v1/projects/${id}/sessions/${SID(100 + i)}`, { token: ada.token, body })).status).toBe(201);
      }
      await quietly(() => page.goto('/settings/webhooks'));
      const scope = page.getByLabel('For');
      const projectsOffered = async () => (await scope.locator('optgroup[label="One project"] option').allTextContents()).length;
      expect(await projectsOffered()).toBe(13);

      const find = page.getByLabel('Find a project');
      await page.getByLabel('URL').fill('http://127.0.0.1:9/billing-hook');
      await find.fill('billing');
      await find.press('Enter');
      expect(await scope.locator('option').allTextContents()).toEqual(['Your own projects', 'Billing service (archive-07)', 'Platform']);
      await page.getByText('1 of 13 projects listed under For.').waitFor();
      expect((await app.request('GET', '/api/v1/webhooks', { token: ada.token })).body.data.webhooks).toHaveLength(2);

      await scope.selectOption({ label: 'Billing service (archive-07)' });
      // Narrowing further keeps the one picked.
      await find.fill('billing x');
      expect(await scope.inputValue()).toBe('project:archive-07');
      await quietly(() => page.getByRole('button', { name: 'Create webhook' }).click());
      const card = page.getByRole('region', { name: 'Webhook http://127.0.0.1:9/billing-hook' });
      expect(await card.textContent()).toContain('· project Billing service ·');
      expect(await find.inputValue()).toBe('');
      expect(await scope.inputValue()).toBe('');
      expect(await projectsOffered()).toBe(13);
      expect(await seriousAxeViolations(page)).toEqual([]);

      // A team made elsewhere while the console is open is offered when the page is opened again.
      expect((await app.request('POST', '/api/v1/teams', { token: ada.token, body: { name: 'Late team' } })).status).toBe(201);
      await page.getByRole('navigation').getByRole('link', { name: 'Projects' }).click();
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      await quietly(() => page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click());
      expect(await scope.locator('optgroup[label="A team you administer"] option').allTextContents()).toEqual(['Late team', 'Platform']);
      expect(rec.errors).toEqual([]);
    },
  ),
  120_000,
);
