/**
 * Related sessions' rules that hold before the engine is asked, pinned at the service layer (no
 * HTTP, no engine running): the limit is checked first, the session is read through the access rule
 * like every read of a session (unknown: 404, another user's: 403), and a session without a single
 * word to search for has no related sessions rather than asking the engine for nothing. Ranking
 * against a real engine is in related-engines.test.ts.
 */
import { createProject } from '../../src/services/projects';
import { relatedSessions } from '../../src/services/related';
import { upsertSession } from '../../src/services/session-upload';
import { again, failure, FORBIDDEN, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let ada: ServiceUser;
let eve: ServiceUser;
let project: string;
const WORDY = '11111111-1111-4111-8111-111111111111';
const WORDLESS = '22222222-2222-4222-8222-222222222222';

beforeAll(async () => {
  // An engine address where nothing listens: a rule that asked the engine would fail the test.
  h = await startServices({ MEILI_URL: 'http://127.0.0.1:9' });
  [ada, eve] = [await h.user('ada'), await h.user('eve')];
  project = (await createProject(again(ada), { name: 'Related' })).id;
  await upsertSession(again(ada), project, WORDY, {
    name: 'Kubernetes ingress',
    markdown: '# Kubernetes ingress\n\nThe ingress controller drops websockets.\n',
  });
  await upsertSession(again(ada), project, WORDLESS, { name: '…', markdown: '— … —\n' });
});
afterAll(() => h?.close());

const invalidLimit = { code: 'VALIDATION_ERROR', message: 'Invalid value for limit: must be an integer between 1 and 20' };

test.each([0, 21, 2.5, -1])('a limit of %p is refused before the session is read', async (limit) => {
  expect(await failure(relatedSessions(again(ada), project, WORDY, limit))).toEqual(invalidLimit);
  expect(await failure(relatedSessions(again(eve), 'no-such-project', WORDY, limit))).toEqual(invalidLimit);
});

test("another user's session is refused, an unknown one is 404", async () => {
  expect(await failure(relatedSessions(again(eve), project, WORDY, undefined))).toEqual(FORBIDDEN);
  expect((await failure(relatedSessions(again(ada), project, '33333333-3333-4333-8333-333333333333', undefined))).code).toBe('NOT_FOUND');
  expect((await failure(relatedSessions(again(ada), 'no-such-project', WORDY, undefined))).code).toBe('NOT_FOUND');
});

test('a session without a word to search for has none, and the engine is not asked', async () => {
  expect(await relatedSessions(again(ada), project, WORDLESS, undefined)).toEqual([]);
});

test('a session with words asks the engine: an engine that is down is not an empty answer', async () => {
  expect((await failure(relatedSessions(again(ada), project, WORDY, 5))).code).toBe('SERVICE_UNAVAILABLE');
});
