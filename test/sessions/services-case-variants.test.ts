/**
 * Case variants of tags, models, branches and devices are different values in the lists and their
 * counts, as project ids and uploaders are (the database compares them exactly): a session tagged
 * `Tag` and one tagged `tag` are listed and counted apart, at the service layer (no HTTP; the
 * search index's side is test/search/search-case-variants.test.ts).
 */
import crypto from 'node:crypto';
import { createProject } from '../../src/services/projects';
import { findSessions } from '../../src/services/session-lists';
import { upsertSession } from '../../src/services/session-upload';
import { sessionFacets } from '../../src/services/stats';
import { again, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let ada: ServiceUser;
let projectId: string;
const upper = crypto.randomUUID();
const lower = crypto.randomUUID();

beforeAll(async () => {
  h = await startServices();
  ada = await h.user('ada');
  projectId = (await createProject(again(ada), { name: 'Variants' })).id;
  await upsertSession(again(ada), projectId, upper, {
    name: 'upper',
    markdown: '# upper\n\nDone.\n',
    metadata: { tags: ['Tag'], llmModels: ['Model-X'], gitBranches: ['Feature/Login'], deviceId: 'Device-A' },
  });
  await upsertSession(again(ada), projectId, lower, {
    name: 'lower',
    markdown: '# lower\n\nDone.\n',
    metadata: { tags: ['tag'], llmModels: ['model-x'], gitBranches: ['feature/login'], deviceId: 'device-a' },
  });
});
afterAll(() => h?.close());

test('a list filter on one case variant lists only the sessions carrying it', async () => {
  const cases: Array<[Record<string, string[]>, string[]]> = [
    [{ tags: ['Tag'] }, [upper]],
    [{ tags: ['tag'] }, [lower]],
    [{ tags: ['Tag', 'tag'] }, [upper, lower]],
    [{ tags: ['TAG'] }, []],
    [{ llmModels: ['Model-X'] }, [upper]],
    [{ llmModels: ['model-x'] }, [lower]],
    [{ gitBranches: ['Feature/Login'] }, [upper]],
    [{ gitBranches: ['feature/login'] }, [lower]],
    [{ deviceIds: ['Device-A'] }, [upper]],
    [{ deviceIds: ['device-a'] }, [lower]],
  ];
  for (const [filters, ids] of cases) {
    const page = await findSessions(again(ada), { ...filters, projectIds: [projectId] }, 'UPDATED_AT_DESC', 100);
    expect([filters, page.rows.map((r) => r.id).sort()]).toEqual([filters, [...ids].sort()]);
  }
});

test('the facet counts count each case variant apart', async () => {
  const facets = await sessionFacets(again(ada), projectId, 10);
  const sorted = (list: Array<{ value: string; count: number }>) => [...list].sort((a, b) => a.value.localeCompare(b.value, 'en', { caseFirst: 'upper' }));
  expect(sorted(facets.tags)).toEqual([
    { value: 'Tag', count: 1 },
    { value: 'tag', count: 1 },
  ]);
  expect(sorted(facets.llmModels)).toEqual([
    { value: 'Model-X', count: 1 },
    { value: 'model-x', count: 1 },
  ]);
  expect(sorted(facets.gitBranches)).toEqual([
    { value: 'Feature/Login', count: 1 },
    { value: 'feature/login', count: 1 },
  ]);
  expect(sorted(facets.deviceIds)).toEqual([
    { value: 'Device-A', count: 1 },
    { value: 'device-a', count: 1 },
  ]);
});
