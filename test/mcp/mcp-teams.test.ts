/**
 * The MCP endpoint's tenant matrix with team projects, driven through the official SDK's client:
 * a team's admin, member and viewer, an outsider and a user with a personal project of their own
 * call every tool and read both resource templates over every project and session there is.
 * Each caller sees exactly the projects they may read (the team's for all three roles, their own
 * personal ones); of any other project nothing appears in a tool result, a resource or an error:
 * a project the caller cannot read answers exactly as an id that does not exist. A member removed
 * from the team loses the team's sessions from the next request on, search included.
 */
import crypto from 'node:crypto';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { eventually } from '../support/eventually';
import { connectMcp, type McpClient } from '../support/mcp-client';

/** A word every session has, so that one search and one question reach all of them. */
const COMMON = 'orbit telescope';
const exchange = (q: string, a: string) => `_**User**_\n\n${q}\n\n---\n\n_**Agent (claude-sonnet)**_\n\n${a}\n\n---\n\n`;

interface Fixture {
  projectId: string;
  projectName: string;
  sessionId: string;
  /** A word only this session has: it must never reach anyone who cannot read the project. */
  marker: string;
  title: string;
}

let app: TestApp;
let ada: TestUser; // team admin, with a personal project too
let bob: TestUser; // team member
let val: TestUser; // team viewer
let eve: TestUser; // outsider with a personal project
let uma: TestUser; // another user with a personal project
let teamId: string;

const T = 'mcp-team-orbit';
const F: Record<'teamByAda' | 'teamByBob' | 'adaOwn' | 'eveOwn' | 'umaOwn', Fixture> = {
  teamByAda: { projectId: T, projectName: 'Orbit team', sessionId: crypto.randomUUID(), marker: 'quasarfjord', title: 'Team notes by the admin' },
  teamByBob: { projectId: T, projectName: 'Orbit team', sessionId: crypto.randomUUID(), marker: 'quasarglade', title: 'Team notes by the member' },
  adaOwn: { projectId: 'mcp-ada-private', projectName: 'Ada private', sessionId: crypto.randomUUID(), marker: 'nebulahollow', title: 'Ada personal notes' },
  eveOwn: { projectId: 'mcp-eve-private', projectName: 'Eve private', sessionId: crypto.randomUUID(), marker: 'cometmarsh', title: 'Eve personal notes' },
  umaOwn: { projectId: 'mcp-uma-private', projectName: 'Uma private', sessionId: crypto.randomUUID(), marker: 'pulsarridge', title: 'Uma personal notes' },
};
const ALL = Object.values(F);
const PROJECTS = [...new Set(ALL.map((f) => f.projectId))];
/** A project id and a session id that do not exist: the answer an unreadable project must equal. */
const GHOST_P = 'mcp-no-such-project';
const GHOST_S = crypto.randomUUID();

/** Every string of a fixture that must not reach a caller who cannot read its project. */
const secretsOf = (f: Fixture) => [f.projectId, f.projectName, f.sessionId, f.marker, f.title];

const rest = (u: TestUser, method: string, path: string, body?: unknown) => app.request(method, path, { token: u.token, body });

async function upload(u: TestUser, f: Fixture) {
  const r = await rest(u, 'PUT', `/api/v1/projects/${f.projectId}/sessions/${f.sessionId}`, {
    name: f.title,
    projectName: f.projectName,
    markdown:
      `# ${f.title}\n\n` +
      exchange(`Where is the ${COMMON}?`, `It points at ${f.marker}.`) +
      exchange('And then?', `Recalibrate the ${COMMON} near ${f.marker}.`),
    rawData: `{"note":"${f.marker} raw log"}\n`,
  });
  expect([f.projectId, r.status]).toEqual([f.projectId, 201]);
}

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  [ada, bob, val, eve, uma] = await Promise.all(['ada', 'bob', 'val', 'eve', 'uma'].map((n) => app.createUser(n)));
  const team = await rest(ada, 'POST', '/api/v1/teams', { name: 'Orbiters' });
  expect(team.status).toBe(201);
  teamId = team.body.data.team.id;
  for (const [u, role] of [
    [bob, 'member'],
    [val, 'viewer'],
  ] as const) {
    expect((await rest(ada, 'POST', `/api/v1/teams/${teamId}/members`, { email: u.email, role })).status).toBe(201);
  }
  expect((await rest(ada, 'POST', '/api/v1/projects', { id: T, name: 'Orbit team', teamId })).status).toBe(201);
  await upload(ada, F.teamByAda);
  await upload(bob, F.teamByBob);
  await upload(ada, F.adaOwn);
  await upload(eve, F.eveOwn);
  await upload(uma, F.umaOwn);
  // Findable: every owner's search sees their sessions.
  await eventually(
    'every session to be searchable',
    async () => {
      const counts = await Promise.all(
        [ada, eve, uma].map(async (u) => {
          const m = await connectMcp(app.url, u.token);
          try {
            return (await m.call('search_sessions', { query: COMMON, limit: 20 })).structuredContent?.total ?? 0;
          } finally {
            await m.close();
          }
        }),
      );
      return counts.join() === '3,1,1';
    },
    60_000,
  );
}, 180_000);
afterAll(() => app?.close());

