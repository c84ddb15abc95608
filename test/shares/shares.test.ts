import crypto from 'node:crypto';
import { setUserDisabled } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { SID, startTestApp, type TestApp, type TestResponse, type TestUser } from '../support/app';

/*
 * Share links: snapshots, hidden exchanges never copied, expiry, audience and the SHARES switch,
 * the headers of every answer, one 404 for every dead link, the cascades that end a link, the
 * refusal of sessions with unmasked secrets, paging and views, and the MAC checked before any
 * database read.
 */

let app: TestApp;
let a: TestUser;
let b: TestUser;
const HIDDEN_MARK = 'HIDDEN-EXCHANGE-MARKER-q7z';
const SECRET = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;

const transcript = (extra = '') =>
  [
    '# Fixing the login flow\n\n',
    '_**User**_\n\nWhy does login fail?\n\n_**Agent (model claude-sonnet-4)**_\n\nThe token expired.\n\n',
    `_**User**_\n\n${HIDDEN_MARK} private question\n\n_**Agent**_\n\n${HIDDEN_MARK} private answer\n\n`,
    '_**User**_\n\nNow fix it\n\n_**Agent**_\n\nDone.\n',
    extra,
  ].join('');

const upload = (u: TestUser, p: string, s: string, markdown: string, on: TestApp = app) =>
  on.request('PUT', `/api/v1/projects/${p}/sessions/${s}`, {
    token: u.token,
    body: {
      name: 'Login fix',
      markdown,
      rawData: '{"raw":"RAW-ONLY-MARKER"}',
      metadata: { tags: ['TAG-MARKER'], llmModels: ['claude-sonnet-4'], gitBranches: ['BRANCH-MARKER'] },
      deviceId: 'DEVICE-MARKER',
    },
  });
const create = (u: TestUser, p: string, s: string, body: unknown = {}, on: TestApp = app) =>
  on.request('POST', `/api/v1/projects/${p}/sessions/${s}/shares`, { token: u.token, body });
const tokenOf = (url: string) => url.slice(url.lastIndexOf('/s/') + 3);
const read = (token: string, query = '', opts: { token?: string } = {}, on: TestApp = app) => on.request('GET', `/api/v1/share/${token}${query}`, opts);

beforeAll(async () => {
  app = await startTestApp({ env: { SHARE_READS_PER_MINUTE: '100000' } });
  a = await app.createUser('sharer');
  b = await app.createUser('other');
});
afterAll(() => app?.close());

function expectShareHeaders(r: TestResponse): void {
  expect(r.headers['x-robots-tag']).toBe('noindex, nofollow, noarchive');
  expect(r.headers['referrer-policy']).toBe('no-referrer');
  expect(r.headers['cache-control']).toBe('no-store');
  expect(String(r.headers['content-security-policy'])).toContain("default-src 'self'");
  expect(String(r.headers['content-security-policy'])).toContain("script-src 'self'");
  expect(r.headers['set-cookie']).toBeUndefined();
}

