import crypto from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, newRecordedPage, seriousAxeViolations, step, type Recorded } from '../support/chromium';
import { SID, startTestApp, type TestApp, type TestResponse } from '../support/app';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

/*
 * The public page of a share link (/s/<token>) in real Chromium: title, details and exchanges,
 * hidden exchanges as placeholders and absent from every byte of the page, later exchanges paged
 * in through the JSON API, hostile markdown and titles that must run nothing and open no dialog,
 * the share headers, no cookie set or sent, nothing requested from another origin, axe-core clean,
 * one 404 page for every dead link, and a signed-in link's round trip through the sign-in page.
 */

const PASSWORD = 'a long enough passphrase';
const P = 'share-page';
const HIDDEN_MARK = 'HIDDEN-EXCHANGE-MARKER-k3v';
const HOSTILE_TITLE = `</script><script>window.__pwned='title'</script><!-- <img src=x onerror="window.__pwned='title-img'">`;

const NORMAL_MD = [
  '# Fixing the login flow\n\n',
  '_**User**_\n\nWhy does login fail?\n\n_**Agent (model claude-sonnet-4)**_\n\nThe **session token** expired. See [the docs](https://example.com/docs).\n\n',
  `_**User**_\n\n${HIDDEN_MARK} private question\n\n_**Agent**_\n\n${HIDDEN_MARK} private answer\n\n`,
  '_**User**_\n\nNow fix it\n\n_**Agent**_\n\nDone: the client refreshes one minute early.\n\n| step | result |\n| --- | --- |\n| refresh | ok |\n',
].join('');

const HOSTILE_MD = [
  `# <script>window.__pwned='h1'</script> Hostile\n\n`,
  `_**User**_\n\n<script>window.__pwned = 'script'</script>\n\n`,
  `<img src="https://evil.example/x.png" onerror="window.__pwned='img'">\n\n`,
  `<svg onload="window.__pwned='svg'"><circle r="1"/></svg> <svg><script>window.__pwned='svg-script'</script></svg>\n\n`,
  `<iframe src="javascript:window.top.__pwned='iframe'"></iframe>\n\n`,
  `<a href="javascript:window.__pwned='js-link'">js link</a> and <a href="data:text/html,<script>alert(1)</script>">data link</a>\n\n`,
  `[md js link](javascript:window.__pwned='mdlink') [md alert link](javascript:alert(1)) and [md data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)\n\n`,
  `![remote image](https://evil.example/pixel.png)\n\n`,
  `<p onclick="window.__pwned='click'" onmouseover="alert('hover')">hover me</p>\n\n`,
  `<details open ontoggle="alert('toggle')"><summary>tool output</summary>inside details</details>\n\n`,
  `<link rel="stylesheet" href="https://evil.example/s.css"><meta http-equiv="refresh" content="0;url=https://evil.example/"><base href="https://evil.example/">\n\n`,
  `<math><mtext><table><mglyph><style><img src=x onerror="window.__pwned='mxss'">\n\n`,
].join('');

/** ~3 MB in 30 exchanges of ~100 KB: more than the page embeds, so later ones are paged in. */
function largeMarkdown(): string {
  const para = 'The reconnect loop waits with exponential backoff before it tries the websocket again.\n\n';
  const out = ['# A large shared session\n\n'];
  for (let i = 1; i <= 30; i++) out.push(`_**User**_\n\nQuestion ${i} about the backoff\n\n_**Agent**_\n\n${para.repeat(1150)}`);
  return out.join('');
}

let app: TestApp;
let browser: Browser;
let rec: Recorded | undefined;
let apiToken: string;
const visitor = { email: '', password: PASSWORD };
const links: Record<'normal' | 'hostile' | 'large' | 'signedIn', string> = {
  normal: '',
  hostile: '',
  large: '',
  signedIn: '',
};

