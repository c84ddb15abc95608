/**
 * The search outbox, pinned at the service layer (the search engine is not started, so index work
 * stays queued): which writes queue which work and for whom (an upload, a patch, a delete, a
 * project's delete), what the operator sees (backlog, dead rows) and the requeueing of dead work,
 * one row or all.
 */
import crypto from 'node:crypto';
import { deleteProject, createProject } from '../../src/services/projects';
import { outboxBacklog, outboxDeadCount, retryDeadIndexWork } from '../../src/services/search-outbox';
import { deleteSession, patchSession } from '../../src/services/session-changes';
import { upsertSession } from '../../src/services/session-upload';
import { again, castOf, type Cast, startServices, type ServiceHarness } from '../support/services';

let h: ServiceHarness;
let cast: Cast;

interface Work {
  op: string;
  userId: string;
  projectId: string;
  sessionId: string | null;
}

const queued = () => h.deps.db.writes.query<Work>('SELECT op, userId, projectId, sessionId FROM search_outbox ORDER BY id');
const clear = () => h.deps.db.writes.execute('DELETE FROM search_outbox');
/** Work set aside as the worker does after 10 failures. */
async function bury(work: Work): Promise<number> {
  const id = Number((await h.deps.db.writes.query<{ id: number }>('SELECT COALESCE(MAX(id), 0) + 1000 AS id FROM search_outbox_dead'))[0].id) + 1;
  await h.deps.db.writes.execute(
    'INSERT INTO search_outbox_dead (id, op, userId, projectId, sessionId, attempts, createdAt, lastError) VALUES (?, ?, ?, ?, ?, 10, NOW(3), ?)',
    id,
    work.op,
    work.userId,
    work.projectId,
    work.sessionId,
    'boom',
  );
  return id;
}
const upload = (projectId: string, sessionId = crypto.randomUUID(), ctx = cast.owner) =>
  upsertSession(again(ctx), projectId, sessionId, { name: 'Indexed', markdown: '_**User**_\n\nHi\n\n_**Agent**_\n\nHello\n' }).then(() => sessionId);

beforeAll(async () => {
  h = await startServices();
  cast = await castOf(h);
});
afterAll(() => h?.close());
beforeEach(async () => {
  await clear();
  await h.deps.db.writes.execute('DELETE FROM search_outbox_dead');
});

describe('what writes queue', () => {
  test("an upload queues an upsert of the session, under the project owner's id", async () => {
    const id = await upload(cast.personal);
    expect(await queued()).toEqual([{ op: 'upsert', userId: cast.owner.user.id, projectId: cast.personal, sessionId: id }]);
    expect(await outboxBacklog(h.operator)).toBe(1);
  });

  test("a member's upload to a team project is queued under the team's id", async () => {
    const id = await upload(cast.teamProject, undefined, cast.member);
    expect(await queued()).toEqual([{ op: 'upsert', userId: cast.teamId, projectId: cast.teamProject, sessionId: id }]);
  });

  test('a patch queues an upsert, a delete a delete', async () => {
    const id = await upload(cast.personal);
    await clear();
    await patchSession(again(cast.owner), cast.personal, id, { name: 'Renamed' });
    await deleteSession(again(cast.owner), cast.personal, id);
    expect((await queued()).map((w) => [w.op, w.sessionId])).toEqual([
      ['upsert', id],
      ['delete', id],
    ]);
  });

  test("a project's delete queues one delete_project, with no session", async () => {
    const projectId = (await createProject(again(cast.owner), { name: 'Doomed' })).id;
    await upload(projectId);
    await upload(projectId);
    await clear();
    await deleteProject(again(cast.owner), projectId);
    expect(await queued()).toEqual([{ op: 'delete_project', userId: cast.owner.user.id, projectId, sessionId: null }]);
  });

  test('a refused write queues nothing', async () => {
    await expect(upload(cast.teamProject, undefined, cast.viewer)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(upload(cast.personal, undefined, cast.outsider)).rejects.toMatchObject({ code: expect.any(String) });
    expect(await queued()).toEqual([]);
  });
});

describe('dead work', () => {
  const work = (sessionId: string): Work => ({ op: 'upsert', userId: cast.owner.user.id, projectId: cast.personal, sessionId });

  test('counted apart from the backlog', async () => {
    await bury(work(crypto.randomUUID()));
    await bury(work(crypto.randomUUID()));
    expect(await outboxDeadCount(h.operator)).toBe(2);
    expect(await outboxBacklog(h.operator)).toBe(0);
  });

  test('one row requeued by its id: the rest stay dead', async () => {
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    const id = await bury(work(a));
    await bury(work(b));
    expect(await retryDeadIndexWork(h.operator, id)).toBe(1);
    expect(await queued()).toEqual([work(a)]);
    expect(await outboxDeadCount(h.operator)).toBe(1);
  });

  test('all requeued, in the order they were queued, as fresh work', async () => {
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    await bury(work(a));
    await bury({ ...work(b), op: 'delete' });
    expect(await retryDeadIndexWork(h.operator)).toBe(2);
    expect(await queued()).toEqual([work(a), { ...work(b), op: 'delete' }]);
    expect(await h.deps.db.writes.query<{ attempts: number }>('SELECT attempts FROM search_outbox')).toEqual([{ attempts: 0 }, { attempts: 0 }]);
    expect(await outboxDeadCount(h.operator)).toBe(0);
  });

  test('an unknown id, or nothing dead, requeues nothing', async () => {
    expect(await retryDeadIndexWork(h.operator)).toBe(0);
    await bury(work(crypto.randomUUID()));
    expect(await retryDeadIndexWork(h.operator, 999_999_999)).toBe(0);
    expect(await outboxDeadCount(h.operator)).toBe(1);
    expect(await queued()).toEqual([]);
  });
});
