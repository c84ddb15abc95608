/**
 * One session at the service layer (no HTTP): reading it and its parts (markdown, raw log, resume
 * data) by role, the ids a read treats as unknown, and who may patch and delete it, what a patch
 * accepts, and the refusal of a delete under legal hold.
 */
import crypto from 'node:crypto';
import type { Ctx } from '../../src/services/context';
import type { ContentPart } from '../../src/domain/session-row';
import { createProject } from '../../src/services/projects';
import { changeProjectPolicy, changeTeamPolicy } from '../../src/services/retention';
import { deleteSession, patchSession } from '../../src/services/session-changes';
import { findSession } from '../../src/services/session-lists';
import { onSessionSnapshot, readSessionContent, type SessionContent } from '../../src/services/session-reads';
import { metadataOf, sessionTitle } from '../../src/services/sessions';
import { upsertSession } from '../../src/services/session-upload';
import { again, castOf, failure, FORBIDDEN, refused, startServices, VIEWER_READS_ONLY, type ServiceHarness, type ServiceUser } from '../support/services';

let h: ServiceHarness;
let owner: ServiceUser;
let admin: ServiceUser;
let member: ServiceUser;
let viewer: ServiceUser;
let outsider: ServiceUser;
let instanceAdmin: ServiceUser;
let personal: string;
let teamProject: string;
let teamId: string;

const MARKDOWN = '_**User**_\n\nWhy does login fail?\n\n_**Agent**_\n\nThe token expired.\n';
const READ_ONLY = { code: 'FORBIDDEN', message: 'This key is read-only' };
const SESSION_NOT_FOUND = { code: 'NOT_FOUND', message: 'Session not found' };
const PROJECT_NOT_FOUND = { code: 'NOT_FOUND', message: 'Project not found' };
const invalid = (message: string) => ({ code: 'VALIDATION_ERROR', message });

/** Uploads a session; its id. */
async function upload(ctx: Ctx, projectId: string, fields: Record<string, unknown> = {}): Promise<string> {
  const id = crypto.randomUUID();
  await upsertSession(again(ctx), projectId, id, { name: 'Login fix', markdown: MARKDOWN, ...fields });
  return id;
}

async function bytesOf(content: SessionContent): Promise<Buffer> {
  if (Buffer.isBuffer(content)) return content;
  const parts: Buffer[] = [];
  for await (const chunk of content) parts.push(chunk);
  return Buffer.concat(parts);
}

/** One part of a session as the caller reads it. */
async function read(ctx: Ctx, projectId: string, sessionId: string, part: ContentPart = 'markdown'): Promise<{ id: string; text: string; streamed: boolean }> {
  let out: { id: string; text: string; streamed: boolean } | undefined;
  await readSessionContent(again(ctx), projectId, sessionId, part, async (row, content) => {
    out = { id: row.id, text: (await bytesOf(content)).toString('utf8'), streamed: !Buffer.isBuffer(content) };
  });
  return out!;
}

const readOnlyKeyOf = (c: ServiceUser): Ctx => ({ ...c, user: { ...c.user, readOnly: true } });

beforeAll(async () => {
  h = await startServices();
  ({ owner, admin, member, viewer, outsider, personal, teamId, teamProject } = await castOf(h));
  instanceAdmin = await h.user('root', { role: 'admin' });
});
afterAll(() => h?.close());

