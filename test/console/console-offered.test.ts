import type { Browser, Locator, Page } from 'playwright-core';
import fs from 'node:fs';
import { launchBrowser, newRecordedPage, seriousAxeViolations, step, type Recorded } from '../support/chromium';
import { startTestApp, type TestApp } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

/**
 * What a new user meets in the console, in real Chromium against the real service: only what the
 * caller may do is offered (a team's admin, member and viewer each in a browser of their own), and
 * a refusal that still happens says why in words; search snippets read as text; the Share dialog
 * of a long session (Show all, Hide all, within the window) and the link's Open Graph tags; the
 * favicon; project icons drawn; Settings → Export downloading the archive; code blocks reachable
 * by keyboard. No request leaves the origin, no page error or CSP violation, axe-core clean.
 * The steps build on each other, in order.
 */

const PASSWORD = 'a long enough passphrase';
const TEAM = 'Pelican crew';
const P = 'crew-repo';
const sid = (n: number) => `cccccccc-0000-4000-8000-${String(n).padStart(12, '0')}`;
const HOSTILE_TITLE = `"/><script>window.__pwned='og'</script><meta property="og:title" content="forged`;

const MARKDOWN = [
  '# Quokka notes\n\n',
  '_**User**_\n\nHow do I cache the **quokka** list?\n\n---\n\n',
  '_**Agent (claude-sonnet)**_\n\n## Plan\n\nUse `quokkaCache.get()` here:\n\n',
  '```ts\nconst quokka = quokkaCache.get("a-rather-long-key-that-makes-this-line-wider-than-any-phone-screen-is");\n```\n',
].join('');

type Who = 'ada' | 'bob' | 'vic';
let app: TestApp;
let browser: Browser;
const people: Record<Who, { id: string; email: string; name: string; token: string; rec?: Recorded }> = {
  ada: { id: '', email: '', name: 'Ada Admin', token: '' },
  bob: { id: '', email: '', name: 'Bob Member', token: '' },
  vic: { id: '', email: '', name: 'Vic Viewer', token: '' },
};
let teamId: string;
const rec = (who: Who) => () => people[who].rec!;

async function put(token: string, id: string, body: Record<string, unknown>) {
  const r = await app.request('PUT', `/api/v1/projects/${P}/sessions/${id}`, { token, body: { rawData: '{}', ...body } });
  expect({ id, status: r.status }).toEqual({ id, status: 201 });
}

async function signIn(who: Who): Promise<Page> {
  const p = people[who];
  p.rec = await newRecordedPage(browser, app.url);
  const { page } = p.rec;
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(p.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
  return page;
}

async function clean(who: Who, label: string) {
  const r = people[who].rec!;
  expect({ label, foreign: r.requests.filter((u) => new URL(u).origin !== app.url) }).toEqual({ label, foreign: [] });
  expect({ label, errors: r.errors }).toEqual({ label, errors: [] });
  expect({ label, axe: await seriousAxeViolations(r.page) }).toEqual({ label, axe: [] });
}

const reader = (id: number) => `/projects/${P}/sessions/${sid(id)}`;

/** The reader's folded panel (details, tags, sharing), opened. */
async function openPanel(page: Page) {
  const summary = page.getByText('Details, tags and sharing', { exact: true });
  await summary.waitFor();
  if (!(await page.locator('details.panel').evaluate((e) => (e as unknown as { open: boolean }).open))) await summary.click();
  await page.getByRole('button', { name: 'Download markdown' }).waitFor();
}
const button = (within: Page | Locator, name: string) => within.getByRole('button', { name, exact: true });

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_REST_PER_HOUR: '100000', RATE_LIMIT_GRAPHQL_PER_HOUR: '100000' } });
  for (const who of ['ada', 'bob', 'vic'] as const) {
    const p = people[who];
    p.email = `${who}-${process.pid}-${Date.now()}@example.test`;
    const u = await createUser(operatorCtx(app.deps.db), p.email, p.name, { password: PASSWORD, role: 'member' });
    p.id = u.id;
    p.token = (await app.newKey(u)).token;
  }
  const team = await app.request('POST', '/api/v1/teams', { token: people.ada.token, body: { name: TEAM } });
  teamId = team.body.data.team.id;
  for (const [who, role] of [
    ['bob', 'member'],
    ['vic', 'viewer'],
  ] as const) {
    const r = await app.request('POST', `/api/v1/teams/${teamId}/members`, { token: people.ada.token, body: { email: people[who].email, role } });
    expect(r.status).toBe(201);
  }
  const project = await app.request('POST', '/api/v1/projects', { token: people.ada.token, body: { id: P, name: 'Crew repo', icon: 'BarChart3', teamId } });
  expect(project.status).toBe(201);
  await put(people.ada.token, sid(1), { name: 'ada.md', markdown: MARKDOWN, metadata: { tags: ['adas'] } });
  await put(people.bob.token, sid(2), { name: 'bob.md', markdown: '# Bob\n\n_**User**_\n\nthe albatross wings\n', metadata: { tags: ['bobs'] } });
  // A long session: 60 exchanges.
  const long = Array.from({ length: 60 }, (_, i) => `_**User**_\n\nQuestion ${i + 1}\n\n_**Agent**_\n\nAnswer ${i + 1}\n\n`).join('');
  await put(people.ada.token, sid(3), { name: 'long.md', markdown: `# Long\n\n${long}` });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  for (const p of Object.values(people)) await p.rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