interface ShareBody {
  data: { share: { id: string; url: string } };
}
interface BootBody {
  page: {
    exchangeCount: number;
    nextFrom: number | null;
    exchanges: unknown[];
  };
}
/** The DOM as seen from page.evaluate (this file is compiled without the DOM library). */
interface El {
  tagName: string;
  attributes: ArrayLike<{ name: string }>;
  hasAttribute(name: string): boolean;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): ArrayLike<El>;
}

const tokenOf = (url: string) => url.slice(url.lastIndexOf('/s/') + 3);
const pwned = (page: Page) => page.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned);

beforeAll(async () => {
  app = await startTestApp({
    env: {
      WORKERS_ENABLED: 'false',
      SHARE_READS_PER_MINUTE: '100000',
      RATE_LIMIT_REST_PER_HOUR: '100000',
    },
  });
  browser = await launchBrowser();
  const stamp = `${process.pid}-${Date.now()}`;
  const owner = await createUser(operatorCtx(app.deps.db), `share-owner-${stamp}@example.test`, 'Owner', { password: PASSWORD, role: 'member' });
  visitor.email = `share-visitor-${stamp}@example.test`;
  await createUser(operatorCtx(app.deps.db), visitor.email, 'Visitor', {
    password: PASSWORD,
    role: 'member',
  });
  ({ token: apiToken } = await app.newKey(owner));
  const put = async (n: number, name: string, markdown: string) => {
    const r = await app.request('PUT', `/api/v1/projects/${P}/sessions/${SID(n)}`, {
      token: apiToken,
      body: {
        name,
        markdown,
        rawData: '{"raw":"RAW-ONLY-MARKER"}',
        metadata: { llmModels: ['claude-sonnet-4'], tags: ['TAG-MARKER'] },
      },
    });
    expect([200, 201]).toContain(r.status);
  };
  const share = async (n: number, body: Record<string, unknown> = {}) => {
    const r = await app.request('POST', `/api/v1/projects/${P}/sessions/${SID(n)}/shares`, { token: apiToken, body });
    expect(r.status).toBe(201);
    return tokenOf((r.body as ShareBody).data.share.url);
  };
  await put(1, 'Login fix', NORMAL_MD);
  await put(2, HOSTILE_TITLE, HOSTILE_MD);
  await put(3, 'large.md', largeMarkdown());
  links.normal = await share(1, { hiddenExchanges: [2] });
  links.hostile = await share(2);
  links.large = await share(3);
  links.signedIn = await share(1, {
    audience: 'signed-in',
    hiddenExchanges: [2],
  });
}, 180_000);

afterAll(async () => {
  await rec?.context.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await app?.close();
});

/** A fresh browser context (no cookies) that also records dialogs. */
async function visit(path: string): Promise<{ page: Page; dialogs: string[] }> {
  await rec?.context.close().catch(() => undefined);
  rec = await newRecordedPage(browser, app.url);
  const dialogs: string[] = [];
  rec.page.on('dialog', (d) => {
    dialogs.push(`${d.type()}: ${d.message()}`);
    void d.dismiss().catch(() => undefined);
  });
  await rec.page.goto(path);
  return { page: rec.page, dialogs };
}

async function expectClean(page: Page, dialogs: string[]): Promise<void> {
  expect(await pwned(page)).toBeUndefined();
  expect(dialogs).toEqual([]);
  expect(rec!.requests.filter((u) => new URL(u).origin !== app.url)).toEqual([]);
  expect(rec!.errors).toEqual([]);
  expect(await rec!.context.cookies()).toEqual([]);
}

function expectShareHeaders(r: TestResponse): void {
  expect(r.headers['x-robots-tag']).toBe('noindex, nofollow, noarchive');
  expect(r.headers['referrer-policy']).toBe('no-referrer');
  expect(r.headers['cache-control']).toBe('no-store');
  const csp = String(r.headers['content-security-policy']);
  for (const d of [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ]) {
    expect(csp).toContain(d);
  }
  expect(r.headers['set-cookie']).toBeUndefined();
}

