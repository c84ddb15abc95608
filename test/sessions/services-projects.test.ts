/**
 * The access rule, pinned at the service layer (no HTTP): a personal project and a team's, as read
 * and written by its owner, a team admin, member and viewer, and an outsider; and the filters
 * that name projects, intersected with what the caller may read.
 */
import crypto from 'node:crypto';
import type { Ctx } from '../../src/services/context';
import { deleteProject, getProject, moveProject, updateProject } from '../../src/services/projects';
import { findProjectSessions, findSession, findSessions, projectSessionsPage, sessionsForProjects } from '../../src/services/session-lists';
import { upsertSession } from '../../src/services/session-upload';
import { sessionFacets } from '../../src/services/stats';
import { createInvitation, invitationsSeenBy } from '../../src/services/teams';
import { again, castOf, failure, FORBIDDEN, refused, startServices, VIEWER_READS_ONLY, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let owner: ServiceUser;
let admin: ServiceUser;
let member: ServiceUser;
let viewer: ServiceUser;
let outsider: ServiceUser;
let personal: string;
let teamProject: string;
let teamId: string;

/** Uploads a small session; its id. */
async function upload(ctx: Ctx, projectId: string, tag = 'work'): Promise<string> {
  const id = crypto.randomUUID();
  await upsertSession(again(ctx), projectId, id, { name: `session ${tag}`, markdown: `_**User**_\n\n${tag}\n`, metadata: { tags: [tag] } });
  return id;
}

beforeAll(async () => {
  h = await startServices();
  ({ owner, admin, member, viewer, outsider, personal, teamId, teamProject } = await castOf(h));
});
afterAll(() => h?.close());

describe('a personal project', () => {
  test('its owner reads and changes it; anyone else gets 403, an unknown id 404', async () => {
    expect((await getProject(owner, personal)).name).toBe('Personal');
    expect((await updateProject(owner, personal, { name: 'Mine' })).name).toBe('Mine');
    expect(await failure(getProject(outsider, personal))).toEqual(FORBIDDEN);
    expect(await failure(updateProject(outsider, personal, { name: 'Theirs' }))).toEqual(FORBIDDEN);
    expect(await failure(getProject(owner, 'no-such-project'))).toEqual({ code: 'NOT_FOUND', message: expect.stringMatching(/not found/i) });
  });

  test('an upload by someone else is refused with what to do about it', async () => {
    const f = await failure(upload(outsider, personal));
    expect(f.code).toBe('FORBIDDEN');
    expect(f.message).toMatch(new RegExp(`^Project ${personal} belongs to another account`));
  });
});

describe("a team's project, by role", () => {
  test('admin, member and viewer read it; an outsider does not', async () => {
    for (const c of [admin, member, viewer]) expect((await getProject(again(c), teamProject)).id).toBe(teamProject);
    expect(await failure(getProject(again(outsider), teamProject))).toEqual(FORBIDDEN);
  });

  test('admin and member upload into it; a viewer may not', async () => {
    await upload(admin, teamProject, 'admin');
    await upload(member, teamProject, 'member');
    expect(await failure(upload(viewer, teamProject))).toEqual(VIEWER_READS_ONLY);
  });

  test('settings, move and delete are for its admin: a member and a viewer get 403', async () => {
    for (const c of [member, viewer]) {
      expect(await failure(updateProject(again(c), teamProject, { name: 'Renamed' }))).toEqual(refused("Only the team's admins can change this project"));
    }
    expect(await failure(updateProject(again(outsider), teamProject, { name: 'Renamed' }))).toEqual(FORBIDDEN);
    expect(await failure(moveProject(again(member), teamProject, { teamId: null }))).toEqual(refused("Only the team's admins can move this project"));
    expect(await failure(deleteProject(again(viewer), teamProject))).toEqual(refused("Only the team's admins can delete this project"));
    expect((await updateProject(again(admin), teamProject, { name: 'Renamed' })).name).toBe('Renamed');
  });

  test('a read-only key of the admin changes nothing', async () => {
    const readOnly: Ctx = { ...admin, user: { ...admin.user, readOnly: true } };
    expect((await getProject(readOnly, teamProject)).id).toBe(teamProject);
    expect(await failure(updateProject(readOnly, teamProject, { name: 'RO' }))).toEqual({ code: 'FORBIDDEN', message: 'This key is read-only' });
    expect(await failure(upload(readOnly, teamProject))).toEqual({ code: 'FORBIDDEN', message: 'This key is read-only' });
  });
});

describe('filters that name projects meet what the caller reads', () => {
  test("a projectIds filter naming someone else's project finds nothing of it", async () => {
    const mine = await upload(owner, personal, 'filtered');
    const page = await findSessions(again(outsider), { projectIds: [personal] }, 'CREATED_AT_DESC', 20);
    expect(page.rows).toEqual([]);
    const own = await findSessions(again(owner), { projectIds: [personal, teamProject] }, 'CREATED_AT_DESC', 20);
    expect(own.rows.map((r) => r.id)).toEqual([mine]);
  });

  test("a project's page under a filter that leaves the project out is empty; the batched first pages likewise", async () => {
    const f = { projectIds: [personal] };
    expect((await projectSessionsPage(again(admin), teamProject, { filters: f, order: 'CREATED_AT_DESC', limit: 20 })).rows).toEqual([]);
    expect((await projectSessionsPage(again(admin), teamProject, { filters: {}, order: 'CREATED_AT_DESC', limit: 20 })).rows.length).toBeGreaterThan(0);
    const batched = await sessionsForProjects(again(admin), [teamProject, personal], f, 'CREATED_AT_DESC', 5);
    expect([...batched.values()].flat()).toEqual([]);
  });

  test('facets of one project: only of a project the caller reads (403 / 404 otherwise), before the limit is looked at', async () => {
    expect((await sessionFacets(again(member), teamProject, 10)).tags.map((t) => t.value)).toEqual(expect.arrayContaining(['admin', 'member']));
    expect(await failure(sessionFacets(again(outsider), teamProject, 10))).toEqual(FORBIDDEN);
    expect(await failure(sessionFacets(again(outsider), teamProject, 100_000))).toEqual(FORBIDDEN);
    expect((await failure(sessionFacets(again(member), 'no-such-project', 10))).code).toBe('NOT_FOUND');
  });
});

describe('reads that name a project or a team', () => {
  test("one project's sessions: someone else's project is 403, not an empty page; a session in it likewise", async () => {
    const id = await upload(owner, personal, 'named');
    expect((await findProjectSessions(again(owner), personal, { filters: {}, order: 'CREATED_AT_DESC', limit: 50 })).rows.map((r) => r.id)).toContain(id);
    expect(await failure(findProjectSessions(again(outsider), personal, { filters: {}, order: 'CREATED_AT_DESC', limit: 50 }))).toEqual(FORBIDDEN);
    expect((await findSession(again(owner), id, personal)).id).toBe(id);
    expect((await findSession(again(owner), id)).id).toBe(id);
    expect(await failure(findSession(again(outsider), id, personal))).toEqual(FORBIDDEN);
    expect((await failure(findSession(again(outsider), id))).code).toBe('NOT_FOUND');
  });

  test("a team's invitations: its admin sees them, a member and a viewer see none", async () => {
    const { invitation } = await createInvitation(again(admin), teamId, { role: 'member' }, 'http://x.test');
    expect((await invitationsSeenBy(again(admin), teamId)).map((i) => i.id)).toContain(invitation.id);
    expect(await invitationsSeenBy(again(member), teamId)).toEqual([]);
    expect(await invitationsSeenBy(again(viewer), teamId)).toEqual([]);
  });
});
