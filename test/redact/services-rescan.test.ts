/**
 * `redact rescan`'s rules, pinned at the service layer (no HTTP, no CLI): there is nothing to
 * apply with REDACT_SECRETS=off; an empty archive is a rescan of nothing; a dry run counts what the
 * current rules would find and changes nothing; a real run masks it, moves the entity tag and
 * queues the session for the index; a second run finds nothing new. Sessions are stored with
 * REDACT_SECRETS=report, so their secrets are kept and counted, as an archive that predates a rule.
 */
import crypto from 'node:crypto';
import { readContent } from '../../src/data/content';
import { requireReadableSession } from '../../src/services/access';
import { createProject } from '../../src/services/projects';
import { rescanSessions } from '../../src/services/rescan';
import { upsertSession } from '../../src/services/session-upload';
import { again, startServices, type ServiceHarness, type ServiceUser } from '../support/services';

const TOKEN = `ghp_${'A1b2C3d4E5'.repeat(3)}x9Y8z7`;
let h: ServiceHarness;
let ada: ServiceUser;
let project: string;
const SECRET_SESSION = crypto.randomUUID();
const CLEAN_SESSION = crypto.randomUUID();

beforeAll(async () => {
  h = await startServices({ MEILI_URL: 'http://127.0.0.1:9', REDACT_SECRETS: 'report' });
  ada = await h.user('ada');
  project = (await createProject(again(ada), { name: 'Rescan' })).id;
});
afterAll(() => h?.close());

const row = () => requireReadableSession(again(ada), project, SECRET_SESSION);
const markdown = async () => (await readContent(h.deps.db.writes, project, SECRET_SESSION, 'markdown')).toString('utf8');
const pendingIndexWork = async () =>
  (await h.deps.db.writes.query<{ n: number }>('SELECT COUNT(*) AS n FROM search_outbox WHERE sessionId = ?', SECRET_SESSION))[0].n;

test('with REDACT_SECRETS=off there are no rules to apply: refused before anything is read', async () => {
  await expect(rescanSessions(h.operator, 'off', { dryRun: true })).rejects.toThrow('REDACT_SECRETS=off: there are no rules to apply');
});

test('an empty archive: nothing done, nothing found', async () => {
  const progress: number[] = [];
  expect(await rescanSessions(h.operator, 'on', { dryRun: false, onProgress: (p) => progress.push(p.done) })).toEqual({
    done: 0,
    total: 0,
    changed: 0,
    found: {},
  });
  expect(progress).toEqual([]);
});

test('a dry run counts what the rules would mask and changes nothing', async () => {
  await upsertSession(again(ada), project, SECRET_SESSION, { name: 'Deploy', markdown: `# Deploy\n\nexport GITHUB_TOKEN=${TOKEN}\n` });
  await upsertSession(again(ada), project, CLEAN_SESSION, { name: 'Clean', markdown: '# Clean\n\nNothing secret here.\n' });
  expect(await markdown()).toContain(TOKEN);
  const before = await row();
  const progress: number[] = [];
  const dry = await rescanSessions(h.operator, 'on', { dryRun: true, onProgress: (p) => progress.push(p.done) });
  expect(dry).toEqual({ done: 2, total: 2, changed: 1, found: { 'github-token': 1 } });
  expect(progress).toEqual([1, 2]);
  expect(await markdown()).toContain(TOKEN);
  expect((await row()).etag).toBe(before.etag);
});

test('a real run masks the secret, moves the entity tag and queues the session for the index; a second run finds nothing new', async () => {
  const before = await row();
  await h.deps.db.writes.execute('DELETE FROM search_outbox');
  const done = await rescanSessions(h.operator, 'on', { dryRun: false });
  expect(done).toEqual({ done: 2, total: 2, changed: 1, found: { 'github-token': 1 } });
  expect(await markdown()).not.toContain(TOKEN);
  const after = await row();
  expect(after.etag).not.toBe(before.etag);
  expect(after.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
  expect(await pendingIndexWork()).toBe(1);
  expect(await rescanSessions(h.operator, 'on', { dryRun: false })).toEqual({ done: 2, total: 2, changed: 0, found: {} });
});
