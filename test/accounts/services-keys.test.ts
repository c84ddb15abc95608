/**
 * The API key rules, pinned at the service layer (no HTTP): a key made with another credential
 * expires no later than it, has no scope beyond it and is revoked with it; a credential no longer
 * live makes nothing; binding a key to a team needs the role admin or member there; a key's name
 * is redacted like any text.
 */
import type { Ctx } from '../../src/services/context';
import { createApiKey, listApiKeys, revokeApiKey } from '../../src/services/keys';
import { addMember, createTeam } from '../../src/services/teams';
import { again, failure, startServices, VIEWER_READS_ONLY, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let owner: ServiceUser;
const DAY = 86_400_000;
const UNAUTHENTICATED = { code: 'UNAUTHENTICATED', message: expect.any(String) };

beforeAll(async () => {
  h = await startServices({ REDACT_SECRETS: 'on' });
  owner = await h.user('owner');
});
afterAll(() => h?.close());

/** The owner's request made with key `keyId` (as authentication would set it up). */
const withKey = (keyId: string, extra: Partial<Ctx['user']> = {}): Ctx => ({ ...owner, user: { ...owner.user, keyId, ...extra } });

const keyOf = async (id: string) => (await listApiKeys(owner)).find((k) => k.id === id)!;

describe('a key made with another credential', () => {
  test('expires no later than its source, and is revoked with it at any depth', async () => {
    const root = (await createApiKey(owner, { name: 'root', expiresInDays: 7 })).key;
    const child = (await createApiKey(withKey(root.id), { name: 'child', expiresInDays: 30 })).key;
    const grandchild = (await createApiKey(withKey(child.id), { name: 'grandchild' })).key;
    expect(child.expiresAt).toBe(root.expiresAt);
    expect(grandchild.expiresAt).toBe(root.expiresAt);
    expect(Date.parse(root.expiresAt!) - Date.now()).toBeLessThanOrEqual(7 * DAY);

    await revokeApiKey(owner, root.id);
    for (const k of [root, child, grandchild]) expect((await keyOf(k.id)).revokedAt).not.toBeNull();
  });

  test("a device access token's hour bounds it, not its device session's years", async () => {
    const device = (await createApiKey(owner, { name: 'device session', expiresInDays: 3650 })).key;
    const hour = new Date(Date.now() + 3_600_000);
    const key = (await createApiKey(withKey(device.id, { credentialExpiresAt: hour }), { name: 'minted' })).key;
    expect(key.expiresAt).toBe(hour.toISOString());
  });

  test('a read-only source gives a read-only key whatever is asked', async () => {
    const source = (await createApiKey(owner, { name: 'ro', scopes: ['read'] })).key;
    const key = (await createApiKey(withKey(source.id), { name: 'asks for write', scopes: ['read', 'write'] })).key;
    expect(key.scopes).toEqual(['read']);
  });

  test('a revoked or unknown source makes nothing (401) and leaves no row', async () => {
    const source = (await createApiKey(owner, { name: 'gone' })).key;
    await revokeApiKey(owner, source.id);
    const before = (await listApiKeys(owner)).length;
    expect(await failure(createApiKey(withKey(source.id), { name: 'orphan' }))).toEqual(UNAUTHENTICATED);
    expect(await failure(createApiKey(withKey('00000000-0000-4000-8000-000000000000'), { name: 'orphan' }))).toEqual(UNAUTHENTICATED);
    expect((await listApiKeys(owner)).length).toBe(before);
  });

  test("another user's key is no source: a credential is only ever its own user's", async () => {
    const other = await h.user('other');
    const theirs = (await createApiKey(other, { name: 'theirs' })).key;
    expect(await failure(createApiKey(withKey(theirs.id), { name: 'borrowed' }))).toEqual(UNAUTHENTICATED);
  });
});

describe('keys bound to a team', () => {
  test('a team admin or member may bind a key to it; a viewer may not, and to an outsider the team does not exist', async () => {
    const admin = await h.user('team-admin');
    const member = await h.user('team-member');
    const viewer = await h.user('team-viewer');
    const outsider = await h.user('outsider');
    const team = await createTeam(again(admin), { name: 'Keys team' });
    await addMember(again(admin), team.id, { email: member.email, role: 'member' });
    await addMember(again(admin), team.id, { email: viewer.email, role: 'viewer' });

    expect((await createApiKey(again(admin), { name: 'a', teamId: team.id })).key.teamId).toBe(team.id);
    expect((await createApiKey(again(member), { name: 'm', teamId: team.id })).key.teamId).toBe(team.id);
    expect(await failure(createApiKey(again(viewer), { name: 'v', teamId: team.id }))).toEqual(VIEWER_READS_ONLY);
    expect(await failure(createApiKey(again(outsider), { name: 'o', teamId: team.id }))).toEqual({ code: 'NOT_FOUND', message: 'Team not found' });
    expect((await listApiKeys(outsider)).length).toBe(0);
  });
});

describe('inputs', () => {
  test.each([
    [{}, 'Missing required field: name'],
    [{ name: 'x', expiresInDays: 0 }, 'Invalid value for expiresInDays: must be between 1 and 3650'],
    [{ name: 'x', expiresInDays: 1.5 }, 'Invalid type for expiresInDays: expected an integer'],
    [{ name: 'x', teamId: 5 }, 'Invalid value for teamId: expected a string or null'],
  ])('%j → 400 %s', async (input, message) => {
    expect(await failure(createApiKey(owner, input))).toEqual({ code: 'VALIDATION_ERROR', message });
  });

  test("a secret in a key's name is stored masked", async () => {
    const secret = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;
    const { key } = await createApiKey(owner, { name: `deploy ${secret}` });
    expect(key.name).not.toContain(secret);
    expect((await keyOf(key.id)).name).not.toContain(secret);
  });
});
