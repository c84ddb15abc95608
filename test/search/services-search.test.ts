/**
 * The search rules that hold before the engine is asked, pinned at the service layer (no HTTP, no
 * engine running): the query and paging inputs, a cost filter refused (the index holds no costs),
 * and a team filter naming a team the caller is not in finding nothing rather than telling the
 * team exists. Ranking, scopes in the engine and the re-check of hits are tested through the doors
 * in this folder, against a real engine.
 */
import { searchSessions } from '../../src/services/search';
import { createTeam } from '../../src/services/teams';
import { again, failure, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let ada: ServiceUser;
let eve: ServiceUser;

beforeAll(async () => {
  // An engine address where nothing listens: a rule that asked the engine would fail the test.
  h = await startServices({ MEILI_URL: 'http://127.0.0.1:9' });
  ada = await h.user('ada');
  eve = await h.user('eve');
});
afterAll(() => h?.close());

const invalid = (message: string) => ({ code: 'VALIDATION_ERROR', message });

test.each([
  ['an empty query', { query: '   ' }, 'Invalid value for query: must not be empty'],
  ['a query that is not a string', { query: 42 }, 'Invalid value for query: must not be empty'],
  ['a limit of 0', { query: 'login', limit: 0 }, expect.stringMatching(/^Invalid value for limit/)],
  ['a negative offset', { query: 'login', offset: -1 }, expect.stringMatching(/^Invalid value for offset/)],
  ['a cost filter', { query: 'login', filters: { minCostUsd: 1 } }, 'minCostUsd and maxCostUsd filter session lists, not searches'],
])('%s → 400', async (_what, input, message) => {
  expect(await failure(searchSessions(again(ada), input))).toEqual(invalid(message));
});

test('a team filter naming a team the caller is not in finds nothing, as for a team that does not exist', async () => {
  const team = await createTeam(again(ada), { name: "Ada's team" });
  const unknown = '00000000-0000-4000-8000-000000000000';
  expect(await searchSessions(again(eve), { query: 'login', filters: { teamIds: [team.id] } })).toEqual({ total: 0, results: [] });
  expect(await searchSessions(again(eve), { query: 'login', filters: { teamIds: [unknown] } })).toEqual({ total: 0, results: [] });
});
