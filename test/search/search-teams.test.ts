/**
 * Search over team scopes, on the real engine.
 *
 * - `uploaderIds` is applied by the engine (documents carry the uploader's exact key), so `total`
 *   counts exactly the sessions the filter selects, as the database would.
 * - Tenant safety between owner scopes: project ids are case-sensitive (`Proj` and `proj` can
 *   belong to a team and a user, or to two teams) while the engine compares filter strings
 *   without case. Whatever one owner's entries go through (compaction, deletes, project deletes,
 *   moves), the other owner's entries stay found and counted, and nobody sees what they cannot
 *   read.
 */
import { operatorCtx, type Ctx } from '../../src/services/context';
import { createProject, moveProject } from '../../src/services/projects';
import { sessionFacets } from '../../src/services/stats';
import { addMember, createTeam, removeMember } from '../../src/services/teams';
import type { TeamRole } from '../../src/domain/teams';
import { newSessionId, startSearchHarness, type SearchHarness, randomWord } from '../support/meili-harness';

const word = () => randomWord();
const keys = (r: { results: Array<{ projectId: string; sessionId: string }> }) => r.results.map((x) => `${x.projectId}/${x.sessionId}`).sort();

let h: SearchHarness;

beforeAll(async () => {
  h = await startSearchHarness();
}, 60_000);

afterAll(async () => {
  await h?.close();
});

/** The caller as a new request: memberships are read once per request (per user object). */
const req = (c: Ctx): Ctx => ({ ...c, user: { ...c.user } });
const find = (c: Ctx, q: string, filters?: Parameters<SearchHarness['find']>[2], limit?: number, offset?: number) => h.find(req(c), q, filters, limit, offset);

/** A team whose first admin is `admin`, with further members. */
async function team(admin: Ctx, ...members: Array<[Ctx, TeamRole]>): Promise<string> {
  const { id } = await createTeam(operatorCtx(h.handles), { name: `team ${word()}` }, admin.user.id);
  for (const [c, role] of members) {
    const [{ email }] = await h.handles.reads.query<{ email: string }>('SELECT email FROM users WHERE id = ?', c.user.id);
    await addMember(operatorCtx(h.handles), id, { email, role });
  }
  return id;
}

const teamProject = (admin: Ctx, projectId: string, teamId: string) => createProject(req(admin), { id: projectId, name: projectId, teamId });

/** Both indexes applied, then everything moved into the main one (and applied). */
async function compactAll(): Promise<void> {
  await h.settle();
  await h.search.compact(0);
  await h.settle();
}

describe('memberships read per request (a context without them)', () => {
  test('a search never answers for memberships changed since the last one', async () => {
    const admin = await h.user();
    const member = await h.user();
    const w = word();
    const teamId = await team(admin, [member, 'member']);
    const P = `spec-${word()}`;
    await teamProject(admin, P, teamId);
    const id = newSessionId();
    await h.put(req(admin), P, id, { markdown: `# team\n\n${w}` });
    await h.settle();
    expect(keys(await find(member, w))).toEqual([`${P}/${id}`]);
    expect(keys(await find(member, w))).toEqual([`${P}/${id}`]);
    // Removed: the next request finds and counts nothing of the team, though the last one read it.
    await removeMember(req(admin), teamId, member.user.id);
    const gone = await find(member, w);
    expect(gone.total).toBe(0);
    expect(keys(gone)).toEqual([]);
    expect(keys(await find(member, w, { teamIds: [teamId] }))).toEqual([]);
    // Added again: found again, though the last search did not read the team.
    const [{ email }] = await h.handles.reads.query<{ email: string }>('SELECT email FROM users WHERE id = ?', member.user.id);
    await addMember(operatorCtx(h.handles), teamId, { email, role: 'viewer' });
    expect(keys(await find(member, w, { teamIds: [teamId] }))).toEqual([`${P}/${id}`]);
    expect(keys(await find(member, w))).toEqual([`${P}/${id}`]);
  }, 60_000);
});

