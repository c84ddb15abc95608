import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newRecordedPage, seriousAxeViolations, step, type Recorded } from '../support/chromium';
import { startTestApp, type TestApp } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import consoleDocuments from '../../web/src/gql/persisted-documents.json';

/** The id the console sends its search as. */
const SEARCH_SESSIONS_ID = Object.entries(consoleDocuments as Record<string, string>).find(([, text]) => text.startsWith('query SearchSessions('))![0];

/**
 * Console II in real Chromium against the real service, search engine included (docs/console.md):
 * projects (icon, colour, counts, edit, delete with a confirmation naming what is lost), a
 * project's sessions with the session filters and orders in the URL, search as you type (debounced,
 * keyboard, shareable URL, <mark> snippets, links named by display title, matching exchanges) and
 * the dashboard's charts with their text alternatives.
 *
 * A hostile corpus (script, event handlers, javascript:/data: links, SVG, iframes, forms, CSS
 * url(), remote images) is uploaded as project names, session names, titles, tags, client and
 * agent names and markdown: had any of it run, it would set `window.__pwned`, and had any of it
 * loaded, a request to another origin would be recorded. Neither may happen on any page; axe-core
 * finds no serious or critical violation on any page. The steps build on each other, in order.
 */

const PASSWORD = 'a long enough passphrase';
const HOSTILE = [
  '<script>window.__pwned=1</script>',
  '<img src=x onerror="window.__pwned=2">',
  '<a href="javascript:window.__pwned=3">js link</a>',
  '<a href="data:text/html,<script>parent.__pwned=4</script>">data link</a>',
  '<svg onload="window.__pwned=5"><script>window.__pwned=6</script></svg>',
  '<iframe src="javascript:parent.__pwned=7"></iframe>',
  '<form action="https://evil.example/f"><button formaction="javascript:window.__pwned=8">go</button></form>',
  '<div style="background:url(https://evil.example/css.png)">css</div>',
  '<img src="https://evil.example/remote.png">',
  '"><img src=x onerror=window.__pwned=9>',
  '<style>@import url(https://evil.example/x.css);</style>',
  '<math><mtext><table><mglyph><style><img src=x onerror=window.__pwned=10>',
];

let app: TestApp;
let browser: Browser;
let rec: Recorded;
let page: Page;
let token: string;
let email: string;

const sid = (n: number) => `aaaaaaaa-0000-4000-8000-${String(n).padStart(12, '0')}`;

async function put(projectId: string, id: string, body: Record<string, unknown>) {
  const r = await app.request('PUT', `/api/v1/projects/${projectId}/sessions/${id}`, { token, body: { rawData: '{}', ...body } });
  expect([200, 201]).toContain(r.status);
}