describe('only what the caller may do is offered', () => {
  test('the API says what each role may do with a session and a project (viewerCan)', async () => {
    const Q = `query($p: ID!, $a: ID!, $b: ID!) {
      project(id: $p) { viewerCan { edit move delete upload } }
      a: session(projectId: $p, id: $a) { viewerCan { rename tag delete share } }
      b: session(projectId: $p, id: $b) { viewerCan { rename tag delete share } }
    }`;
    const all = { rename: true, tag: true, delete: true, share: true };
    const none = { rename: false, tag: false, delete: false, share: false };
    const seen = async (who: Who) => (await app.gql(people[who].token, Q, { p: P, a: sid(1), b: sid(2) })).body.data;
    expect(await seen('ada')).toEqual({
      project: { viewerCan: { edit: true, move: true, delete: true, upload: true } },
      a: { viewerCan: all },
      b: { viewerCan: all },
    });
    expect(await seen('bob')).toEqual({
      project: { viewerCan: { edit: false, move: false, delete: false, upload: true } },
      a: { viewerCan: none },
      b: { viewerCan: all },
    });
    expect(await seen('vic')).toEqual({
      project: { viewerCan: { edit: false, move: false, delete: false, upload: false } },
      a: { viewerCan: none },
      b: { viewerCan: none },
    });
  });

  test('refusals say why in words', async () => {
    const del = (who: Who, id: number) => app.request('DELETE', `/api/v1/projects/${P}/sessions/${sid(id)}`, { token: people[who].token });
    expect((await del('bob', 1)).body).toEqual({
      success: false,
      error: "Only the person who uploaded this session and the team's admins can delete it",
    });
    expect((await del('vic', 2)).body).toEqual({
      success: false,
      error: "Viewers of a team can only read its projects: ask one of the team's admins for the member role",
    });
    expect((await app.request('DELETE', `/api/v1/projects/${P}`, { token: people.bob.token })).body).toEqual({
      success: false,
      error: "Only the team's admins can delete this project",
    });
  });

  test(
    "a viewer's reader shows no Rename, Delete, tag editing or Share; the project has no Edit or Delete",
    step(rec('vic'), async () => {
      const page = await signIn('vic');
      await page.getByRole('link', { name: 'Crew repo', exact: true }).waitFor();
      expect(await button(page, 'Edit Crew repo').count()).toBe(0);
      expect(await button(page, 'Delete Crew repo').count()).toBe(0);
      for (const id of [1, 2]) {
        await page.goto(reader(id));
        await page.getByRole('heading', { level: 1 }).waitFor();
        await page.getByRole('navigation', { name: 'Table of contents' }).getByRole('link').first().waitFor();
        await openPanel(page);
        for (const name of ['Rename', 'Delete session', 'Share', 'Add tag', `Remove tag ${id === 1 ? 'adas' : 'bobs'}`]) {
          expect({ id, name, count: await button(page, name).count() }).toEqual({ id, name, count: 0 });
        }
        expect(await page.getByLabel('New tag').count()).toBe(0);
        await page.getByText(id === 1 ? 'adas' : 'bobs', { exact: true }).waitFor();
      }
      await clean('vic', 'viewer reader');
    }),
  );

  test(
    'a member sees Rename, Delete, tags and Share on the session they uploaded only; a refusal in the console says why',
    step(rec('bob'), async () => {
      const page = await signIn('bob');
      await page.goto(reader(1));
      await page.getByRole('heading', { name: 'ada.md', level: 1 }).waitFor();
      await page.getByRole('navigation', { name: 'Table of contents' }).getByRole('link').first().waitFor();
      await openPanel(page);
      for (const name of ['Rename', 'Delete session', 'Share', 'Add tag', 'Remove tag adas'])
        expect({ name, count: await button(page, name).count() }).toEqual({ name, count: 0 });

      await page.goto(reader(2));
      await page.getByRole('heading', { name: 'bob.md', level: 1 }).waitFor();
      await openPanel(page);
      for (const name of ['Rename', 'Delete session', 'Share', 'Add tag', 'Remove tag bobs']) await button(page, name).waitFor();
      await clean('bob', 'member reader, own session');

      // Bob is made a viewer while his page is open: the refusal that still comes says why.
      const demoted = await app.request('PATCH', `/api/v1/teams/${teamId}/members/${people.bob.id}`, { token: people.ada.token, body: { role: 'viewer' } });
      expect(demoted.status).toBe(200);
      await button(page, 'Rename').click();
      await page.getByLabel('Title').fill('Renamed by Bob');
      await button(page, 'Save title').click();
      const alert = page.getByRole('alert').filter({ hasText: 'Viewers of a team can only read its projects' });
      await alert.waitFor();
      expect(await alert.innerText()).not.toContain('Insufficient permissions');
      await page.reload();
      await page.getByRole('heading', { name: 'bob.md', level: 1 }).waitFor();
      await openPanel(page);
      expect(await button(page, 'Rename').count()).toBe(0);
      const back = await app.request('PATCH', `/api/v1/teams/${teamId}/members/${people.bob.id}`, { token: people.ada.token, body: { role: 'member' } });
      expect(back.status).toBe(200);
    }),
  );
});

