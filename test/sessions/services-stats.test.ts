/**
 * The statistics rules, pinned at the service layer (no HTTP): every figure counts only sessions
 * the caller reads (their own projects and their teams'), whatever project ids they name; a team
 * member leaving stops counting its sessions; the day and range inputs are checked.
 */
import crypto from 'node:crypto';
import { createProject } from '../../src/services/projects';
import { upsertSession } from '../../src/services/session-upload';
import { analyticsRange, analyticsTotals, checkDays, projectSessionsByDay, projectTotals, topLLMModels, userTotals } from '../../src/services/stats';
import { addMember, createTeam, removeMember } from '../../src/services/teams';
import { again, failure, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let ada: ServiceUser; // team admin, with a personal project
let bob: ServiceUser; // team member
let eve: ServiceUser; // outsider, with a personal project
let teamId: string;
let adaProject: string;
let teamProject: string;
let eveProject: string;

async function upload(ctx: ServiceUser, projectId: string, model: string): Promise<void> {
  await upsertSession(again(ctx), projectId, crypto.randomUUID(), { name: 'Work', markdown: '# Work\n\nDone.\n', metadata: { llmModels: [model] } });
}

beforeAll(async () => {
  h = await startServices();
  [ada, bob, eve] = [await h.user('ada'), await h.user('bob'), await h.user('eve')];
  teamId = (await createTeam(again(ada), { name: 'Stats team' })).id;
  await addMember(again(ada), teamId, { email: bob.email, role: 'member' });
  adaProject = (await createProject(again(ada), { name: 'Ada alone' })).id;
  teamProject = (await createProject(again(bob), { name: 'Team work', teamId })).id;
  eveProject = (await createProject(again(eve), { name: 'Eve alone' })).id;
  await upload(ada, adaProject, 'model-ada');
  await upload(bob, teamProject, 'model-team');
  await upload(bob, teamProject, 'model-team');
  await upload(eve, eveProject, 'model-eve');
});
afterAll(() => h?.close());

const range = () => analyticsRange({ start: new Date(Date.now() - 86_400_000).toISOString(), end: new Date(Date.now() + 60_000).toISOString() });

test("each caller's figures count exactly the sessions they read", async () => {
  expect(await userTotals(again(ada))).toMatchObject({ totalSessions: 3, totalProjects: 2, sessionsThisWeek: 3 });
  expect(await userTotals(again(bob))).toMatchObject({ totalSessions: 2, totalProjects: 1 });
  expect(await userTotals(again(eve))).toMatchObject({ totalSessions: 1, totalProjects: 1 });
  expect((await topLLMModels(again(bob), 10)).map((m) => m.model)).toEqual(['model-team']);
  expect(await analyticsTotals(again(eve), range())).toEqual({ totalSessions: 1, totalProjects: 1 });
});

test('naming projects the caller does not read counts nothing of them', async () => {
  const totals = await projectTotals(again(eve), [adaProject, teamProject, eveProject]);
  expect([...totals.keys()]).toEqual([eveProject]);
  const byDay = await projectSessionsByDay(again(eve), [adaProject, eveProject], 2);
  expect(byDay.get(adaProject)!.reduce((n, d) => n + d.count, 0)).toBe(0);
  expect(byDay.get(eveProject)!.reduce((n, d) => n + d.count, 0)).toBe(1);
});

test('a member who leaves the team stops counting its sessions from their next request', async () => {
  const carl = await h.user('carl');
  await addMember(again(ada), teamId, { email: carl.email, role: 'viewer' });
  expect((await userTotals(again(carl))).totalSessions).toBe(2);
  await removeMember(again(ada), teamId, carl.user.id);
  expect((await userTotals(again(carl))).totalSessions).toBe(0);
});

test('day counts and ranges are checked', async () => {
  const refusal = (f: () => unknown) => failure(Promise.resolve().then(f));
  expect([await refusal(() => checkDays(0)), await refusal(() => analyticsRange({ start: 'yesterday', end: new Date().toISOString() }))]).toEqual([
    { code: 'VALIDATION_ERROR', message: 'Invalid value for days: must be an integer between 1 and 366' },
    { code: 'VALIDATION_ERROR', message: 'Invalid value for timeRange.start: expected an ISO 8601 timestamp' },
  ]);
});
