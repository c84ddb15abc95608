import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newRecordedPage, openReaderPanel, seriousAxeViolations, step, type Recorded } from '../support/chromium';
import { startTestApp, type TestApp } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { CLI_USER_AGENT, CLI_VERSION, cliPut, type CliUpload } from '../support/specstory-clients';

/**
 * Teams in the console, in real Chromium against the real service (search engine included), with
 * two people in browsers of their own: projects grouped under Personal and each team, who
 * uploaded each session (lists, reader, search), /settings/teams (create, roles, the last admin,
 * invitations, remove, delete), the Owner select moving a project both ways, and `Upload new
 * projects to` in the key form and on /cli-login binding the credential to a team. Every page is checked with axe-core (no serious or
 * critical violation); no request leaves the origin and no page error or CSP violation happens.
 * The steps build on each other, in order.
 */

const PASSWORD = 'a long enough passphrase';
const TEAM = 'Rocket crew';
const sid = (n: number) => `bbbbbbbb-0000-4000-8000-${String(n).padStart(12, '0')}`;

let app: TestApp;
let browser: Browser;
const people: Record<'ada' | 'bob', { id: string; email: string; name: string; token: string; rec?: Recorded }> = {
  ada: { id: '', email: '', name: 'Ada Lovelace', token: '' },
  bob: { id: '', email: '', name: 'Bob Builder', token: '' },
};
let teamId: string;
const ada = () => people.ada.rec!;
const bob = () => people.bob.rec!;

async function put(token: string, projectId: string, id: string, body: Record<string, unknown>) {
  const r = await app.request('PUT', `/api/v1/projects/${projectId}/sessions/${id}`, { token, body: { rawData: '{}', ...body } });
  expect({ id, status: r.status, body: r.status < 300 ? null : r.body }).toEqual({ id, status: 201, body: null });
}

