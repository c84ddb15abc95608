import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newRecordedPage, openReaderPanel, seriousAxeViolations, step, watchNetwork, type Recorded } from '../support/chromium';
import { SID, startTestApp, type TestApp } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

/**
 * Retention and legal hold in the console, in real Chromium against the real service: Ada (a
 * member, admin of her team) sets a project's retention in its Edit dialog (a refused number says
 * why), previews what the next sweep deletes, and sets her team's retention on the Teams page;
 * Root (an instance administrator, admin in the same team) puts the project on legal hold; Ada
 * then sees the hold read-only, and her deletes of the project and of a session say it is held;
 * Root then holds the team, which Ada reads as a notice on its card.
 * Each change is checked through the API; axe-core clean; no page error.
 */

const PASSWORD = 'a long enough passphrase';
const TEAM = 'Keepers';
let app: TestApp;
let browser: Browser;
const people = {
  ada: { email: '', token: '', rec: undefined as Recorded | undefined },
  root: { email: '', token: '', rec: undefined as Recorded | undefined },
};
let teamId = '';

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false, env: { RETENTION_DAYS: '365' } });
  for (const [who, role] of [
    ['ada', 'member'],
    ['root', 'admin'],
  ] as const) {
    people[who].email = `retention-${who}-${process.pid}-${Date.now()}@example.test`;
    const u = await createUser(operatorCtx(app.deps.db), people[who].email, who === 'ada' ? 'Ada' : 'Root', { password: PASSWORD, role });
    people[who].token = (await app.newKey(u)).token;
  }
  const team = await app.request('POST', '/api/v1/teams', { token: people.ada.token, body: { name: TEAM } });
  expect(team.status).toBe(201);
  teamId = team.body.data.team.id;
  const added = await app.request('POST', `/api/v1/teams/${teamId}/members`, { token: people.ada.token, body: { email: people.root.email, role: 'admin' } });
  expect(added.status).toBe(201);
  expect((await app.request('POST', '/api/v1/projects', { token: people.ada.token, body: { id: 'vault', name: 'Vault', teamId } })).status).toBe(201);
  for (const [n, name] of [
    [1, 'old-notes'],
    [2, 'fresh-notes'],
  ] as const)
    await app.upload({ token: people.ada.token }, 'vault', SID(n), { name, markdown: `# ${name}\n\n_**User**_\n\n${name}\n` });
  // old-notes was last updated 40 days ago: past a 30-day retention, within the instance's 365.
  await app.deps.db.writes.execute('UPDATE sessions SET updatedAt = UTC_TIMESTAMP(3) - INTERVAL 40 DAY WHERE projectId = ? AND id = ?', 'vault', SID(1));
  browser = await launchBrowser();
  for (const who of ['ada', 'root'] as const) people[who].rec = await newRecordedPage(browser, app.url);
}, 120_000);