describe('the admin', () => {
  test(
    'project icons are drawn (SVG), never their internal names',
    step(rec('ada'), async () => {
      const page = await signIn('ada');
      const card = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'Crew repo', exact: true }) });
      await card.waitFor();
      expect(await card.locator('.project-icon svg').count()).toBe(1);
      expect(await card.innerText()).not.toMatch(/BarChart3|Code2/);
      await button(page, 'Edit Crew repo').click();
      const dialog = page.getByRole('dialog', { name: 'Edit project' });
      const icon = dialog.getByLabel('Icon');
      expect(await icon.locator('option:checked').innerText()).toBe('Bar chart');
      expect(await dialog.locator('.project-icon svg').count()).toBe(1);
      expect((await icon.locator('option').allInnerTexts()).filter((t) => /\d|[a-z][A-Z]/.test(t))).toEqual([]);
      await clean('ada', 'edit dialog');
      await button(dialog, 'Cancel').click();
    }),
  );

  test(
    'search snippets read as text: no markdown syntax, matches marked',
    step(rec('ada'), async () => {
      const page = people.ada.rec!.page;
      const deadline = Date.now() + 60_000;
      while ((await app.gql(people.ada.token, '{ searchSessions(query: "quokka") { total } }')).body.data.searchSessions.total < 1) {
        if (Date.now() > deadline) throw new Error('never indexed');
        await new Promise((r) => setTimeout(r, 250));
      }
      await page.goto('/search?q=quokka');
      const snippet = page.locator('.result .snippet').first();
      await snippet.waitFor();
      const text = await snippet.innerText();
      expect(text).toMatch(/quokka/i);
      for (const syntax of ['_**', '**', '---', '```', '`', '## ', '# ']) expect({ syntax, found: text.includes(syntax) }).toEqual({ syntax, found: false });
      expect((await snippet.locator('mark').allInnerTexts()).every((m) => /quokka/i.test(m))).toBe(true);
      const served = await app.gql(people.ada.token, '{ searchSessions(query: "quokka") { results { snippet } } }');
      const html = String(served.body.data.searchSessions.results[0].snippet);
      expect({ html, marks: await snippet.locator('mark').count() }).toEqual({ html, marks: html.split('<mark>').length - 1 });
      // Code in it stays code (monospaced), its matches marked inside.
      const code = snippet.locator('code');
      if (text.includes('quokkaCache.get()')) expect(await code.filter({ hasText: 'quokkaCache.get()' }).count()).toBe(1);
      if ((await code.count()) > 0) expect(await code.first().evaluate((e) => (globalThis as any).getComputedStyle(e).fontFamily)).toMatch(/monospace/);
      await clean('ada', 'search');
    }),
  );

  test(
    'a code block in the reader is reachable by keyboard and named',
    step(rec('ada'), async () => {
      const page = people.ada.rec!.page;
      await page.goto(reader(1));
      const pre = page.getByRole('group', { name: 'Code block (ts)' });
      await pre.waitFor();
      expect(await pre.getAttribute('tabindex')).toBe('0');
      await pre.focus();
      expect(await pre.evaluate((e) => e === (globalThis as any).document.activeElement)).toBe(true);
      await clean('ada', 'reader with code');
    }),
  );

  test(
    'the Share dialog of a long session: Show all, Hide all, within the window, its list scrolls',
    step(rec('ada'), async () => {
      const page = people.ada.rec!.page;
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(reader(3));
      await openPanel(page);
      await button(page, 'Share').click();
      const dialog = page.getByRole('dialog', { name: 'Share this session' });
      const boxes = dialog.getByRole('checkbox', { name: /^Show exchange \d+$/ });
      await dialog.getByRole('checkbox', { name: 'Show exchange 60' }).waitFor();
      // 60 turns (and the file's header, where it still counts as an exchange).
      const n = await boxes.count();
      expect(n).toBeGreaterThanOrEqual(60);
      const checked = () => boxes.evaluateAll((els) => els.filter((e) => (e as unknown as { checked: boolean }).checked).length);
      await button(dialog, 'Hide all').click();
      expect(await checked()).toBe(0);
      await dialog.getByText(`0 of ${n} shown`).waitFor();
      await button(dialog, 'Show all').click();
      expect(await checked()).toBe(n);
      const box = (await dialog.boundingBox())!;
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height).toBeLessThanOrEqual(800);
      const list = dialog.locator('.exchange-list');
      expect(await list.evaluate((e) => e.scrollHeight > e.clientHeight && (globalThis as any).getComputedStyle(e).overflowY === 'auto')).toBe(true);
      await dialog.getByRole('checkbox', { name: 'Show exchange 2', exact: true }).uncheck();
      await clean('ada', 'share dialog');
      await button(dialog, 'Create link').click();
      await dialog.getByRole('status').filter({ hasText: /./ }).first().waitFor();
      await dialog.getByLabel('Share link').waitFor();
      await button(dialog, 'Close').click();
    }),
  );

  test('a public link carries Open Graph tags: the display title and the exchange count, nothing of the content; a hostile title stays text', async () => {
    const rename = await app.request('PATCH', `/api/v1/projects/${P}/sessions/${sid(1)}`, { token: people.ada.token, body: { userTitle: HOSTILE_TITLE } });
    expect(rename.status).toBe(200);
    const share = await app.request('POST', `/api/v1/projects/${P}/sessions/${sid(1)}/shares`, { token: people.ada.token, body: {} });
    expect(share.status).toBe(201);
    const token = String(share.body.data.share.url).split('/s/')[1];
    const html = (await app.request('GET', `/s/${token}`)).text;
    const head = html.slice(0, html.indexOf('</head>'));
    const metas = [...head.matchAll(/<meta property="(og:[a-z_]+)" content="([^"]*)" \/>/g)].map((m) => [m[1], m[2]]);
    expect(metas).toEqual([
      ['og:type', 'article'],
      ['og:site_name', 'Session Archive'],
      ['og:title', HOSTILE_TITLE.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')],
      // The title line is the file's header, part of the one exchange.
      ['og:description', '1 exchange'],
    ]);
    expect(head).not.toMatch(/quokka|Plan/i);
    expect(head).not.toContain('<script>window');

    // In the browser: one og:title, exactly the title, and nothing ran.
    const page = people.ada.rec!.page;
    await page.goto(`/s/${token}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    const og = await page.evaluate(() =>
      [...(globalThis as any).document.querySelectorAll('meta[property^="og:"]')].map((m) => [m.getAttribute('property'), m.getAttribute('content')]),
    );
    expect(og).toEqual([
      ['og:type', 'article'],
      ['og:site_name', 'Session Archive'],
      ['og:title', HOSTILE_TITLE],
      ['og:description', '1 exchange'],
    ]);
    expect(await page.evaluate(() => (globalThis as any).__pwned)).toBeUndefined();
  });

  test('the favicon is served (SVG and .ico), same origin, and every console page links it', async () => {
    for (const [path, type] of [
      ['/favicon.svg', /^image\/svg\+xml/],
      ['/favicon.ico', /^image\/(x-icon|vnd\.microsoft\.icon)/],
    ] as const) {
      const r = await app.request('GET', path);
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
      expect(r.headers['content-type']).toMatch(type);
      expect(r.headers['content-security-policy']).toContain("default-src 'self'");
    }
    expect(fs.readFileSync('web/public/favicon.ico').subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
    const page = people.ada.rec!.page;
    await page.goto('/');
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toBe('/favicon.svg');
    expect(people.ada.rec!.requests.filter((u) => u.includes('favicon'))).not.toEqual([]);
  });

  test(
    'Settings → Export downloads the caller’s archive (a tar) and says how much arrived',
    step(rec('ada'), async () => {
      const page = people.ada.rec!.page;
      await page.goto('/');
      await page.getByRole('link', { name: 'Export', exact: true }).click();
      await page.getByRole('heading', { name: 'Export', level: 1 }).waitFor();
      await clean('ada', 'export page');
      const [download] = await Promise.all([page.waitForEvent('download'), button(page, 'Download archive').click()]);
      expect(download.suggestedFilename()).toBe('session-archive-export.tar');
      const tar = fs.readFileSync(await download.path());
      expect(tar.subarray(0, 13).toString()).toBe('manifest.json');
      expect(tar.subarray(257, 262).toString()).toBe('ustar');
      const expected = await app.request('GET', '/api/v1/export', { token: people.ada.token });
      expect(tar.equals(expected.raw)).toBe(true);
      await page
        .getByRole('status')
        .filter({ hasText: /^Saved session-archive-export\.tar \(\d/ })
        .waitFor();
    }),
  );
});

describe('every page passes axe at 1280 and 390 px', () => {
  const PAGES = [
    '/',
    `/projects/${P}`,
    reader(1),
    reader(3),
    '/search?q=quokka',
    '/dashboard',
    '/settings/api-keys',
    '/settings/teams',
    '/settings/shares',
    '/settings/account',
    '/settings/export',
    '/cli-login',
  ];
  for (const width of [1280, 390]) {
    test(
      `at ${width} px`,
      step(rec('ada'), async () => {
        const page = people.ada.rec!.page;
        await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
        for (const path of PAGES) {
          await page.goto(path);
          await page.getByRole('heading', { level: 1 }).first().waitFor();
          expect({ width, path, axe: await seriousAxeViolations(page) }).toEqual({ width, path, axe: [] });
        }
        expect(people.ada.rec!.errors).toEqual([]);
      }),
      300_000,
    );
  }
});