test(
  'the page: title, details and exchanges; a hidden exchange is a placeholder and absent from every byte; headers; no cookie; nothing from elsewhere; axe clean',
  step(
    () => rec!,
    async () => {
      // The HTML itself, as any client gets it (a stale session cookie is neither read nor cleared).
      const raw = await app.request('GET', `/s/${links.normal}`, {
        headers: { cookie: 'sa_session=not-a-live-session' },
      });
      expect(raw.status).toBe(200);
      expect(raw.headers['content-type']).toMatch(/^text\/html/);
      expectShareHeaders(raw);
      expect(raw.text).not.toContain(HIDDEN_MARK);
      for (const m of ['RAW-ONLY-MARKER', 'TAG-MARKER', SID(1), P]) expect(raw.text).not.toContain(m);
      expect(raw.text).toContain('<title>Login fix · Shared session</title>');
      // No inline script: the data block is inert JSON, and the only script is a same-origin file.
      const scripts = [...raw.text.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]);
      expect(scripts.filter((a) => !/type="application\/json"/.test(a)).every((a) => /type="module"/.test(a) && /src="\/assets\/[\w.-]+\.js"/.test(a))).toBe(
        true,
      );

      const { page, dialogs } = await visit(`/s/${links.normal}`);
      await page.getByRole('heading', { level: 1, name: 'Login fix' }).waitFor();
      expect(await page.title()).toBe('Login fix · Shared session');
      const main = page.getByRole('main');
      await main.getByRole('definition').getByText('claude-sonnet-4', { exact: true }).waitFor();
      await main.getByText('3 (1 hidden by the person who shared it)').waitFor();
      const transcript = page.getByRole('region', { name: 'Transcript' });
      // The `# title` line is the file's header: it opens exchange 1, the first prompt.
      expect(await transcript.getByRole('heading', { level: 2 }).allInnerTexts()).toEqual(['1. Why does login fail?', '2. Hidden exchange', '3. Now fix it']);
      await transcript.locator('#exchange-3').scrollIntoViewIfNeeded();
      await transcript.getByText('Done: the client refreshes one minute early.').waitFor();
      await transcript.getByRole('cell', { name: 'refresh' }).waitFor();
      const docs = transcript.getByRole('link', { name: 'the docs' });
      expect(await docs.getAttribute('href')).toBe('https://example.com/docs');
      expect(await docs.getAttribute('rel')).toBe('noopener noreferrer nofollow');
      await transcript.locator('#exchange-2').getByText('left this exchange out').waitFor();
      // No console around it: no navigation, no sign-in or account controls.
      expect(await page.getByRole('navigation').count()).toBe(0);
      expect(await page.getByRole('link', { name: /Projects|Search|Sign in|Settings/ }).count()).toBe(0);
      // The first page came with the HTML: no second request for it, and no cookie was sent or set.
      expect(rec!.requests.filter((u) => new URL(u).pathname.startsWith('/api/'))).toEqual([]);
      expect(await page.content()).not.toContain(HIDDEN_MARK);
      expect(await seriousAxeViolations(page)).toEqual([]);
      await expectClean(page, dialogs);
    },
  ),
  120_000,
);