type Caller = { name: string; user: () => TestUser; reads: Fixture[] };
const CALLERS: Caller[] = [
  { name: 'team admin', user: () => ada, reads: [F.teamByAda, F.teamByBob, F.adaOwn] },
  { name: 'team member', user: () => bob, reads: [F.teamByAda, F.teamByBob] },
  { name: 'team viewer', user: () => val, reads: [F.teamByAda, F.teamByBob] },
  { name: 'outsider', user: () => eve, reads: [F.eveOwn] },
  { name: 'another user', user: () => uma, reads: [F.umaOwn] },
];

const textOf = (r: any) => (r.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n');
/** What a call answered, all of it: the text content and the structured content. */
const everything = (r: any) => `${textOf(r)}\n${JSON.stringify(r.structuredContent ?? null)}`;
const sameShape = (message: string, ids: Array<[string, string]>) => ids.reduce((s, [id, as]) => s.split(id).join(as), message);

describe.each(CALLERS)('$name', ({ user, reads }) => {
  let mcp: McpClient;
  const readable = new Set(reads.map((f) => f.projectId));
  const hidden = ALL.filter((f) => !readable.has(f.projectId));
  /** Fails when any string of a project the caller cannot read is in `seen`. */
  const expectNothingHidden = (what: string, seen: string) => {
    for (const f of hidden) for (const s of secretsOf(f)) expect([what, seen.includes(s) ? s : null]).toEqual([what, null]);
  };

  beforeAll(async () => {
    mcp = await connectMcp(app.url, user().token);
  });
  afterAll(() => mcp?.close());

  test('list_projects and list_sessions list exactly the readable projects and sessions (team projects with the team as owner)', async () => {
    const projects = await mcp.call('list_projects', { limit: 100 });
    expect(projects.isError).toBeFalsy();
    expect(projects.structuredContent.projects.map((p: any) => p.id).sort()).toEqual([...readable].sort());
    const team = projects.structuredContent.projects.find((p: any) => p.id === T);
    if (readable.has(T)) expect(team).toMatchObject({ name: 'Orbit team', owner: { type: 'team', id: teamId, name: 'Orbiters' }, sessionCount: 2 });
    expectNothingHidden('list_projects', everything(projects));

    const sessions = await mcp.call('list_sessions', { limit: 50 });
    expect(sessions.structuredContent.sessions.map((s: any) => s.sessionId).sort()).toEqual(reads.map((f) => f.sessionId).sort());
    expectNothingHidden('list_sessions', everything(sessions));
    for (const projectId of readable) {
      const own = await mcp.call('list_sessions', { projectId });
      expect(own.structuredContent.sessions.map((s: any) => s.sessionId).sort()).toEqual(
        reads
          .filter((f) => f.projectId === projectId)
          .map((f) => f.sessionId)
          .sort(),
      );
    }
  });

  test('search_sessions and gather_context find only readable sessions, also when asked for hidden projects or their words', async () => {
    const all = await mcp.call('search_sessions', { query: COMMON, limit: 20 });
    expect(all.isError).toBeFalsy();
    expect(all.structuredContent.results.map((r: any) => r.sessionId).sort()).toEqual(reads.map((f) => f.sessionId).sort());
    expect(all.structuredContent.total).toBe(reads.length);
    for (const r of all.structuredContent.results) expect(r.exchanges.length).toBeGreaterThan(0);
    const named = await mcp.call('search_sessions', { query: COMMON, projectIds: PROJECTS, limit: 20 });
    expect(named.structuredContent.total).toBe(reads.length);
    const gathered = await mcp.call('gather_context', { question: `where is the ${COMMON}`, maxSessions: 10 });
    expect(gathered.isError).toBeFalsy();
    expect([...new Set(gathered.structuredContent.excerpts.map((x: any) => x.sessionId))].sort()).toEqual(reads.map((f) => f.sessionId).sort());
    const seen = [all, named, gathered].map(everything);

    for (const f of hidden) {
      // The hidden session's own word, alone and restricted to its project: nothing, total 0.
      for (const args of [{ query: f.marker }, { query: f.marker, projectIds: [f.projectId] }, { query: COMMON, projectIds: [f.projectId] }]) {
        const r = await mcp.call('search_sessions', args);
        expect([args, r.isError ?? false, r.structuredContent?.results, r.structuredContent?.total]).toEqual([args, false, [], 0]);
        seen.push(everything(r).split(JSON.stringify(args.query)).join(''));
      }
      const g = await mcp.call('gather_context', { question: `what about ${f.marker}`, projectIds: [f.projectId] });
      expect(g.structuredContent.excerpts).toEqual([]);
      const ghost = await mcp.call('gather_context', { question: `what about ${f.marker}`, projectIds: [GHOST_P] });
      expect(textOf(g)).toBe(textOf(ghost));
    }
    // Nothing hidden in any answer (the hidden words the caller typed are taken out of the echo above).
    for (const s of seen) expectNothingHidden('search', s);
  });

  test('reads by id: readable sessions answer; hidden ones answer exactly as ids that do not exist', async () => {
    const TOOLS: Array<[string, (f: { projectId: string; sessionId: string }) => Record<string, unknown>]> = [
      ['get_session', (f) => ({ projectId: f.projectId, sessionId: f.sessionId })],
      ['read_exchanges', (f) => ({ projectId: f.projectId, sessionId: f.sessionId, from: 2, count: 1 })],
      ['read_raw', (f) => ({ projectId: f.projectId, sessionId: f.sessionId })],
      ['list_sessions', (f) => ({ projectId: f.projectId })],
    ];
    for (const f of reads) {
      const g = await mcp.call('get_session', { projectId: f.projectId, sessionId: f.sessionId });
      expect(g.structuredContent).toMatchObject({ projectId: f.projectId, sessionId: f.sessionId, title: f.title, totalExchanges: 2 });
      const e = await mcp.call('read_exchanges', { projectId: f.projectId, sessionId: f.sessionId, from: 2, count: 1 });
      expect(e.structuredContent.exchanges[0].markdown).toContain(f.marker);
      const raw = await mcp.call('read_raw', { projectId: f.projectId, sessionId: f.sessionId });
      expect(raw.structuredContent.text).toBe(`{"note":"${f.marker} raw log"}\n`);
    }
    for (const f of hidden) {
      for (const [tool, args] of TOOLS) {
        const r = await mcp.call(tool, args(f));
        // The same session id in a project that does not exist, and a session that does not exist in it.
        const ghost = await mcp.call(tool, args({ projectId: GHOST_P, sessionId: f.sessionId }));
        const ghostSession = await mcp.call(tool, args({ projectId: f.projectId, sessionId: GHOST_S }));
        expect([tool, r.isError, ghost.isError, ghostSession.isError]).toEqual([tool, true, true, true]);
        expect([tool, sameShape(textOf(r), [[f.projectId, '<project>']])]).toEqual([tool, sameShape(textOf(ghost), [[GHOST_P, '<project>']])]);
        expect([tool, sameShape(textOf(ghostSession), [[GHOST_S, f.sessionId]])]).toEqual([tool, textOf(r)]);
        expect(r.structuredContent).toBeUndefined();
        // The ids the caller sent are echoed; nothing else of the project.
        expectNothingHidden(
          tool,
          sameShape(everything(r), [
            [f.projectId, ''],
            [f.sessionId, ''],
          ]),
        );
      }
    }
  });

  test('resources: readable sessions and exchanges read; hidden ones are the not-found error of ids that do not exist', async () => {
    const uris = (p: string, s: string) => [`archive://projects/${p}/sessions/${s}`, `archive://projects/${p}/sessions/${s}/exchanges/2`];
    for (const f of reads) {
      const [session, ex] = uris(f.projectId, f.sessionId);
      const meta = JSON.parse(String(((await mcp.client.readResource({ uri: session })).contents[0] as { text: string }).text));
      expect(meta).toMatchObject({ projectId: f.projectId, sessionId: f.sessionId, title: f.title });
      expect(((await mcp.client.readResource({ uri: ex })).contents[0] as { text: string }).text).toContain(f.marker);
    }
    const errorOf = (uri: string) =>
      mcp.client.readResource({ uri }).then(
        () => null,
        (err: { code?: number; message?: string; data?: unknown }) => ({ code: err.code, message: err.message, data: err.data }),
      );
    for (const f of hidden) {
      const mine = uris(f.projectId, f.sessionId);
      const ghost = uris(GHOST_P, GHOST_S);
      for (let i = 0; i < mine.length; i++) {
        const got = await errorOf(mine[i]);
        const expected = await errorOf(ghost[i]);
        expect(got).toMatchObject({ code: -32002 });
        expect(JSON.parse(sameShape(JSON.stringify(got), [[mine[i], '<uri>']]))).toEqual(
          JSON.parse(sameShape(JSON.stringify(expected), [[ghost[i], '<uri>']])),
        );
        expectNothingHidden('resource', sameShape(JSON.stringify(got), [[mine[i], '']]));
      }
    }
  });
});

test("a member removed from the team loses the team's project and sessions from the next request on, over MCP", async () => {
  const m = await connectMcp(app.url, val.token);
  try {
    const before = await m.call('search_sessions', { query: COMMON });
    expect(before.structuredContent.total).toBe(2);
    expect((await rest(ada, 'DELETE', `/api/v1/teams/${teamId}/members/${val.id}`)).status).toBe(200);
    const search = await m.call('search_sessions', { query: COMMON });
    expect([search.structuredContent.results, search.structuredContent.total]).toEqual([[], 0]);
    expect((await m.call('list_projects')).structuredContent.projects).toEqual([]);
    expect((await m.call('gather_context', { question: COMMON })).structuredContent.excerpts).toEqual([]);
    const g = await m.call('get_session', { projectId: T, sessionId: F.teamByAda.sessionId });
    expect(g.isError).toBe(true);
    await expect(m.client.readResource({ uri: `archive://projects/${T}/sessions/${F.teamByAda.sessionId}` })).rejects.toMatchObject({ code: -32002 });
  } finally {
    await m.close();
  }
});
