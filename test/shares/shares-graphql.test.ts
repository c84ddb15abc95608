/**
 * Share links through GraphQL: createShare / updateShare / deleteShare, Query.shares and
 * Session.shares go through the share service (the same rules as REST: who may share, expiry
 * values, the SHARES switch, the refusal of unmasked secrets), with GraphQL's error codes; the
 * lists cost a fixed number of statements however many sessions and links they hold.
 */
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { countOn } from '../support/statements';

let app: TestApp;
let a: TestUser;
let b: TestUser;
let statements = 0;
let counting = false;
const HIDDEN_MARK = 'GQL-HIDDEN-EXCHANGE-k3v';
const SECRET = `ghp_${'Z9y8X7w6V5'.repeat(3)}abcdef`;

const transcript = (extra = '') =>
  [
    '# Fixing the login flow\n\n',
    '_**User**_\n\nWhy does login fail?\n\n_**Agent**_\n\nThe token expired.\n\n',
    `_**User**_\n\n${HIDDEN_MARK} private question\n\n_**Agent**_\n\n${HIDDEN_MARK} private answer\n\n`,
    '_**User**_\n\nNow fix it\n\n_**Agent**_\n\nDone.\n',
    extra,
  ].join('');

const upload = (u: TestUser, p: string, s: string, markdown = transcript(), on: TestApp = app) =>
  on.request('PUT', `/api/v1/projects/${p}/sessions/${s}`, {
    token: u.token,
    body: { name: `Login fix ${s.slice(-2)}`, markdown },
  });
const tokenOf = (url: string) => url.slice(url.lastIndexOf('/s/') + 3);
const read = (url: string) => app.request('GET', `/api/v1/share/${tokenOf(url)}`);

const SHARE = 'id url projectId sessionId sessionTitle createdAt snapshotAt expiresAt audience hiddenExchanges exchangeCount views';
const CREATE = `mutation($p: ID!, $s: ID!, $i: CreateShareInput) { createShare(projectId: $p, sessionId: $s, input: $i) { ${SHARE} } }`;
const UPDATE = `mutation($id: ID!, $i: UpdateShareInput!) { updateShare(id: $id, input: $i) { ${SHARE} } }`;
const DELETE = 'mutation($id: ID!) { deleteShare(id: $id) }';

const codeOf = (r: { body: any }) => r.body.errors?.[0]?.extensions?.code;

beforeAll(async () => {
  // No outbox worker: its polling would share the counted pools and blur the statement counts.
  app = await startTestApp({
    env: { WORKERS_ENABLED: 'false', SHARE_READS_PER_MINUTE: '100000' },
  });
  const count = () => {
    if (counting) statements++;
  };
  countOn(app.deps.db.pool, count);
  countOn(app.deps.db.readPool, count);
  a = await app.createUser('gql-sharer');
  b = await app.createUser('gql-other');
});
afterAll(() => app?.close());