/** Until every listed word is findable (the index applies its outbox within a second or so). */
async function untilSearchable(words: Record<string, number>) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    let ok = true;
    for (const [q, n] of Object.entries(words)) {
      const r = await app.gql(token, 'query($q: String!) { searchSessions(query: $q) { total } }', { q });
      if (r.body.data?.searchSessions?.total !== n) ok = false;
    }
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`search never caught up with ${JSON.stringify(words)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_REST_PER_HOUR: '100000', RATE_LIMIT_GRAPHQL_PER_HOUR: '100000' } });
  email = `browse-${process.pid}-${Date.now()}@example.test`;
  const user = await createUser(operatorCtx(app.deps.db), email, 'Browser', { password: PASSWORD, role: 'member' });
  ({ token } = await app.newKey(user));

  // Two ordinary projects (one to edit, one to delete) and one per hostile name.
  for (const [id, name, icon, color] of [
    ['web-app', 'Web app', 'Rocket', 'emerald'],
    ['old-stuff', 'Old stuff', 'Folder', 'gray'],
  ]) {
    const r = await app.request('POST', '/api/v1/projects', { token, body: { id, name, icon, color } });
    expect(r.status).toBe(201);
  }
  for (let i = 0; i < HOSTILE.length; i++) {
    const r = await app.request('POST', '/api/v1/projects', { token, body: { id: `hostile-${i}`, name: HOSTILE[i] } });
    expect(r.status).toBe(201);
    await put(`hostile-${i}`, sid(100 + i), {
      name: HOSTILE[i],
      markdown: `# zebra ${HOSTILE[i]}\n\n_**User**_\n\nzebra ${HOSTILE[i]} again\n`,
      metadata: {
        title: i % 2 ? HOSTILE[i] : undefined,
        tags: [HOSTILE[i], 'hostile'],
        llmModels: [HOSTILE[(i + 1) % HOSTILE.length]],
        clientName: HOSTILE[(i + 2) % HOSTILE.length],
        agentName: HOSTILE[(i + 3) % HOSTILE.length],
        gitBranches: [HOSTILE[(i + 4) % HOSTILE.length]],
      },
    });
  }
  // web-app: sessions that differ by model, tag, branch, client, agent, device and dates.
  const day = (d: number) => new Date(Date.UTC(2026, 0, d, 12)).toISOString();
  await put('web-app', sid(1), {
    name: 'alpha-session.md',
    markdown:
      '# Alpha\n\n_**User**_\n\nhow do I configure the quokka cache?\n\n_**Agent (claude-sonnet)**_\n\nSet quokka.size.\n\n_**User**_\n\nand the quokka eviction?\n\n_**Agent (claude-sonnet)**_\n\nUse LRU.\n',
    startedAt: day(3),
    endedAt: day(3),
    metadata: {
      llmModels: ['claude-sonnet'],
      tags: ['cache'],
      gitBranches: ['main'],
      clientName: 'specstory-cli',
      agentName: 'claude-code',
      deviceId: 'laptop-1',
    },
  });
  await put('web-app', sid(2), {
    name: 'beta-session.md',
    markdown: '# Beta\n\n_**User**_\n\nwrite the quokka migration\n',
    startedAt: day(1),
    endedAt: day(1),
    metadata: {
      llmModels: ['gpt-5'],
      tags: ['db'],
      gitBranches: ['feat/db'],
      clientName: 'cursor',
      agentName: 'cursor-agent',
      deviceId: 'desktop-2',
      title: 'Beta by title',
    },
  });
  await put('web-app', sid(3), {
    name: 'gamma-session.md',
    markdown: '# Gamma\n\nnothing about the animal\n',
    startedAt: day(2),
    endedAt: day(2),
    metadata: {
      llmModels: ['claude-sonnet'],
      tags: ['db', 'cache'],
      gitBranches: ['main'],
      clientName: 'specstory-cli',
      agentName: 'claude-code',
      deviceId: 'laptop-1',
    },
  });
  // A large session (indexed as fragments): 80 exchanges of ~1.2 KB, a rare word in the 42nd and
  // the 77th, each exchange bigger than one line of filler so fragments and exchanges do not align.
  const filler = 'The build passed and the cache was warm; nothing else changed in this step. '.repeat(16);
  const exchanges = Array.from({ length: 80 }, (_, i) => {
    const n = i + 1;
    const rare = n === 42 || n === 77 ? ' the narwhal appears here.' : '';
    return `_**User (2026-01-0${1 + (i % 9)} 10:00Z)**_\n\nQuestion ${n}: ${filler}${rare}\n\n---\n\n_**Agent (claude-sonnet)**_\n\nAnswer ${n}. ${filler}\n\n---\n\n`;
  });
  await put('big', sid(9), { name: 'large-session.md', markdown: `# Large\n\n${exchanges.join('')}` });
  await put('old-stuff', sid(50), { name: 'old.md', markdown: '# old\n' });
  await put('old-stuff', sid(51), { name: 'older.md', markdown: '# older\n' });
  await untilSearchable({ zebra: HOSTILE.length, quokka: 2, narwhal: 1 });

  browser = await launchBrowser();
  rec = await newRecordedPage(browser, app.url);
  page = rec.page;
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
}, 180_000);

afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

