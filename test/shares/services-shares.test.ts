/**
 * The share rules, pinned at the service layer (no HTTP): who may make a link (the write rule of
 * the session), that every read of a link re-checks that its maker still may, the inputs a link
 * accepts, and what a reader of the link sees (a snapshot, hidden exchanges as numbers only).
 */
import crypto from 'node:crypto';
import type { Ctx } from '../../src/services/context';
import { upsertSession } from '../../src/services/session-upload';
import { createShare, deleteShare, listShares, readShare, SHARE_MESSAGES, updateShare, type ShareReadOptions } from '../../src/services/shares';
import { addMember, removeMember, setMemberRole } from '../../src/services/teams';
import { again, castOf, failure, startServices, VIEWER_READS_ONLY, type ServiceHarness, type ServiceUser } from '../support/services';

const BASE = 'http://archive.test';
let h: ServiceHarness;
let owner: ServiceUser;
let admin: ServiceUser;
let member: ServiceUser;
let viewer: ServiceUser;
let outsider: ServiceUser;
let personal: string;
let teamProject: string;
let teamId: string;

const transcript = (last = 'Done.') =>
  [
    '_**User**_\n\nWhy does login fail?\n\n_**Agent**_\n\nThe token expired.\n\n',
    '_**User**_\n\nA private question\n\n_**Agent**_\n\nA private answer\n\n',
    `_**User**_\n\nNow fix it\n\n_**Agent**_\n\n${last}\n`,
  ].join('');

async function upload(ctx: Ctx, projectId: string, markdown = transcript()): Promise<string> {
  const id = crypto.randomUUID();
  await upsertSession(again(ctx), projectId, id, { name: 'Login fix', markdown });
  return id;
}

const tokenOf = (url: string) => url.slice(url.lastIndexOf('/s/') + 3);
const page = (opts: Partial<ShareReadOptions> = {}): ShareReadOptions => ({
  from: 1,
  limit: 50,
  countView: false,
  signedIn: () => Promise.resolve(false),
  ...opts,
});
const NOT_FOUND = { code: 'NOT_FOUND', message: SHARE_MESSAGES.notFound };

beforeAll(async () => {
  h = await startServices({ SHARES: 'public' });
  ({ owner, admin, member, viewer, outsider, personal, teamId, teamProject } = await castOf(h));
});
afterAll(() => h?.close());

describe('who may make a link', () => {
  test("the session's owner does; anyone else is refused as for any other write", async () => {
    const sid = await upload(owner, personal);
    const share = await createShare(owner, BASE, personal, sid, {});
    expect(share.url.startsWith(`${BASE}/s/`)).toBe(true);
    expect((await failure(createShare(outsider, BASE, personal, sid, {}))).code).toBe('FORBIDDEN');
  });

  test("in a team: the uploader and the team's admins; a viewer never", async () => {
    const byMember = await upload(member, teamProject);
    await createShare(again(member), BASE, teamProject, byMember, {});
    await createShare(again(admin), BASE, teamProject, byMember, {});
    expect(await failure(createShare(again(viewer), BASE, teamProject, byMember, {}))).toEqual(VIEWER_READS_ONLY);
    const byAdmin = await upload(admin, teamProject);
    expect((await failure(createShare(again(member), BASE, teamProject, byAdmin, {}))).code).toBe('FORBIDDEN');
  });

  test("a link is its maker's alone: another user's id is the same 404 as an unknown one", async () => {
    const sid = await upload(owner, personal);
    const share = await createShare(owner, BASE, personal, sid, {});
    expect(await failure(updateShare(outsider, BASE, share.id, { expiresInDays: 7 }))).toEqual(NOT_FOUND);
    expect(await failure(deleteShare(outsider, share.id))).toEqual(NOT_FOUND);
    expect(await failure(deleteShare(owner, crypto.randomUUID()))).toEqual(NOT_FOUND);
    expect((await listShares(outsider, BASE)).map((s) => s.id)).not.toContain(share.id);
  });
});

