/** Admin CLI: teams create / add-member / list, and their one-line errors. */
import { startTestApp, type TestApp } from '../support/app';
import { runCli } from '../support/cli';
import { createTestDatabase, type TestDatabase } from '../support/db';

let db: TestDatabase;
let app: TestApp;

const cli = (...args: string[]) => runCli(args, { databaseUrl: db.url });

beforeAll(async () => {
  db = await createTestDatabase('sa_cli_teams');
  app = await startTestApp({ db });
});
afterAll(async () => {
  await app?.close();
  await db?.drop();
});

test('teams create, add-member, list; the members read the team through the API', async () => {
  const ada = await app.createUser('ada');
  const bob = await app.createUser('bob');
  const created = await cli('teams', 'create', '--name', 'Platform', '--admin-email', ada.email);
  expect(created.code).toBe(0);
  const teamId = created.stdout.trim().split('\n').pop()!;
  expect(teamId).toMatch(/^[0-9a-f-]{36}$/);
  const added = await cli('teams', 'add-member', '--team', teamId, '--email', bob.email, '--role', 'viewer');
  expect(added).toMatchObject({ code: 0, stdout: `added ${bob.email} to team ${teamId} as viewer\n` });
  const listed = await cli('teams', 'list');
  expect(listed.stdout).toMatch(new RegExp(`^${teamId}\\tPlatform\\tmembers 2\\tprojects 0\\t`, 'm'));
  const team = await app.request('GET', `/api/v1/teams/${teamId}`, { token: bob.token });
  expect(team.body.data.members.map((m: any) => [m.user.email, m.role])).toEqual([
    [ada.email, 'admin'],
    [bob.email, 'viewer'],
  ]);

  for (const [args, message] of [
    [['teams', 'add-member', '--team', teamId, '--email', bob.email, '--role', 'owner'], '--role must be one of: admin, member, viewer'],
    [['teams', 'add-member', '--team', 'nope', '--email', bob.email, '--role', 'member'], 'no team with id nope'],
    [['teams', 'add-member', '--team', teamId, '--email', bob.email, '--role', 'member'], `${bob.email} is already a member of team ${teamId}`],
    // Named with the database looked in: a mistyped DATABASE_URL names a new, empty one.
    [['teams', 'create', '--name', 'X', '--admin-email', 'nobody@example.test'], `no user with email nobody@example.test in database ${db.name}`],
    [['teams', 'create', '--admin-email', ada.email], 'missing --name'],
  ] as Array<[string[], string]>) {
    const r = await cli(...args);
    expect([args.join(' '), r.code !== 0, r.stderr.trim().split('\n').length, r.stderr]).toEqual([args.join(' '), true, 1, expect.stringContaining(message)]);
  }
});