test(
  'hostile markdown and titles run no script, open no dialog, load nothing and break no policy',
  step(
    () => rec!,
    async () => {
      const raw = await app.request('GET', `/s/${links.hostile}`);
      expect(raw.status).toBe(200);
      // The title cannot end the data block or the <title>: `<` is escaped in both.
      expect(raw.text.match(/<\/script>/g)?.length).toBe(2);
      expect(raw.text).toContain(`<title>&lt;/script&gt;&lt;script&gt;`);

      const { page, dialogs } = await visit(`/s/${links.hostile}`);
      await page.getByRole('heading', { level: 1, name: HOSTILE_TITLE }).waitFor();
      const transcript = page.getByRole('region', { name: 'Transcript' });
      await transcript.locator('#exchange-1').scrollIntoViewIfNeeded();
      await transcript.getByText('inside details').waitFor();
      await transcript.getByText(`<script>window.__pwned = 'script'</script>`).waitFor();
      await transcript.getByText(`<p onclick="window.__pwned='click'" onmouseover="alert('hover')">hover me</p>`).hover();
      for (const label of ['md js link', 'md alert link', 'md data link']) await transcript.getByText(label).click();
      expect(await transcript.getByRole('link', { name: /md js link|md alert link|md data link/ }).count()).toBe(0);
      const found = await page.evaluate(() => {
        const doc = (globalThis as unknown as { document: El }).document;
        const all = Array.from(doc.querySelectorAll('.md')).flatMap((m) => Array.from(m.querySelectorAll('*')));
        return {
          tags: [...new Set(all.map((e) => e.tagName.toLowerCase()))],
          attrs: [...new Set(all.flatMap((e) => Array.from(e.attributes).map((a) => a.name)))],
          hrefs: all.filter((e) => e.hasAttribute('href')).map((e) => String(e.getAttribute('href'))),
          scripts: doc.querySelectorAll('script:not([type="application/json"])').length,
        };
      });
      for (const bad of ['script', 'img', 'svg', 'iframe', 'style', 'link', 'meta', 'base', 'math']) expect(found.tags).not.toContain(bad);
      // Besides the allowed ones: what the console sets on links (target, rel) and code blocks (tabindex, role, aria-label).
      const ours = ['target', 'rel', 'tabindex', 'role', 'aria-label'];
      expect(found.attrs.filter((a) => !['href', 'title', 'open', 'align', 'start', ...ours].includes(a))).toEqual([]);
      expect(found.hrefs.every((h) => /^(https?:|mailto:)/.test(h))).toBe(true);
      expect(found.scripts).toBe(1);
      expect(await transcript.getByRole('link', { name: 'Image: remote image' }).getAttribute('href')).toBe('https://evil.example/pixel.png');
      expect(page.url()).toBe(`${app.url}/s/${links.hostile}`);
      expect(await seriousAxeViolations(page)).toEqual([]);
      await expectClean(page, dialogs);
    },
  ),
  120_000,
);

test(
  'a session over one page: the first exchanges come with the page, later ones through the API as the reader scrolls',
  step(
    () => rec!,
    async () => {
      const raw = await app.request('GET', `/s/${links.large}`);
      const boot = JSON.parse(/<script type="application\/json" id="share-data">([^<]*)<\/script>/.exec(raw.text)![1]) as BootBody;
      expect(boot.page.exchangeCount).toBe(30);
      expect(boot.page.exchanges.length).toBeLessThan(30);
      expect(boot.page.nextFrom).toBe(boot.page.exchanges.length + 1);

      const { page, dialogs } = await visit(`/s/${links.large}`);
      const transcript = page.getByRole('region', { name: 'Transcript' });
      await transcript.getByRole('heading', { level: 2, name: '1. Question 1 about the backoff' }).waitFor();
      for (
        let i = 0;
        i < 200 &&
        (await transcript
          .getByRole('heading', {
            level: 2,
            name: '30. Question 30 about the backoff',
          })
          .count()) === 0;
        i++
      ) {
        await page.mouse.wheel(0, 20_000);
        await page.waitForTimeout(100);
      }
      const last = transcript.getByRole('heading', {
        level: 2,
        name: '30. Question 30 about the backoff',
      });
      await last.waitFor();
      // Exchanges render as they come near the viewport, and a rendered one grows (pushing the last
      // one down): go to it until it is rendered, as a reader would.
      const rendered = transcript.locator('#exchange-30 .md:not(.pending)');
      for (let i = 0; i < 50 && (await rendered.count()) === 0; i++) {
        await last.scrollIntoViewIfNeeded();
        await page.waitForTimeout(200);
      }
      await transcript.locator('#exchange-30').getByText('exponential backoff').first().waitFor();
      expect(await page.locator('section.exchange').count()).toBe(30);
      expect(await page.getByRole('button', { name: 'Show more exchanges' }).count()).toBe(0);
      // Later pages only (the first came with the HTML), each starting where the last one ended.
      const reads = rec!.requests.filter((u) => new URL(u).pathname === `/api/v1/share/${links.large}`).map((u) => Number(new URL(u).searchParams.get('from')));
      expect(reads[0]).toBe(boot.page.nextFrom);
      expect(reads.every((f) => f > 1)).toBe(true);
      expect(await seriousAxeViolations(page)).toEqual([]);
      await expectClean(page, dialogs);
    },
  ),
  180_000,
);

