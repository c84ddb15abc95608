/**
 * The retention and legal-hold rules, pinned at the service layer (no HTTP): a project's owner or
 * its team's admins change its retention, a team's admins the team's; only instance administrators
 * set or lift a legal hold (on any project or team, read or not); every check comes before any
 * write; the preview lists exactly what the next sweep deletes; a hold refuses deletions.
 */
import crypto from 'node:crypto';
import { inTransaction } from '../../src/data/transaction';
import { listAudit } from '../../src/services/audit-log';
import type { Ctx } from '../../src/services/context';
import { createProject, deleteProject, getProject } from '../../src/services/projects';
import { changeProjectPolicy, changeTeamPolicy, refuseIfProjectHeld, refuseIfTeamHeld } from '../../src/services/retention';
import { retentionPreview } from '../../src/services/retention-sweep';
import { upsertSession } from '../../src/services/session-upload';
import { addMember, createTeam, getTeam } from '../../src/services/teams';
import { again, failure, FORBIDDEN, refused, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

const READ_ONLY = refused('This key is read-only');
const HOLD_SETTERS = refused('Only instance administrators can set or lift a legal hold');
const ON_HOLD = { code: 'CONFLICT', message: 'Project is on legal hold' };

let h: ServiceHarness;
let owner: ServiceUser;
let admin: ServiceUser;
let member: ServiceUser;
let viewer: ServiceUser;
let outsider: ServiceUser;
let root: ServiceUser;
let teamId: string;

/** Nothing else in the PATCH: only the policy is checked and written. */
const policyOnly = { changed: false, write: () => Promise.resolve() };
const readOnly = (ctx: ServiceUser): ServiceUser => ({ ...ctx, user: { ...ctx.user, readOnly: true } });
const setProject = (ctx: Ctx, projectId: string, input: { retentionDays?: number | null; legalHold?: boolean | null }) =>
  changeProjectPolicy(again(ctx), projectId, input, policyOnly);
const setTeam = (ctx: Ctx, id: string, input: { retentionDays?: number | null; legalHold?: boolean | null }) =>
  changeTeamPolicy(again(ctx), id, input, policyOnly);
const policyOf = async (ctx: Ctx, projectId: string) => {
  const p = await getProject(again(ctx), projectId);
  return { retentionDays: p.retentionDays, legalHold: p.legalHold };
};
const teamPolicy = async (id: string) => {
  const { team } = await getTeam(again(admin), id);
  return { retentionDays: team.retentionDays, legalHold: team.legalHold };
};

/** A session in the project last updated `days` ago. */
async function sessionAged(projectId: string, days: number, ctx: Ctx = owner): Promise<string> {
  const id = crypto.randomUUID();
  await upsertSession(again(ctx), projectId, id, { name: `${days} days old`, markdown: '_**User**_\n\nHi\n\n_**Agent**_\n\nHello\n' });
  await h.deps.db.writes.execute('UPDATE sessions SET updatedAt = UTC_TIMESTAMP(3) - INTERVAL ? DAY WHERE projectId = ? AND id = ?', days, projectId, id);
  return id;
}

const personalProject = async (name = 'Personal') => (await createProject(again(owner), { name })).id;
const teamProject = async (name = 'Shared') => (await createProject(again(admin), { name, teamId })).id;

beforeAll(async () => {
  h = await startServices({ RETENTION_DAYS: '365' });
  [owner, admin, member, viewer, outsider] = await Promise.all(['owner', 'admin', 'member', 'viewer', 'outsider'].map((n) => h.user(n)));
  root = await h.user('root', { role: 'admin' });
  teamId = (await createTeam(admin, { name: 'Team' })).id;
  await addMember(again(admin), teamId, { email: member.email, role: 'member' });
  await addMember(again(admin), teamId, { email: viewer.email, role: 'viewer' });
});
afterAll(() => h?.close());

describe("a project's retention", () => {
  test("its owner, or its team's admins, change it; null unsets it", async () => {
    const mine = await personalProject();
    expect((await setProject(owner, mine, { retentionDays: 30 })).retentionDays).toBe(30);
    const shared = await teamProject();
    expect((await setProject(admin, shared, { retentionDays: 7 })).retentionDays).toBe(7);
    expect((await setProject(admin, shared, { retentionDays: null })).retentionDays).toBeNull();
  });

  test('a member or viewer is told who may; anyone else, an instance administrator too, has no access', async () => {
    const shared = await teamProject();
    const teamAdminsOnly = refused("Only the team's admins can change this project");
    expect(await failure(setProject(member, shared, { retentionDays: 1 }))).toEqual(teamAdminsOnly);
    expect(await failure(setProject(viewer, shared, { retentionDays: 1 }))).toEqual(teamAdminsOnly);
    expect(await failure(setProject(outsider, shared, { retentionDays: 1 }))).toEqual(FORBIDDEN);
    expect(await failure(setProject(root, shared, { retentionDays: 1 }))).toEqual(FORBIDDEN);
    expect(await failure(setProject(readOnly(admin), shared, { retentionDays: 1 }))).toEqual(READ_ONLY);
    expect(await failure(setProject(owner, 'no-such-project', { retentionDays: 1 }))).toEqual({ code: 'NOT_FOUND', message: 'Project not found' });
    expect((await policyOf(admin, shared)).retentionDays).toBeNull();
  });
});

describe('a legal hold', () => {
  test('only instance administrators set or lift it, on a project they cannot read too', async () => {
    const mine = await personalProject();
    expect(await failure(setProject(owner, mine, { legalHold: true }))).toEqual(HOLD_SETTERS);
    expect(await failure(setProject(readOnly(root), mine, { legalHold: true }))).toEqual(READ_ONLY);
    expect(await setProject(root, mine, { legalHold: true })).toMatchObject({ id: mine, legalHold: true });
    expect(await failure(setProject(owner, mine, { legalHold: false }))).toEqual(HOLD_SETTERS);
    expect((await policyOf(owner, mine)).legalHold).toBe(true);
    expect((await setProject(root, mine, { legalHold: false })).legalHold).toBe(false);
    expect(await failure(setProject(root, 'no-such-project', { legalHold: true }))).toEqual({ code: 'NOT_FOUND', message: 'Project not found' });
  });

  test('legalHold null changes nothing and asks for no administrator', async () => {
    const mine = await personalProject();
    expect(await setProject(owner, mine, { retentionDays: 9, legalHold: null })).toMatchObject({ retentionDays: 9, legalHold: false });
  });

  test('every check comes before any write: a refused hold writes neither the retention nor the rest', async () => {
    const mine = await personalProject();
    let wrote = false;
    const settings = { changed: true, write: () => Promise.resolve(void (wrote = true)) };
    expect(await failure(changeProjectPolicy(again(owner), mine, { retentionDays: 5, legalHold: true }, settings))).toEqual(HOLD_SETTERS);
    expect(wrote).toBe(false);
    expect(await policyOf(owner, mine)).toEqual({ retentionDays: null, legalHold: false });
    // An administrator who cannot read the project may hold it, but not change the rest with it.
    expect(await failure(changeProjectPolicy(again(root), mine, { legalHold: true }, settings))).toEqual(FORBIDDEN);
    expect(wrote).toBe(false);
  });

  test('each change is in the audit log, one entry per setting', async () => {
    const mine = await personalProject();
    await changeProjectPolicy(again(root), mine, { legalHold: true }, policyOnly);
    await setProject(owner, mine, { retentionDays: 12 });
    const { entries } = await listAudit(again(root), { targetId: mine });
    expect(entries.map((e) => [e.action, e.actor.userId, e.detail])).toEqual([
      ['retention.set', owner.user.id, { retentionDays: 12 }],
      ['legal_hold.set', root.user.id, { legalHold: true }],
    ]);
  });

  test('a held project refuses its deletion (409), and so does a project of a held team', async () => {
    const mine = await personalProject();
    await setProject(root, mine, { legalHold: true });
    expect(await failure(inTransaction(h.deps.db, (tx) => refuseIfProjectHeld(tx, mine)))).toEqual(ON_HOLD);
    expect(await failure(deleteProject(again(owner), mine))).toEqual(ON_HOLD);
    await setProject(root, mine, { legalHold: false });
    await inTransaction(h.deps.db, (tx) => refuseIfProjectHeld(tx, mine));

    const heldTeam = (await createTeam(again(admin), { name: 'Held' })).id;
    const shared = (await createProject(again(admin), { name: 'In held team', teamId: heldTeam })).id;
    await setTeam(root, heldTeam, { legalHold: true });
    expect(await failure(inTransaction(h.deps.db, (tx) => refuseIfProjectHeld(tx, shared)))).toEqual(ON_HOLD);
    expect(await failure(inTransaction(h.deps.db, (tx) => refuseIfTeamHeld(tx, heldTeam)))).toEqual({ code: 'CONFLICT', message: 'Project is on legal hold' });
    expect(await failure(deleteProject(again(admin), shared))).toEqual(ON_HOLD);
    await setTeam(root, heldTeam, { legalHold: false });
    await deleteProject(again(admin), shared);
  });
});

describe("a team's retention and hold", () => {
  test('its admins change its retention; a member is told who may; an outsider does not learn it exists', async () => {
    await setTeam(admin, teamId, { retentionDays: 90 });
    expect((await teamPolicy(teamId)).retentionDays).toBe(90);
    expect(await failure(setTeam(member, teamId, { retentionDays: 1 }))).toEqual(refused("Only the team's admins can change the team's retention"));
    expect(await failure(setTeam(viewer, teamId, { retentionDays: 1 }))).toEqual(refused("Only the team's admins can change the team's retention"));
    expect(await failure(setTeam(outsider, teamId, { retentionDays: 1 }))).toEqual({ code: 'NOT_FOUND', message: 'Team not found' });
    expect(await failure(setTeam(root, teamId, { retentionDays: 1 }))).toEqual({ code: 'NOT_FOUND', message: 'Team not found' });
    expect((await teamPolicy(teamId)).retentionDays).toBe(90);
    await setTeam(admin, teamId, { retentionDays: null });
  });

  test("a read-only key of the team's admin changes neither its retention nor its name", async () => {
    let renamed = false;
    const rename = { changed: true, write: () => Promise.resolve(void (renamed = true)) };
    expect(await failure(changeTeamPolicy(readOnly(admin), teamId, { retentionDays: 3 }, policyOnly))).toEqual(READ_ONLY);
    expect(await failure(changeTeamPolicy(readOnly(admin), teamId, {}, rename))).toEqual(READ_ONLY);
    expect(renamed).toBe(false);
    expect((await teamPolicy(teamId)).retentionDays).toBeNull();
  });

  test('an instance administrator holds any team, a member of it or not; its admins may not', async () => {
    const t = (await createTeam(again(admin), { name: 'To hold' })).id;
    expect(await failure(setTeam(admin, t, { legalHold: true }))).toEqual(HOLD_SETTERS);
    await setTeam(root, t, { legalHold: true });
    expect((await teamPolicy(t)).legalHold).toBe(true);
    expect(await failure(setTeam(root, crypto.randomUUID(), { legalHold: true }))).toEqual({ code: 'NOT_FOUND', message: 'Team not found' });
    await setTeam(root, t, { legalHold: false });
  });
});

describe('the preview', () => {
  test("lists exactly the sessions older than the project's retention, oldest first", async () => {
    const mine = await personalProject();
    await setProject(owner, mine, { retentionDays: 30 });
    const older = await sessionAged(mine, 45);
    const old = await sessionAged(mine, 31);
    await sessionAged(mine, 29);
    await sessionAged(mine, 0);
    const preview = await retentionPreview(again(owner), mine);
    expect(preview).toMatchObject({ projectId: mine, retentionDays: 30, legalHold: false });
    expect(Date.now() - Date.parse(preview.cutoff!)).toBeGreaterThanOrEqual(30 * 86_400_000);
    expect(preview.sessions.map((s) => s.id)).toEqual([older, old]);
  });

  test("the team's retention applies when the project has none, else the instance's", async () => {
    const shared = await teamProject('Team retention');
    const due = await sessionAged(shared, 11, admin);
    await sessionAged(shared, 9, admin);
    await setTeam(admin, teamId, { retentionDays: 10 });
    try {
      const preview = await retentionPreview(again(viewer), shared);
      expect(preview.retentionDays).toBe(10);
      expect(preview.sessions.map((s) => s.id)).toEqual([due]);
      await setProject(admin, shared, { retentionDays: 20 });
      expect((await retentionPreview(again(member), shared)).sessions).toEqual([]);
    } finally {
      await setTeam(admin, teamId, { retentionDays: null });
    }
    const mine = await personalProject('Instance retention');
    const ancient = await sessionAged(mine, 400);
    await sessionAged(mine, 300);
    const preview = await retentionPreview(again(owner), mine);
    expect(preview.retentionDays).toBe(365);
    expect(preview.sessions.map((s) => s.id)).toEqual([ancient]);
  });

  test('a held project, or one with no retention at all, lists nothing and has no cutoff', async () => {
    const mine = await personalProject('Held preview');
    await setProject(owner, mine, { retentionDays: 1 });
    await sessionAged(mine, 5);
    await setProject(root, mine, { legalHold: true });
    expect(await retentionPreview(again(owner), mine)).toMatchObject({ retentionDays: 1, legalHold: true, cutoff: null, sessions: [] });
    await setProject(root, mine, { legalHold: false });
    expect((await retentionPreview(again(owner), mine)).sessions.length).toBe(1);

    const kept = await personalProject('Kept forever');
    await sessionAged(kept, 5000);
    const noDefault = { ...owner, deps: { ...owner.deps, config: { ...owner.deps.config, retentionDays: null } } };
    expect(await retentionPreview(noDefault, kept)).toMatchObject({ retentionDays: null, cutoff: null, sessions: [] });
  });

  test("the project's readers see it; anyone else does not", async () => {
    const mine = await personalProject('Private preview');
    expect(await failure(retentionPreview(again(outsider), mine))).toEqual(FORBIDDEN);
    expect(await failure(retentionPreview(again(root), mine))).toEqual(FORBIDDEN);
    expect(await failure(retentionPreview(again(owner), 'no-such-project'))).toEqual({ code: 'NOT_FOUND', message: 'Project not found' });
  });
});