/** Nothing ran, nothing left the origin, no page error or CSP violation, axe is content. */
async function clean(label: string) {
  expect({ label, pwned: await page.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned ?? null) }).toEqual({ label, pwned: null });
  expect({ label, foreign: rec.requests.filter((u) => new URL(u).origin !== app.url) }).toEqual({ label, foreign: [] });
  expect({ label, errors: rec.errors }).toEqual({ label, errors: [] });
  expect({ label, axe: await seriousAxeViolations(page) }).toEqual({ label, axe: [] });
}

const heading = (name: string | RegExp) => page.getByRole('heading', { name, level: 1 });

/** Retries `read` until it equals `expected` (10 s), then asserts once more (a readable diff). */
async function poll<T>(read: () => Promise<T>, expected: unknown) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const got = await read();
    if (Date.now() > deadline || JSON.stringify(got) === JSON.stringify(expected)) {
      expect(got).toEqual(expected);
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("matching exchanges carry the reader's exchange number, for sessions indexed whole and in fragments", async () => {
  const q = `query($q: String!) { searchSessions(query: $q) { results { sessionId matchingExchanges { exchange start content } } } }`;
  const large = (await app.gql(token, q, { q: 'narwhal' })).body.data.searchSessions.results[0];
  expect(large.sessionId).toBe(sid(9));
  expect(large.matchingExchanges.map((m: { exchange: number }) => m.exchange)).toEqual([42, 77]);
  // The reader numbers them the same way: exchange 42 (the 42nd user turn; the `# Large` line opens exchange 1) holds the word.
  const page = await app.gql(token, `{ session(projectId: "big", id: "${sid(9)}") { exchanges(offset: 41, limit: 1) { exchanges { number markdown } } } }`);
  expect(page.body.errors).toBeUndefined();
  expect(page.body.data.session.exchanges.exchanges[0]).toMatchObject({ number: 42 });
  expect(page.body.data.session.exchanges.exchanges[0].markdown).toContain('narwhal');
  for (const m of large.matchingExchanges) expect(m.start).toBeGreaterThan(0);

  const small = (await app.gql(token, q, { q: 'eviction' })).body.data.searchSessions.results[0];
  expect(small.sessionId).toBe(sid(1));
  // alpha: "# Alpha" opens exchange 1, the first user turn; the second (with "eviction") is 2.
  expect(small.matchingExchanges.map((m: { exchange: number }) => m.exchange)).toEqual([2]);
});

test('sessionFacets: the values of each list filter with counts, per project or over all, validated', async () => {
  const F =
    'query($p: ID, $l: Int) { sessionFacets(projectId: $p, limit: $l) { llmModels { value count } tags { value count } gitBranches { value count } clientNames { value count } agentNames { value count } deviceIds { value count } } }';
  const web = (await app.gql(token, F, { p: 'web-app' })).body.data.sessionFacets;
  expect(web).toEqual({
    llmModels: [
      { value: 'claude-sonnet', count: 2 },
      { value: 'gpt-5', count: 1 },
    ],
    tags: [
      { value: 'cache', count: 2 },
      { value: 'db', count: 2 },
    ],
    gitBranches: [
      { value: 'main', count: 2 },
      { value: 'feat/db', count: 1 },
    ],
    clientNames: [
      { value: 'specstory-cli', count: 2 },
      { value: 'cursor', count: 1 },
    ],
    agentNames: [
      { value: 'claude-code', count: 2 },
      { value: 'cursor-agent', count: 1 },
    ],
    deviceIds: [
      { value: 'laptop-1', count: 2 },
      { value: 'desktop-2', count: 1 },
    ],
  });
  const all = (await app.gql(token, F, { l: 1 })).body.data.sessionFacets;
  expect(all.tags).toEqual([{ value: 'hostile', count: HOSTILE.length }]);
  expect(all.llmModels).toEqual([{ value: 'claude-sonnet', count: 2 }]);
  expect((await app.gql(token, F, { l: 0 })).body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  expect((await app.gql(token, F, { l: 201 })).body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  expect((await app.gql(token, F, { p: 'no-such-project' })).body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', projectId: 'no-such-project' });
  const stranger = await app.createUser('stranger');
  const theirs = await app.request('POST', '/api/v1/projects', { token: stranger.token, body: { id: 'strangers', name: 'Theirs' } });
  expect(theirs.status).toBe(201);
  expect((await app.gql(token, F, { p: 'strangers' })).body.errors[0].extensions.code).toBe('FORBIDDEN');
  // Someone else's sessions never count.
  await app.request('PUT', `/api/v1/projects/strangers/sessions/${sid(999)}`, {
    token: stranger.token,
    body: { name: 'x', markdown: 'x', rawData: '{}', metadata: { llmModels: ['claude-sonnet'] } },
  });
  expect((await app.gql(token, F, { l: 1 })).body.data.sessionFacets.llmModels).toEqual([{ value: 'claude-sonnet', count: 2 }]);
});

test(
  'projects: icon, colour, session count, last activity; hostile names are text',
  step(
    () => rec,
    async () => {
      const list = page.getByRole('list', { name: 'Projects' });
      const item = (name: string) => list.getByRole('listitem').filter({ has: page.getByRole('link', { name, exact: true }) });
      await item('Web app').waitFor();
      const web = await item('Web app').innerText();
      expect(web).toContain('3 sessions');
      expect(web).toContain('last activity');
      // The icon is drawn (inline SVG on its colour), never named by its internal name.
      expect(await item('Web app').locator('.project-icon.color-emerald svg').count()).toBe(1);
      expect(web).not.toMatch(/Rocket|emerald/);
      expect(await item('Old stuff').innerText()).toContain('2 sessions');
      for (const name of HOSTILE) await item(name).waitFor();
      // Most recent activity first: the old-stuff sessions were uploaded last.
      const names = await list.getByRole('heading', { level: 2 }).allInnerTexts();
      expect(names[0]).toBe('Old stuff');
      await clean('projects');
    },
  ),
);

test(
  'projects: edit name, icon and colour',
  step(
    () => rec,
    async () => {
      await page.getByRole('button', { name: 'Edit Web app' }).click();
      const dialog = page.getByRole('dialog', { name: 'Edit project' });
      await dialog.getByLabel('Project name').fill('Web app (renamed)');
      await dialog.getByLabel('Icon').selectOption('Bug');
      await dialog.getByLabel('Colour').selectOption('purple');
      await clean('edit dialog');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved project Web app (renamed).' }).waitFor();
      const item = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'Web app (renamed)', exact: true }) });
      expect(await item.locator('.project-icon.color-purple svg.lucide-bug').count()).toBe(1);
      const r = await app.gql(token, '{ project(id: "web-app") { name icon color } }');
      expect(r.body.data.project).toEqual({ name: 'Web app (renamed)', icon: 'Bug', color: 'purple' });
    },
  ),
);

