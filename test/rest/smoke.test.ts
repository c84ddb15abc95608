import { startTestApp, type TestApp } from '../support/app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

test('a user uploads a session and lists it', async () => {
  const u = await app.createUser();
  const put = await app.request('PUT', '/api/v1/projects/p1/sessions/0e6a2d7c-1111-4222-8333-444455556666', {
    token: u.token,
    body: { name: 's', markdown: '# hi' },
  });
  expect(put.status).toBe(201);
  const list = await app.request('GET', '/api/v1/projects/p1/sessions', { token: u.token });
  expect(list.body.data.sessions.map((s: any) => s.id)).toEqual(['0e6a2d7c-1111-4222-8333-444455556666']);
});