describe('making a link', () => {
  test('201 with the link; the token is 44 characters, carries no id, and is shown again in the lists', async () => {
    expect((await upload(a, 'sh-make', SID(1), transcript())).status).toBe(201);
    const r = await create(a, 'sh-make', SID(1));
    expect(r.status).toBe(201);
    const s = r.body.data.share;
    expect(s).toMatchObject({ audience: 'public', hiddenExchanges: [], exchangeCount: 3, views: 0, projectId: 'sh-make', sessionId: SID(1) });
    expect(s.url).toBe(`${app.url}/s/${tokenOf(s.url)}`);
    const token = tokenOf(s.url);
    expect(token).toMatch(/^[A-Za-z0-9_-]{44}$/);
    expect(token).not.toContain('sh-make');
    expect(token.toLowerCase()).not.toContain(SID(1).slice(0, 8));
    // Default expiry: 30 days.
    expect(Math.abs(Date.parse(s.expiresAt) - Date.now() - 30 * 86_400_000)).toBeLessThan(60_000);
    const list = await app.request('GET', `/api/v1/projects/sh-make/sessions/${SID(1)}/shares`, { token: a.token });
    expect(list.body.data.shares.map((x: { url: string }) => x.url)).toEqual([s.url]);
    const all = await app.request('GET', '/api/v1/shares', { token: a.token });
    expect(all.body.data.shares.map((x: { id: string }) => x.id)).toContain(s.id);
    expect((await app.request('GET', '/api/v1/shares', { token: b.token })).body.data.shares).toEqual([]);
  });

  test('expiry values: 1, 7, 30, 90; anything else and null (without SHARES_ALLOW_NEVER) → 400', async () => {
    await upload(a, 'sh-exp', SID(2), transcript());
    for (const days of [1, 7, 30, 90]) {
      const r = await create(a, 'sh-exp', SID(2), { expiresInDays: days });
      expect(r.status).toBe(201);
      expect(Math.abs(Date.parse(r.body.data.share.expiresAt) - Date.now() - days * 86_400_000)).toBeLessThan(60_000);
    }
    for (const bad of [0, 2, 365, '7', -1, 1.5]) {
      const r = await create(a, 'sh-exp', SID(2), { expiresInDays: bad });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('expiresInDays must be 1, 7, 30 or 90');
    }
    const never = await create(a, 'sh-exp', SID(2), { expiresInDays: null });
    expect(never.status).toBe(400);
    expect(never.body.error).toMatch(/never expire are turned off/);
    expect((await create(a, 'sh-exp', SID(2), { audience: 'everyone' })).status).toBe(400);
    expect((await create(a, 'sh-exp', SID(2), { hiddenExchanges: [0] })).status).toBe(400);
    expect((await create(a, 'sh-exp', SID(2), { hiddenExchanges: [9] })).body.error).toMatch(/no exchange 9 \(it has 3\)/);
    expect((await create(a, 'sh-exp', SID(2), { extra: 1 })).status).toBe(400);
  });

  test("another user's session → 403; unknown session → 404; nobody else's link can be changed or revoked", async () => {
    await upload(a, 'sh-own', SID(3), transcript());
    expect((await create(b, 'sh-own', SID(3))).status).toBe(403);
    expect((await create(a, 'sh-own', SID(99))).status).toBe(404);
    expect((await create(a, 'sh-nothing', SID(3))).status).toBe(404);
    const s = (await create(a, 'sh-own', SID(3))).body.data.share;
    expect((await app.request('PATCH', `/api/v1/shares/${s.id}`, { token: b.token, body: { expiresInDays: 7 } })).status).toBe(404);
    expect((await app.request('DELETE', `/api/v1/shares/${s.id}`, { token: b.token })).status).toBe(404);
    expect((await app.request('DELETE', '/api/v1/shares/not-a-uuid', { token: a.token })).status).toBe(404);
    expect((await app.request('GET', `/api/v1/projects/sh-own/sessions/${SID(3)}/shares`, { token: b.token })).status).toBe(403);
  });
});