test(
  'projects: delete asks for a confirmation that names the project and its sessions',
  step(
    () => rec,
    async () => {
      await page.getByRole('button', { name: 'Delete Old stuff' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete project Old stuff and its 2 sessions?' });
      await dialog.waitFor();
      await clean('delete dialog');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect((await app.gql(token, '{ project(id: "old-stuff") { sessionCount } }')).body.data.project.sessionCount).toBe(2);
      await page.getByRole('button', { name: 'Delete Old stuff' }).click();
      await dialog.getByRole('button', { name: 'Delete project' }).click();
      await page.getByRole('status').filter({ hasText: 'Deleted project Old stuff and 2 sessions.' }).waitFor();
      expect(await page.getByRole('link', { name: 'Old stuff', exact: true }).count()).toBe(0);
      expect((await app.gql(token, '{ project(id: "old-stuff") { id } }')).body.errors[0].extensions.code).toBe('NOT_FOUND');
    },
  ),
);

/** The checkbox of one value of a list filter (a group named by the filter). */
const choice = (filter: string, value: string) => page.getByRole('group', { name: filter, exact: true }).getByRole('checkbox', { name: value, exact: true });

const sessionLinks = () => page.getByRole('table', { name: 'Sessions' }).getByRole('link').allInnerTexts();

test(
  "a project's sessions: filters and orders, in the URL, rows named by display title",
  step(
    () => rec,
    async () => {
      await page.getByRole('link', { name: 'Web app (renamed)', exact: true }).click();
      await heading('Web app (renamed)').waitFor();
      await page.getByRole('table', { name: 'Sessions' }).waitFor();
      // Display title: metadata.title wins over the name.
      expect(new Set(await sessionLinks())).toEqual(new Set(['alpha-session.md', 'Beta by title', 'gamma-session.md']));
      await clean('sessions');

      await page.getByLabel('Order').selectOption({ label: 'Name, A to Z' });
      await page.waitForURL(/order=NAME_ASC/);
      await poll(sessionLinks, ['alpha-session.md', 'Beta by title', 'gamma-session.md']);
      await page.getByLabel('Order').selectOption({ label: 'Started, oldest first' });
      await poll(sessionLinks, ['Beta by title', 'gamma-session.md', 'alpha-session.md']);

      // List filters: one checkbox per value, named by the value; a session matches any checked value.
      await choice('Model', 'claude-sonnet').check();
      await poll(sessionLinks, ['gamma-session.md', 'alpha-session.md']);
      await choice('Model', 'gpt-5').check();
      await poll(sessionLinks, ['Beta by title', 'gamma-session.md', 'alpha-session.md']);
      expect(new URL(page.url()).searchParams.getAll('model')).toEqual(['claude-sonnet', 'gpt-5']);
      await choice('Model', 'claude-sonnet').uncheck();
      await poll(sessionLinks, ['Beta by title']);
      expect(new URL(page.url()).searchParams.getAll('model')).toEqual(['gpt-5']);
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await poll(sessionLinks, ['Beta by title', 'gamma-session.md', 'alpha-session.md']);
      // AND across filters, any-of within one: models claude-sonnet or gpt-5, tag db.
      await choice('Model', 'claude-sonnet').check();
      await choice('Model', 'gpt-5').check();
      await choice('Tag', 'db').check();
      await poll(sessionLinks, ['Beta by title', 'gamma-session.md']);
      expect(new URL(page.url()).searchParams.getAll('tag')).toEqual(['db']);
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await poll(sessionLinks, ['Beta by title', 'gamma-session.md', 'alpha-session.md']);

      for (const [label, param, values, expected] of [
        ['Branch', 'branch', ['feat/db'], ['Beta by title']],
        ['Branch', 'branch', ['feat/db', 'main'], ['Beta by title', 'gamma-session.md', 'alpha-session.md']],
        ['Client', 'client', ['cursor'], ['Beta by title']],
        ['Client', 'client', ['cursor', 'specstory-cli'], ['Beta by title', 'gamma-session.md', 'alpha-session.md']],
        ['Agent', 'agent', ['claude-code'], ['gamma-session.md', 'alpha-session.md']],
        ['Agent', 'agent', ['claude-code', 'cursor-agent'], ['Beta by title', 'gamma-session.md', 'alpha-session.md']],
        ['Device', 'device', ['desktop-2'], ['Beta by title']],
        ['Device', 'device', ['desktop-2', 'laptop-1'], ['Beta by title', 'gamma-session.md', 'alpha-session.md']],
      ] as const) {
        for (const v of values) await choice(label, v).check();
        await poll(sessionLinks, expected);
        expect(new URL(page.url()).searchParams.getAll(param)).toEqual(values);
        await page.getByRole('button', { name: 'Clear filters' }).click();
        await poll(async () => (await choice(label, values[0]).isChecked()) || new URL(page.url()).searchParams.has(param), false);
      }
      // Uploaded (createdAt) date range: all three were uploaded today; a range in the past matches none.
      await page.getByLabel('Created until').fill('2020-01-01');
      await page.getByRole('status').filter({ hasText: 'No sessions match these filters.' }).waitFor();
      await page.getByRole('button', { name: 'Clear filters' }).click();

      // The URL is the state: a shared link opens the same view.
      await page.goto('/projects/web-app?model=gpt-5&order=NAME_ASC');
      await poll(sessionLinks, ['Beta by title']);
      expect(await choice('Model', 'gpt-5').isChecked()).toBe(true);
      expect(await choice('Model', 'claude-sonnet').isChecked()).toBe(false);
      await page.goto('/projects/web-app?branch=main&branch=feat%2Fdb&tag=cache&order=NAME_ASC');
      await poll(sessionLinks, ['alpha-session.md', 'gamma-session.md']);
      for (const [label, value] of [
        ['Branch', 'main'],
        ['Branch', 'feat/db'],
        ['Tag', 'cache'],
      ] as const)
        expect(await choice(label, value).isChecked()).toBe(true);
      expect(await choice('Tag', 'db').isChecked()).toBe(false);
      // A value in the URL that no session has is still shown, checked, and can be unchecked (then,
      // offered by no session, it is gone from the list).
      await page.goto('/projects/web-app?tag=no-such-tag');
      await page.getByRole('status').filter({ hasText: 'No sessions match these filters.' }).waitFor();
      expect(await choice('Tag', 'no-such-tag').isChecked()).toBe(true);
      await choice('Tag', 'no-such-tag').click();
      await poll(async () => (await sessionLinks()).length, 3);
      expect(await choice('Tag', 'no-such-tag').count()).toBe(0);
      expect(new URL(page.url()).searchParams.has('tag')).toBe(false);
      await page.goto('/projects/web-app?model=gpt-5&order=NAME_ASC');
      await poll(sessionLinks, ['Beta by title']);
      await clean('sessions filtered');
      expect(await page.getByRole('link', { name: 'Beta by title' }).getAttribute('href')).toBe(`/projects/web-app/sessions/${sid(2)}`);

      // Hostile names, tags and facet values (model, client, agent…) are text.
      await page.goto('/projects/hostile-1');
      await page.getByRole('table', { name: 'Sessions' }).getByRole('link', { name: HOSTILE[1], exact: true }).waitFor();
      expect(await page.getByRole('table', { name: 'Sessions' }).getByRole('listitem').filter({ hasText: HOSTILE[1] }).count()).toBe(1);
      await clean('hostile sessions');
    },
  ),
);

const resultLinks = () => page.getByRole('list', { name: 'Search results' }).getByRole('heading', { level: 2 }).allInnerTexts();

test(
  'search as you type: marked snippets, keyboard, shareable URL, exchanges',
  step(
    () => rec,
    async () => {
      await page.getByRole('navigation').getByRole('link', { name: 'Search', exact: true }).click();
      await heading('Search').waitFor();
      const box = page.getByRole('searchbox', { name: 'Search sessions' });
      await box.pressSequentially('quokka', { delay: 20 });
      await poll(async () => (await resultLinks()).sort(), ['Beta by title', 'alpha-session.md']);
      await page.waitForURL(/\/search\?q=quokka$/);
      await page.getByRole('status').filter({ hasText: '2 sessions match.' }).waitFor();
      // Snippets: matches in <mark>, everything else text.
      const marks = await page.locator('.snippet mark').allInnerTexts();
      expect(marks.length).toBeGreaterThan(0);
      for (const m of marks) expect(m.toLowerCase()).toBe('quokka');
      // Matching exchanges open the reader at that exchange (1-based, as the reader numbers them).
      const alpha = page.getByRole('list', { name: 'Matching exchanges in alpha-session.md' });
      const exchangeHrefs = await alpha.getByRole('link').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
      expect(exchangeHrefs.length).toBeGreaterThan(0);
      for (const href of exchangeHrefs) expect(href).toMatch(new RegExp(`^/projects/web-app/sessions/${sid(1)}#exchange-[0-9]+$`));
      await clean('search');

      // Keyboard: ↓ from the box to the first result, ↓ again to the next link, ↑ back, Enter opens.
      await box.focus();
      await page.keyboard.press('ArrowDown');
      const first = await page.evaluate(() => (globalThis as any).document.activeElement?.textContent);
      expect(['alpha-session.md', 'Beta by title']).toContain(first);
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowUp');
      expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe(first);
      await page.keyboard.press('ArrowUp');
      expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('search-box');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/projects\/web-app\/sessions\//);
      await page.goBack();
      await poll(async () => (await resultLinks()).length, 2);

      // Typing more narrows (a quoted phrase is required exactly); the older answer never
      // overwrites the newer one.
      await box.fill('"quokka eviction"');
      await poll(resultLinks, ['alpha-session.md']);
      await page.waitForURL(/q=%22quokka\+eviction%22/);

      // Shareable: query and filters in the URL.
      await page.goto('/search?q=quokka&model=gpt-5');
      await poll(resultLinks, ['Beta by title']);
      expect(await box.inputValue()).toBe('quokka');
      expect(await choice('Model', 'gpt-5').isChecked()).toBe(true);
      // Several values of one filter: any of them.
      await choice('Model', 'claude-sonnet').check();
      await poll(async () => (await resultLinks()).sort(), ['Beta by title', 'alpha-session.md']);
      expect(new URL(page.url()).searchParams.getAll('model')).toEqual(['gpt-5', 'claude-sonnet']);
      await choice('Tag', 'cache').check();
      await poll(resultLinks, ['alpha-session.md']);
      await page.goto('/search?q=quokka&client=cursor&client=specstory-cli&device=desktop-2');
      await poll(resultLinks, ['Beta by title']);
      expect(await choice('Client', 'specstory-cli').isChecked()).toBe(true);

      // Hostile snippets, names, titles and facet values: text, with only <mark> kept.
      await page.goto('/search?q=zebra');
      await poll(async () => (await resultLinks()).length, HOSTILE.length);
      for (let i = 0; i < HOSTILE.length; i++) expect(await resultLinks()).toContain(HOSTILE[i]);
      expect(await page.locator('.results script, .results img, .results iframe, .results svg, .results form, .results style').count()).toBe(0);
      expect(await page.locator('.snippet').first().innerText()).toMatch(/zebra/i);
      await clean('search hostile');
    },
  ),
);

test('search waits for a pause in typing: six keystrokes, one request (page clock paused)', async () => {
  const other = await newRecordedPage(browser, app.url);
  try {
    const p = other.page;
    const searches: string[] = [];
    p.on('request', (req) => {
      const body = req.postData() ?? '';
      // The console sends its documents by id (trusted documents).
      if (body.includes(SEARCH_SESSIONS_ID)) searches.push(JSON.parse(body).variables.query);
    });
    await p.clock.install();
    await p.goto('/sign-in?next=/search');
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Sign in' }).click();
    const box = p.getByRole('searchbox', { name: 'Search sessions' });
    await box.waitFor();
    await p.clock.pauseAt(Date.now() + 60_000);
    await box.pressSequentially('quokka');
    await p.clock.runFor(100);
    expect(searches).toEqual([]);
    await p.clock.runFor(200);
    await p.clock.resume();
    await p.getByRole('list', { name: 'Search results' }).waitFor();
    expect(searches).toEqual(['quokka']);
    expect(other.errors).toEqual([]);
  } finally {
    await other.context.close();
  }
});

test(
  'dashboard: stats and analytics as charts with text alternatives',
  step(
    () => rec,
    async () => {
      await page.getByRole('navigation').getByRole('link', { name: 'Dashboard', exact: true }).click();
      await heading('Dashboard').waitFor();
      const totals = page.getByRole('definition');
      await totals.first().waitFor();
      expect(await page.getByText('Sessions this week').count()).toBe(1);
      for (const title of [
        'Sessions per day, last 30 days',
        'Top models',
        'Clients, last 30 days',
        'Markdown size by model, last 30 days',
        'Average session size by client, last 30 days',
      ]) {
        const fig = page.getByRole('figure', { name: title });
        await fig.waitFor();
        // The canvas is an image named by a summary of its figures.
        const img = fig.getByRole('img');
        expect(await img.getAttribute('aria-label')).toMatch(new RegExp(`^${title.replace(/[()]/g, '\\$&')}: `));
        // The same figures as a table.
        await fig.getByText(`${title} as a table`).click();
        await fig.getByRole('table').waitFor();
        expect(await fig.getByRole('row').count()).toBeGreaterThan(1);
      }
      const models = page.getByRole('figure', { name: 'Top models' }).getByRole('table');
      expect(await models.getByRole('row', { name: 'claude-sonnet 2' }).count()).toBe(1);
      // Hostile model names are table text.
      const sizes = page.getByRole('figure', { name: 'Markdown size by model, last 30 days' }).getByRole('table');
      expect(await sizes.getByRole('rowheader', { name: HOSTILE[0], exact: true }).count()).toBe(1);
      await clean('dashboard');
    },
  ),
);

test('search pages: the first asks for the total, "More results" pages keep it and ask for none; exchanges marked as matched', async () => {
  const r = await app.request('POST', '/api/v1/projects', { token, body: { id: 'many', name: 'Many' } });
  expect(r.status).toBe(201);
  for (let i = 0; i < 23; i++) {
    // Two matching exchanges in fragments of their own (a fragment holds ~1,500 characters), far
    // enough apart that the result's snippet holds one of them at most.
    const answer = 'The keeper checked the enclosure twice and wrote down what she saw in the log book. '.repeat(20);
    const markdown = `# Pangolin ${i}\n\n_**User**_\n\nwhere does the pangolin sleep? (${i})\n\n---\n\n_**Agent (claude-sonnet)**_\n\n${answer}\n\n---\n\n_**User**_\n\ndoes a pangolin sleep in trees?\n`;
    await put('many', sid(200 + i), { name: `pangolin-${i}.md`, markdown });
  }
  await untilSearchable({ pangolin: 23 });
  const other = await newRecordedPage(browser, app.url);
  try {
    const p = other.page;
    const asked: { offset: number; withTotal: boolean }[] = [];
    p.on('request', (req) => {
      const body = req.postData() ?? '';
      if (body.includes(SEARCH_SESSIONS_ID)) asked.push(JSON.parse(body).variables);
    });
    await p.goto('/sign-in?next=/search');
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('searchbox', { name: 'Search sessions' }).waitFor();
    await p.goto('/search?q=sleeping%20pangolin');
    const results = p.getByRole('list', { name: 'Search results' }).getByRole('heading', { level: 2 });
    await p.getByRole('status').filter({ hasText: '23 sessions match.' }).waitFor();
    expect(await results.count()).toBe(20);
    // A matching exchange's excerpt marks what the search matched: `sleep` for `sleeping`. An
    // excerpt that repeats the result's snippet is left out, its link kept.
    const exchanges = p.getByRole('list', { name: /^Matching exchanges in pangolin-/ }).first();
    expect(await exchanges.getByRole('link').allInnerTexts()).toEqual(expect.arrayContaining(['Exchange 1', 'Exchange 2']));
    const items = await exchanges.getByRole('listitem').allInnerTexts();
    expect(items.filter((t) => /^Exchange \d+$/.test(t.trim()))).toHaveLength(1);
    expect(items.filter((t) => /^Exchange \d+: .*pangolin sleep/.test(t.trim()))).toHaveLength(1);
    const marks = await exchanges.locator('mark').allInnerTexts();
    expect(new Set(marks.map((m) => m.toLowerCase()))).toEqual(new Set(['pangolin', 'sleep']));
    await p.getByRole('button', { name: 'More results' }).click();
    await p.waitForFunction(() => (globalThis as any).document.querySelectorAll('ol[aria-label="Search results"] h2').length === 23);
    // The count stays, and there is nothing more to ask for.
    expect(await p.getByRole('status').innerText()).toContain('23 sessions match.');
    expect(await p.getByRole('button', { name: 'More results' }).count()).toBe(0);
    expect(asked.map(({ offset, withTotal }) => ({ offset, withTotal }))).toEqual([
      { offset: 0, withTotal: true },
      { offset: 20, withTotal: false },
    ]);
    expect(new Set((await results.allInnerTexts()).map((t) => t.replace(/^pangolin-(\d+)\.md$/, '$1'))).size).toBe(23);
    expect(other.errors).toEqual([]);
  } finally {
    await other.context.close();
  }
});
