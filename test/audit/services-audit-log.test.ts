/**
 * Reading the audit log, pinned at the service layer (no HTTP): instance administrators read every
 * entry, a team's admins their teams' entries only, anyone else 403; the filters intersect with
 * what the caller may read; bad filters and cursors are refused in words; the pages walk every
 * entry once; the export checks the caller before its first batch.
 */
import { AUDIT_FORBIDDEN, exportAudit, listAudit } from '../../src/services/audit-log';
import type { AuditEntryDto } from '../../src/services/presenters/audit';
import { createProject } from '../../src/services/projects';
import { changeProjectPolicy } from '../../src/services/retention';
import { addMember, createTeam, setMemberRole } from '../../src/services/teams';
import { again, failure, refused, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

const NOT_ALLOWED = refused(AUDIT_FORBIDDEN);
const invalid = (message: string) => ({ code: 'VALIDATION_ERROR', message });

let h: ServiceHarness;
let root: ServiceUser;
let admin: ServiceUser;
let member: ServiceUser;
let viewer: ServiceUser;
let outsider: ServiceUser;
let teamId: string;
let otherTeam: string;

const ids = (entries: AuditEntryDto[]) => entries.map((e) => e.id);
const list = async (ctx: ServiceUser, query: Record<string, unknown> = {}) => (await listAudit(again(ctx), { limit: '500', ...query })).entries;
const exported = async (ctx: ServiceUser, query: Record<string, unknown> = {}) => {
  const all: AuditEntryDto[] = [];
  for await (const batch of await exportAudit(again(ctx), query)) all.push(...batch);
  return all;
};
const cursorOf = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

beforeAll(async () => {
  h = await startServices();
  root = await h.user('root', { role: 'admin' });
  [admin, member, viewer, outsider] = await Promise.all(['admin', 'member', 'viewer', 'outsider'].map((n) => h.user(n)));
  teamId = (await createTeam(admin, { name: 'Team' })).id;
  await addMember(again(admin), teamId, { email: member.email, role: 'member' });
  await addMember(again(admin), teamId, { email: viewer.email, role: 'viewer' });
  // A team the admin of the first is only a member of, and whose entries they must not read.
  otherTeam = (await createTeam(again(outsider), { name: 'Other' })).id;
  await addMember(again(outsider), otherTeam, { email: admin.email, role: 'member' });
  const project = (await createProject(again(admin), { name: 'Shared', teamId })).id;
  await changeProjectPolicy(again(admin), project, { retentionDays: 30 }, { changed: false, write: () => Promise.resolve() });
});
afterAll(() => h?.close());

describe('who reads the log', () => {
  test('an instance administrator reads every entry, those of no team too', async () => {
    const entries = await list(root);
    const actions = entries.map((e) => e.action);
    expect(actions.filter((a) => a === 'user.create').length).toBe(5);
    expect(new Set(entries.map((e) => e.teamId))).toEqual(new Set([null, teamId, otherTeam]));
    expect(ids(entries)).toEqual([...ids(entries)].sort((a, b) => Number(b) - Number(a)));
  });

  test("a team's admin reads their team's entries only, a project's entries among them", async () => {
    const entries = await list(admin);
    expect(entries.length).toBeGreaterThan(0);
    expect(new Set(entries.map((e) => e.teamId))).toEqual(new Set([teamId]));
    expect(entries.map((e) => e.action).sort()).toEqual(['member.add', 'member.add', 'retention.set', 'team.create']);
    expect(ids(entries)).toEqual(ids(await list(root, { teamId })));
  });

  test("a member, a viewer, or someone in no team at all is refused; so is a team admin asking for another team's entries", async () => {
    const loner = await h.user('loner');
    expect(await failure(listAudit(again(member), {}))).toEqual(NOT_ALLOWED);
    expect(await failure(listAudit(again(viewer), {}))).toEqual(NOT_ALLOWED);
    expect(await failure(listAudit(again(loner), {}))).toEqual(NOT_ALLOWED);
    expect(await failure(listAudit(again(admin), { teamId: otherTeam }))).toEqual(NOT_ALLOWED);
    expect(await failure(listAudit(again(admin), { teamId: '00000000-0000-4000-8000-000000000000' }))).toEqual(NOT_ALLOWED);
  });

  test('the right follows the role: a member made admin reads, an admin made member no longer does', async () => {
    const rising = await h.user('rising');
    const t = (await createTeam(again(rising), { name: 'Turns' })).id;
    const other = await h.user('other');
    await addMember(again(rising), t, { email: other.email, role: 'member' });
    expect(await failure(listAudit(again(other), {}))).toEqual(NOT_ALLOWED);
    await setMemberRole(again(rising), t, other.user.id, { role: 'admin' });
    expect(new Set((await list(other)).map((e) => e.teamId))).toEqual(new Set([t]));
    await setMemberRole(again(other), t, rising.user.id, { role: 'member' });
    expect(await failure(listAudit(again(rising), {}))).toEqual(NOT_ALLOWED);
  });

  test('a read-only key reads it (it writes nothing)', async () => {
    const ro = { ...admin, user: { ...admin.user, readOnly: true } };
    expect(ids(await list(ro))).toEqual(ids(await list(admin)));
  });
});

describe('filters', () => {
  test('they intersect, with each other and with what the caller may read', async () => {
    expect((await list(root, { action: 'user.create' })).every((e) => e.action === 'user.create')).toBe(true);
    expect((await list(admin, { action: 'user.create' })).length).toBe(0);
    const byOperator = await list(root, { actor: 'operator' });
    expect(byOperator.length).toBeGreaterThanOrEqual(5);
    expect(byOperator.every((e) => e.actor.label === 'operator' && e.actor.userId === null)).toBe(true);
    expect(ids(await list(root, { actor: admin.email }))).toEqual(ids(await list(root, { actor: admin.user.id })));
    const added = await list(admin, { action: 'member.add', targetType: 'user', targetId: member.user.id });
    expect(added.map((e) => [e.action, e.target, e.detail])).toEqual([['member.add', { type: 'user', id: member.user.id }, { role: 'member' }]]);
    expect(await list(root, { result: 'failure', teamId })).toEqual([]);
    expect(await list(root, { from: '2999-01-01T00:00:00Z' })).toEqual([]);
    expect(await list(root, { to: '2000-01-01T00:00:00+02:00' })).toEqual([]);
    expect((await list(root, { from: '2000-01-01T00:00:00Z', to: '2999-01-01T00:00:00Z' })).length).toBe((await list(root)).length);
  });

  test('a bad filter is refused in words, never read as no filter', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ result: 'maybe' }, 'Invalid value for result: must be success or failure'],
      [{ from: 'yesterday' }, 'Invalid value for from: must be an ISO 8601 timestamp (2026-01-15T10:30:00Z)'],
      [{ to: '2026-01-15' }, 'Invalid value for to: must be an ISO 8601 timestamp (2026-01-15T10:30:00Z)'],
      [{ actor: '' }, 'Invalid value for actor: must not be empty'],
      [{ action: ['sign_in', 'key.create'] }, 'Invalid value for action: must be given once'],
      [{ teamId: 'x'.repeat(37) }, 'Invalid value for teamId: at most 36 characters'],
      [{ limit: '0' }, 'Invalid value for limit: must be an integer between 1 and 500'],
      [{ limit: '501' }, 'Invalid value for limit: must be an integer between 1 and 500'],
      [{ limit: '2.5' }, 'Invalid value for limit: must be an integer between 1 and 500'],
    ];
    for (const [query, message] of cases) {
      expect([query, await failure(listAudit(again(root), query))]).toEqual([query, invalid(message)]);
    }
  });

  test('a refused caller is refused whatever the filters', async () => {
    expect(await failure(listAudit(again(member), { teamId }))).toEqual(NOT_ALLOWED);
  });
});