describe('uploaderIds', () => {
  let admin: Ctx;
  let member: Ctx;
  let w: string;
  const P = 'uploaders-proj';
  const byAdmin = [newSessionId(), newSessionId(), newSessionId()];
  const byMember = [newSessionId(), newSessionId()];
  const before = newSessionId();
  const personal = newSessionId();

  beforeAll(async () => {
    admin = await h.user();
    member = await h.user();
    w = word();
    await teamProject(admin, P, await team(admin, [member, 'member']));
    for (const id of byAdmin) await h.put(req(admin), P, id, { markdown: `# admin\n\n${w}` });
    for (const id of byMember) await h.put(req(member), P, id, { markdown: `# member\n\n${w}` });
    await h.put(req(admin), 'uploaders-own', personal, { markdown: `# personal\n\n${w}` });
    // A session stored before uploaders were recorded, indexed again as such.
    await h.put(req(admin), P, before, { markdown: `# old\n\n${w}` });
    await h.handles.pool.query('UPDATE sessions SET uploadedBy = NULL WHERE id = ?', [before]);
    await h.handles.pool.query(
      "INSERT INTO search_outbox (op, userId, projectId, sessionId) SELECT 'upsert', userId, projectId, id FROM sessions WHERE id = ?",
      [before],
    );
    h.search.notify();
    await h.settle();
  }, 120_000);

  const check = async () => {
    expect((await find(admin, w)).total).toBe(7);
    expect((await find(member, w)).total).toBe(6);
    const m = await find(admin, w, { uploaderIds: [member.user.id] });
    expect(m.total).toBe(2);
    expect(keys(m)).toEqual(byMember.map((id) => `${P}/${id}`).sort());
    // The uploader's own personal session counts too (for them); the one without an uploader never does.
    const a = await find(admin, w, { uploaderIds: [admin.user.id] });
    expect(a.total).toBe(4);
    expect(keys(a)).toEqual([...byAdmin.map((id) => `${P}/${id}`), `uploaders-own/${personal}`].sort());
    const seen = await find(member, w, { uploaderIds: [admin.user.id] });
    expect([seen.total, keys(seen)]).toEqual([3, byAdmin.map((id) => `${P}/${id}`).sort()]);
    // Paged: total stays the filtered count.
    const page = await find(admin, w, { uploaderIds: [member.user.id] }, 1, 1);
    expect([page.total, page.results.length]).toEqual([2, 1]);
    expect((await find(admin, w, { uploaderIds: [member.user.id, admin.user.id] })).total).toBe(6);
    // User ids compare exactly, as in the database: another case of the id names nobody.
    expect(await find(admin, w, { uploaderIds: [member.user.id.toUpperCase()] })).toEqual({ total: 0, results: [] });
    // Combined with teamIds: the scope and the uploader both apply.
    expect((await find(admin, w, { uploaderIds: [admin.user.id], teamIds: [await teamOf(P)] })).total).toBe(3);
  };

  const teamOf = async (projectId: string) =>
    (await h.handles.pool.query<Array<{ ownerId: string }>>('SELECT ownerId FROM projects WHERE id = ?', [projectId]))[0]?.ownerId;

  test('total counts exactly the sessions the filter selects (recent index)', check, 60_000);

  test('…and once the sessions are in the main index', async () => {
    await compactAll();
    await check();
  }, 120_000);
});