describe('reading a link', () => {
  test('the shape; hidden exchanges absent from every byte of every answer and of the stored snapshot', async () => {
    await upload(a, 'sh-read', SID(10), transcript());
    const made = await create(a, 'sh-read', SID(10), { hiddenExchanges: [2] });
    expect(made.status).toBe(201);
    const s = made.body.data.share;
    expect(s.hiddenExchanges).toEqual([2]);
    const token = tokenOf(s.url);
    const r = await read(token);
    expect(r.status).toBe(200);
    expectShareHeaders(r);
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual(
      ['agentName', 'createdAt', 'exchangeCount', 'exchanges', 'from', 'hiddenCount', 'llmModels', 'nextFrom', 'sharedAt', 'title'].sort(),
    );
    // The title line is the file's header, part of exchange 1: the hidden one is the second prompt.
    expect(d).toMatchObject({ title: 'Login fix', exchangeCount: 3, hiddenCount: 1, llmModels: ['claude-sonnet-4'], from: 1, nextFrom: null });
    expect(d.exchanges.map((e: { number: number }) => e.number)).toEqual([1, 2, 3]);
    expect(d.exchanges[1]).toEqual({ number: 2, hidden: true });
    expect(d.exchanges[0]).toMatchObject({ title: 'Why does login fail?' });
    expect(d.exchanges[0].markdown).toContain('Why does login fail?');
    for (const text of [made.text, r.text, (await app.request('GET', '/api/v1/shares', { token: a.token })).text]) {
      expect(text).not.toContain(HIDDEN_MARK);
    }
    // Never raw data, tags, device, branch or an email.
    for (const m of ['RAW-ONLY-MARKER', 'TAG-MARKER', 'DEVICE-MARKER', 'BRANCH-MARKER', a.email, 'sessionData']) expect(r.text).not.toContain(m);
    const stored = await app.deps.db.writes.query<{ t: string }>(
      "SELECT CONCAT_WS('|', se.title, se.markdown, sh.title, sh.hiddenJson, sh.llmModelsJson) AS t FROM share_exchanges se JOIN shares sh ON sh.id = se.shareId WHERE sh.id = ?",
      s.id,
    );
    expect(stored).toHaveLength(3);
    for (const row of stored) expect(String(row.t)).not.toContain(HIDDEN_MARK);

    // Un-hiding copies the exchange's current content in; hiding again removes it from the snapshot.
    const shown = await app.request('PATCH', `/api/v1/shares/${s.id}`, { token: a.token, body: { hiddenExchanges: [] } });
    expect(shown.status).toBe(200);
    expect((await read(token)).body.data.exchanges[1].markdown).toContain(HIDDEN_MARK);
    await app.request('PATCH', `/api/v1/shares/${s.id}`, { token: a.token, body: { hiddenExchanges: [2] } });
    expect((await read(token)).text).not.toContain(HIDDEN_MARK);
    const again = await app.deps.db.writes.query<{ n: bigint }>(
      'SELECT COUNT(*) AS n FROM share_exchanges WHERE shareId = ? AND (markdown LIKE ? OR title LIKE ?)',
      s.id,
      `%${HIDDEN_MARK}%`,
      `%${HIDDEN_MARK}%`,
    );
    expect(Number(again[0].n)).toBe(0);
  });

  test('a snapshot: a later upload is not shown until refresh', async () => {
    await upload(a, 'sh-snap', SID(11), transcript());
    const s = (await create(a, 'sh-snap', SID(11))).body.data.share;
    const token = tokenOf(s.url);
    const later = transcript('_**User**_\n\nA LATER QUESTION\n').replace('The token expired.', 'CHANGED LATER');
    expect((await upload(a, 'sh-snap', SID(11), later)).status).toBe(200);
    const before = await read(token);
    expect(before.body.data.exchangeCount).toBe(3);
    expect(before.text).not.toContain('A LATER QUESTION');
    expect(before.text).not.toContain('CHANGED LATER');
    expect(before.text).toContain('The token expired.');
    const refreshed = await app.request('PATCH', `/api/v1/shares/${s.id}`, { token: a.token, body: { refresh: true } });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.data.share.exchangeCount).toBe(4);
    const after = await read(token);
    expect(after.text).toContain('A LATER QUESTION');
    expect(after.text).toContain('CHANGED LATER');
    expect(Date.parse(after.body.data.sharedAt)).toBeGreaterThanOrEqual(Date.parse(before.body.data.sharedAt));
  });

  test('views: the first page counts, later pages do not; the owner sees the count', async () => {
    await upload(a, 'sh-views', SID(12), transcript());
    const s = (await create(a, 'sh-views', SID(12))).body.data.share;
    const token = tokenOf(s.url);
    await read(token);
    await read(token, '?from=1&limit=2');
    await read(token, '?from=3');
    const list = await app.request('GET', `/api/v1/projects/sh-views/sessions/${SID(12)}/shares`, { token: a.token });
    expect(list.body.data.shares[0].views).toBe(2);
  });

  test('paging a large session: at most 8 MiB of markdown a page, every exchange once', async () => {
    const line = 'lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod\n';
    const big = (n: number) => `_**User**_\n\nQuestion ${n}\n\n_**Agent**_\n\n${line.repeat(Math.ceil((3 * 1024 * 1024) / line.length))}`;
    const md = `# Big\n\n${[1, 2, 3, 4].map(big).join('')}`;
    expect((await upload(a, 'sh-big', SID(13), md)).status).toBe(201);
    const s = (await create(a, 'sh-big', SID(13))).body.data.share;
    const token = tokenOf(s.url);
    let from: number | null = 1;
    const seen: number[] = [];
    let text = '';
    let pages = 0;
    while (from !== null) {
      const r = await read(token, `?from=${from}&limit=500`);
      expect(r.status).toBe(200);
      const bytes = r.body.data.exchanges.reduce((n: number, e: { markdown?: string }) => n + Buffer.byteLength(e.markdown ?? ''), 0);
      expect(bytes).toBeLessThanOrEqual(8 * 1024 * 1024);
      for (const e of r.body.data.exchanges) {
        seen.push(e.number);
        text += e.markdown;
      }
      from = r.body.data.nextFrom;
      pages++;
    }
    expect(pages).toBeGreaterThanOrEqual(2);
    expect(seen).toEqual(Array.from({ length: s.exchangeCount }, (_, i) => i + 1));
    expect(text).toBe(md);
    expect((await read(token, '?limit=0')).status).toBe(400);
    expect((await read(token, '?from=x')).status).toBe(400);
  });
});

