import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newRecordedPage, step, type Recorded } from '../support/chromium';
import { startTestApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { connectMcp, type McpClient } from '../support/mcp-client';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

/**
 * One display title everywhere: the user's title, else the client's `metadata.title`, else the
 * name. Four sessions (all three set and different; no user title; a name only; a hostile user
 * title) are read through every surface that shows or sends a session's title, and each surface
 * shows the same title (HTML-escaped where the service writes HTML itself):
 *
 * - GraphQL `Session.displayTitle`, `SearchResult.displayTitle`, `Session.related[].title`,
 *   `Query.shares[].sessionTitle`;
 * - REST related sessions (`title`), the share list (`sessionTitle`), a share link's JSON (`title`);
 * - the share link's page: its `<title>`, `og:title` and heading;
 * - MCP `get_session`, `list_sessions`, `search_sessions`, `gather_context`, `related_sessions`;
 * - the console: a project's session list, search results, the reader's heading and tab title,
 *   the Share links page (`/settings/shares`), and the markdown download's file name.
 */

const PASSWORD = 'a long enough passphrase';
const P = 'display-title';
const HOSTILE = '<img src=x onerror=alert(1)>';
const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

interface Case {
  what: string;
  id: string;
  name: string;
  metaTitle?: string;
  userTitle?: string;
  expected: string;
}
const CASES: Case[] = [
  {
    what: 'user title, client title and name all set',
    id: '7d1e0000-aaaa-4bbb-8ccc-000000000001',
    name: 'alpha-upload-name.md',
    metaTitle: 'Alpha client title',
    userTitle: 'Alpha chosen title',
    expected: 'Alpha chosen title',
  },
  {
    what: 'no user title',
    id: '7d1e0000-aaaa-4bbb-8ccc-000000000002',
    name: 'beta-upload-name.md',
    metaTitle: 'Beta client title',
    expected: 'Beta client title',
  },
  { what: 'a name only', id: '7d1e0000-aaaa-4bbb-8ccc-000000000003', name: 'gamma-upload-name.md', expected: 'gamma-upload-name.md' },
  {
    what: 'a hostile user title',
    id: '7d1e0000-aaaa-4bbb-8ccc-000000000004',
    name: 'delta-upload-name.md',
    metaTitle: 'Delta client title',
    userTitle: HOSTILE,
    expected: HOSTILE,
  },
];
/** Sessions on other subjects (another project), so that the four's shared words are distinctive. */
const OTHERS = [
  'The flexbox sidebar collapses on narrow screens; give it flex-shrink 0 and a min-width.',
  'The helm chart fails to render the ingress template; the values file misses ingress.hosts.',
  'The cron job runs twice after daylight saving time; schedule it in UTC.',
  'Gradle caches break after the JDK upgrade; clear the daemon and rebuild.',
];
/** The word every transcript shares (search) and the subject that makes them alike (related). */
const WORD = 'quokkaflux';
const markdownOf = (c: Case) =>
  `_**User**_\n\nWhy does the ${WORD} pipeline drop the websocket reconnect events for ${c.id.slice(-1)}?\n\n---\n\n_**Agent**_\n\nThe ${WORD} reconnect handler debounces websocket events too long; shorten the debounce.\n`;

let app: TestApp;
let token: string;
let email: string;
let mcp: McpClient;
let browser: Browser;
let rec: Recorded | undefined;
const shareTokens = new Map<string, string>();

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  email = `display-title-${process.pid}@example.test`;
  const u = await createUser(operatorCtx(app.deps.db), email, 'Tess Title', { password: PASSWORD, role: 'member' });
  ({ token } = await app.newKey(u));
  for (const c of CASES) {
    await app.upload(token, P, c.id, {
      name: c.name,
      markdown: markdownOf(c),
      projectName: 'Display titles',
      metadata: c.metaTitle ? { title: c.metaTitle } : {},
    });
    if (c.userTitle) {
      const r = await app.request('PATCH', `/api/v1/projects/${P}/sessions/${c.id}`, { token, body: { userTitle: c.userTitle } });
      expect(r.status).toBe(200);
    }
    const s = await app.request('POST', `/api/v1/projects/${P}/sessions/${c.id}/shares`, { token, body: {} });
    expect(s.status).toBe(201);
    shareTokens.set(c.id, new URL(s.body.data.share.url as string).pathname.split('/').pop()!);
  }
  for (const [i, text] of OTHERS.entries())
    await app.upload(token, `${P}-other`, `7d1e0000-bbbb-4bbb-8ccc-00000000000${i}`, { name: `other ${i}`, markdown: `_**User**_\n\n${text}\n` });
  mcp = await connectMcp(`${app.url}/mcp`, token);
  await eventually('the sessions to be searchable', async () => {
    const r = await mcp.call('search_sessions', { query: WORD, limit: 10 });
    return !r.isError && r.structuredContent.results.length === CASES.length;
  });
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await mcp?.close().catch(() => undefined);
  await app?.close();
});

