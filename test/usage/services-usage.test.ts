/**
 * The usage report's rules, pinned at the service layer (no HTTP): whose sessions a caller's sums
 * cover (their own projects, a team's when they are in it, the whole instance for administrators
 * only), named projects checked like any read, and the input messages.
 */
import crypto from 'node:crypto';
import { createProject } from '../../src/services/projects';
import { upsertSession } from '../../src/services/session-upload';
import { addMember, createTeam } from '../../src/services/teams';
import { usageReport } from '../../src/services/usage';
import { again, failure, FORBIDDEN, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let ada: ServiceUser; // team admin, with a personal project
let bob: ServiceUser; // team member
let eve: ServiceUser; // outsider, with a personal project
let root: ServiceUser; // instance administrator
let teamId: string;
let adaProject: string;
let eveProject: string;

/** A Claude Code log line that used `n` input and `n` output tokens of `model`. */
const used = (model: string, n: number) =>
  `${JSON.stringify({ type: 'assistant', requestId: `req_${crypto.randomUUID()}`, message: { id: `msg_${crypto.randomUUID()}`, model, usage: { input_tokens: n, output_tokens: n } } })}\n`;

async function upload(ctx: ServiceUser, projectId: string, model: string, n: number): Promise<void> {
  await upsertSession(again(ctx), projectId, crypto.randomUUID(), {
    name: 'Work',
    markdown: '# Work\n',
    rawData: used(model, n),
    startedAt: '2026-11-20T10:00:00.000Z',
  });
}

beforeAll(async () => {
  h = await startServices();
  [ada, bob, eve, root] = [await h.user('ada'), await h.user('bob'), await h.user('eve'), await h.user('root', { role: 'admin' })];
  teamId = (await createTeam(again(ada), { name: 'Usage team' })).id;
  await addMember(again(ada), teamId, { email: bob.email, role: 'member' });
  const teamProject = (await createProject(again(bob), { name: 'Team work', teamId })).id;
  adaProject = (await createProject(again(ada), { name: 'Ada alone' })).id;
  eveProject = (await createProject(again(eve), { name: 'Eve alone' })).id;
  await upload(bob, teamProject, 'model-team', 100);
  await upload(ada, adaProject, 'model-ada', 10);
  await upload(eve, eveProject, 'model-eve', 1);
});
afterAll(() => h?.close());

const models = async (ctx: ServiceUser, input: object = {}, opts: { instance?: boolean } = {}) =>
  Object.fromEntries((await usageReport(again(ctx), { groupBy: 'MODEL', ...input }, opts)).groups.map((g) => [g.key, g.totalTokens]));

test("each caller's sums cover exactly the sessions they read", async () => {
  expect(await models(ada)).toEqual({ 'model-team': 200, 'model-ada': 20 });
  expect(await models(bob)).toEqual({ 'model-team': 200 });
  expect(await models(eve)).toEqual({ 'model-eve': 2 });
  expect(await models(root)).toEqual({});
});

test("a team's sums for its members only; an outsider is refused", async () => {
  expect(await models(bob, { teamId })).toEqual({ 'model-team': 200 });
  expect((await failure(models(eve, { teamId }))).code).toBe('NOT_FOUND');
});

test('named projects are checked like any read: another user’s is refused, an unknown one is 404', async () => {
  expect(await models(ada, { projectIds: [adaProject] })).toEqual({ 'model-ada': 20 });
  expect(await failure(models(ada, { projectIds: [eveProject] }))).toEqual(FORBIDDEN);
  expect((await failure(models(ada, { projectIds: ['no-such-project'] }))).code).toBe('NOT_FOUND');
});

test('the whole instance is for administrators only', async () => {
  expect(await models(root, {}, { instance: true })).toEqual({ 'model-team': 200, 'model-ada': 20, 'model-eve': 2 });
  expect(await failure(models(ada, {}, { instance: true }))).toEqual({
    code: 'FORBIDDEN',
    message: 'Only administrators can read the usage of the whole instance',
  });
});

test.each([
  ['a grouping that does not exist', { groupBy: 'WEEK' }, 'Invalid groupBy: expected DAY, MODEL, PROJECT or USER'],
  ['a range backwards', { groupBy: 'DAY', from: '2026-11-22T00:00:00Z', to: '2026-11-21T00:00:00Z' }, 'Invalid range: from is after to'],
  ['a time that is no timestamp', { groupBy: 'DAY', from: 'yesterday' }, 'Invalid value for from: expected an ISO 8601 timestamp'],
  ['101 projects', { groupBy: 'DAY', projectIds: Array.from({ length: 101 }, (_, i) => `p${i}`) }, 'Invalid projectIds: at most 100'],
])('%s → 400 %s', async (_what, input, message) => {
  expect(await failure(usageReport(again(ada), input))).toEqual({ code: 'VALIDATION_ERROR', message });
});