describe('one 404 for every dead link', () => {
  test('unknown, malformed, forged, expired and revoked tokens answer the same body and headers', async () => {
    await upload(a, 'sh-dead', SID(20), transcript());
    const expired = (await create(a, 'sh-dead', SID(20))).body.data.share;
    await app.deps.db.writes.execute('UPDATE shares SET expiresAt = ? WHERE id = ?', new Date(Date.now() - 1000), expired.id);
    const revoked = (await create(a, 'sh-dead', SID(20))).body.data.share;
    expect((await app.request('DELETE', `/api/v1/shares/${revoked.id}`, { token: a.token })).status).toBe(200);
    const live = tokenOf((await create(a, 'sh-dead', SID(20))).body.data.share.url);
    const forged = live.slice(0, 22) + crypto.randomBytes(16).toString('base64url');
    const candidates = [tokenOf(expired.url), tokenOf(revoked.url), forged, 'abc', 'x'.repeat(44), crypto.randomBytes(33).toString('base64url'), '%00'];
    const answers = await Promise.all(candidates.map((t) => read(t)));
    for (const r of answers) {
      expect(r.status).toBe(404);
      expect(r.text).toBe('{"success":false,"error":"Share link not found"}');
      expectShareHeaders(r);
    }
    expect((await read(live)).status).toBe(200);
  });

  test('random and forged tokens are refused by the MAC without a database query', async () => {
    await upload(a, 'sh-mac', SID(21), transcript());
    const live = tokenOf((await create(a, 'sh-mac', SID(21))).body.data.share.url);
    // Every statement the process sends, with its text (background work such as the database
    // watchdog's ping may run meanwhile: those are told apart by their text).
    const sent: string[] = [];
    const pools = [app.deps.db.pool, app.deps.db.readPool] as unknown as Array<Record<string, unknown>>;
    const restore: Array<() => void> = [];
    const textOf = (q: unknown) => (typeof q === 'string' ? q : String((q as { sql?: string } | null)?.sql ?? ''));
    for (const p of pools) {
      for (const m of ['query', 'execute', 'batch']) {
        const orig = p[m] as ((...args: unknown[]) => unknown) | undefined;
        if (typeof orig !== 'function') continue;
        p[m] = (...args: unknown[]) => {
          sent.push(textOf(args[0]));
          return orig.apply(p, args);
        };
        restore.push(() => {
          p[m] = orig;
        });
      }
      const getConnection = p.getConnection as () => Promise<Record<string, unknown>>;
      // Taking a connection alone is not a lookup (background work takes them); share reads go
      // through the pool's own methods, which the control read below shows are recorded.
      p.getConnection = async () => {
        sent.push('<connection>');
        return getConnection.apply(p);
      };
      restore.push(() => {
        p.getConnection = getConnection;
      });
    }
    try {
      for (let i = 0; i < 1000; i += 20) {
        const batch = Array.from({ length: 20 }, (_, j) =>
          (i + j) % 2 ? crypto.randomBytes(33).toString('base64url') : live.slice(0, 22) + crypto.randomBytes(16).toString('base64url'),
        );
        for (const r of await Promise.all(batch.map((t) => read(t)))) expect(r.status).toBe(404);
      }
      const touching = (list: string[]) => list.filter((q) => /\b(shares|share_exchanges|users|sessions|projects)\b/.test(q));
      expect(touching(sent)).toEqual([]);
      // The recorder does see a real lookup.
      expect((await read(live)).status).toBe(200);
      expect(touching(sent).length).toBeGreaterThan(0);
    } finally {
      for (const f of restore) f();
    }
  });
});

