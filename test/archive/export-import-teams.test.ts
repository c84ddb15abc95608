/**
 * Export and import of team projects (docs/export-import.md "Team projects"): a team admin exports
 * the team's projects (members, viewers and outsiders do not), an import can target a team (admin
 * or member), and the team's archive moves to another server byte for byte, uploaders included.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { replicaCaughtUp } from '../support/replica-sync';
import { runCli } from '../support/cli';
import { readTar, seedCorpus, sha256, writeTar, type TarEntry } from '../support/archive';

let a: TestApp;
let b: TestApp;
/** On a: Ada (team admin), Bob (member), Vic (viewer), Eve (no member). */
const onA: Record<'ada' | 'bob' | 'vic' | 'eve', TestUser> = {} as never;
/** On b: the same people (same emails and names), and a team of the same name. */
const onB: Record<'ada' | 'bob' | 'vic' | 'eve', TestUser> = {} as never;
let teamA: string;
let teamB: string;
const TEAM = `Platform ${crypto.randomUUID().slice(0, 6)}`;
const TP = `team-${crypto.randomUUID().slice(0, 8)}`;
const PA = `ada-${crypto.randomUUID().slice(0, 8)}`;
let teamIds: string[];
let bobsSession: string;
const tarHeaders = { 'Content-Type': 'application/x-tar' };
const UNKNOWN_TEAM = crypto.randomUUID();

async function req(app: TestApp, user: TestUser, method: string, url: string, body?: unknown) {
  return app.request(method, url, { token: user.token, body });
}

async function newTeam(app: TestApp, admin: TestUser, members: Array<[TestUser, string]>): Promise<string> {
  const r = await req(app, admin, 'POST', '/api/v1/teams', { name: TEAM });
  if (r.status !== 201) throw new Error(`create team: ${r.status} ${r.text}`);
  const id = r.body.data.team.id as string;
  for (const [user, role] of members) {
    const m = await req(app, admin, 'POST', `/api/v1/teams/${id}/members`, { email: user.email, role });
    if (m.status !== 201) throw new Error(`add member: ${m.status} ${m.text}`);
  }
  return id;
}

async function exportOf(app: TestApp, user: TestUser, query = ''): Promise<Buffer> {
  const res = await app.request('GET', `/api/v1/export${query}`, { token: user.token });
  expect([res.status, res.headers['content-type']]).toEqual([200, 'application/x-tar']);
  return res.raw;
}

const importInto = (app: TestApp, user: TestUser, archive: Buffer, query: string) =>
  app.request('POST', `/api/v1/import${query}`, { token: user.token, body: archive, headers: tarHeaders });

const projectsIn = (entries: TarEntry[]) =>
  [...new Set(entries.filter((e) => e.name.startsWith('projects/') && e.name.length > 9).map((e) => e.name.split('/')[1]))].sort();
