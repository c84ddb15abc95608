/**
 * Export and import rules, pinned at the service layer (no HTTP): what an export takes (the
 * caller's projects and those of teams they administer; a named project outside that is refused
 * before a byte is written), who may import into a team, and that an import lands in the
 * importer's own projects, never in another owner's.
 */
import crypto from 'node:crypto';
import { PassThrough, Readable, Writable } from 'node:stream';
import * as tar from 'tar-stream';
import { openExport } from '../../src/services/exports';
import { importArchive } from '../../src/services/imports';
import { createProject, listProjects } from '../../src/services/projects';
import { upsertSession } from '../../src/services/session-upload';
import { addMember, createTeam } from '../../src/services/teams';
import { again, failure, FORBIDDEN, refused, startServices, VIEWER_READS_ONLY, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let ada: ServiceUser; // team admin, with a personal project
let bob: ServiceUser; // team member
let vic: ServiceUser; // team viewer
let eve: ServiceUser; // outsider
let teamId: string;
let adaProject: string;
let teamProject: string;

const LIMITS = { maxBytes: 64 * 1024 * 1024, maxFileBytes: 16 * 1024 * 1024 };

async function upload(ctx: ServiceUser, projectId: string, title: string): Promise<void> {
  await upsertSession(again(ctx), projectId, crypto.randomUUID(), { name: title, markdown: `# ${title}\n\nSome work.\n` });
}

/** The whole export of `ctx` (with `opts`) as bytes, and the paths it holds. */
async function exportOf(ctx: ServiceUser, opts: Parameters<typeof openExport>[1] = {}): Promise<{ bytes: Buffer; paths: string[] }> {
  const open = await openExport(again(ctx), opts);
  const chunks: Buffer[] = [];
  try {
    await open.writeTo(
      new Writable({
        write(c: Buffer, _e, cb) {
          chunks.push(c);
          cb();
        },
      }),
    );
  } finally {
    await open.close();
  }
  const bytes = Buffer.concat(chunks);
  expect(bytes.length).toBe(open.size);
  const paths: string[] = [];
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    paths.push(header.name);
    stream.on('end', next).resume();
  });
  const done = new Promise<void>((resolve, reject) => extract.on('finish', () => resolve()).on('error', reject));
  new PassThrough().end(bytes).pipe(extract);
  await done;
  return { bytes, paths };
}

const projectDirs = (paths: string[]) => [...new Set(paths.filter((p) => p.startsWith('projects/')).map((p) => p.split('/')[1]))].filter(Boolean).sort();

beforeAll(async () => {
  h = await startServices();
  [ada, bob, vic, eve] = [await h.user('ada'), await h.user('bob'), await h.user('vic'), await h.user('eve')];
  teamId = (await createTeam(again(ada), { name: 'Archive team' })).id;
  await addMember(again(ada), teamId, { email: bob.email, role: 'member' });
  await addMember(again(ada), teamId, { email: vic.email, role: 'viewer' });
  adaProject = (await createProject(again(ada), { name: 'Ada alone' })).id;
  teamProject = (await createProject(again(bob), { name: 'Team work', teamId })).id;
  await upload(ada, adaProject, 'Ada one');
  await upload(bob, teamProject, 'Bob in the team');
});
afterAll(() => h?.close());

describe('export', () => {
  test("takes the caller's projects and those of the teams they administer", async () => {
    expect(projectDirs((await exportOf(ada)).paths)).toEqual([adaProject, teamProject].sort());
    // A team member who is no admin exports only their own (none here).
    expect(projectDirs((await exportOf(bob)).paths)).toEqual([]);
  });

  test("a team's export is for its admins; a named project outside what the export takes is refused", async () => {
    expect(projectDirs((await exportOf(ada, { teamId })).paths)).toEqual([teamProject]);
    expect(await failure(exportOf(bob, { teamId }))).toEqual(refused("Only the team's admins can export the team's projects"));
    expect(await failure(exportOf(eve, { teamId }))).toEqual({ code: 'NOT_FOUND', message: 'Team not found' });
    expect(await failure(exportOf(eve, { projectIds: [adaProject] }))).toEqual(FORBIDDEN);
    expect(await failure(exportOf(bob, { projectIds: [teamProject] }))).toEqual(refused("Only the team's admins can export this project"));
    expect(await failure(exportOf(ada, { teamId, projectIds: [adaProject] }))).toEqual(refused(`Project ${adaProject} is not one of the team's projects`));
    expect((await failure(exportOf(ada, { projectIds: ['no-such-project'] }))).code).toBe('NOT_FOUND');
  });
});

describe('import', () => {
  test("lands in the importer's own projects; another owner's project of the same id is never touched", async () => {
    const { bytes } = await exportOf(ada, { projectIds: [adaProject] });
    const into = await h.user('importer');
    const summary = await importArchive(again(into), Readable.from([bytes]), { ...LIMITS, onConflict: 'skip' });
    // The project id is Ada's: it is not the importer's, so its session is reported, not written.
    expect(summary).toMatchObject({ success: false, imported: 0, failed: 1 });
    expect((await listProjects(again(into))).map((p) => p.id)).toEqual([]);
    expect((await listProjects(again(ada))).find((p) => p.id === adaProject)?.sessionCount).toBe(1);
  });

  test('into a team: its admins and members; a viewer and an outsider are refused before anything is read', async () => {
    const { bytes } = await exportOf(ada, { teamId });
    const summary = await importArchive(again(bob), Readable.from([bytes]), { ...LIMITS, onConflict: 'skip', teamId });
    expect(summary).toMatchObject({ success: true, skipped: 1, imported: 0 });
    expect(await failure(importArchive(again(vic), Readable.from([bytes]), { ...LIMITS, onConflict: 'skip', teamId }))).toEqual(VIEWER_READS_ONLY);
    expect(await failure(importArchive(again(eve), Readable.from([bytes]), { ...LIMITS, onConflict: 'skip', teamId }))).toEqual({
      code: 'NOT_FOUND',
      message: 'Team not found',
    });
  });

  test('an archive over the limit is refused with 413, nothing written', async () => {
    const { bytes } = await exportOf(ada, { projectIds: [adaProject] });
    const small = await h.user('small');
    const err = await failure(importArchive(again(small), Readable.from([bytes]), { ...LIMITS, maxBytes: 1024, onConflict: 'skip' }));
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await listProjects(again(small))).length).toBe(0);
  });
});
