/**
 * Cross-machine resume's rules, pinned at the service layer (no HTTP, no engine for the lists):
 * only sessions with session data are resumable; the lists cover exactly the projects the caller
 * reads (another user's project is refused, not shown empty); the inputs are checked.
 */
import crypto from 'node:crypto';
import { createProject } from '../../src/services/projects';
import { resumableParam, resumableProjects, resumableSessionsOfProject, searchResumable } from '../../src/services/resume';
import { upsertSession } from '../../src/services/session-upload';
import { addMember, createTeam } from '../../src/services/teams';
import { again, failure, FORBIDDEN, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let ada: ServiceUser;
let bob: ServiceUser; // a member of Ada's team
let eve: ServiceUser;
let adaProject: string;
let teamProject: string;
let eveProject: string;
const resumable: string[] = [];

async function upload(ctx: ServiceUser, projectId: string, withData: boolean): Promise<string> {
  const id = crypto.randomUUID();
  await upsertSession(again(ctx), projectId, id, { name: 'Work', markdown: '# Work\n', ...(withData ? { sessionData: JSON.stringify({ id }) } : {}) });
  if (withData) resumable.push(id);
  return id;
}

beforeAll(async () => {
  h = await startServices({ MEILI_URL: 'http://127.0.0.1:9' });
  [ada, bob, eve] = [await h.user('ada'), await h.user('bob'), await h.user('eve')];
  const teamId = (await createTeam(again(ada), { name: 'Resume team' })).id;
  await addMember(again(ada), teamId, { email: bob.email, role: 'member' });
  adaProject = (await createProject(again(ada), { name: 'Ada alone' })).id;
  teamProject = (await createProject(again(bob), { name: 'Team work', teamId })).id;
  eveProject = (await createProject(again(eve), { name: 'Eve alone' })).id;
  await upload(ada, adaProject, true);
  await upload(ada, adaProject, false);
  await upload(bob, teamProject, true);
  await upload(eve, eveProject, true);
});
afterAll(() => h?.close());

test('only sessions with session data are resumable, per project', async () => {
  const page = await resumableSessionsOfProject(again(ada), adaProject);
  expect(page.total).toBe(1);
  expect(resumable).toContain(page.sessions[0].id);
});

test('across projects: exactly those the caller reads, with their resumable sessions', async () => {
  const ids = async (u: ServiceUser) => (await resumableProjects(again(u))).projects.map((p) => [p.id, p.sessions.length]);
  expect(await ids(ada)).toEqual(
    expect.arrayContaining([
      [adaProject, 1],
      [teamProject, 1],
    ]),
  );
  expect((await ids(ada)).length).toBe(2);
  expect(await ids(bob)).toEqual([[teamProject, 1]]);
  expect(await ids(eve)).toEqual([[eveProject, 1]]);
});

test("another user's project is refused, an unknown one is 404", async () => {
  expect(await failure(resumableSessionsOfProject(again(eve), adaProject))).toEqual(FORBIDDEN);
  expect((await failure(resumableSessionsOfProject(again(eve), 'no-such-project'))).code).toBe('NOT_FOUND');
});

test('inputs', async () => {
  expect([resumableParam(undefined), resumableParam('true'), resumableParam('false')]).toEqual([false, true, false]);
  expect(await failure(Promise.resolve().then(() => resumableParam('yes')))).toEqual({
    code: 'VALIDATION_ERROR',
    message: 'Invalid value for resumable: must be true or false',
  });
  expect(await failure(searchResumable(again(ada), {}))).toEqual({ code: 'VALIDATION_ERROR', message: 'Missing required field: query' });
  expect(await failure(searchResumable(again(ada), { query: 'x', projectId: 5 }))).toEqual({
    code: 'VALIDATION_ERROR',
    message: 'Invalid type for projectId: expected a string',
  });
});