const fileOf = (entries: TarEntry[], name: string) => JSON.parse(entries.find((e) => e.name === name)!.data.toString('utf8'));
const sessionCount = async (app: TestApp) => Number((await app.deps.db.reads.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM sessions'))[0].n);

beforeAll(async () => {
  a = await startTestApp({ rateLimit: false });
  b = await startTestApp({ rateLimit: false });
  for (const name of ['ada', 'bob', 'vic', 'eve'] as const) {
    onA[name] = await a.createUser(name[0].toUpperCase() + name.slice(1));
    const u = await createUser(operatorCtx(b.deps.db), onA[name].email, name[0].toUpperCase() + name.slice(1));
    onB[name] = { id: u.id, email: u.email, ...(await b.newKey(u)) };
  }
  teamA = await newTeam(a, onA.ada, [
    [onA.bob, 'member'],
    [onA.vic, 'viewer'],
  ]);
  teamB = await newTeam(b, onB.ada, [
    [onB.bob, 'member'],
    [onB.vic, 'viewer'],
  ]);
  // A team project: Ada's corpus moved into the team, and one session Bob uploads into it.
  teamIds = await seedCorpus(a, onA.ada, TP);
  const moved = await req(a, onA.ada, 'POST', `/api/v1/projects/${TP}/move`, { teamId: teamA });
  if (moved.status !== 200) throw new Error(`move: ${moved.status} ${moved.text}`);
  bobsSession = crypto.randomUUID();
  const put = await req(a, onA.bob, 'PUT', `/api/v1/projects/${TP}/sessions/${bobsSession}`, { name: 'by bob', markdown: '# Bob was here\n' });
  if (put.status !== 201) throw new Error(`bob's upload: ${put.status} ${put.text}`);
  await seedCorpus(a, onA.ada, PA);
}, 180_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
});

describe('export of team projects', () => {
  test("a team admin's export holds their own projects and the team's; project.json names the team; uploaders are kept", async () => {
    const entries = await readTar(await exportOf(a, onA.ada));
    expect(projectsIn(entries)).toEqual([PA, TP].sort());
    expect(fileOf(entries, `projects/${TP}/project.json`).owner).toEqual({ type: 'team', name: TEAM });
    expect(fileOf(entries, `projects/${PA}/project.json`).owner).toEqual({ type: 'user', name: 'Ada', email: onA.ada.email });
    expect(fileOf(entries, `projects/${TP}/sessions/${bobsSession}/session.json`).uploadedBy).toBe(onA.bob.email);
    expect(fileOf(entries, `projects/${TP}/sessions/${teamIds[0]}/session.json`).uploadedBy).toBe(onA.ada.email);
    expect(fileOf(entries, 'manifest.json')).toMatchObject({ projects: 2, sessions: 7 });
  });

  test('?teamId= exports only that team; ?projectId= may name a team project', async () => {
    const team = await readTar(await exportOf(a, onA.ada, `?teamId=${teamA}`));
    expect(projectsIn(team)).toEqual([TP]);
    const one = await readTar(await exportOf(a, onA.ada, `?projectId=${TP}`));
    expect(projectsIn(one)).toEqual([TP]);
    // The team's projects alone, then with a personal project named: that one is not the team's → 403.
    const mixed = await a.request('GET', `/api/v1/export?teamId=${teamA}&projectId=${PA}`, { token: onA.ada.token });
    expect([mixed.status, mixed.body]).toEqual([403, { success: false, error: `Project ${PA} is not one of the team's projects` }]);
  });

  test('members and viewers do not export the team; outsiders and unknown teams get 404 Team not found', async () => {
    for (const who of [onA.bob, onA.vic]) {
      const r = await a.request('GET', `/api/v1/export?teamId=${teamA}`, { token: who.token });
      expect([r.status, r.body]).toEqual([403, { success: false, error: "Only the team's admins can export the team's projects" }]);
      const p = await a.request('GET', `/api/v1/export?projectId=${TP}`, { token: who.token });
      expect([p.status, p.body]).toEqual([403, { success: false, error: "Only the team's admins can export this project" }]);
      // Their own export has none of the team's projects.
      expect(projectsIn(await readTar(await exportOf(a, who)))).toEqual([]);
    }
    for (const [who, team] of [
      [onA.eve, teamA],
      [onA.ada, UNKNOWN_TEAM],
      [onA.ada, 'not-a-uuid'],
    ] as const) {
      const r = await a.request('GET', `/api/v1/export?teamId=${team}`, { token: who.token });
      expect([r.status, r.body]).toEqual([404, { success: false, error: 'Team not found' }]);
    }
    const twice = await a.request('GET', `/api/v1/export?teamId=${teamA}&teamId=${teamA}`, { token: onA.ada.token });
    expect(twice.status).toBe(400);
  });
});

describe('import into a team', () => {
  let archive: Buffer;
  beforeAll(async () => {
    archive = await exportOf(a, onA.ada, `?teamId=${teamA}`);
  });

  test('refused before anything is written: a viewer 403, an outsider and an unknown team 404', async () => {
    const before = await sessionCount(b);
    for (const [who, team, status, error] of [
      [onB.vic, teamB, 403, "Viewers of a team can only read its projects: ask one of the team's admins for the member role"],
      [onB.eve, teamB, 404, 'Team not found'],
      [onB.ada, UNKNOWN_TEAM, 404, 'Team not found'],
    ] as const) {
      const r = await importInto(b, who, archive, `?teamId=${team}`);
      expect([r.status, r.body]).toEqual([status, { success: false, error }]);
    }
    expect(await sessionCount(b)).toBe(before);
    expect((await b.request('GET', `/api/v1/projects/${TP}`, { token: onB.ada.token })).status).toBe(404);
  });

  test("an admin's import: the team owns the projects, uploaders who are members here are kept, and the team's export is byte-identical", async () => {
    const r = await importInto(b, onB.ada, archive, `?teamId=${teamB}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      data: { projects: { created: 1, existing: 0 }, sessions: { created: 4, updated: 0, skipped: 0 }, errors: [], failed: 0, errorCount: 0 },
    });
    // Teammates read Ada's import (with a read replica: once it has applied it, as documented).
    await replicaCaughtUp(b.deps.db);
    const project = await b.request('GET', `/api/v1/projects/${TP}`, { token: onB.vic.token });
    expect(project.status).toBe(200);
    expect(project.body.data.project.owner).toMatchObject({ type: 'team', id: teamB, name: TEAM });
    const bobs = await b.request('GET', `/api/v1/projects/${TP}/sessions/${bobsSession}`, { token: onB.bob.token });
    expect(bobs.body.data.session.uploadedBy).toEqual({ id: onB.bob.id, name: 'Bob' });
    expect(sha256(await exportOf(b, onB.ada, `?teamId=${teamB}`))).toBe(sha256(archive));
    // The same archive again: everything exists.
    const again = await importInto(b, onB.ada, archive, `?teamId=${teamB}`);
    expect(again.body).toMatchObject({
      success: true,
      data: { projects: { created: 0, existing: 1 }, sessions: { created: 0, updated: 0, skipped: 4 }, errors: [], failed: 0, errorCount: 0 },
    });
  });

  test("a member's import: new projects go to the team in the member's name; they replace only the sessions they uploaded", async () => {
    // Ada's personal project imported into the team by Bob: created for the team, uploaded by Bob
    // (a member does not put sessions in someone else's name).
    const personal = await exportOf(a, onA.ada, `?projectId=${PA}`);
    const r = await importInto(b, onB.bob, personal, `?teamId=${teamB}`);
    expect(r.body).toMatchObject({
      success: true,
      data: { projects: { created: 1, existing: 0 }, sessions: { created: 3, updated: 0, skipped: 0 }, errors: [], failed: 0, errorCount: 0 },
    });
    await replicaCaughtUp(b.deps.db);
    const p = await b.request('GET', `/api/v1/projects/${PA}/sessions`, { token: onB.vic.token });
    expect(p.status).toBe(200);
    for (const s of p.body.data.sessions) expect(s.uploadedBy).toEqual({ id: onB.bob.id, name: 'Bob' });

    // On a, Ada and Bob each change a session of the team project; Bob imports that archive with
    // overwrite on b: his own session is replaced, Ada's is reported and left as it was.
    expect((await req(a, onA.ada, 'PATCH', `/api/v1/projects/${TP}/sessions/${teamIds[1]}`, { userTitle: 'changed by ada' })).status).toBe(200);
    expect((await req(a, onA.bob, 'PATCH', `/api/v1/projects/${TP}/sessions/${bobsSession}`, { userTitle: 'changed by bob' })).status).toBe(200);
    // Ada's export holds Bob's change (with a read replica: once it has applied it).
    await replicaCaughtUp(a.deps.db);
    const changed = await exportOf(a, onA.ada, `?teamId=${teamA}`);
    const over = await importInto(b, onB.bob, changed, `?teamId=${teamB}&onConflict=overwrite`);
    expect(over.status).toBe(200);
    expect(over.body.data.sessions).toEqual({ created: 0, updated: 1, skipped: 2 });
    expect(over.body.data.errors).toEqual([
      {
        path: `projects/${TP}/sessions/${teamIds[1]}/`,
        error: `not imported: Session ${teamIds[1]} was uploaded by someone else: a team member replaces only the sessions they uploaded`,
      },
    ]);
    const read = (id: string) => b.request('GET', `/api/v1/projects/${TP}/sessions/${id}`, { token: onB.ada.token });
    expect((await read(bobsSession)).body.data.session.userTitle).toBe('changed by bob');
    expect((await read(teamIds[1])).body.data.session.userTitle).toBeNull();
    // The admin may: the same archive by Ada replaces hers.
    const byAdmin = await importInto(b, onB.ada, changed, `?teamId=${teamB}&onConflict=overwrite`);
    expect(byAdmin.body.data).toMatchObject({ sessions: { created: 0, updated: 1, skipped: 3 }, errors: [] });
    expect((await read(teamIds[1])).body.data.session.userTitle).toBe('changed by ada');
  });

  test('a project id that exists outside the team is reported, not taken into it', async () => {
    // Eve owns a project of that id personally on b; Ada imports a team archive naming it.
    const id = `eve-${crypto.randomUUID().slice(0, 8)}`;
    expect((await req(b, onB.eve, 'PUT', `/api/v1/projects/${id}/sessions/${crypto.randomUUID()}`, { name: 'eve', markdown: 'mine\n' })).status).toBe(201);
    await seedCorpus(a, onA.ada, id);
    const r = await importInto(b, onB.ada, await exportOf(a, onA.ada, `?projectId=${id}`), `?teamId=${teamB}`);
    expect(r.status).toBe(200);
    expect(r.body.data.projects).toEqual({ created: 0, existing: 0 });
    expect(r.body.data.sessions).toEqual({ created: 0, updated: 0, skipped: 0 });
    expect(r.body.data.errors).toContainEqual({ path: `projects/${id}/project.json`, error: `Project ${id} is not a project of this team: not imported` });
    const still = await b.request('GET', `/api/v1/projects/${id}`, { token: onB.eve.token });
    expect(still.body.data.project.owner).toMatchObject({ type: 'user', id: onB.eve.id });
  });
});

describe('the admin CLI: export --team and import --team', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-export-teams-'));
  });
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  const cli = (app: TestApp, ...args: string[]) => runCli(args, { databaseUrl: app.db.url, env: app.storeEnv, timeoutMs: 180_000 });

  test('a team admin exports the team as GET /export?teamId= does; a member cannot; import --team writes into the team', async () => {
    const file = path.join(dir, 'team.tar');
    const r = await cli(a, 'export', '--email', onA.ada.email, '--team', teamA, '--out', file);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(sha256(fs.readFileSync(file))).toBe(sha256(await exportOf(a, onA.ada, `?teamId=${teamA}`)));

    const member = await cli(a, 'export', '--email', onA.bob.email, '--team', teamA, '--out', path.join(dir, 'bob.tar'));
    expect(member.code).toBe(1);
    expect(member.stderr).toMatch(/Only the team's admins can export the team's projects/);
    expect(fs.existsSync(path.join(dir, 'bob.tar'))).toBe(false);
    const outsider = await cli(a, 'export', '--email', onA.eve.email, '--team', teamA, '--out', path.join(dir, 'eve.tar'));
    expect([outsider.code, outsider.stderr.trim()]).toEqual([1, 'Team not found']);

    // Into a new team on b, by its member Bob.
    const fresh = await newTeamNamed(b, onB.ada, `Fresh ${crypto.randomUUID().slice(0, 6)}`, [
      [onB.bob, 'member'],
      [onB.vic, 'viewer'],
    ]);
    const viewer = await cli(b, 'import', file, '--email', onB.vic.email, '--team', fresh);
    expect([viewer.code, viewer.stderr.trim()]).toEqual([1, "Viewers of a team can only read its projects: ask one of the team's admins for the member role"]);
    const unknown = await cli(b, 'import', file, '--email', onB.bob.email, '--team', UNKNOWN_TEAM);
    expect([unknown.code, unknown.stderr.trim()]).toEqual([1, 'Team not found']);
    // The team project exists on b already (teamB's): reported, exit 1.
    const clash = await cli(b, 'import', file, '--email', onB.bob.email, '--team', fresh);
    expect(clash.code).toBe(1);
    expect(clash.stdout).toMatch(new RegExp(`error: projects/${TP}/project.json: Project ${TP} is not a project of this team`));
    // Under other project ids it goes in.
    const renamed = path.join(dir, 'renamed.tar');
    const entries = await readTar(fs.readFileSync(file));
    const other = `moved-${crypto.randomUUID().slice(0, 6)}`;
    const manifest = fileOf(entries, 'manifest.json');
    manifest.files = manifest.files.map((f: { path: string }) => ({ ...f, path: f.path.split(TP).join(other) }));
    fs.writeFileSync(
      renamed,
      await writeTar(
        entries.map((e) => ({
          name: e.name.split(TP).join(other),
          type: e.type as 'file',
          data: e.name === 'manifest.json' ? Buffer.from(JSON.stringify(manifest)) : e.data,
        })),
      ),
    );
    const ok = await cli(b, 'import', renamed, '--email', onB.bob.email, '--team', fresh);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/projects: 1 created, 0 existing; sessions: 4 created, 0 updated, 0 skipped, 0 not imported; 0 errors/);
    const p = await b.request('GET', `/api/v1/projects/${other}`, { token: onB.vic.token });
    expect(p.body.data.project.owner).toMatchObject({ type: 'team', id: fresh });
  }, 300_000);
});

async function newTeamNamed(app: TestApp, admin: TestUser, name: string, members: Array<[TestUser, string]>): Promise<string> {
  const r = await req(app, admin, 'POST', '/api/v1/teams', { name });
  const id = r.body.data.team.id as string;
  for (const [user, role] of members) await req(app, admin, 'POST', `/api/v1/teams/${id}/members`, { email: user.email, role });
  return id;
}