describe('making, listing, changing and revoking a link', () => {
  test("a link shows the session's display title: its user title, else metadata.title, else its name", async () => {
    const put = (s: string, body: object) =>
      app.request('PUT', `/api/v1/projects/gsh-title/sessions/${s}`, { token: a.token, body: { markdown: transcript(), ...body } });
    expect((await put(SID(1), { name: 'file-name.md', metadata: { title: 'Title from the client' } })).status).toBe(201);
    expect((await put(SID(2), { name: 'only-a-name.md' })).status).toBe(201);
    const made = async (s: string) => (await app.gql(a.token, CREATE, { p: 'gsh-title', s })).body.data.createShare;
    const first = await made(SID(1));
    expect(first.sessionTitle).toBe('Title from the client');
    expect((await read(first.url)).body.data.title).toBe('Title from the client');
    expect((await made(SID(2))).sessionTitle).toBe('only-a-name.md');
    const renamed = await app.request('PATCH', `/api/v1/projects/gsh-title/sessions/${SID(1)}`, { token: a.token, body: { userTitle: 'Renamed by me' } });
    expect(renamed.status).toBe(200);
    const listed = await app.request('GET', `/api/v1/projects/gsh-title/sessions/${SID(1)}/shares`, { token: a.token });
    expect(listed.body.data.shares.map((x: { sessionTitle: string }) => x.sessionTitle)).toEqual(['Renamed by me']);
  });

  test('createShare: the link as REST gives it; hidden exchanges absent from the link and the answer', async () => {
    expect((await upload(a, 'gsh-make', SID(1))).status).toBe(201);
    const r = await app.gql(a.token, CREATE, {
      p: 'gsh-make',
      s: SID(1),
      i: { hiddenExchanges: [2], expiresInDays: 7, audience: 'PUBLIC' },
    });
    expect(r.body.errors).toBeUndefined();
    const s = r.body.data.createShare;
    expect(s).toMatchObject({
      projectId: 'gsh-make',
      sessionId: SID(1),
      sessionTitle: 'Login fix 01',
      audience: 'PUBLIC',
      hiddenExchanges: [2],
      exchangeCount: 3,
      views: 0,
    });
    expect(s.url).toBe(`${app.url}/s/${tokenOf(s.url)}`);
    expect(Math.abs(Date.parse(s.expiresAt) - Date.now() - 7 * 86_400_000)).toBeLessThan(60_000);
    expect(r.text).not.toContain(HIDDEN_MARK);
    const page = await read(s.url);
    expect(page.status).toBe(200);
    // The title line is the file's header, part of exchange 1: the private prompt is exchange 2.
    expect(page.body.data.exchanges[1]).toEqual({ number: 2, hidden: true });
    expect(page.text).not.toContain(HIDDEN_MARK);
    // REST lists the same link.
    const rest = await app.request('GET', `/api/v1/projects/gsh-make/sessions/${SID(1)}/shares`, { token: a.token });
    expect(rest.body.data.shares.map((x: { url: string }) => x.url)).toEqual([s.url]);

    // Defaults: public, 30 days, nothing hidden.
    const plain = (await app.gql(a.token, CREATE, { p: 'gsh-make', s: SID(1) })).body.data.createShare;
    expect(plain).toMatchObject({ audience: 'PUBLIC', hiddenExchanges: [] });
    expect(Math.abs(Date.parse(plain.expiresAt) - Date.now() - 30 * 86_400_000)).toBeLessThan(60_000);
    const signedIn = (
      await app.gql(a.token, CREATE, {
        p: 'gsh-make',
        s: SID(1),
        i: { audience: 'SIGNED_IN' },
      })
    ).body.data.createShare;
    expect(signedIn.audience).toBe('SIGNED_IN');
    expect((await read(signedIn.url)).status).toBe(401);
  });

  test('Session.shares and Query.shares: the caller’s links with their session and views; nobody else’s', async () => {
    await upload(a, 'gsh-list', SID(2));
    const made = (
      await app.gql(a.token, CREATE, {
        p: 'gsh-list',
        s: SID(2),
        i: { hiddenExchanges: [1] },
      })
    ).body.data.createShare;
    await read(made.url);
    await read(made.url);
    const r = await app.gql(
      a.token,
      `query($s: ID!) { session(id: $s, projectId: "gsh-list") { id shares { id url views hiddenExchanges session { id name } } }
        shares { id sessionId views session { id project { id } } } }`,
      { s: SID(2) },
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.session.shares).toEqual([
      {
        id: made.id,
        url: made.url,
        views: 2,
        hiddenExchanges: [1],
        session: { id: SID(2), name: 'Login fix 02' },
      },
    ]);
    expect(r.body.data.shares).toContainEqual({
      id: made.id,
      sessionId: SID(2),
      views: 2,
      session: { id: SID(2), project: { id: 'gsh-list' } },
    });
    const other = await app.gql(b.token, '{ shares { id } }');
    expect(other.body).toEqual({ data: { shares: [] } });
  });

  test('updateShare: hide and show, refresh after a new upload, new expiry', async () => {
    await upload(a, 'gsh-upd', SID(3));
    const s = (
      await app.gql(a.token, CREATE, {
        p: 'gsh-upd',
        s: SID(3),
        i: { hiddenExchanges: [2] },
      })
    ).body.data.createShare;
    const shown = await app.gql(a.token, UPDATE, {
      id: s.id,
      i: { hiddenExchanges: [] },
    });
    expect(shown.body.data.updateShare.hiddenExchanges).toEqual([]);
    expect((await read(s.url)).text).toContain(HIDDEN_MARK);
    await app.gql(a.token, UPDATE, { id: s.id, i: { hiddenExchanges: [2] } });
    expect((await read(s.url)).text).not.toContain(HIDDEN_MARK);

    expect((await upload(a, 'gsh-upd', SID(3), transcript('_**User**_\n\nA LATER QUESTION\n'))).status).toBe(200);
    expect((await read(s.url)).text).not.toContain('A LATER QUESTION');
    const refreshed = await app.gql(a.token, UPDATE, {
      id: s.id,
      i: { refresh: true, expiresInDays: 90 },
    });
    expect(refreshed.body.errors).toBeUndefined();
    expect(refreshed.body.data.updateShare).toMatchObject({
      exchangeCount: 4,
      hiddenExchanges: [2],
    });
    expect(Math.abs(Date.parse(refreshed.body.data.updateShare.expiresAt) - Date.now() - 90 * 86_400_000)).toBeLessThan(60_000);
    const after = await read(s.url);
    expect(after.text).toContain('A LATER QUESTION');
    expect(after.text).not.toContain(HIDDEN_MARK);
  });

  test('deleteShare: true, and the link answers 404 from the next request; it leaves the lists', async () => {
    await upload(a, 'gsh-del', SID(4));
    const s = (await app.gql(a.token, CREATE, { p: 'gsh-del', s: SID(4) })).body.data.createShare;
    expect((await read(s.url)).status).toBe(200);
    expect((await app.gql(b.token, DELETE, { id: s.id })).body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect((await read(s.url)).status).toBe(200);
    const r = await app.gql(a.token, DELETE, { id: s.id });
    expect(r.body).toEqual({ data: { deleteShare: true } });
    expect((await read(s.url)).status).toBe(404);
    const lists = await app.gql(a.token, `{ session(id: "${SID(4)}", projectId: "gsh-del") { shares { id } } shares { id } }`);
    expect(lists.body.data.session.shares).toEqual([]);
    expect(lists.body.data.shares.map((x: { id: string }) => x.id)).not.toContain(s.id);
  });
});

describe('the service’s rules, with GraphQL’s error codes', () => {
  test('expiry values, hidden numbers: VALIDATION_ERROR with the REST message; nothing is made', async () => {
    await upload(a, 'gsh-bad', SID(5));
    for (const days of [0, 2, 365, -1]) {
      const r = await app.gql(a.token, CREATE, {
        p: 'gsh-bad',
        s: SID(5),
        i: { expiresInDays: days },
      });
      expect(codeOf(r)).toBe('VALIDATION_ERROR');
      expect(r.body.errors[0].message).toBe('expiresInDays must be 1, 7, 30 or 90');
    }
    const never = await app.gql(a.token, CREATE, {
      p: 'gsh-bad',
      s: SID(5),
      i: { expiresInDays: null },
    });
    expect(codeOf(never)).toBe('VALIDATION_ERROR');
    expect(never.body.errors[0].message).toMatch(/never expire are turned off/);
    const beyond = await app.gql(a.token, CREATE, {
      p: 'gsh-bad',
      s: SID(5),
      i: { hiddenExchanges: [9] },
    });
    expect(beyond.body.errors[0].message).toMatch(/no exchange 9 \(it has 3\)/);
    expect(
      codeOf(
        await app.gql(a.token, CREATE, {
          p: 'gsh-bad',
          s: SID(5),
          i: { hiddenExchanges: [0] },
        }),
      ),
    ).toBe('VALIDATION_ERROR');
    expect(
      codeOf(
        await app.gql(a.token, CREATE, {
          p: 'gsh-bad',
          s: SID(5),
          i: { audience: 'EVERYONE' },
        }),
      ),
    ).toBe('VALIDATION_ERROR');
    expect((await app.gql(a.token, `{ session(id: "${SID(5)}", projectId: "gsh-bad") { shares { id } } }`)).body.data.session.shares).toEqual([]);
  });

  test("another user's session → FORBIDDEN, unknown → NOT_FOUND; another user's link cannot be changed; a read-only key cannot share", async () => {
    await upload(a, 'gsh-own', SID(6));
    expect(codeOf(await app.gql(b.token, CREATE, { p: 'gsh-own', s: SID(6) }))).toBe('FORBIDDEN');
    expect(codeOf(await app.gql(a.token, CREATE, { p: 'gsh-own', s: SID(99) }))).toBe('NOT_FOUND');
    const s = (await app.gql(a.token, CREATE, { p: 'gsh-own', s: SID(6) })).body.data.createShare;
    const stolen = await app.gql(b.token, UPDATE, {
      id: s.id,
      i: { hiddenExchanges: [] },
    });
    expect(codeOf(stolen)).toBe('NOT_FOUND');
    expect(stolen.body.errors[0].message).toBe('Share link not found');
    expect(codeOf(await app.gql(a.token, UPDATE, { id: 'not-a-uuid', i: { refresh: true } }))).toBe('NOT_FOUND');
    expect(codeOf(await app.gql(a.token, UPDATE, { id: s.id, i: { expiresInDays: 3 } }))).toBe('VALIDATION_ERROR');
    const key = await app.request('POST', '/api/v1/keys', {
      token: a.token,
      body: { name: 'agent', scopes: ['read'] },
    });
    const ro = await app.gql(key.body.data.token, CREATE, {
      p: 'gsh-own',
      s: SID(6),
    });
    expect(ro.status).toBe(403);
    expect(codeOf(ro)).toBe('FORBIDDEN');
    // The read-only key still reads the links.
    expect((await app.gql(key.body.data.token, '{ shares { id } }')).body.data.shares.map((x: { id: string }) => x.id)).toContain(s.id);
  });

  describe('switches', () => {
    let other: TestApp | undefined;
    afterEach(async () => {
      await other?.close();
      other = undefined;
    });

    test('unmasked secrets → CONFLICT with the rules, no link made; SHARES_ALLOW_NEVER permits null', async () => {
      other = await startTestApp({
        db: app.db,
        env: {
          REDACT_SECRETS: 'report',
          SHARES_ALLOW_NEVER: 'true',
          WORKERS_ENABLED: 'false',
        },
      });
      expect((await upload(a, 'gsh-secret', SID(7), transcript(`_**User**_\n\nmy token is ${SECRET}\n`), other)).status).toBe(201);
      const r = await other.gql(a.token, CREATE, { p: 'gsh-secret', s: SID(7) });
      expect(codeOf(r)).toBe('CONFLICT');
      expect(r.body.errors[0].message).toMatch(/^Session holds unmasked secrets \(.*github-token.*\)/);
      expect(r.body.errors[0].extensions.rules).toContain('github-token');
      expect(r.text).not.toContain(SECRET);
      expect((await other.gql(a.token, '{ shares { projectId } }')).body.data.shares.map((x: { projectId: string }) => x.projectId)).not.toContain(
        'gsh-secret',
      );

      await upload(a, 'gsh-never', SID(8), transcript(), other);
      const never = await other.gql(a.token, CREATE, { p: 'gsh-never', s: SID(8), i: { expiresInDays: null } });
      expect(never.body.errors).toBeUndefined();
      expect(never.body.data.createShare.expiresAt).toBeNull();
    });

    test('SHARES=off → FORBIDDEN; SHARES=signed-in: PUBLIC refused, the default is SIGNED_IN', async () => {
      await upload(a, 'gsh-sw', SID(9));
      other = await startTestApp({
        db: app.db,
        env: { SHARES: 'off', WORKERS_ENABLED: 'false' },
      });
      const off = await other.gql(a.token, CREATE, { p: 'gsh-sw', s: SID(9) });
      expect(codeOf(off)).toBe('FORBIDDEN');
      expect(off.body.errors[0].message).toBe('Share links are turned off on this server');
      await other.close();
      other = await startTestApp({
        db: app.db,
        env: { SHARES: 'signed-in', WORKERS_ENABLED: 'false' },
      });
      expect(codeOf(await other.gql(a.token, CREATE, { p: 'gsh-sw', s: SID(9), i: { audience: 'PUBLIC' } }))).toBe('VALIDATION_ERROR');
      expect((await other.gql(a.token, CREATE, { p: 'gsh-sw', s: SID(9) })).body.data.createShare.audience).toBe('SIGNED_IN');
    });
  });
});

describe('batching', () => {
  async function measure(u: TestUser, query: string): Promise<{ n: number; data: any }> {
    // Warm-up: the first request of a key also records lastUsedAt (once per minute).
    await app.gql(u.token, '{ apiKeys { id } }');
    await new Promise((r) => setTimeout(r, 50));
    statements = 0;
    counting = true;
    const r = await app.gql(u.token, query);
    counting = false;
    expect(r.body.errors).toBeUndefined();
    return { n: statements, data: r.body.data };
  }

  async function seed(u: TestUser, prefix: string, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      expect((await upload(u, `${prefix}-${i % 3}`, SID(100 + i), '# t\n\n_**User**_\n\nq\n')).status).toBe(201);
      expect((await app.request('POST', `/api/v1/projects/${prefix}-${i % 3}/sessions/${SID(100 + i)}/shares`, { token: u.token, body: {} })).status).toBe(201);
    }
  }

  test('Session.shares and Query.shares with their sessions: the same statements for 3 links and for 30', async () => {
    const few = await app.createUser('gql-few');
    const many = await app.createUser('gql-many');
    await seed(few, 'gsh-few', 3);
    await seed(many, 'gsh-many', 30);
    const bySession = '{ sessions(limit: 50) { id shares { id url views session { id name project { name } } } } }';
    const small = await measure(few, bySession);
    const large = await measure(many, bySession);
    expect(small.data.sessions).toHaveLength(3);
    expect(large.data.sessions).toHaveLength(30);
    for (const s of large.data.sessions) {
      expect(s.shares).toHaveLength(1);
      expect(s.shares[0].session.id).toBe(s.id);
    }
    expect(large.n).toBe(small.n);
    // authentication + sessions + the links of every session + their projects
    expect(large.n).toBeLessThanOrEqual(4);

    const all = '{ shares { id sessionTitle session { id name project { name } shares { id } } } }';
    const smallAll = await measure(few, all);
    const largeAll = await measure(many, all);
    expect(smallAll.data.shares).toHaveLength(3);
    expect(largeAll.data.shares).toHaveLength(30);
    for (const s of largeAll.data.shares) expect(s.session.shares).toEqual([{ id: s.id }]);
    expect(largeAll.n).toBe(smallAll.n);
    // authentication + links + their sessions + their projects + the sessions' links
    expect(largeAll.n).toBeLessThanOrEqual(5);
  });
});
