/**
 * Keys minted by keys: a key created with an expiring key expires no later than it,
 * and revoking a key revokes every key created with it (at any depth).
 */
import { startTestApp, type TestApp } from '../support/app';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
}, 60_000);

afterAll(async () => {
  await app?.close();
});

const mint = (token: string, body: Record<string, unknown>) => app.request('POST', '/api/v1/keys', { token, body });
const projects = (token: string) => app.request('GET', '/api/v1/projects', { token }).then((r) => r.status);

test('a 1-day key cannot mint a key that outlives it', async () => {
  const user = await app.createUser('mint-expiry');
  const parent = await app.newKey(user, 'one day', 1);
  const parentRow = (await app.request('GET', '/api/v1/keys', { token: user.token })).body.data.keys.find((k: any) => k.id === parent.keyId);
  const parentExpiry = Date.parse(parentRow.expiresAt);

  const forever = await mint(parent.token, { name: 'no expiry asked' });
  expect(forever.status).toBe(201);
  expect(forever.body.data.key.expiresAt).not.toBeNull();
  expect(Date.parse(forever.body.data.key.expiresAt)).toBeLessThanOrEqual(parentExpiry);

  const longer = await mint(parent.token, { name: '90 days asked', expiresInDays: 90 });
  expect(Date.parse(longer.body.data.key.expiresAt)).toBeLessThanOrEqual(parentExpiry);

  // A key without expiry mints keys with the expiry asked for.
  const free = await mint(user.token, { name: 'free' });
  expect(free.body.data.key.expiresAt).toBeNull();
});

test('revoking a key revokes the keys minted with it, and theirs; other keys stay', async () => {
  const user = await app.createUser('mint-revoke');
  const parent = await app.newKey(user, 'parent', 1);
  const child = (await mint(parent.token, { name: 'child' })).body.data;
  const grandchild = (await mint(child.token, { name: 'grandchild' })).body.data;
  expect([await projects(child.token), await projects(grandchild.token)]).toEqual([200, 200]);

  const r = await app.request('DELETE', `/api/v1/keys/${parent.keyId}`, { token: user.token });
  expect(r.status).toBe(200);
  expect([await projects(parent.token), await projects(child.token), await projects(grandchild.token)]).toEqual([401, 401, 401]);
  expect(await projects(user.token)).toBe(200);
  const keys = (await app.request('GET', '/api/v1/keys', { token: user.token })).body.data.keys;
  for (const id of [parent.keyId, child.key.id, grandchild.key.id]) expect(keys.find((k: any) => k.id === id).revokedAt).not.toBeNull();
});