describe('reading a session', () => {
  test('its owner reads each part; someone else gets 403 naming nothing, never the content', async () => {
    const sid = await upload(owner, personal, { rawData: '{"type":"raw"}\n', sessionData: '{"resume":1}' });
    expect(await read(owner, personal, sid)).toEqual({ id: sid, text: MARKDOWN, streamed: false });
    expect((await read(owner, personal, sid, 'raw')).text).toBe('{"type":"raw"}\n');
    expect((await read(owner, personal, sid, 'session')).text).toBe('{"resume":1}');
    for (const part of ['markdown', 'raw', 'session'] as const) expect(await failure(read(outsider, personal, sid, part))).toEqual(FORBIDDEN);
    expect(await failure(onSessionSnapshot(again(outsider), personal, sid, () => Promise.resolve()))).toEqual(FORBIDDEN);
  });

  test("without the project it is named in, another user's session is simply not found (it says nothing of the project)", async () => {
    const sid = await upload(owner, personal);
    expect((await findSession(again(owner), sid)).id).toBe(sid);
    expect(await failure(findSession(again(outsider), sid))).toEqual(SESSION_NOT_FOUND);
  });

  test('a team session: admin, member and viewer read it, a read-only key too; an outsider does not', async () => {
    const sid = await upload(member, teamProject);
    for (const c of [admin, member, viewer]) expect((await read(c, teamProject, sid)).text).toBe(MARKDOWN);
    expect((await read(readOnlyKeyOf(viewer), teamProject, sid)).text).toBe(MARKDOWN);
    expect(await failure(read(outsider, teamProject, sid))).toEqual(FORBIDDEN);
  });

  test('ids: an unknown or malformed one is 404 (never 400); a session id in capitals is the same session', async () => {
    const sid = await upload(owner, personal);
    expect(await failure(read(owner, personal, crypto.randomUUID()))).toEqual(SESSION_NOT_FOUND);
    expect(await failure(read(owner, personal, 'not-a-uuid'))).toEqual(SESSION_NOT_FOUND);
    expect(await failure(read(owner, 'no-such-project', sid))).toEqual(PROJECT_NOT_FOUND);
    expect(await failure(read(owner, '../etc', sid))).toEqual(PROJECT_NOT_FOUND);
    expect((await read(owner, personal, sid.toUpperCase())).id).toBe(sid);
  });

  test('a session asked for under another project: 403 if the caller cannot read that one, else 404 there', async () => {
    const sid = await upload(admin, teamProject);
    expect(await failure(read(admin, personal, sid))).toEqual(FORBIDDEN);
    const other = (await createProject(again(admin), { name: 'Other' })).id;
    expect(await failure(read(admin, other, sid))).toEqual(SESSION_NOT_FOUND);
  });

  test('resume data never sent reads as empty; markdown over one chunk is read chunk by chunk, whole', async () => {
    const line = `${'x'.repeat(99)}\n`;
    const big = `_**User**_\n\n${line.repeat(11_000)}`;
    const sid = await upload(owner, personal, { markdown: big });
    expect((await read(owner, personal, sid, 'session')).text).toBe('');
    const got = await read(owner, personal, sid);
    expect(got.streamed).toBe(true);
    expect(got.text).toBe(big);
  });
});

describe('patching a session', () => {
  test('its owner renames, titles and tags it; null clears the title; the tags are replaced', async () => {
    const sid = await upload(owner, personal, { metadata: { tags: ['old'] } });
    const row = await patchSession(again(owner), personal, sid, { name: 'Renamed', userTitle: 'My title', tags: ['a', 'b', 'a'] });
    expect([row.name, row.userTitle, metadataOf(row).tags]).toEqual(['Renamed', 'My title', ['a', 'b']]);
    expect(sessionTitle(row)).toBe('My title');
    const cleared = await patchSession(again(owner), personal, sid, { userTitle: null, tags: [] });
    expect([cleared.name, cleared.userTitle, metadataOf(cleared).tags]).toEqual(['Renamed', null, []]);
    expect(cleared.etag).not.toBe(row.etag);
    expect(cleared.updatedAt.getTime()).toBeGreaterThan(row.updatedAt.getTime());
  });

  test('inputs: each mistake is refused in words and changes nothing', async () => {
    const sid = await upload(owner, personal);
    const cases: Array<[unknown, string]> = [
      [{}, 'Nothing to update: send name, tags or userTitle'],
      [{ name: '' }, 'Invalid value for name: must not be empty'],
      [{ name: null }, 'Invalid type for name: expected a string'],
      [{ name: 'n'.repeat(256) }, 'Invalid value for name: must be 1-255 characters'],
      [{ tags: 'one' }, 'Invalid type for metadata.tags: expected an array of strings'],
      [{ tags: ['ok', 7] }, 'Invalid type for metadata.tags[1]: expected a string'],
      [{ tags: ['ok', ''] }, 'Invalid value for metadata.tags[1]: must not be empty'],
      [{ userTitle: 't'.repeat(1001) }, 'Invalid value for userTitle: must be 0-1000 characters'],
      [{ userTitle: 'bad \ud800 text' }, 'Invalid value for userTitle: not valid Unicode text'],
      [[], 'Request body must be a JSON object'],
    ];
    for (const [input, message] of cases) {
      const f = await failure(patchSession(again(owner), personal, sid, input));
      expect([input, f]).toEqual([input, invalid(message)]);
    }
    const row = await findSession(again(owner), sid, personal);
    expect([row.name, row.userTitle]).toEqual(['Login fix', null]);
  });

  test('a secret in a patch is stored masked', async () => {
    const secret = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;
    const sid = await upload(owner, personal);
    const row = await patchSession(again(owner), personal, sid, { userTitle: `push with ${secret}`, tags: [secret] });
    expect(JSON.stringify([row.userTitle, metadataOf(row).tags])).not.toContain(secret);
    expect(row.userTitle).toContain('[REDACTED:github-token]');
  });

  test("in a team: the uploader and the team's admins; another member, a viewer, an outsider and a read-only key may not", async () => {
    const byMember = await upload(member, teamProject);
    const byAdmin = await upload(admin, teamProject);
    expect((await patchSession(again(member), teamProject, byMember, { name: 'By its uploader' })).name).toBe('By its uploader');
    expect((await patchSession(again(admin), teamProject, byMember, { name: 'By the admin' })).name).toBe('By the admin');
    expect(await failure(patchSession(again(member), teamProject, byAdmin, { name: 'x' }))).toEqual(
      refused("Only the person who uploaded this session and the team's admins can change it"),
    );
    expect(await failure(patchSession(again(viewer), teamProject, byMember, { name: 'x' }))).toEqual(VIEWER_READS_ONLY);
    expect(await failure(patchSession(again(outsider), teamProject, byMember, { name: 'x' }))).toEqual(FORBIDDEN);
    expect(await failure(patchSession(readOnlyKeyOf(admin), teamProject, byMember, { name: 'x' }))).toEqual(READ_ONLY);
    expect((await findSession(again(admin), byMember, teamProject)).name).toBe('By the admin');
  });

  test('the input is checked before the session is looked up: an empty patch is 400 on any id, for anyone', async () => {
    const sid = await upload(owner, personal);
    const empty = invalid('Nothing to update: send name, tags or userTitle');
    expect(await failure(patchSession(again(outsider), personal, sid, {}))).toEqual(empty);
    expect(await failure(patchSession(again(owner), personal, crypto.randomUUID(), {}))).toEqual(empty);
    expect(await failure(patchSession(again(owner), personal, crypto.randomUUID(), { name: 'x' }))).toEqual(SESSION_NOT_FOUND);
    expect(await failure(patchSession(again(outsider), personal, sid, { name: 'x' }))).toEqual(FORBIDDEN);
  });
});

