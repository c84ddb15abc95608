import { startTestApp, type TestApp, type TestUser } from '../support/app';

/**
 * Inputs parsed by the REST zod schemas (src/api/schemas/) keep the documented exact 400
 * messages. Pinned here for every input moved from a hand-written validator onto a schema.
 */

let app: TestApp;
let user: TestUser;
beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  user = await app.createUser('schemas');
});
afterAll(async () => {
  await app?.close();
});

describe('POST /keys', () => {
  const post = (body: unknown) => app.request('POST', '/api/v1/keys', { token: user.token, body });

  test.each([
    ['an array body', [], 'Request body must be a JSON object'],
    ['no name', {}, 'Missing required field: name'],
    ['a null name', { name: null }, 'Missing required field: name'],
    ['a number as name', { name: 5 }, 'Invalid type for name: expected a string'],
    ['an empty name', { name: '' }, 'Invalid value for name: must not be empty'],
    ['a name over 100 characters', { name: 'x'.repeat(101) }, 'Invalid value for name: must be 1-100 characters'],
    ['a lone surrogate', { name: 'a\ud800b' }, 'Invalid value for name: not valid Unicode text'],
    ['a fractional expiresInDays', { name: 'k', expiresInDays: 1.5 }, 'Invalid type for expiresInDays: expected an integer'],
    ['a string expiresInDays', { name: 'k', expiresInDays: '3' }, 'Invalid type for expiresInDays: expected an integer'],
    ['expiresInDays 0', { name: 'k', expiresInDays: 0 }, 'Invalid value for expiresInDays: must be between 1 and 3650'],
    ['expiresInDays 3651', { name: 'k', expiresInDays: 3651 }, 'Invalid value for expiresInDays: must be between 1 and 3650'],
  ])('%s → 400 with the documented message', async (_what, body, message) => {
    const r = await post(body);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ success: false, error: message });
  });

  test('lengths count code points; null expiresInDays means no expiry; unknown fields are ignored', async () => {
    const emoji = await post({ name: '😀'.repeat(100), other: true });
    expect(emoji.status).toBe(201);
    expect(emoji.body.data.key.name).toBe('😀'.repeat(100));
    const forever = await post({ name: 'forever', expiresInDays: null });
    expect(forever.status).toBe(201);
    expect(forever.body.data.key.expiresAt).toBeNull();
    const month = await post({ name: 'month', expiresInDays: 30 });
    expect(month.status).toBe(201);
    const days = (Date.parse(month.body.data.key.expiresAt) - Date.parse(month.body.data.key.createdAt)) / 86_400_000;
    expect(days).toBeCloseTo(30, 3);
  });
});
