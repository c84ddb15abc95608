/**
 * Related sessions over several engines (MEILI_URLS): a user's own scope on one engine and their
 * team's on the other. The related sessions come from both engines (each asked with only the
 * scopes it holds), the word counts that weigh the session's words are added up over both, and
 * another user's sessions on either engine never appear.
 */
import { engineOf } from '../../src/search/engine/placement';
import { operatorCtx, type Ctx } from '../../src/services/context';
import { createProject } from '../../src/services/projects';
import { relatedSessions } from '../../src/services/related';
import { createTeam } from '../../src/services/teams';
import { TestEngines } from '../support/meili-engines';
import { newSessionId, startSearchHarness, type SearchHarness } from '../support/meili-harness';

jest.setTimeout(180_000);

const req = (c: Ctx): Ctx => ({ ...c, user: { ...c.user } });
const exchange = (q: string, a: string) => `_**User**_\n\n${q}\n\n---\n\n_**Agent (claude-sonnet)**_\n\n${a}\n\n---\n\n`;
const POOL = (n: number) => exchange(`pgbouncer postgres pool exhausted, case ${n}`, 'Raise the pgbouncer pool size; postgres connections are shared.');
const OTHER = exchange('The flexbox sidebar collapses.', 'Give the sidebar flex-shrink 0.');

let set: TestEngines;
let h: SearchHarness;

beforeAll(async () => {
  set = await TestEngines.start(2);
  h = await startSearchHarness({ env: { MEILI_URL: '', MEILI_URLS: set.urls().join(','), MEILI_MASTER_KEY: set.key } });
});

afterAll(async () => {
  await h?.close().catch(() => undefined);
  await set?.stop();
});

async function userOn(position: number): Promise<Ctx> {
  for (;;) {
    const u = await h.user();
    if (engineOf(u.user.id, 2) === position) return u;
  }
}

async function teamOn(admin: Ctx, position: number): Promise<string> {
  for (;;) {
    const { id } = await createTeam(operatorCtx(h.handles), { name: `team ${newSessionId()}` }, admin.user.id);
    if (engineOf(id, 2) === position) return id;
  }
}

test("sessions of the caller's scopes on both engines are related; another user's on either engine never are", async () => {
  const ada = await userOn(0);
  const teamId = await teamOn(ada, 1);
  const eve = await userOn(1);
  const mallory = await userOn(0);
  await createProject(req(ada), { id: 'rel-team', name: 'team', teamId });
  const own = [newSessionId(), newSessionId()];
  const teamSessions = [newSessionId(), newSessionId()];
  await h.put(req(ada), 'rel-own', own[0], { markdown: `# Notes\n\n${POOL(1)}` });
  await h.put(req(ada), 'rel-own', own[1], { markdown: `# Notes\n\n${OTHER}` });
  await h.put(req(ada), 'rel-team', teamSessions[0], { markdown: `# Notes\n\n${POOL(2)}` });
  await h.put(req(ada), 'rel-team', teamSessions[1], { markdown: `# Notes\n\n${POOL(3)}` });
  const foreign = [newSessionId(), newSessionId()];
  await h.put(req(eve), 'rel-eve', foreign[0], { markdown: `# Notes\n\n${POOL(4)}` });
  await h.put(req(mallory), 'rel-mallory', foreign[1], { markdown: `# Notes\n\n${POOL(5)}` });
  await h.settle(90_000);

  const found = await relatedSessions(req(ada), 'rel-own', own[0], 10);
  const keys = found.map((r) => `${r.projectId}/${r.sessionId}`);
  // Both team sessions (engine 1) come before the unrelated own session (engine 0), if that comes at all.
  expect(keys.slice(0, 2).sort()).toEqual(teamSessions.map((s) => `rel-team/${s}`).sort());
  expect(keys).not.toContain(`rel-own/${own[0]}`);
  for (const r of found) expect([r.projectId, r.session.userId === ada.user.id || r.session.userId === teamId]).toEqual([r.projectId, true]);
  for (const s of foreign) expect(found.map((r) => r.sessionId)).not.toContain(s);

  // From the team's side: the caller's own pool session on the other engine.
  const fromTeam = await relatedSessions(req(ada), 'rel-team', teamSessions[0], 10);
  expect(
    fromTeam
      .map((r) => `${r.projectId}/${r.sessionId}`)
      .slice(0, 2)
      .sort(),
  ).toEqual([`rel-own/${own[0]}`, `rel-team/${teamSessions[1]}`].sort());
});