test(
  'every dead link answers the same 404 page',
  step(
    () => rec!,
    async () => {
      const db = app.deps.db.writes;
      const make = async () =>
        ((await app.request('POST', `/api/v1/projects/${P}/sessions/${SID(1)}/shares`, { token: apiToken, body: {} })).body as ShareBody).data.share;
      const expired = await make();
      await db.execute('UPDATE shares SET expiresAt = ? WHERE id = ?', new Date(Date.now() - 1000), expired.id);
      const revoked = await make();
      expect(
        (
          await app.request('DELETE', `/api/v1/shares/${revoked.id}`, {
            token: apiToken,
          })
        ).status,
      ).toBe(200);
      const forged = links.normal.slice(0, 22) + crypto.randomBytes(16).toString('base64url');
      const dead = [
        tokenOf(expired.url),
        tokenOf(revoked.url),
        forged,
        crypto.randomBytes(33).toString('base64url'),
        'abc',
        'x'.repeat(44),
        '%00',
        `${links.normal}/more`,
        `${links.normal}x`,
        '',
      ];
      const answers = await Promise.all(dead.map((t) => app.request('GET', `/s/${t}`)));
      for (const r of answers) {
        expect(r.status).toBe(404);
        expect(r.headers['content-type']).toMatch(/^text\/html/);
        expectShareHeaders(r);
        expect(r.text).toBe(answers[0].text);
      }
      expect(answers[0].text).toContain('Link not found');
      // In the browser: the same page, readable and clean.
      const { page, dialogs } = await visit(`/s/${forged}`);
      await page.getByRole('heading', { level: 1, name: 'Link not found' }).waitFor();
      expect(await seriousAxeViolations(page)).toEqual([]);
      await expectClean(page, dialogs);
      expect((await app.request('GET', `/s/${links.normal}`)).status).toBe(200);
    },
  ),
  120_000,
);

test(
  'a signed-in link sends a visitor without a session to sign in and back to the same page',
  step(
    () => rec!,
    async () => {
      const raw = await app.request('GET', `/s/${links.signedIn}`);
      expect(raw.status).toBe(302);
      expect(raw.headers.location).toBe(`/sign-in?next=${encodeURIComponent(`/s/${links.signedIn}`)}`);
      expect(raw.headers['referrer-policy']).toBe('no-referrer');
      expect(raw.text).not.toContain(HIDDEN_MARK);

      const { page, dialogs } = await visit(`/s/${links.signedIn}`);
      await page.waitForURL(/\/sign-in\?next=/);
      await expect(page.locator('#sign-in-purpose').textContent()).resolves.toBe('Sign in to open the session shared with you.');
      await page.getByLabel('Email').fill(visitor.email);
      await page.getByLabel('Password').fill(visitor.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${app.url}/s/${links.signedIn}`);
      await page.getByRole('heading', { level: 1, name: 'Login fix' }).waitFor();
      await page.getByRole('region', { name: 'Transcript' }).getByText('2. Hidden exchange').waitFor();
      expect(await page.content()).not.toContain(HIDDEN_MARK);
      expect(await pwned(page)).toBeUndefined();
      expect(dialogs).toEqual([]);
      expect(rec!.requests.filter((u) => new URL(u).origin !== app.url)).toEqual([]);
      expect(rec!.errors).toEqual([]);
      // A reload, already signed in, shows the page at once.
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Login fix' }).waitFor();
      expect(page.url()).toBe(`${app.url}/s/${links.signedIn}`);
    },
  ),
  120_000,
);