describe('what ends a link, from the next request', () => {
  test('deleting the session, deleting the project, disabling the creator', async () => {
    await upload(a, 'sh-cas1', SID(30), transcript());
    await upload(a, 'sh-cas2', SID(31), transcript());
    const s1 = tokenOf((await create(a, 'sh-cas1', SID(30))).body.data.share.url);
    const s2 = tokenOf((await create(a, 'sh-cas2', SID(31))).body.data.share.url);
    expect((await read(s1)).status).toBe(200);
    expect((await app.request('DELETE', `/api/v1/projects/sh-cas1/sessions/${SID(30)}`, { token: a.token })).status).toBe(200);
    expect((await read(s1)).status).toBe(404);
    expect((await app.request('DELETE', '/api/v1/projects/sh-cas2', { token: a.token })).status).toBe(200);
    expect((await read(s2)).status).toBe(404);

    const c = await app.createUser('disabled');
    await upload(c, 'sh-cas3', SID(32), transcript());
    const s3 = tokenOf((await create(c, 'sh-cas3', SID(32))).body.data.share.url);
    expect((await read(s3)).status).toBe(200);
    await setUserDisabled(operatorCtx(app.deps.db), c.id, true);
    expect((await read(s3)).status).toBe(404);
    await setUserDisabled(operatorCtx(app.deps.db), c.id, false);
    expect((await read(s3)).status).toBe(200);
  });

  test('in a team project: a member shares what they uploaded; leaving the team (or becoming a viewer) ends the link; an admin may share any', async () => {
    const admin = await app.createUser('team-admin');
    const member = await app.createUser('team-member');
    const teamId = crypto.randomUUID();
    const db = app.deps.db.writes;
    await upload(member, 'sh-team', SID(40), transcript());
    await upload(member, 'sh-team', SID(41), transcript());
    await db.execute('INSERT INTO teams (id, name) VALUES (?, ?)', teamId, 'Team');
    await db.execute("INSERT INTO team_members (teamId, userId, role) VALUES (?, ?, 'admin'), (?, ?, 'member')", teamId, admin.id, teamId, member.id);
    await db.execute("UPDATE projects SET ownerType = 'team', ownerId = ? WHERE id = 'sh-team'", teamId);
    await db.execute("UPDATE sessions SET userId = ?, uploadedBy = ? WHERE projectId = 'sh-team'", teamId, member.id);
    await db.execute("UPDATE sessions SET uploadedBy = ? WHERE projectId = 'sh-team' AND id = ?", admin.id, SID(41));

    const mine = await create(member, 'sh-team', SID(40));
    expect(mine.status).toBe(201);
    // Not the member's upload → 403; the admin may share it.
    expect((await create(member, 'sh-team', SID(41))).status).toBe(403);
    const byAdmin = tokenOf((await create(admin, 'sh-team', SID(40))).body.data.share.url);
    const token = tokenOf(mine.body.data.share.url);
    expect((await read(token)).status).toBe(200);
    await db.execute("UPDATE team_members SET role = 'viewer' WHERE teamId = ? AND userId = ?", teamId, member.id);
    expect((await read(token)).status).toBe(404);
    await db.execute("UPDATE team_members SET role = 'member' WHERE teamId = ? AND userId = ?", teamId, member.id);
    expect((await read(token)).status).toBe(200);
    await db.execute('DELETE FROM team_members WHERE teamId = ? AND userId = ?', teamId, member.id);
    expect((await read(token)).status).toBe(404);
    expect((await read(byAdmin)).status).toBe(200);
    await db.execute("DELETE FROM projects WHERE id = 'sh-team'");
    await db.execute('DELETE FROM teams WHERE id = ?', teamId);
  });
});