afterAll(async () => {
  for (const p of Object.values(people)) await p.rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

const ada = () => people.ada.rec!;
const root = () => people.root.rec!;
const api = async (who: 'ada' | 'root', path: string) => (await app.request('GET', path, { token: people[who].token })).body.data;

async function quietly(page: Page, action: () => Promise<unknown>) {
  const network = watchNetwork(page);
  try {
    await action();
    await network.quiet();
  } finally {
    network.stop();
  }
}

async function signIn(rec: Recorded, email: string) {
  const { page } = rec;
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
}

/** Opens the project's Edit dialog and waits for what applies now (from the preview). */
async function openEdit(page: Page) {
  await page.getByRole('button', { name: 'Edit Vault' }).click();
  const dialog = page.getByRole('dialog', { name: 'Edit project' });
  await dialog.waitFor();
  return dialog;
}

test(
  "a project's owner sets its retention (a refused number says why) and previews the next sweep",
  step(ada, async () => {
    await signIn(ada(), people.ada.email);
    const { page } = ada();
    let dialog = await openEdit(page);
    await dialog.getByText("Now the instance's retention applies: sessions not updated for 365 days are deleted.").waitFor();
    // An instance administrator's checkbox only.
    expect(await dialog.getByLabel('Legal hold').count()).toBe(0);
    expect(await seriousAxeViolations(page)).toEqual([]);

    // The keyboard reaches the choice: the radio, then the days.
    await dialog.getByLabel('Delete sessions not updated for a number of days').focus();
    await page.keyboard.press('Space');
    const days = dialog.getByLabel('Days without an update');
    expect(await days.isEnabled()).toBe(true);
    await days.fill('0');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.getByRole('alert').getByText('Enter a whole number of days from 1 to 36500.').waitFor();
    expect(await days.getAttribute('aria-invalid')).toBe('true');
    expect((await api('ada', '/api/v1/projects/vault')).project.retentionDays).toBeNull();
    expect(await seriousAxeViolations(page)).toEqual([]);

    await days.fill('30');
    await quietly(page, () => dialog.getByRole('button', { name: 'Save' }).click());
    await page.getByText('Saved project Vault.').waitFor();
    expect((await api('ada', '/api/v1/projects/vault')).project).toMatchObject({ retentionDays: 30, legalHold: false });

    // The preview, under the saved 30 days: old-notes only.
    dialog = await openEdit(page);
    expect(await dialog.getByLabel('Days without an update').inputValue()).toBe('30');
    await quietly(page, () => dialog.getByRole('button', { name: 'Preview the next sweep' }).click());
    await dialog.getByText(/The next sweep would delete 1 session not updated since/).waitFor();
    const listed = dialog.getByRole('list', { name: 'Sessions the next sweep would delete' }).getByRole('listitem');
    expect(await listed.count()).toBe(1);
    expect(await listed.first().textContent()).toContain('old-notes');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(ada().errors).toEqual([]);
  }),
);

test(
  "a team admin sets the team's retention on the Teams page",
  step(ada, async () => {
    const { page } = ada();
    await quietly(page, () => page.goto('/settings/teams'));
    const form = page.getByRole('form', { name: `Retention of ${TEAM}` });
    await form.waitFor();
    expect(await form.getByLabel('Legal hold').count()).toBe(0);
    await form.getByLabel('Delete sessions not updated for a number of days').check();
    await form.getByLabel('Days without an update').fill('abc');
    await form.getByRole('button', { name: 'Save retention' }).click();
    await form.getByText('Enter a whole number of days from 1 to 36500.').waitFor();
    await form.getByLabel('Days without an update').fill('90');
    await quietly(page, () => form.getByRole('button', { name: 'Save retention' }).click());
    await page.getByText(`Saved the retention and legal hold of ${TEAM}.`).waitFor();
    expect((await api('ada', `/api/v1/teams/${teamId}`)).team).toMatchObject({ retentionDays: 90, legalHold: false });
    expect(await seriousAxeViolations(page)).toEqual([]);
    expect(ada().errors).toEqual([]);
  }),
);

test(
  'an instance administrator puts the project on legal hold; the team offers the hold too',
  step(root, async () => {
    await signIn(root(), people.root.email);
    const { page } = root();
    const dialog = await openEdit(page);
    const hold = dialog.getByLabel('Legal hold');
    expect(await hold.isChecked()).toBe(false);
    await hold.check();
    await quietly(page, () => dialog.getByRole('button', { name: 'Save' }).click());
    await page.getByText('Saved project Vault.').waitFor();
    expect((await api('ada', '/api/v1/projects/vault')).project).toMatchObject({ retentionDays: 30, legalHold: true });
    expect(await seriousAxeViolations(page)).toEqual([]);

    await quietly(page, () => page.goto('/settings/teams'));
    const form = page.getByRole('form', { name: `Retention of ${TEAM}` });
    await form.waitFor();
    expect(await form.getByLabel('Legal hold').isChecked()).toBe(false);
    expect(await seriousAxeViolations(page)).toEqual([]);
    expect(root().errors).toEqual([]);
  }),
);

test(
  'the owner sees the hold read-only, and her deletes of the project and of a session say it is held',
  step(ada, async () => {
    const { page } = ada();
    await quietly(page, () => page.goto('/'));
    const cardOf = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'Vault', exact: true }) });
    await cardOf.getByText('Legal hold').waitFor();

    const dialog = await openEdit(page);
    expect(await dialog.getByRole('checkbox', { name: 'Legal hold' }).count()).toBe(0);
    await dialog
      .getByRole('note')
      .getByText(/This project is on legal hold/)
      .waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: 'Delete Vault' }).click();
    const confirm = page.getByRole('dialog', { name: /Delete project Vault/ });
    await confirm.getByText(/This project is on legal hold/).waitFor();
    await quietly(page, () => confirm.getByRole('button', { name: 'Delete project' }).click());
    await page
      .getByRole('alert')
      .getByText('Project Vault cannot be deleted: it is on legal hold. An instance administrator has to lift the hold first.')
      .waitFor();
    expect((await app.request('GET', '/api/v1/projects/vault', { token: people.ada.token })).status).toBe(200);

    await quietly(page, () => page.goto(`/projects/vault/sessions/${SID(2)}`));
    await openReaderPanel(page);
    await page.getByRole('button', { name: 'Delete session' }).click();
    await page
      .getByRole('dialog')
      .getByText(/Its project is on legal hold/)
      .waitFor();
    await quietly(page, () => page.getByRole('dialog').getByRole('button', { name: 'Delete session' }).click());
    await page
      .getByRole('alert')
      .getByText(/This session cannot be deleted: its project is on legal hold/)
      .waitFor();
    expect((await app.request('GET', `/api/v1/projects/vault/sessions/${SID(2)}`, { token: people.ada.token })).status).toBe(200);
    expect(await seriousAxeViolations(page)).toEqual([]);
    expect(ada().errors).toEqual([]);
  }),
);

test(
  "an instance administrator puts the team on legal hold; its admin then reads the hold and keeps the team's retention",
  step(root, async () => {
    const { page } = root();
    await quietly(page, () => page.goto('/settings/teams'));
    const form = page.getByRole('form', { name: `Retention of ${TEAM}` });
    await form.getByLabel('Legal hold').check();
    await quietly(page, () => form.getByRole('button', { name: 'Save retention' }).click());
    await page.getByText(`Saved the retention and legal hold of ${TEAM}.`).waitFor();
    expect((await api('ada', `/api/v1/teams/${teamId}`)).team).toMatchObject({ retentionDays: 90, legalHold: true });

    const { page: adaPage } = ada();
    await quietly(adaPage, () => adaPage.goto('/settings/teams'));
    const adaForm = adaPage.getByRole('form', { name: `Retention of ${TEAM}` });
    await adaForm
      .getByRole('note')
      .getByText(/This team is on legal hold/)
      .waitFor();
    expect(await adaForm.getByRole('checkbox', { name: 'Legal hold' }).count()).toBe(0);
    expect(await adaForm.getByLabel('Days without an update').inputValue()).toBe('90');
    expect(await seriousAxeViolations(adaPage)).toEqual([]);
    expect(root().errors).toEqual([]);
    expect(ada().errors).toEqual([]);
  }),
);