describe('deleting a session', () => {
  test('its owner deletes it, once: then it is gone', async () => {
    const sid = await upload(owner, personal);
    expect(await failure(deleteSession(again(outsider), personal, sid))).toEqual(FORBIDDEN);
    expect(await failure(deleteSession(readOnlyKeyOf(owner), personal, sid))).toEqual(READ_ONLY);
    await deleteSession(again(owner), personal, sid);
    expect(await failure(read(owner, personal, sid))).toEqual(SESSION_NOT_FOUND);
    expect(await failure(deleteSession(again(owner), personal, sid))).toEqual(SESSION_NOT_FOUND);
  });

  test("in a team: a member deletes their own, not the admin's; a viewer none", async () => {
    const byMember = await upload(member, teamProject);
    const byAdmin = await upload(admin, teamProject);
    expect(await failure(deleteSession(again(member), teamProject, byAdmin))).toEqual(
      refused("Only the person who uploaded this session and the team's admins can delete it"),
    );
    expect(await failure(deleteSession(again(viewer), teamProject, byMember))).toEqual(VIEWER_READS_ONLY);
    await deleteSession(again(member), teamProject, byMember);
    await deleteSession(again(admin), teamProject, byAdmin);
  });

  test('under legal hold nobody deletes (409), the session stays; lifted, its owner does', async () => {
    const held = (await createProject(again(owner), { name: 'Held' })).id;
    const sid = await upload(owner, held);
    const noSettings = { changed: false, write: () => Promise.resolve() };
    await changeProjectPolicy(again(instanceAdmin), held, { legalHold: true }, noSettings);
    expect(await failure(deleteSession(again(owner), held, sid))).toEqual({ code: 'CONFLICT', message: 'Project is on legal hold' });
    expect((await read(owner, held, sid)).text).toBe(MARKDOWN);
    // The hold does not stop other changes.
    expect((await patchSession(again(owner), held, sid, { name: 'Still editable' })).name).toBe('Still editable');
    await changeProjectPolicy(again(instanceAdmin), held, { legalHold: false }, noSettings);
    await deleteSession(again(owner), held, sid);
    expect(await failure(read(owner, held, sid))).toEqual(SESSION_NOT_FOUND);
  });

  test("a hold on the team holds its projects' sessions: even its admin cannot delete one", async () => {
    const sid = await upload(member, teamProject);
    const noSettings = { changed: false, write: () => Promise.resolve() };
    await changeTeamPolicy(again(instanceAdmin), teamId, { legalHold: true }, noSettings);
    try {
      for (const c of [admin, member]) {
        expect(await failure(deleteSession(again(c), teamProject, sid))).toEqual({ code: 'CONFLICT', message: 'Project is on legal hold' });
      }
    } finally {
      await changeTeamPolicy(again(instanceAdmin), teamId, { legalHold: false }, noSettings);
    }
    await deleteSession(again(admin), teamProject, sid);
  });
});