describe('audience', () => {
  test('a signed-in link: 401 without an account, the page with one; a public link ignores credentials', async () => {
    await upload(a, 'sh-aud', SID(50), transcript());
    const made = await create(a, 'sh-aud', SID(50), { audience: 'signed-in' });
    expect(made.body.data.share.audience).toBe('signed-in');
    const token = tokenOf(made.body.data.share.url);
    const anon = await read(token);
    expect(anon.status).toBe(401);
    expect(anon.body.error).toBe('Sign in to view this shared session');
    expectShareHeaders(anon);
    expect((await read(token, '', { token: b.token })).status).toBe(200);
    expect((await read(token, '', { token: 'not-a-token' })).status).toBe(401);
    const pub = tokenOf((await create(a, 'sh-aud', SID(50))).body.data.share.url);
    expect((await read(pub, '', { token: 'not-a-token' })).status).toBe(200);
  });
});

describe('switches', () => {
  let other: TestApp;
  afterEach(async () => {
    await other?.close();
  });

  test('SHARES_ALLOW_NEVER=true permits null; REDACT_SECRETS=report content is refused with 409 listing the rules', async () => {
    other = await startTestApp({ db: app.db, env: { SHARES_ALLOW_NEVER: 'true', REDACT_SECRETS: 'report' } });
    await upload(a, 'sh-never', SID(60), transcript());
    const never = await create(a, 'sh-never', SID(60), { expiresInDays: null }, other);
    expect(never.status).toBe(201);
    expect(never.body.data.share.expiresAt).toBeNull();
    expect((await read(tokenOf(never.body.data.share.url), '', {}, other)).status).toBe(200);

    const leaky = transcript(`_**User**_\n\nmy token is ${SECRET}\n`);
    expect((await upload(a, 'sh-secret', SID(61), leaky, other)).status).toBe(201);
    const refused = await create(a, 'sh-secret', SID(61), {}, other);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/^Session holds unmasked secrets \(.*github-token.*\)/);
    expect(refused.text).not.toContain(SECRET);
    expect(Number((await app.deps.db.writes.query<{ n: bigint }>("SELECT COUNT(*) AS n FROM shares WHERE projectId = 'sh-secret'"))[0].n)).toBe(0);
    // The same content uploaded with masking on is shared, masked.
    expect((await upload(a, 'sh-secret', SID(62), leaky)).status).toBe(201);
    const masked = await create(a, 'sh-secret', SID(62));
    expect(masked.status).toBe(201);
    const r = await read(tokenOf(masked.body.data.share.url));
    expect(r.text).not.toContain(SECRET);
    expect(r.text).toContain('[REDACTED:github-token]');
  });

  test('SHARES=signed-in: no public links, existing ones need an account; SHARE_READS_PER_MINUTE → 429', async () => {
    other = await startTestApp({ db: app.db, env: { SHARES: 'signed-in', SHARE_READS_PER_MINUTE: '3' } });
    await upload(a, 'sh-si', SID(70), transcript());
    const pub = tokenOf((await create(a, 'sh-si', SID(70))).body.data.share.url);
    expect((await create(a, 'sh-si', SID(70), { audience: 'public' }, other)).status).toBe(400);
    const made = await create(a, 'sh-si', SID(70), {}, other);
    expect(made.body.data.share.audience).toBe('signed-in');
    expect((await read(pub, '', {}, other)).status).toBe(401);
    expect((await read(pub, '', { token: b.token }, other)).status).toBe(200);
    expect((await read(pub, '', { token: b.token }, other)).status).toBe(200);
    const limited = await read(pub, '', { token: b.token }, other);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  test('SHARES=off: no new links (403) and existing ones answer 404', async () => {
    other = await startTestApp({ db: app.db, env: { SHARES: 'off' } });
    await upload(a, 'sh-off', SID(80), transcript());
    const live = tokenOf((await create(a, 'sh-off', SID(80))).body.data.share.url);
    const refused = await create(a, 'sh-off', SID(80), {}, other);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('Share links are turned off on this server');
    const r = await read(live, '', {}, other);
    expect(r.status).toBe(404);
    expect(r.text).toBe('{"success":false,"error":"Share link not found"}');
  });
});