/** Until a word is findable by this person (the index applies its outbox within a second or so). */
async function untilSearchable(token: string, q: string, n: number) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await app.gql(token, 'query($q: String!) { searchSessions(query: $q) { total } }', { q });
    if (r.body.data?.searchSessions?.total === n) return;
    if (Date.now() > deadline) throw new Error(`search never found ${n} × ${q}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function signIn(who: 'ada' | 'bob') {
  const p = people[who];
  p.rec = await newRecordedPage(browser, app.url);
  const { page } = p.rec;
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(p.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await h1(page, 'Projects').waitFor();
}

const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { name, level: 1 });

/** Nothing left the origin, no page error or CSP violation, axe finds nothing serious. */
async function clean(rec: Recorded, label: string) {
  expect({ label, foreign: rec.requests.filter((u) => new URL(u).origin !== app.url) }).toEqual({ label, foreign: [] });
  expect({ label, errors: rec.errors }).toEqual({ label, errors: [] });
  expect({ label, axe: await seriousAxeViolations(rec.page) }).toEqual({ label, axe: [] });
}

/** A project's card in a group (a list named after the group). */
const card = (page: Page, group: string, project: string) =>
  page
    .getByRole('list', { name: group, exact: true })
    .getByRole('listitem')
    .filter({ has: page.getByRole('link', { name: project, exact: true }) });

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_REST_PER_HOUR: '100000', RATE_LIMIT_GRAPHQL_PER_HOUR: '100000' } });
  for (const who of ['ada', 'bob'] as const) {
    const p = people[who];
    p.email = `${who}-${process.pid}-${Date.now()}@example.test`;
    const u = await createUser(operatorCtx(app.deps.db), p.email, p.name, { password: PASSWORD, role: 'member' });
    p.id = u.id;
    p.token = (await app.newKey(u)).token;
  }
  const created = await app.request('POST', '/api/v1/projects', { token: people.ada.token, body: { id: 'ada-notes', name: 'Ada notes' } });
  expect(created.status).toBe(201);
  await put(people.ada.token, 'ada-notes', sid(1), { name: 'ada-first.md', markdown: '# first\n\n_**User**_\n\nthe pelican plan\n' });
  browser = await launchBrowser();
}, 120_000);

let carolRec: Recorded | undefined;
const carol = () => carolRec!;

afterAll(async () => {
  for (const p of Object.values(people)) await p.rec?.context.close().catch(() => undefined);
  await carolRec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

test(
  'without teams the projects page is one list, as before teams existed',
  step(ada, async () => {
    await signIn('ada');
    const { page } = ada();
    await card(page, 'Projects', 'Ada notes').waitFor();
    expect(await page.getByRole('heading', { name: 'Personal' }).count()).toBe(0);
    await clean(ada(), 'projects without teams');
  }),
);

test(
  'projects are grouped under Personal and each team; team members see who uploaded each session',
  step(ada, async () => {
    // The team, Bob as a member and a team project with a session of each (through the API).
    const team = await app.request('POST', '/api/v1/teams', { token: people.ada.token, body: { name: TEAM } });
    expect(team.status).toBe(201);
    teamId = team.body.data.team.id;
    const added = await app.request('POST', `/api/v1/teams/${teamId}/members`, { token: people.ada.token, body: { email: people.bob.email, role: 'member' } });
    expect(added.status).toBe(201);
    const project = await app.request('POST', '/api/v1/projects', { token: people.ada.token, body: { id: 'crew-repo', name: 'Crew repo', teamId } });
    expect(project.status).toBe(201);
    await put(people.ada.token, 'crew-repo', sid(2), { name: 'ada-crew.md', markdown: '# by Ada\n\n_**User**_\n\nthe albatross route\n' });
    await put(people.bob.token, 'crew-repo', sid(3), { name: 'bob-crew.md', markdown: '# by Bob\n\n_**User**_\n\nthe albatross wings\n' });

    const { page } = ada();
    await page.reload();
    await page.getByRole('heading', { name: 'Personal', level: 2 }).waitFor();
    await page.getByRole('heading', { name: TEAM, level: 2 }).waitFor();
    await card(page, 'Personal', 'Ada notes').waitFor();
    await card(page, TEAM, 'Crew repo').waitFor();
    expect(await card(page, 'Personal', 'Crew repo').count()).toBe(0);
    expect(await page.getByText('Team · your role: admin').count()).toBe(1);
    // The team's admin manages its projects.
    await card(page, TEAM, 'Crew repo').getByRole('button', { name: 'Edit Crew repo' }).waitFor();
    await clean(ada(), 'projects grouped');

    // A project's sessions: who uploaded each one.
    await page.getByRole('link', { name: 'Crew repo', exact: true }).click();
    await h1(page, 'Crew repo').waitFor();
    const table = page.getByRole('table', { name: 'Sessions' });
    await table.getByRole('columnheader', { name: 'Uploaded by' }).waitFor();
    const row = (title: string) => table.getByRole('row').filter({ has: page.getByRole('link', { name: title, exact: true }) });
    expect(await row('bob-crew.md').getByRole('cell', { name: people.bob.name }).count()).toBe(1);
    expect(await row('ada-crew.md').getByRole('cell', { name: people.ada.name }).count()).toBe(1);
    await clean(ada(), 'team project sessions');

    // The reader.
    await page.getByRole('link', { name: 'bob-crew.md', exact: true }).click();
    await openReaderPanel(page);
    const details = page.getByRole('region', { name: 'Session details' });
    await details.waitFor();
    const term = page.getByRole('term').filter({ hasText: /^Uploaded by$/ });
    await details.locator(term).waitFor();
    expect(await details.locator('div', { has: term }).getByRole('definition').innerText()).toBe(people.bob.name);
    await clean(ada(), 'reader of a teammate session');

    // Search results.
    await untilSearchable(people.ada.token, 'albatross', 2);
    await page.goto('/search?q=albatross');
    const results = page.getByRole('list', { name: 'Search results' });
    const bobs = results.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'bob-crew.md', exact: true }) });
    await bobs.waitFor();
    expect(await bobs.innerText()).toContain(`Uploaded by ${people.bob.name}`);
    await clean(ada(), 'search with uploaders');
  }),
);

test(
  'a member sees the team group with their role and no settings for team projects',
  step(bob, async () => {
    await signIn('bob');
    const { page } = bob();
    await card(page, TEAM, 'Crew repo').waitFor();
    expect(await page.getByText('Team · your role: member').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Edit Crew repo' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete Crew repo' }).count()).toBe(0);
    // Bob has no project of his own: the Personal group says so.
    await page.getByRole('heading', { name: 'Personal', level: 2 }).waitFor();
    await page.getByText('No personal projects.').waitFor();
    await clean(bob(), 'projects of a member');
  }),
);

/** A team's card on /settings/teams (a region named after the team). */
const teamCard = (page: Page, name: string) => page.getByRole('region', { name, exact: true });
const status = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text });
const teamsOf = async (token: string) =>
  ((await app.request('GET', '/api/v1/teams', { token })).body.data.teams as Array<{ name: string; role: string }>).map((t) => `${t.name}: ${t.role}`).sort();

test(
  'Teams page: create a team; members with roles; a Role select changes a role, seen by that member',
  step(ada, async () => {
    const { page } = ada();
    await page.getByRole('navigation').getByRole('link', { name: 'Teams' }).click();
    await h1(page, 'Teams').waitFor();
    await clean(ada(), 'teams page');

    await page.getByLabel('Team name').fill('Night shift');
    await page.getByRole('button', { name: 'Create team' }).click();
    await status(page, 'Created team Night shift.').waitFor();
    await teamCard(page, 'Night shift').waitFor();
    expect(await teamsOf(people.ada.token)).toEqual(['Night shift: admin', `${TEAM}: admin`]);

    // Members with their roles; Bob becomes a viewer through his Role select.
    const crew = teamCard(page, TEAM);
    const members = crew.getByRole('table', { name: `Members of ${TEAM}` });
    const bobRow = members.getByRole('row').filter({ has: page.getByRole('rowheader', { name: people.bob.name, exact: true }) });
    expect(await bobRow.getByRole('combobox', { name: 'Role', exact: true }).inputValue()).toBe('MEMBER');
    expect(await members.getByRole('rowheader', { name: `${people.ada.name} (you)` }).count()).toBe(1);
    await clean(ada(), 'team members');
    await bobRow.getByRole('combobox', { name: 'Role', exact: true }).selectOption('viewer');
    await status(page, `${people.bob.name} is now viewer in ${TEAM}.`).waitFor();
    expect(await teamsOf(people.bob.token)).toEqual([`${TEAM}: viewer`]);

    // Bob sees his new role: on his projects page and on his Teams page, where he manages nothing.
    const b = bob().page;
    await b.reload();
    await b.getByText('Team · your role: viewer').waitFor();
    await b.goto('/settings/teams');
    const bobsCrew = teamCard(b, TEAM);
    await bobsCrew.getByText(/^Your role: viewer/).waitFor();
    expect(await bobsCrew.getByRole('combobox', { name: 'Role' }).count()).toBe(0);
    expect(await bobsCrew.getByRole('button', { name: /^Remove / }).count()).toBe(0);
    expect(await bobsCrew.getByRole('button', { name: 'Invite' }).count()).toBe(0);
    await bobsCrew.getByRole('button', { name: `Leave team ${TEAM}` }).waitFor();
    await clean(bob(), 'teams page of a viewer');
  }),
);

test(
  'Teams page: the last admin cannot step down or leave; a team that owns projects is not deleted (the service says why)',
  step(ada, async () => {
    const { page } = ada();
    const night = teamCard(page, 'Night shift');
    const me = night.getByRole('row').filter({ has: page.getByRole('rowheader', { name: `${people.ada.name} (you)` }) });
    await me.getByRole('combobox', { name: 'Role', exact: true }).selectOption('member');
    await night.getByRole('alert').filter({ hasText: 'A team needs at least one admin' }).waitFor();
    expect(await me.getByRole('combobox', { name: 'Role', exact: true }).inputValue()).toBe('ADMIN');

    await night.getByRole('button', { name: 'Leave team Night shift' }).click();
    const leave = page.getByRole('dialog', { name: 'Leave Night shift?' });
    await clean(ada(), 'leave dialog');
    await leave.getByRole('button', { name: 'Leave team' }).click();
    await leave.waitFor({ state: 'detached' });
    await night.getByRole('alert').filter({ hasText: 'A team needs at least one admin' }).waitFor();
    expect(await teamsOf(people.ada.token)).toEqual(['Night shift: admin', `${TEAM}: admin`]);

    const crew = teamCard(page, TEAM);
    await crew.getByRole('button', { name: `Delete team ${TEAM}` }).click();
    const del = page.getByRole('dialog', { name: `Delete team ${TEAM}?` });
    await clean(ada(), 'delete team dialog');
    await del.getByRole('button', { name: 'Delete team' }).click();
    await crew.getByRole('alert').filter({ hasText: "Move or delete the team's 1 project first" }).waitFor();
    expect(await teamsOf(people.ada.token)).toEqual(['Night shift: admin', `${TEAM}: admin`]);
  }),
);

test(
  'Teams page: Invite makes a one-time link shown once with Copy; open invitations are listed and revoked',
  step(ada, async () => {
    const { page } = ada();
    const night = teamCard(page, 'Night shift');
    await night.getByLabel('Invite as').selectOption('viewer');
    await night.getByLabel('Email (optional)').fill('someone@example.test');
    await night.getByRole('button', { name: 'Invite' }).click();
    const link = night.getByRole('status', { name: 'Invitation link' });
    await link.waitFor();
    const url = new URL((await link.textContent())!.trim());
    expect(url.origin).toBe(app.url);
    expect(url.pathname).toBe('/join');
    const token = url.searchParams.get('token')!;
    expect(token.length).toBeGreaterThan(20);
    await night.getByRole('button', { name: 'Copy' }).click();
    await night.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(url.href);
    const open = night.getByRole('table', { name: 'Open invitations to Night shift' });
    await open.getByRole('rowheader', { name: 'someone@example.test' }).waitFor();
    await clean(ada(), 'invitation created');
    const lookup = await app.request('POST', '/api/v1/invitations/lookup', { body: { token } });
    expect(lookup.body.data).toMatchObject({ team: { name: 'Night shift' }, role: 'viewer', email: 'someone@example.test' });

    // Shown once: Done (or a reload) and the link is gone from the page; the listing never has it.
    await night.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(token);
    await page.reload();
    await open.waitFor();
    expect(await page.content()).not.toContain(token);

    await night.getByRole('button', { name: 'Revoke invitation for someone@example.test as viewer' }).click();
    await status(page, 'Revoked the invitation for someone@example.test.').waitFor();
    await night.getByText('No open invitations.').waitFor();
    expect((await app.request('POST', '/api/v1/invitations/lookup', { body: { token } })).status).toBe(404);
  }),
);

test(
  'Teams page: Remove <name> takes a member out after confirming; the team can then be deleted',
  step(ada, async () => {
    const added = await app.request('POST', `/api/v1/teams/${await teamIdOf('Night shift')}/members`, {
      token: people.ada.token,
      body: { email: people.bob.email, role: 'member' },
    });
    expect(added.status).toBe(201);
    const { page } = ada();
    await page.reload();
    const night = teamCard(page, 'Night shift');
    await night.getByRole('button', { name: `Remove ${people.bob.name}` }).click();
    const dialog = page.getByRole('dialog', { name: `Remove ${people.bob.name} from Night shift?` });
    await clean(ada(), 'remove dialog');
    await dialog.getByRole('button', { name: 'Remove member' }).click();
    await status(page, `Removed ${people.bob.name} from Night shift.`).waitFor();
    expect(await night.getByRole('rowheader', { name: people.bob.name, exact: true }).count()).toBe(0);
    expect(await teamsOf(people.bob.token)).toEqual([`${TEAM}: viewer`]);

    await night.getByRole('button', { name: 'Delete team Night shift' }).click();
    await page.getByRole('dialog', { name: 'Delete team Night shift?' }).getByRole('button', { name: 'Delete team' }).click();
    await status(page, 'Deleted team Night shift.').waitFor();
    await night.waitFor({ state: 'detached' });
    expect(await teamsOf(people.ada.token)).toEqual([`${TEAM}: admin`]);
  }),
);

async function teamIdOf(name: string): Promise<string> {
  const teams = (await app.request('GET', '/api/v1/teams', { token: people.ada.token })).body.data.teams as Array<{ id: string; name: string }>;
  return teams.find((t) => t.name === name)!.id;
}

const ownerOf = async (token: string, projectId: string) => {
  const r = await app.request('GET', `/api/v1/projects/${projectId}`, { token });
  return r.status === 200 ? `${r.body.data.project.owner.type}: ${r.body.data.project.owner.name}` : r.status;
};

/** The options of a select, as text. */
const optionsOf = (page: Page, label: string) => page.getByLabel(label, { exact: true }).locator('option').allInnerTexts();

test(
  'the Owner select moves a project into a team and back (the team admin takes it personally)',
  step(ada, async () => {
    const { page } = ada();
    await page.goto('/');
    await page.getByRole('button', { name: 'Edit Ada notes' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit project' });
    expect(await optionsOf(page, 'Owner')).toEqual(['Personal', TEAM]);
    expect(await dialog.getByLabel('Owner').inputValue()).toBe('');
    await dialog.getByLabel('Owner').selectOption(TEAM);
    await clean(ada(), 'edit dialog with owner');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await status(page, `Saved project Ada notes. It now belongs to ${TEAM}.`).waitFor();
    await card(page, TEAM, 'Ada notes').waitFor();
    expect(await card(page, 'Personal', 'Ada notes').count()).toBe(0);
    expect(await ownerOf(people.ada.token, 'ada-notes')).toBe(`team: ${TEAM}`);
    // Bob (a viewer of the team) reads it now.
    const b = bob().page;
    await b.goto('/');
    await card(b, TEAM, 'Ada notes').waitFor();
    expect(await ownerOf(people.bob.token, 'ada-notes')).toBe(`team: ${TEAM}`);

    await card(page, TEAM, 'Ada notes').getByRole('button', { name: 'Edit Ada notes' }).click();
    expect(await dialog.getByLabel('Owner').inputValue()).toBe(teamId);
    await dialog.getByLabel('Owner').selectOption('Personal');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await status(page, 'Saved project Ada notes. It is now personal.').waitFor();
    await card(page, 'Personal', 'Ada notes').waitFor();
    expect(await ownerOf(people.ada.token, 'ada-notes')).toBe(`user: ${people.ada.name}`);
    expect(await ownerOf(people.bob.token, 'ada-notes')).toBe(403);
  }),
);

test(
  "the key form: Upload new projects to offers teams where one may upload; the key's uploads land in the team's project",
  step(bob, async () => {
    const { page } = bob();
    // A viewer may not bind a key to the team: only Personal is offered.
    await page.goto('/settings/api-keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    expect(await optionsOf(page, 'Upload new projects to')).toEqual(['Personal']);

    // Ada makes Bob a member again (her Role select); his key form offers the team after a reload.
    const a = ada().page;
    await a.goto('/settings/teams');
    const bobRow = teamCard(a, TEAM)
      .getByRole('row')
      .filter({ has: a.getByRole('rowheader', { name: people.bob.name, exact: true }) });
    await bobRow.getByRole('combobox', { name: 'Role', exact: true }).selectOption('member');
    await status(a, `${people.bob.name} is now member in ${TEAM}.`).waitFor();

    await page.reload();
    await page.getByRole('button', { name: 'Create key' }).click();
    expect(await optionsOf(page, 'Upload new projects to')).toEqual(['Personal', TEAM]);
    await page.getByLabel('Key name').fill('bob-laptop');
    await page.getByLabel('Upload new projects to').selectOption(TEAM);
    await clean(bob(), 'key form with a team');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('status', { name: 'New API key' });
    await shown.waitFor();
    const token = (await shown.textContent())!.trim();
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'bob-laptop' }) });
    await row.getByRole('cell', { name: TEAM, exact: true }).waitFor();

    // An upload to an unknown project id through the key creates the team's project.
    await put(token, 'bob-repo', sid(4), { name: 'bob-key-upload.md', markdown: '# through the key\n' });
    expect(await ownerOf(people.ada.token, 'bob-repo')).toBe(`team: ${TEAM}`);
    await a.goto('/');
    await card(a, TEAM, 'bob-repo').waitFor();
    await a.getByRole('link', { name: 'bob-repo', exact: true }).click();
    const uploaded = a.getByRole('row').filter({ has: a.getByRole('link', { name: 'bob-key-upload.md', exact: true }) });
    await uploaded.getByRole('cell', { name: people.bob.name }).waitFor();
  }),
);

test(
  '/cli-login: Upload new projects to binds the code to the team; the CLI logged in with it syncs into the team',
  step(ada, async () => {
    const { page } = ada();
    await page.goto('/cli-login');
    const codeEl = page.getByRole('status', { name: 'Device code' });
    await codeEl.waitFor();
    const personal = (await codeEl.textContent())!.trim();
    expect(await optionsOf(page, 'Upload new projects to')).toEqual(['Personal', TEAM]);
    await page.getByLabel('Upload new projects to').selectOption(TEAM);
    await page.getByText(`New projects of this client go to ${TEAM}.`).waitFor();
    const shown = (await codeEl.textContent())!.trim();
    expect(shown).toMatch(/^[A-Z0-9]{3}-[A-Z0-9]{3}$/);
    expect(shown).not.toBe(personal);
    await clean(ada(), 'cli login for a team');

    // The upload CLI's device login with the code shown, then its gzip PUT to a new repository.
    const headers = { Accept: 'application/json', 'User-Agent': CLI_USER_AGENT };
    const login = await app.request('POST', '/api/v1/device-login', {
      body: { device_code: shown.replace('-', '').toLowerCase(), hostname: 'ada-laptop', os: 'linux', client: 'specstory-cli', client_version: CLI_VERSION },
      headers,
    });
    expect(login.status).toBe(200);
    const refresh = await app.request('POST', '/api/v1/device-refresh', { headers: { ...headers, Authorization: `Bearer ${login.body.refreshToken}` } });
    expect(refresh.status).toBe(200);
    const upload: CliUpload = {
      projectId: 'git-repo-hash',
      projectName: 'shared repo',
      name: 'cli-sync.md',
      markdown: '# synced\n',
      rawData: '{"type":"user"}\n',
      metadata: { clientName: 'specstory-cli', clientVersion: CLI_VERSION, agentName: 'Claude Code', deviceId: 'ada-laptop' },
    };
    const synced = await cliPut(app, refresh.body.accessToken, 'git-repo-hash', sid(5), upload);
    expect(synced.status).toBe(201);
    expect(await ownerOf(people.bob.token, 'git-repo-hash')).toBe(`team: ${TEAM}`);
    // The personal code shown first logs a client in for Ada's own projects.
    const first = await app.request('POST', '/api/v1/device-login', { body: { device_code: personal, client: 'specstory-cli', hostname: 'h' }, headers });
    expect(first.status).toBe(200);
    const firstAccess = await app.request('POST', '/api/v1/device-refresh', { headers: { ...headers, Authorization: `Bearer ${first.body.refreshToken}` } });
    expect((await cliPut(app, firstAccess.body.accessToken, 'ada-own-repo', sid(6), { ...upload, projectId: 'ada-own-repo' })).status).toBe(201);
    expect(await ownerOf(people.ada.token, 'ada-own-repo')).toBe(`user: ${people.ada.name}`);

    // The key list names where each logged-in client's new projects go.
    await page.goto('/settings/api-keys');
    const client = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'specstory-cli on ada-laptop' }) });
    await client.getByRole('cell', { name: TEAM, exact: true }).waitFor();
  }),
);

/** Ada makes an invitation on /settings/teams and returns its link's path (with the token). */
async function invite(role: 'admin' | 'member' | 'viewer', email = ''): Promise<string> {
  const { page } = ada();
  await page.goto('/settings/teams');
  const crew = teamCard(page, TEAM);
  await crew.getByLabel('Invite as').selectOption(role);
  await crew.getByLabel('Email (optional)').fill(email);
  await crew.getByRole('button', { name: 'Invite' }).click();
  const link = crew.getByRole('status', { name: 'Invitation link' });
  await link.waitFor();
  const url = new URL((await link.textContent())!.trim());
  return url.pathname + url.search;
}

test(
  'Leave team: a member leaves after confirming and no longer sees the team',
  step(bob, async () => {
    const { page } = bob();
    await page.goto('/settings/teams');
    await teamCard(page, TEAM)
      .getByRole('button', { name: `Leave team ${TEAM}` })
      .click();
    await page
      .getByRole('dialog', { name: `Leave ${TEAM}?` })
      .getByRole('button', { name: 'Leave team' })
      .click();
    await status(page, `You left ${TEAM}.`).waitFor();
    await page.getByText('You are not in any team yet.').waitFor();
    expect(await teamsOf(people.bob.token)).toEqual([]);
    expect(await ownerOf(people.bob.token, 'crew-repo')).toBe(403);
    await page.goto('/');
    await page.getByText('No projects yet.').waitFor();
  }),
);

test(
  '/join: a new person creates an account through the invitation (sign-up is off) and is in the team',
  step(carol, async () => {
    const setup = await app.request('GET', '/api/v1/auth/setup');
    expect(setup.body.data.signupEnabled).toBe(false);
    const path = await invite('viewer');
    carolRec = await newRecordedPage(browser, app.url);
    const { page } = carolRec;
    await page.goto(path);
    await h1(page, `Join ${TEAM}`).waitFor();
    await page.getByText(`You are invited to the team ${TEAM} as viewer`).waitFor();
    await clean(carol(), 'join signed out');
    const email = `carol-${process.pid}-${Date.now()}@example.test`;
    // Without the invitation the same account is refused (sign-up is off).
    const plain = await app.request('POST', '/api/v1/auth/sign-up', { body: { email, name: 'Carol', password: PASSWORD } });
    expect(plain.status).toBe(403);

    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Name').fill('Carol Shaw');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account and join' }).click();
    await h1(page, `You joined ${TEAM}`).waitFor();
    await status(page, `You are now a viewer of ${TEAM}.`).waitFor();
    await clean(carol(), 'joined');
    await page.getByRole('link', { name: 'Projects', exact: true }).first().click();
    await card(page, TEAM, 'Crew repo').waitFor();
    await page.getByText('Team · your role: viewer').waitFor();

    // The link worked once.
    await page.goto(path);
    await page.getByRole('alert').filter({ hasText: 'Invalid or expired invitation' }).waitFor();
    await clean(carol(), 'used invitation');
  }),
);

test(
  '/join: an invitation for another email is refused; its person signs in through the link and joins',
  step(bob, async () => {
    const path = await invite('member', people.bob.email);

    // Carol (signed in) cannot use Bob's invitation.
    const c = carol().page;
    await c.goto(path);
    await h1(c, `Join ${TEAM}`).waitFor();
    await c.getByText(`(for ${people.bob.email})`).waitFor();
    await c.getByRole('button', { name: 'Join team' }).click();
    await c.getByRole('alert').filter({ hasText: 'This invitation is for another email address' }).waitFor();
    await clean(carol(), 'join refused');

    // Bob, signed out, opens it, signs in through it and joins.
    const { page } = bob();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await h1(page, 'Sign in').waitFor();
    await page.goto(path);
    await h1(page, `Join ${TEAM}`).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe(people.bob.email);
    await page.getByRole('link', { name: 'Sign in to join' }).click();
    await h1(page, 'Sign in').waitFor();
    await page.getByLabel('Email').fill(people.bob.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await h1(page, `Join ${TEAM}`).waitFor();
    await page.getByText(`You are signed in as ${people.bob.email}.`).waitFor();
    await clean(bob(), 'join signed in');
    await page.getByRole('button', { name: 'Join team' }).click();
    await h1(page, `You joined ${TEAM}`).waitFor();
    expect(await teamsOf(people.bob.token)).toEqual([`${TEAM}: member`]);

    // The admin sees both newcomers with their roles.
    const a = ada().page;
    await a.goto('/settings/teams');
    const members = teamCard(a, TEAM).getByRole('table', { name: `Members of ${TEAM}` });
    const roleOf = (name: string) =>
      members
        .getByRole('row')
        .filter({ has: a.getByRole('rowheader', { name, exact: true }) })
        .getByRole('combobox', { name: 'Role', exact: true })
        .inputValue();
    await members.getByRole('rowheader', { name: 'Carol Shaw', exact: true }).waitFor();
    expect(await roleOf('Carol Shaw')).toBe('VIEWER');
    expect(await roleOf(people.bob.name)).toBe('MEMBER');
    await teamCard(a, TEAM).getByText('No open invitations.').waitFor();
  }),
);

test(
  'a hostile team name is plain text wherever the console shows it (group heading, Teams page, key form)',
  step(ada, async () => {
    const hostile = `<img src=/pwned-img onerror="window.__pwned=1"><script>window.__pwned=2</script>"'&amp;`;
    const team = await app.request('POST', '/api/v1/teams', { token: people.ada.token, body: { name: hostile } });
    expect(team.status).toBe(201);
    const project = await app.request('POST', '/api/v1/projects', {
      token: people.ada.token,
      body: { id: 'hostile-team-project', name: 'Hostile team project', teamId: team.body.data.team.id },
    });
    expect(project.status).toBe(201);
    const { page } = ada();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const notRun = async (label: string) => {
      // The markup never became elements: no script ran, no image was asked for, no dialog opened.
      const found = await page.evaluate(
        `({ pwned: window.__pwned ?? null, elements: [...document.querySelectorAll('img, script')].filter((e) => /pwned/.test(e.outerHTML)).length })`,
      );
      expect({ label, found, dialogs, img: ada().requests.filter((u) => u.includes('pwned-img')) }).toEqual({
        label,
        found: { pwned: null, elements: 0 },
        dialogs: [],
        img: [],
      });
    };

    await page.goto('/');
    // The group heading carries the name as text, exactly as stored.
    await page.getByRole('heading', { name: hostile, exact: true, level: 2 }).waitFor();
    await card(page, hostile, 'Hostile team project').waitFor();
    await notRun('projects page');

    await page.goto('/settings/teams');
    await teamCard(page, hostile).waitFor();
    await notRun('teams page');

    await page.goto('/settings/api-keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    // The teams arrive after the form opens: wait for the team's option before reading them all.
    await page.getByLabel('Upload new projects to', { exact: true }).locator('option', { hasText: 'pwned-img' }).waitFor({ state: 'attached' });
    expect(await optionsOf(page, 'Upload new projects to')).toContain(hostile);
    await notRun('key form');
    await clean(ada(), 'hostile team name');
  }),
);
