/**
 * GraphQL operation usage, pinned at the service layer: only instance administrators read it;
 * runs are counted per operation, client and UTC day, gathered in memory and added on flush;
 * reads sum the days of the window per operation and client, most run first; `days` is an
 * integer from 1 to 365 (30 when not given).
 */
import { addOperationCounts } from '../../src/data/graphql-usage';
import { clientNameOf, operationUsage, operationUsageRecorder } from '../../src/services/graphql-usage';
import { failure, refused, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

const ADMINS_ONLY = refused('Only instance administrators can read GraphQL usage');
const BAD_DAYS = { code: 'VALIDATION_ERROR', message: 'days must be an integer from 1 to 365' };
const DAY_MS = 86_400_000;
const dayOf = (d: Date) => d.toISOString().slice(0, 10);

let h: ServiceHarness;
let root: ServiceUser;
let member: ServiceUser;
let seq = 0;

const opId = () => `op-${process.pid}-${++seq}`;
const usageOf = async (id: string, days?: unknown) => (await operationUsage(root, days)).filter((u) => u.id === id);

beforeAll(async () => {
  h = await startServices();
  root = await h.user('root', { role: 'admin' });
  member = await h.user('member');
});
afterAll(() => h?.close());

describe('who may read usage', () => {
  test('an instance administrator reads it (with a read-only key too); a member is refused', async () => {
    expect(Array.isArray(await operationUsage(root, undefined))).toBe(true);
    expect(Array.isArray(await operationUsage({ ...root, user: { ...root.user, readOnly: true } }, undefined))).toBe(true);
    expect(await failure(operationUsage(member, undefined))).toEqual(ADMINS_ONLY);
  });

  test('a refused caller is refused before the input is looked at', async () => {
    expect(await failure(operationUsage(member, 'nonsense'))).toEqual(ADMINS_ONLY);
  });
});

describe('days', () => {
  test.each([['0'], ['366'], ['1.5'], ['abc'], [''], [-1], [['7']], [{ days: 7 }], [null]])('%p is refused', async (days) => {
    expect(await failure(operationUsage(root, days))).toEqual(BAD_DAYS);
  });

  test('1 and 365, as text or numbers, are taken', async () => {
    for (const days of ['1', 1, '365', 365]) expect(Array.isArray(await operationUsage(root, days))).toBe(true);
  });
});

describe('counting', () => {
  test('nothing reaches the database until a flush; then runs are summed per operation and client', async () => {
    const rec = operationUsageRecorder(h.deps, h.deps.logger, { periodic: false });
    const id = opId();
    const op = { id, name: 'Projects', coordinates: ['Query.projects', 'Project.name'] };
    rec.record(op, 'web');
    rec.record(op, 'web');
    rec.record(op, 'cli');
    expect(await usageOf(id)).toEqual([]);
    await rec.flush();
    expect(await usageOf(id)).toEqual([
      { id, name: 'Projects', client: 'web', count: 2, lastSeen: expect.any(Date), coordinates: ['Query.projects', 'Project.name'] },
      { id, name: 'Projects', client: 'cli', count: 1, lastSeen: expect.any(Date), coordinates: ['Query.projects', 'Project.name'] },
    ]);
    rec.record(op, 'cli');
    rec.record(op, 'cli');
    await rec.stop();
    expect((await usageOf(id)).map((u) => [u.client, u.count])).toEqual([
      ['cli', 3],
      ['web', 2],
    ]);
  });

  test('an anonymous operation is counted with no name', async () => {
    const rec = operationUsageRecorder(h.deps, h.deps.logger, { periodic: false });
    const id = opId();
    rec.record({ id, name: null, coordinates: [] }, 'unknown');
    await rec.stop();
    expect(await usageOf(id)).toEqual([{ id, name: null, client: 'unknown', count: 1, lastSeen: expect.any(Date), coordinates: [] }]);
  });

  test('a flush with nothing gathered writes nothing and does not fail', async () => {
    const rec = operationUsageRecorder(h.deps, h.deps.logger, { periodic: false });
    const before = await operationUsage(root, 365);
    await rec.flush();
    await rec.stop();
    expect(await operationUsage(root, 365)).toEqual(before);
  });
});

describe('per client and day', () => {
  test('the window counts today and the days before it, and sums the days of each client', async () => {
    const id = opId();
    const now = Date.now();
    const at = (daysAgo: number) => new Date(now - daysAgo * DAY_MS);
    const row = (client: string, daysAgo: number, count: number) => ({
      id,
      name: 'Old',
      coordinates: '["Query.session"]',
      client,
      day: dayOf(at(daysAgo)),
      count,
      lastSeen: at(daysAgo),
    });
    await addOperationCounts(h.deps.db.writes, [row('web', 0, 1), row('web', 1, 2), row('web', 9, 4), row('cli', 40, 8)]);

    expect((await usageOf(id, 1)).map((u) => [u.client, u.count])).toEqual([['web', 1]]);
    expect((await usageOf(id, 2)).map((u) => [u.client, u.count])).toEqual([['web', 3]]);
    expect((await usageOf(id, '10')).map((u) => [u.client, u.count])).toEqual([['web', 7]]);
    // 30 days when not given: the client last seen 40 days ago is not in it.
    expect((await usageOf(id)).map((u) => [u.client, u.count])).toEqual([['web', 7]]);
    expect((await usageOf(id, 41)).map((u) => [u.client, u.count])).toEqual([
      ['cli', 8],
      ['web', 7],
    ]);
    // The latest run of the client over the window.
    expect((await usageOf(id, 10))[0].lastSeen.getTime()).toBe(at(0).getTime());
  });
});

describe('the client a request names', () => {
  const named = (headers: Record<string, string>) => clientNameOf((n) => headers[n]);

  test('graphql-client-name first, then apollographql-client-name, trimmed', () => {
    expect(named({ 'graphql-client-name': ' web ', 'apollographql-client-name': 'apollo' })).toBe('web');
    expect(named({ 'apollographql-client-name': 'apollo' })).toBe('apollo');
  });

  test('none, an empty one, one too long or not printable ASCII is "unknown" (or the next header)', () => {
    expect(named({})).toBe('unknown');
    expect(named({ 'graphql-client-name': '   ' })).toBe('unknown');
    expect(named({ 'graphql-client-name': 'x'.repeat(65) })).toBe('unknown');
    expect(named({ 'graphql-client-name': 'x'.repeat(64) })).toBe('x'.repeat(64));
    expect(named({ 'graphql-client-name': 'wéb', 'apollographql-client-name': 'apollo' })).toBe('apollo');
  });
});