/** `{ surface: title }` for one session: what each surface shows for it. */
type Shown = Record<string, string | undefined>;
const expectEverywhere = (c: Case, shown: Shown) => expect(shown).toEqual(Object.fromEntries(Object.keys(shown).map((surface) => [surface, c.expected])));

const byId = <T extends Record<string, unknown>>(list: T[], key: string, id: string) => list.find((x) => x[key] === id);

describe.each(CASES)('$what', (c) => {
  test('GraphQL: Session.displayTitle, SearchResult.displayTitle, related titles, the share list', async () => {
    const one = await app.gql(token, 'query($p: ID!, $s: ID!) { session(projectId: $p, id: $s) { displayTitle userTitle name metadata { title } } }', {
      p: P,
      s: c.id,
    });
    expect(one.body.errors).toBeUndefined();
    const found = await app.gql(token, `{ searchSessions(query: "${WORD}", limit: 10) { results { id displayTitle } } }`);
    const other = CASES.find((x) => x.id !== c.id)!;
    const related = await app.gql(token, 'query($p: ID!, $s: ID!) { session(projectId: $p, id: $s) { related(limit: 10) { sessionId title } } }', {
      p: P,
      s: other.id,
    });
    const shares = await app.gql(token, '{ shares { sessionId sessionTitle } }');
    expectEverywhere(c, {
      'GraphQL Session.displayTitle': one.body.data.session.displayTitle,
      'GraphQL SearchResult.displayTitle': byId(found.body.data.searchSessions.results, 'id', c.id)?.displayTitle as string,
      'GraphQL Session.related.title': byId(related.body.data.session.related, 'sessionId', c.id)?.title as string,
      'GraphQL Query.shares.sessionTitle': byId(shares.body.data.shares, 'sessionId', c.id)?.sessionTitle as string,
    });
    // The raw fields stay what they are.
    expect(one.body.data.session).toMatchObject({ userTitle: c.userTitle ?? null, name: c.name, metadata: { title: c.metaTitle ?? null } });
  });

  test('REST: related sessions, the share list, a share link’s JSON; session objects keep their exact keys', async () => {
    const other = CASES.find((x) => x.id !== c.id)!;
    const related = await app.request('GET', `/api/v1/projects/${P}/sessions/${other.id}/related?limit=10`, { token });
    const shares = await app.request('GET', '/api/v1/shares', { token });
    const shared = await app.request('GET', `/api/v1/share/${shareTokens.get(c.id)}`);
    expectEverywhere(c, {
      'REST related title': byId(related.body.data.sessions, 'sessionId', c.id)?.title as string,
      'REST share list sessionTitle': byId(shares.body.data.shares, 'sessionId', c.id)?.sessionTitle as string,
      'REST share link title': shared.body.data.title,
    });
    const session = await app.request('GET', `/api/v1/projects/${P}/sessions/${c.id}`, { token, headers: { Accept: 'application/json' } });
    const keys = Object.keys(session.body.data.session ?? session.body.data);
    expect(keys).toEqual(expect.arrayContaining(['name', 'userTitle', 'metadata']));
    expect(keys).not.toContain('displayTitle');
  });

  test('the share link’s page: <title>, og:title (HTML-escaped) and its heading', async () => {
    const page = await app.request('GET', `/s/${shareTokens.get(c.id)}`, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    const esc = escapeHtml(c.expected);
    expect(page.text).toContain(`<title>${esc} · Shared session</title>`);
    expect(page.text).toContain(`<meta property="og:title" content="${esc}" />`);
    if (c.expected === HOSTILE) expect(page.text).not.toContain(HOSTILE);
  });

  test('MCP: get_session, list_sessions, search_sessions, gather_context, related_sessions', async () => {
    const other = CASES.find((x) => x.id !== c.id)!;
    const got = await mcp.call('get_session', { projectId: P, sessionId: c.id });
    const listed = await mcp.call('list_sessions', { projectId: P, limit: 10 });
    const searched = await mcp.call('search_sessions', { query: WORD, limit: 10 });
    const gathered = await mcp.call('gather_context', { question: `the ${WORD} websocket reconnect`, maxSessions: 10 });
    const related = await mcp.call('related_sessions', { projectId: P, sessionId: other.id, limit: 10 });
    expectEverywhere(c, {
      'MCP get_session': got.structuredContent.title,
      'MCP list_sessions': byId(listed.structuredContent.sessions, 'sessionId', c.id)?.title as string,
      'MCP search_sessions': byId(searched.structuredContent.results, 'sessionId', c.id)?.title as string,
      'MCP gather_context': byId(gathered.structuredContent.excerpts, 'sessionId', c.id)?.title as string,
      'MCP related_sessions': byId(related.structuredContent.sessions, 'sessionId', c.id)?.title as string,
    });
  });
});

async function freshPage(): Promise<Page> {
  await rec?.context.close().catch(() => undefined);
  rec = await newRecordedPage(browser, app.url);
  return rec.page;
}

test(
  'the console and the share page in Chromium: every list, heading and tab shows the same title, as text',
  step(
    () => rec!,
    async () => {
      const page = await freshPage();
      await page.goto(`/sign-in?next=${encodeURIComponent(`/projects/${P}`)}`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Display titles' }).waitFor();
      const linkText = async (url: string, scope: string) => {
        await page.goto(url);
        await page.locator(scope).locator(`a[href$="/sessions/${CASES[0].id}"]`).first().waitFor();
        const out = new Map<string, string>();
        for (const c of CASES) out.set(c.id, (await page.locator(scope).locator(`a[href$="/sessions/${c.id}"]`).first().textContent()) ?? '');
        return out;
      };
      const listed = await linkText(`/projects/${P}`, 'main table');
      const searched = await linkText(`/search?q=${WORD}`, '#search-results');
      const shared = await linkText('/settings/shares', 'main');
      for (const c of CASES) {
        await page.goto(`/projects/${P}/sessions/${c.id}`);
        const heading = page.getByRole('heading', { level: 1 });
        await page.locator('#session-title').waitFor();
        await page.getByText('Details, tags and sharing', { exact: true }).click();
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download markdown' }).click()]);
        const visitor = await browser.newContext({ baseURL: app.url });
        const sharePage = await visitor.newPage();
        await sharePage.goto(`/s/${shareTokens.get(c.id)}`);
        await sharePage.locator('#share-title').waitFor();
        expectEverywhere(c, {
          'console project sessions list': listed.get(c.id),
          'console search results': searched.get(c.id),
          'console Share links page': shared.get(c.id),
          'console reader heading': (await heading.textContent()) ?? '',
          'console reader tab title': (await page.title()).replace(/ · Session Archive$/, ''),
          'share page heading': (await sharePage.locator('#share-title').textContent()) ?? '',
          'share page tab title': (await sharePage.title()).replace(/ · Shared session$/, ''),
        });
        await visitor.close();
        // The download is named after the same title (characters a file name cannot hold left out).
        const base = c.expected
          .replace(/[^\p{L}\p{N}._ -]+/gu, '')
          .trim()
          .replace(/\s+/g, '-');
        expect(download.suggestedFilename()).toBe(`${base}.md`);
      }
      // Shown as text, never run.
      expect(await page.evaluate(() => (globalThis as any).document.querySelectorAll('img[src="x"]').length)).toBe(0);
      expect(rec!.errors).toEqual([]);
    },
  ),
  240_000,
);
