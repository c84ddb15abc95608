/** Admin CLI: teams create / add-member / list, and their one-line errors. */
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from './support/app';
import { createTestDatabase, type TestDatabase } from './support/db';

const ROOT = path.join(__dirname, '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
let db: TestDatabase;
let app: TestApp;

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      [path.join(ROOT, 'src', 'cli', 'main.ts'), ...args],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          DATABASE_URL: db.url,
          JWT_SECRET: 'test-secret-that-is-long-enough',
          DATA_DIR: path.join(os.tmpdir(), 'session-archive-cli-test'),
          LOG_LEVEL: 'silent',
        },
        timeout: 120_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof (err as any).code === 'number' ? (err as any).code : 1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

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
    [['teams', 'create', '--name', 'X', '--admin-email', 'nobody@example.test'], 'no user with email nobody@example.test'],
    [['teams', 'create', '--admin-email', ada.email], 'missing --name'],
  ] as Array<[string[], string]>) {
    const r = await cli(...args);
    expect([args.join(' '), r.code !== 0, r.stderr.trim().split('\n').length, r.stderr]).toEqual([args.join(' '), true, 1, expect.stringContaining(message)]);
  }
});