describe('every read re-checks the maker', () => {
  test('a link made by a member dies when the member leaves the team, and only then', async () => {
    const leaver = await h.user('leaver');
    await addMember(again(admin), teamId, { email: leaver.email, role: 'member' });
    const sid = await upload(leaver, teamProject);
    const token = tokenOf((await createShare(again(leaver), BASE, teamProject, sid, {})).url);
    expect((await readShare(h.anonymous, token, page())).exchangeCount).toBe(3);
    await removeMember(again(admin), teamId, leaver.user.id);
    expect(await failure(readShare(h.anonymous, token, page()))).toEqual(NOT_FOUND);
  });

  test('a link made by a member dies when the member becomes a viewer', async () => {
    const demoted = await h.user('demoted');
    await addMember(again(admin), teamId, { email: demoted.email, role: 'member' });
    const sid = await upload(demoted, teamProject);
    const token = tokenOf((await createShare(again(demoted), BASE, teamProject, sid, {})).url);
    await setMemberRole(again(admin), teamId, demoted.user.id, { role: 'viewer' });
    expect(await failure(readShare(h.anonymous, token, page()))).toEqual(NOT_FOUND);
  });

  test('a deleted link and a forged token read as the same 404', async () => {
    const sid = await upload(owner, personal);
    const share = await createShare(owner, BASE, personal, sid, {});
    const token = tokenOf(share.url);
    await deleteShare(owner, share.id);
    expect(await failure(readShare(h.anonymous, token, page()))).toEqual(NOT_FOUND);
    expect(await failure(readShare(h.anonymous, `${token.slice(0, -2)}xx`, page()))).toEqual(NOT_FOUND);
  });

  test('a signed-in link asks an anonymous reader to sign in, and reads for one signed in', async () => {
    const sid = await upload(owner, personal);
    const token = tokenOf((await createShare(owner, BASE, personal, sid, { audience: 'signed-in' })).url);
    expect(await failure(readShare(h.anonymous, token, page()))).toEqual({ code: 'UNAUTHENTICATED', message: SHARE_MESSAGES.signIn });
    expect((await readShare(h.anonymous, token, page({ signedIn: () => Promise.resolve(true) }))).exchangeCount).toBe(3);
  });
});

describe('what a link holds', () => {
  test('a snapshot: later uploads change it only when the maker refreshes it', async () => {
    const sid = await upload(owner, personal);
    const share = await createShare(owner, BASE, personal, sid, {});
    const token = tokenOf(share.url);
    await upsertSession(again(owner), personal, sid, { name: 'Login fix', markdown: transcript('Fixed for good.') });
    const before = await readShare(h.anonymous, token, page());
    expect(JSON.stringify(before.exchanges)).not.toContain('Fixed for good.');
    await updateShare(again(owner), BASE, share.id, { refresh: true });
    expect(JSON.stringify((await readShare(h.anonymous, token, page())).exchanges)).toContain('Fixed for good.');
  });

  test('a hidden exchange is a number only, and its words are never copied', async () => {
    const sid = await upload(owner, personal);
    const token = tokenOf((await createShare(owner, BASE, personal, sid, { hiddenExchanges: [2] })).url);
    const read = await readShare(h.anonymous, token, page());
    expect(read.hiddenCount).toBe(1);
    expect(read.exchanges[1]).toEqual({ number: 2, hidden: true });
    expect(JSON.stringify(read)).not.toContain('private');
  });

  test('inputs: each mistake is refused in words, nothing is written', async () => {
    const sid = await upload(owner, personal);
    const before = (await listShares(owner, BASE)).length;
    const cases: Array<[unknown, string]> = [
      [{ expiresInDays: 3 }, SHARE_MESSAGES.expiry],
      [{ expiresInDays: null }, SHARE_MESSAGES.never],
      [{ audience: 'everyone' }, SHARE_MESSAGES.audience],
      [{ hiddenExchanges: [0] }, SHARE_MESSAGES.hidden],
      [{ hiddenExchanges: [4] }, 'hiddenExchanges: the session has no exchange 4 (it has 3)'],
      [{ colour: 'red' }, 'Unknown field "colour" (allowed: expiresInDays, hiddenExchanges, audience)'],
      [[], 'Request body must be a JSON object'],
    ];
    for (const [input, message] of cases) {
      const f = await failure(createShare(owner, BASE, personal, sid, input));
      expect([input, f.message]).toEqual([input, message]);
      expect(f.code).not.toBe('FORBIDDEN');
    }
    expect((await listShares(owner, BASE)).length).toBe(before);
  });

  test('a secret in the session is shared masked, never as written', async () => {
    const secret = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;
    const sid = await upload(owner, personal, transcript(`Use ${secret} to push.`));
    const read = await readShare(h.anonymous, tokenOf((await createShare(owner, BASE, personal, sid, {})).url), page());
    const text = JSON.stringify(read);
    expect(text).not.toContain(secret);
    expect(text).toContain('[REDACTED:github-token]');
  });
});