describe('pages', () => {
  test('walking the cursor reads every entry once, newest first, and ends with no cursor', async () => {
    const whole = ids(await list(root));
    const walked: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < whole.length; pages++) {
      const page = await listAudit(again(root), { limit: '3', ...(cursor ? { cursor } : {}) });
      expect(page.entries.length).toBeLessThanOrEqual(3);
      walked.push(...ids(page.entries));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(walked).toEqual(whole);
  });

  test('a page that holds the last entries exactly has no next cursor', async () => {
    const whole = await list(admin);
    const page = await listAudit(again(admin), { limit: String(whole.length) });
    expect(ids(page.entries)).toEqual(ids(whole));
    expect(page.nextCursor).toBeNull();
  });

  test("a team admin's cursor still reads only their team's entries", async () => {
    const first = await listAudit(again(admin), { limit: '1' });
    const rest = await listAudit(again(admin), { limit: '500', cursor: first.nextCursor });
    expect(new Set(rest.entries.map((e) => e.teamId))).toEqual(new Set([teamId]));
    expect([...ids(first.entries), ...ids(rest.entries)]).toEqual(ids(await list(admin)));
  });

  test('a cursor that is not one of ours is refused; one before the first entry is an empty last page', async () => {
    for (const cursor of ['', 'not a cursor', cursorOf('b:12'), cursorOf('a:'), cursorOf('a:-1'), cursorOf('a:1234567890123456'), 7]) {
      expect([cursor, await failure(listAudit(again(root), { cursor }))]).toEqual([cursor, invalid('Invalid cursor')]);
    }
    expect(await listAudit(again(root), { cursor: cursorOf('a:1') })).toEqual({ entries: [], nextCursor: null });
  });
});

describe('the export', () => {
  test('holds what the pages hold, under the same filters and the same rule', async () => {
    expect(ids(await exported(root))).toEqual(ids(await list(root)));
    expect(ids(await exported(admin))).toEqual(ids(await list(admin)));
    expect(ids(await exported(root, { action: 'member.add', teamId }))).toEqual(ids(await list(root, { action: 'member.add', teamId })));
  });

  test('refuses the caller and the filters before its first batch', async () => {
    expect(await failure(exportAudit(again(member), {}))).toEqual(NOT_ALLOWED);
    expect(await failure(exportAudit(again(admin), { teamId: otherTeam }))).toEqual(NOT_ALLOWED);
    expect(await failure(exportAudit(again(root), { result: 'maybe' }))).toEqual(invalid('Invalid value for result: must be success or failure'));
  });
});