describe('tenant safety of team scopes', () => {
  test("a team and a user with case-variant project ids never see or touch each other's entries", async () => {
    const admin = await h.user();
    const user = await h.user();
    const teamId = await team(admin);
    const id = newSessionId();
    const w = word();
    await teamProject(admin, 'Proj', teamId);
    await h.put(req(admin), 'Proj', id, { markdown: `# team\n\n${w}`, metadata: { tags: ['team-tag'] } });
    await h.put(req(user), 'proj', id, { markdown: `# user\n\n${w}`, metadata: { tags: ['user-tag'] } });
    await h.settle();
    const only = async (c: Ctx, key: string) => {
      const r = await find(c, w);
      expect([r.total, keys(r)]).toEqual([1, [key]]);
    };
    await only(admin, `Proj/${id}`);
    await only(user, `proj/${id}`);
    // teamIds names a team the user is not in: nothing, not even a count.
    expect(await find(user, w, { teamIds: [teamId] })).toEqual({ total: 0, results: [] });
    expect((await sessionFacets(req(user), null, 10)).tags).toEqual([{ value: 'user-tag', count: 1 }]);
    expect((await sessionFacets(req(admin), null, 10)).tags).toEqual([{ value: 'team-tag', count: 1 }]);

    // The team's session moves to the main index: its recent copy is retired, not the user's.
    await h.handles.pool.query("INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES ('compact', ?, 'Proj', ?)", [teamId, id]);
    h.search.notify();
    await h.settle();
    await only(user, `proj/${id}`);
    await only(admin, `Proj/${id}`);

    // The team deletes its session: the user's stays (and the other way round).
    await h.remove(req(admin), 'Proj', id);
    await h.settle();
    expect(await find(admin, w)).toEqual({ total: 0, results: [] });
    await only(user, `proj/${id}`);
    await h.put(req(admin), 'Proj', id, { markdown: `# team again\n\n${w}` });
    await h.remove(req(user), 'proj', id);
    await h.settle();
    await only(admin, `Proj/${id}`);
    expect(await find(user, w)).toEqual({ total: 0, results: [] });

    // Project deletes, with both in the main index.
    await h.put(req(user), 'proj', id, { markdown: `# user again\n\n${w}` });
    await compactAll();
    await h.removeProject(req(admin), 'Proj');
    await h.settle();
    expect(await find(admin, w)).toEqual({ total: 0, results: [] });
    await only(user, `proj/${id}`);
  }, 180_000);

  test("two teams with case-variant project ids, and a member of both: deletes and moves of one never affect the other's entries", async () => {
    const [a1, a2, both] = [await h.user(), await h.user(), await h.user()];
    const t1 = await team(a1, [both, 'viewer']);
    const t2 = await team(a2, [both, 'member'], [a1, 'member']);
    const id = newSessionId();
    const w = word();
    await teamProject(a1, 'Acme', t1);
    await teamProject(a2, 'acme', t2);
    await h.put(req(a1), 'Acme', id, { markdown: `# one\n\n${w}` });
    await h.put(req(a2), 'acme', id, { markdown: `# two\n\n${w}` });
    await h.settle();

    const is = async (c: Ctx, expected: string[], filters?: Parameters<SearchHarness['find']>[2]) => {
      const r = await find(c, w, filters);
      expect([r.total, keys(r)]).toEqual([expected.length, expected.sort()]);
    };
    // a1 is a member of t2 too: only a2 sees one team's session alone.
    await is(both, [`Acme/${id}`, `acme/${id}`]);
    await is(a2, [`acme/${id}`]);
    await is(both, [`acme/${id}`], { teamIds: [t2] });
    await is(both, [`Acme/${id}`], { teamIds: [t1] });

    // One team's session is compacted, then deleted: the other team's stays, in both indexes.
    await h.handles.pool.query("INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES ('compact', ?, 'Acme', ?)", [t1, id]);
    h.search.notify();
    await h.settle();
    await is(both, [`Acme/${id}`, `acme/${id}`]);
    await h.remove(req(a1), 'Acme', id);
    await h.settle();
    await is(both, [`acme/${id}`]);
    await is(a2, [`acme/${id}`]);

    // t1's project moves out to its admin (its entries under t1 go, then come back under a1):
    // t2's case-variant project is untouched, and `both` no longer reads the moved one.
    await h.put(req(a1), 'Acme', id, { markdown: `# one again\n\n${w}` });
    await compactAll();
    await moveProject(req(a1), 'Acme', { teamId: null });
    await h.settle();
    await is(both, [`acme/${id}`]);
    await is(a2, [`acme/${id}`]);
    await is(a1, [`Acme/${id}`, `acme/${id}`]);
    await is(a1, [`Acme/${id}`], { projectIds: ['Acme'] });

    // …and into t2, next to its case-variant: one scope, two projects, each counted on its own.
    await moveProject(req(a1), 'Acme', { teamId: t2 });
    await h.settle();
    await is(a2, [`Acme/${id}`, `acme/${id}`]);
    await is(both, [`Acme/${id}`, `acme/${id}`], { teamIds: [t2] });
    await is(both, [], { teamIds: [t1] });
    await is(a2, [`acme/${id}`], { projectIds: ['acme'] });

    // Deleting one of them (both in the main index) leaves the other.
    await compactAll();
    await h.removeProject(req(a2), 'acme');
    await h.settle();
    await is(a2, [`Acme/${id}`]);
    await is(both, [`Acme/${id}`]);
  }, 240_000);
});
