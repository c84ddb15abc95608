/**
 * Live session changes' rules, pinned at the service layer (no HTTP, no GraphQL): a project filter
 * naming a project the caller cannot read is refused before anything is heard; a stream delivers
 * the changes of sessions its caller reads and nothing of others'; a deleted session comes without
 * a row; a credential revoked meanwhile ends the stream before anything more is delivered. The
 * hub is the real one, on this process's data signals.
 */
import crypto from 'node:crypto';
import { createSessionEventHub, type SessionEventHub } from '../../src/live/session-events';
import { createApiKey, revokeApiKey } from '../../src/services/keys';
import { freshContext, sessionChanges, type SessionChange } from '../../src/services/live';
import { createProject } from '../../src/services/projects';
import { deleteSession } from '../../src/services/session-changes';
import { upsertSession } from '../../src/services/session-upload';
import { again, failure, FORBIDDEN, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let hub: SessionEventHub;
let ada: ServiceUser;
let eve: ServiceUser;
let adaProject: string;
let adaOther: string;
let eveProject: string;
const open: Array<AsyncIterableIterator<SessionChange>> = [];

beforeAll(async () => {
  h = await startServices({ MEILI_URL: 'http://127.0.0.1:9' });
  hub = createSessionEventHub({ signals: h.deps.db.signals, redisUrl: null, namespace: h.db.name, logger: h.deps.logger });
  [ada, eve] = [await h.user('ada'), await h.user('eve')];
  adaProject = (await createProject(again(ada), { name: 'Ada live' })).id;
  adaOther = (await createProject(again(ada), { name: 'Ada other' })).id;
  eveProject = (await createProject(again(eve), { name: 'Eve live' })).id;
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.return?.();
});
afterAll(async () => {
  await hub?.stop();
  await h?.close();
});

async function stream(ctx: ServiceUser, projectId: string | null = null): Promise<AsyncIterableIterator<SessionChange>> {
  const s = await sessionChanges(again(ctx), hub, projectId);
  open.push(s);
  return s;
}

async function upload(ctx: ServiceUser, projectId: string): Promise<string> {
  const id = crypto.randomUUID();
  await upsertSession(again(ctx), projectId, id, { name: 'Live', markdown: '# Live\n' });
  return id;
}

test("a project filter naming another user's project is refused, an unknown one is 404", async () => {
  expect(await failure(sessionChanges(again(eve), hub, adaProject))).toEqual(FORBIDDEN);
  expect((await failure(sessionChanges(again(eve), hub, 'no-such-project'))).code).toBe('NOT_FOUND');
});

test("changes of sessions the caller reads are delivered, another user's are not", async () => {
  const changes = await stream(ada);
  await upload(eve, eveProject);
  const mine = await upload(ada, adaProject);
  const first = await changes.next();
  expect(first.done).toBe(false);
  expect(first.value).toMatchObject({ kind: 'CREATED', projectId: adaProject, sessionId: mine, session: { id: mine, name: 'Live' } });
});

test("with a project, only that project's changes; a deletion comes without a row", async () => {
  const id = await upload(ada, adaProject);
  const changes = await stream(ada, adaProject);
  await upload(ada, adaOther);
  await deleteSession(again(ada), adaProject, id);
  expect((await changes.next()).value).toMatchObject({ kind: 'DELETED', projectId: adaProject, sessionId: id, session: null });
});

test('a key revoked after the stream opened ends it before anything more is delivered', async () => {
  const { key } = await createApiKey(again(ada), { name: 'live' });
  const changes = await stream({ ...ada, user: { ...ada.user, keyId: key.id } });
  await revokeApiKey(again(ada), key.id);
  await upload(ada, adaProject);
  expect(await changes.next()).toEqual({ value: undefined, done: true });
});

test("a stream's reads forget the memberships read with its credential and go to the primary", () => {
  const ctx = { ...ada, user: { ...ada.user, memberships: '00000000-0000-4000-8000-000000000000:admin' } };
  const fresh = freshContext(ctx);
  expect('memberships' in fresh.user).toBe(false);
  expect(fresh.user.id).toBe(ada.user.id);
  expect(fresh.deps.db.reads).toBe(h.deps.db.writes);
});
