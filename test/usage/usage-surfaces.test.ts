/**
 * What a session cost, shown: GraphQL `Session.usage`, REST session detail `usage`, MCP
 * `get_session`, session lists sorted and filtered by cost (GraphQL and REST), and GraphQL
 * `usage(...)` per day, model, project and user. Then the tenant matrix: a team's admin and
 * member, an outsider and an instance administrator each see the usage of exactly the sessions
 * they may read, through every one of these.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readUsage, SHIPPED_PRICES, type SessionUsage } from '../../src/domain/usage';
import { operatorCtx } from '../../src/services/context';
import { createUser } from '../../src/services/users';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { connectMcp } from '../support/mcp-client';
import { FIXTURES as FIXTURE_ROOT } from '../support/paths';

const FIXTURES = path.join(FIXTURE_ROOT, 'usage');
const CLAUDE = fs.readFileSync(path.join(FIXTURES, 'claude/projects/-work-demo/3f1c2a9e-6b1d-4c55-9a57-1d2e8f0a4b61.jsonl'), 'utf8');
const CLAUDE2 = fs.readFileSync(path.join(FIXTURES, 'claude/projects/-work-other/9a0b7c6d-2e3f-4a1b-8c9d-0e1f2a3b4c5d.jsonl'), 'utf8');
const CODEX = fs.readFileSync(path.join(FIXTURES, 'codex/rollout-2026-11-20T11-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl'), 'utf8');
const GEMINI = fs.readFileSync(path.join(FIXTURES, 'gemini/session-2026-11-20T12-00-5c1d9e7a.json'), 'utf8');
const unknownModel = (model: string, n: number) =>
  `${JSON.stringify({ type: 'assistant', requestId: `req_${model}`, message: { id: `msg_${model}`, model, usage: { input_tokens: n, output_tokens: n } } })}\n`;

let app: TestApp;
let ada: TestUser; // team admin, with a personal project
let bob: TestUser; // team member
let eve: TestUser; // outsider, with a personal project
let root: TestUser; // instance administrator, no sessions
let teamId: string;

interface Fixture {
  projectId: string;
  sessionId: string;
  by: () => TestUser;
  raw: string;
  startedAt: string;
  usage?: SessionUsage | null;
}

const TEAM = 'usage-team';
const F: Record<'teamByAda' | 'teamByBob' | 'adaClaude' | 'adaMixed' | 'adaNone' | 'adaGemini' | 'eveOwn', Fixture> = {
  teamByAda: { projectId: TEAM, sessionId: SID(101), by: () => ada, raw: CLAUDE2, startedAt: '2026-11-20T09:00:00.000Z' },
  teamByBob: { projectId: TEAM, sessionId: SID(102), by: () => bob, raw: CODEX, startedAt: '2026-11-21T09:00:00.000Z' },
  adaClaude: { projectId: 'usage-ada', sessionId: SID(103), by: () => ada, raw: CLAUDE, startedAt: '2026-11-20T10:00:00.000Z' },
  // A model without a price: tokens counted, the session's cost unknown.
  adaMixed: {
    projectId: 'usage-ada',
    sessionId: SID(104),
    by: () => ada,
    raw: CODEX + unknownModel('acme-ada-model', 7),
    startedAt: '2026-11-22T10:00:00.000Z',
  },
  adaNone: { projectId: 'usage-ada', sessionId: SID(105), by: () => ada, raw: 'no usage here\n', startedAt: '2026-11-22T11:00:00.000Z' },
  adaGemini: { projectId: 'usage-ada', sessionId: SID(106), by: () => ada, raw: GEMINI, startedAt: '2026-11-23T10:00:00.000Z' },
  // The outsider's: a model name of its own, which must reach nobody else.
  eveOwn: {
    projectId: 'usage-eve',
    sessionId: SID(107),
    by: () => eve,
    raw: CLAUDE + unknownModel('eve-secret-model', 1000),
    startedAt: '2026-11-20T12:00:00.000Z',
  },
};
const ALL = Object.values(F);

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  [ada, bob, eve] = await Promise.all(['ada', 'bob', 'eve'].map((n) => app.createUser(n)));
  const admin = await createUser(operatorCtx(app.deps.db), `root-${process.pid}-${Date.now()}@example.test`, 'Root', { role: 'admin' });
  root = { id: admin.id, email: admin.email, ...(await app.newKey(admin)) };
  const team = await app.request('POST', '/api/v1/teams', { token: ada.token, body: { name: 'Usage team' } });
  teamId = team.body.data.team.id;
  expect((await app.request('POST', `/api/v1/teams/${teamId}/members`, { token: ada.token, body: { email: bob.email, role: 'member' } })).status).toBe(201);
  expect((await app.request('POST', '/api/v1/projects', { token: ada.token, body: { id: TEAM, name: 'Usage team project', teamId } })).status).toBe(201);
  for (const f of ALL) {
    await app.upload(f.by(), f.projectId, f.sessionId, {
      name: `s ${f.sessionId}`,
      markdown: '# m',
      rawData: f.raw,
      startedAt: f.startedAt,
      endedAt: f.startedAt,
    });
    f.usage = await readUsage(f.raw, SHIPPED_PRICES);
  }
}, 120_000);
afterAll(() => app?.close());

const gql = async (u: TestUser, query: string, variables?: unknown) => {
  const r = await app.gql(u, query, variables);
  return r.body as { data?: any; errors?: Array<{ message: string; extensions?: { code?: string } }> };
};
const USAGE = 'usage { byModel { model inputTokens outputTokens cacheReadTokens cacheWriteTokens costUsd } totalTokens costUsd }';
const REPORT = 'groupBy groups { key label sessions inputTokens outputTokens cacheReadTokens cacheWriteTokens totalTokens costUsd } totalTokens costUsd';

describe('where it shows', () => {
  test('Session.usage, REST detail usage and MCP get_session: the log’s usage; null when it has none', async () => {
    for (const f of [F.adaClaude, F.adaMixed, F.adaNone, F.adaGemini, F.teamByBob]) {
      const g = await gql(ada, `query($id: ID!, $p: ID) { session(id: $id, projectId: $p) { ${USAGE} } }`, { id: f.sessionId, p: f.projectId });
      expect(g.errors).toBeUndefined();
      expect(g.data.session.usage).toEqual(f.usage);
      const r = await app.request('GET', `/api/v1/projects/${f.projectId}/sessions/${f.sessionId}`, { token: ada.token });
      expect(r.status).toBe(200);
      expect(r.body.data.session.usage).toEqual(f.usage);
    }
    expect(F.adaNone.usage).toBeNull();
    expect(F.adaMixed.usage?.costUsd).toBeNull();
    expect(F.adaMixed.usage?.byModel.find((m) => m.model === 'acme-ada-model')?.costUsd).toBeNull();

    const m = await connectMcp(app.url, ada.token);
    try {
      const got = await m.call('get_session', { projectId: F.adaClaude.projectId, sessionId: F.adaClaude.sessionId });
      expect(got.structuredContent.usage).toEqual(F.adaClaude.usage);
      expect(JSON.stringify(got.content)).toContain(`${F.adaClaude.usage!.totalTokens} tokens, $${F.adaClaude.usage!.costUsd!.toFixed(4)}`);
      const none = await m.call('get_session', { projectId: F.adaNone.projectId, sessionId: F.adaNone.sessionId });
      expect(none.structuredContent.usage).toBeNull();
    } finally {
      await m.close();
    }
  });

  /** Every session of a GraphQL connection in `order`, `first` at a time. */
  async function walk(u: TestUser, order: string, filters: Record<string, unknown> = {}, first = 2) {
    const out: Array<{ id: string; cost: number | null }> = [];
    let after: string | null = null;
    for (let i = 0; i < 20; i++) {
      const g = await gql(
        u,
        `query($o: SessionOrder, $f: SessionFilters, $n: Int, $a: String) { sessionsConnection(orderBy: $o, filters: $f, first: $n, after: $a) {
          edges { node { id usage { costUsd } } } pageInfo { hasNextPage endCursor } } }`,
        { o: order, f: filters, n: first, a: after },
      );
      expect(g.errors).toBeUndefined();
      const c = g.data.sessionsConnection;
      out.push(...c.edges.map((e: any) => ({ id: e.node.id, cost: e.node.usage?.costUsd ?? null })));
      if (!c.pageInfo.hasNextPage) return out;
      after = c.pageInfo.endCursor;
    }
    throw new Error('too many pages');
  }

  test('GraphQL lists sort by cost (no cost last going down, first going up) and filter by it, page after page', async () => {
    const readable = ALL.filter((f) => f !== F.eveOwn);
    const down = await walk(ada, 'COST_DESC');
    expect(down.map((s) => s.id).sort()).toEqual(readable.map((f) => f.sessionId).sort());
    const known = down.filter((s) => s.cost !== null);
    expect(down.slice(0, known.length)).toEqual(known);
    expect(known.map((s) => s.cost)).toEqual([...known.map((s) => s.cost)].sort((a, b) => b! - a!));
    expect(down.slice(known.length).every((s) => s.cost === null)).toBe(true);
    // Going up is going down reversed (the same keys, the sessions without a cost lowest).
    const up = await walk(ada, 'COST_ASC', {}, 1);
    expect(up).toEqual([...down].reverse());

    const cheapest = Math.min(...known.map((s) => s.cost!));
    const dearest = Math.max(...known.map((s) => s.cost!));
    const above = await walk(ada, 'COST_DESC', { minCostUsd: cheapest + 1e-9 });
    expect(above.map((s) => s.id)).toEqual(known.filter((s) => s.cost! > cheapest).map((s) => s.id));
    const below = await walk(ada, 'COST_DESC', { maxCostUsd: cheapest });
    expect(below.map((s) => s.id)).toEqual(known.filter((s) => s.cost === cheapest).map((s) => s.id));
    expect(await walk(ada, 'COST_DESC', { minCostUsd: dearest + 1 })).toEqual([]);

    for (const filters of [{ minCostUsd: -1 }, { minCostUsd: 2, maxCostUsd: 1 }]) {
      const g = await gql(ada, 'query($f: SessionFilters) { sessions(filters: $f) { id } }', { f: filters });
      expect(g.errors?.[0].extensions?.code).toBe('VALIDATION_ERROR');
    }
    const s = await gql(ada, 'query { searchSessions(query: "x", filters: { minCostUsd: 1 }) { total } }');
    expect(s.errors?.[0]).toMatchObject({ message: 'minCostUsd and maxCostUsd filter session lists, not searches', extensions: { code: 'VALIDATION_ERROR' } });
  });

  test('REST lists: orderBy and minCostUsd / maxCostUsd, cursors of their order; bad values → 400', async () => {
    const list = (q: string) => app.request('GET', `/api/v1/projects/usage-ada/sessions?${q}`, { token: ada.token });
    const ids: string[] = [];
    let cursor = '';
    for (let i = 0; i < 10; i++) {
      const r = await list(`orderBy=COST_DESC&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.data.total).toBe(4);
      ids.push(...r.body.data.sessions.map((x: { id: string }) => x.id));
      if (!r.body.data.nextCursor) break;
      cursor = r.body.data.nextCursor;
    }
    // Claude's log costs more than Gemini's; the two without a known cost come last.
    expect(ids.slice(0, 2)).toEqual([F.adaClaude, F.adaGemini].sort((a, b) => b.usage!.costUsd! - a.usage!.costUsd!).map((f) => f.sessionId));
    expect(ids.slice(2).sort()).toEqual([F.adaMixed.sessionId, F.adaNone.sessionId].sort());

    const min = Math.min(F.adaClaude.usage!.costUsd!, F.adaGemini.usage!.costUsd!);
    const r = await list(`minCostUsd=${(min + 1e-6).toFixed(6)}`);
    expect(r.status).toBe(200);
    expect(r.body.data.total).toBe(1);
    const one = await list(`maxCostUsd=${min.toFixed(12)}&orderBy=COST_ASC`);
    expect(one.body.data.sessions.length).toBeLessThanOrEqual(1);

    // A cursor of another order, and values that are not a cost or an order.
    expect((await list(`orderBy=COST_ASC&cursor=${cursor}`)).status).toBe(400);
    for (const q of ['orderBy=cost', 'minCostUsd=-1', 'minCostUsd=abc', 'maxCostUsd=1e3', 'minCostUsd=2&maxCostUsd=1']) {
      const bad = await list(q);
      expect([q, bad.status, bad.body.success]).toEqual([q, 400, false]);
      expect(JSON.stringify(bad.body)).toMatch(/orderBy|minCostUsd|maxCostUsd|cost range/);
    }
  });

  test('usage(): per day, model, project and user; of projects, a team, a time range', async () => {
    const readable = ALL.filter((f) => f !== F.eveOwn);
    const total = readable.reduce((n, f) => n + (f.usage?.totalTokens ?? 0), 0);
    for (const groupBy of ['DAY', 'MODEL', 'PROJECT', 'USER']) {
      const g = await gql(ada, `query($g: UsageGrouping!) { usage(groupBy: $g) { ${REPORT} } }`, { g: groupBy });
      expect(g.errors).toBeUndefined();
      expect([groupBy, g.data.usage.totalTokens]).toEqual([groupBy, total]);
      // A model without a price leaves the whole unpriced.
      expect(g.data.usage.costUsd).toBeNull();
      if (groupBy === 'DAY') expect(g.data.usage.groups.map((x: any) => x.key)).toEqual(['2026-11-20', '2026-11-21', '2026-11-22', '2026-11-23']);
      if (groupBy === 'PROJECT') {
        expect(g.data.usage.groups.map((x: any) => [x.key, x.label, x.sessions]).sort()).toEqual([
          ['usage-ada', 'usage-ada', 3],
          [TEAM, 'Usage team project', 2],
        ]);
      }
      if (groupBy === 'USER')
        expect(g.data.usage.groups.map((x: any) => [x.key, x.label]).sort()).toEqual(
          [
            [ada.id, 'ada'],
            [bob.id, 'bob'],
          ].sort(),
        );
      if (groupBy === 'MODEL') {
        const acme = g.data.usage.groups.find((x: any) => x.key === 'acme-ada-model');
        expect(acme).toMatchObject({ inputTokens: 7, outputTokens: 7, costUsd: null, sessions: 1 });
        const priced = g.data.usage.groups.filter((x: any) => x.costUsd !== null);
        expect(priced.map((x: any) => x.costUsd)).toEqual([...priced.map((x: any) => x.costUsd)].sort((a: number, b: number) => b - a));
      }
    }
    const team = await gql(ada, `query($t: ID) { usage(teamId: $t, groupBy: MODEL) { ${REPORT} } }`, { t: teamId });
    expect(team.data.usage.totalTokens).toBe(F.teamByAda.usage!.totalTokens + F.teamByBob.usage!.totalTokens);
    expect(team.data.usage.costUsd).toBeCloseTo(F.teamByAda.usage!.costUsd! + F.teamByBob.usage!.costUsd!, 10);
    const day = await gql(
      ada,
      `query { usage(projectIds: ["usage-ada"], from: "2026-11-23T00:00:00Z", to: "2026-11-23T23:59:59Z", groupBy: DAY) { ${REPORT} } }`,
    );
    expect(day.data.usage.groups).toHaveLength(1);
    expect(day.data.usage.groups[0]).toMatchObject({ key: '2026-11-23', sessions: 1, totalTokens: F.adaGemini.usage!.totalTokens });
    expect(day.data.usage.costUsd).toBeCloseTo(F.adaGemini.usage!.costUsd!, 10);

    for (const bad of ['usage(groupBy: DAY, from: "yesterday")', 'usage(groupBy: DAY, from: "2026-11-23T00:00:00Z", to: "2026-11-22T00:00:00Z")']) {
      const g = await gql(ada, `query { ${bad} { totalTokens } }`);
      expect(g.errors?.[0].extensions?.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('tenant matrix: only the usage of sessions the caller reads', () => {
  type Caller = { name: string; user: () => TestUser; reads: Fixture[]; instance?: boolean };
  const CALLERS: Caller[] = [
    { name: 'team admin', user: () => ada, reads: [F.teamByAda, F.teamByBob, F.adaClaude, F.adaMixed, F.adaNone, F.adaGemini] },
    { name: 'team member', user: () => bob, reads: [F.teamByAda, F.teamByBob] },
    { name: 'outsider', user: () => eve, reads: [F.eveOwn] },
    { name: 'instance admin', user: () => root, reads: [], instance: true },
  ];
  const modelsOf = (fs: Fixture[]) => [...new Set(fs.flatMap((f) => f.usage?.byModel.map((m) => m.model) ?? []))].sort();

  test.each(CALLERS)('$name: usage() per grouping, Session.usage, REST, MCP, cost lists', async ({ user, reads, instance }) => {
    const u = user();
    const unreadable = ALL.filter((f) => !reads.includes(f));
    const tokens = reads.reduce((n, f) => n + (f.usage?.totalTokens ?? 0), 0);
    for (const groupBy of ['DAY', 'MODEL', 'PROJECT', 'USER']) {
      const g = await gql(u, `query($g: UsageGrouping!) { usage(groupBy: $g) { ${REPORT} } }`, { g: groupBy });
      expect(g.errors).toBeUndefined();
      expect([groupBy, g.data.usage.totalTokens]).toEqual([groupBy, tokens]);
      const keys = g.data.usage.groups.map((x: any) => x.key);
      if (groupBy === 'MODEL') expect(keys.sort()).toEqual(modelsOf(reads));
      if (groupBy === 'PROJECT') expect(keys.sort()).toEqual([...new Set(reads.filter((f) => f.usage).map((f) => f.projectId))].sort());
      if (groupBy === 'USER') expect(keys.sort()).toEqual([...new Set(reads.filter((f) => f.usage).map((f) => f.by().id))].sort());
      if (unreadable.includes(F.eveOwn)) expect(JSON.stringify(g.data)).not.toMatch(/eve-secret-model|usage-eve/);
    }
    // The whole instance: administrators only, and then every session.
    const all = await gql(u, `query { usage(groupBy: MODEL, instance: true) { ${REPORT} } }`);
    if (instance) {
      expect(all.data.usage.totalTokens).toBeGreaterThanOrEqual(ALL.reduce((n, f) => n + (f.usage?.totalTokens ?? 0), 0));
      expect(all.data.usage.groups.map((x: any) => x.key)).toContain('eve-secret-model');
    } else {
      expect(all.errors?.[0].extensions?.code).toBe('FORBIDDEN');
      expect(JSON.stringify(all)).not.toContain('eve-secret-model');
    }

    for (const f of unreadable) {
      // Another's project by id answers as a read of that project does, with nothing of its usage.
      const named = await gql(u, `query($p: [ID!]) { usage(projectIds: $p, groupBy: MODEL) { ${REPORT} } }`, { p: [f.projectId] });
      const project = await gql(u, 'query($p: ID!) { project(id: $p) { id } }', { p: f.projectId });
      expect(named.errors?.[0].extensions?.code).toBe(project.errors?.[0].extensions?.code);
      expect(named.data?.usage ?? null).toBeNull();
      // The session: not found, its usage with it.
      const s = await gql(u, `query($id: ID!, $p: ID) { session(id: $id, projectId: $p) { ${USAGE} } }`, { id: f.sessionId, p: f.projectId });
      expect(s.data?.session ?? null).toBeNull();
      const bare = await gql(u, `query($id: ID!) { session(id: $id) { ${USAGE} } }`, { id: f.sessionId });
      expect(bare.data?.session ?? null).toBeNull();
      const r = await app.request('GET', `/api/v1/projects/${f.projectId}/sessions/${f.sessionId}`, { token: u.token });
      expect([403, 404]).toContain(r.status);
      expect(r.text).not.toMatch(/usage|costUsd|Tokens/);
      // A list of the project, with or without cost parameters: the same refusal.
      const plain = await app.request('GET', `/api/v1/projects/${f.projectId}/sessions`, { token: u.token });
      const byCost = await app.request('GET', `/api/v1/projects/${f.projectId}/sessions?orderBy=COST_DESC&minCostUsd=0`, { token: u.token });
      expect([byCost.status, byCost.body.error]).toEqual([plain.status, plain.body.error]);
    }
    // Another team by id: as one that does not exist.
    if (!reads.includes(F.teamByAda)) {
      const other = await gql(u, 'query($t: ID) { usage(teamId: $t, groupBy: DAY) { totalTokens } }', { t: teamId });
      const ghost = await gql(u, 'query($t: ID) { usage(teamId: $t, groupBy: DAY) { totalTokens } }', { t: '00000000-0000-4000-8000-000000000000' });
      expect(other.errors?.[0].extensions?.code).toBe('NOT_FOUND');
      expect(other.errors?.[0].message).toBe(ghost.errors?.[0].message);
    }

    // Lists by cost hold the readable sessions only, filtered or not.
    for (const filters of [{}, { minCostUsd: 0 }]) {
      const g = await gql(u, 'query($f: SessionFilters) { sessions(orderBy: COST_DESC, filters: $f, limit: 200) { id projectId usage { costUsd } } }', {
        f: filters,
      });
      const want = reads.filter((f) => !('minCostUsd' in filters) || f.usage?.costUsd != null).map((f) => f.sessionId);
      expect(g.data.sessions.map((s: any) => s.id).sort()).toEqual(want.sort());
    }

    const m = await connectMcp(app.url, u.token);
    try {
      for (const f of unreadable) {
        const got = await m.call('get_session', { projectId: f.projectId, sessionId: f.sessionId });
        expect(got.isError).toBe(true);
        expect(JSON.stringify(got)).not.toMatch(/costUsd|Tokens|eve-secret-model/);
      }
      for (const f of reads) {
        const got = await m.call('get_session', { projectId: f.projectId, sessionId: f.sessionId });
        expect(got.structuredContent.usage).toEqual(f.usage);
      }
    } finally {
      await m.close();
    }
  });
});
